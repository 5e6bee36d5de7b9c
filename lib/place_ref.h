/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A reference for the tests and the quality gate, not part of the library:
 * the cost of a placement recomputed from the tasks place_compute returned,
 * written straight from the cost model in docs/ARCHITECTURE.md and sharing
 * none of the placer's bookkeeping (no slots, digits, strides or leaf
 * numbering).  Groups come from the framework's rank convention
 * (order_coords, order_rank, order_groups: tested on their own against
 * Megatron); bytes per axis are the caller's.
 *
 * Model: every TP, CP and DP group is a ring and every PP group a chain,
 * over the group's members in rank order, visiting each node once, in the
 * order its first member appears.  Each node-to-node edge is charged the
 * axis's bytes, and again as cross-switch when the two nodes share no leaf
 * switch (a node may hang under two), or no block when the map has blocks
 * and no switches.  EP is an all-to-all: each member sends bytes/(ep-1) to
 * every peer on another node.
 */
#ifndef PL_PLACE_REF_H
#define PL_PLACE_REF_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "place.h"
#include "topo.h"

struct ref_cost {
	double node;		/* cross-node bytes per step */
	double sw;		/* cross-switch bytes per step */
};

/* The leaves of map node i: its switches, or without one its block
 * (numbered after the switches); -1 for none. */
static inline void
ref_leaves(const struct topo_map *m, long i, long out[2])
{
	const struct topo_node *x = &m->nodes[i];

	out[0] = x->sw;
	out[1] = x->sw >= 0 ? x->sw2 : -1;
	if (x->sw < 0 && x->block >= 0)
		out[0] = m->nswitches + x->block;
}

/* Whether map nodes a and b share a leaf (or, without switches, a block). */
static inline int
ref_same_leaf(const struct topo_map *m, long a, long b)
{
	long xs[2], ys[2];
	int i, j;

	ref_leaves(m, a, xs);
	ref_leaves(m, b, ys);
	if (xs[0] < 0 && ys[0] < 0)
		return 1;	/* nothing tells them apart */
	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++)
			if (xs[i] >= 0 && xs[i] == ys[j])
				return 1;
	return 0;
}

/* Charge one walk over the distinct nodes of members (map node ids, in
 * rank order). */
static inline void
ref_walk(const struct topo_map *m, const long *members, long n, int ring, double bytes,
	 long *seen, struct ref_cost *c)
{
	long k = 0, i, j, edges;

	for (i = 0; i < n; i++) {
		for (j = 0; j < k && seen[j] != members[i]; j++)
			;
		if (j == k)
			seen[k++] = members[i];
	}
	if (k < 2)
		return;
	edges = ring ? k : k - 1;
	for (i = 0; i < edges; i++) {
		c->node += bytes;
		if (!ref_same_leaf(m, seen[i], seen[(i + 1) % k]))
			c->sw += bytes;
	}
}

/*
 * The cost of rank -> map node rank_map[] (world entries) for layout l and
 * bytes[axis].  Returns 0, or -1 (out of memory, bad layout).
 */
static inline int
ref_cost_of(const struct pl_layout *l, const struct topo_map *m, const long *rank_map,
	    long world, const double *bytes, struct ref_cost *c)
{
	static const enum pl_axis ring_axes[] = { PL_TP, PL_CP, PL_DP, PL_PP };
	long *members = malloc(((size_t)world + 1) * sizeof(*members));
	long *seen = malloc(((size_t)world + 1) * sizeof(*seen));
	struct pl_groups g;
	size_t ai;
	long r, j, gi;
	int rv = -1;

	memset(c, 0, sizeof(*c));
	memset(&g, 0, sizeof(g));
	if (!members || !seen)
		goto out;
	for (ai = 0; ai < sizeof(ring_axes) / sizeof(ring_axes[0]); ai++) {
		enum pl_axis a = ring_axes[ai];
		long size = l->size[a];

		if (size < 2 || bytes[a] <= 0)
			continue;
		/* Each group once, from its member with coordinate 0. */
		for (r = 0; r < world; r++) {
			struct pl_coords co;

			if (order_coords(l, r, &co, NULL) < 0)
				goto out;
			if (co.c[a] != 0)
				continue;
			for (j = 0; j < size; j++) {
				long peer;

				co.c[a] = j;
				peer = order_rank(l, &co);
				if (peer < 0 || peer >= world)
					goto out;
				members[j] = rank_map[peer];
			}
			ref_walk(m, members, size, a != PL_PP, bytes[a], seen, c);
		}
	}
	if (l->size[PL_EP] > 1 && bytes[PL_EP] > 0) {
		double share = bytes[PL_EP] / (double)(l->size[PL_EP] - 1);

		if (order_groups(l, "ep", &g, NULL) < 0)
			goto out;
		for (gi = 0; gi < g.ngroups; gi++) {
			const long *mem = &g.ranks[gi * g.group_size];
			long i;

			for (i = 0; i < g.group_size; i++)
				for (j = 0; j < g.group_size; j++) {
					long x = rank_map[mem[i]], y = rank_map[mem[j]];

					if (x == y)
						continue;
					c->node += share;
					if (!ref_same_leaf(m, x, y))
						c->sw += share;
				}
		}
	}
	rv = 0;
out:
	order_groups_free(&g);
	free(members);
	free(seen);
	return rv;
}

/*
 * Check a placement's tasks against its step and fill rank_map[rank] (map
 * node of each rank) and base_map[procid] (the same for RANK = SLURM_PROCID):
 * every procid on the node Slurm put it on, at its local id; the ranks a
 * permutation of 0..world-1; no GPU (node, LOCAL_RANK) used twice.  Returns
 * 0, or -1 with why[] saying what is wrong.
 */
static inline int
ref_check_tasks(const struct topo_map *m, const struct place_node *nodes, long nnodes,
		const struct place_result *r, long *rank_map, long *base_map, char *why,
		size_t whylen)
{
	long world = r->ntasks, i, j, procid = 0, ngpu = 0;
	long *node_map = malloc(((size_t)nnodes + 1) * sizeof(*node_map));
	/* GPU bits per map node (a node listed twice shares them). */
	long *gpu0 = malloc(((size_t)m->nnodes + 1) * sizeof(*gpu0));
	long *span = malloc(((size_t)m->nnodes + 1) * sizeof(*span));
	unsigned char *gpu_used = NULL;
	int rv = -1, g;

	snprintf(why, whylen, "out of memory");
	if (!node_map || !gpu0 || !span)
		goto out;
	for (i = 0; i < world; i++)
		rank_map[i] = base_map[i] = -1;
	for (i = 0; i < m->nnodes; i++) {
		const struct topo_nodetype *t = topo_node_type(m, i);

		span[i] = 0;
		for (g = 0; t && g < t->ngpus; g++)
			if (t->gpus[g].index + 1 > span[i])
				span[i] = t->gpus[g].index + 1;
		gpu0[i] = ngpu;
		ngpu += span[i];
	}
	for (i = 0; i < nnodes; i++) {
		node_map[i] = topo_find_node(m, nodes[i].name);
		if (node_map[i] < 0) {
			snprintf(why, whylen, "node %s is not in the map", nodes[i].name);
			goto out;
		}
	}
	gpu_used = calloc((size_t)ngpu + 1, 1);
	if (!gpu_used)
		goto out;
	for (i = 0; i < nnodes; i++)
		for (j = 0; j < nodes[i].ntasks; j++, procid++) {
			long p = nodes[i].tids ? nodes[i].tids[j] : procid;
			const struct place_task *t;

			if (p < 0 || p >= world) {
				snprintf(why, whylen, "procid %ld out of range", p);
				goto out;
			}
			t = &r->tasks[p];
			if (t->procid != p || t->node != i || t->local_id != j) {
				snprintf(why, whylen, "procid %ld is not where Slurm put it (node %ld, local %ld)",
					 p, i, j);
				goto out;
			}
			if (t->rank < 0 || t->rank >= world || rank_map[t->rank] >= 0) {
				snprintf(why, whylen, "rank %ld is out of range or given twice", t->rank);
				goto out;
			}
			if (t->local_rank < 0 || t->local_rank >= span[node_map[i]] ||
			    gpu_used[gpu0[node_map[i]] + t->local_rank]) {
				snprintf(why, whylen, "GPU %d of node %s is used twice or unknown",
					 t->local_rank, nodes[i].name);
				goto out;
			}
			gpu_used[gpu0[node_map[i]] + t->local_rank] = 1;
			rank_map[t->rank] = node_map[i];
			base_map[p] = node_map[i];
		}
	if (procid != world) {
		snprintf(why, whylen, "the step runs %ld tasks, the placement %ld", procid, world);
		goto out;
	}
	why[0] = '\0';
	rv = 0;
out:
	free(gpu_used);
	free(node_map);
	free(gpu0);
	free(span);
	return rv;
}

/* Both costs of a placement, recomputed: ours (the ranks it returned) and
 * the baseline (RANK = SLURM_PROCID).  Returns 0, or -1 with why[]. */
static inline int
ref_recost(const struct pl_layout *l, const struct topo_map *m, const struct place_node *nodes,
	   long nnodes, const struct place_result *r, const double *bytes, struct ref_cost *ours,
	   struct ref_cost *base, char *why, size_t whylen)
{
	long *rank_map = malloc(((size_t)r->ntasks + 1) * sizeof(*rank_map));
	long *base_map = malloc(((size_t)r->ntasks + 1) * sizeof(*base_map));
	int rv = -1;

	memset(ours, 0, sizeof(*ours));
	memset(base, 0, sizeof(*base));
	if (!rank_map || !base_map) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	if (ref_check_tasks(m, nodes, nnodes, r, rank_map, base_map, why, whylen) < 0)
		goto out;
	if (ref_cost_of(l, m, rank_map, r->ntasks, bytes, ours) < 0 ||
	    ref_cost_of(l, m, base_map, r->ntasks, bytes, base) < 0) {
		snprintf(why, whylen, "cannot cost the layout");
		goto out;
	}
	rv = 0;
out:
	free(rank_map);
	free(base_map);
	return rv;
}

#endif
