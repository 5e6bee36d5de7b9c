/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The drain (watch/drain.h): `scontrol update nodename=N state=drain
 * reason=...` in a child whose output comes back through a pipe event;
 * after its end of file the child is reaped with WNOHANG on a short timer,
 * and killed when it runs past DRAIN_TIMEOUT_S.  No signal handler is
 * involved, and the loop never waits for the child.
 */
#define _GNU_SOURCE		/* WCOREDUMP (watch/text.h) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "child.h"
#include "clock.h"
#include "drain.h"
#include "layoutd.h"
#include "lead.h"		/* LD_PEER_NODE_LEN */
#include "text.h"

#define DRAIN_TIMEOUT_S 30
#define DRAIN_OUT_MAX 1024
#define DRAIN_HISTORY 1024		/* drain_max_per_hour's bound */

struct drain {
	struct drain *next;
	struct ld_drains *ds;
	pid_t pid;
	int fd;
	struct event *ev_out;
	struct event *ev_wait;
	char node[LD_PEER_NODE_LEN];
	char reason[160];
	char out[DRAIN_OUT_MAX];
	size_t outlen;
	bool eof, killed;
	uint64_t started_ns;
};

struct ld_drains {
	struct ld *d;
	struct drain *list;		/* children running */
	uint64_t t[DRAIN_HISTORY];	/* when the last drains started (mono) */
	size_t next;
	unsigned long started, ok, failed;
};

static void
drain_free(struct ld_drains *ds, struct drain *dr)
{
	struct drain **p;

	for (p = &ds->list; *p; p = &(*p)->next)
		if (*p == dr) {
			*p = dr->next;
			break;
		}
	if (dr->ev_out)
		event_free(dr->ev_out);
	if (dr->ev_wait)
		event_free(dr->ev_wait);
	if (dr->fd >= 0)
		close(dr->fd);
	free(dr);
}

static void
drain_poll_later(struct drain *dr, long ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(dr->ev_wait, &tv);
}

/* Reap the child when it has ended; kill it when it runs too long. */
static void
on_drain_wait(evutil_socket_t fd, short what, void *arg)
{
	struct drain *dr = arg;
	struct ld_drains *ds = dr->ds;
	char out[DRAIN_OUT_MAX * 4 + 8];
	int st = 0;
	pid_t r = waitpid(dr->pid, &st, WNOHANG);

	if (r == 0) {
		if (!dr->killed &&
		    mono_ns() - dr->started_ns > (uint64_t)DRAIN_TIMEOUT_S * NS) {
			kill(dr->pid, SIGKILL);
			dr->killed = true;
			ld_log(&ds->d->log, "drain: node %s: %s ran for more than %d s: killed",
			       dr->node, ds->d->cur->conf.scontrol, DRAIN_TIMEOUT_S);
		}
		drain_poll_later(dr, 100);
		return;
	}
	dr->out[dr->outlen] = '\0';
	ascii(out, sizeof(out), dr->out);
	if (r == dr->pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 && !dr->killed) {
		ds->ok++;
		ld_log(&ds->d->log, "drain: node %s drained (%s): %s", dr->node, dr->reason,
		       out[0] ? out : "scontrol said nothing");
	} else {
		char es[64];

		exit_text(r == dr->pid ? st : -1, es, sizeof(es));
		ds->failed++;
		ld_log(&ds->d->log, "drain: node %s not drained: %s ended with %s: %s", dr->node,
		       ds->d->cur->conf.scontrol, es, out[0] ? out : "no output");
	}
	drain_free(ds, dr);
}

static void
on_drain_out(evutil_socket_t fd, short what, void *arg)
{
	struct drain *dr = arg;
	char buf[512];
	ssize_t n = read(dr->fd, buf, sizeof(buf));

	if (n > 0) {
		size_t room = sizeof(dr->out) - 1 - dr->outlen;
		size_t k = (size_t)n < room ? (size_t)n : room;

		memcpy(dr->out + dr->outlen, buf, k);
		dr->outlen += k;
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	event_del(dr->ev_out);
	close(dr->fd);
	dr->fd = -1;
	dr->eof = true;
	drain_poll_later(dr, 0);
}

void
ld_drain_start(struct ld_drains *ds, const char *node, const char *reason)
{
	const struct ld_conf *c = &ds->d->cur->conf;
	char nodearg[LD_PEER_NODE_LEN + 16], reasonarg[200];
	char *argv[] = { (char *)c->scontrol, "update", nodearg, "state=drain", reasonarg, NULL };
	struct drain *dr = calloc(1, sizeof(*dr));
	pid_t pid;

	if (!dr) {
		ds->failed++;
		ld_log(&ds->d->log, "drain: node %s not drained: out of memory", node);
		return;
	}
	dr->ds = ds;
	dr->fd = -1;
	snprintf(dr->node, sizeof(dr->node), "%.*s", (int)sizeof(dr->node) - 1, node);
	snprintf(dr->reason, sizeof(dr->reason), "%.*s", (int)sizeof(dr->reason) - 1, reason);
	snprintf(nodearg, sizeof(nodearg), "nodename=%s", dr->node);
	snprintf(reasonarg, sizeof(reasonarg), "reason=%s", dr->reason);
	dr->ev_wait = evtimer_new(ds->d->base, on_drain_wait, dr);
	if (!dr->ev_wait)
		goto fail;
	pid = ld_child_start(c->scontrol, argv, false, &dr->fd);
	if (pid < 0)
		goto fail;
	dr->pid = pid;
	dr->ev_out = event_new(ds->d->base, dr->fd, EV_READ | EV_PERSIST, on_drain_out, dr);
	if (!dr->ev_out) {
		/* reaped on the timer like any other; its output is lost */
		close(dr->fd);
		dr->fd = -1;
		dr->eof = true;
	}
	dr->started_ns = mono_ns();
	if (dr->ev_out)
		event_add(dr->ev_out, NULL);
	else
		drain_poll_later(dr, 0);
	dr->next = ds->list;
	ds->list = dr;
	ds->t[ds->next] = dr->started_ns;
	ds->next = (ds->next + 1) % DRAIN_HISTORY;
	ds->started++;
	ld_log(&ds->d->log, "drain: node %s: %s update nodename=%s state=drain reason=\"%s\" (pid %ld)",
	       node, c->scontrol, node, reason, (long)pid);
	return;
fail:
	ds->failed++;
	ld_log(&ds->d->log, "drain: node %s not drained: cannot start %s: %s", node, c->scontrol,
	       strerror(errno));
	drain_free(ds, dr);
}

/* Drains started within the last hour. */
size_t
ld_drain_last_hour(const struct ld_drains *ds, uint64_t now)
{
	size_t i, n = 0;

	for (i = 0; i < DRAIN_HISTORY; i++)
		if (ds->t[i] && now - ds->t[i] < 3600 * NS)
			n++;
	return n;
}

void
ld_drain_stats(const struct ld_drains *ds, struct ld_drain_stats *st)
{
	st->started = ds->started;
	st->ok = ds->ok;
	st->failed = ds->failed;
}

struct ld_drains *
ld_drain_new(struct ld *d)
{
	struct ld_drains *ds = calloc(1, sizeof(*ds));

	if (ds)
		ds->d = d;
	return ds;
}

void
ld_drain_free(struct ld_drains *ds)
{
	if (!ds)
		return;
	/* A drain under way goes on without us: scontrol finishes its update. */
	while (ds->list)
		drain_free(ds, ds->list);
	free(ds);
}
