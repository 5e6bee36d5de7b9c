/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * GET /metrics: layoutd's state in Prometheus' text exposition format
 * 0.0.4 (every family with # HELP and # TYPE, counters ending in _total,
 * base units in the name, label values escaped: backslash, double quote
 * and newline).  Names start with parallel_layout_.
 *
 * What a node exports: the daemon (requests, placements, reloads,
 * connections), its own watched ranks (per step, per rank and per
 * communicator: collectives entered and completed, the last one's seq,
 * how long since the rank last entered one), the watch's counters, and
 * the links to the other nodes' daemons (watch/peer.h), the alerts and
 * the steps it leads (watch/alert.h).  Each part is rendered from the
 * numbers its room shows (ld_conns_stats, ld_watch_stats and the watch's
 * tasks, ld_peer_stats, ld_alert_stats and the led steps), never from
 * JSON built for another route.  Cardinality is
 * bounded by the configuration: at most watch_max_steps steps of
 * watch_max_tasks ranks with PLW_MAX_COMMS communicators each, labelled
 * by job, step, rank and communicator, never by collective; with
 * metrics_jobs = none, no job's series at all (each family's HELP and TYPE
 * stay).  The node label is left to Prometheus (its instance label).
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "alerts.h"
#include "alerttext.h"
#include "buf.h"
#include "detect.h"
#include "layoutd.h"
#include "layoutd_conn.h"
#include "watch/alert.h"
#include "watch/peer.h"
#include "watch/stacks.h"
#include "watch/view.h"

/* A label value or a HELP text as the format wants it. */
static void
escaped(struct buf *b, const char *s, bool quote)
{
	for (; s && *s; s++) {
		if (*s == '\\')
			buf_adds(b, "\\\\");
		else if (*s == '\n')
			buf_adds(b, "\\n");
		else if (*s == '"' && quote)
			buf_adds(b, "\\\"");
		else
			buf_add(b, s, 1);
	}
}

static void
value(struct buf *b, double v)
{
	if (isnan(v))
		buf_adds(b, "NaN");
	else if (isinf(v))
		buf_adds(b, v > 0 ? "+Inf" : "-Inf");
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		buf_printf(b, "%.0f", v);
	else
		buf_printf(b, "%.17g", v);
}

void
ld_metric_family(struct buf *b, const char *name, const char *type, const char *help)
{
	buf_printf(b, "# HELP %s ", name);
	escaped(b, help, false);
	buf_printf(b, "\n# TYPE %s %s\n", name, type);
}

void
ld_metric(struct buf *b, const char *name, double v, ...)
{
	const char *k, *val;
	va_list ap;
	int n = 0;

	buf_adds(b, name);
	va_start(ap, v);
	while ((k = va_arg(ap, const char *)) != NULL) {
		val = va_arg(ap, const char *);
		buf_printf(b, "%s%s=\"", n++ ? "," : "{", k);
		escaped(b, val, true);
		buf_adds(b, "\"");
	}
	va_end(ap);
	buf_adds(b, n ? "} " : " ");
	value(b, v);
	buf_adds(b, "\n");
}

/* ---- the daemon ---- */

static void
daemon_metrics(struct ld *d, struct buf *b)
{
	const struct ld_load *l = d->cur;
	struct ld_conn_stats cs;
	struct timespec mono, real;
	double start;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	start = (double)real.tv_sec + (double)real.tv_nsec / 1e9 -
		((double)(mono.tv_sec - d->start.tv_sec) +
		 (double)(mono.tv_nsec - d->start.tv_nsec) / 1e9);
	ld_conns_stats(d->conns, &cs);
	ld_metric_family(b, "parallel_layout_up", "gauge",
			 "1: layoutd answers (scrape failures show in Prometheus' own up).");
	ld_metric(b, "parallel_layout_up", 1, NULL);
	ld_metric_family(b, "parallel_layout_build_info", "gauge",
			 "Always 1: layoutd's version, its node and the map it serves.");
	ld_metric(b, "parallel_layout_build_info", 1, "version", PACKAGE_VERSION, "node",
		  l->conf.node_name, "map", l->map->name, NULL);
	ld_metric_family(b, "parallel_layout_start_time_seconds", "gauge",
			 "When layoutd started, in seconds since the epoch.");
	ld_metric(b, "parallel_layout_start_time_seconds", floor(start * 1000.0) / 1000.0, NULL);
	ld_metric_family(b, "parallel_layout_map_nodes", "gauge", "Nodes in the map served.");
	ld_metric(b, "parallel_layout_map_nodes", (double)l->map->nnodes, NULL);
	ld_metric_family(b, "parallel_layout_node_discrepancies", "gauge",
			 "Differences between this node's hardware and its map entry "
			 "(health is degraded when not 0).");
	ld_metric(b, "parallel_layout_node_discrepancies", (double)l->ndisc, NULL);
	ld_metric_family(b, "parallel_layout_requests_total", "counter",
			 "HTTP requests on the unix socket and the TCP listener.");
	ld_metric(b, "parallel_layout_requests_total", (double)d->requests, NULL);
	ld_metric_family(b, "parallel_layout_placements_total", "counter",
			 "Placement requests, by result: placed, refused.");
	ld_metric(b, "parallel_layout_placements_total", (double)d->placements, "result", "placed",
		  NULL);
	ld_metric(b, "parallel_layout_placements_total", (double)d->placement_errors, "result",
		  "refused", NULL);
	ld_metric_family(b, "parallel_layout_slow_answers_total", "counter",
			 "Placements computed in more than request_timeout_ms.");
	ld_metric(b, "parallel_layout_slow_answers_total", (double)d->slow_answers, NULL);
	ld_metric_family(b, "parallel_layout_reloads_total", "counter",
			 "Reloads (SIGHUP), by result: ok, failed (the old config and map stay).");
	ld_metric(b, "parallel_layout_reloads_total", (double)d->reloads, "result", "ok", NULL);
	ld_metric(b, "parallel_layout_reloads_total", (double)d->reload_failures, "result",
		  "failed", NULL);
	ld_metric_family(b, "parallel_layout_connections_open", "gauge", "Client connections open.");
	ld_metric(b, "parallel_layout_connections_open", (double)cs.open, NULL);
	ld_metric_family(b, "parallel_layout_connections_max", "gauge", "max_connections.");
	ld_metric(b, "parallel_layout_connections_max", (double)cs.max, NULL);
	ld_metric_family(b, "parallel_layout_connections_total", "counter",
			 "Client connections by what became of them: accepted, shed (idle, "
			 "closed for a new one), timed_out (request_timeout_ms).");
	ld_metric(b, "parallel_layout_connections_total", (double)cs.accepted, "event", "accepted",
		  NULL);
	ld_metric(b, "parallel_layout_connections_total", (double)cs.shed, "event", "shed", NULL);
	ld_metric(b, "parallel_layout_connections_total", (double)cs.timed_out, "event",
		  "timed_out", NULL);
	ld_metric_family(b, "parallel_layout_accept_errors_total", "counter",
			 "accept() failures (no descriptor left, ...).");
	ld_metric(b, "parallel_layout_accept_errors_total", (double)cs.accept_errors, NULL);
}

/* ---- the node's watch (from ld_watch_stats and its steps' tasks) ---- */

/* The labels of a rank: job_id, step, rank. */
struct rank_labels {
	char job[24], step[24], rank[24];
};

static void
rank_labels(const struct ld_watch_step *s, const struct ld_watch_task *t, struct rank_labels *rl)
{
	snprintf(rl->job, sizeof(rl->job), "%lld", (long long)(int64_t)s->job_id);
	snprintf(rl->step, sizeof(rl->step), "%lld", (long long)(int64_t)s->step_id);
	snprintf(rl->rank, sizeof(rl->rank), "%lld", t ? (long long)t->rank : 0LL);
}

enum comm_metric { CM_ENTERED, CM_COMPLETED, CM_SEQ };

/* One family over every rank's communicators. */
static void
comm_family(struct buf *b, const struct ld_watch *w, enum comm_metric m, size_t n)
{
	static const char *const names[] = {
		"parallel_layout_rank_collectives_entered_total",
		"parallel_layout_rank_collectives_completed_total",
		"parallel_layout_rank_collective_seq",
	};
	static const char *const helps[] = {
		"Collectives a watched rank of this node entered, per communicator.",
		"Collectives a watched rank of this node completed on the GPU, per communicator "
		"(where the record has the GPU part).",
		"The NCCL seq number of the last collective a watched rank entered, per communicator.",
	};
	size_t i, j, k;

	ld_metric_family(b, names[m], m == CM_SEQ ? "gauge" : "counter", helps[m]);
	for (i = 0; i < n; i++) {
		struct ld_watch_step s;

		ld_watch_step_at(w, i, &s);
		for (j = 0; j < s.ntasks; j++) {
			struct ld_watch_task t;
			struct rank_labels rl;

			ld_watch_task_at(w, i, j, &t);
			rank_labels(&s, &t, &rl);
			for (k = 0; k < t.ncomms; k++) {
				const struct detect_comm *c = &t.comms[k];
				char name[PL_CLIP_BUF], hash[24];
				double v;

				if (m == CM_COMPLETED && !(c->flags & DETECT_GPU))
					continue;
				/* as signed 64-bit numbers, which is how GET /v1/watch shows them */
				v = m == CM_ENTERED ? (double)(int64_t)c->colls :
				    m == CM_COMPLETED ? (double)(int64_t)c->done :
				    (double)(int64_t)c->seq;
				snprintf(hash, sizeof(hash), "%016" PRIx64, c->hash);
				ld_metric(b, names[m], v, "job_id", rl.job, "step", rl.step, "rank",
					  rl.rank, "comm", alerttext_clean(name, sizeof(name), c->name),
					  "comm_hash", hash, NULL);
			}
		}
	}
}

static void
watch_metrics(struct ld *d, struct buf *b)
{
	const struct ld_watch *w = d->watch;
	struct ld_watch_stats st;
	/* metrics_jobs = none: each family stays, with no job's series */
	size_t i, j, k, n = d->cur->conf.metrics_jobs == LD_METRICS_JOBS_ALL ?
			    ld_watch_nsteps(w) : 0;

	ld_watch_stats(w, &st);
	ld_metric_family(b, "parallel_layout_watch_samples_total", "counter",
			 "Samples of the watched records (every watch_interval_ms).");
	ld_metric(b, "parallel_layout_watch_samples_total", (double)st.samples, NULL);
	ld_metric_family(b, "parallel_layout_watch_records_shrunk_total", "counter",
			 "Record reads cut short by SIGBUS (a record shrunk while mapped).");
	ld_metric(b, "parallel_layout_watch_records_shrunk_total", (double)st.records_shrunk,
		  NULL);
	ld_metric_family(b, "parallel_layout_watch_pids_reused_total", "counter",
			 "Registered pids found held by a later process.");
	ld_metric(b, "parallel_layout_watch_pids_reused_total", (double)st.pids_reused, NULL);
	ld_metric_family(b, "parallel_layout_watch_sweeps_total", "counter",
			 "Passes of the sweep of watch_dir.");
	ld_metric(b, "parallel_layout_watch_sweeps_total", (double)st.sweeps, NULL);
	ld_metric_family(b, "parallel_layout_watch_leftovers_removed_total", "counter",
			 "Step directories left behind that the sweep removed.");
	ld_metric(b, "parallel_layout_watch_leftovers_removed_total", (double)st.leftovers_removed,
		  NULL);
	ld_metric_family(b, "parallel_layout_watch_steps", "gauge",
			 "Watched steps registered here, by state: running, ended.");
	ld_metric(b, "parallel_layout_watch_steps", (double)st.steps_running, "state", "running",
		  NULL);
	ld_metric(b, "parallel_layout_watch_steps", (double)st.steps_ended, "state", "ended", NULL);
	ld_metric_family(b, "parallel_layout_watch_records", "gauge",
			 "Watched records by the state of their last read: ok, busy (a writer "
			 "mid-update), refused (not the record registered, or unsafe), unread.");
	for (k = 0; k < LD_WREC_N; k++)
		ld_metric(b, "parallel_layout_watch_records", (double)st.records[k], "state",
			  ld_watch_rec_name((enum ld_watch_rec)k), NULL);
	ld_metric_family(b, "parallel_layout_watch_verdicts", "gauge",
			 "The node's own verdicts now (its ranks only), by kind.");
	for (k = 0; k < LD_WVERD_N; k++)
		ld_metric(b, "parallel_layout_watch_verdicts", (double)st.verdicts[k], "kind",
			  ld_watch_verd_name((enum ld_watch_verd)k), NULL);

	ld_metric_family(b, "parallel_layout_step_ranks", "gauge",
			 "Ranks of a watched step registered on this node.");
	for (i = 0; i < n; i++) {
		struct ld_watch_step s;
		struct rank_labels rl;

		ld_watch_step_at(w, i, &s);
		rank_labels(&s, NULL, &rl);
		ld_metric(b, "parallel_layout_step_ranks", (double)s.ntasks, "job_id", rl.job,
			  "step", rl.step, NULL);
	}
	ld_metric_family(b, "parallel_layout_rank_exited", "gauge",
			 "1 when a watched rank of this node has exited.");
	for (i = 0; i < n; i++) {
		struct ld_watch_step s;

		ld_watch_step_at(w, i, &s);
		for (j = 0; j < s.ntasks; j++) {
			struct ld_watch_task t;
			struct rank_labels rl;

			ld_watch_task_at(w, i, j, &t);
			rank_labels(&s, &t, &rl);
			ld_metric(b, "parallel_layout_rank_exited", t.exited ? 1 : 0, "job_id", rl.job,
				  "step", rl.step, "rank", rl.rank, NULL);
		}
	}
	ld_metric_family(b, "parallel_layout_rank_lag_seconds", "gauge",
			 "Seconds since a watched rank of this node last entered a collective "
			 "(ranks that never entered one and exited ones are left out).");
	for (i = 0; i < n; i++) {
		struct ld_watch_step s;

		ld_watch_step_at(w, i, &s);
		for (j = 0; j < s.ntasks; j++) {
			struct ld_watch_task t;
			struct rank_labels rl;

			ld_watch_task_at(w, i, j, &t);
			if (t.lag_s < 0 || t.exited)
				continue;
			rank_labels(&s, &t, &rl);
			ld_metric(b, "parallel_layout_rank_lag_seconds", t.lag_s, "job_id", rl.job,
				  "step", rl.step, "rank", rl.rank, NULL);
		}
	}
	comm_family(b, w, CM_ENTERED, n);
	comm_family(b, w, CM_COMPLETED, n);
	comm_family(b, w, CM_SEQ, n);
}

/* ---- the links between the nodes' daemons ---- */

static void
peer_metrics(struct ld *d, struct buf *b)
{
	struct ld_peer_stats st;
	int r;

	ld_peer_stats(d->peers, &st);
	ld_metric_family(b, "parallel_layout_peer_summaries_received_total", "counter",
			 "Node summaries that came from other nodes' layoutd (this node leads "
			 "their steps), by result: accepted, refused.");
	ld_metric(b, "parallel_layout_peer_summaries_received_total", (double)st.accepted,
		  "result", "accepted", NULL);
	ld_metric(b, "parallel_layout_peer_summaries_received_total",
		  (double)(st.received >= st.accepted ? st.received - st.accepted : 0), "result",
		  "refused", NULL);
	ld_metric_family(b, "parallel_layout_peer_refusals_total", "counter",
			 "Summaries (and requests on the peer listener) refused, by reason.");
	for (r = 0; r < LD_NREFUSE; r++)
		ld_metric(b, "parallel_layout_peer_refusals_total", (double)st.refused[r], "reason",
			  ld_peer_refusal_name((enum ld_peer_refusal)r), NULL);
	ld_metric_family(b, "parallel_layout_peer_summaries_handed_in_total", "counter",
			 "This node's own summaries of the steps it leads, taken in directly.");
	ld_metric(b, "parallel_layout_peer_summaries_handed_in_total", (double)st.handed_in, NULL);
	ld_metric_family(b, "parallel_layout_peer_summaries_sent_total", "counter",
			 "This node's summaries sent to its steps' leaders, by result: delivered, "
			 "failed.");
	ld_metric(b, "parallel_layout_peer_summaries_sent_total", (double)st.sent, "result",
		  "delivered", NULL);
	ld_metric(b, "parallel_layout_peer_summaries_sent_total", (double)st.send_failures,
		  "result", "failed", NULL);
	ld_metric_family(b, "parallel_layout_peer_summaries_unsent_total", "counter",
			 "This node's summaries not sent (or their answer not checked) because its "
			 "own munged failed or its munge queue was full: no other node is blamed.");
	ld_metric(b, "parallel_layout_peer_summaries_unsent_total", (double)st.unsent, NULL);
	ld_metric_family(b, "parallel_layout_munge_up", "gauge",
			 "1 when this node's munged made or checked the last credential, 0 when it "
			 "failed: this node's summaries are not sent and those sent to it refused "
			 "(labelled with the node's name, as the leaders' ParallelLayoutNodeLost).");
	ld_metric(b, "parallel_layout_munge_up", (double)st.munge_ok, "node",
		  d->cur->conf.node_name, NULL);
	ld_metric_family(b, "parallel_layout_peer_answers_refused_total", "counter",
			 "200 answers to this node's summaries refused: no credential of root or "
			 "slurm_user over the request and the answer (another program on the "
			 "peer port?).");
	ld_metric(b, "parallel_layout_peer_answers_refused_total", (double)st.answers_refused,
		  NULL);
	ld_metric_family(b, "parallel_layout_peer_failovers_total", "counter",
			 "Times a step's summaries went past its leader to the next node.");
	ld_metric(b, "parallel_layout_peer_failovers_total", (double)st.failovers, NULL);
	ld_metric_family(b, "parallel_layout_peer_relayed_total", "counter",
			 "Members' summaries taken here as their relay, to go on in a batch.");
	ld_metric(b, "parallel_layout_peer_relayed_total", (double)st.relayed, NULL);
	ld_metric_family(b, "parallel_layout_peer_batches_received_total", "counter",
			 "Batches of summaries that came from relays, and the summaries in them.");
	ld_metric(b, "parallel_layout_peer_batches_received_total", (double)st.batches_in,
		  "what", "batches", NULL);
	ld_metric(b, "parallel_layout_peer_batches_received_total", (double)st.batch_items,
		  "what", "summaries", NULL);
	ld_metric_family(b, "parallel_layout_peer_led_steps", "gauge",
			 "Steps this node leads now (acting for a lost leader included).");
	ld_metric(b, "parallel_layout_peer_led_steps", (double)st.led_steps, NULL);
	ld_metric_family(b, "parallel_layout_peer_nodes_lost", "gauge",
			 "Nodes of the steps led here whose summaries stopped.");
	ld_metric(b, "parallel_layout_peer_nodes_lost", (double)st.nodes_lost, NULL);
}

/* ---- the alerts and the steps led here (from ld_alert_stats) ---- */

/* The gauges of each led step, one family each, in the order of the values
 * alert_metrics takes from a step. */
static const struct {
	const char *name, *help;
} step_gauges[] = {
	{ "parallel_layout_led_step_ranks",
	  "Ranks known (from any node's summary) of each step this node leads." },
	{ "parallel_layout_led_step_world", "World size of each step this node leads." },
	{ "parallel_layout_led_step_nodes_lost", "Nodes of each led step whose summaries stopped." },
	{ "parallel_layout_led_step_lag_max_seconds",
	  "Of each led step: the longest any live rank has not entered a collective." },
};
#define NSTEP_GAUGES (sizeof(step_gauges) / sizeof(step_gauges[0]))

/* Of each open advice finding (one alert each), one gauge of its size. */
static double adv_nodes(const struct judge_finding *f) { return (double)f->nspan; }
static double adv_bytes(const struct judge_finding *f) { return (double)f->bytes; }
static double adv_idle(const struct judge_finding *f) { return f->cost_frac; }
static double adv_planned(const struct judge_finding *f) { return f->plan_frac; }

static const struct advice_gauge {
	const char *name, *help;
	enum judge_kind kind;
	bool per_comm;		/* labelled with the communicator's hash */
	double (*value)(const struct judge_finding *f);
} advice_gauges[] = {
	{ "parallel_layout_tp_network_nodes",
	  "Of each TP group whose collectives cross the network now: the nodes it spans.",
	  JUDGE_TP_NETWORK, true, adv_nodes },
	{ "parallel_layout_fsdp_root_gather_bytes",
	  "Of each step whose FSDP wraps only the root module: the bytes its one large "
	  "AllGather gathers.",
	  JUDGE_FSDP_ROOT, true, adv_bytes },
	{ "parallel_layout_pipeline_idle_ratio",
	  "Of each step whose pipeline idles more than planned: the share of its time its "
	  "worst PP stage waits in p2p transfers.",
	  JUDGE_PP_BUBBLE, false, adv_idle },
	{ "parallel_layout_pipeline_planned_idle_ratio",
	  "Of the same steps: the idle share planned, (pp - 1) / (m + pp - 1).",
	  JUDGE_PP_BUBBLE, false, adv_planned },
};
#define NADVICE_GAUGES (sizeof(advice_gauges) / sizeof(advice_gauges[0]))

static void
alert_metrics(const struct ld_alerts *a, struct buf *b, bool jobs)
{
	char job[24], step[24], rank[24], hash[20];
	const struct alerts *t = ld_alert_table(a);
	const enum judge_kind *all_kinds;
	struct ld_alert_stats st;
	size_t i, k, g, nkinds = ld_alert_kinds(&all_kinds);
	/* metrics_jobs = none: each family stays, with no job's series */
	size_t nsteps = jobs ? ld_alert_nsteps(a) : 0, nopen = jobs ? alerts_nopen(t) : 0;
	int r;

	ld_alert_stats(a, &st);
	ld_metric_family(b, "parallel_layout_alerts_open", "gauge",
			 "Alerts open now on this node (it leads their steps), by alertname.");
	for (k = 0; k < nkinds; k++)
		ld_metric(b, "parallel_layout_alerts_open", (double)st.open[all_kinds[k]], "alertname",
			  alert_name(all_kinds[k]), "severity", alert_kind_severity(all_kinds[k]), NULL);
	ld_metric_family(b, "parallel_layout_alerts_fired_total", "counter",
			 "Alerts that fired here, by alertname.");
	for (k = 0; k < nkinds; k++)
		ld_metric(b, "parallel_layout_alerts_fired_total", (double)st.fired[all_kinds[k]],
			  "alertname", alert_name(all_kinds[k]), NULL);
	ld_metric_family(b, "parallel_layout_alerts_resolved_total", "counter",
			 "Alerts that resolved here, by alertname.");
	for (k = 0; k < nkinds; k++)
		ld_metric(b, "parallel_layout_alerts_resolved_total",
			  (double)st.resolved[all_kinds[k]], "alertname", alert_name(all_kinds[k]),
			  NULL);
	ld_metric_family(b, "parallel_layout_alerts_not_kept_total", "counter",
			 "Findings not made alerts because the open-alert table was full.");
	ld_metric(b, "parallel_layout_alerts_not_kept_total", (double)st.overflow, NULL);
	ld_metric_family(b, "parallel_layout_alerts_suppressed_total", "counter",
			 "Findings not made alerts because their step was at its own limits "
			 "(alert_step_max_open, alert_step_fires_per_hour).");
	ld_metric(b, "parallel_layout_alerts_suppressed_total", (double)st.suppressed, NULL);
	ld_metric_family(b, "parallel_layout_alert_notifications_total", "counter",
			 "Alert messages by receiver and result: sent (accepted), failed (given up "
			 "after the retries, or refused), dropped (the queue was full).");
	for (r = 0; r < LD_ALERT_NRCV; r++) {
		ld_metric(b, "parallel_layout_alert_notifications_total", (double)st.sent[r],
			  "receiver", ld_alert_receiver_name(r), "result", "sent", NULL);
		ld_metric(b, "parallel_layout_alert_notifications_total", (double)st.failed[r],
			  "receiver", ld_alert_receiver_name(r), "result", "failed", NULL);
		ld_metric(b, "parallel_layout_alert_notifications_total", (double)st.dropped[r],
			  "receiver", ld_alert_receiver_name(r), "result", "dropped", NULL);
	}
	ld_metric_family(b, "parallel_layout_alert_notification_retries_total", "counter",
			 "Alert messages tried again after a failure, by receiver.");
	for (r = 0; r < LD_ALERT_NRCV; r++)
		ld_metric(b, "parallel_layout_alert_notification_retries_total", (double)st.retried[r],
			  "receiver", ld_alert_receiver_name(r), NULL);
	ld_metric_family(b, "parallel_layout_alert_queue_length", "gauge",
			 "Alert messages queued or in flight.");
	ld_metric(b, "parallel_layout_alert_queue_length", (double)st.qlen, NULL);
	ld_metric_family(b, "parallel_layout_alert_queue_capacity", "gauge",
			 "alert_queue_max: queued alert messages at most.");
	ld_metric(b, "parallel_layout_alert_queue_capacity",
		  (double)st.queue_max, NULL);
	ld_metric_family(b, "parallel_layout_drains_total", "counter",
			 "Node drains (drain = yes), by result: ok, failed, rate_limited "
			 "(drain_max_per_hour reached), capped (drain_max_nodes drained "
			 "already), healthy (drain_verify passed), skipped (not a finding that "
			 "drains, or culprits not on one node).");
	ld_metric(b, "parallel_layout_drains_total", (double)st.drains_ok, "result", "ok", NULL);
	ld_metric(b, "parallel_layout_drains_total", (double)st.drains_failed, "result", "failed",
		  NULL);
	ld_metric(b, "parallel_layout_drains_total", (double)st.drains_limited, "result",
		  "rate_limited", NULL);
	ld_metric(b, "parallel_layout_drains_total", (double)st.drains_capped, "result",
		  "capped", NULL);
	ld_metric(b, "parallel_layout_drains_total", (double)st.drains_healthy, "result",
		  "healthy", NULL);
	ld_metric(b, "parallel_layout_drains_total", (double)st.drains_skipped, "result",
		  "skipped", NULL);

	for (g = 0; g < NSTEP_GAUGES; g++) {
		ld_metric_family(b, step_gauges[g].name, "gauge", step_gauges[g].help);
		for (i = 0; i < nsteps; i++) {
			struct ld_alert_step s;
			double v[4];

			ld_alert_step_at(a, i, &s);
			v[0] = (double)s.nranks;
			v[1] = (double)s.world;
			v[2] = (double)s.nlost;
			v[3] = s.lag_max_s;
			snprintf(job, sizeof(job), "%" PRIu64, s.job);
			snprintf(step, sizeof(step), "%" PRIu64, s.step);
			ld_metric(b, step_gauges[g].name, v[g], "job_id", job, "step", step, NULL);
		}
	}
	ld_metric_family(b, "parallel_layout_led_step_findings", "gauge",
			 "The judge's findings of each led step in its last round, by kind.");
	for (i = 0; i < nsteps; i++) {
		struct ld_alert_step s;

		ld_alert_step_at(a, i, &s);
		snprintf(job, sizeof(job), "%" PRIu64, s.job);
		snprintf(step, sizeof(step), "%" PRIu64, s.step);
		for (k = 0; k < nkinds; k++)
			ld_metric(b, "parallel_layout_led_step_findings",
				  (double)s.findings[all_kinds[k]], "job_id", job, "step", step,
				  "kind", judge_kind_name(all_kinds[k]), NULL);
	}
	ld_metric_family(b, "parallel_layout_rank_slowness_ratio", "gauge",
			 "Of each rank named slow now: the share of their step time its peers "
			 "lose waiting for it (the judge's lead).");
	for (i = 0; i < nopen; i++) {
		const struct alert *al = alerts_open(t, i);

		if (al->f.kind != JUDGE_SLOW)
			continue;
		snprintf(job, sizeof(job), "%" PRIu64, al->key.job_id);
		snprintf(step, sizeof(step), "%" PRIu64, al->key.step_id);
		snprintf(hash, sizeof(hash), "%016" PRIx64, al->key.comm_hash);
		for (k = 0; k < al->key.nranks; k++) {
			snprintf(rank, sizeof(rank), "%" PRId64, al->key.ranks[k]);
			ld_metric(b, "parallel_layout_rank_slowness_ratio", al->f.cost_frac,
				  "job_id", job, "step", step, "rank", rank, "comm_hash", hash, NULL);
		}
	}
	for (g = 0; g < NADVICE_GAUGES; g++) {
		const struct advice_gauge *ag = &advice_gauges[g];

		ld_metric_family(b, ag->name, "gauge", ag->help);
		for (i = 0; i < nopen; i++) {
			const struct alert *al = alerts_open(t, i);

			if (al->f.kind != ag->kind)
				continue;
			snprintf(job, sizeof(job), "%" PRIu64, al->key.job_id);
			snprintf(step, sizeof(step), "%" PRIu64, al->key.step_id);
			snprintf(hash, sizeof(hash), "%016" PRIx64, al->key.comm_hash);
			if (ag->per_comm)
				ld_metric(b, ag->name, ag->value(&al->f), "job_id", job, "step",
					  step, "comm_hash", hash, NULL);
			else
				ld_metric(b, ag->name, ag->value(&al->f), "job_id", job, "step",
					  step, NULL);
		}
	}
}

static void
stacks_metrics(const struct ld_stacks *sk, struct buf *b)
{
	struct ld_stacks_stats st;

	ld_stacks_stats(sk, &st);
	ld_metric_family(b, "parallel_layout_stacks_total", "counter",
			 "Culprits' stacks (stacks = yes), by what happened: asked (of another "
			 "node, by the leader), started, written, timed_out (a tool killed after "
			 "stack_timeout_s), refused (a request checked and refused, a bound "
			 "reached, a pid another process holds).");
	ld_metric(b, "parallel_layout_stacks_total", (double)st.asked, "result", "asked", NULL);
	ld_metric(b, "parallel_layout_stacks_total", (double)st.started, "result", "started", NULL);
	ld_metric(b, "parallel_layout_stacks_total", (double)st.written, "result", "written", NULL);
	ld_metric(b, "parallel_layout_stacks_total", (double)st.timed_out, "result", "timed_out",
		  NULL);
	ld_metric(b, "parallel_layout_stacks_total", (double)st.refused, "result", "refused", NULL);
	ld_metric_family(b, "parallel_layout_stacks_running", "gauge",
			 "Captures of culprits' stacks running now.");
	ld_metric(b, "parallel_layout_stacks_running", (double)st.running, NULL);
}

char *
ld_metrics_text(struct ld *d, size_t *len)
{
	struct buf b = BUF_INIT;
	char *text;

	daemon_metrics(d, &b);
	watch_metrics(d, &b);
	if (d->peers)
		peer_metrics(d, &b);
	if (d->alerts)
		alert_metrics(d->alerts, &b, d->cur->conf.metrics_jobs == LD_METRICS_JOBS_ALL);
	if (d->stacks)
		stacks_metrics(d->stacks, &b);
	*len = b.len;
	text = buf_take(&b);
	return text;
}
