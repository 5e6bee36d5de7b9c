/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rank conventions of the training frameworks.
 *
 * Megatron-Core: the order string lists axes innermost first and the world
 * is a mixed-radix number in that order.  A group kind masks some axes; the
 * groups are counted by the unmasked digits (first unmasked axis fastest),
 * the members of one group by the masked digits (first masked axis fastest).
 * Two generators share the order string: the dense one (ep = 1) and the
 * expert one (tp = expert tp = tp, cp = 1, ep, dp = world/(tp*ep*pp)).
 *
 * torchtitan: a DeviceMesh over the axes larger than 1 in the order
 * pp, dp, cp, tp (row-major, tp fastest).  One mesh dimension's groups come
 * from swapping that dimension with the last one and reading rows, which is
 * not plain row-major over the other dimensions; a flattened set of
 * dimensions is read row-major over the remaining ones.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"

/* Digits of one enumeration, fastest first. */
struct radix {
	int n;
	long size[PL_NAXES];
	long stride[PL_NAXES];
};

/* One rank generator: the axes of the order string with their sizes. */
struct gen {
	enum pl_axis axis[PL_NAXES];
	long size[PL_NAXES];
	long stride[PL_NAXES];
};

#define KIND_ACCEPTED "tp, cp, ep, dp, pp or edp, several joined by '-', " \
	"e.g. tp-pp, dp-cp, tp-ep"

static void
radix_push(struct radix *r, long size, long stride)
{
	r->size[r->n] = size;
	r->stride[r->n] = stride;
	r->n++;
}

/* The rank whose digits over g spell index gi and over m spell mi. */
static long
radix_rank(const struct radix *g, long gi, const struct radix *m, long mi)
{
	long rank = 0;
	int i;

	for (i = 0; i < g->n; i++) {
		rank += (gi % g->size[i]) * g->stride[i];
		gi /= g->size[i];
	}
	for (i = 0; i < m->n; i++) {
		rank += (mi % m->size[i]) * m->stride[i];
		mi /= m->size[i];
	}
	return rank;
}

static long
radix_count(const struct radix *r)
{
	long n = 1;
	int i;

	for (i = 0; i < r->n; i++)
		n *= r->size[i];
	return n;
}

static void
gen_build(const struct pl_layout *l, bool expert, struct gen *gn)
{
	long stride = 1;
	int i;

	for (i = 0; i < PL_NAXES; i++) {
		enum pl_axis a = l->order[i];
		long s = l->size[a];

		if (!expert && a == PL_EP)
			s = 1;
		else if (expert && a == PL_CP)
			s = 1;
		else if (expert && a == PL_DP)
			s = layout_expert_dp(l);
		gn->axis[i] = a;
		gn->size[i] = s;
		gn->stride[i] = stride;
		stride *= s;
	}
}

/* Split a generator by a mask of axes (bit 1 << axis) into two radices. */
static void
gen_split(const struct gen *gn, unsigned mask, struct radix *groups,
	  struct radix *members)
{
	int i;

	groups->n = members->n = 0;
	for (i = 0; i < PL_NAXES; i++) {
		if (mask & (1u << gn->axis[i]))
			radix_push(members, gn->size[i], gn->stride[i]);
		else
			radix_push(groups, gn->size[i], gn->stride[i]);
	}
}

/* Is the layout complete enough to enumerate ranks? */
static bool
resolved(const struct pl_layout *l)
{
	return layout_world(l) > 0;
}

void
order_digits(const struct pl_layout *l, struct pl_digits *d)
{
	long stride = 1;
	int i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < PL_NAXES; i++) {
		enum pl_axis a = l->order[i];

		if (a == PL_EP)
			continue;
		d->axis[d->n] = a;
		d->size[d->n] = l->size[a];
		d->stride[d->n] = stride;
		stride *= l->size[a];
		d->n++;
	}
}

int
order_coords(const struct pl_layout *l, long rank, struct pl_coords *out,
	     pl_err_t *err)
{
	struct pl_digits d;
	struct gen eg;
	long world = layout_world(l);
	int i;

	if (world <= 0)
		return pl_err_set(err, "layout is not resolved to a world size");
	if (rank < 0 || rank >= world)
		return pl_err_set(err, "rank %ld is out of range (0 to %ld)",
				  rank, world - 1);
	memset(out, 0, sizeof(*out));
	order_digits(l, &d);
	for (i = 0; i < d.n; i++)
		out->c[d.axis[i]] = (rank / d.stride[i]) % d.size[i];
	if (l->order_kind == PL_ORDER_MEGATRON && l->size[PL_EP] > 1 &&
	    layout_expert_dp(l) > 0) {
		gen_build(l, true, &eg);
		for (i = 0; i < PL_NAXES; i++)
			if (eg.axis[i] == PL_EP)
				out->c[PL_EP] = (rank / eg.stride[i]) %
						eg.size[i];
	}
	return 0;
}

long
order_rank(const struct pl_layout *l, const struct pl_coords *c)
{
	struct pl_digits d;
	long rank = 0;
	int i;

	if (!resolved(l))
		return -1;
	order_digits(l, &d);
	for (i = 0; i < d.n; i++) {
		long v = c->c[d.axis[i]];

		if (v < 0 || v >= d.size[i])
			return -1;
		rank += v * d.stride[i];
	}
	return rank;
}

/*
 * Parse a kind such as "tp-pp" into a mask of axes.  "edp" is the expert
 * data parallel group, so it, like "ep", selects the expert generator.
 */
static int
parse_kind(const char *kind, unsigned *mask, bool *expert, int *ntok,
	   pl_err_t *err)
{
	static const char *const names[] = { "tp", "cp", "ep", "dp", "pp", "edp" };
	static const enum pl_axis axes[] = { PL_TP, PL_CP, PL_EP, PL_DP, PL_PP,
					     PL_DP };
	const char *p = kind;
	size_t i;

	*mask = 0;
	*expert = false;
	*ntok = 0;
	if (!kind || !*kind)
		return pl_err_set(err, "empty group kind (accepted: %s)",
				  KIND_ACCEPTED);
	if (strlen(kind) > 32)
		return pl_err_set(err, "group kind '%.32s...' is too long "
				  "(accepted: %s)", kind, KIND_ACCEPTED);
	for (;;) {
		size_t len = strcspn(p, "-");

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i]) == len &&
			    strncmp(p, names[i], len) == 0)
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return pl_err_set(err, "group kind '%s': unknown part "
					  "'%.*s' (accepted: %s)", kind,
					  (int)len, p, KIND_ACCEPTED);
		if (*mask & (1u << axes[i]))
			return pl_err_set(err, "group kind '%s': %s is named "
					  "twice (accepted: %s)", kind,
					  pl_axis_name(axes[i]), KIND_ACCEPTED);
		*mask |= 1u << axes[i];
		if (axes[i] == PL_EP || strcmp(names[i], "edp") == 0)
			*expert = true;
		(*ntok)++;
		p += len;
		if (!*p)
			break;
		p++;
	}
	return 0;
}

/*
 * torchtitan's enumeration.  Mesh dimensions are the axes above 1 in the
 * order pp, dp, cp, tp; their strides are the dense ones.
 */
static void
titan_split(const struct pl_layout *l, unsigned mask, int ntok,
	    struct radix *groups, struct radix *members)
{
	static const enum pl_axis mesh_order[] = { PL_PP, PL_DP, PL_CP, PL_TP };
	struct pl_digits d;
	enum pl_axis dims[4];
	long stride[PL_NAXES] = { 0 };
	int n = 0, i, sel = -1;

	order_digits(l, &d);
	for (i = 0; i < d.n; i++)
		stride[d.axis[i]] = d.stride[i];
	for (i = 0; i < 4; i++)
		if (l->size[mesh_order[i]] > 1)
			dims[n++] = mesh_order[i];
	groups->n = members->n = 0;
	if (ntok == 1)
		for (i = 0; i < n; i++)
			if (mask == 1u << dims[i])
				sel = i;
	if (sel >= 0) {
		/*
		 * One mesh dimension: swapdims(-1, sel) then rows, so the
		 * groups run row-major over the dimensions with sel and the
		 * last one exchanged.
		 */
		enum pl_axis a = dims[sel];

		dims[sel] = dims[n - 1];
		dims[n - 1] = a;
		for (i = n - 2; i >= 0; i--)
			radix_push(groups, l->size[dims[i]], stride[dims[i]]);
		radix_push(members, l->size[a], stride[a]);
		return;
	}
	/* A flattened set: permute(remaining, flattened), both row-major. */
	for (i = n - 1; i >= 0; i--) {
		if (mask & (1u << dims[i]))
			radix_push(members, l->size[dims[i]], stride[dims[i]]);
		else
			radix_push(groups, l->size[dims[i]], stride[dims[i]]);
	}
}

int
order_groups(const struct pl_layout *l, const char *kind,
	     struct pl_groups *out, pl_err_t *err)
{
	struct radix groups, members;
	struct gen gn;
	unsigned mask;
	bool expert;
	long world = layout_world(l), g, i;
	int ntok;

	memset(out, 0, sizeof(*out));
	if (parse_kind(kind, &mask, &expert, &ntok, err) < 0)
		return -1;
	if (world <= 0)
		return pl_err_set(err, "layout is not resolved to a world size");
	if (l->order_kind == PL_ORDER_TORCHTITAN) {
		if (l->size[PL_EP] > 1)
			return pl_err_set(err, "ep%ld is not supported with "
					  "order=torchtitan", l->size[PL_EP]);
		/* Without ep, expert data parallel is plain dp. */
		titan_split(l, mask & ~(1u << PL_EP), ntok, &groups, &members);
	} else {
		if (expert && layout_expert_dp(l) <= 0)
			return pl_err_set(err, "world size %ld is not a "
					  "multiple of tp*ep*pp", world);
		gen_build(l, expert, &gn);
		gen_split(&gn, mask, &groups, &members);
	}
	out->group_size = radix_count(&members);
	out->ngroups = radix_count(&groups);
	out->ranks = malloc((size_t)world * sizeof(*out->ranks));
	if (!out->ranks) {
		memset(out, 0, sizeof(*out));
		return pl_err_set(err, "out of memory for %ld ranks", world);
	}
	for (g = 0; g < out->ngroups; g++)
		for (i = 0; i < out->group_size; i++)
			out->ranks[g * out->group_size + i] =
				radix_rank(&groups, g, &members, i);
	return 0;
}

void
order_groups_free(struct pl_groups *g)
{
	if (!g)
		return;
	free(g->ranks);
	memset(g, 0, sizeof(*g));
}

int
order_pp_groups_agree(const struct pl_layout *l)
{
	struct radix dg, dm, eg, em;
	struct gen dense, exp;
	long world = layout_world(l), g, i;

	if (l->order_kind != PL_ORDER_MEGATRON)
		return 1;
	if (world <= 0 || layout_expert_dp(l) <= 0)
		return 0;
	gen_build(l, false, &dense);
	gen_build(l, true, &exp);
	gen_split(&dense, 1u << PL_PP, &dg, &dm);
	gen_split(&exp, 1u << PL_PP, &eg, &em);
	for (g = 0; g < world / l->size[PL_PP]; g++)
		for (i = 0; i < l->size[PL_PP]; i++)
			if (radix_rank(&dg, g, &dm, i) !=
			    radix_rank(&eg, g, &em, i))
				return 0;
	return 1;
}
