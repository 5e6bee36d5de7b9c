/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The drain (watch/drain.h), in up to three children one after the other,
 * each with its output on a pipe event, reaped with WNOHANG on a short
 * timer after its end of file and killed when it runs past its time:
 *
 *   count   `scontrol -o show nodes`, its lines read as they come
 *           (drainlist.h): the nodes drained with our reason cluster-wide,
 *           against drain_max_nodes (skipped when that is 0);
 *   verify  the site's health check (drain_verify NODE): exit 0 says the
 *           node is healthy, and it is not drained (skipped when unset);
 *   drain   `scontrol update nodename=N state=drain reason=...`, when
 *           drain_max_per_hour allows it then.
 *
 * A stage that fails, or runs past its time, ends the drain: precision
 * first, a node is drained only when every check said so.  No signal
 * handler is involved, and the loop never waits for a child.
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
#include "drainlist.h"
#include "layoutd.h"
#include "lead.h"		/* LD_PEER_NODE_LEN */
#include "text.h"

#define DRAIN_TIMEOUT_S 30
#define VERIFY_TIMEOUT_S 120		/* a health check takes its time */
#define DRAIN_OUT_MAX 1024
#define DRAIN_LINE_MAX 65536		/* a node's line longer is no node's */
#define DRAIN_HISTORY 1024		/* drain_max_per_hour's bound */

enum stage { ST_COUNT, ST_VERIFY, ST_DRAIN };

static const char *const stage_names[] = { "count", "verify", "drain" };

struct drain {
	struct drain *next;
	struct ld_drains *ds;
	enum stage stage;
	pid_t pid;
	int fd;
	struct event *ev_out;
	struct event *ev_wait;
	char node[LD_PEER_NODE_LEN];
	char reason[160];
	char out[DRAIN_OUT_MAX];	/* the first of the child's output */
	size_t outlen;
	char *line;			/* count: the line being read */
	size_t linelen;
	bool line_long;			/* past DRAIN_LINE_MAX: not counted */
	unsigned long ours;		/* count: nodes drained with our reason */
	bool eof, killed;
	uint64_t started_ns;
	unsigned timeout_s;
};

struct ld_drains {
	struct ld *d;
	struct drain *list;		/* drains under way */
	uint64_t t[DRAIN_HISTORY];	/* when the last drains started (mono) */
	size_t next;
	unsigned long started, ok, failed, capped, healthy, limited;
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
	free(dr->line);
	free(dr);
}

static void
drain_poll_later(struct drain *dr, long ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(dr->ev_wait, &tv);
}

/* The program of dr's stage. */
static const char *
stage_prog(const struct drain *dr)
{
	const struct ld_conf *c = &dr->ds->d->cur->conf;

	return dr->stage == ST_VERIFY ? c->drain_verify : c->scontrol;
}

static void stage_next(struct drain *dr);

/* The count: one whole line of `scontrol -o show nodes`. */
static void
count_line(struct drain *dr)
{
	if (!dr->line_long && drainlist_ours(dr->line, dr->linelen))
		dr->ours++;
	dr->linelen = 0;
	dr->line_long = false;
}

static void
count_bytes(struct drain *dr, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (b[i] == '\n') {
			count_line(dr);
			continue;
		}
		if (dr->linelen < DRAIN_LINE_MAX)
			dr->line[dr->linelen++] = b[i];
		else
			dr->line_long = true;
	}
}

/* How stage ended (st the wait status, -1 not reaped): go on, or end. */
static void
stage_done(struct drain *dr, pid_t r, int st)
{
	struct ld_drains *ds = dr->ds;
	const struct ld_conf *c = &ds->d->cur->conf;
	char out[DRAIN_OUT_MAX * 4 + 8], es[64];
	bool zero = r == dr->pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 && !dr->killed;

	dr->out[dr->outlen] = '\0';
	ascii(out, sizeof(out), dr->out);
	exit_text(r == dr->pid ? st : -1, es, sizeof(es));
	switch (dr->stage) {
	case ST_COUNT:
		if (dr->linelen)
			count_line(dr);
		if (!zero) {
			ds->failed++;
			ld_log(&ds->d->log, "drain: node %s not drained: %s -o show nodes ended with "
			       "%s, so the nodes drained already are not known (drain_max_nodes %ld): "
			       "%s", dr->node, c->scontrol, es, c->drain_max_nodes,
			       out[0] ? out : "no output");
			break;
		}
		if ((long)dr->ours >= c->drain_max_nodes) {
			ds->capped++;
			ld_log(&ds->d->log, "drain: node %s not drained (%s): %lu nodes are drained "
			       "for parallel-layout already (drain_max_nodes %ld)", dr->node,
			       dr->reason, dr->ours, c->drain_max_nodes);
			break;
		}
		stage_next(dr);
		return;
	case ST_VERIFY:
		if (zero) {
			ds->healthy++;
			ld_log(&ds->d->log, "drain: node %s not drained (%s): its health check %s "
			       "passed: %s", dr->node, dr->reason, c->drain_verify,
			       out[0] ? out : "it said nothing");
			break;
		}
		if (r != dr->pid || dr->killed || !WIFEXITED(st) || WEXITSTATUS(st) == 127) {
			ds->failed++;
			ld_log(&ds->d->log, "drain: node %s not drained: its health check %s ended "
			       "with %s, no verdict: %s", dr->node, c->drain_verify, es,
			       out[0] ? out : "no output");
			break;
		}
		ld_log(&ds->d->log, "drain: node %s: its health check %s failed (%s): %s", dr->node,
		       c->drain_verify, es, out[0] ? out : "no output");
		stage_next(dr);
		return;
	case ST_DRAIN:
		if (zero) {
			ds->ok++;
			ld_log(&ds->d->log, "drain: node %s drained (%s): %s", dr->node, dr->reason,
			       out[0] ? out : "scontrol said nothing");
		} else {
			ds->failed++;
			ld_log(&ds->d->log, "drain: node %s not drained: %s ended with %s: %s",
			       dr->node, c->scontrol, es, out[0] ? out : "no output");
		}
		break;
	}
	drain_free(ds, dr);
}

/* Reap the child when it has ended; kill it when it runs too long. */
static void
on_drain_wait(evutil_socket_t fd, short what, void *arg)
{
	struct drain *dr = arg;
	int st = 0;
	pid_t r = waitpid(dr->pid, &st, WNOHANG);

	if (r == 0) {
		if (!dr->killed && mono_ns() - dr->started_ns > (uint64_t)dr->timeout_s * NS) {
			kill(dr->pid, SIGKILL);
			dr->killed = true;
			ld_log(&dr->ds->d->log, "drain: node %s: %s (%s) ran for more than %u s: killed",
			       dr->node, stage_prog(dr), stage_names[dr->stage], dr->timeout_s);
		}
		drain_poll_later(dr, 100);
		return;
	}
	stage_done(dr, r, st);
}

static void
on_drain_out(evutil_socket_t fd, short what, void *arg)
{
	struct drain *dr = arg;
	char buf[4096];
	ssize_t n = read(dr->fd, buf, sizeof(buf));

	if (n > 0) {
		size_t room = sizeof(dr->out) - 1 - dr->outlen;
		size_t k = (size_t)n < room ? (size_t)n : room;

		memcpy(dr->out + dr->outlen, buf, k);
		dr->outlen += k;
		if (dr->stage == ST_COUNT)
			count_bytes(dr, buf, (size_t)n);
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

/* Start dr's stage as a child: 0, or -1 logged and counted (dr freed). */
static int
stage_start(struct drain *dr)
{
	struct ld_drains *ds = dr->ds;
	const struct ld_conf *c = &ds->d->cur->conf;
	char nodearg[LD_PEER_NODE_LEN + 16], reasonarg[200];
	char *count_argv[] = { (char *)c->scontrol, "-o", "show", "nodes", NULL };
	char *verify_argv[] = { (char *)c->drain_verify, dr->node, NULL };
	char *drain_argv[] = { (char *)c->scontrol, "update", nodearg, "state=drain", reasonarg,
			       NULL };
	char *const *argv = dr->stage == ST_COUNT ? count_argv :
			    dr->stage == ST_VERIFY ? verify_argv : drain_argv;
	pid_t pid;

	snprintf(nodearg, sizeof(nodearg), "nodename=%s", dr->node);
	snprintf(reasonarg, sizeof(reasonarg), "reason=%s", dr->reason);
	dr->outlen = 0;
	dr->eof = dr->killed = false;
	dr->timeout_s = dr->stage == ST_VERIFY ? VERIFY_TIMEOUT_S : DRAIN_TIMEOUT_S;
	pid = ld_child_start(stage_prog(dr), argv, dr->stage == ST_VERIFY, &dr->fd);
	if (pid < 0) {
		ds->failed++;
		ld_log(&ds->d->log, "drain: node %s not drained: cannot start %s: %s", dr->node,
		       stage_prog(dr), strerror(errno));
		drain_free(ds, dr);
		return -1;
	}
	dr->pid = pid;
	if (dr->ev_out)
		event_free(dr->ev_out);
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
	if (dr->stage == ST_DRAIN)
		ld_log(&ds->d->log, "drain: node %s: %s update nodename=%s state=drain "
		       "reason=\"%s\" (pid %ld)", dr->node, c->scontrol, dr->node, dr->reason,
		       (long)pid);
	return 0;
}

/* The stage after dr's (the first for a new one), or the drain's end when
 * drain_max_per_hour is used up by the time it would drain. */
static void
stage_next(struct drain *dr)
{
	struct ld_drains *ds = dr->ds;
	const struct ld_conf *c = &ds->d->cur->conf;
	enum stage s = dr->pid ? dr->stage + 1 : ST_COUNT;
	size_t recent;

	if (s == ST_COUNT && c->drain_max_nodes == 0)
		s = ST_VERIFY;
	if (s == ST_VERIFY && !c->drain_verify[0])
		s = ST_DRAIN;
	dr->stage = s;
	if (s == ST_DRAIN) {
		recent = ld_drain_last_hour(ds, mono_ns());
		if ((long)recent >= c->drain_max_per_hour) {
			ds->limited++;
			ld_log(&ds->d->log, "drain: node %s not drained (%s): %zu drains in the last "
			       "hour (drain_max_per_hour %ld)", dr->node, dr->reason, recent,
			       c->drain_max_per_hour);
			drain_free(ds, dr);
			return;
		}
		ds->t[ds->next] = mono_ns();
		ds->next = (ds->next + 1) % DRAIN_HISTORY;
		ds->started++;
	}
	stage_start(dr);
}

void
ld_drain_start(struct ld_drains *ds, const char *node, const char *reason)
{
	struct drain *dr = calloc(1, sizeof(*dr));

	if (!dr || !(dr->line = malloc(DRAIN_LINE_MAX))) {
		free(dr);
		ds->failed++;
		ld_log(&ds->d->log, "drain: node %s not drained: out of memory", node);
		return;
	}
	dr->ds = ds;
	dr->fd = -1;
	snprintf(dr->node, sizeof(dr->node), "%.*s", (int)sizeof(dr->node) - 1, node);
	snprintf(dr->reason, sizeof(dr->reason), "%.*s", (int)sizeof(dr->reason) - 1, reason);
	dr->ev_wait = evtimer_new(ds->d->base, on_drain_wait, dr);
	if (!dr->ev_wait) {
		ds->failed++;
		ld_log(&ds->d->log, "drain: node %s not drained: out of memory", node);
		drain_free(ds, dr);
		return;
	}
	dr->next = ds->list;
	ds->list = dr;
	stage_next(dr);
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
	st->capped = ds->capped;
	st->healthy = ds->healthy;
	st->limited = ds->limited;
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
