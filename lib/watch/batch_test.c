/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The summary batch (summary.h): built, walked, and every malformed
 * framing refused.  The expected bytes are laid out here by hand from the
 * format in summary.h, not by the code under test.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"
#include "tap.h"

static void
le(uint8_t *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A batch of items "abc" (hold 5) and "wxyz" (hold 7), by hand. */
static size_t
by_hand(uint8_t *b)
{
	size_t o = 24;

	memset(b, 0, 256);
	memcpy(b, "PLWBAT01", 8);
	le(b + 8, 1, 4);
	le(b + 12, 2, 4);
	le(b + o, 5, 8);
	le(b + o + 8, 3, 4);
	memcpy(b + o + 16, "abc", 3);
	o += 19;
	le(b + o, 7, 8);
	le(b + o + 8, 4, 4);
	memcpy(b + o + 16, "wxyz", 4);
	o += 20;
	le(b + 16, o, 8);
	return o;
}

static void
t_build(void)
{
	struct buf b = BUF_INIT;
	uint8_t want[256];
	size_t n = by_hand(want);
	pl_err_t err;

	pl_err_clear(&err);
	ok(sum_batch_begin(&b, &err) == 0 && sum_batch_count(&b) == 0, "an empty batch begun");
	ok(sum_batch_add(&b, "abc", 3, 5, &err) == 0 && sum_batch_add(&b, "wxyz", 4, 7, &err) == 0,
	   "two items added");
	ok(sum_batch_count(&b) == 2, "its count is 2");
	ok(b.len == n && memcmp(b.s, want, n) == 0, "the bytes are the format's (%zu, want %zu)",
	   b.len, n);
	pl_err_clear(&err);
	ok(sum_batch_add(&b, "", 0, 1, &err) < 0 && strstr(err.text, "0 bytes") && b.len == n,
	   "an empty item refused, the batch unchanged: %s", err.text);
	ok(sum_batch_add(&b, "x", 1, UINT64_MAX, &err) == 0 &&
	   get_le((const uint8_t *)b.s + n, 8) == SUM_MAX_AGE_NS,
	   "a hold past ten years is sent as ten years");
	ok(sum_batch_begin(&b, &err) == 0 && b.len == SUM_BATCH_HEADER_BYTES &&
	   sum_batch_count(&b) == 0, "begin empties a used batch");
	buf_free(&b);
}

static void
t_limits(void)
{
	struct buf b = BUF_INIT;
	static char big[SUM_MAX_BYTES];
	size_t i, added = 0;
	pl_err_t err;

	pl_err_clear(&err);
	memset(big, 'x', sizeof(big));
	ok(sum_batch_add(&b, "a", 1, 0, &err) < 0 && strstr(err.text, "not begun"),
	   "an item before begin refused: %s", err.text);
	sum_batch_begin(&b, &err);
	pl_err_clear(&err);
	ok(sum_batch_add(&b, big, SUM_MAX_BYTES + 1u, 0, &err) < 0 && strstr(err.text, "want 1 to"),
	   "an item over SUM_MAX_BYTES refused: %s", err.text);
	pl_err_clear(&err);
	for (i = 0; i < 20 && sum_batch_add(&b, big, SUM_MAX_BYTES, 0, &err) == 0; i++)
		added++;
	ok(added == (SUM_BATCH_MAX_BYTES - SUM_BATCH_HEADER_BYTES) /
	   (SUM_MAX_BYTES + SUM_BATCH_ITEM_BYTES) && strstr(err.text, "would pass"),
	   "the batch stops at SUM_BATCH_MAX_BYTES: %zu items of 1 MiB (%s)", added, err.text);
	ok(b.len <= SUM_BATCH_MAX_BYTES && sum_batch_check(b.s, b.len, &err) == (long)added,
	   "the full batch is well formed");
	sum_batch_begin(&b, &err);
	pl_err_clear(&err);
	for (i = 0; i < SUM_BATCH_MAX_ITEMS + 1 && sum_batch_add(&b, "y", 1, 0, &err) == 0; i++)
		;
	ok(i == SUM_BATCH_MAX_ITEMS && strstr(err.text, "full"),
	   "the batch stops at SUM_BATCH_MAX_ITEMS: %zu (%s)", i, err.text);
	buf_free(&b);
}

static void
t_walk(void)
{
	uint8_t b[256];
	size_t n = by_hand(b), off = 0, sl = 0;
	const void *s = NULL;
	uint64_t hold = 0;
	pl_err_t err;

	pl_err_clear(&err);
	ok(sum_batch_check(b, n, &err) == 2, "the hand-made batch checks: 2 items");
	ok(sum_batch_next(b, n, &off, &s, &sl, &hold, &err) == 1 && sl == 3 && hold == 5 &&
	   memcmp(s, "abc", 3) == 0, "item 1: abc, held 5 ns");
	ok(sum_batch_next(b, n, &off, &s, &sl, &hold, &err) == 1 && sl == 4 && hold == 7 &&
	   memcmp(s, "wxyz", 4) == 0, "item 2: wxyz, held 7 ns");
	ok(sum_batch_next(b, n, &off, &s, &sl, &hold, &err) == 0 && off == n, "then the end");
}

struct bad {
	const char *what;
	size_t at;		/* byte offset patched */
	int width;		/* bytes patched (0: the length is cut to `at`) */
	uint64_t value;
	const char *want;	/* in the refusal */
};

static const struct bad bads[] = {
	{ "magic", 0, 8, 0x3130544142574c51ULL, "magic" },
	{ "version 2", 8, 4, 2, "version 2" },
	{ "count 0", 12, 4, 0, "count 0" },
	{ "count 1025", 12, 4, 1025, "count 1025" },
	{ "count 3 for 2 items", 12, 4, 3, "but 2 items" },
	{ "count 1 for 2 items", 12, 4, 1, "but 2 items" },
	{ "total_size short", 16, 8, 62, "total_size 62" },
	{ "total_size long", 16, 8, 64, "total_size 64" },
	{ "hold past ten years", 24, 8, UINT64_C(315576000) * 1000000000 + 1, "hold_ns" },
	{ "reserved set", 36, 4, 1, "reserved" },
	{ "item len 0", 32, 4, 0, "len 0" },
	{ "item len past the end", 32, 4, 40, "len 40" },
	{ "second len past the end", 51, 4, 5, "len 5" },
	{ "header cut", 23, 0, 0, "at least" },
	{ "item header cut", 30, 0, 0, "total_size" },
};
#define NBAD (sizeof(bads) / sizeof(bads[0]))

static void
t_bad(void)
{
	uint8_t b[256];
	size_t i, n;
	pl_err_t err;

	for (i = 0; i < NBAD; i++) {
		n = by_hand(b);
		if (bads[i].width)
			le(b + bads[i].at, bads[i].value, bads[i].width);
		else
			n = bads[i].at;
		pl_err_clear(&err);
		ok(sum_batch_check(b, n, &err) < 0 && strstr(err.text, bads[i].want),
		   "%s refused: %s", bads[i].what, err.text);
	}
	n = by_hand(b);
	for (i = 0; i < n; i++) {
		pl_err_clear(&err);
		le(b + 16, i, 8);	/* total_size agrees: the cut is found in the items */
		if (sum_batch_check(b, i, &err) >= 0)
			break;
	}
	ok(i == n, "every truncation refused, total_size patched to match (first passing cut "
	   "%zu of %zu)", i, n);
	ok(sum_batch_check(NULL, 0, &err) < 0, "no data refused");
}

int
main(void)
{
	plan(7 + 5 + 4 + (int)NBAD + 2);
	t_build();
	t_limits();
	t_walk();
	t_bad();
	return done_testing();
}
