/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sweep of watch_dir: one pass removes the step directories JOB.STEP
 * left behind (see ld_watch_sweep in watch/view.h for the rule).  It asks
 * the node's view what a JOB.STEP is through the callback it is made with.
 */
#ifndef PL_LAYOUTD_SWEEP_H
#define PL_LAYOUTD_SWEEP_H

#include <stdint.h>

struct ld;
struct ld_sweep;

/* A step directory's name as the node's view knows it. */
enum ld_sweep_step {
	LD_SWEEP_UNKNOWN,	/* not a step registered here */
	LD_SWEEP_RUNNING,	/* registered, a task of it runs */
	LD_SWEEP_ENDED,		/* registered and ended: *ended_s since its last task exited */
};

typedef enum ld_sweep_step (*ld_sweep_step_cb)(void *arg, long job, long step, uint64_t now,
					       double *ended_s);

/* The sweep of d's watch_dir (read from d->cur->conf at each pass).  NULL
 * when out of memory. */
struct ld_sweep *ld_sweep_new(struct ld *d, ld_sweep_step_cb step, void *arg);
void ld_sweep_free(struct ld_sweep *w);

/* One pass now, bounded; the next goes on where it stopped. */
void ld_sweep_run(struct ld_sweep *w);

struct ld_sweep_stats {
	unsigned long sweeps;		/* passes */
	unsigned long leftovers;	/* step directories (or names) removed */
};

void ld_sweep_stats(const struct ld_sweep *w, struct ld_sweep_stats *st);

#endif
