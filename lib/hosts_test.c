/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "hosts.h"
#include "tap.h"

/* The expansion of expr as one space-separated string, or "ERR: message". */
static char result[8192];

static const char *
expand(const char *expr, long limit)
{
	struct hosts h = { 0, NULL };
	pl_err_t err;
	size_t len = 0;
	long i;

	pl_err_clear(&err);
	result[0] = '\0';
	if (hosts_expand(&h, expr, limit, &err) < 0) {
		snprintf(result, sizeof(result), "ERR: %s", err.text);
		hosts_free(&h);
		return result;
	}
	for (i = 0; i < h.n && len + strlen(h.names[i]) + 2 < sizeof(result); i++) {
		if (i > 0)
			result[len++] = ' ';
		strcpy(result + len, h.names[i]);
		len += strlen(h.names[i]);
	}
	hosts_free(&h);
	return result;
}

static long
count(const char *expr, long limit)
{
	struct hosts h = { 0, NULL };
	long n;

	if (hosts_expand(&h, expr, limit, NULL) < 0)
		return -1;
	n = h.n;
	hosts_free(&h);
	return n;
}

/* Compress a space-separated list of names. */
static char *
compress(const char *list)
{
	struct hosts h = { 0, NULL };
	char *copy = strdup(list), *tok, *save = NULL, *s;

	for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		h.names = realloc(h.names, (size_t)(h.n + 1) * sizeof(*h.names));
		h.names[h.n++] = strdup(tok);
	}
	s = hosts_compress(&h);
	hosts_free(&h);
	free(copy);
	return s;
}

static void
test_expand(void)
{
	struct hosts h = { 0, NULL };
	pl_err_t err;

	is_str(expand("a[1-3],b5", 0), "a1 a2 a3 b5", "ranges and plain names");
	is_str(expand("n[08-10]", 0), "n08 n09 n10", "padding kept from the range start");
	is_str(expand("n[8-10]", 0), "n8 n9 n10", "no padding when the start has none");
	is_str(expand("n[098-100]", 0), "n098 n099 n100", "three-digit padding");
	is_str(expand("n[1-05]", 0), "n1 n2 n3 n4 n5", "padding comes from the start only");
	is_str(expand("n[05]", 0), "n05", "single padded number");
	is_str(expand("n[0-2]", 0), "n0 n1 n2", "zero start has no padding");
	is_str(expand("r[1-2]n[01-02]", 0), "r1n01 r1n02 r2n01 r2n02",
	       "two groups: product, leftmost slowest");
	is_str(expand("a[1-2]b[3,5]c", 0), "a1b3c a1b5c a2b3c a2b5c",
	       "two groups with a suffix");
	is_str(expand("n[1,3],m2", 0), "n1 n3 m2", "commas inside vs outside brackets");
	is_str(expand("n[1-2]-ib", 0), "n1-ib n2-ib", "suffix after the group");
	is_str(expand("[1-3]", 0), "1 2 3", "no prefix");
	is_str(expand("a, b\tc  d", 0), "a b c d", "blanks separate names like commas");
	is_str(expand("  a  ", 0), "a", "surrounding blanks");
	is_str(expand("a,a", 0), "a a", "duplicates kept");
	is_str(expand("n\xc5\x93ud[1-2]", 0), "n\xc5\x93ud1 n\xc5\x93ud2", "non-ASCII prefix");
	is_str(expand("n[3-3]", 0), "n3", "one-element range");
	is_int(count("node[01-16,20]", 0), 17, "node[01-16,20] has 17 names");
	is_str(expand("node[01-16,20]", 0),
	       "node01 node02 node03 node04 node05 node06 node07 node08 node09 node10 "
	       "node11 node12 node13 node14 node15 node16 node20", "node[01-16,20]");
	is_int(count("peta[10000-19999]", 0), 10000, "10000 names");

	/* Errors. */
	like(expand("n[5-3]", 0), "range 5-3 is descending", "descending range");
	like(expand("n[5-3]", 0), "n[5-3]", "message names the expression");
	like(expand("n[1-3", 0), "'[' at offset 1 has no matching ']'", "unclosed bracket");
	like(expand("n1]", 0), "']' at offset 2 has no matching '['", "stray ]");
	like(expand("n[1[2]]", 0), "nested '['", "nested brackets");
	like(expand("a,,b", 0), "empty name at offset 2", "empty piece");
	like(expand(",a", 0), "empty name at offset 0", "leading comma");
	like(expand("a,", 0), "empty name at offset 2", "trailing comma");
	like(expand("a, ,b", 0), "empty name", "blank piece");
	like(expand("", 0), "is empty", "empty expression");
	like(expand("   ", 0), "is empty", "blank expression");
	like(expand("n[]", 0), "empty brackets", "empty brackets");
	like(expand("n[1-]", 0), "has no end", "range without end");
	like(expand("n[-3]", 0), "unexpected '-'", "range without start");
	like(expand("n[1,,2]", 0), "empty range", "empty range in brackets");
	like(expand("n[1,]", 0), "empty range", "trailing comma in brackets");
	like(expand("n[a]", 0), "unexpected 'a' at offset 2 inside brackets", "letter in brackets");
	like(expand("n[1-3x]", 0), "unexpected 'x'", "junk after a range");
	like(expand("n[1 2]", 0), "unexpected ' '", "blank in brackets");
	like(expand("n[1-1234567890123456789]", 0), "too long (at most 18 digits)",
	     "huge number");
	like(expand("n[0-99999999999]", 0), "too many names (more than 10000000)",
	     "default limit, refused before allocating");
	like(expand("n[1-100]", 50), "too many names (more than 50)", "limit");
	is_int(count("n[1-100]", 100), 100, "limit reached exactly is fine");
	like(expand("a[1-10]b[1-10]", 99), "too many names", "product over the limit");
	like(expand("n[1-60],m[1-60]", 100), "too many names (more than 100)",
	     "limit counts the whole list");
	ok(hosts_expand(&h, NULL, 0, NULL) < 0, "NULL expression");

	/* Appending, and nothing appended on error. */
	pl_err_clear(&err);
	ok(hosts_expand(&h, "a[1-2]", 0, &err) == 0 && hosts_expand(&h, "b", 0, &err) == 0,
	   "two expansions append");
	is_int(h.n, 3, "three names after appending");
	is_str(h.n == 3 ? h.names[2] : NULL, "b", "appended last");
	ok(hosts_expand(&h, "c[1-4],d[2-1]", 0, &err) < 0, "failing expansion");
	is_int(h.n, 3, "a failed expansion appends nothing");
	like(err.text, "range 2-1 is descending", "first error kept");
	hosts_free(&h);
	is_int(h.n, 0, "hosts_free empties");
	/* A list the caller built with an exact-size array. */
	h.names = malloc(3 * sizeof(*h.names));
	h.names[0] = strdup("x");
	h.names[1] = strdup("y");
	h.names[2] = strdup("z");
	h.n = 3;
	ok(hosts_expand(&h, "w[1-5]", 0, NULL) == 0 && h.n == 8 &&
	   strcmp(h.names[7], "w5") == 0, "append to a caller-built list");
	hosts_free(&h);
	ok(h.names == NULL, "hosts_free resets names");
	hosts_free(NULL);
}

static void
test_compress_one(const char *list, const char *want, const char *what)
{
	char *s = compress(list);

	is_str(s, want, "compress: %s", what);
	if (s && strcmp(s, want) == 0)
		is_str(expand(s, 0), list, "round trip: %s", what);
	free(s);
}

static void
test_compress(void)
{
	struct hosts h = { 0, NULL };
	char *s;

	test_compress_one("node1 node2 node3 node4 node7 gpu01", "node[1-4,7],gpu01",
			  "runs and a lone name");
	test_compress_one("n08 n09 n10", "n[08-10]", "padded run");
	test_compress_one("n8 n9 n10", "n[8-10]", "unpadded run");
	test_compress_one("n98 n99 n100", "n[98-100]", "unpadded run across a digit");
	test_compress_one("n098 n099 n100", "n[098-100]", "padded run across a digit");
	test_compress_one("n09 n10 n011", "n[09-10,011]", "padding change breaks a run");
	test_compress_one("n01 n1", "n[01,1]", "padded and unpadded one");
	test_compress_one("r1n01 r1n02 r2n01", "r1n[01-02],r2n01", "last number varies");
	test_compress_one("n3 n1 n2", "n[3,1-2]", "order kept");
	test_compress_one("n1 m1 n2", "n1,m1,n2", "only neighbours merge");
	test_compress_one("abc n1", "abc,n1", "name without digits");
	test_compress_one("n1-ib n2-ib n3-ib", "n[1-3]-ib", "suffix");
	test_compress_one("n1-ib n2-eth", "n1-ib,n2-eth", "different suffixes");
	test_compress_one("n0 n1 n2", "n[0-2]", "zero start");
	test_compress_one("n00 n01", "n[00-01]", "padded zero");
	test_compress_one("a a", "a,a", "duplicate plain names");
	test_compress_one("n5 n5", "n[5,5]", "duplicate numbered names");
	test_compress_one("n1234567890123456789012 n1234567890123456789013",
			  "n1234567890123456789012,n1234567890123456789013",
			  "numbers too long to count are kept as text");
	s = hosts_compress(&h);
	is_str(s, "", "compress: empty list");
	free(s);
	if (hosts_expand(&h, "peta[10000-19999]", 0, NULL) == 0) {
		s = hosts_compress(&h);
		is_str(s, "peta[10000-19999]", "compress: 10000 names");
		free(s);
	}
	hosts_free(&h);
	if (hosts_expand(&h, "circe-n[017-018,021-036]", 0, NULL) == 0) {
		s = hosts_compress(&h);
		is_str(s, "circe-n[017-018,021-036]", "compress: irregular padded list");
		free(s);
	}
	hosts_free(&h);
}

/* expand(compress(x)) == x on random lists. */
static void
test_round_trip(void)
{
	static const char *const pre[] = { "n", "gpu", "r1n", "", "a-" };
	static const char *const suf[] = { "", "", "-ib" };
	int c, failures = 0;

	srand(12345);
	for (c = 0; c < 300; c++) {
		struct hosts h = { 0, NULL }, back = { 0, NULL };
		int n = 1 + rand() % 30, i, num = rand() % 120;
		char *s;

		h.names = calloc((size_t)n, sizeof(*h.names));
		for (i = 0; i < n; i++) {
			char name[64];

			num = rand() % 4 ? num + 1 : rand() % 120;
			snprintf(name, sizeof(name), "%s%0*d%s", pre[rand() % 5 ? 0 : rand() % 5],
				 rand() % 3 ? 0 : 1 + rand() % 3, num, suf[rand() % 3]);
			h.names[h.n++] = strdup(name);
		}
		s = hosts_compress(&h);
		if (!s || hosts_expand(&back, s, 0, NULL) < 0 || back.n != h.n) {
			failures++;
		} else {
			for (i = 0; i < n; i++)
				if (strcmp(back.names[i], h.names[i]) != 0)
					break;
			if (i < n) {
				if (!failures)
					diag("'%s' came back with '%s' at %d", s,
					     back.names[i], i);
				failures++;
			}
		}
		free(s);
		hosts_free(&h);
		hosts_free(&back);
	}
	is_int(failures, 0, "300 random lists survive compress then expand");
}

/* An echoed expression is cut to a readable length and escaped. */
static void
test_clipped(void)
{
	static char big[5001];
	struct hosts h = { 0, NULL };
	pl_err_t err;

	memset(big, 'n', 4990);
	memcpy(big + 4990, "[1-2", 5);	/* no ']' */
	pl_err_clear(&err);
	ok(hosts_expand(&h, big, 0, &err) < 0, "a 4994-byte bad hostlist is refused");
	ok(strlen(err.text) < 200, "its message is short (%zu bytes)", strlen(err.text));
	like(err.text, "...(4994 bytes)", "and says how long the input was");
	pl_err_clear(&err);
	ok(hosts_expand(&h, "a\x1b[2J[", 0, &err) < 0, "a hostlist with an escape byte is refused");
	like(err.text, "hostlist 'a\\x1b[2J['", "the byte is written as \\x1b");
	hosts_free(&h);
}

/* Natural order, worked out by hand. */
static void
test_natural(void)
{
	ok(hosts_natural_cmp("node2", "node10") < 0, "node2 < node10");
	ok(hosts_natural_cmp("node10", "node2") > 0, "node10 > node2");
	ok(hosts_natural_cmp("mlx5_2", "mlx5_10") < 0, "mlx5_2 < mlx5_10");
	ok(hosts_natural_cmp("n1", "n01") < 0, "n1 < n01: fewer zeros first");
	ok(hosts_natural_cmp("n01x", "n1y") > 0, "n01x > n1y: the padding decides before the rest");
	ok(hosts_natural_cmp("r1n10", "r1n9") > 0, "r1n10 > r1n9");
	ok(hosts_natural_cmp("n99999999999999999999999", "n100000000000000000000000") < 0,
	   "numbers longer than 64 bits compare as numbers");
	is_int(hosts_natural_cmp("gpu007", "gpu007"), 0, "equal names are equal");
	ok(hosts_natural_cmp("a", "a1") < 0, "a prefix sorts first");
	ok(hosts_natural_cmp("b", "a10") > 0, "letters compare as bytes");
}

int
main(void)
{
	plan(110);
	test_natural();
	test_clipped();
	test_expand();
	test_compress();
	test_round_trip();
	return done_testing();
}
