/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm hostlist expressions.  A list is names separated by commas (blanks
 * are accepted as separators too, as Slurm does); a name may hold bracket
 * groups of numbers and ranges, and several groups expand as a product with
 * the leftmost group varying slowest.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "hosts.h"

/* 18 digits always fit an unsigned long long with room for +1. */
#define HOSTS_MAX_DIGITS 18
#define HOSTS_DEFAULT_LIMIT 10000000L

struct range {
	unsigned long long lo, hi;
	int width;		/* zero padding; 0 = none */
};

/* One bracket group and the literal text in front of it. */
struct group {
	const char *lit;
	size_t litlen;
	struct range *r;
	int nr;
	unsigned long long count;
};

/*
 * pl_err_set with the expression in front, clipped and escaped (pl_clip):
 * "hostlist 'EXPR'" and then fmt.  Always -1.
 */
static int hl_err(pl_err_t *err, const char *expr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
hl_err(pl_err_t *err, const char *expr, const char *fmt, ...)
{
	char c[PL_CLIP_BUF], tail[PL_ERR_TEXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tail, sizeof(tail), fmt, ap);
	va_end(ap);
	return pl_err_set(err, "hostlist '%s'%s", pl_clip(expr, c, sizeof(c)), tail);
}

static int
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Append a copy of name; the caller has made room in h->names. */
static int
hosts_push(struct hosts *h, const char *name, size_t len)
{
	char *s = malloc(len + 1);

	if (!s)
		return -1;
	memcpy(s, name, len);
	s[len] = '\0';
	h->names[h->n++] = s;
	return 0;
}

int
hosts_natural_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (is_digit(*a) && is_digit(*b)) {
			const char *sa = a, *sb = b, *ea, *eb;
			size_t la, lb;
			int c;

			while (*sa == '0')
				sa++;
			while (*sb == '0')
				sb++;
			for (ea = sa; is_digit(*ea); ea++)
				;
			for (eb = sb; is_digit(*eb); eb++)
				;
			la = (size_t)(ea - sa);
			lb = (size_t)(eb - sb);
			if (la != lb)
				return la < lb ? -1 : 1;
			c = strncmp(sa, sb, la);
			if (c)
				return c < 0 ? -1 : 1;
			if (ea - a != eb - b)
				return ea - a < eb - b ? -1 : 1;
			a = ea;
			b = eb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

void
hosts_free(struct hosts *h)
{
	long i;

	if (!h)
		return;
	for (i = 0; i < h->n; i++)
		free(h->names[i]);
	free(h->names);
	h->names = NULL;
	h->n = 0;
}

/* Drop names appended after the first `keep`, on failure. */
static void
hosts_truncate(struct hosts *h, long keep)
{
	while (h->n > keep)
		free(h->names[--h->n]);
	if (h->n == 0) {
		free(h->names);
		h->names = NULL;
	}
}

/* Parse a run of digits at *pp; advance *pp. */
static int
parse_number(const char **pp, unsigned long long *val, int *ndigits,
	     const char *expr, pl_err_t *err)
{
	const char *p = *pp;
	unsigned long long v = 0;
	int n = 0;

	while (is_digit(*p)) {
		if (++n > HOSTS_MAX_DIGITS)
			return hl_err(err, expr, ": number at offset %ld "
					  "is too long (at most %d digits)",
					  (long)(*pp - expr), HOSTS_MAX_DIGITS);
		v = v * 10 + (unsigned long long)(*p - '0');
		p++;
	}
	*val = v;
	*ndigits = n;
	*pp = p;
	return 0;
}

/*
 * Parse the inside of one bracket group, from just after '[' to its ']'.
 * Fills g->r (caller frees) and g->count.
 */
static int
parse_group(struct group *g, const char *p, const char *end, const char *expr,
	    pl_err_t *err)
{
	int cap = 1;
	const char *q;

	for (q = p; q < end; q++)
		if (*q == ',')
			cap++;
	g->r = calloc((size_t)cap, sizeof(*g->r));
	if (!g->r)
		return hl_err(err, expr, ": out of memory");
	g->nr = 0;
	g->count = 0;
	if (p == end)
		return hl_err(err, expr, ": empty brackets at offset %ld "
				  "(accepted: numbers and ranges, e.g. n[1-4,7])", (long)(p - 1 - expr));
	while (p < end) {
		struct range *r = &g->r[g->nr];
		const char *lo = p;
		int nd = 0, nd2 = 0;

		if (!is_digit(*p))
			return hl_err(err, expr, ": unexpected '%c' at offset "
					  "%ld inside brackets (accepted: numbers, "
					  "ranges lo-hi, commas)", *p,
					  (long)(p - expr));
		if (parse_number(&p, &r->lo, &nd, expr, err) < 0)
			return -1;
		/* The range start decides the padding: n[08-10] but n[8-10]. */
		r->width = nd > 1 && *lo == '0' ? nd : 0;
		r->hi = r->lo;
		if (*p == '-') {
			p++;
			if (!is_digit(*p))
				return hl_err(err, expr, ": range at offset "
						  "%ld has no end (write lo-hi)",
						  (long)(lo - expr));
			if (parse_number(&p, &r->hi, &nd2, expr, err) < 0)
				return -1;
			if (r->hi < r->lo)
				return hl_err(err, expr, ": range %llu-%llu "
						  "is descending (write %llu-%llu)",
						  r->lo, r->hi, r->hi, r->lo);
		}
		g->count += r->hi - r->lo + 1;
		g->nr++;
		if (p == end)
			break;
		if (*p != ',')
			return hl_err(err, expr, ": unexpected '%c' at offset "
					  "%ld inside brackets (accepted: numbers, "
					  "ranges lo-hi, commas)", *p,
					  (long)(p - expr));
		p++;
		if (p == end || *p == ',')
			return hl_err(err, expr, ": empty range at offset %ld "
					  "inside brackets", (long)(p - expr));
	}
	return 0;
}

static void
free_groups(struct group *g, int ng)
{
	int i;

	if (!g)
		return;
	for (i = 0; i < ng; i++)
		free(g[i].r);
	free(g);
}

/*
 * Append every name of the product of groups g[0..ng) (each after its
 * literal text), then the tail text [tail, end).
 */
static int
generate(struct hosts *out, const struct group *g, int ng, const char *tail,
	 const char *end, const char *expr, pl_err_t *err)
{
	int i, *ri = calloc((size_t)ng + 1, sizeof(*ri));
	unsigned long long *val = calloc((size_t)ng + 1, sizeof(*val));
	size_t cap = (size_t)(end - tail) + 1, len;
	char *buf = NULL;
	int rv = -1;

	for (i = 0; i < ng; i++)
		cap += g[i].litlen + 24;
	buf = malloc(cap);
	if (!ri || !val || !buf) {
		hl_err(err, expr, ": out of memory");
		goto out;
	}
	for (i = 0; i < ng; i++)
		val[i] = g[i].r[0].lo;
	for (;;) {
		len = 0;
		for (i = 0; i < ng; i++) {
			memcpy(buf + len, g[i].lit, g[i].litlen);
			len += g[i].litlen;
			len += (size_t)snprintf(buf + len, cap - len, "%0*llu",
						g[i].r[ri[i]].width, val[i]);
		}
		memcpy(buf + len, tail, (size_t)(end - tail));
		len += (size_t)(end - tail);
		if (hosts_push(out, buf, len) < 0) {
			hl_err(err, expr, ": out of memory");
			goto out;
		}
		/* Odometer: the rightmost group turns fastest. */
		for (i = ng - 1; i >= 0; i--) {
			if (val[i] < g[i].r[ri[i]].hi) {
				val[i]++;
				break;
			}
			if (ri[i] + 1 < g[i].nr) {
				val[i] = g[i].r[++ri[i]].lo;
				break;
			}
			ri[i] = 0;
			val[i] = g[i].r[0].lo;
		}
		if (i < 0)
			break;
	}
	rv = 0;
out:
	free(ri);
	free(val);
	free(buf);
	return rv;
}

/*
 * Expand the name [p, end), which has no top-level separators, onto out
 * (out NULL: only check it and count).  *budget is how many more of the
 * list's `limit` names may be made.
 */
static int
expand_piece(struct hosts *out, const char *p, const char *end, const char *expr,
	     long limit, long *budget, pl_err_t *err)
{
	struct group *g = NULL;
	const char *tail = p, *q;
	unsigned long long total = 1;
	int ng = 0, i, rv = -1;

	for (q = p; q < end; q++)
		if (*q == '[')
			ng++;
	g = calloc((size_t)ng + 1, sizeof(*g));
	if (!g)
		return hl_err(err, expr, ": out of memory");
	ng = 0;
	while (tail < end) {
		const char *open = memchr(tail, '[', (size_t)(end - tail));
		const char *close;

		if (!open)
			break;
		/* The caller checked the nesting, so a ']' follows. */
		close = memchr(open, ']', (size_t)(end - open));
		g[ng].lit = tail;
		g[ng].litlen = (size_t)(open - tail);
		if (parse_group(&g[ng++], open + 1, close, expr, err) < 0)
			goto out;
		tail = close + 1;
	}
	for (i = 0; i < ng && total <= (unsigned long long)*budget; i++) {
		if (total > (unsigned long long)*budget / g[i].count)
			total = (unsigned long long)*budget + 1;
		else
			total *= g[i].count;
	}
	if (total > (unsigned long long)*budget) {
		hl_err(err, expr, ": expands to too many names "
			   "(more than %ld)", limit);
		goto out;
	}
	if (out && generate(out, g, ng, tail, end, expr, err) < 0)
		goto out;
	*budget -= (long)total;
	rv = 0;
out:
	free_groups(g, ng);
	return rv;
}

/* Find the end of the name at p; check its brackets. */
static const char *
piece_end(const char *p, const char *expr, pl_err_t *err)
{
	const char *open = NULL;

	for (; *p; p++) {
		if (*p == '[') {
			if (open) {
				hl_err(err, expr, ": nested '[' at offset %ld", (long)(p - expr));
				return NULL;
			}
			open = p;
		} else if (*p == ']') {
			if (!open) {
				hl_err(err, expr, ": ']' at offset %ld has no "
					   "matching '['", (long)(p - expr));
				return NULL;
			}
			open = NULL;
		} else if (!open && (*p == ',' || is_blank(*p))) {
			break;
		}
	}
	if (open) {
		hl_err(err, expr, ": '[' at offset %ld has no matching ']'", (long)(open - expr));
		return NULL;
	}
	return p;
}

/*
 * Walk the list: check and count it (out NULL), or expand it onto out.
 * Returns the number of names, or -1.
 */
static long
walk(struct hosts *out, const char *expr, long limit, pl_err_t *err)
{
	long budget = limit;
	const char *p = expr, *end;

	for (;;) {
		while (is_blank(*p))
			p++;
		if (*p == ',' || !*p)
			return hl_err(err, expr, ": empty name at offset %ld "
					  "(names are separated by single commas)",
					  (long)(p - expr));
		end = piece_end(p, expr, err);
		if (!end || expand_piece(out, p, end, expr, limit, &budget, err) < 0)
			return -1;
		p = end;
		while (is_blank(*p))
			p++;
		if (!*p)
			break;
		if (*p == ',')
			p++;
	}
	return limit - budget;
}

/* See hosts.h.  On error nothing is appended. */
int
hosts_expand(struct hosts *out, const char *expr, long limit, pl_err_t *err)
{
	long keep = out->n, total;
	const char *p = expr;
	char **names;

	if (!expr)
		return pl_err_set(err, "hostlist is missing");
	while (is_blank(*p))
		p++;
	if (!*p)
		return hl_err(err, expr, " is empty (accepted: e.g. "
				  "node[01-16],gpu7)");
	/* Check everything first, so a bad list appends nothing and the array
	 * grows once (its capacity is not recorded in struct hosts). */
	total = walk(NULL, expr, limit > 0 ? limit : HOSTS_DEFAULT_LIMIT, err);
	if (total < 0)
		return -1;
	if ((unsigned long)(out->n + total) > SIZE_MAX / sizeof(*names))
		return hl_err(err, expr, ": out of memory");
	names = realloc(out->names, (size_t)(out->n + total) * sizeof(*names));
	if (!names)
		return hl_err(err, expr, ": out of memory");
	out->names = names;
	if (walk(out, expr, total, err) < 0) {
		hosts_truncate(out, keep);
		return -1;
	}
	return 0;
}

/* A name split around its last run of digits. */
struct split {
	const char *name;
	size_t prelen;		/* digits start here */
	int nd;			/* 0: no usable number */
	unsigned long long val;
};

static void
split_name(struct split *s, const char *name)
{
	size_t len = strlen(name), e = len, b;
	int i;

	s->name = name;
	s->nd = 0;
	s->val = 0;
	s->prelen = len;
	while (e > 0 && !is_digit(name[e - 1]))
		e--;
	b = e;
	while (b > 0 && is_digit(name[b - 1]))
		b--;
	/* Too long for a number (or none): the name is kept as it is. */
	if (e == b || e - b > HOSTS_MAX_DIGITS)
		return;
	s->prelen = b;
	s->nd = (int)(e - b);
	for (i = 0; i < s->nd; i++)
		s->val = s->val * 10 + (unsigned long long)(name[b + i] - '0');
}

/* Same prefix and suffix, both with numbers. */
static int
same_stem(const struct split *a, const struct split *b)
{
	return a->nd && b->nd && a->prelen == b->prelen &&
	       strncmp(a->name, b->name, a->prelen) == 0 &&
	       strcmp(a->name + a->prelen + a->nd, b->name + b->prelen + b->nd) == 0;
}

/* Does the name's number print exactly this way with this padding (0 = none)? */
static int
fits(const struct split *s, int width)
{
	if (width == 0)
		return s->nd == 1 || s->name[s->prelen] != '0';
	return s->nd == width;
}

static void
add_number(struct buf *b, unsigned long long v, int width)
{
	char num[32];
	int n = snprintf(num, sizeof(num), "%0*llu", width, v);

	buf_add(b, num, (size_t)n);
}

/*
 * See hosts.h.  Only neighbours with the same text around their last number
 * share brackets; names holding '[', ']' or ',' cannot round-trip.  Returns
 * NULL when out of memory.
 */
char *
hosts_compress(const struct hosts *h)
{
	struct buf b = BUF_INIT;
	struct split *sp = NULL;
	long i, j, k;

	if (h->n > 0)
		sp = calloc((size_t)h->n, sizeof(*sp));
	if (h->n > 0 && !sp)
		b.bad = true;
	for (i = 0; !b.bad && i < h->n; i++)
		split_name(&sp[i], h->names[i]);
	for (i = 0; !b.bad && i < h->n; i = j) {
		const struct split *s = &sp[i];

		if (i > 0)
			buf_add(&b, ",", 1);
		for (j = i + 1; j < h->n && same_stem(s, &sp[j]); j++)
			;
		if (j == i + 1) {
			buf_add(&b, s->name, strlen(s->name));
			continue;
		}
		buf_add(&b, s->name, s->prelen);
		buf_add(&b, "[", 1);
		for (k = i; k < j; ) {
			int width = fits(&sp[k], 0) ? 0 : sp[k].nd;
			long e = k + 1;

			while (e < j && sp[e].val == sp[e - 1].val + 1 && fits(&sp[e], width))
				e++;
			if (k > i)
				buf_add(&b, ",", 1);
			add_number(&b, sp[k].val, width);
			if (e - 1 > k) {
				buf_add(&b, "-", 1);
				add_number(&b, sp[e - 1].val, width);
			}
			k = e;
		}
		buf_add(&b, "]", 1);
		buf_add(&b, s->name + s->prelen + s->nd,
			 strlen(s->name + s->prelen + s->nd));
	}
	free(sp);
	return buf_take(&b);
}
