/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rank orders against groups worked out by hand.
 *
 * Megatron-Core: with the order innermost first, rank = sum(coord * stride)
 * where each stride is the product of the sizes before it.  The groups of a
 * kind are counted by the digits of the axes NOT in the kind (first such
 * axis fastest) and their members by the digits of the axes in the kind
 * (first such axis fastest).  Each expected list below is derived that way
 * in its comment, not printed by the code under test.
 */
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "tap.h"

static int
setup(const char *spec, long world, struct pl_layout *l)
{
	pl_err_t err;

	pl_err_clear(&err);
	if (layout_parse(spec, l, &err) < 0 ||
	    layout_resolve(l, world, &err) < 0) {
		ok(0, "'%s' at world %ld", spec, world);
		diag("  %s", err.text);
		return -1;
	}
	return 0;
}

/* The groups of kind must be exactly want[ngroups][gsize]. */
static void
groups_are(const struct pl_layout *l, const char *kind, long ngroups,
	   long gsize, const long *want)
{
	struct pl_groups g;
	pl_err_t err;
	long i;

	pl_err_clear(&err);
	if (order_groups(l, kind, &g, &err) < 0) {
		ok(0, "%s %s groups", l->order_name, kind);
		diag("  %s", err.text);
		return;
	}
	is_int(g.ngroups, ngroups, "%s %s: %ld groups", l->order_name, kind,
	       ngroups);
	is_int(g.group_size, gsize, "%s %s: groups of %ld", l->order_name,
	       kind, gsize);
	if (g.ngroups == ngroups && g.group_size == gsize) {
		for (i = 0; i < ngroups * gsize; i++)
			if (g.ranks[i] != want[i])
				break;
		if (!ok(i == ngroups * gsize, "%s %s: ranks as worked out",
			l->order_name, kind))
			diag("  first difference: group %ld member %ld: got "
			     "%ld, want %ld", i / gsize, i % gsize,
			     g.ranks[i], want[i]);
	}
	order_groups_free(&g);
}

/* Every family must cover each rank exactly once. */
static void
partitions(const struct pl_layout *l, long world)
{
	static const char *const kinds[] = {
		"tp", "cp", "dp", "pp", "ep", "edp", "tp-pp", "dp-cp",
		"tp-cp", "tp-dp-cp", "tp-ep", "dp-ep", "tp-ep-pp", "pp-tp",
		"cp-dp", "tp-cp-ep-dp-pp",
	};
	struct pl_groups g;
	pl_err_t err;
	size_t k;
	long i;
	char *seen = calloc((size_t)world, 1);
	int good;

	if (!seen)
		return;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		pl_err_clear(&err);
		if (order_groups(l, kinds[k], &g, &err) < 0) {
			ok(0, "%s %s groups: %s", l->order_name, kinds[k],
			   err.text);
			continue;
		}
		memset(seen, 0, (size_t)world);
		good = g.ngroups * g.group_size == world;
		for (i = 0; good && i < world; i++) {
			long r = g.ranks[i];

			if (r < 0 || r >= world || seen[r])
				good = 0;
			else
				seen[r] = 1;
		}
		ok(good, "%s world %ld: %s groups partition the world",
		   l->order_name, world, kinds[k]);
		order_groups_free(&g);
	}
	free(seen);
}

/* rank -> coords -> rank for every rank, and coords in range. */
static void
round_trips(const struct pl_layout *l, long world)
{
	struct pl_coords c;
	pl_err_t err;
	long r;
	int a, good = 1;

	for (r = 0; r < world && good; r++) {
		pl_err_clear(&err);
		if (order_coords(l, r, &c, &err) < 0 || order_rank(l, &c) != r)
			good = 0;
		for (a = 0; a < PL_NAXES; a++)
			if (c.c[a] < 0 || c.c[a] >= l->size[a])
				good = 0;
	}
	ok(good, "%s world %ld: rank -> coords -> rank for all ranks",
	   l->order_name, world);
	pl_err_clear(&err);
	ok(order_coords(l, world, &c, &err) == -1, "rank %ld is out of range",
	   world);
	like(err.text, "out of range", "out-of-range message");
	pl_err_clear(&err);
	ok(order_coords(l, -1, &c, &err) == -1, "rank -1 is out of range");
}

static void
coords_are(const struct pl_layout *l, long rank, long tp, long cp, long ep,
	   long dp, long pp)
{
	struct pl_coords c;
	pl_err_t err;

	pl_err_clear(&err);
	if (order_coords(l, rank, &c, &err) < 0) {
		ok(0, "coords of %ld: %s", rank, err.text);
		return;
	}
	ok(c.c[PL_TP] == tp && c.c[PL_CP] == cp && c.c[PL_EP] == ep &&
	   c.c[PL_DP] == dp && c.c[PL_PP] == pp,
	   "%s rank %ld is tp%ld cp%ld ep%ld dp%ld pp%ld", l->order_name, rank,
	   tp, cp, ep, dp, pp);
}

/*
 * World 16, tp2 pp4 (dp2), order tp-cp-ep-dp-pp: strides tp 1, dp 2, pp 4;
 * rank = tp + 2*dp + 4*pp.
 */
static void
test_megatron_16(void)
{
	struct pl_layout l;
	struct pl_digits d;
	/* tp: group g has dp = g%2, pp = g/2, base 2g: members 2g, 2g+1. */
	static const long tp[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
				   13, 14, 15 };
	/* dp: g -> tp = g%2, pp = g/2; members tp + 4pp + 2i. */
	static const long dp[] = { 0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14,
				   13, 15 };
	/* pp: g -> tp = g%2, dp = g/2, base g; members g + 4i. */
	static const long pp[] = { 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14,
				   3, 7, 11, 15 };
	/* tp-pp: g = dp; member i -> tp = i%2, pp = i/2: tp + 4pp + 2dp. */
	static const long mp[] = { 0, 1, 4, 5, 8, 9, 12, 13,
				   2, 3, 6, 7, 10, 11, 14, 15 };

	if (setup("tp2,pp4", 16, &l) < 0)
		return;
	groups_are(&l, "tp", 8, 2, tp);
	groups_are(&l, "dp", 8, 2, dp);
	groups_are(&l, "pp", 4, 4, pp);
	groups_are(&l, "tp-pp", 2, 8, mp);
	groups_are(&l, "pp-tp", 2, 8, mp);
	/* cp is 1: sixteen singleton groups in rank order. */
	groups_are(&l, "cp", 16, 1, tp);
	coords_are(&l, 13, 1, 0, 0, 0, 3);
	coords_are(&l, 6, 0, 0, 0, 1, 1);
	order_digits(&l, &d);
	ok(d.n == 4 && d.axis[0] == PL_TP && d.size[0] == 2 &&
	   d.stride[0] == 1 && d.axis[1] == PL_CP && d.stride[1] == 2 &&
	   d.axis[2] == PL_DP && d.size[2] == 2 && d.stride[2] == 2 &&
	   d.axis[3] == PL_PP && d.size[3] == 4 && d.stride[3] == 4,
	   "digits tp(2,1) cp(1,2) dp(2,2) pp(4,4)");
	round_trips(&l, 16);
	partitions(&l, 16);
}

/*
 * World 16, tp2 pp4 (dp2), order tp-cp-ep-pp-dp: strides tp 1, pp 2, dp 8;
 * rank = tp + 2*pp + 8*dp.
 */
static void
test_tppdp_16(void)
{
	struct pl_layout l;
	/* tp: g -> pp = g%4, dp = g/4, base 2g. */
	static const long tp[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
				   13, 14, 15 };
	/* pp: g -> tp = g%2, dp = g/2, base tp + 8dp; members base + 2i. */
	static const long pp[] = { 0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14,
				   9, 11, 13, 15 };
	/* dp: g -> tp = g%2, pp = g/2, base g; members g + 8i. */
	static const long dp[] = { 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13,
				   6, 14, 7, 15 };
	/* tp-pp: g = dp; member i -> tp + 2pp = i. */
	static const long mp[] = { 0, 1, 2, 3, 4, 5, 6, 7,
				   8, 9, 10, 11, 12, 13, 14, 15 };

	if (setup("tp2,pp4,order=megatron-tp-pp-dp", 16, &l) < 0)
		return;
	groups_are(&l, "tp", 8, 2, tp);
	groups_are(&l, "pp", 4, 4, pp);
	groups_are(&l, "dp", 8, 2, dp);
	groups_are(&l, "tp-pp", 2, 8, mp);
	/* rank 13 = 1 + 2*2 + 8*1 */
	coords_are(&l, 13, 1, 0, 0, 1, 2);
	round_trips(&l, 16);
	partitions(&l, 16);
}

/*
 * World 64, tp4 cp2 pp2 (dp4), order tp-cp-ep-dp-pp: strides tp 1, cp 4,
 * dp 8, pp 32; rank = tp + 4cp + 8dp + 32pp.
 */
static void
test_megatron_64(void)
{
	struct pl_layout l;
	struct pl_digits d;
	static long tp[64], pp[64], tpcp[64], tpdpcp[64];
	/* cp: g -> tp = g%4, dp = (g/4)%4, pp = g/16; base tp+8dp+32pp,
	 * members base + 4i. */
	static const long cp[] = {
		0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15,
		16, 20, 17, 21, 18, 22, 19, 23, 24, 28, 25, 29, 26, 30, 27, 31,
		32, 36, 33, 37, 34, 38, 35, 39, 40, 44, 41, 45, 42, 46, 43, 47,
		48, 52, 49, 53, 50, 54, 51, 55, 56, 60, 57, 61, 58, 62, 59, 63,
	};
	/* dp: g -> tp = g%4, cp = (g/4)%2, pp = g/8; base (g%8) + 32(g/8),
	 * members base + 8i. */
	static const long dp[] = {
		0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27,
		4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31,
		32, 40, 48, 56, 33, 41, 49, 57, 34, 42, 50, 58, 35, 43, 51, 59,
		36, 44, 52, 60, 37, 45, 53, 61, 38, 46, 54, 62, 39, 47, 55, 63,
	};
	/* dp-cp: g -> tp = g%4, pp = g/4; member i -> cp = i%2, dp = i/2,
	 * i.e. 4cp + 8dp = 4i. */
	static const long dpcp[] = {
		0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29,
		2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31,
		32, 36, 40, 44, 48, 52, 56, 60, 33, 37, 41, 45, 49, 53, 57, 61,
		34, 38, 42, 46, 50, 54, 58, 62, 35, 39, 43, 47, 51, 55, 59, 63,
	};
	/* tp-pp: g -> cp = g%2, dp = g/2, base 4g; member i -> tp = i%4,
	 * pp = i/4: tp + 32pp. */
	static const long mp[] = {
		0, 1, 2, 3, 32, 33, 34, 35, 4, 5, 6, 7, 36, 37, 38, 39,
		8, 9, 10, 11, 40, 41, 42, 43, 12, 13, 14, 15, 44, 45, 46, 47,
		16, 17, 18, 19, 48, 49, 50, 51, 20, 21, 22, 23, 52, 53, 54, 55,
		24, 25, 26, 27, 56, 57, 58, 59, 28, 29, 30, 31, 60, 61, 62, 63,
	};
	long i;

	/*
	 * tp, tp-cp and tp-dp-cp take the innermost digits, so their groups
	 * are consecutive runs of 4, 8 and 32 ranks: 0..63 in order.  pp: g
	 * -> tp, cp, dp = all of 0..31 as base g, members g, g + 32.
	 */
	for (i = 0; i < 64; i++) {
		tp[i] = tpcp[i] = tpdpcp[i] = i;
		pp[i] = i / 2 + (i % 2) * 32;
	}
	if (setup("tp4,cp2,pp2", 64, &l) < 0)
		return;
	is_int(l.size[PL_DP], 4, "dp = 64/16");
	groups_are(&l, "tp", 16, 4, tp);
	groups_are(&l, "cp", 32, 2, cp);
	groups_are(&l, "dp", 16, 4, dp);
	groups_are(&l, "pp", 32, 2, pp);
	groups_are(&l, "dp-cp", 8, 8, dpcp);
	groups_are(&l, "cp-dp", 8, 8, dpcp);
	groups_are(&l, "tp-cp", 8, 8, tpcp);
	groups_are(&l, "tp-pp", 8, 8, mp);
	groups_are(&l, "tp-dp-cp", 2, 32, tpdpcp);
	/* 45 = 1 + 4*1 + 8*1 + 32*1 */
	coords_are(&l, 45, 1, 1, 0, 1, 1);
	order_digits(&l, &d);
	ok(d.n == 4 && d.stride[0] == 1 && d.stride[1] == 4 &&
	   d.stride[2] == 8 && d.stride[3] == 32 && d.axis[2] == PL_DP &&
	   d.size[2] == 4, "digits tp(4,1) cp(2,4) dp(4,8) pp(2,32)");
	round_trips(&l, 64);
	partitions(&l, 64);
}

/*
 * World 64, tp4 cp2 pp2 (dp4), order tp-cp-ep-pp-dp: strides tp 1, cp 4,
 * pp 8, dp 16; rank = tp + 4cp + 8pp + 16dp.
 */
static void
test_tppdp_64(void)
{
	struct pl_layout l;
	struct pl_digits d;
	/* pp: g -> tp = g%4, cp = (g/4)%2, dp = g/8; base (g%8) + 16(g/8),
	 * members base + 8i. */
	static const long pp[] = {
		0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15,
		16, 24, 17, 25, 18, 26, 19, 27, 20, 28, 21, 29, 22, 30, 23, 31,
		32, 40, 33, 41, 34, 42, 35, 43, 36, 44, 37, 45, 38, 46, 39, 47,
		48, 56, 49, 57, 50, 58, 51, 59, 52, 60, 53, 61, 54, 62, 55, 63,
	};
	/* dp: g -> tp, cp, pp = 0..15 as base g; members g + 16i. */
	static const long dp[] = {
		0, 16, 32, 48, 1, 17, 33, 49, 2, 18, 34, 50, 3, 19, 35, 51,
		4, 20, 36, 52, 5, 21, 37, 53, 6, 22, 38, 54, 7, 23, 39, 55,
		8, 24, 40, 56, 9, 25, 41, 57, 10, 26, 42, 58, 11, 27, 43, 59,
		12, 28, 44, 60, 13, 29, 45, 61, 14, 30, 46, 62, 15, 31, 47, 63,
	};
	/* cp: g -> tp = g%4, pp = (g/4)%2, dp = g/8; base (g%4) + 8(g/4),
	 * members base + 4i. */
	static const long cp[] = {
		0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15,
		16, 20, 17, 21, 18, 22, 19, 23, 24, 28, 25, 29, 26, 30, 27, 31,
		32, 36, 33, 37, 34, 38, 35, 39, 40, 44, 41, 45, 42, 46, 43, 47,
		48, 52, 49, 53, 50, 54, 51, 55, 56, 60, 57, 61, 58, 62, 59, 63,
	};
	/* tp-pp: g -> cp = g%2, dp = g/2; base 4cp + 16dp; member i ->
	 * tp = i%4, pp = i/4: tp + 8pp. */
	static const long mp[] = {
		0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15,
		16, 17, 18, 19, 24, 25, 26, 27, 20, 21, 22, 23, 28, 29, 30, 31,
		32, 33, 34, 35, 40, 41, 42, 43, 36, 37, 38, 39, 44, 45, 46, 47,
		48, 49, 50, 51, 56, 57, 58, 59, 52, 53, 54, 55, 60, 61, 62, 63,
	};
	/* dp-cp: g -> tp = g%4, pp = g/4; base tp + 8pp; member i ->
	 * cp = i%2, dp = i/2: 0 4 16 20 32 36 48 52. */
	static const long dpcp[] = {
		0, 4, 16, 20, 32, 36, 48, 52, 1, 5, 17, 21, 33, 37, 49, 53,
		2, 6, 18, 22, 34, 38, 50, 54, 3, 7, 19, 23, 35, 39, 51, 55,
		8, 12, 24, 28, 40, 44, 56, 60, 9, 13, 25, 29, 41, 45, 57, 61,
		10, 14, 26, 30, 42, 46, 58, 62, 11, 15, 27, 31, 43, 47, 59, 63,
	};

	if (setup("tp4,cp2,pp2,order=megatron-tp-pp-dp", 64, &l) < 0)
		return;
	groups_are(&l, "pp", 32, 2, pp);
	groups_are(&l, "dp", 16, 4, dp);
	groups_are(&l, "cp", 32, 2, cp);
	groups_are(&l, "tp-pp", 8, 8, mp);
	groups_are(&l, "dp-cp", 8, 8, dpcp);
	/* 45 = 1 + 4*1 + 8*1 + 16*2 */
	coords_are(&l, 45, 1, 1, 0, 2, 1);
	order_digits(&l, &d);
	ok(d.n == 4 && d.axis[2] == PL_PP && d.stride[2] == 8 &&
	   d.axis[3] == PL_DP && d.stride[3] == 16 && d.size[3] == 4,
	   "digits tp(4,1) cp(2,4) pp(2,8) dp(4,16)");
	round_trips(&l, 64);
	partitions(&l, 64);
}

/*
 * Expert parallel, default order, world 16, tp2 ep4 pp2.  Dense: dp 4,
 * rank = tp + 2dp + 8pp.  Expert generator: tp 2, cp 1, ep 4, dp 16/(2*4*2)
 * = 1, pp 2, so rank = tp + 2ep + 8pp.
 */
static void
test_ep_16(void)
{
	struct pl_layout l;
	/* ep: g -> tp = g%2, pp = g/2; base tp + 8pp, members base + 2i. */
	static const long ep[] = { 0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14,
				   9, 11, 13, 15 };
	/* expert dp has size 1: g = tp + 2ep + 8pp = rank, singletons. */
	static const long edp[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
				    13, 14, 15 };
	/* tp-ep: g = pp; member i -> tp = i%2, ep = i/2: tp + 2ep = i. */
	static const long tpep[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
				     13, 14, 15 };
	/* dense dp: g -> tp = g%2, pp = g/2; members tp + 8pp + 2i. */
	static const long dp[] = { 0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14,
				   9, 11, 13, 15 };
	/* pp, both generators: g = 0..7 as base, members g, g + 8. */
	static const long pp[] = { 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13,
				   6, 14, 7, 15 };

	if (setup("tp2,ep4,pp2", 16, &l) < 0)
		return;
	groups_are(&l, "ep", 4, 4, ep);
	groups_are(&l, "edp", 16, 1, edp);
	groups_are(&l, "dp-ep", 4, 4, ep);
	groups_are(&l, "tp-ep", 2, 8, tpep);
	groups_are(&l, "ep-tp", 2, 8, tpep);
	groups_are(&l, "dp", 4, 4, dp);
	groups_are(&l, "pp", 8, 2, pp);
	ok(order_pp_groups_agree(&l), "dense and expert pp groups agree");
	/* 13 = 1 + 2*2 + 8*1 (dense dp 2) = 1 + 2*2 + 8*1 (ep 2) */
	coords_are(&l, 13, 1, 0, 2, 2, 1);
	/* 6 = 0 + 2*3: dense dp 3, expert ep 3 */
	coords_are(&l, 6, 0, 0, 3, 3, 0);
	round_trips(&l, 16);
	partitions(&l, 16);
}

/*
 * World 32, tp2 ep4 pp2: dense dp 8; expert dp 32/16 = 2, so the expert
 * rank = tp + 2ep + 8edp + 16pp.
 */
static void
test_ep_32(void)
{
	struct pl_layout l;
	/* ep: g -> tp = g%2, edp = (g/2)%2, pp = g/4; base tp + 8edp + 16pp,
	 * members base + 2i. */
	static const long ep[] = {
		0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15,
		16, 18, 20, 22, 17, 19, 21, 23, 24, 26, 28, 30, 25, 27, 29, 31,
	};
	/* edp: g -> tp = g%2, ep = (g/2)%4, pp = g/8; base tp + 2ep + 16pp,
	 * members base + 8i. */
	static const long edp[] = {
		0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15,
		16, 24, 17, 25, 18, 26, 19, 27, 20, 28, 21, 29, 22, 30, 23, 31,
	};
	/* dp-ep: g -> tp = g%2, pp = g/2; member i -> ep = i%4, edp = i/4:
	 * 2ep + 8edp = 2i. */
	static const long dpep[] = {
		0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
		16, 18, 20, 22, 24, 26, 28, 30, 17, 19, 21, 23, 25, 27, 29, 31,
	};

	if (setup("tp2,ep4,pp2", 32, &l) < 0)
		return;
	is_int(layout_expert_dp(&l), 2, "expert dp 2");
	groups_are(&l, "ep", 8, 4, ep);
	groups_are(&l, "edp", 16, 2, edp);
	groups_are(&l, "dp-ep", 4, 8, dpep);
	groups_are(&l, "ep-edp", 4, 8, dpep);
	/* 27 = 1 + 2*1 + 8*1 + 16*1: ep 1; dense dp = (27/2)%8 = 5 */
	coords_are(&l, 27, 1, 0, 1, 5, 1);
	round_trips(&l, 32);
	partitions(&l, 32);
}

/*
 * torchtitan, world 16, tp2 cp2 pp2 (dp2): mesh (pp, dp, cp, tp) =
 * arange(16).reshape(2, 2, 2, 2), rank = tp + 2cp + 4dp + 8pp.  The groups
 * of mesh dim k are the rows of mesh.swapdims(-1, k).reshape(-1, size):
 * row-major over the other dims with dim k's place taken by the last dim.
 */
static void
test_torchtitan_16(void)
{
	struct pl_layout l;
	/* tp (last dim): rows of the mesh itself, consecutive pairs. */
	static const long tp[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
				   13, 14, 15 };
	/* cp: swap -> (pp, dp, tp, cp); g -> tp = g%2, dp = (g/2)%2,
	 * pp = g/4; members base + 2i. */
	static const long cp[] = { 0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12,
				   14, 13, 15 };
	/* dp: swap -> (pp, tp, cp, dp); g -> cp = g%2, tp = (g/2)%2,
	 * pp = g/4; base tp + 2cp + 8pp, members base + 4i.  Megatron would
	 * give 0 4, 1 5, 2 6, 3 7 here. */
	static const long dp[] = { 0, 4, 2, 6, 1, 5, 3, 7, 8, 12, 10, 14, 9,
				   13, 11, 15 };
	/* pp: swap -> (tp, dp, cp, pp); g -> cp = g%2, dp = (g/2)%2,
	 * tp = g/4; base tp + 2cp + 4dp, members base + 8i. */
	static const long pp[] = { 0, 8, 2, 10, 4, 12, 6, 14, 1, 9, 3, 11, 5,
				   13, 7, 15 };
	/* dp-cp (a flattened mesh): permute(pp, tp, dp, cp); g -> tp = g%2,
	 * pp = g/2; member i -> cp = i%2, dp = i/2: 2cp + 4dp = 2i. */
	static const long dpcp[] = { 0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9,
				     11, 13, 15 };
	struct pl_digits d;

	if (setup("tp2,cp2,pp2,order=torchtitan", 16, &l) < 0)
		return;
	is_int(l.size[PL_DP], 2, "dp = 16/8");
	groups_are(&l, "tp", 8, 2, tp);
	groups_are(&l, "cp", 8, 2, cp);
	groups_are(&l, "dp", 8, 2, dp);
	groups_are(&l, "pp", 8, 2, pp);
	groups_are(&l, "dp-cp", 4, 4, dpcp);
	/* ep is 1: singletons in rank order; edp is dp. */
	groups_are(&l, "ep", 16, 1, tp);
	groups_are(&l, "edp", 8, 2, dp);
	/* 11 = 1 + 2*1 + 4*0 + 8*1 */
	coords_are(&l, 11, 1, 1, 0, 0, 1);
	order_digits(&l, &d);
	ok(d.n == 4 && d.axis[0] == PL_TP && d.axis[1] == PL_CP &&
	   d.axis[2] == PL_DP && d.axis[3] == PL_PP && d.stride[3] == 8,
	   "torchtitan digits: tp fastest, pp slowest");
	round_trips(&l, 16);
	partitions(&l, 16);
}

/*
 * torchtitan leaves dims of size 1 out of the mesh, which changes the
 * enumeration: tp1 cp2 dp2 pp2 (world 8) has mesh (pp, dp, cp), rank =
 * cp + 2dp + 4pp.  pp: swap -> (cp, dp, pp); g -> dp = g%2, cp = g/2; base
 * cp + 2dp, members base + 4i.  (With a kept tp of 1 it would be 0 4, 1 5,
 * 2 6, 3 7.)
 */
static void
test_torchtitan_dropped(void)
{
	struct pl_layout l;
	static const long pp[] = { 0, 4, 2, 6, 1, 5, 3, 7 };

	if (setup("cp2,pp2,order=torchtitan", 8, &l) < 0)
		return;
	groups_are(&l, "pp", 4, 2, pp);
	round_trips(&l, 8);
	partitions(&l, 8);
}

static void
test_errors(void)
{
	struct pl_layout l;
	struct pl_groups g;
	struct pl_coords c;
	pl_err_t err;

	if (setup("tp2,pp4", 16, &l) < 0)
		return;
	pl_err_clear(&err);
	ok(order_groups(&l, "xp", &g, &err) == -1, "unknown kind rejected");
	like(err.text, "unknown part 'xp'", "names the bad part");
	like(err.text, "tp, cp, ep, dp, pp or edp", "says what is accepted");
	ok(g.ranks == NULL, "no ranks on error");
	pl_err_clear(&err);
	ok(order_groups(&l, "tp-tp", &g, &err) == -1, "repeated axis");
	like(err.text, "tp is named twice", "names the repeat");
	pl_err_clear(&err);
	ok(order_groups(&l, "dp-edp", &g, &err) == -1, "dp and edp together");
	pl_err_clear(&err);
	ok(order_groups(&l, "", &g, &err) == -1, "empty kind");
	like(err.text, "empty group kind", "empty kind message");
	pl_err_clear(&err);
	ok(order_groups(&l, "tp-", &g, &err) == -1, "trailing dash");
	pl_err_clear(&err);
	ok(order_groups(&l, NULL, &g, &err) == -1, "NULL kind");
	pl_err_clear(&err);
	ok(order_groups(&l, "tp-cp-ep-dp-pp-tp-cp-ep-dp-pp-tp-cp", &g,
			&err) == -1, "overlong kind");
	order_groups_free(&g);
	order_groups_free(NULL);
	ok(g.ranks == NULL && g.ngroups == 0 && g.group_size == 0,
	   "order_groups_free leaves the groups empty (and accepts NULL)");

	/* An unresolved layout has no world to enumerate. */
	pl_err_clear(&err);
	if (layout_parse("tp2,pp4", &l, &err) == 0) {
		ok(order_groups(&l, "tp", &g, &err) == -1,
		   "unresolved layout rejected");
		like(err.text, "not resolved", "unresolved message");
		pl_err_clear(&err);
		ok(order_coords(&l, 0, &c, &err) == -1, "no coords unresolved");
		memset(&c, 0, sizeof(c));
		is_int(order_rank(&l, &c), -1, "no rank unresolved");
	}
	if (setup("tp2,pp4", 16, &l) == 0) {
		memset(&c, 0, sizeof(c));
		c.c[PL_PP] = 4;
		is_int(order_rank(&l, &c), -1, "pp coordinate out of range");
		c.c[PL_PP] = -1;
		is_int(order_rank(&l, &c), -1, "negative coordinate");
	}
}

int
main(void)
{
	plan(325);
	test_megatron_16();
	test_tppdp_16();
	test_megatron_64();
	test_tppdp_64();
	test_ep_16();
	test_ep_32();
	test_torchtitan_16();
	test_torchtitan_dropped();
	test_errors();
	return done_testing();
}
