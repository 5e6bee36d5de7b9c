/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `layoutctl watch JOBID[.STEP]`: the whole step from its leader
 * (ctl_watch.c); the node-local view stays in ctl_daemon.c.
 */
#ifndef PL_CTL_WATCH_H
#define PL_CTL_WATCH_H

#include <stdbool.h>

#include "pl_err.h"

struct ctl_watch_args {
	long job, step;			/* step -1: the job's only step */
	const char *socket;		/* this host's layoutd; NULL: none */
	const char *leader;		/* --leader HOST:PORT */
	const char *nodes;		/* --nodes HOSTLIST */
	const char *topology;		/* --topology MAP */
	const char *munge_socket;	/* --munge-socket PATH */
	const char *scontrol;		/* --scontrol PATH; NULL: scontrol */
	long timeout_ms, interval_ms;
	bool once, json, all_ranks;
};

/* Show the step (live unless once); the exit status: 0 shown, 1 no view,
 * 2 usage. */
int ctl_watch_step(struct ctl_watch_args *a);

/*
 * `scontrol -o show step` output for job: the node list of step *step
 * (or, *step -1, of the job's only numbered step, *step then set).  Caller
 * frees *nodelist.  0, or -1 with err.
 */
int ctl_watch_parse_steps(const char *text, long job, long *step, char **nodelist,
			  pl_err_t *err);

#endif
