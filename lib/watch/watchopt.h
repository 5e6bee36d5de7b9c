/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A user's own watch settings for one step, given at submit time:
 *   srun --parallel-layout-watch=hang=10m,busy=2h,slow=off ...
 * yes and no turn the watch on and off; otherwise a comma-separated list
 * of hang=DURATION (the hang threshold), busy=DURATION (how long a rank
 * may be busy outside NCCL before it is a hang) and slow=on|off (the
 * slow-rank rule).  A duration is a whole number of seconds, or one with
 * s, m, h or d after it.  The SPANK plugin parses it before launch (a bad
 * one is refused with why) and carries what it gives in the step's
 * registration (register.h); layoutd holds it to the bounds its admin set
 * (layoutd.conf's user_hang_min_s, user_hang_max_s, user_busy_max_s,
 * user_slow_off) and the step's leader judges the step with it.
 */
#ifndef PL_WATCH_WATCHOPT_H
#define PL_WATCH_WATCHOPT_H

#include <stdbool.h>
#include <stdint.h>

#include "pl_err.h"

/* The most a user may ask for, whatever the site allows. */
#define WATCHOPT_MAX_S	(UINT32_C(30) * 86400)

struct watchopt {
	bool off;		/* "no": no watch for the step */
	uint32_t hang_s;	/* 0: the site's */
	uint32_t busy_s;	/* 0: the site's */
	int slow;		/* -1 the site's, 0 off, 1 on */
};

/* The site's defaults everywhere (nothing asked). */
void watchopt_clear(struct watchopt *o);

/* Whether o asks for anything beyond on or off. */
bool watchopt_any(const struct watchopt *o);

/*
 * Parse s into o (cleared first).  0, or -1 with err naming the part that
 * is wrong and what is accepted.
 */
int watchopt_parse(const char *s, struct watchopt *o, pl_err_t *err);

#endif
