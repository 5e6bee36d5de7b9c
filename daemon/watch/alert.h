/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd's alerts: the judge's findings on the steps this node leads
 * (watch/lead.h's findings callback) become alerts (lib/watch/alerts.h:
 * fire, re-send every alert_resend_s while firing, resolve when the
 * finding is gone or the step ends), delivered without blocking the loop
 * (layoutd_curl.h) to every alertmanager_url (Alertmanager API v2, POST
 * /api/v2/alerts) and webhook_url (a JSON body with a one-line "text"),
 * with retries and back-off, through a bounded queue whose drops are
 * counted and logged.  Optionally (drain = yes) the node of a hung, stuck
 * or exited rank is drained in Slurm through scontrol, in a child the loop
 * never waits for, at most drain_max_per_hour times an hour.
 * GET /v1/alerts shows the open and the last resolved alerts, GET /metrics
 * the counters.  The settings are read where they are used, so a reload
 * (SIGHUP) applies to the next message; what is queued stays queued.
 */
#ifndef PL_LAYOUTD_ALERT_H
#define PL_LAYOUTD_ALERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "judge.h"

struct ld;
struct ld_alerts;
struct ld_step_view;
struct judge_finding;

/* Open alerts kept at once (lib/watch/alerts.h's table); more are counted
 * as overflow and logged. */
#define LD_ALERT_MAX_OPEN 4096

/* The alerts of d (its settings from d->cur->conf, deliveries through
 * d->curl, the drain's children on d->base).  NULL when out of memory.
 * Free with ld_alert_free() after d->curl (no delivery callback then). */
struct ld_alerts *ld_alert_new(struct ld *d);
void ld_alert_free(struct ld_alerts *a);

/*
 * The findings of one judge round of a step this node leads (the
 * signature of watch/lead.h's ld_findings_cb; register it with
 * ld_peer_set_findings_cb).  v->final resolves every open alert of the
 * step.  Uses d->alerts.
 */
void ld_alert_findings(struct ld *d, const struct ld_step_view *v,
		       const struct judge_finding *f, size_t n, uint64_t now_ns);

/* GET /v1/alerts: the open and the last resolved alerts (every job's when
 * all, else uid's), the targets and the delivery counters.  NULL when out
 * of memory. */
json_t *ld_alert_json(const struct ld_alerts *a, bool all, long uid);

/* ---- the numbers, for GET /metrics ---- */

#define LD_ALERT_NRCV 2		/* receivers: alertmanager, webhook */

struct ld_alert_stats {
	unsigned long open[JUDGE_KIND_MAX + 1];		/* alerts open now, by kind */
	unsigned long fired[JUDGE_KIND_MAX + 1], resolved[JUDGE_KIND_MAX + 1];
	unsigned long overflow;		/* findings not kept: the table was full */
	unsigned long suppressed;	/* findings not fired: their step at its limits */
	unsigned long sent[LD_ALERT_NRCV], failed[LD_ALERT_NRCV], dropped[LD_ALERT_NRCV];
	unsigned long retried[LD_ALERT_NRCV];
	size_t qlen;			/* messages queued or in flight */
	long queue_max;			/* alert_queue_max */
	unsigned long drains_ok, drains_failed, drains_limited, drains_skipped;
	unsigned long drains_capped, drains_healthy;
};

void ld_alert_stats(const struct ld_alerts *a, struct ld_alert_stats *st);

/* The kinds alerts are made of, in the order they are shown; how many. */
size_t ld_alert_kinds(const enum judge_kind **kinds);

/* "alertmanager", "webhook". */
const char *ld_alert_receiver_name(int r);

/* The open alerts (lib/watch/alerts.h's table: alerts_nopen, alerts_open). */
struct alerts;
const struct alerts *ld_alert_table(const struct ld_alerts *a);

/* A step this node leads as its last judge round left it. */
struct ld_alert_step {
	uint64_t job, step;
	uint32_t world;
	size_t nranks, nlost;
	double lag_max_s;		/* the longest a present rank has not entered a collective */
	size_t findings[JUDGE_KIND_MAX + 1];
};

size_t ld_alert_nsteps(const struct ld_alerts *a);
void ld_alert_step_at(const struct ld_alerts *a, size_t i, struct ld_alert_step *out);

#endif
