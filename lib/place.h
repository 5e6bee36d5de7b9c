/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Placement: (layout, the step's nodes in Slurm order with their tasks, the
 * topology map) -> each Slurm task's framework rank, GPU, coordinates and
 * NIC.  Pure and deterministic.
 */
#ifndef PL_PLACE_H
#define PL_PLACE_H

#include "layout.h"
#include "order.h"
#include "topo.h"

/* One node of the step, in Slurm order. */
struct place_node {
	const char *name;
	long ntasks;
	/* The global task ids (SLURM_PROCID) on this node in local-id order;
	 * NULL means Slurm's block distribution. */
	const long *tids;
};

struct place_task {
	long procid;
	long rank;		/* framework RANK */
	long node;		/* index into the input nodes */
	long local_id;		/* SLURM_LOCALID */
	int local_rank;		/* LOCAL_RANK: the GPU index the task must use */
	struct pl_coords co;
	int nic;		/* index into the node type's nics; -1 none */
	const char *nic_name;	/* points into the map; NULL none */
};

struct place_cost {
	double cross_node_bytes;	/* per step, summed over all groups */
	double cross_switch_bytes;
};

struct place_result {
	long ntasks;
	struct place_task *tasks;	/* indexed by procid */
	long *rank_procid;		/* rank -> procid */
	struct place_cost cost;
	struct place_cost baseline;	/* Slurm block order, RANK = SLURM_PROCID */
	char strategy[96];		/* which candidate won, for the report */
};

/*
 * Place a resolved layout (world == total tasks).  axis_bytes (indexed by
 * enum pl_axis, bytes per GPU per step, e.g. from plan_axis_bytes) ranks the
 * axes after TP; NULL uses tp, cp, pp, dp.  Returns 0 or -1 with err saying
 * why (a node not in the map, tp larger than an NVLink domain, ...).
 * Caller frees *out with place_result_free().
 */
int place_compute(const struct pl_layout *l, const struct topo_map *m,
		  const struct place_node *nodes, long nnodes,
		  const double *axis_bytes, struct place_result *out, pl_err_t *err);

void place_result_free(struct place_result *r);

/*
 * Refuse a step that lists a node twice (two entries would be handed the
 * same GPUs).  Returns 0, or -1 with err naming the node and both
 * positions.  O(n log n) in the nodes; place_compute() runs it first.
 */
int place_check_nodes(const struct place_node *nodes, long nnodes, pl_err_t *err);

#endif
