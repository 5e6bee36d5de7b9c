/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What slurmstepd tells its node's layoutd about the watch, sent by a
 * thread of its own in the order it was said: the node's task
 * registrations (one batch, spk_reg.h) and each task's exit.  Neither a
 * task's start nor its exit waits for layoutd: slurmstepd holds every
 * task's exec until task_post_fork returned for all of them, and reports a
 * task's exit to srun after task_exit, so a round trip there (one per task,
 * as it was) put layoutd's answer on the step's launch and end.
 *
 * The thread starts with the first message; spk_send_stop (slurm_spank_exit)
 * waits for what is queued, all of it within timeout_ms from then (each
 * request bounded by what is left; what does not fit is dropped and
 * counted), so the plugin is never unloaded under the thread and exit is
 * never held past timeout_ms.  A request that gets no answer stops the
 * rest: layoutd is down.  No spank.h here (tested in plugin_test).
 */
#ifndef SPK_SEND_H
#define SPK_SEND_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "client.h"
#include "pl_err.h"
#include "spk_reg.h"

struct spk_msg;

struct spk_send {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t th;
	bool started;		/* th runs (or ran) */
	bool inline_only;	/* no thread could start: sent by the caller */
	bool stopping;
	long stop_at_ms;	/* the monotonic ms stop was asked at */
	char sock[4096];
	long timeout_ms;
	struct spk_msg *head, *tail;
	/* what came of it, for the log (read after spk_send_stop) */
	unsigned sent, refused, dropped;
	bool down;		/* a request got no answer */
	bool alone;		/* the batch went task by task (an older layoutd) */
	long last_status;	/* the last non-200 answer's status, 0 none */
	char last[256];		/* and its body, or why no answer came */
};

/* Ready to send to socket sock, each request bounded by timeout_ms. */
void spk_send_init(struct spk_send *s, const char *sock, long timeout_ms);

/* Queue the registrations r (taken: freed by the sender) for POST
 * /v1/watch/tasks.  0, or -1 (out of memory or the thread cannot start:
 * then sent here, now, and r freed). */
int spk_send_reg(struct spk_send *s, struct spk_reg *r);

/* Queue body (copied) for POST path.  As spk_send_reg. */
int spk_send_post(struct spk_send *s, const char *path, const char *body);

/* Whether a request got no answer (layoutd down): the caller stops
 * queueing. */
bool spk_send_down(struct spk_send *s);

/* Send what is queued within timeout_ms, drop the rest, stop the thread
 * and free everything.  Safe when nothing was ever queued. */
void spk_send_stop(struct spk_send *s);

#endif
