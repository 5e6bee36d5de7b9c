/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Draining a node in Slurm (drain = yes): the alerts (watch/alert.c)
 * decide when; this counts the nodes drained for parallel-layout already
 * (drain_max_nodes), asks the site's health check (drain_verify), and runs
 * scontrol's update, each in a child the loop never waits for; it logs how
 * each ended and counts the drains started within the last hour for
 * drain_max_per_hour.
 */
#ifndef PL_LAYOUTD_DRAIN_H
#define PL_LAYOUTD_DRAIN_H

#include <stddef.h>
#include <stdint.h>

struct ld;
struct ld_drains;

/* The drains of d (scontrol from d->cur->conf, the children's events on
 * d->base).  NULL when out of memory.  ld_drain_free() leaves a child
 * still running to finish its update. */
struct ld_drains *ld_drain_new(struct ld *d);
void ld_drain_free(struct ld_drains *ds);

/* Drain node for reason (both as given to scontrol): start its first
 * stage, or log and count why it could not start. */
void ld_drain_start(struct ld_drains *ds, const char *node, const char *reason);

/* Drains started within the hour before now (CLOCK_MONOTONIC ns). */
size_t ld_drain_last_hour(const struct ld_drains *ds, uint64_t now);

struct ld_drain_stats {
	unsigned long started;		/* scontrol update started */
	unsigned long ok;		/* and exited 0 */
	unsigned long failed;		/* a stage failed, or could not start */
	unsigned long capped;		/* drain_max_nodes drained already */
	unsigned long healthy;		/* the health check passed */
	unsigned long limited;		/* drain_max_per_hour used up by then */
};

void ld_drain_stats(const struct ld_drains *ds, struct ld_drain_stats *st);

#endif
