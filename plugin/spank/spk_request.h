/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The step as slurmstepd learns it (node list, tasks per node, task ids)
 * turned into a placement request.  Pure (no Slurm calls, no fixed limits
 * on the node count), so the unit tests build requests for steps of any
 * size.
 */
#ifndef SPK_REQUEST_H
#define SPK_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "pl_err.h"
#include "proto.h"

struct spk_step {
	long nnodes;
	char **names;		/* step order */
	long *ntasks;
	long **tids;		/* tids[n][i]: the global id of node n's i-th task */
	long world;
};

/*
 * Fill *s from Slurm's step layout: the node list expression (expanded; it
 * must name exactly nnodes nodes), tasks[n] and tids[n][i].  Returns 0, or
 * -1 with err.  Free with spk_step_free() (also after a failure).
 */
int spk_step_init(struct spk_step *s, const char *nodelist, long nnodes, const uint16_t *tasks,
		 uint32_t *const *tids, pl_err_t *err);
void spk_step_free(struct spk_step *s);

/* The index of node name in the step, or -1. */
long spk_step_find(const struct spk_step *s, const char *name);

/*
 * The request for step s: with its task ids (with_tids) or in Slurm's block
 * order, for view, with the job owner's uid (-1: none).  Returns 0, or -1
 * with err.  Free with proto_request_free().
 */
int spk_request_build(struct proto_request *req, const char *spec, const struct spk_step *s,
		     bool with_tids, long job_id, long step_id, long uid, const char *view,
		     pl_err_t *err);

#endif
