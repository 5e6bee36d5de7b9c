/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Framework rank conventions: global rank <-> coordinates, and the process
 * groups each framework builds, in the framework's own order.
 */
#ifndef PL_ORDER_H
#define PL_ORDER_H

#include "layout.h"

/* A rank's coordinates, indexed by enum pl_axis. */
struct pl_coords {
	long c[PL_NAXES];
};

/*
 * The dense (non-expert) decomposition of a rank as mixed-radix digits,
 * innermost first: rank = sum(coord[axis[i]] * stride[i]).  EP is not a
 * dense digit (it folds into cp*dp, see docs), so n is at most 4.
 */
struct pl_digits {
	int n;
	enum pl_axis axis[PL_NAXES];
	long size[PL_NAXES];
	long stride[PL_NAXES];
};

/* Fill *d for a resolved layout. */
void order_digits(const struct pl_layout *l, struct pl_digits *d);

/*
 * Coordinates of a global rank of a resolved layout: tp, cp, dp, pp from the
 * dense decomposition, ep from the framework's expert decomposition.
 * Returns 0, or -1 when rank is out of range.
 */
int order_coords(const struct pl_layout *l, long rank, struct pl_coords *out,
		 pl_err_t *err);

/* The global rank with the given dense coordinates (ep is ignored). */
long order_rank(const struct pl_layout *l, const struct pl_coords *c);

/* All groups of one kind: ranks[g * group_size + i], caller frees with order_groups_free(). */
struct pl_groups {
	long ngroups;
	long group_size;
	long *ranks;
};

/*
 * Build every group of the given kind exactly as the framework does, in the
 * framework's group order and member order.  kind is an axis name or a
 * '-'-joined set of them as Megatron names its groups ("tp", "pp", "dp",
 * "cp", "ep", "tp-pp" (model parallel), "dp-cp", "tp-cp", "tp-ep" ...).
 * "ep" and composites containing it use the expert rank generator, where
 * "dp" means the expert data parallel group; "edp" names that group alone.
 * Token order in kind does not matter.  For torchtitan one axis gives the
 * DeviceMesh dimension's groups and several give the flattened mesh's.
 * The layout must be resolved.  Returns 0 or -1 with err set (unknown or
 * repeated part, unresolved layout, out of memory); out->ranks is NULL then.
 */
int order_groups(const struct pl_layout *l, const char *kind,
		 struct pl_groups *out, pl_err_t *err);

/* Free the ranks of *g (g may be NULL or already freed) and zero it. */
void order_groups_free(struct pl_groups *g);

/*
 * Nonzero when Megatron-Core's dense and expert rank generators produce the
 * same pipeline groups in the same order, which initialize_model_parallel
 * asserts.  Needs sizes including dp; always nonzero for torchtitan.
 */
int order_pp_groups_agree(const struct pl_layout *l);

#endif
