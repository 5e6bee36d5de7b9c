/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The placements layoutd answered for Slurm steps, for /v1/steps: a fixed
 * ring of the last LD_STEPS, newest first.  Only what a trusted caller
 * (root, the Slurm user) asked is recorded; each step keeps its owner's
 * uid so that a user is shown only their own jobs.
 */
#ifndef PL_LAYOUTD_STEPS_H
#define PL_LAYOUTD_STEPS_H

#include <stdbool.h>
#include <time.h>

#include <jansson.h>

#define LD_STEPS 256
#define LD_STRATEGY_LEN 96

/* One answered placement. */
struct ld_step {
	long job_id, step_id;	/* -1 unknown */
	long uid;		/* the job owner; -1 unknown (then only trusted callers see it) */
	char *spec;		/* as requested; owned by the ring */
	long world, nnodes;
	char strategy[LD_STRATEGY_LEN];	/* "" unless placed */
	time_t time;
	int status;
	double ms;
};

struct ld_steps {
	struct ld_step ring[LD_STEPS];	/* ring[(head - 1) % LD_STEPS] newest */
	long n, head;
	unsigned long recorded;		/* every step ever recorded */
};

/* An empty ring; free with ld_steps_free(). */
struct ld_steps *ld_steps_new(void);
void ld_steps_free(struct ld_steps *s);

/* Record *st (its spec is copied; NULL = "").  The oldest step goes when
 * the ring is full.  Returns 0, or -1 when out of memory (nothing kept). */
int ld_steps_add(struct ld_steps *s, const struct ld_step *st);

/* The steps as a JSON array, newest first: every one when all, else only
 * those whose owner is uid.  NULL when out of memory. */
json_t *ld_steps_json(const struct ld_steps *s, bool all, long uid);

#endif
