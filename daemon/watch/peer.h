/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd's peers: the job-wide view of a watched step.
 *
 * Every watch interval each node's layoutd builds its NODE SUMMARY of each
 * running watched step it knows the node list of (lib/watch/summary.h: the
 * node's ranks as detect_rank plus GPU, NIC and coordinates) and delivers
 * it to the step's LEADER, the layoutd of nodes[0] (the node hosting rank
 * 0): POST /v1/peer/summary on the leader's peer listener, with a munge
 * credential whose payload is the SHA-256 of the body.  The leader keeps
 * the last summary of every node, marks a node lost when its summaries
 * stop, runs the judge (lib/watch/judge.h) over the whole step every
 * interval and hands the findings to whoever registered for them (the
 * alerts).  A follower that cannot reach the leader sends to the next node
 * of the step's order it can reach, which then acts as leader and reports
 * the leader lost.  GET /v1/watch/step?job=J&step=S shows the whole step.
 *
 * Everything runs on the event loop but the munge calls, which block on
 * the local munged and go to one worker thread (watch/peer.c says why).
 */
#ifndef PL_LAYOUTD_PEER_H
#define PL_LAYOUTD_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lead.h"
#include "pl_err.h"

struct ld;
struct ld_peers;

/* Register the one findings callback (NULL: none). */
void ld_peer_set_findings_cb(struct ld_peers *p, ld_findings_cb cb);

/* "request", "unauthenticated", "replayed", "expired", "credential", "uid",
 * "checksum", "summary", "step", "stale", "busy". */
const char *ld_peer_refusal_name(enum ld_peer_refusal r);

struct ld_peer_stats {
	unsigned long received;		/* summaries that came over the network */
	unsigned long accepted;		/* of them */
	unsigned long refused[LD_NREFUSE];
	unsigned long handed_in;	/* own summaries taken in directly */
	unsigned long sent;		/* summaries delivered to a leader */
	unsigned long send_failures;	/* deliveries that failed */
	unsigned long unsent;		/* summaries not sent, or their answer not
					 * checked, for this node's own munged
					 * (not the target's fault: no failover) */
	int munge_ok;			/* 1: this node's munged made or checked
					 * the last credential; 0: it failed */
	unsigned long answers_refused;	/* 200s to them without a good credential
					 * of root or slurm_user (peerwire.h) */
	unsigned long failovers;	/* times a step's target moved past its leader */
	unsigned long relayed;		/* members' summaries taken here to relay */
	unsigned long batches_in;	/* batches that came from relays */
	unsigned long batch_items;	/* summaries in them */
	long led_steps;			/* steps led now (acting ones included) */
	long nodes_lost;		/* nodes lost now, over those steps */
};

void ld_peer_stats(const struct ld_peers *p, struct ld_peer_stats *st);

/*
 * The peers of d: its settings from d->cur->conf, its timers and curl
 * handles on d->base, its munge worker thread.  NULL when out of memory or
 * the thread cannot start.  Free with ld_peer_free() before the base (it
 * answers what is pending, stops the worker and closes its listener).
 */
struct ld_peers *ld_peer_new(struct ld *d);
void ld_peer_free(struct ld_peers *p);

/*
 * The peer listener as peer_listen says ("no": none).  It serves POST
 * /v1/peer/summary and GET /v1/watch/step only.  0, or -1 with err.
 */
int ld_peer_listen(struct ld_peers *p, pl_err_t *err);

/* After each watch sample: send this node's summaries, judge the steps led
 * here, let go of the steps no longer led. */
void ld_peer_tick(struct ld_peers *p);

/* The "peer" part of GET /v1/watch: settings, counters, and the links and
 * steps led of every step when all, else of uid's.  NULL when out of
 * memory. */
json_t *ld_peer_json(const struct ld_peers *p, bool all, long uid);

/*
 * GET /v1/watch/step for job.step: the whole step (every node's state,
 * the findings, and the ranks from rank `from` on, at most count of them,
 * each with node, GPU, NIC, coordinates and communicators) when this node
 * leads it.  all: the caller may see every job; else only uid's.  Returns
 * 200 with *out (caller frees); 421 when the step runs here but another
 * node leads it, *out then {"error", "leader": the node this one sends its
 * summaries to, "acting": whether that is not the step's first node}; or
 * 404/500 with err and *out NULL.
 */
int ld_peer_step_json(const struct ld_peers *p, uint64_t job, uint64_t step, uint64_t from,
		      size_t count, bool all, long uid, json_t **out, pl_err_t *err);

struct evhttp_request;

/* GET /v1/watch/step?job=J&step=S[&from=RANK&count=N] on layoutd's own
 * listeners, whose caller is known (all: root or slurm_user; else uid):
 * the one reply. */
void ld_peer_step_reply(const struct ld_peers *p, struct evhttp_request *req, bool all, long uid);

#endif
