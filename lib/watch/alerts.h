/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The alerts of the judge's findings (judge.h), as a pure state machine:
 * no clock, no I/O, no allocation after alerts_new().  The caller (the
 * step's acting leader) hands in each round's findings of one step with
 * its `now`; what comes out is what to tell Alertmanager and the webhooks,
 * through a callback:
 *
 *   ALERT_FIRE      a finding whose fingerprint no open alert has: a new
 *                   alert.
 *   ALERT_RESEND    an open alert whose finding is still there and that
 *                   was last sent resend_ns ago or more (Alertmanager
 *                   forgets an alert whose endsAt passed: clients re-send
 *                   while it fires).
 *   ALERT_RESOLVE   an open alert of the step whose finding is gone, or
 *                   every open alert of a step that ended: sent once,
 *                   then kept among the last ALERTS_RECENT resolved.
 *   ALERT_OVERFLOW  a new finding while max_open alerts are open: not
 *                   kept, counted (the caller logs it).
 *   ALERT_SUPPRESSED a new finding of a step at its own limits
 *                   (alerts_set_step_limits: open alerts, fires an hour):
 *                   not kept, counted; emitted for the step's first such
 *                   finding only, so that it is said once.  One job's
 *                   findings, true or forged in its own record, cannot
 *                   fill the table or the queue other jobs' alerts need.
 *   ALERT_HANDOVER  an open alert of a step this node no longer judges
 *                   while the step runs on (an acting leader whose leader
 *                   answers again): out of the table like a resolved one,
 *                   but nothing is to be sent: the leader judges it anew
 *                   and sends it with the same labels and start, and the
 *                   endsAt last sent (3 re-send periods ahead) covers the
 *                   time between, so Alertmanager sees one alert.
 *
 * The fingerprint is what identifies an alert across rounds: the kind,
 * the job and step, the communicator's hash (0 for exited, node-lost,
 * stalled), the culprit ranks sorted (and how many there are in all), and
 * for node-lost the node.  What else a finding says (its text, how long,
 * the collective's seq) may change from round to round; the alert keeps
 * the latest.  The same culprits in another collective of the same
 * communicator are the same alert.
 */
#ifndef PL_WATCH_ALERTS_H
#define PL_WATCH_ALERTS_H

#include <stddef.h>
#include <stdint.h>

#include "judge.h"
#include "pl_err.h"

#define ALERTS_RECENT 100
#define ALERTS_MAX_OPEN 65536

struct alert_key {
	enum judge_kind kind;
	uint64_t job_id;
	uint64_t step_id;
	uint64_t comm_hash;
	int32_t node;			/* NODE_LOST: the node's index; else -1 */
	int32_t evidence;		/* judge_finding.evidence: a finding
					 * that turns from inferred to observed
					 * is another alert (its severity is a
					 * label) */
	uint32_t nranks;		/* culprits in ranks[] */
	uint64_t ncul_total;		/* culprits in all */
	int64_t ranks[JUDGE_MAX_CULPRITS]; /* ascending */
};

struct alert {
	struct alert_key key;
	uint64_t fp;			/* the fingerprint's 64-bit FNV-1a: the alert's id */
	struct judge_finding f;		/* the latest finding */
	uint64_t starts_ns;		/* when its condition began (the first finding's
					 * since_ns, else when it fired) */
	uint64_t fired_ns;		/* when it fired */
	uint64_t last_seen_ns;		/* the last round its finding was there */
	uint64_t last_sent_ns;		/* the last FIRE or RESEND */
	uint64_t resolved_ns;		/* 0 while open */
	uint32_t sends;			/* FIRE and RESENDs so far */
	int seen;			/* scratch: in this round's findings */
	int handed;			/* left by ALERT_HANDOVER, not resolved */
};

enum alert_action {
	ALERT_FIRE = 1,
	ALERT_RESEND,
	ALERT_RESOLVE,
	ALERT_OVERFLOW,
	ALERT_HANDOVER,
	ALERT_SUPPRESSED
};

/* What to send about a; a lives only during the call, which must not
 * call back into the table. */
typedef void (*alert_emit)(void *arg, enum alert_action what, const struct alert *a);

struct alerts;

/* A table for at most max_open open alerts (1 to ALERTS_MAX_OPEN).  NULL
 * with err when out of memory or out of range.  Free with alerts_free(). */
struct alerts *alerts_new(size_t max_open, pl_err_t *err);
void alerts_free(struct alerts *t);

/*
 * Each step's own bounds: at most max_open of its alerts open at once, and
 * new ones fired at most fires_per_hour an hour (a bucket of max_open
 * fires that refills at that rate, so a step may fire its max_open at
 * once).  0 for either: no bound of that kind (the default).  Applies to
 * findings from the next update on.
 */
void alerts_set_step_limits(struct alerts *t, size_t max_open, unsigned long fires_per_hour);

/* The fingerprint of finding f of step job.step into k. */
void alert_key_of(const struct judge_finding *f, uint64_t job_id, uint64_t step_id,
		  struct alert_key *k);

/* The 64-bit FNV-1a of a key's fields (the same on every host). */
uint64_t alert_key_hash(const struct alert_key *k);

/*
 * One round of step job.step: f[0..n) its findings now (any order; two
 * with one fingerprint are one alert, the later finding kept).  Emits
 * FIRE for the new ones (in the findings' order), RESEND for the open
 * ones due (last sent resend_ns ago or more), RESOLVE for the open ones
 * of the step not among them, OVERFLOW for new ones that do not fit,
 * SUPPRESSED for the first new one past the step's own limits.
 * Alerts of other steps are left alone.
 */
void alerts_update(struct alerts *t, uint64_t job_id, uint64_t step_id,
		   const struct judge_finding *f, size_t n, uint64_t now_ns, uint64_t resend_ns,
		   alert_emit emit, void *arg);

/* Step job.step ended (or this node no longer judges it): RESOLVE for
 * every open alert of it. */
void alerts_end_step(struct alerts *t, uint64_t job_id, uint64_t step_id, uint64_t now_ns,
		     alert_emit emit, void *arg);

/* This node no longer judges step job.step, which runs on elsewhere (its
 * leader is back): RESOLVE for its node-lost alerts (the node that was
 * lost answers again), HANDOVER for every other open alert of it.  Both
 * go among the last resolved (handed set for the second). */
void alerts_hand_over(struct alerts *t, uint64_t job_id, uint64_t step_id, uint64_t now_ns,
		      alert_emit emit, void *arg);

/* The open alerts, in the order they fired (i < alerts_nopen). */
size_t alerts_nopen(const struct alerts *t);
const struct alert *alerts_open(const struct alerts *t, size_t i);

/* The last resolved ones, newest first (i < alerts_nrecent). */
size_t alerts_nrecent(const struct alerts *t);
const struct alert *alerts_recent(const struct alerts *t, size_t i);

/* Counters since alerts_new(). */
struct alerts_stats {
	uint64_t fired;
	uint64_t resent;
	uint64_t resolved;
	uint64_t overflow;
	uint64_t handed;
	uint64_t suppressed;		/* findings not fired: their step at its limits */
};

void alerts_stats(const struct alerts *t, struct alerts_stats *s);

/* Alertmanager's alertname of a kind: ParallelLayoutRankExited,
 * ParallelLayoutNodeLost, ParallelLayoutHang, ParallelLayoutGpuStuck,
 * ParallelLayoutJobStalled, ParallelLayoutSlowRank,
 * ParallelLayoutTPOverNetwork, ParallelLayoutFSDPRootOnly,
 * ParallelLayoutPipelineBubble. */
const char *alert_name(enum judge_kind k);

/* The most a kind can be: "critical" for exited, node-lost, not-entered
 * and gpu-stuck; "warning" for stalled, slow and the advice
 * (tp-over-network, fsdp-root-only, pipeline-bubble: the step runs, only
 * slower than it could). */
const char *alert_kind_severity(enum judge_kind k);

/* A finding's severity: its kind's, and "warning" whatever the kind when
 * its culprit is inferred (judge_finding.evidence): a page rests on what
 * the culprit's own record shows. */
const char *alert_severity(const struct judge_finding *f);

#endif
