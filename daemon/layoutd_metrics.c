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
 * the steps it leads (watch/alert.c).  Cardinality is
 * bounded by the configuration: at most watch_max_steps steps of
 * watch_max_tasks ranks with PLW_MAX_COMMS communicators each, labelled
 * by job, step, rank and communicator, never by collective.  The node
 * label is left to Prometheus (its instance label).
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "buf.h"
#include "layoutd.h"
#include "watch/alert.h"
#include "layoutd_conn.h"
#include "watch/peer.h"
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

/* ---- the node's watch (from the same state GET /v1/watch shows) ---- */

static double
num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* The labels of a rank: job_id, step, rank. */
struct rank_labels {
	char job[24], step[24], rank[24];
};

static void
rank_labels(json_t *s, json_t *t, struct rank_labels *rl)
{
	snprintf(rl->job, sizeof(rl->job), "%lld",
		 (long long)json_integer_value(json_object_get(s, "job_id")));
	snprintf(rl->step, sizeof(rl->step), "%lld",
		 (long long)json_integer_value(json_object_get(s, "step_id")));
	snprintf(rl->rank, sizeof(rl->rank), "%lld",
		 (long long)json_integer_value(json_object_get(t, "rank")));
}

enum comm_metric { CM_ENTERED, CM_COMPLETED, CM_SEQ };

/* One family over every rank's communicators. */
static void
comm_family(struct buf *b, json_t *steps, enum comm_metric m)
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
	json_t *s, *t, *c;
	size_t i, j, k;

	ld_metric_family(b, names[m], m == CM_SEQ ? "gauge" : "counter", helps[m]);
	json_array_foreach(steps, i, s) {
		json_array_foreach(json_object_get(s, "tasks"), j, t) {
			struct rank_labels rl;

			rank_labels(s, t, &rl);
			json_array_foreach(json_object_get(t, "comms"), k, c) {
				const char *name = json_string_value(json_object_get(c, "name"));
				const char *hash = json_string_value(json_object_get(c, "hash"));
				json_t *v = m == CM_ENTERED ? json_object_get(c, "entered") :
					    m == CM_COMPLETED ? json_object_get(c, "completed") :
					    json_object_get(json_object_get(c, "last_entered"), "seq");

				if (!json_is_number(v))
					continue;
				ld_metric(b, names[m], json_number_value(v), "job_id", rl.job, "step",
					  rl.step, "rank", rl.rank, "comm", name ? name : "",
					  "comm_hash", hash ? hash : "", NULL);
			}
		}
	}
}

/* The rank's lag: the seconds since it last entered any collective
 * (negative: it never did). */
static double
rank_lag(json_t *t)
{
	double lag = -1;
	json_t *c;
	size_t k;

	json_array_foreach(json_object_get(t, "comms"), k, c) {
		double age = num(json_object_get(c, "last_entered"), "age_s");

		if (json_integer_value(json_object_get(c, "entered")) > 0 && (lag < 0 || age < lag))
			lag = age;
	}
	return lag;
}

static void
watch_metrics(struct ld *d, struct buf *b)
{
	static const char *const rstates[] = { "ok", "busy", "refused", "unread" };
	static const char *const vkinds[] = { "exited", "not-entered", "gpu-stuck" };
	json_t *w = ld_watch_json(d->watch, true, 0), *steps = json_object_get(w, "steps");
	json_t *s, *t, *v;
	size_t i, j, k;
	double running = 0, ended = 0, rs[4] = { 0 }, vk[3] = { 0 };

	if (!w)
		return;
	ld_metric_family(b, "parallel_layout_watch_samples_total", "counter",
			 "Samples of the watched records (every watch_interval_ms).");
	ld_metric(b, "parallel_layout_watch_samples_total", num(w, "samples"), NULL);
	ld_metric_family(b, "parallel_layout_watch_records_shrunk_total", "counter",
			 "Record reads cut short by SIGBUS (a record shrunk while mapped).");
	ld_metric(b, "parallel_layout_watch_records_shrunk_total", num(w, "records_shrunk"), NULL);
	ld_metric_family(b, "parallel_layout_watch_pids_reused_total", "counter",
			 "Registered pids found held by a later process.");
	ld_metric(b, "parallel_layout_watch_pids_reused_total", num(w, "pids_reused"), NULL);
	ld_metric_family(b, "parallel_layout_watch_sweeps_total", "counter",
			 "Passes of the sweep of watch_dir.");
	ld_metric(b, "parallel_layout_watch_sweeps_total", num(w, "sweeps"), NULL);
	ld_metric_family(b, "parallel_layout_watch_leftovers_removed_total", "counter",
			 "Step directories left behind that the sweep removed.");
	ld_metric(b, "parallel_layout_watch_leftovers_removed_total", num(w, "leftovers_removed"),
		  NULL);
	json_array_foreach(steps, i, s) {
		const char *st = json_string_value(json_object_get(s, "state"));

		if (st && strcmp(st, "running") == 0)
			running++;
		else
			ended++;
		json_array_foreach(json_object_get(s, "tasks"), j, t) {
			const char *r = json_string_value(json_object_get(t, "record_state"));

			for (k = 0; r && k < 4; k++)
				if (strcmp(r, rstates[k]) == 0)
					rs[k]++;
		}
		json_array_foreach(json_object_get(s, "verdicts"), j, v) {
			const char *kind = json_string_value(json_object_get(v, "kind"));

			for (k = 0; kind && k < 3; k++)
				if (strcmp(kind, vkinds[k]) == 0)
					vk[k]++;
		}
	}
	ld_metric_family(b, "parallel_layout_watch_steps", "gauge",
			 "Watched steps registered here, by state: running, ended.");
	ld_metric(b, "parallel_layout_watch_steps", running, "state", "running", NULL);
	ld_metric(b, "parallel_layout_watch_steps", ended, "state", "ended", NULL);
	ld_metric_family(b, "parallel_layout_watch_records", "gauge",
			 "Watched records by the state of their last read: ok, busy (a writer "
			 "mid-update), refused (not the record registered, or unsafe), unread.");
	for (k = 0; k < 4; k++)
		ld_metric(b, "parallel_layout_watch_records", rs[k], "state", rstates[k], NULL);
	ld_metric_family(b, "parallel_layout_watch_verdicts", "gauge",
			 "The node's own verdicts now (its ranks only), by kind.");
	for (k = 0; k < 3; k++)
		ld_metric(b, "parallel_layout_watch_verdicts", vk[k], "kind", vkinds[k], NULL);

	ld_metric_family(b, "parallel_layout_step_ranks", "gauge",
			 "Ranks of a watched step registered on this node.");
	json_array_foreach(steps, i, s) {
		struct rank_labels rl;

		rank_labels(s, NULL, &rl);
		ld_metric(b, "parallel_layout_step_ranks",
			  (double)json_array_size(json_object_get(s, "tasks")), "job_id", rl.job,
			  "step", rl.step, NULL);
	}
	ld_metric_family(b, "parallel_layout_rank_exited", "gauge",
			 "1 when a watched rank of this node has exited.");
	json_array_foreach(steps, i, s) {
		json_array_foreach(json_object_get(s, "tasks"), j, t) {
			struct rank_labels rl;

			rank_labels(s, t, &rl);
			ld_metric(b, "parallel_layout_rank_exited",
				  json_is_true(json_object_get(t, "exited")) ? 1 : 0, "job_id", rl.job,
				  "step", rl.step, "rank", rl.rank, NULL);
		}
	}
	ld_metric_family(b, "parallel_layout_rank_lag_seconds", "gauge",
			 "Seconds since a watched rank of this node last entered a collective "
			 "(ranks that never entered one and exited ones are left out).");
	json_array_foreach(steps, i, s) {
		json_array_foreach(json_object_get(s, "tasks"), j, t) {
			struct rank_labels rl;
			double lag = rank_lag(t);

			if (lag < 0 || json_is_true(json_object_get(t, "exited")))
				continue;
			rank_labels(s, t, &rl);
			ld_metric(b, "parallel_layout_rank_lag_seconds", lag, "job_id", rl.job, "step",
				  rl.step, "rank", rl.rank, NULL);
		}
	}
	comm_family(b, steps, CM_ENTERED);
	comm_family(b, steps, CM_COMPLETED);
	comm_family(b, steps, CM_SEQ);
	json_decref(w);
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
		ld_alert_metrics(d->alerts, &b);
	*len = b.len;
	text = buf_take(&b);
	return text;
}
