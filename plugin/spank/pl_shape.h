/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shape of the step srun is about to ask for, read from its own command
 * line before the allocation exists (SPANK gives no task counts then).
 */
#ifndef PL_SHAPE_H
#define PL_SHAPE_H

#include <stdbool.h>

struct pl_shape {
	long ntasks;		/* -n; 0 unknown */
	long nnodes;		/* -N (minimum); 0 unknown */
	long ntasks_per_node;	/* 0 unknown */
	bool nodelist;		/* -w given: Slurm ignores SLURM_HOSTFILE then */
	bool steer_blockers;	/* -m, -r, -x, --multi-prog ...: leave Slurm's placement alone */
	bool complete;		/* the whole command line was understood */
	bool verbose;		/* --parallel-layout-verbose (its callback may come after ours) */
};

/*
 * Fill *s from argv (argv[0] is srun) and, for what the command line leaves
 * open, from the SLURM_* variables srun itself reads (SLURM_NTASKS,
 * SLURM_NNODES, SLURM_NTASKS_PER_NODE inside an allocation).
 */
void pl_shape_parse(int argc, char **argv, struct pl_shape *s);

/* The same from /proc/self/cmdline.  -1 if it cannot be read. */
int pl_shape_self(struct pl_shape *s);

#endif
