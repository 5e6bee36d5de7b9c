/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the two halves of layoutd's peers share: watch/peer.c (munge on
 * its worker thread, the peer listener, the relays, delivering this
 * node's summaries) and watch/lead.c (the steps this node leads: their
 * ranks, the judge's rounds, the step's view).  Private to them.
 */
#ifndef PL_LAYOUTD_PEER_INT_H
#define PL_LAYOUTD_PEER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "layoutd.h"
#include "peer.h"
#include "pl_err.h"
#include "summary.h"

#define NAXES SUM_NAXES
#define NS UINT64_C(1000000000)
#define WHY_LEN 200

struct detect_rank;
struct sum_rank_info;
struct mjob;
struct sstep;

struct ld_peers {
	struct ld *d;
	ld_findings_cb cb;
	uint64_t boot_id;
	/* the worker */
	pthread_t th;
	bool th_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct mjob *todo, *todo_tail, *done, *done_tail;
	size_t ntodo;
	bool stop;
	unsigned long wake_failed;
	int wake[2];
	struct event *wake_ev;
	/* the listener */
	struct evhttp *http;
	struct ld_conns *conns;
	char listen_host[LD_PATH];
	int listen_port;		/* -1 none */
	/* the state */
	struct sstep *sends;
	struct ld_lead *leads;
	long nleads;
	uint64_t next_link_id;
	unsigned long tick;
	struct detect_rank *scratch;
	struct sum_rank_info *scratch_info;
	size_t cap_scratch;
	struct sum_space dec;		/* what ld_lead_take decodes into */
	struct ld_peer_stats st;
	struct ld_ratelog rl[LD_NREFUSE];
	struct ld_ratelog rl_send;
};

static inline uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static inline double
age_s(uint64_t now, uint64_t t)
{
	return t && now > t ? (double)(now - t) / 1e9 : 0.0;
}

/* peer_lost_s, or auto: three watch intervals, at least 5 s. */
static inline uint64_t
lost_ns(const struct ld_conf *c)
{
	uint64_t ms = (uint64_t)c->watch_interval_ms * 3;

	if (c->peer_lost_s > 0)
		return (uint64_t)c->peer_lost_s * NS;
	return (ms < 5000 ? 5000 : ms) * UINT64_C(1000000);
}

/* Fill err and return the HTTP status. */
#define fail(err, status, ...) pl_err_status(err, status, __VA_ARGS__)

/* src into dst of n bytes, cut to fit (no printf on the per-summary path). */
static void
copy_str(char *dst, size_t n, const char *src)
{
	size_t len = strnlen(src, n - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* ---- watch/lead.c ---- */

/* The step job.step led here, or NULL. */
struct ld_lead *ld_lead_find(const struct ld_peers *p, uint64_t job, uint64_t step);

/*
 * One summary of len bytes, come at recv_ns: over the network (own false:
 * the sender's node must be another) or this node's own, handed in
 * (target: this node is its own target, so the step is led here).
 * Returns the HTTP status (200, 409 stale or not this step, 422 not a
 * summary, 5xx) with err and *r the refusal reason.
 */
int ld_lead_take(struct ld_peers *p, const void *data, size_t len, uint64_t recv_ns, bool own,
		 bool target, enum ld_peer_refusal *r, pl_err_t *err);

/* Judge every step led here; let go of those no longer led here. */
void ld_lead_all(struct ld_peers *p, uint64_t now);

/* Every step led here let go of, without a last round. */
void ld_lead_free_all(struct ld_peers *p);

/* The steps led here for GET /v1/watch's peer part. */
json_t *ld_lead_json(const struct ld_peers *p);

/* Nodes lost now over the steps led here. */
long ld_lead_nodes_lost(const struct ld_peers *p);

/* ---- watch/peer.c ---- */

/* Where this node's summaries of job.step go now (the node's name, its
 * place in the order in *k, whether it is this node's relay in *relay), or
 * NULL before the first. */
const char *ld_peer_target(const struct ld_peers *p, uint64_t job, uint64_t step, size_t *k,
			   bool *relay);

/* The step runs here but is led elsewhere: 421 with where this node
 * sends its summaries, as *out (or 500 with err). */
int ld_peer_elsewhere(const struct ld_peers *p, uint64_t job, uint64_t step, const char *self,
		      const char *leader, json_t **out, pl_err_t *err);

#endif
