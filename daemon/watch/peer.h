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

#include "pl_err.h"

struct ld;
struct ld_peers;
struct ld_lead;			/* a step this node leads (private) */
struct judge_finding;
struct judge_rank;
struct judge_step;

#define LD_PEER_NODE_LEN 64	/* a node name and its NUL (SUM_NODE_LEN) */

/*
 * A step as its leader sees it, for the findings callback.  Everything is
 * owned by the peer module and valid only during the call.
 */
struct ld_step_view {
	uint64_t job_id;
	uint64_t step_id;
	uint32_t uid;			/* the job's user */
	uint32_t world;
	uint32_t size[5];		/* tp, cp, ep, dp, pp */
	const char *self;		/* this node's name */
	const char *leader;		/* nodes[0] when the node order is known, else NULL */
	bool acting;			/* this node leads because nodes[0] cannot be reached */
	bool final;			/* the last call: this node no longer leads the step
					 * (it ended, or the leader is back); n is 0 */
	bool handover;			/* final, and the step runs on led elsewhere (this
					 * node acted for its leader, which answers again):
					 * its alerts go on there, not resolved here */
	const struct judge_step *step;	/* identity, layout, nodes with liveness (judge.h) */
	const struct judge_rank *ranks;	/* every rank known, in no particular order */
	size_t nranks;
	const struct ld_lead *owner;	/* private: for the lookups below */
};

/* The rank `rank` of the view (its node, GPU, NIC, coordinates, state), or
 * NULL when no summary named it. */
const struct judge_rank *ld_step_view_rank(const struct ld_step_view *v, int64_t rank);

/* The name of node index i of the view (judge_rank.node, judge_finding.node),
 * or "" when i is not one. */
const char *ld_step_view_node(const struct ld_step_view *v, int32_t i);

/*
 * Called on the leader (and acting leader) after every judge round of every
 * step it leads, with all the round's findings (n may be 0: nothing wrong),
 * at now_ns (CLOCK_MONOTONIC, the clock of every time in v and f); and once
 * more with v->final set and n 0 when it stops leading the step.
 */
typedef void (*ld_findings_cb)(struct ld *d, const struct ld_step_view *v,
			       const struct judge_finding *f, size_t n, uint64_t now_ns);

/* Register the one findings callback (NULL: none). */
void ld_peer_set_findings_cb(struct ld_peers *p, ld_findings_cb cb);

/* Why a summary (or a request on the peer listener) was refused. */
enum ld_peer_refusal {
	LD_REFUSE_REQUEST,	/* not POST /v1/peer/summary, or an empty body */
	LD_REFUSE_UNAUTH,	/* no X-PL-Munge credential */
	LD_REFUSE_REPLAYED,	/* munge: the credential was used before */
	LD_REFUSE_EXPIRED,	/* munge: expired, or from the future */
	LD_REFUSE_CRED,		/* munge: any other decode error */
	LD_REFUSE_UID,		/* the credential's uid is neither root nor slurm_user */
	LD_REFUSE_CHECKSUM,	/* its payload is not the SHA-256 of the body */
	LD_REFUSE_SUMMARY,	/* the body is not a valid summary (sum_decode) */
	LD_REFUSE_STEP,		/* not a step this node may lead, or not its shape */
	LD_REFUSE_STALE,	/* older than the one held from the same daemon start */
	LD_REFUSE_BUSY,		/* the credential queue is full */
	LD_NREFUSE
};

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

/* The "peer" part of GET /v1/watch: settings, counters, links, steps led.
 * NULL when out of memory. */
json_t *ld_peer_json(const struct ld_peers *p);

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
