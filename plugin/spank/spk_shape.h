/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shape of the step srun is about to ask for, read from its own command
 * line before the allocation exists (SPANK gives no task counts then).
 */
#ifndef SPK_SHAPE_H
#define SPK_SHAPE_H

#include <stdbool.h>

#include "spk_release.h"

struct spk_shape {
	long ntasks;		/* -n; 0 unknown */
	long nnodes;		/* -N (minimum); 0 unknown */
	long ntasks_per_node;	/* 0 unknown */
	bool nodelist;		/* -w given: Slurm ignores SLURM_HOSTFILE then */
	bool steer_blockers;	/* -m, -r, -x, --multi-prog ...: leave Slurm's placement alone */
	bool complete;		/* the whole command line was understood */
	bool verbose;		/* --parallel-layout-verbose (its callback may come after ours) */
	char invalid[192];	/* "" or why a count cannot be used (srun is refused) */
};

/* The largest task or node count taken from a command line or SLURM_*. */
#define PL_SHAPE_MAX_COUNT 100000000L

/*
 * Fill *s from argv (argv[0] is srun), walked with release r's srun
 * option table (and our own SPANK options), and, for what the command line leaves
 * open, from the SLURM_* variables srun itself reads (SLURM_NTASKS,
 * SLURM_NNODES, SLURM_NTASKS_PER_NODE inside an allocation).  A count past
 * PL_SHAPE_MAX_COUNT (or a product of counts past it) fills s->invalid and
 * is not used.
 */
void spk_shape_parse(const struct spk_release *r, int argc, char **argv, struct spk_shape *s);

/* The same from /proc/self/cmdline, however long.  -1 if it cannot be
 * read. */
int spk_shape_self(const struct spk_release *r, struct spk_shape *s);

#endif
