/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * munge on a worker thread (watch/munge_worker.h).  munge_encode() and
 * munge_decode() talk to the local munged over its unix socket and take
 * tens of microseconds when it answers; but libmunge has no timeout of its
 * own and retries with sleeps
 * when munged is busy or gone (a refused connect is retried for about two
 * seconds, a failed exchange up to five times), all inside the call.  On
 * the event loop that would stall placements and every peer for seconds
 * at a time, so every munge call goes to one worker thread: the loop
 * queues a job (a bounded queue: LD_MUNGE_QUEUE_MAX jobs, a job past it is
 * refused) and the worker's answers come back through a pipe the
 * loop watches.
 */
#define _GNU_SOURCE		/* pipe2 */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <event2/event.h>
#include <munge.h>

#include "munge_worker.h"

#define LD_MUNGE_NICE 10	/* the worker's nice value over the loop's */

struct ld_munge {
	ld_munge_done_cb done_cb;	/* on the loop, for each answer */
	void *arg;
	pthread_t th;
	bool th_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct ld_munge_job *todo, *todo_tail, *done, *done_tail;
	size_t ntodo;
	bool stop;
	unsigned long wake_failed;
	int wake[2];
	struct event *wake_ev;
};

static void
munge_run(struct ld_munge_job *j)
{
	munge_ctx_t ctx = munge_ctx_create();
	munge_err_t e;
	const char *why;
	void *buf = NULL;
	int len = 0;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;

	if (!ctx) {
		j->merr = EMUNGE_NO_MEMORY;
		snprintf(j->why, sizeof(j->why), "out of memory");
		return;
	}
	e = EMUNGE_SUCCESS;
	if (j->socket[0])
		e = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, j->socket);
	if (e == EMUNGE_SUCCESS && j->kind == LD_MUNGE_ENCODE) {
		char *cred = NULL;

		e = munge_ctx_set(ctx, MUNGE_OPT_TTL, j->ttl);
		if (e == EMUNGE_SUCCESS)
			e = munge_encode(&cred, ctx, j->in, (int)strlen(j->in));
		j->out = cred;
	} else if (e == EMUNGE_SUCCESS) {
		e = munge_decode(j->in, ctx, &buf, &len, &uid, &gid);
		if (buf && len >= 0 && (j->out = malloc((size_t)len + 1)) != NULL) {
			memcpy(j->out, buf, (size_t)len);
			j->out[len] = '\0';
			j->outlen = (size_t)len;
		}
		free(buf);
		j->uid = (long)uid;
		if (e == EMUNGE_SUCCESS) {
			struct in_addr a;

			if (munge_ctx_get(ctx, MUNGE_OPT_ADDR4, &a) == EMUNGE_SUCCESS)
				inet_ntop(AF_INET, &a, j->origin, sizeof(j->origin));
		}
	}
	j->merr = (int)e;
	if (e != EMUNGE_SUCCESS) {
		why = munge_ctx_strerror(ctx);
		snprintf(j->why, sizeof(j->why), "%s", why ? why : munge_strerror(e));
	}
	munge_ctx_destroy(ctx);
}

static void *
worker_main(void *arg)
{
	struct ld_munge *p = arg;
	struct ld_munge_job *j;

	/* Below the loop: the worker copies and hashes bodies of up to 16 MiB
	 * (the peers' prep), which must not take the CPU from the loop that
	 * answers srun.  On Linux a thread's nice value is its own; where it
	 * cannot be set the worker runs as before, at the loop's. */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), LD_MUNGE_NICE);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && !p->todo)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop)
			break;
		j = p->todo;
		p->todo = j->next;
		if (!p->todo)
			p->todo_tail = NULL;
		p->ntodo--;
		pthread_mutex_unlock(&p->mu);
		if (j->prep)
			j->prep(j);
		munge_run(j);
		pthread_mutex_lock(&p->mu);
		j->next = NULL;
		if (p->done_tail) {
			p->done_tail->next = j;	/* the loop is woken already */
		} else {
			p->done = j;
			/* A full pipe wakes the loop already; nothing else fails. */
			if (write(p->wake[1], "", 1) < 0)
				p->wake_failed++;
		}
		p->done_tail = j;
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int
ld_munge_submit(struct ld_munge *p, struct ld_munge_job *j)
{
	int rv = -1;

	pthread_mutex_lock(&p->mu);
	if (p->th_started && !p->stop && p->ntodo < LD_MUNGE_QUEUE_MAX) {
		j->next = NULL;
		if (p->todo_tail)
			p->todo_tail->next = j;
		else
			p->todo = j;
		p->todo_tail = j;
		/* The worker waits only when the queue was empty. */
		if (p->ntodo++ == 0)
			pthread_cond_signal(&p->cv);
		rv = 0;
	}
	pthread_mutex_unlock(&p->mu);
	return rv;
}

/* The worker's answers, on the loop. */
static void
on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct ld_munge *p = arg;
	struct ld_munge_job *j, *next;
	char drain[256];

	(void)what;
	while (read(fd, drain, sizeof(drain)) > 0)
		;
	pthread_mutex_lock(&p->mu);
	j = p->done;
	p->done = p->done_tail = NULL;
	pthread_mutex_unlock(&p->mu);
	for (; j; j = next) {
		next = j->next;
		p->done_cb(p->arg, j);
	}
}

struct ld_munge *
ld_munge_new(struct event_base *base, ld_munge_done_cb cb, void *arg)
{
	struct ld_munge *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->done_cb = cb;
	p->arg = arg;
	p->wake[0] = p->wake[1] = -1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pipe2(p->wake, O_NONBLOCK | O_CLOEXEC) < 0)
		goto fail;
	p->wake_ev = event_new(base, p->wake[0], EV_READ | EV_PERSIST, on_wake, p);
	if (!p->wake_ev || event_add(p->wake_ev, NULL) < 0)
		goto fail;
	if (pthread_create(&p->th, NULL, worker_main, p) != 0)
		goto fail;
	p->th_started = true;
	return p;
fail:
	ld_munge_free(p);
	return NULL;
}

struct ld_munge_job *
ld_munge_stop(struct ld_munge *p)
{
	struct ld_munge_job *left;

	if (p->th_started) {
		pthread_mutex_lock(&p->mu);
		p->stop = true;
		pthread_cond_signal(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->th, NULL);
		p->th_started = false;
	}
	/* the queue first, then the answers: the order they came in */
	left = p->todo ? p->todo : p->done;
	if (p->todo_tail)
		p->todo_tail->next = p->done;
	p->todo = p->todo_tail = p->done = p->done_tail = NULL;
	p->ntodo = 0;
	return left;
}

void
ld_munge_free(struct ld_munge *p)
{
	if (!p)
		return;
	ld_munge_stop(p);
	if (p->wake_ev)
		event_free(p->wake_ev);
	if (p->wake[0] >= 0)
		close(p->wake[0]);
	if (p->wake[1] >= 0)
		close(p->wake[1]);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
