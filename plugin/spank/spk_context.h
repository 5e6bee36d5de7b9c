/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The calls plugin.c dispatches to.  Kept apart from spk_plugin.h so that
 * the pure parts (arguments, shape, answers, requests) build without
 * spank.h for the unit tests and the fuzzers.
 */
#ifndef SPK_CONTEXT_H
#define SPK_CONTEXT_H

#include <slurm/spank.h>

#include "spk_plugin.h"

/* The hostfile srun is steered with (mkstemp's template adds the rest):
 * srun's side writes it, each task's side drops SLURM_HOSTFILE naming it. */
#define SPK_HOSTFILE_PREFIX "/tmp/parallel-layout-hostfile."

/* Local context (srun, sbatch, salloc): the option callback.  -1 refuses. */
int spk_local_option(struct spk_opts *o);
void spk_local_exit(void);

/* Remote context (slurmstepd): the placement, asked for in init_post_opt
 * (still root), and each task's environment. */
int spk_remote_prepare(spank_t sp, const struct spk_opts *o);
int spk_remote_task_init(spank_t sp, const struct spk_opts *o);
/* The NCCL watch: each task (its pid) and its exit status told to this
 * node's layoutd, best effort and bounded by timeout_ms; never fails. */
int spk_remote_task_post_fork(spank_t sp, const struct spk_opts *o);
int spk_remote_task_exit(spank_t sp, const struct spk_opts *o);
void spk_remote_exit(void);

#endif
