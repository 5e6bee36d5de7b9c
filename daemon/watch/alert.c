/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd's alerts (watch/alert.h).
 *
 * The state machine is lib/watch/alerts.c; this file gives its events a
 * face and a way out.  An alert's labels are made once, when it fires,
 * from what identifies it (alertname, severity, job_id, step, user,
 * cluster, group, comm, node, rank), so that every re-send and the resolve
 * carry the very same label set (Alertmanager identifies an alert by its
 * labels); its annotations (summary: the finding's line; description:
 * every culprit with node, GPU, NIC and coordinates, and since when) are
 * made again at each send.  A firing alert is sent with endsAt = now +
 * 3 x alert_resend_s, as Alertmanager's clients do, so an alert whose
 * resolve never arrives (a dropped message, a dead leader) still ends by
 * itself; a resolved one with endsAt = now.  startsAt is the condition's
 * start (lib's starts_ns: the finding's since).  A node that acted for the
 * step's leader and lets go of the step while it runs (the leader answers
 * again) resolves its node-lost alerts and hands the others over: nothing
 * sent, the leader sends them anew with the same labels and start, and the
 * endsAt sent last covers the time between: one alert in Alertmanager.
 *
 * Delivery: one queue entry per (target, alert), bounded by
 * alert_queue_max.  A newer message for an alert replaces one still
 * queued (state, not history: the newest says all); while one is in
 * flight the newer waits behind it, and one replacing a message waiting
 * to be tried again keeps its time.  A failure (no answer, 5xx, 408, 429)
 * is retried after 1, 2, 4 ... s, at most 60 s and at most alert_resend_s
 * apart, alert_retries times for one message; another 4xx is not
 * retried.  A message that finds the queue full
 * is dropped, counted and logged; so is one that gives up.
 *
 * Drain (drain = yes): a hang, a stuck collective or an exit whose
 * culprits are all on one node, still firing at its first re-send
 * (alert_resend_s after it fired: a transient finding drains nothing), drains
 * its node with reason="parallel-layout: job J.S rank R KIND", at most
 * drain_max_per_hour times an hour; watch/drain.c runs scontrol.
 */
#define _GNU_SOURCE		/* WCOREDUMP (watch/text.h) */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "alerts.h"
#include "buf.h"
#include "clock.h"
#include "judge.h"
#include "layoutd.h"
#include "rules.h"
#include "stackfile.h"
#include "alert.h"
#include "drain.h"
#include "layoutd_curl.h"
#include "lead.h"
#include "stacks.h"
#include "text.h"

#define MAX_TARGETS 8
#define TARGET_INFLIGHT 4		/* requests in flight per target */
#define BACKOFF_MAX_S 60
#define USER_CACHE 64
#define LABEL_LEN 512

enum receiver { RCV_AM, RCV_HOOK, NRCV };

static const char *const rcv_names[NRCV] = { "alertmanager", "webhook" };
_Static_assert(NRCV == LD_ALERT_NRCV, "alert.h counts the receivers");

struct target {
	enum receiver rcv;
	char url[LD_PATH + 32];
	char pub[LD_PATH];		/* what anyone may see of it (alerttext.h) */
};

/* A target messages are queued for: its requests in flight. */
struct tstate {
	struct tstate *next;
	enum receiver rcv;
	char *url;
	size_t inflight;
	size_t refs;			/* queue entries pointing here */
};

/* One message on its way to one target. */
struct dlv {
	struct dlv *next;
	struct ld_alerts *a;
	struct tstate *t;
	enum receiver rcv;
	char *url;			/* t->url */
	uint64_t fp;
	char *body;
	size_t len;
	bool resolved;
	unsigned attempts;		/* tries made of this body */
	unsigned prior;			/* failed tries of messages this one replaced */
	uint64_t next_ns;		/* when it may go (mono) */
	uint64_t xfer;			/* in flight: the request's id */
	char *pend;			/* a newer body, waiting behind the one in flight */
	size_t pend_len;
	bool pend_resolved;
};

/* What the daemon keeps of an alert beside lib's struct alert. */
struct ainfo {
	struct ainfo *next;
	uint64_t fp;
	uint32_t uid;
	char user[64];
	json_t *labels;
	json_t *annotations;
	json_t *culprits;
	uint64_t starts_real_ns;	/* startsAt, fixed when it fires */
	bool acting;			/* fired by an acting leader */
	bool drain_tried;		/* the drain was considered for it */
};

/* A step this node leads, for /metrics. */
struct lstep {
	struct lstep *next;
	uint64_t job, step;
	uint32_t world;
	size_t nranks, nnodes, nlost;
	double lag_max_s;		/* the longest a present rank has not entered a collective */
	size_t findings[JUDGE_KIND_MAX + 1];
	unsigned long rounds;
};

struct ld_alerts {
	struct ld *d;
	struct alerts *t;
	struct dlv *q, *qtail;
	size_t qlen;
	struct tstate *tstates;
	struct event *kick;
	struct ainfo *open;		/* of the open alerts */
	struct ainfo *recent[ALERTS_RECENT]; /* of the resolved ones, as lib's ring */
	size_t recent_next;
	struct lstep *steps;
	struct ld_drains *drains;	/* watch/drain.c */
	struct {
		uint32_t uid;
		char name[64];
	} users[USER_CACHE];
	size_t nusers;
	/* counters */
	unsigned long sent[NRCV], failed[NRCV], dropped[NRCV], retried[NRCV];
	unsigned long fired[JUDGE_KIND_MAX + 1], resolved[JUDGE_KIND_MAX + 1];
	unsigned long overflow;
	unsigned long drains_limited, drains_skipped;	/* the drains not started */
	struct ld_ratelog rl_fail[NRCV], rl_drop, rl_over;
};

static const enum judge_kind all_kinds[] = {
	JUDGE_EXITED, JUDGE_NODE_LOST, JUDGE_NOT_ENTERED, JUDGE_GPU_STUCK, JUDGE_STALLED,
	JUDGE_SLOW, JUDGE_TP_NETWORK, JUDGE_FSDP_ROOT, JUDGE_PP_BUBBLE, JUDGE_BUSY,
	JUDGE_MISMATCH
};

#define NKINDS (sizeof(all_kinds) / sizeof(all_kinds[0]))

/* ---- time ------------------------------------------------------------------- */

/* A time of the monotonic clock as wall-clock time, with one anchor. */
struct anchor {
	uint64_t mono, real;
};

static void
anchor_now(struct anchor *an, uint64_t mono)
{
	an->real = real_ns();
	an->mono = mono ? mono : mono_ns();
}

static uint64_t
real_of(const struct anchor *an, uint64_t mono)
{
	if (mono >= an->mono)
		return an->real + (mono - an->mono);
	return an->mono - mono < an->real ? an->real - (an->mono - mono) : 0;
}

/* RFC 3339 in UTC with milliseconds: 2026-12-01T12:17:09.123Z. */
static const char *
iso(uint64_t real_ns, char *buf, size_t size)
{
	time_t s = (time_t)(real_ns / NS);
	struct tm tm;
	size_t n;

	if (!gmtime_r(&s, &tm)) {
		snprintf(buf, size, "1970-01-01T00:00:00.000Z");
		return buf;
	}
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, size - n, ".%03uZ", (unsigned)(real_ns % NS / 1000000) % 1000u);
	return buf;
}

/* ---- text ------------------------------------------------------------------- */


static const char *
user_name(struct ld_alerts *a, uint32_t uid)
{
	struct passwd pw, *res = NULL;
	char buf[1024];
	size_t i;

	for (i = 0; i < a->nusers; i++)
		if (a->users[i].uid == uid)
			return a->users[i].name;
	i = a->nusers < USER_CACHE ? a->nusers++ : uid % USER_CACHE;
	a->users[i].uid = uid;
	/* Once per uid: a name service that answers slowly is asked once. */
	if (getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_name)
		ascii(a->users[i].name, sizeof(a->users[i].name), res->pw_name);
	else
		snprintf(a->users[i].name, sizeof(a->users[i].name), "%" PRIu32, uid);
	return a->users[i].name;
}

static const struct judge_rank *
view_rank(const struct ld_step_view *v, int64_t rank)
{
	size_t i;

	if (rank >= 0 && (size_t)rank < v->nranks && v->ranks[rank].st.rank == rank)
		return &v->ranks[rank];
	for (i = 0; i < v->nranks; i++)
		if (v->ranks[i].st.rank == rank)
			return &v->ranks[i];
	return NULL;
}

static const char *
view_node(const struct ld_step_view *v, int64_t i)
{
	if (!v->step || i < 0 || (size_t)i >= v->step->nnodes || !v->step->nodes[i].name)
		return "";
	return v->step->nodes[i].name;
}


/* The culprits' node names (unique, in rank order) into out; *one set when
 * every culprit is known and on one node. */
static void
culprit_nodes(const struct ld_step_view *v, const struct judge_finding *f, char *out,
	      size_t size, bool *one)
{
	const char *first = NULL;
	size_t i, o = 0;

	out[0] = '\0';
	*one = f->nculprits > 0 && f->ncul_total <= f->nculprits;
	for (i = 0; i < f->nculprits; i++) {
		const struct judge_rank *r = view_rank(v, f->culprits[i]);
		const char *n = r ? view_node(v, r->node) : "";
		char clean[LD_PEER_NODE_LEN * 2];
		size_t k;
		bool dup = false;

		if (!*n) {
			*one = false;
			continue;
		}
		if (!first)
			first = n;
		else if (strcmp(first, n) != 0)
			*one = false;
		for (k = 0; k < i && !dup; k++) {
			const struct judge_rank *q = view_rank(v, f->culprits[k]);

			dup = q && strcmp(view_node(v, q->node), n) == 0;
		}
		if (!dup && o + strlen(n) + 2 < size)
			o += (size_t)snprintf(out + o, size - o, "%s%s", o ? "," : "",
					      ascii(clean, sizeof(clean), n));
	}
}

static json_t *
make_labels(struct ld_alerts *a, const struct ld_step_view *v, const struct alert *al)
{
	const struct judge_finding *f = &al->f;
	char buf[LABEL_LEN], clean[LABEL_LEN];
	json_t *l = json_object();
	size_t i, o = 0;
	bool one;

	if (!l)
		return NULL;
	json_object_set_new(l, "alertname", json_string(alert_name(f->kind)));
	json_object_set_new(l, "severity", json_string(alert_severity(f)));
	snprintf(buf, sizeof(buf), "%" PRIu64, v->job_id);
	json_object_set_new(l, "job_id", json_string(buf));
	snprintf(buf, sizeof(buf), "%" PRIu64, v->step_id);
	json_object_set_new(l, "step", json_string(buf));
	json_object_set_new(l, "user", json_string(user_name(a, v->uid)));
	json_object_set_new(l, "cluster", json_string(ascii(clean, sizeof(clean),
							    a->d->cur->map->name)));
	if (f->group[0])
		json_object_set_new(l, "group", json_string(ascii(clean, sizeof(clean), f->group)));
	if (f->comm_hash && f->comm[0])
		json_object_set_new(l, "comm", json_string(ascii(clean, sizeof(clean), f->comm)));
	if (f->kind == JUDGE_NODE_LOST) {
		if (*view_node(v, f->node))
			json_object_set_new(l, "node", json_string(ascii(clean, sizeof(clean),
									 view_node(v, f->node))));
	} else {
		culprit_nodes(v, f, buf, sizeof(buf), &one);
		if (buf[0])
			json_object_set_new(l, "node", json_string(buf));
	}
	for (i = 0; i < f->nculprits && o + 24 < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%" PRId64, i ? "," : "",
				      f->culprits[i]);
	if (f->ncul_total > f->nculprits && o + 24 < sizeof(buf))
		snprintf(buf + o, sizeof(buf) - o, ",+%zu", f->ncul_total - f->nculprits);
	if (f->nculprits)
		json_object_set_new(l, "rank", json_string(buf));
	return l;
}

static const char *const axis_names[JUDGE_NAXES] = { "tp", "cp", "ep", "dp", "pp" };

/* The culprits with node, GPU, NIC and coordinates, as JSON and as text. */
static json_t *
make_culprits(const struct ld_step_view *v, const struct judge_finding *f, struct buf *text)
{
	json_t *arr = json_array();
	size_t i;
	int k;

	for (i = 0; arr && i < f->nculprits; i++) {
		const struct judge_rank *r = view_rank(v, f->culprits[i]);
		char node[LD_PEER_NODE_LEN * 2], nic[JUDGE_NIC_LEN * 4];
		json_t *co = json_object();

		buf_printf(text, "%srank %" PRId64, i ? "; " : "", f->culprits[i]);
		if (!r) {
			buf_adds(text, " (not in any summary)");
			json_array_append_new(arr, json_pack("{s:I, s:n}", "rank",
							     (json_int_t)f->culprits[i], "node"));
			json_decref(co);
			continue;
		}
		ascii(node, sizeof(node), view_node(v, r->node));
		ascii(nic, sizeof(nic), r->nic);
		buf_printf(text, " on %s", node[0] ? node : "?");
		if (r->gpu >= 0)
			buf_printf(text, " GPU %d", (int)r->gpu);
		if (nic[0])
			buf_printf(text, " NIC %s", nic);
		for (k = 0; k < JUDGE_NAXES; k++) {
			buf_printf(text, "%s%s %" PRIu32, k ? " " : " (", axis_names[k], r->co[k]);
			if (co)
				json_object_set_new(co, axis_names[k], json_integer(r->co[k]));
		}
		buf_adds(text, ")");
		json_array_append_new(arr, json_pack("{s:I, s:s, s:o, s:o, s:o}",
						     "rank", (json_int_t)f->culprits[i], "node", node,
						     "gpu", r->gpu >= 0 ? json_integer(r->gpu) : json_null(),
						     "nic", nic[0] ? json_string(nic) : json_null(),
						     "coords", co ? co : json_null()));
	}
	if (f->ncul_total > f->nculprits)
		buf_printf(text, "; and %zu more", f->ncul_total - f->nculprits);
	return arr;
}

/* stack_file: "NODE:PATH" of each culprit's stacks (watch/stacks.h),
 * ", " between them, for a finding whose culprits are captured; named
 * before the file exists, as its path follows from node, step and rank. */
static void
add_stack_files(struct ld_alerts *a, const struct ld_step_view *v, const struct judge_finding *f,
		json_t *ann)
{
	char name[LD_PATH + LD_PEER_NODE_LEN + 2];
	struct buf b = BUF_INIT;
	const struct judge_rank *jr;
	size_t i;

	if (!ann || !stackfile_wanted(f))
		return;
	for (i = 0; i < f->nculprits; i++) {
		jr = view_rank(v, f->culprits[i]);
		if (jr && view_node(v, jr->node)[0] &&
		    ld_stacks_name(a->d, view_node(v, jr->node), v->job_id, v->step_id,
				   f->culprits[i], name, sizeof(name)) == 0)
			buf_printf(&b, "%s%s", b.len ? ", " : "", name);
	}
	if (b.len && !b.bad)
		json_object_set_new(ann, "stack_file", json_string(buf_str(&b)));
	buf_free(&b);
}

/* The annotations (summary, description) and the culprits of an alert
 * now. */
static void
make_annotations(struct ld_alerts *a, const struct ld_step_view *v, const struct alert *al,
		 const struct anchor *an, uint64_t starts_real, json_t **ann, json_t **culprits)
{
	const struct judge_finding *f = &al->f;
	char clean[JUDGE_TEXT_LEN * 4], t[40], es[64];
	struct buf b = BUF_INIT;

	*culprits = make_culprits(v, f, &b);
	if (f->nculprits)
		buf_adds(&b, ".\n");
	if (f->kind == JUDGE_NODE_LOST)
		buf_printf(&b, "Node %s sent no summary for %.0f s; its ranks are unknown and "
			   "blamed for nothing.\n",
			   ascii(clean, sizeof(clean), view_node(v, f->node)), (double)f->for_ns / 1e9);
	if (f->kind == JUDGE_EXITED) {
		exit_text(f->exit_status, es, sizeof(es));
		buf_printf(&b, "Exited: %s.\n", es);
	}
	buf_printf(&b, "Evidence: %s.\n", f->evidence == DETECT_INFERRED ?
		   "inferred (by elimination: no record shows this culprit at fault)" :
		   "observed (the culprit's own record shows it)");
	if (f->group[0])
		buf_printf(&b, "Group: %s.\n", ascii(clean, sizeof(clean), f->group));
	if (f->comm_hash) {
		buf_printf(&b, "Communicator %s (hash %016" PRIx64 ")",
			   ascii(clean, sizeof(clean), f->comm), f->comm_hash);
		if (f->func[0])
			buf_printf(&b, ", %s seq %" PRIu64 " (collective %" PRIu64 ")",
				   ascii(clean, sizeof(clean), f->func), f->seq, f->colls);
		buf_adds(&b, ".\n");
	}
	if (f->kind == JUDGE_NOT_ENTERED)
		buf_printf(&b, "%zu peers waiting.\n", f->npeers_waiting);
	if (f->kind == JUDGE_MISMATCH) {
		buf_printf(&b, "Called at collective %" PRIu64 ": %s", f->colls,
			   ascii(clean, sizeof(clean), f->sig.func));
		buf_printf(&b, " (count %" PRIu64 ", %s, root %d); ", f->sig.count,
			   ascii(clean, sizeof(clean), f->sig.dtype), f->sig.root);
		if (f->nalike)
			buf_printf(&b, "its %zu peer%s there called ", f->nalike,
				   f->nalike == 1 ? "" : "s");
		else
			buf_adds(&b, "others there called ");
		buf_printf(&b, "%s", ascii(clean, sizeof(clean), f->sig_peers.func));
		buf_printf(&b, " (count %" PRIu64 ", %s, root %d)%s.\n", f->sig_peers.count,
			   ascii(clean, sizeof(clean), f->sig_peers.dtype), f->sig_peers.root,
			   f->nalike ? "" : "; no majority tells the odd one");
		buf_adds(&b, "The code took another path there: software, never drained.\n");
	}
	if (f->kind == JUDGE_SLOW)
		buf_printf(&b, "Costs its peers %.1f %% of their step time.\n", f->cost_frac * 100.0);
	if (f->kind == JUDGE_TP_NETWORK)
		buf_printf(&b, "Spans %" PRIu32 " nodes.\n", f->nspan);
	if (f->kind == JUDGE_FSDP_ROOT)
		buf_printf(&b, "One AllGather of %.1f GiB, %.0f %% of its run.\n",
			   (double)f->bytes / (double)(UINT64_C(1) << 30), f->cost_frac * 100.0);
	if (f->kind == JUDGE_PP_BUBBLE)
		buf_printf(&b, "Idle %.0f %% against a plan of %.0f %%.\n", f->cost_frac * 100.0,
			   f->plan_frac * 100.0);
	buf_printf(&b, "Since %s (%.0f s).\n", iso(starts_real, t, sizeof(t)),
		   (double)(an->mono - al->starts_ns) / 1e9);
	buf_printf(&b, "Step %" PRIu64 ".%" PRIu64 " of %s (%" PRIu32 " ranks), judged by %s%s.",
		   v->job_id, v->step_id, user_name(a, v->uid), v->world,
		   ascii(clean, sizeof(clean), a->d->cur->conf.node_name),
		   v->acting ? " (acting leader)" : " (its leader)");
	*ann = json_pack("{s:s, s:s, s:s}", "summary", ascii(clean, sizeof(clean), f->text),
			 "description", b.bad ? "(out of memory)" : buf_str(&b), "evidence",
			 detect_evidence_name(f->evidence));
	buf_free(&b);
	add_stack_files(a, v, f, *ann);
}

/* ---- the alerts' daemon-side records ------------------------------------------ */

static void
ainfo_free(struct ainfo *i)
{
	if (!i)
		return;
	json_decref(i->labels);
	json_decref(i->annotations);
	json_decref(i->culprits);
	free(i);
}

static struct ainfo *
ainfo_open(const struct ld_alerts *a, uint64_t fp)
{
	struct ainfo *i;

	for (i = a->open; i; i = i->next)
		if (i->fp == fp)
			return i;
	return NULL;
}

/* The record of resolved alert fp moves to the ring (as lib's does). */
static void
ainfo_retire(struct ld_alerts *a, uint64_t fp)
{
	struct ainfo **p, *i = NULL;

	for (p = &a->open; *p; p = &(*p)->next)
		if ((*p)->fp == fp) {
			i = *p;
			*p = i->next;
			break;
		}
	ainfo_free(a->recent[a->recent_next]);
	a->recent[a->recent_next] = i;	/* NULL when none was made: kept in step */
	a->recent_next = (a->recent_next + 1) % ALERTS_RECENT;
}

/* The record of lib's i-th resolved alert (newest first). */
static const struct ainfo *
ainfo_recent(const struct ld_alerts *a, size_t i)
{
	return a->recent[(a->recent_next + ALERTS_RECENT - 1 - i) % ALERTS_RECENT];
}

/* ---- delivery ------------------------------------------------------------------- */

static void schedule(struct ld_alerts *a);

static struct tstate *
tstate_get(struct ld_alerts *a, const struct target *t)
{
	struct tstate *ts;

	for (ts = a->tstates; ts; ts = ts->next)
		if (ts->rcv == t->rcv && strcmp(ts->url, t->url) == 0)
			return ts;
	ts = calloc(1, sizeof(*ts));
	if (!ts || !(ts->url = strdup(t->url))) {
		free(ts);
		return NULL;
	}
	ts->rcv = t->rcv;
	ts->next = a->tstates;
	a->tstates = ts;
	return ts;
}

static void
tstate_put(struct ld_alerts *a, struct tstate *ts)
{
	struct tstate **p;

	if (!ts || --ts->refs)
		return;
	for (p = &a->tstates; *p; p = &(*p)->next)
		if (*p == ts) {
			*p = ts->next;
			break;
		}
	free(ts->url);
	free(ts);
}

static void
dlv_free(struct ld_alerts *a, struct dlv *e)
{
	if (!e)
		return;
	if (e->xfer && e->t)
		e->t->inflight--;
	tstate_put(a, e->t);
	free(e->body);
	free(e->pend);
	free(e);
}

static void
dlv_remove(struct ld_alerts *a, struct dlv *e)
{
	struct dlv **p, *prev = NULL;

	for (p = &a->q; *p; prev = *p, p = &(*p)->next)
		if (*p == e) {
			*p = e->next;
			if (a->qtail == e)
				a->qtail = prev;
			a->qlen--;
			break;
		}
	dlv_free(a, e);
}

/* The seconds before try n + 1 (n >= 1 tries failed in a row): 1, 2, 4
 * ... 60, and never more than alert_resend_s (cap, 0: none), the period
 * the alert would be re-sent at anyway: a target back is sent to within
 * one period. */
static unsigned
backoff_s(unsigned n, long cap)
{
	unsigned s = n >= 7 ? BACKOFF_MAX_S : (1u << (n - 1)) < BACKOFF_MAX_S ? 1u << (n - 1) :
		     BACKOFF_MAX_S;

	return cap > 0 && (unsigned long)cap < s ? (unsigned)cap : s;
}

/* After the one in flight: the newer body, if any, goes next; else the
 * entry is done. */
static void
dlv_next(struct ld_alerts *a, struct dlv *e)
{
	if (!e->pend) {
		dlv_remove(a, e);
		return;
	}
	free(e->body);
	e->body = e->pend;
	e->len = e->pend_len;
	e->resolved = e->pend_resolved;
	e->pend = NULL;
	e->attempts = 0;
	e->next_ns = 0;
}

static void
on_delivered(void *arg, const struct ld_http_result *r)
{
	struct dlv *e = arg;
	struct ld_alerts *a = e->a;
	struct ld_log *lg = &a->d->log;
	long retries = a->d->cur->conf.alert_retries;
	bool good = r->status >= 200 && r->status < 300;
	bool again = r->status == 0 || r->status >= 500 || r->status == 408 || r->status == 429;
	char raw[240], why[sizeof(raw) * 4], fp[20], url[LD_PATH];

	e->xfer = 0;
	e->t->inflight--;
	snprintf(fp, sizeof(fp), "%016" PRIx64, e->fp);
	/* the log shows no credential or token of the target's URL */
	alerttext_url_public(url, sizeof(url), e->url);
	if (good) {
		a->sent[e->rcv]++;
		if (e->attempts + e->prior > 1)
			ld_log(lg, "alerts: %s %s: alert %s (%s) delivered after %u tries",
			       rcv_names[e->rcv], url, fp, e->resolved ? "resolved" : "firing",
			       e->attempts + e->prior);
		e->prior = 0;
		dlv_next(a, e);
		schedule(a);
		return;
	}
	if (r->status)
		snprintf(raw, sizeof(raw), "HTTP %ld: %.200s", r->status, r->body ? r->body : "");
	else
		snprintf(raw, sizeof(raw), "%.200s", r->error ? r->error : "");
	ascii(why, sizeof(why), raw);
	if (again && (long)e->attempts <= retries) {
		unsigned wait = backoff_s(e->attempts + e->prior, a->d->cur->conf.alert_resend_s);

		a->retried[e->rcv]++;
		ld_ratelog(lg, &a->rl_fail[e->rcv], "alerts: %s %s: alert %s (%s) not delivered "
			   "(try %u of %ld): %s; trying again in %u s", rcv_names[e->rcv], url, fp,
			   e->resolved ? "resolved" : "firing", e->attempts, retries + 1, why, wait);
		e->next_ns = mono_ns() + (uint64_t)wait * NS;
		schedule(a);
		return;
	}
	a->failed[e->rcv]++;
	ld_log(lg, "alerts: %s %s: alert %s (%s) not delivered after %u tries, given up: %s",
	       rcv_names[e->rcv], url, fp, e->resolved ? "resolved" : "firing", e->attempts, why);
	e->prior = 0;
	dlv_next(a, e);
	schedule(a);
}

static void
start(struct ld_alerts *a, struct dlv *e)
{
	const struct ld_conf *c = &a->d->cur->conf;
	struct ld_http_req rq;
	pl_err_t err;

	memset(&rq, 0, sizeof(rq));
	rq.url = e->url;
	rq.body = e->body;
	rq.len = e->len;
	rq.connect_ms = c->alert_timeout_ms < 2000 ? c->alert_timeout_ms : 2000;
	rq.timeout_ms = c->alert_timeout_ms;
	rq.done = on_delivered;
	rq.arg = e;
	pl_err_clear(&err);
	e->attempts++;
	e->t->inflight++;
	e->xfer = a->d->curl ? ld_http_post(a->d->curl, &rq, &err) : 0;
	if (!e->xfer) {
		struct ld_http_result r;

		memset(&r, 0, sizeof(r));
		r.error = a->d->curl ? err.text : "no HTTP client";
		r.body = "";
		e->xfer = 1;		/* on_delivered clears it, and the count */
		on_delivered(e, &r);
	}
}

static void
on_kick(evutil_socket_t fd, short what, void *arg)
{
	struct ld_alerts *a = arg;
	uint64_t now = mono_ns();
	struct dlv *e, *next;

	for (e = a->q; e; e = next) {
		next = e->next;		/* start() may remove e (a refusal at once) */
		if (!e->xfer && e->next_ns <= now && e->t->inflight < TARGET_INFLIGHT)
			start(a, e);
	}
	schedule(a);
}

/* Arm the timer for the next entry due (none: disarmed). */
static void
schedule(struct ld_alerts *a)
{
	uint64_t now = mono_ns(), due = UINT64_MAX;
	const struct dlv *e;
	struct timeval tv;

	for (e = a->q; e; e = e->next)
		if (!e->xfer && e->next_ns < due && e->t->inflight < TARGET_INFLIGHT)
			due = e->next_ns;
	if (due == UINT64_MAX) {
		evtimer_del(a->kick);
		return;
	}
	due = due > now ? due - now : 0;
	tv.tv_sec = (time_t)(due / NS);
	tv.tv_usec = (suseconds_t)(due % NS / 1000);
	evtimer_add(a->kick, &tv);
}

/* Queue body for target t about alert fp (body is taken over). */
static void
enqueue(struct ld_alerts *a, const struct target *t, uint64_t fp, char *body, bool resolved)
{
	struct dlv *e;
	char fps[20];

	if (!body) {
		a->dropped[t->rcv]++;
		ld_ratelog(&a->d->log, &a->rl_drop, "alerts: out of memory: a message to %s %s is "
			   "dropped", rcv_names[t->rcv], t->pub);
		return;
	}
	for (e = a->q; e; e = e->next)
		if (e->fp == fp && e->rcv == t->rcv && strcmp(e->url, t->url) == 0)
			break;
	if (e && e->xfer) {
		free(e->pend);
		e->pend = body;
		e->pend_len = strlen(body);
		e->pend_resolved = resolved;
		return;
	}
	if (e) {
		free(e->body);
		e->body = body;
		e->len = strlen(body);
		e->resolved = resolved;
		/* the tries so far still count (the log, the backoff), and the
		 * next one stays when it was: a re-send every alert_resend_s
		 * must not make a failing target's retries immediate again */
		e->prior += e->attempts;
		e->attempts = 0;
		return;
	}
	if (a->qlen >= (size_t)a->d->cur->conf.alert_queue_max || !(e = calloc(1, sizeof(*e))) ||
	    !(e->t = tstate_get(a, t))) {
		bool full = a->qlen >= (size_t)a->d->cur->conf.alert_queue_max;

		free(e);
		free(body);
		a->dropped[t->rcv]++;
		snprintf(fps, sizeof(fps), "%016" PRIx64, fp);
		ld_ratelog(&a->d->log, &a->rl_drop, "alerts: alert %s (%s) to %s %s dropped: %s "
			   "(%lu dropped so far)", fps, resolved ? "resolved" : "firing",
			   rcv_names[t->rcv], t->pub,
			   full ? "the queue is full (alert_queue_max)" : "out of memory",
			   a->dropped[RCV_AM] + a->dropped[RCV_HOOK]);
		return;
	}
	e->a = a;
	e->t->refs++;
	e->url = e->t->url;
	e->rcv = t->rcv;
	e->fp = fp;
	e->body = body;
	e->len = strlen(body);
	e->resolved = resolved;
	if (a->qtail)
		a->qtail->next = e;
	else
		a->q = e;
	a->qtail = e;
	a->qlen++;
}

/* ---- the messages ----------------------------------------------------------------- */

static const char *
status_word(enum alert_action what)
{
	return what == ALERT_RESOLVE ? "resolved" : "firing";
}

/* The alert as Alertmanager's postableAlert (and the webhook's fields). */
static json_t *
am_alert(const struct ld_alerts *a, const struct alert *al, const struct ainfo *in,
	 enum alert_action what, const struct anchor *an)
{
	const struct ld_conf *c = &a->d->cur->conf;
	char s[40], e[40], url[LD_PATH + 64];
	uint64_t ends = what == ALERT_RESOLVE ? an->real :
			an->real + 3 * (uint64_t)c->alert_resend_s * NS;
	json_t *o;

	o = json_pack("{s:O, s:O, s:s, s:s}", "labels", in->labels, "annotations", in->annotations,
		      "startsAt", iso(in->starts_real_ns, s, sizeof(s)),
		      "endsAt", iso(ends, e, sizeof(e)));
	if (o && c->tcp_host[0] && c->tcp_port > 0) {
		snprintf(url, sizeof(url), "http://%s:%d/v1/alerts", c->node_name, c->tcp_port);
		json_object_set_new(o, "generatorURL", json_string(url));
	}
	return o;
}

/* The webhook's one line: "[FIRING] ParallelLayoutHang critical, job 42.0
 * (alice, cluster lab): <summary>". */
static void
hook_text(const struct alert *al, const struct ainfo *in, enum alert_action what,
	  const struct anchor *an, char *out, size_t size)
{
	json_t *l = in->labels;
	const char *summary = json_string_value(json_object_get(in->annotations, "summary"));
	int o;

	o = snprintf(out, size, "[%s] %s %s, job %s.%s (%s, cluster %s): %s",
		     what == ALERT_RESOLVE ? "RESOLVED" : "FIRING",
		     json_string_value(json_object_get(l, "alertname")),
		     json_string_value(json_object_get(l, "severity")),
		     json_string_value(json_object_get(l, "job_id")),
		     json_string_value(json_object_get(l, "step")),
		     json_string_value(json_object_get(l, "user")),
		     json_string_value(json_object_get(l, "cluster")), summary ? summary : "");
	if (what == ALERT_RESOLVE && o > 0 && (size_t)o < size)
		snprintf(out + o, size - (size_t)o, " (resolved after %.0f s)",
			 (double)(an->mono - al->starts_ns) / 1e9);
}

static char *
hook_body(const struct ld_alerts *a, const struct alert *al, const struct ainfo *in,
	  enum alert_action what, const struct anchor *an)
{
	json_t *o = am_alert(a, al, in, what, an);
	char text[1024], fp[20];
	char *body;

	if (!o)
		return NULL;
	hook_text(al, in, what, an, text, sizeof(text));
	snprintf(fp, sizeof(fp), "%016" PRIx64, al->fp);
	json_object_set_new(o, "text", json_string(text));
	json_object_set_new(o, "status", json_string(status_word(what)));
	json_object_set_new(o, "fingerprint", json_string(fp));
	json_object_set_new(o, "kind", json_string(judge_kind_name(al->f.kind)));
	json_object_set(o, "alertname", json_object_get(in->labels, "alertname"));
	json_object_set(o, "severity", json_object_get(in->labels, "severity"));
	json_object_set_new(o, "job_id", json_integer((json_int_t)al->key.job_id));
	json_object_set_new(o, "step", json_integer((json_int_t)al->key.step_id));
	json_object_set(o, "user", json_object_get(in->labels, "user"));
	json_object_set(o, "culprits", in->culprits);
	body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return body;
}

static int targets_of(const struct ld_conf *c, struct target *out);

static void
send_all(struct ld_alerts *a, const struct alert *al, const struct ainfo *in,
	 enum alert_action what, const struct anchor *an)
{
	struct target tg[MAX_TARGETS];
	int i, nt = targets_of(&a->d->cur->conf, tg);

	for (i = 0; i < nt; i++) {
		const struct target *t = &tg[i];
		char *body = NULL;

		if (t->rcv == RCV_AM) {
			json_t *arr = json_array(), *o = am_alert(a, al, in, what, an);

			if (arr && o && json_array_append_new(arr, o) == 0)
				body = json_dumps(arr, JSON_COMPACT);
			else
				json_decref(o);
			json_decref(arr);
		} else {
			body = hook_body(a, al, in, what, an);
		}
		enqueue(a, t, al->fp, body, what == ALERT_RESOLVE);
	}
	schedule(a);
}

/* An exit that says nothing of the node: the one exit rule's (rules.h)
 * exit 0 or end by Slurm's signal (scancel, a time limit, srun's ^C). */
static bool
ended_by_slurm(int st)
{
	return st >= 0 && rules_exit_class(st) != RULES_EXIT_FAILED;
}

/*
 * Why a fault finding does not drain, NULL when it may: a drain takes a
 * node from everyone, so it rests only on what points at the hardware and
 * is observed in the culprit's own record (a kernel that still runs where
 * its peers' completed).  An exit is the software's (an exception, an OOM,
 * Slurm ending the step), a rank that enters nothing is held by its own
 * code, so are ranks calling different collectives, and an inferred
 * culprit may be the wrong one.
 */
static const char *
drain_refusal(const struct judge_finding *f, char *buf, size_t size)
{
	char es[64];

	if (f->kind == JUDGE_EXITED) {
		exit_text(f->exit_status, es, sizeof(es));
		snprintf(buf, size, "the rank ended with %s, %s (not a sign of the node)", es,
			 ended_by_slurm(f->exit_status) ? "as Slurm ends a step" :
							  "an exit is its software's");
		return buf;
	}
	if (f->kind == JUDGE_NOT_ENTERED)
		return "a rank that enters no collective is held by its own code (not a sign of "
		       "the node)";
	if (f->kind == JUDGE_MISMATCH)
		return "ranks that call different collectives took another code path (not a sign "
		       "of the node)";
	if (f->evidence == DETECT_INFERRED)
		return "its culprit is inferred (by elimination), not observed in its own record";
	return NULL;
}

/* At an alert's first re-send: drain the culprits' node when asked and allowed. */
static void
maybe_drain(struct ld_alerts *a, const struct ld_step_view *v, const struct alert *al)
{
	const struct ld_conf *c = &a->d->cur->conf;
	const struct judge_finding *f = &al->f;
	char nodes[LABEL_LEN], reason[160], ranks[64], why[160];
	const char *no;
	uint64_t now = mono_ns();
	size_t i, o = 0, recent;
	bool one;

	if (!c->drain || (f->kind != JUDGE_NOT_ENTERED && f->kind != JUDGE_GPU_STUCK &&
			  f->kind != JUDGE_EXITED && f->kind != JUDGE_MISMATCH))
		return;
	if ((no = drain_refusal(f, why, sizeof(why))) != NULL) {
		a->drains_skipped++;
		ld_log(&a->d->log, "drain: job %" PRIu64 ".%" PRIu64 " %s: not drained, %s",
		       v->job_id, v->step_id, judge_kind_name(f->kind), no);
		return;
	}
	culprit_nodes(v, f, nodes, sizeof(nodes), &one);
	if (!one || strlen(nodes) >= LD_PEER_NODE_LEN || strchr(nodes, '\\')) {
		a->drains_skipped++;
		ld_log(&a->d->log, "drain: job %" PRIu64 ".%" PRIu64 " %s: not drained, the culprits "
		       "are not all known on one node (%s)", v->job_id, v->step_id,
		       judge_kind_name(f->kind), nodes[0] ? nodes : "none known");
		return;
	}
	recent = ld_drain_last_hour(a->drains, now);
	if ((long)recent >= c->drain_max_per_hour) {
		a->drains_limited++;
		ld_log(&a->d->log, "drain: node %s not drained for job %" PRIu64
		       ".%" PRIu64 " %s: %zu drains in the last hour (drain_max_per_hour %ld)",
		       nodes, v->job_id, v->step_id, judge_kind_name(f->kind), recent,
		       c->drain_max_per_hour);
		return;
	}
	for (i = 0; i < f->nculprits && o + 24 < sizeof(ranks); i++)
		o += (size_t)snprintf(ranks + o, sizeof(ranks) - o, "%s%" PRId64, i ? "," : "",
				      f->culprits[i]);
	snprintf(reason, sizeof(reason), "parallel-layout: job %" PRIu64 ".%" PRIu64 " rank %s %s",
		 v->job_id, v->step_id, ranks, judge_kind_name(f->kind));
	ld_drain_start(a->drains, nodes, reason);
}

/* ---- the state machine's events ------------------------------------------------------- */

struct round {
	struct ld_alerts *a;
	const struct ld_step_view *v;	/* NULL: no view (the step ended) */
	struct anchor an;
};

static void
log_event(struct ld_alerts *a, enum alert_action what, const struct alert *al,
	  const struct anchor *an)
{
	char text[JUDGE_TEXT_LEN * 4];

	ascii(text, sizeof(text), al->f.text);
	if (what == ALERT_FIRE)
		ld_log(&a->d->log, "alert fired: %s %s job %" PRIu64 ".%" PRIu64 " (%016" PRIx64 "): %s",
		       alert_name(al->f.kind), alert_severity(&al->f), al->key.job_id,
		       al->key.step_id, al->fp, text);
	else if (what == ALERT_RESOLVE)
		ld_log(&a->d->log, "alert resolved: %s job %" PRIu64 ".%" PRIu64 " (%016" PRIx64 ") "
		       "after %.0f s: %s", alert_name(al->f.kind), al->key.job_id, al->key.step_id,
		       al->fp, (double)(an->mono - al->starts_ns) / 1e9, text);
	else if (what == ALERT_HANDOVER)
		ld_log(&a->d->log, "alert handed over: %s job %" PRIu64 ".%" PRIu64 " (%016" PRIx64 "), "
		       "not resolved: the step's leader judges it again: %s", alert_name(al->f.kind),
		       al->key.job_id, al->key.step_id, al->fp, text);
	else if (what == ALERT_SUPPRESSED)
		ld_log(&a->d->log, "alerts: job %" PRIu64 ".%" PRIu64 " is at its own limits "
		       "(alert_step_max_open %ld, alert_step_fires_per_hour %ld): %s and what "
		       "else it finds are not made alerts, only counted (said once a step): %s",
		       al->key.job_id, al->key.step_id, a->d->cur->conf.alert_step_max_open,
		       a->d->cur->conf.alert_step_fires_per_hour, alert_name(al->f.kind), text);
	else if (what == ALERT_OVERFLOW)
		ld_ratelog(&a->d->log, &a->rl_over, "alert not kept: %d alerts are open already "
			   "(%lu not kept so far): %s job %" PRIu64 ".%" PRIu64 ": %s",
			   LD_ALERT_MAX_OPEN, a->overflow, alert_name(al->f.kind), al->key.job_id,
			   al->key.step_id, text);
}

static void
on_event(void *arg, enum alert_action what, const struct alert *al)
{
	struct round *rd = arg;
	struct ld_alerts *a = rd->a;
	struct ainfo *in = ainfo_open(a, al->fp);
	json_t *ann = NULL, *cul = NULL;
	enum judge_kind k = al->f.kind;

	/* not made an alert: said (the table counts the suppressed) */
	if (what == ALERT_OVERFLOW || what == ALERT_SUPPRESSED) {
		a->overflow += what == ALERT_OVERFLOW;
		log_event(a, what, al, &rd->an);
		return;
	}
	/* Nothing sent: the endsAt last sent covers the time until the
	 * leader sends it again, with the same labels and start. */
	if (what == ALERT_HANDOVER) {
		log_event(a, what, al, &rd->an);
		ainfo_retire(a, al->fp);
		return;
	}
	if (what == ALERT_FIRE) {
		in = calloc(1, sizeof(*in));
		if (in) {
			in->fp = al->fp;
			in->uid = rd->v->uid;
			snprintf(in->user, sizeof(in->user), "%s", user_name(a, rd->v->uid));
			in->labels = make_labels(a, rd->v, al);
			/* to the second: the node acting for a lost leader
			 * and the leader back each rebase the condition's
			 * start from summaries by their own transit, and
			 * must send one startsAt */
			in->starts_real_ns = real_of(&rd->an, al->starts_ns) / NS * NS;
			in->acting = rd->v->acting;
			in->next = a->open;
			a->open = in;
		}
		if ((size_t)k < sizeof(a->fired) / sizeof(a->fired[0]))
			a->fired[k]++;
		log_event(a, what, al, &rd->an);
	}
	if (in && rd->v && what != ALERT_RESOLVE) {
		make_annotations(a, rd->v, al, &rd->an, in->starts_real_ns, &ann, &cul);
		json_decref(in->annotations);
		json_decref(in->culprits);
		in->annotations = ann;
		in->culprits = cul;
	}
	if (what == ALERT_RESOLVE) {
		if ((size_t)k < sizeof(a->resolved) / sizeof(a->resolved[0]))
			a->resolved[k]++;
		log_event(a, what, al, &rd->an);
	}
	if (in && in->labels && in->annotations && in->culprits)
		send_all(a, al, in, what, &rd->an);
	else if (a->d->cur->conf.alertmanager_url[0] || a->d->cur->conf.webhook_url[0])
		ld_ratelog(&a->d->log, &a->rl_drop, "alerts: out of memory: alert %016" PRIx64
			   " is not sent", al->fp);
	/* A drain waits for the first re-send: a finding that lasts only a
	 * round or two (a downstream stage crossing the threshold with the
	 * culprit, before the cascade rule sees the cause) drains nothing. */
	if (what == ALERT_RESEND && rd->v && in && !in->drain_tried) {
		in->drain_tried = true;
		maybe_drain(a, rd->v, al);
	}
	if (what == ALERT_RESOLVE)
		ainfo_retire(a, al->fp);
}

static struct lstep *
lstep_get(struct ld_alerts *a, uint64_t job, uint64_t step, bool make)
{
	struct lstep *s;

	for (s = a->steps; s; s = s->next)
		if (s->job == job && s->step == step)
			return s;
	if (!make || !(s = calloc(1, sizeof(*s))))
		return NULL;
	s->job = job;
	s->step = step;
	s->next = a->steps;
	a->steps = s;
	return s;
}

static void
lstep_drop(struct ld_alerts *a, uint64_t job, uint64_t step)
{
	struct lstep **p, *s;

	for (p = &a->steps; (s = *p) != NULL; p = &s->next)
		if (s->job == job && s->step == step) {
			*p = s->next;
			free(s);
			return;
		}
}

/* What /metrics shows of a step led here. */
static void
lstep_note(struct ld_alerts *a, const struct ld_step_view *v, const struct judge_finding *f,
	   size_t n, uint64_t now)
{
	struct lstep *s = lstep_get(a, v->job_id, v->step_id, true);
	size_t i;
	uint32_t k;

	if (!s)
		return;
	s->world = v->world;
	s->nranks = v->nranks;
	s->nnodes = v->step ? v->step->nnodes : 0;
	s->nlost = 0;
	for (i = 0; v->step && i < v->step->nnodes; i++)
		s->nlost += v->step->nodes[i].lost != 0;
	memset(s->findings, 0, sizeof(s->findings));
	for (i = 0; i < n; i++)
		if ((size_t)f[i].kind < sizeof(s->findings) / sizeof(s->findings[0]))
			s->findings[f[i].kind]++;
	s->lag_max_s = 0;
	for (i = 0; i < v->nranks; i++) {
		const struct judge_rank *r = &v->ranks[i];
		uint64_t last = 0;

		if (!r->present || r->st.exited)
			continue;
		for (k = 0; k < r->st.ncomm && k < PLW_MAX_COMMS; k++)
			if (r->st.comm[k].colls && r->st.comm[k].enter_ns > last)
				last = r->st.comm[k].enter_ns;
		if (last && now > last && (double)(now - last) / 1e9 > s->lag_max_s)
			s->lag_max_s = (double)(now - last) / 1e9;
	}
	s->rounds++;
}

void
ld_alert_findings(struct ld *d, const struct ld_step_view *v, const struct judge_finding *f,
		  size_t n, uint64_t now_ns)
{
	struct ld_alerts *a = d->alerts;
	struct round rd;

	if (!a || !v)
		return;
	rd.a = a;
	rd.v = v;
	anchor_now(&rd.an, now_ns);
	if (v->final) {
		if (v->handover)
			alerts_hand_over(a->t, v->job_id, v->step_id, now_ns, on_event, &rd);
		else
			alerts_end_step(a->t, v->job_id, v->step_id, now_ns, on_event, &rd);
		lstep_drop(a, v->job_id, v->step_id);
		return;
	}
	lstep_note(a, v, f, n, now_ns);
	/* (from the config at each round: a reload changes them) */
	alerts_set_step_limits(a->t, (size_t)d->cur->conf.alert_step_max_open,
			       (unsigned long)d->cur->conf.alert_step_fires_per_hour);
	alerts_update(a->t, v->job_id, v->step_id, f, n, now_ns,
		      (uint64_t)d->cur->conf.alert_resend_s * NS, on_event, &rd);
}

/* ---- GET /v1/alerts -------------------------------------------------------------------- */

static json_t *
alert_json(const struct ld_alerts *a, const struct alert *al, const struct ainfo *in,
	   const struct anchor *an)
{
	char fp[20], t1[40], t2[40], t3[40], t4[40], text[JUDGE_TEXT_LEN * 4];
	char comm[DETECT_NAME_LEN * 4], func[DETECT_TEXT_LEN * 4], group[JUDGE_GROUP_LEN * 4];
	json_t *o;

	snprintf(fp, sizeof(fp), "%016" PRIx64, al->fp);
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:o, s:I, s:s, "
		      "s:s, s:s, s:I, s:I, s:f, s:I}",
		      "fingerprint", fp,
		      "status", al->handed ? "handed-over" : al->resolved_ns ? "resolved" : "firing",
		      "alertname", alert_name(al->f.kind), "severity", alert_severity(&al->f),
		      "kind", judge_kind_name(al->f.kind),
		      "job_id", (json_int_t)al->key.job_id, "step_id", (json_int_t)al->key.step_id,
		      "starts_at", iso(in ? in->starts_real_ns : real_of(an, al->starts_ns), t1,
					sizeof(t1)),
		      "fired_at", iso(real_of(an, al->fired_ns), t2, sizeof(t2)),
		      "last_sent_at", iso(real_of(an, al->last_sent_ns), t3, sizeof(t3)),
		      "last_seen_at", iso(real_of(an, al->last_seen_ns), t4, sizeof(t4)),
		      "resolved_at", al->resolved_ns ?
		      json_string(iso(real_of(an, al->resolved_ns), t1, sizeof(t1))) : json_null(),
		      "sends", (json_int_t)al->sends,
		      "text", ascii(text, sizeof(text), al->f.text),
		      "group", ascii(group, sizeof(group), al->f.group),
		      "comm", ascii(comm, sizeof(comm), al->f.comm),
		      "seq", (json_int_t)al->f.seq, "culprits_total", (json_int_t)al->key.ncul_total,
		      "for_s", (double)al->f.for_ns / 1e9,
		      "peers_waiting", (json_int_t)al->f.npeers_waiting);
	if (!o)
		return NULL;
	json_object_set_new(o, "func", json_string(ascii(func, sizeof(func), al->f.func)));
	if (al->f.kind == JUDGE_EXITED)
		json_object_set_new(o, "exit_status", al->f.exit_status >= 0 ?
				    json_integer(al->f.exit_status) : json_null());
	if (al->f.kind == JUDGE_SLOW)
		json_object_set_new(o, "cost_frac", json_real(al->f.cost_frac));
	if (al->f.kind == JUDGE_TP_NETWORK)
		json_object_set_new(o, "nodes_spanned", json_integer(al->f.nspan));
	if (al->f.kind == JUDGE_FSDP_ROOT) {
		json_object_set_new(o, "gather_bytes", json_integer((json_int_t)al->f.bytes));
		json_object_set_new(o, "share", json_real(al->f.cost_frac));
	}
	if (al->f.kind == JUDGE_PP_BUBBLE) {
		json_object_set_new(o, "idle_frac", json_real(al->f.cost_frac));
		json_object_set_new(o, "plan_frac", json_real(al->f.plan_frac));
	}
	if (in) {
		json_object_set_new(o, "uid", json_integer(in->uid));
		json_object_set_new(o, "user", json_string(in->user));
		json_object_set_new(o, "acting_leader", json_boolean(in->acting));
		if (in->labels)
			json_object_set(o, "labels", in->labels);
		if (in->annotations)
			json_object_set(o, "annotations", in->annotations);
		if (in->culprits)
			json_object_set(o, "culprits", in->culprits);
	}
	return o;
}

static bool
visible(const struct ainfo *in, bool all, long uid)
{
	return all || (in && (long)in->uid == uid);
}

json_t *
ld_alert_json(const struct ld_alerts *a, bool all, long uid)
{
	const struct ld_conf *c = &a->d->cur->conf;
	json_t *open = json_array(), *recent = json_array(), *targets = json_array(), *root;
	struct target tg[MAX_TARGETS];
	struct ld_drain_stats ds;
	struct alerts_stats ts;
	struct anchor an;
	size_t i;
	int k, nt;

	anchor_now(&an, 0);
	for (i = 0; open && i < alerts_nopen(a->t); i++) {
		const struct alert *al = alerts_open(a->t, i);
		const struct ainfo *in = ainfo_open(a, al->fp);

		if (visible(in, all, uid))
			json_array_append_new(open, alert_json(a, al, in, &an));
	}
	for (i = 0; recent && i < alerts_nrecent(a->t); i++) {
		const struct alert *al = alerts_recent(a->t, i);
		const struct ainfo *in = ainfo_recent(a, i);

		if (visible(in, all, uid))
			json_array_append_new(recent, alert_json(a, al, in, &an));
	}
	/* A target's URL may carry a password or be a bearer token (a Slack
	 * webhook): whole to root and the Slurm user, its host to others. */
	nt = targets_of(c, tg);
	for (k = 0; targets && k < nt; k++)
		json_array_append_new(targets, json_pack("{s:s, s:s}", "receiver",
							 rcv_names[tg[k].rcv], "url",
							 all ? tg[k].url : tg[k].pub));
	alerts_stats(a->t, &ts);
	ld_drain_stats(a->drains, &ds);
	root = json_pack("{s:o, s:o, s:o, s:I, s:I, s:{s:I, s:I}, s:{s:I, s:I, s:I, s:I}, "
			 "s:{s:I, s:I, s:I, s:I}, s:I, s:I, "
			 "s:{s:b, s:I, s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
			 "open", open, "recent", recent, "targets", targets,
			 "resend_s", (json_int_t)c->alert_resend_s,
			 "retries", (json_int_t)c->alert_retries,
			 "queue", "length", (json_int_t)a->qlen, "max", (json_int_t)c->alert_queue_max,
			 "alertmanager", "sent", (json_int_t)a->sent[RCV_AM],
			 "failed", (json_int_t)a->failed[RCV_AM],
			 "dropped", (json_int_t)a->dropped[RCV_AM],
			 "retried", (json_int_t)a->retried[RCV_AM],
			 "webhook", "sent", (json_int_t)a->sent[RCV_HOOK],
			 "failed", (json_int_t)a->failed[RCV_HOOK],
			 "dropped", (json_int_t)a->dropped[RCV_HOOK],
			 "retried", (json_int_t)a->retried[RCV_HOOK],
			 "not_kept", (json_int_t)a->overflow,
			 "suppressed", (json_int_t)ts.suppressed,
			 "drain", "enabled", c->drain ? 1 : 0,
			 "max_per_hour", (json_int_t)c->drain_max_per_hour,
			 "max_nodes", (json_int_t)c->drain_max_nodes,
			 "scontrol", c->scontrol, "verify", c->drain_verify,
			 "started", (json_int_t)ds.started, "ok", (json_int_t)ds.ok,
			 "failed", (json_int_t)ds.failed,
			 "rate_limited", (json_int_t)(a->drains_limited + ds.limited),
			 "capped", (json_int_t)ds.capped, "healthy", (json_int_t)ds.healthy,
			 "skipped", (json_int_t)a->drains_skipped);
	return root;
}

/* ---- the numbers, for GET /metrics --------------------------------------------------- */

size_t
ld_alert_kinds(const enum judge_kind **kinds)
{
	*kinds = all_kinds;
	return NKINDS;
}

const char *
ld_alert_receiver_name(int r)
{
	return r >= 0 && r < NRCV ? rcv_names[r] : "?";
}

void
ld_alert_stats(const struct ld_alerts *a, struct ld_alert_stats *st)
{
	struct alerts_stats ts;
	struct ld_drain_stats ds;
	size_t i;
	int r;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < alerts_nopen(a->t); i++) {
		const struct alert *al = alerts_open(a->t, i);

		if ((size_t)al->f.kind <= JUDGE_KIND_MAX)
			st->open[al->f.kind]++;
	}
	memcpy(st->fired, a->fired, sizeof(st->fired));
	memcpy(st->resolved, a->resolved, sizeof(st->resolved));
	st->overflow = a->overflow;
	alerts_stats(a->t, &ts);
	st->suppressed = (unsigned long)ts.suppressed;
	for (r = 0; r < NRCV; r++) {
		st->sent[r] = a->sent[r];
		st->failed[r] = a->failed[r];
		st->dropped[r] = a->dropped[r];
		st->retried[r] = a->retried[r];
	}
	st->qlen = a->qlen;
	st->queue_max = a->d->cur->conf.alert_queue_max;
	ld_drain_stats(a->drains, &ds);
	st->drains_ok = ds.ok;
	st->drains_failed = ds.failed;
	st->drains_limited = a->drains_limited + ds.limited;
	st->drains_capped = ds.capped;
	st->drains_healthy = ds.healthy;
	st->drains_skipped = a->drains_skipped;
}

const struct alerts *
ld_alert_table(const struct ld_alerts *a)
{
	return a->t;
}

size_t
ld_alert_nsteps(const struct ld_alerts *a)
{
	const struct lstep *s;
	size_t n = 0;

	for (s = a->steps; s; s = s->next)
		n++;
	return n;
}

void
ld_alert_step_at(const struct ld_alerts *a, size_t i, struct ld_alert_step *out)
{
	const struct lstep *s = a->steps;

	while (s && i--)
		s = s->next;
	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	out->job = s->job;
	out->step = s->step;
	out->world = s->world;
	out->nranks = s->nranks;
	out->nlost = s->nlost;
	out->lag_max_s = s->lag_max_s;
	memcpy(out->findings, s->findings, sizeof(out->findings));
}

/* ---- life ---------------------------------------------------------------------------------- */

/* One comma-separated list of URLs (checked by the config) into out. */
static int
add_targets(const char *list, enum receiver rcv, struct target *out, int n)
{
	char item[LD_PATH];
	const char *p = list;

	while (*p && n < MAX_TARGETS) {
		size_t len = strcspn(p, ","), lead;
		struct target *t;

		snprintf(item, sizeof(item), "%.*s", (int)len, p);
		p += len + (p[len] == ',');
		lead = strspn(item, " \t");
		len = strlen(item);
		while (len > lead && strchr(" \t/", item[len - 1]))
			item[--len] = '\0';
		if (len == lead)
			continue;
		t = &out[n++];
		t->rcv = rcv;
		/* An Alertmanager is given by its base URL, as its clients
		 * take it; a URL that names the API already is taken as is. */
		if (rcv == RCV_AM && (len - lead < 14 || strcmp(item + len - 14, "/api/v2/alerts") != 0))
			snprintf(t->url, sizeof(t->url), "%s/api/v2/alerts", item + lead);
		else
			snprintf(t->url, sizeof(t->url), "%s", item + lead);
		alerttext_url_public(t->pub, sizeof(t->pub), t->url);
	}
	return n;
}

/* The targets of the current config (read at each send: a reload changes
 * them without a word to this file). */
static int
targets_of(const struct ld_conf *c, struct target *out)
{
	return add_targets(c->webhook_url, RCV_HOOK, out,
			   add_targets(c->alertmanager_url, RCV_AM, out, 0));
}

struct ld_alerts *
ld_alert_new(struct ld *d)
{
	struct ld_alerts *a = calloc(1, sizeof(*a));
	pl_err_t err;
	int r;

	if (!a)
		return NULL;
	a->d = d;
	pl_err_clear(&err);
	a->t = alerts_new(LD_ALERT_MAX_OPEN, &err);
	a->kick = evtimer_new(d->base, on_kick, a);
	a->drains = ld_drain_new(d);
	if (!a->t || !a->kick || !a->drains) {
		ld_alert_free(a);
		return NULL;
	}
	for (r = 0; r < NRCV; r++)
		a->rl_fail[r].interval_ms = 10000;
	a->rl_drop.interval_ms = a->rl_over.interval_ms = 10000;
	return a;
}

void
ld_alert_free(struct ld_alerts *a)
{
	struct ainfo *i;
	struct lstep *s;
	size_t k;

	if (!a)
		return;
	while (a->q) {
		if (a->q->xfer && a->d->curl)
			ld_http_cancel(a->d->curl, a->q->xfer);
		dlv_remove(a, a->q);
	}
	ld_drain_free(a->drains);
	while ((i = a->open) != NULL) {
		a->open = i->next;
		ainfo_free(i);
	}
	for (k = 0; k < ALERTS_RECENT; k++)
		ainfo_free(a->recent[k]);
	while ((s = a->steps) != NULL) {
		a->steps = s->next;
		free(s);
	}
	if (a->kick)
		event_free(a->kick);
	alerts_free(a->t);
	free(a);
}
