/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A placement answer checked against the step before any field is used: an
 * answer from layoutd (or the in-process fallback) is input like any other.
 * Pure (no Slurm calls), so the fuzzers and unit tests drive it directly.
 */
#ifndef SPK_ANSWER_H
#define SPK_ANSWER_H

#include "pl_err.h"
#include "proto.h"

/*
 * Check p, parsed from an answer to a request for the step's nnodes nodes
 * (names[i] with ntasks[i] tasks, in the order sent) in view ("hostfile" or
 * "node:NAME"): the same nodes in the same order with the same task counts,
 * world equal to their sum, every index (rank, node, procid, local id,
 * LOCAL_RANK) in range, ranks unique, rank_nodes present and consistent
 * for the hostfile view, and exactly the node's tasks for a node view.
 * Returns 0, or -1 with err naming the first field that does not fit.
 */
int spk_answer_check(const struct proto_placement *p, const char *const *names,
		    const long *ntasks, long nnodes, const char *view, pl_err_t *err);

/*
 * Is p a placement of spec?  The answer's layout (resolved against its
 * world) must have the sizes and the rank order spec resolves to; an
 * answer for another layout would give every task a wrong rank.  For an
 * auto spec the answer's layout is the one the planner chose: it must keep
 * every key the spec pins (sizes, zero, gbs, mbs, recompute, vpp, sp,
 * cp_algo) and the spec's rank order.  Returns 0, or -1 with err.
 */
int spk_answer_layout_check(const struct proto_placement *p, const char *spec, pl_err_t *err);

#endif
