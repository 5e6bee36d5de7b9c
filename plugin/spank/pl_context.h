/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The calls plugin.c dispatches to.  Kept apart from pl_plugin.h so that
 * the pure parts (arguments, shape, answers, requests) build without
 * spank.h for the unit tests and the fuzzers.
 */
#ifndef PL_CONTEXT_H
#define PL_CONTEXT_H

#include <slurm/spank.h>

#include "pl_plugin.h"

/* Local context (srun, sbatch, salloc): the option callback.  -1 refuses. */
int pl_local_option(struct pl_opts *o);
void pl_local_exit(void);

/* Remote context (slurmstepd): the placement, asked for in init_post_opt
 * (still root), and each task's environment. */
int pl_remote_prepare(spank_t sp, const struct pl_opts *o);
int pl_remote_task_init(spank_t sp, const struct pl_opts *o);
/* The NCCL watch: each task (its pid) and its exit status told to this
 * node's layoutd, best effort and bounded by timeout_ms; never fails. */
int pl_remote_task_post_fork(spank_t sp, const struct pl_opts *o);
int pl_remote_task_exit(spank_t sp, const struct pl_opts *o);
void pl_remote_exit(void);

#endif
