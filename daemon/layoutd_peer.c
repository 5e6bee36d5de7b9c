/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The peers (layoutd_peer.h): node summaries to each step's leader, the
 * leader's view of the whole step, the judge over it.
 *
 * munge on a worker thread.  munge_encode() and munge_decode() talk to the
 * local munged over its unix socket and take tens of microseconds when it
 * answers; but libmunge has no timeout of its own and retries with sleeps
 * when munged is busy or gone (a refused connect is retried for about two
 * seconds, a failed exchange up to five times), all inside the call.  On
 * the event loop that would stall placements and every peer for seconds
 * at a time, so every munge call goes to one worker thread: the loop
 * queues a job (a bounded queue: MJ_QUEUE_MAX jobs, a summary past it is
 * refused as busy) and the worker's answers come back through a pipe the
 * loop watches.  A request whose credential is being checked is answered
 * from there (ld_conns_request_defer).  The credentials made here live
 * munge_ttl_s (default 10 s): enough for a delivery and clock skew between
 * nodes, short enough that munged's replay cache stays small at 2,048
 * summaries a second.
 *
 * Delivery.  Per step and peer there is one link with at most one
 * delivery in flight (the credential being made, then the POST through
 * layoutd_curl.h) and one newer summary waiting: a summary is full state,
 * so a newer one replaces an undelivered one and nothing queues behind a
 * slow peer.  The step's nodes are tried in their order: a node that
 * failed peer_fail_intervals deliveries in a row is skipped (but still
 * sent the summary, so it is found again when it answers), and the first
 * one not skipped is the target; reaching this node itself, the summary is
 * handed in directly.  A node leads a step while summaries for it come
 * (its own included while it is its own target): nodes[0] normally, the
 * next reachable node when followers cannot reach it.  That one lets go
 * as soon as its own summaries go to a node before it again, and hands
 * its alerts over (layoutd_alert.c) unless the step ended.
 *
 * The leader keeps per node the last summary (its ranks copied into one
 * array of judge_rank, rebased on receipt), when it came, its boot_id and
 * msg_seq; a summary not newer than the held one from the same daemon
 * start is refused as stale.  A node silent for peer_lost_s is lost (its
 * ranks not present for the judge, which reports the node); a node whose
 * last summary had every rank exited is done, never lost.  A restarted
 * leader has nothing to rebuild: the next summaries are the whole state.
 */
#define _GNU_SOURCE		/* pipe2 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <jansson.h>
#include <munge.h>

#include "buf.h"
#include "detect.h"
#include "judge.h"
#include "layoutd.h"
#include "layoutd_conn.h"
#include "layoutd_curl.h"
#include "layoutd_peer.h"
#include "layoutd_watch.h"
#include "sha256.h"
#include "summary.h"
#include "topo.h"

#define NAXES SUM_NAXES
#define NS UINT64_C(1000000000)
#define MJ_QUEUE_MAX 4096		/* munge jobs waiting for the worker */
#define CRED_MAX 4096			/* the longest credential taken */
#define LEAD_MAX_FINDINGS 256		/* findings kept per step and round */
#define REFUSAL_LOG_MS 10000.0		/* one line per reason this often */
#define PEER_CONNECT_MS 1000L		/* connecting to a peer, at most */
#define WHY_LEN 200
/* GET /v1/watch/step gives at most this many ranks an answer: building a
 * 16,384-rank step's whole answer (39 MB) held the loop 1.4 s. */
#define STEP_PAGE 1024
#define STEP_QUERY_HELP "want the query job=JOBID&step=STEPID, optionally &from=RANK&count=N " \
	"(a page of at most 1024 ranks)"

static const char *const axes[NAXES] = { "tp", "cp", "ep", "dp", "pp" };

static const char *const refusal_names[LD_NREFUSE] = {
	"request", "unauthenticated", "replayed", "expired", "credential", "uid", "checksum",
	"summary", "step", "stale", "busy",
};

/* ---- the state ----------------------------------------------------------- */

/* name or rank -> dense index, open addressing; slot = index + 1 */
struct ixtab {
	uint32_t *slot;
	size_t size, used;
};

/* A node of a step led here. */
struct lnode {
	char name[LD_PEER_NODE_LEN];
	bool heard;		/* a summary came */
	bool done;		/* in its last summary every rank had exited */
	bool lost;		/* as of the last round */
	uint64_t last_ns;	/* when its last summary came */
	uint64_t boot_id, msg_seq;
	uint64_t real_ns;	/* its sender_real_ns */
	uint32_t interval_ms;
	uint32_t *rix;		/* its ranks: indices into rk */
	size_t nrix;
	unsigned long summaries;
};

struct ld_lead {
	struct ld_lead *next;
	uint64_t job, step;
	uint32_t uid, world, size[NAXES];
	bool ordered;			/* the node order is known: nodes[0] leads */
	char self[LD_PEER_NODE_LEN];
	struct lnode *nodes;
	size_t nnodes, capnodes;
	struct ixtab node_ix;
	struct judge_node *jn;		/* capnodes of them, for the judge */
	struct judge_rank *rk;		/* every rank heard of */
	size_t nrk, caprk;
	struct ixtab rank_ix;
	struct judge_state *js;
	struct judge_finding find[LEAD_MAX_FINDINGS];
	size_t nfind, nfind_total;
	struct judge_finding prev[LEAD_MAX_FINDINGS];
	size_t nprev;
	struct judge_end end;			/* the step being ended by signal */
	bool end_noted;				/* and that said in the log */
	uint64_t created_ns, recv_ns, own_ns;	/* made; last summary from a peer; own, as target */
	unsigned long rounds;
};

enum link_state { LINK_IDLE, LINK_ENCODING, LINK_POSTING };

/* The deliveries of one step's summaries to one node. */
struct plink {
	uint64_t id;			/* for the worker's answer */
	size_t k;			/* the node's place in the step's order */
	char node[LD_PEER_NODE_LEN];
	struct sstep *owner;
	struct ld_peers *peers;
	enum link_state state;
	uint64_t http;			/* the POST in flight */
	struct buf body;		/* the summary being delivered */
	struct buf next;		/* a newer one: replaces an undelivered one */
	bool has_next;
	unsigned fails;			/* failed deliveries in a row */
	unsigned long sent, failed;
	char why[WHY_LEN];		/* the last failure */
	uint64_t ok_ns;
};

/* This node's summaries of one step. */
struct sstep {
	struct sstep *next;
	uint64_t job, step;
	uint64_t seq;			/* msg_seq of the last summary */
	size_t target;			/* where they go (SIZE_MAX: none yet) */
	char target_name[LD_PEER_NODE_LEN];
	struct plink **links;
	size_t nlinks;
	bool final_sent;		/* the step ended and its last state went */
	bool off_noted;			/* said that peer_listen = no keeps it home */
	unsigned long mark;
};

/* What GET /v1/watch/step asks: the step and a page of its ranks. */
struct step_query {
	uint64_t job, step;
	uint64_t from;			/* the first rank shown */
	size_t count;			/* ranks shown at most */
};

enum mj_kind { MJ_ENCODE, MJ_DECODE };
enum mj_what { MJ_SUMMARY, MJ_STEP };

struct mjob {
	struct mjob *next;
	enum mj_kind kind;
	char socket[LD_PATH];
	int ttl;
	char *in;			/* ENCODE: the payload; DECODE: the credential */
	int merr;			/* munge_err_t */
	char why[WHY_LEN];
	char *out;			/* ENCODE: the credential; DECODE: the payload */
	size_t outlen;
	long uid;
	/* the loop's */
	uint64_t link_id;		/* ENCODE */
	enum mj_what what;		/* DECODE */
	struct evhttp_request *req;
	char *expect;			/* the payload the credential must carry */
	unsigned char *body;
	size_t len;
	uint64_t recv_ns;
	struct step_query sq;		/* MJ_STEP */
	char from[80];
};

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
	struct ld_peer_stats st;
	struct ld_ratelog rl[LD_NREFUSE];
	struct ld_ratelog rl_send;
};

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static uint64_t
real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static double
age_s(uint64_t now, uint64_t t)
{
	return t && now > t ? (double)(now - t) / 1e9 : 0.0;
}

const char *
ld_peer_refusal_name(enum ld_peer_refusal r)
{
	return (unsigned)r < LD_NREFUSE ? refusal_names[r] : "?";
}

/* peer_lost_s, or auto: three watch intervals, at least 5 s. */
static uint64_t
lost_ns(const struct ld_conf *c)
{
	uint64_t ms = (uint64_t)c->watch_interval_ms * 3;

	if (c->peer_lost_s > 0)
		return (uint64_t)c->peer_lost_s * NS;
	return (ms < 5000 ? 5000 : ms) * UINT64_C(1000000);
}

/* Fill err and return the HTTP status. */
static int __attribute__((format(printf, 3, 4)))
fail(pl_err_t *err, int status, const char *fmt, ...)
{
	char text[PL_ERR_TEXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pl_err_set(err, "%s", text);
	return status;
}

/* src into dst of n bytes, cut to fit (no printf on the per-summary path). */
static void
copy_str(char *dst, size_t n, const char *src)
{
	size_t len = strnlen(src, n - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

static uint64_t
fnv(const char *s)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return h;
}

static uint64_t
mix(int64_t r)
{
	uint64_t x = (uint64_t)r * UINT64_C(0x9e3779b97f4a7c15);

	return x ^ (x >> 29);
}

/* ---- the index tables ------------------------------------------------------ */

typedef bool (*ix_eq)(const struct ld_lead *l, uint32_t i, const void *key);
typedef uint64_t (*ix_hash)(const struct ld_lead *l, uint32_t i);

static long
ix_find(const struct ixtab *t, uint64_t h, ix_eq eq, const struct ld_lead *l, const void *key)
{
	size_t i;

	if (!t->size)
		return -1;
	for (i = h & (t->size - 1); t->slot[i]; i = (i + 1) & (t->size - 1))
		if (eq(l, t->slot[i] - 1, key))
			return (long)(t->slot[i] - 1);
	return -1;
}

/* Record entry ix (not in t yet); the table grows at half full.  0 or -1. */
static int
ix_add(struct ixtab *t, uint32_t ix, ix_hash hash, const struct ld_lead *l)
{
	size_t i;

	if ((t->used + 1) * 2 > t->size) {
		size_t size = t->size ? t->size * 2 : 64, k;
		uint32_t *slot = calloc(size, sizeof(*slot));

		if (!slot)
			return -1;
		for (k = 0; k < t->size; k++) {
			if (!t->slot[k])
				continue;
			for (i = hash(l, t->slot[k] - 1) & (size - 1); slot[i]; i = (i + 1) & (size - 1))
				;
			slot[i] = t->slot[k];
		}
		free(t->slot);
		t->slot = slot;
		t->size = size;
	}
	for (i = hash(l, ix) & (t->size - 1); t->slot[i]; i = (i + 1) & (t->size - 1))
		;
	t->slot[i] = ix + 1;
	t->used++;
	return 0;
}

static bool
node_eq(const struct ld_lead *l, uint32_t i, const void *key)
{
	return strcmp(l->nodes[i].name, key) == 0;
}

static uint64_t
node_hash(const struct ld_lead *l, uint32_t i)
{
	return fnv(l->nodes[i].name);
}

static bool
rank_eq(const struct ld_lead *l, uint32_t i, const void *key)
{
	return l->rk[i].st.rank == *(const int64_t *)key;
}

static uint64_t
rank_hash(const struct ld_lead *l, uint32_t i)
{
	return mix(l->rk[i].st.rank);
}

static long
node_find(const struct ld_lead *l, const char *name)
{
	return ix_find(&l->node_ix, fnv(name), node_eq, l, name);
}

static long
rank_find(const struct ld_lead *l, int64_t rank)
{
	return ix_find(&l->rank_ix, mix(rank), rank_eq, l, &rank);
}

/* The index of node `name`, added when new.  -1 when out of memory. */
static long
node_add(struct ld_lead *l, const char *name)
{
	long i = node_find(l, name);

	if (i >= 0)
		return i;
	if (l->nnodes == l->capnodes) {
		size_t cap = l->capnodes ? l->capnodes * 2 : 8;
		struct lnode *n = realloc(l->nodes, cap * sizeof(*n));
		struct judge_node *jn;

		if (!n)
			return -1;
		l->nodes = n;
		jn = realloc(l->jn, cap * sizeof(*jn));
		if (!jn)
			return -1;
		l->jn = jn;
		l->capnodes = cap;
	}
	memset(&l->nodes[l->nnodes], 0, sizeof(l->nodes[0]));
	copy_str(l->nodes[l->nnodes].name, sizeof(l->nodes[0].name), name);
	if (ix_add(&l->node_ix, (uint32_t)l->nnodes, node_hash, l) < 0)
		return -1;
	return (long)l->nnodes++;
}

/* ---- the worker: munge off the loop --------------------------------------- */

static void
mjob_free(struct mjob *j)
{
	if (j) {
		free(j->in);
		free(j->out);
		free(j->expect);
		free(j->body);
		free(j);
	}
}

static void
munge_run(struct mjob *j)
{
	munge_ctx_t ctx = munge_ctx_create();
	munge_err_t e;
	const char *why;
	void *buf = NULL;
	int len = 0;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;

	if (!ctx) {
		j->merr = EMUNGE_NO_MEMORY;
		snprintf(j->why, sizeof(j->why), "out of memory");
		return;
	}
	e = EMUNGE_SUCCESS;
	if (j->socket[0])
		e = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, j->socket);
	if (e == EMUNGE_SUCCESS && j->kind == MJ_ENCODE) {
		char *cred = NULL;

		e = munge_ctx_set(ctx, MUNGE_OPT_TTL, j->ttl);
		if (e == EMUNGE_SUCCESS)
			e = munge_encode(&cred, ctx, j->in, (int)strlen(j->in));
		j->out = cred;
	} else if (e == EMUNGE_SUCCESS) {
		e = munge_decode(j->in, ctx, &buf, &len, &uid, &gid);
		if (buf && len >= 0 && (j->out = malloc((size_t)len + 1)) != NULL) {
			memcpy(j->out, buf, (size_t)len);
			j->out[len] = '\0';
			j->outlen = (size_t)len;
		}
		free(buf);
		j->uid = (long)uid;
	}
	j->merr = (int)e;
	if (e != EMUNGE_SUCCESS) {
		why = munge_ctx_strerror(ctx);
		snprintf(j->why, sizeof(j->why), "%s", why ? why : munge_strerror(e));
	}
	munge_ctx_destroy(ctx);
}

static void *
worker_main(void *arg)
{
	struct ld_peers *p = arg;
	struct mjob *j;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && !p->todo)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->stop)
			break;
		j = p->todo;
		p->todo = j->next;
		if (!p->todo)
			p->todo_tail = NULL;
		p->ntodo--;
		pthread_mutex_unlock(&p->mu);
		munge_run(j);
		pthread_mutex_lock(&p->mu);
		j->next = NULL;
		if (p->done_tail) {
			p->done_tail->next = j;	/* the loop is woken already */
		} else {
			p->done = j;
			/* A full pipe wakes the loop already; nothing else fails. */
			if (write(p->wake[1], "", 1) < 0)
				p->wake_failed++;
		}
		p->done_tail = j;
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Queue j for the worker (which owns it then).  -1 when the queue is full
 * or the worker is gone: j stays the caller's. */
static int
worker_submit(struct ld_peers *p, struct mjob *j)
{
	int rv = -1;

	pthread_mutex_lock(&p->mu);
	if (p->th_started && !p->stop && p->ntodo < MJ_QUEUE_MAX) {
		j->next = NULL;
		if (p->todo_tail)
			p->todo_tail->next = j;
		else
			p->todo = j;
		p->todo_tail = j;
		/* The worker waits only when the queue was empty. */
		if (p->ntodo++ == 0)
			pthread_cond_signal(&p->cv);
		rv = 0;
	}
	pthread_mutex_unlock(&p->mu);
	return rv;
}

static struct mjob *
mjob_new(struct ld_peers *p, enum mj_kind kind, const char *in)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct mjob *j = calloc(1, sizeof(*j));

	if (!j || !(j->in = strdup(in))) {
		free(j);
		return NULL;
	}
	j->kind = kind;
	copy_str(j->socket, sizeof(j->socket), c->munge_socket);
	j->ttl = (int)c->munge_ttl_s;
	return j;
}

/* ---- replies on the peer listener ------------------------------------------ */

static void
reply_json(struct evhttp_request *req, int status, json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	struct buf b = BUF_INIT;

	if (text) {
		buf_adds(&b, text);
		buf_adds(&b, "\n");
	}
	ld_reply(req, status, LD_CT_JSON, b.bad ? NULL : b.s, b.len);
	buf_free(&b);
	free(text);
	json_decref(o);
}

static void
reply_error(struct evhttp_request *req, int status, const char *msg)
{
	reply_json(req, status, json_pack("{s:s}", "error", msg));
}

/* Where req came from, for the log. */
static void
req_from(struct evhttp_request *req, char *out, size_t n)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	char *host = NULL;
	ev_uint16_t port = 0;

	snprintf(out, n, "?");
	if (evcon) {
		evhttp_connection_get_peer(evcon, &host, &port);
		if (host)
			snprintf(out, n, "%s:%u", host, (unsigned)port);
	}
}

/* Count, log (rate-limited per reason) and answer a refusal. */
static void __attribute__((format(printf, 6, 7)))
refuse(struct ld_peers *p, struct evhttp_request *req, const char *from,
       enum ld_peer_refusal r, int status, const char *fmt, ...)
{
	char msg[PL_ERR_TEXT];
	struct buf eb = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->st.refused[r]++;
	ld_ratelog(&p->d->log, &p->rl[r], "peer: refused (%s, %d) from %s: %s (%lu so far)",
		   refusal_names[r], status, from, ld_escape(&eb, msg, 300), p->st.refused[r]);
	buf_free(&eb);
	if (req)
		reply_error(req, status, msg);
}

/* ---- the leader's state ------------------------------------------------------ */

static void
lead_free(struct ld_lead *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->nnodes; i++)
		free(l->nodes[i].rix);
	free(l->nodes);
	free(l->jn);
	free(l->node_ix.slot);
	free(l->rk);
	free(l->rank_ix.slot);
	judge_state_free(l->js);
	free(l);
}

static struct ld_lead *
lead_find(const struct ld_peers *p, uint64_t job, uint64_t step)
{
	struct ld_lead *l;

	for (l = p->leads; l; l = l->next)
		if (l->job == job && l->step == step)
			return l;
	return NULL;
}

/*
 * A new step to lead, shaped by h; its node order from the registration
 * when this node has one (wi >= 0), else learnt as summaries come.  NULL
 * with *status and err when it cannot be.
 */
static struct ld_lead *
lead_new(struct ld_peers *p, const struct sum_header *h, long wi, uint64_t now, int *status,
	 pl_err_t *err)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct ld_watch_step ws;
	struct ld_lead *l;
	size_t k;

	if (p->nleads >= c->watch_max_steps) {
		*status = 503;
		pl_err_set(err, "job %" PRIu64 ".%" PRIu64 ": %ld steps are led here already "
			   "(watch_max_steps)", h->job_id, h->step_id, p->nleads);
		return NULL;
	}
	if (h->world > (uint64_t)c->peer_max_ranks) {
		*status = 507;
		pl_err_set(err, "job %" PRIu64 ".%" PRIu64 ": world %" PRIu32 " is more than "
			   "peer_max_ranks = %ld", h->job_id, h->step_id, h->world, c->peer_max_ranks);
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		goto oom;
	l->job = h->job_id;
	l->step = h->step_id;
	l->uid = h->uid;
	l->world = h->world;
	memcpy(l->size, h->size, sizeof(l->size));
	l->created_ns = now;
	snprintf(l->self, sizeof(l->self), "%s", c->node_name);
	if (wi >= 0) {
		ld_watch_step_at(p->d->watch, (size_t)wi, &ws);
		if (ws.known && (ws.world != h->world || ws.uid != h->uid ||
				 memcmp(ws.size, h->size, sizeof(ws.size)) != 0)) {
			lead_free(l);
			*status = 409;
			pl_err_set(err, "job %" PRIu64 ".%" PRIu64 " from node %s: uid %" PRIu32 ", world %"
				   PRIu32 " or layout other than the step registered here", h->job_id,
				   h->step_id, h->node, h->uid, h->world);
			return NULL;
		}
		snprintf(l->self, sizeof(l->self), "%s", ws.node);
		if (ws.known) {
			l->ordered = true;
			for (k = 0; k < ws.nnodes; k++)
				if (node_add(l, ld_watch_step_node(p->d->watch, (size_t)wi, k)) < 0)
					goto oom;
		}
	}
	l->js = judge_state_new(l->world, err);
	if (!l->js) {
		*status = 500;
		lead_free(l);
		return NULL;
	}
	l->next = p->leads;
	p->leads = l;
	p->nleads++;
	return l;
oom:
	lead_free(l);
	*status = 500;
	pl_err_set(err, "out of memory");
	return NULL;
}

/* Whether the summary h from node `from` fits step l; else why (409). */
static bool
lead_fits(const struct ld_lead *l, const struct sum_header *h, char *why, size_t n)
{
	int a;

	if (h->uid != l->uid) {
		snprintf(why, n, "uid %" PRIu32 ", not the step's %" PRIu32, h->uid, l->uid);
		return false;
	}
	if (h->world != l->world) {
		snprintf(why, n, "world %" PRIu32 ", not the step's %" PRIu32, h->world, l->world);
		return false;
	}
	for (a = 0; a < NAXES; a++)
		if (h->size[a] != l->size[a]) {
			snprintf(why, n, "%s %" PRIu32 ", not the step's %" PRIu32, axes[a], h->size[a],
				 l->size[a]);
			return false;
		}
	if (l->ordered && node_find(l, h->node) < 0) {
		snprintf(why, n, "node %s is not one of the step's %zu nodes", h->node, l->nnodes);
		return false;
	}
	return true;
}

/*
 * Take node ni's n ranks into l: the ranks it no longer names are not
 * present; a rank another live node holds is refused (409).  0, or the
 * HTTP status with err.
 */
static int
lead_take_ranks(struct ld_peers *p, struct ld_lead *l, long ni, const struct detect_rank *r,
		const struct sum_rank_info *info, size_t n, pl_err_t *err)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct lnode *nd = &l->nodes[ni];
	size_t i, fresh = 0;
	uint32_t *rix;
	long x;

	for (i = 0; i < n; i++) {
		x = rank_find(l, r[i].rank);
		if (x < 0) {
			fresh++;
			continue;
		}
		if ((long)l->rk[x].node != ni && l->rk[x].present && !l->nodes[l->rk[x].node].lost)
			return fail(err, 409, "rank %" PRId64 " is node %s's", r[i].rank,
				    l->nodes[l->rk[x].node].name);
	}
	if (l->nrk + fresh > (size_t)c->peer_max_ranks)
		return fail(err, 507, "%zu ranks would be more than peer_max_ranks = %ld",
			    l->nrk + fresh, c->peer_max_ranks);
	if (l->nrk + fresh > l->caprk) {
		size_t cap = l->caprk ? l->caprk : 64;
		struct judge_rank *rk;

		while (cap < l->nrk + fresh)
			cap *= 2;
		rk = realloc(l->rk, cap * sizeof(*rk));
		if (!rk)
			return fail(err, 500, "out of memory");
		l->rk = rk;
		l->caprk = cap;
	}
	rix = n ? malloc(n * sizeof(*rix)) : NULL;
	if (n && !rix)
		return fail(err, 500, "out of memory");
	for (i = 0; i < nd->nrix; i++)
		if ((long)l->rk[nd->rix[i]].node == ni)
			l->rk[nd->rix[i]].present = 0;
	for (i = 0; i < n; i++) {
		struct judge_rank *jr;

		x = rank_find(l, r[i].rank);
		if (x < 0) {
			x = (long)l->nrk++;
			l->rk[x].st.rank = r[i].rank;
			if (ix_add(&l->rank_ix, (uint32_t)x, rank_hash, l) < 0) {
				l->nrk--;
				free(rix);
				return fail(err, 500, "out of memory");
			}
		}
		jr = &l->rk[x];
		memcpy(&jr->st, &r[i], offsetof(struct detect_rank, comm) +
		       r[i].ncomm * sizeof(r[i].comm[0]));
		jr->node = (uint32_t)ni;
		jr->gpu = info[i].gpu;
		copy_str(jr->nic, sizeof(jr->nic), info[i].nic);
		memcpy(jr->co, info[i].co, sizeof(jr->co));
		jr->present = 1;
		rix[i] = (uint32_t)x;
	}
	free(nd->rix);
	nd->rix = rix;
	nd->nrix = n;
	return 0;
}

/*
 * One summary of len bytes, come at recv_ns: over the network (own false:
 * the sender's node must be another) or this node's own, handed in
 * (target: this node is its own target, so the step is led here).
 * Returns the HTTP status (200, 409 stale or not this step, 422 not a
 * summary, 5xx) with err and *r the refusal reason.
 */
static int
take_summary(struct ld_peers *p, const void *data, size_t len, uint64_t recv_ns, bool own,
	     bool target, enum ld_peer_refusal *r, pl_err_t *err)
{
	struct sum_rank_info *info = NULL;
	struct detect_rank *ranks = NULL;
	struct ld_lead *l;
	struct lnode *nd;
	struct sum_header h;
	char why[WHY_LEN];
	size_t n = 0, i;
	int status = 422;
	bool done = true;
	long ni, wi;

	*r = LD_REFUSE_SUMMARY;
	if (sum_decode(data, len, recv_ns, &h, &ranks, &info, &n, err) < 0)
		return 422;
	*r = LD_REFUSE_STEP;
	status = 409;
	l = lead_find(p, h.job_id, h.step_id);
	if (!l) {
		struct ld_watch_step ws;

		wi = ld_watch_step_find(p->d->watch, h.job_id, h.step_id);
		if (wi >= 0)
			ld_watch_step_at(p->d->watch, (size_t)wi, &ws);
		if (!own && wi >= 0 && strcmp(h.node, ws.node) == 0) {
			pl_err_set(err, "job %" PRIu64 ".%" PRIu64 ": a summary from node %s, which is this "
				   "node", h.job_id, h.step_id, h.node);
			goto out;
		}
		l = lead_new(p, &h, wi, recv_ns, &status, err);
		if (!l) {
			*r = status == 503 ? LD_REFUSE_BUSY : LD_REFUSE_STEP;
			goto out;
		}
		ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": leading it here (%s), %" PRIu32
		       " ranks%s%s", l->job, l->step, own ? "this node's own summary" : h.node, l->world,
		       l->ordered ? ", leader " : ", node order not known here",
		       l->ordered ? l->nodes[0].name : "");
	}
	if (!own && strcmp(h.node, l->self) == 0) {
		pl_err_set(err, "job %" PRIu64 ".%" PRIu64 ": a summary from node %s, which is this node",
			   h.job_id, h.step_id, h.node);
		goto out;
	}
	if (!lead_fits(l, &h, why, sizeof(why))) {
		pl_err_set(err, "job %" PRIu64 ".%" PRIu64 " from node %s: %s", h.job_id, h.step_id,
			   h.node, why);
		goto out;
	}
	ni = node_add(l, h.node);
	if (ni < 0) {
		status = 500;
		pl_err_set(err, "out of memory");
		goto out;
	}
	nd = &l->nodes[ni];
	if (nd->heard && nd->boot_id == h.boot_id && h.msg_seq <= nd->msg_seq) {
		*r = LD_REFUSE_STALE;
		pl_err_set(err, "job %" PRIu64 ".%" PRIu64 " from node %s: msg_seq %" PRIu64 " is not "
			   "newer than %" PRIu64 ", held from the same start of its layoutd", h.job_id,
			   h.step_id, h.node, h.msg_seq, nd->msg_seq);
		goto out;
	}
	status = lead_take_ranks(p, l, ni, ranks, info, n, err);
	if (status != 0) {
		if (status >= 500)
			*r = LD_REFUSE_BUSY;
		goto out;
	}
	nd = &l->nodes[ni];
	for (i = 0; i < n; i++)
		done = done && ranks[i].exited;
	nd->heard = true;
	nd->done = n > 0 && done;
	nd->last_ns = recv_ns;
	nd->boot_id = h.boot_id;
	nd->msg_seq = h.msg_seq;
	nd->real_ns = h.sender_real_ns;
	nd->interval_ms = h.interval_ms;
	nd->summaries++;
	if (!own)
		l->recv_ns = recv_ns;
	else if (target)
		l->own_ns = recv_ns;
	status = 200;
out:
	free(ranks);
	free(info);
	return status;
}

/* ---- the peer listener: POST /v1/peer/summary, GET /v1/watch/step ---------- */

static void
summary_checked(struct ld_peers *p, struct mjob *j)
{
	const struct ld_conf *c = &p->d->cur->conf;
	enum ld_peer_refusal r;
	pl_err_t err;
	int status;

	if (j->merr != EMUNGE_SUCCESS) {
		r = j->merr == EMUNGE_CRED_REPLAYED ? LD_REFUSE_REPLAYED :
		    j->merr == EMUNGE_CRED_EXPIRED || j->merr == EMUNGE_CRED_REWOUND ?
		    LD_REFUSE_EXPIRED : LD_REFUSE_CRED;
		refuse(p, j->req, j->from, r, 403, "POST /v1/peer/summary: the munge credential is "
		       "refused: %s", j->why);
		return;
	}
	if (j->uid != 0 && (c->slurm_uid < 0 || j->uid != c->slurm_uid)) {
		refuse(p, j->req, j->from, LD_REFUSE_UID, 403, "POST /v1/peer/summary: the credential "
		       "is uid %ld's: want root's or slurm_user's (%s)", j->uid,
		       c->slurm_user[0] ? c->slurm_user : "none set");
		return;
	}
	if (!j->out || j->outlen != strlen(j->expect) || memcmp(j->out, j->expect, j->outlen) != 0) {
		refuse(p, j->req, j->from, LD_REFUSE_CHECKSUM, 403, "POST /v1/peer/summary: the "
		       "credential's payload is not the SHA-256 of the body (%s)", j->expect);
		return;
	}
	pl_err_clear(&err);
	status = take_summary(p, j->body, j->len, j->recv_ns, false, false, &r, &err);
	if (status != 200) {
		refuse(p, j->req, j->from, r, status, "POST /v1/peer/summary: %s", err.text);
		return;
	}
	p->st.accepted++;
	reply_json(j->req, 200, json_pack("{s:s}", "status", "ok"));
}


static void
step_checked(struct ld_peers *p, struct mjob *j)
{
	const struct ld_conf *c = &p->d->cur->conf;
	bool all;
	json_t *o = NULL;
	pl_err_t err;
	int status;

	if (j->merr != EMUNGE_SUCCESS) {
		refuse(p, j->req, j->from, j->merr == EMUNGE_CRED_REPLAYED ? LD_REFUSE_REPLAYED :
		       LD_REFUSE_CRED, 403, "GET /v1/watch/step: the munge credential is refused: %s",
		       j->why);
		return;
	}
	if (!j->out || j->outlen != strlen(j->expect) || memcmp(j->out, j->expect, j->outlen) != 0) {
		refuse(p, j->req, j->from, LD_REFUSE_CHECKSUM, 403, "GET /v1/watch/step: the "
		       "credential's payload is not the request line '%s'", j->expect);
		return;
	}
	all = j->uid == 0 || (c->slurm_uid >= 0 && j->uid == c->slurm_uid);
	pl_err_clear(&err);
	status = ld_peer_step_json(p, j->sq.job, j->sq.step, j->sq.from, j->sq.count, all, j->uid,
				   &o, &err);
	if (status == 200)
		reply_json(j->req, 200, o);
	else
		reply_error(j->req, status, err.text);
}

/* The worker's answers, on the loop. */
static void link_encoded(struct ld_peers *p, struct mjob *j);

static void
on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct ld_peers *p = arg;
	struct mjob *j, *next;
	char drain[256];

	(void)what;
	while (read(fd, drain, sizeof(drain)) > 0)
		;
	pthread_mutex_lock(&p->mu);
	j = p->done;
	p->done = p->done_tail = NULL;
	pthread_mutex_unlock(&p->mu);
	for (; j; j = next) {
		next = j->next;
		if (j->kind == MJ_ENCODE)
			link_encoded(p, j);
		else if (j->what == MJ_SUMMARY)
			summary_checked(p, j);
		else
			step_checked(p, j);
		mjob_free(j);
	}
}

/* Hand a checked request's job to the worker: answered from there. */
static void
defer_to_worker(struct ld_peers *p, struct evhttp_request *req, struct mjob *j, const char *what)
{
	if (worker_submit(p, j) < 0) {
		refuse(p, req, j->from, LD_REFUSE_BUSY, 503, "%s: %d credentials are waiting to be "
		       "checked already: try again", what, MJ_QUEUE_MAX);
		mjob_free(j);
		return;
	}
	ld_conns_request_defer(p->conns);
}

static const char *
credential(struct evhttp_request *req)
{
	const char *v = evhttp_find_header(evhttp_request_get_input_headers(req), "X-PL-Munge");

	return v && *v && strlen(v) <= CRED_MAX ? v : NULL;
}

static void
do_summary(struct ld_peers *p, struct evhttp_request *req, const char *from)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	char hex[SHA256_HEX_LEN];
	const char *cred = credential(req);
	struct mjob *j;

	p->st.received++;
	if (!cred) {
		refuse(p, req, from, LD_REFUSE_UNAUTH, 401, "POST /v1/peer/summary: no X-PL-Munge "
		       "header of at most %d bytes: want a munge credential of root or slurm_user "
		       "whose payload is the SHA-256 of the body, in lowercase hex", CRED_MAX);
		return;
	}
	if (len == 0) {
		refuse(p, req, from, LD_REFUSE_REQUEST, 400, "POST /v1/peer/summary: empty body: want "
		       "a node summary");
		return;
	}
	j = mjob_new(p, MJ_DECODE, cred);
	if (j) {
		j->body = malloc(len);
		if (j->body && evbuffer_copyout(in, j->body, len) != (ev_ssize_t)len) {
			free(j->body);
			j->body = NULL;
		}
		if (j->body)
			j->expect = strdup(sha256_hex_of(j->body, len, hex));
	}
	if (!j || !j->body || !j->expect) {
		mjob_free(j);
		reply_error(req, 500, "out of memory");
		return;
	}
	j->what = MJ_SUMMARY;
	j->len = len;
	j->req = req;
	j->recv_ns = mono_ns();
	copy_str(j->from, sizeof(j->from), from);
	defer_to_worker(p, req, j, "POST /v1/peer/summary");
}

/* "job=J&step=S", optionally "&from=RANK&count=N" (the page of ranks), in
 * any order and nothing else, each a decimal; count 1 to STEP_PAGE. */
static int
step_query(const char *query, struct step_query *sq)
{
	static const char *const names[4] = { "job", "step", "from", "count" };
	struct evkeyvalq q;
	struct evkeyval *kv;
	uint64_t v4[4] = { 0, 0, 0, STEP_PAGE };
	int seen = 0, i;

	TAILQ_INIT(&q);
	if (!query || evhttp_parse_query_str(query, &q) < 0)
		return -1;
	TAILQ_FOREACH(kv, &q, next) {
		char *end = NULL;
		unsigned long long v;

		for (i = 0; i < 4 && strcmp(kv->key, names[i]) != 0; i++)
			;
		errno = 0;
		v = strtoull(kv->value, &end, 10);
		if (i == 4 || (seen & (1 << i)) || *kv->value < '0' || *kv->value > '9' || *end ||
		    errno || v > (unsigned long long)INT64_MAX) {
			seen = -1;
			break;
		}
		seen |= 1 << i;
		v4[i] = (uint64_t)v;
	}
	evhttp_clear_headers(&q);
	if (seen < 0 || (seen & 3) != 3 || v4[3] < 1 || v4[3] > STEP_PAGE)
		return -1;
	sq->job = v4[0];
	sq->step = v4[1];
	sq->from = v4[2];
	sq->count = (size_t)v4[3];
	return 0;
}

static void
do_step_get(struct ld_peers *p, struct evhttp_request *req, const char *from)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *cred = credential(req);
	struct buf line = BUF_INIT;
	struct step_query sq;
	struct mjob *j;

	if (step_query(uri ? evhttp_uri_get_query(uri) : NULL, &sq) < 0) {
		reply_error(req, 400, "GET /v1/watch/step: " STEP_QUERY_HELP);
		return;
	}
	if (!cred) {
		refuse(p, req, from, LD_REFUSE_UNAUTH, 401, "GET /v1/watch/step over TCP: no "
		       "X-PL-Munge header: want a munge credential whose payload is the request "
		       "line, 'GET %s'", evhttp_request_get_uri(req));
		return;
	}
	buf_printf(&line, "GET %s", evhttp_request_get_uri(req));
	j = mjob_new(p, MJ_DECODE, cred);
	if (!j || line.bad || !(j->expect = buf_take(&line))) {
		buf_free(&line);
		mjob_free(j);
		reply_error(req, 500, "out of memory");
		return;
	}
	j->what = MJ_STEP;
	j->req = req;
	j->sq = sq;
	copy_str(j->from, sizeof(j->from), from);
	defer_to_worker(p, req, j, "GET /v1/watch/step");
}

static void
on_peer_request(struct evhttp_request *req, void *arg)
{
	struct ld_peers *p = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	enum evhttp_cmd_type m = evhttp_request_get_command(req);
	char from[80], cl[PL_CLIP_BUF];
	struct evkeyvalq *oh = evhttp_request_get_output_headers(req);

	ld_conns_request_begin(p->conns, req);
	req_from(req, from, sizeof(from));
	if (path && strcmp(path, "/v1/peer/summary") == 0) {
		if (m == EVHTTP_REQ_POST) {
			do_summary(p, req, from);
		} else {
			evhttp_add_header(oh, "Allow", "POST");
			refuse(p, req, from, LD_REFUSE_REQUEST, 405, "/v1/peer/summary: method not "
			       "allowed (allowed: POST)");
		}
	} else if (path && strcmp(path, "/v1/watch/step") == 0) {
		if (m == EVHTTP_REQ_GET) {
			do_step_get(p, req, from);
		} else {
			evhttp_add_header(oh, "Allow", "GET");
			refuse(p, req, from, LD_REFUSE_REQUEST, 405, "/v1/watch/step: method not allowed "
			       "(allowed: GET)");
		}
	} else {
		refuse(p, req, from, LD_REFUSE_REQUEST, 404, "no such endpoint on the peer listener: "
		       "%s (endpoints: /v1/peer/summary, /v1/watch/step)",
		       pl_clip(path ? path : "/", cl, sizeof(cl)));
	}
	ld_conns_request_end(p->conns);
}

/* ---- delivering this node's summaries ---------------------------------------- */

static void
link_free(struct ld_peers *p, struct plink *k)
{
	if (!k)
		return;
	if (k->state == LINK_POSTING)
		ld_http_cancel(p->d->curl, k->http);
	buf_free(&k->body);
	buf_free(&k->next);
	free(k);
}

static void
sstep_free(struct ld_peers *p, struct sstep *ss)
{
	size_t i;

	if (!ss)
		return;
	for (i = 0; i < ss->nlinks; i++)
		link_free(p, ss->links[i]);
	free(ss->links);
	free(ss);
}

/* The link of ss to node k (name), made when new.  NULL when out of memory. */
static struct plink *
link_get(struct ld_peers *p, struct sstep *ss, size_t k, const char *name)
{
	struct plink **v, *ln;
	size_t i;

	for (i = 0; i < ss->nlinks; i++)
		if (ss->links[i]->k == k)
			return ss->links[i];
	v = realloc(ss->links, (ss->nlinks + 1) * sizeof(*v));
	if (!v)
		return NULL;
	ss->links = v;
	ln = calloc(1, sizeof(*ln));
	if (!ln)
		return NULL;
	ln->id = ++p->next_link_id;
	ln->k = k;
	ln->owner = ss;
	ln->peers = p;
	snprintf(ln->node, sizeof(ln->node), "%s", name);
	ss->links[ss->nlinks++] = ln;
	return ln;
}

static struct plink *
link_by_id(struct ld_peers *p, uint64_t id)
{
	struct sstep *ss;
	size_t i;

	for (ss = p->sends; ss; ss = ss->next)
		for (i = 0; i < ss->nlinks; i++)
			if (ss->links[i]->id == id)
				return ss->links[i];
	return NULL;
}

static void link_start(struct ld_peers *p, struct plink *k);

/* A delivery ended: ok or why not.  The waiting summary goes next. */
static void
link_ended(struct ld_peers *p, struct plink *k, bool ok, const char *why)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct sstep *ss = k->owner;
	struct buf eb = BUF_INIT;

	k->state = LINK_IDLE;
	if (ok) {
		if (k->fails > 0)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": node %s takes the summaries "
			       "again (after %u failed)", ss->job, ss->step, k->node, k->fails);
		k->fails = 0;
		k->sent++;
		k->ok_ns = mono_ns();
		p->st.sent++;
	} else {
		k->failed++;
		p->st.send_failures++;
		snprintf(k->why, sizeof(k->why), "%s", why);
		if (k->fails++ == 0 || k->fails == (unsigned)c->peer_fail_intervals)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": a summary to node %s failed "
			       "(%u in a row, peer_fail_intervals %ld): %s", ss->job, ss->step, k->node,
			       k->fails, c->peer_fail_intervals, ld_escape(&eb, why, 300));
		buf_free(&eb);
	}
	if (k->has_next) {
		struct buf t = k->body;

		k->body = k->next;
		k->next = t;
		buf_free(&k->next);
		k->has_next = false;
		link_start(p, k);
	}
}

static void
on_posted(void *arg, const struct ld_http_result *r)
{
	struct plink *k = arg;
	char why[WHY_LEN];
	size_t n;

	if (r->status == 200) {
		link_ended(k->peers, k, true, "");
		return;
	}
	if (r->status) {
		n = (size_t)snprintf(why, sizeof(why), "HTTP %ld: %s", r->status, r->body ? r->body : "");
		if (n < sizeof(why) && n > 0 && why[n - 1] == '\n')
			why[n - 1] = '\0';
	} else {
		snprintf(why, sizeof(why), "%s", r->error);
	}
	link_ended(k->peers, k, false, why);
}

/* Where node `name`'s layoutd listens for peers: the map's address and
 * peer port for it when the map has them, else the name and peer_port. */
static void
peer_url(const struct ld_peers *p, const char *name, struct buf *url)
{
	const struct ld_conf *c = &p->d->cur->conf;
	const char *host = name;
	int port = c->peer_port;
	const char *a = NULL;
	int pp = 0;
	long i = topo_find_node(p->d->cur->map, name);

	if (i >= 0 && topo_node_peer(p->d->cur->map, i, &a, &pp) == 0) {
		if (a && *a)
			host = a;
		if (pp > 0)
			port = pp;
	}
	if (strchr(host, ':'))
		buf_printf(url, "http://[%s]:%d/v1/peer/summary", host, port);
	else
		buf_printf(url, "http://%s:%d/v1/peer/summary", host, port);
}

/* Deliver k->body: its credential first (the worker), then the POST. */
static void
link_start(struct ld_peers *p, struct plink *k)
{
	char hex[SHA256_HEX_LEN];
	struct mjob *j;

	j = mjob_new(p, MJ_ENCODE, sha256_hex_of(k->body.s, k->body.len, hex));
	if (!j) {
		link_ended(p, k, false, "out of memory");
		return;
	}
	j->link_id = k->id;
	if (worker_submit(p, j) < 0) {
		mjob_free(j);
		link_ended(p, k, false, "the munge queue is full");
		return;
	}
	k->state = LINK_ENCODING;
}

/* The credential for k's summary is made (or not): post it. */
static void
link_encoded(struct ld_peers *p, struct mjob *j)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct plink *k = link_by_id(p, j->link_id);
	struct buf url = BUF_INIT, hdr = BUF_INIT;
	const char *headers[2];
	struct ld_http_req rq;
	char why[WHY_LEN];
	pl_err_t err;

	if (!k || k->state != LINK_ENCODING)
		return;		/* the step went meanwhile */
	if (j->merr != EMUNGE_SUCCESS || !j->out) {
		snprintf(why, sizeof(why), "munge_encode: %.180s", j->why);
		link_ended(p, k, false, why);
		return;
	}
	peer_url(p, k->node, &url);
	buf_printf(&hdr, "X-PL-Munge: %s", j->out);
	headers[0] = buf_str(&hdr);
	headers[1] = NULL;
	memset(&rq, 0, sizeof(rq));
	rq.url = buf_str(&url);
	rq.content_type = "application/octet-stream";
	rq.body = k->body.s;
	rq.len = k->body.len;
	rq.headers = headers;
	rq.connect_ms = c->peer_timeout_ms / 2 < PEER_CONNECT_MS ? c->peer_timeout_ms / 2 :
			PEER_CONNECT_MS;
	rq.timeout_ms = c->peer_timeout_ms;
	rq.done = on_posted;
	rq.arg = k;
	pl_err_clear(&err);
	k->http = url.bad || hdr.bad ? 0 : ld_http_post(p->d->curl, &rq, &err);
	buf_free(&url);
	buf_free(&hdr);
	if (!k->http) {
		link_ended(p, k, false, err.text[0] ? err.text : "out of memory");
		return;
	}
	k->state = LINK_POSTING;
}

/* Send summary sum over k: now when k is idle, else after the delivery
 * in flight, replacing a summary that waited for it. */
static void
link_send(struct ld_peers *p, struct plink *k, const struct buf *sum)
{
	struct buf *dst = k->state == LINK_IDLE ? &k->body : &k->next;

	dst->len = 0;
	if (buf_add(dst, sum->s, sum->len) < 0) {
		buf_free(dst);
		if (k->state == LINK_IDLE)
			link_ended(p, k, false, "out of memory");
		return;
	}
	if (k->state == LINK_IDLE)
		link_start(p, k);
	else
		k->has_next = true;
}

static struct sstep *
sstep_get(struct ld_peers *p, uint64_t job, uint64_t step)
{
	struct sstep *ss;

	for (ss = p->sends; ss; ss = ss->next)
		if (ss->job == job && ss->step == step)
			return ss;
	ss = calloc(1, sizeof(*ss));
	if (!ss)
		return NULL;
	ss->job = job;
	ss->step = step;
	ss->target = SIZE_MAX;
	ss->next = p->sends;
	p->sends = ss;
	return ss;
}

/* This node's summary of watch step wi into out.  0, or -1 (logged). */
static int
build_summary(struct ld_peers *p, size_t wi, const struct ld_watch_step *ws, struct sstep *ss,
	      uint64_t now, struct buf *out)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct sum_header h;
	struct buf eb = BUF_INIT;
	size_t n;
	pl_err_t err;

	if (ws->ntasks > p->cap_scratch) {
		struct detect_rank *r = realloc(p->scratch, ws->ntasks * sizeof(*r));
		struct sum_rank_info *ri;

		if (r)
			p->scratch = r;
		ri = r ? realloc(p->scratch_info, ws->ntasks * sizeof(*ri)) : NULL;
		if (!ri) {
			ld_ratelog(&p->d->log, &p->rl_send, "peer: out of memory: no summary of job %"
				   PRIu64 ".%" PRIu64, ws->job_id, ws->step_id);
			return -1;
		}
		p->scratch_info = ri;
		p->cap_scratch = ws->ntasks;
	}
	n = ld_watch_step_ranks(p->d->watch, wi, p->scratch, p->scratch_info, p->cap_scratch);
	memset(&h, 0, sizeof(h));
	copy_str(h.node, sizeof(h.node), ws->node);
	h.job_id = ws->job_id;
	h.step_id = ws->step_id;
	h.uid = ws->uid;
	h.interval_ms = (uint32_t)c->watch_interval_ms;
	h.sender_now_ns = now;
	h.sender_real_ns = real_ns();
	h.msg_seq = ss->seq + 1;
	h.boot_id = p->boot_id;
	h.world = ws->world;
	memcpy(h.size, ws->size, sizeof(h.size));
	pl_err_clear(&err);
	out->len = 0;
	if (sum_encode(out, &h, p->scratch, p->scratch_info, n, &err) < 0) {
		ld_ratelog(&p->d->log, &p->rl_send, "peer: job %" PRIu64 ".%" PRIu64 ": no summary: %s",
			   ws->job_id, ws->step_id, ld_escape(&eb, err.text, 300));
		buf_free(&eb);
		return -1;
	}
	ss->seq++;
	return 0;
}

/*
 * Route one summary of step wi: to the first node of its order that has
 * not failed peer_fail_intervals deliveries in a row (those before it get
 * it too, to be found again once they answer), or, reaching this node,
 * into this node's own view.  A node that leads the step (a follower
 * sends to it) takes its own summary in as well.
 */
static void
route_summary(struct ld_peers *p, size_t wi, const struct ld_watch_step *ws, struct sstep *ss,
	      const struct buf *sum, uint64_t now)
{
	const struct ld_conf *c = &p->d->cur->conf;
	enum ld_peer_refusal r;
	const char *name = NULL;
	struct plink *k;
	bool self = false;
	size_t i;
	pl_err_t err;

	for (i = 0; i < ws->nnodes; i++) {
		name = ld_watch_step_node(p->d->watch, wi, i);
		if (strcmp(name, ws->node) == 0) {
			self = true;
			break;
		}
		k = link_get(p, ss, i, name);
		if (!k)
			continue;
		link_send(p, k, sum);
		if (k->fails < (unsigned)c->peer_fail_intervals)
			break;
	}
	if (i == ws->nnodes)
		name = NULL;	/* not among its nodes (the registration said it is) */
	if (i != ss->target && name) {
		k = i > 0 ? link_get(p, ss, 0, ld_watch_step_node(p->d->watch, wi, 0)) : NULL;
		if (i > 0)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": summaries go to %s "
			       "(nodes[%zu]%s): the nodes before it failed %ld deliveries in a row (the "
			       "leader %s: %s)", ss->job, ss->step, name, i, self ? ", this node" : "",
			       c->peer_fail_intervals, ld_watch_step_node(p->d->watch, wi, 0),
			       k ? k->why : "?");
		else if (ss->target != SIZE_MAX)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": summaries go to the "
			       "leader %s again", ss->job, ss->step, name);
		if (i > 0 && (ss->target == 0 || ss->target == SIZE_MAX))
			p->st.failovers++;
		ss->target = i;
		snprintf(ss->target_name, sizeof(ss->target_name), "%s", name);
	}
	if (self || lead_find(p, ws->job_id, ws->step_id)) {
		pl_err_clear(&err);
		if (take_summary(p, sum->s, sum->len, now, true, self, &r, &err) == 200)
			p->st.handed_in++;
		else
			ld_ratelog(&p->d->log, &p->rl_send, "peer: job %" PRIu64 ".%" PRIu64 ": this "
				   "node's own summary refused (%s): %s", ws->job_id, ws->step_id,
				   refusal_names[r], err.text);
	}
}

/* Every watched step this node knows the order of: its summary. */
static void
send_all(struct ld_peers *p, uint64_t now)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct buf sum = BUF_INIT;
	struct sstep *ss, **pp;
	struct ld_watch_step ws;
	size_t i, n = ld_watch_nsteps(p->d->watch);

	p->tick++;
	for (i = 0; i < n; i++) {
		ld_watch_step_at(p->d->watch, i, &ws);
		if (!ws.known || !ws.node[0])
			continue;
		ss = sstep_get(p, ws.job_id, ws.step_id);
		if (!ss)
			continue;
		ss->mark = p->tick;
		if (c->peer_listen == LD_PEER_LISTEN_NO && ws.nnodes > 1) {
			if (!ss->off_noted)
				ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 " spans %zu nodes, but "
				       "peer_listen = no: this node neither sends its summary nor leads "
				       "the step", ws.job_id, ws.step_id, ws.nnodes);
			ss->off_noted = true;
			continue;
		}
		if (ws.ended && ss->final_sent)
			continue;
		if (build_summary(p, i, &ws, ss, now, &sum) < 0)
			continue;
		route_summary(p, i, &ws, ss, &sum, now);
		ss->final_sent = ws.ended;
	}
	buf_free(&sum);
	for (pp = &p->sends; *pp;) {
		ss = *pp;
		if (ss->mark == p->tick) {
			pp = &ss->next;
			continue;
		}
		*pp = ss->next;
		sstep_free(p, ss);
	}
}

/* ---- the leader's rounds -------------------------------------------------------- */

static bool
same_finding(const struct judge_finding *a, const struct judge_finding *b)
{
	return a->kind == b->kind && a->comm_hash == b->comm_hash && a->node == b->node &&
	       a->nculprits == b->nculprits &&
	       memcmp(a->culprits, b->culprits, a->nculprits * sizeof(a->culprits[0])) == 0;
}

static void
log_findings(struct ld_peers *p, struct ld_lead *l)
{
	struct buf eb = BUF_INIT;
	size_t i, j;

	for (i = 0; i < l->nfind; i++) {
		for (j = 0; j < l->nprev && !same_finding(&l->find[i], &l->prev[j]); j++)
			;
		if (j == l->nprev)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 " finding (%s): %s", l->job,
			       l->step, judge_kind_name(l->find[i].kind),
			       ld_escape(&eb, l->find[i].text, 300));
		buf_free(&eb);
	}
	for (j = 0; j < l->nprev; j++) {
		for (i = 0; i < l->nfind && !same_finding(&l->find[i], &l->prev[j]); i++)
			;
		if (i == l->nfind)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 " cleared (%s): %s", l->job,
			       l->step, judge_kind_name(l->prev[j].kind),
			       ld_escape(&eb, l->prev[j].text, 300));
		buf_free(&eb);
	}
	memcpy(l->prev, l->find, l->nfind * sizeof(l->find[0]));
	l->nprev = l->nfind;
}

static bool
lead_acting(const struct ld_lead *l)
{
	return !l->ordered || l->nnodes == 0 || strcmp(l->nodes[0].name, l->self) != 0;
}

/* "leader" (nodes[0]), "acting" (another node of the order, in its place)
 * or "unordered" (no registration here: a restarted leader, or a node
 * named leader by a follower's registration alone). */
static const char *
lead_role(const struct ld_lead *l)
{
	return !l->ordered ? "unordered" : lead_acting(l) ? "acting" : "leader";
}

static void
lead_view(const struct ld_lead *l, const struct judge_step *js, bool final, struct ld_step_view *v)
{
	memset(v, 0, sizeof(*v));
	v->job_id = l->job;
	v->step_id = l->step;
	v->uid = l->uid;
	v->world = l->world;
	memcpy(v->size, l->size, sizeof(v->size));
	v->self = l->self;
	v->leader = l->ordered && l->nnodes ? l->nodes[0].name : NULL;
	v->acting = lead_acting(l);
	v->final = final;
	v->step = js;
	v->ranks = l->rk;
	v->nranks = l->nrk;
	v->owner = l;
}

static void
lead_step(const struct ld_lead *l, struct judge_step *js)
{
	memset(js, 0, sizeof(*js));
	js->job_id = l->job;
	js->step_id = l->step;
	js->uid = l->uid;
	js->world = l->world;
	memcpy(js->size, l->size, sizeof(js->size));
	js->nodes = l->jn;
	js->nnodes = l->nnodes;
}

/* Liveness: a node silent for peer_lost_s (since the step was led here,
 * when never heard) is lost, unless its ranks had all exited. */
static void
lead_liveness(struct ld_peers *p, struct ld_lead *l, uint64_t now)
{
	uint64_t lost = lost_ns(&p->d->cur->conf), since;
	size_t k, i;

	for (k = 0; k < l->nnodes; k++) {
		struct lnode *nd = &l->nodes[k];
		bool was = nd->lost;

		since = nd->heard ? nd->last_ns : l->created_ns;
		nd->lost = strcmp(nd->name, l->self) != 0 && !nd->done && now > since &&
			   now - since > lost;
		if (nd->lost && !was)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": node %s lost: %s for %.1f s "
			       "(peer_lost_s %.1f)", l->job, l->step, nd->name,
			       nd->heard ? "no summary" : "never heard from", age_s(now, since),
			       (double)lost / 1e9);
		else if (was && !nd->lost)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": node %s is back", l->job,
			       l->step, nd->name);
		if (nd->lost)
			for (i = 0; i < nd->nrix; i++)
				if (l->rk[nd->rix[i]].node == k)
					l->rk[nd->rix[i]].present = 0;
		l->jn[k].name = nd->name;
		l->jn[k].lost = nd->lost;
		l->jn[k].last_ns = nd->last_ns;
	}
}

/*
 * The step's order became known here after the lead began without it (a
 * follower's summary came before this node's own registration): the
 * nodes go into the step's order, those the order lacks after them.
 */
static void
lead_adopt_order(struct ld_peers *p, struct ld_lead *l, size_t wi, const struct ld_watch_step *ws)
{
	size_t n = ws->nnodes, old = l->nnodes, extra = 0, k;
	struct lnode *nn = calloc(n + old, sizeof(*nn));
	struct judge_node *jn = calloc(n + old, sizeof(*jn));
	uint32_t *map = calloc(old ? old : 1, sizeof(*map));
	bool *taken = calloc(old ? old : 1, sizeof(*taken));
	struct ixtab ix = { NULL, 0, 0 };
	long o;

	if (!nn || !jn || !map || !taken)
		goto out;
	for (k = 0; k < n; k++) {
		const char *name = ld_watch_step_node(p->d->watch, wi, k);

		o = node_find(l, name);
		if (o >= 0) {
			nn[k] = l->nodes[o];
			map[o] = (uint32_t)k;
			taken[o] = true;
		} else {
			snprintf(nn[k].name, sizeof(nn[k].name), "%s", name);
		}
	}
	for (k = 0; k < old; k++)
		if (!taken[k]) {
			nn[n + extra] = l->nodes[k];
			map[k] = (uint32_t)(n + extra++);
		}
	for (k = 0; k < l->nrk; k++)
		l->rk[k].node = map[l->rk[k].node];
	free(l->nodes);
	free(l->jn);
	free(l->node_ix.slot);
	l->nodes = nn;
	l->jn = jn;
	l->nnodes = n + extra;
	l->capnodes = n + old;
	l->node_ix = ix;
	nn = NULL;
	jn = NULL;
	for (k = 0; k < l->nnodes; k++)
		if (ix_add(&l->node_ix, (uint32_t)k, node_hash, l) < 0)
			break;	/* out of memory: found by name no more, still listed */
	l->ordered = true;
	snprintf(l->self, sizeof(l->self), "%s", ws->node);
	ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": its node order is registered here "
	       "now: leader %s, %zu nodes", l->job, l->step, l->nodes[0].name, n);
out:
	free(nn);
	free(jn);
	free(map);
	free(taken);
}

/* A lead begun without the order takes it once this node's own
 * registration brings it (and agrees with the step's shape). */
static void
lead_order(struct ld_peers *p, struct ld_lead *l)
{
	struct ld_watch_step ws;
	long wi;

	if (l->ordered)
		return;
	wi = ld_watch_step_find(p->d->watch, l->job, l->step);
	if (wi < 0)
		return;
	ld_watch_step_at(p->d->watch, (size_t)wi, &ws);
	if (ws.known && ws.world == l->world && memcmp(ws.size, l->size, sizeof(ws.size)) == 0 &&
	    ws.uid == l->uid)
		lead_adopt_order(p, l, (size_t)wi, &ws);
}

/* The step's-end grace: the judge's default, and at least two intervals
 * of this node's and of every node heard from (their summaries must
 * come). */
static uint64_t
end_grace_ns(const struct ld_conf *c, const struct ld_lead *l, uint64_t dflt)
{
	uint64_t g = dflt, ms = (uint64_t)c->watch_interval_ms;
	size_t k;

	for (k = 0; k < l->nnodes; k++)
		if (l->nodes[k].heard && l->nodes[k].interval_ms > ms)
			ms = l->nodes[k].interval_ms;
	if (2 * ms * 1000000 > g)
		g = 2 * ms * 1000000;
	return g;
}

static void
lead_round(struct ld_peers *p, struct ld_lead *l, uint64_t now)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct judge_params jp;
	struct judge_step js;
	struct ld_step_view v;

	lead_order(p, l);
	lead_liveness(p, l, now);
	lead_step(l, &js);
	judge_params_default(&jp);
	jp.hang_threshold_ns = (uint64_t)c->hang_threshold_s * NS;
	jp.end_grace_ns = end_grace_ns(c, l, jp.end_grace_ns);
	l->nfind_total = judge_run(&js, l->rk, l->nrk, now, &jp, l->js, l->find, LEAD_MAX_FINDINGS);
	l->nfind = l->nfind_total < LEAD_MAX_FINDINGS ? l->nfind_total : LEAD_MAX_FINDINGS;
	l->rounds++;
	log_findings(p, l);
	judge_state_end(l->js, &l->end);
	if (l->end.ending && !l->end_noted) {
		struct buf eb = BUF_INIT;

		ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": %s (no alert)", l->job, l->step,
		       ld_escape(&eb, l->end.text, 300));
		buf_free(&eb);
	}
	l->end_noted = l->end.ending;
	if (p->cb) {
		lead_view(l, &js, false, &v);
		p->cb(p->d, &v, l->find, l->nfind, now);
	}
}

/* The node this node's own summaries of l's step go to when that is
 * another node of the order (a node before it answers again), else NULL. */
static const char *
lead_sent_on(const struct ld_peers *p, const struct ld_lead *l)
{
	const struct sstep *ss;

	for (ss = p->sends; ss; ss = ss->next)
		if (ss->job == l->job && ss->step == l->step)
			return ss->target != SIZE_MAX && ss->target_name[0] &&
			       strcmp(ss->target_name, l->self) != 0 ? ss->target_name : NULL;
	return NULL;
}

/* Whether every node heard from had every rank exited: the step ended. */
static bool
lead_done(const struct ld_lead *l)
{
	size_t k;

	for (k = 0; k < l->nnodes; k++)
		if (l->nodes[k].heard && !l->nodes[k].done)
			return false;
	return true;
}

/* Judge every step led here; let go of those no summary came for in
 * peer_lost_s (the own one counted while this node is its own target),
 * and at once of one it acts for once its own summaries go to a node
 * before it (the leader answers again).  An acting leader that lets go of
 * a step still running hands its alerts over (not resolved: the leader
 * judges them anew, the endsAt last sent covers the time between). */
static void
lead_all(struct ld_peers *p, uint64_t now)
{
	uint64_t lost = lost_ns(&p->d->cur->conf), last;
	struct ld_lead *l, **pp;
	struct judge_step js;
	struct ld_step_view v;
	const char *on;

	for (pp = &p->leads; *pp;) {
		l = *pp;
		last = l->created_ns;
		if (l->recv_ns > last)
			last = l->recv_ns;
		if (l->own_ns > last)
			last = l->own_ns;
		on = l->ordered && lead_acting(l) ? lead_sent_on(p, l) : NULL;
		if (on || (now > last && now - last > lost)) {
			if (on)
				ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": no longer led "
				       "here (this node's summaries go to %s again, which leads it)",
				       l->job, l->step, on);
			else
				ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": no longer led "
				       "here (no summary for %.1f s)", l->job, l->step,
				       age_s(now, last));
			if (p->cb) {
				lead_liveness(p, l, now);
				lead_step(l, &js);
				lead_view(l, &js, true, &v);
				v.handover = l->ordered && lead_acting(l) && !lead_done(l);
				p->cb(p->d, &v, NULL, 0, now);
			}
			*pp = l->next;
			p->nleads--;
			lead_free(l);
			continue;
		}
		lead_round(p, l, now);
		pp = &l->next;
	}
}

void
ld_peer_tick(struct ld_peers *p)
{
	uint64_t now = mono_ns();

	send_all(p, now);
	lead_all(p, now);
}

/* ---- what is shown ------------------------------------------------------------ */

const struct judge_rank *
ld_step_view_rank(const struct ld_step_view *v, int64_t rank)
{
	long i = rank_find(v->owner, rank);

	return i >= 0 ? &v->owner->rk[i] : NULL;
}

const char *
ld_step_view_node(const struct ld_step_view *v, int32_t i)
{
	return i >= 0 && (size_t)i < v->owner->nnodes ? v->owner->nodes[i].name : "";
}

static json_t *
coords_json(const uint32_t *co)
{
	json_t *o = json_object();
	int a;

	for (a = 0; o && a < NAXES; a++)
		json_object_set_new(o, axes[a], json_integer(co[a]));
	return o;
}

static json_t *
finding_json(const struct ld_lead *l, const struct judge_finding *f, uint64_t now)
{
	json_t *cul = json_array();
	char h[24];
	size_t i;

	for (i = 0; cul && i < f->nculprits; i++)
		json_array_append_new(cul, json_integer(f->culprits[i]));
	snprintf(h, sizeof(h), "%016" PRIx64, f->comm_hash);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:o, s:I, s:o, s:I, s:f, s:f, s:o, "
			 "s:o, s:s}",
			 "kind", judge_kind_name(f->kind), "group", f->group, "comm", f->comm,
			 "comm_hash", h, "func", f->func, "seq", (json_int_t)f->seq,
			 "colls", (json_int_t)f->colls, "culprits", cul,
			 "culprits_total", (json_int_t)f->ncul_total,
			 "node", f->node >= 0 && (size_t)f->node < l->nnodes ?
			 json_string(l->nodes[f->node].name) : json_null(),
			 "peers_waiting", (json_int_t)f->npeers_waiting,
			 "for_s", (double)f->for_ns / 1e9, "since_s", age_s(now, f->since_ns),
			 "exit_status", f->kind == JUDGE_EXITED && f->exit_status >= 0 ?
			 json_integer(f->exit_status) : json_null(),
			 "cost_frac", f->kind == JUDGE_SLOW ? json_real(f->cost_frac) : json_null(),
			 "text", f->text);
}

static const char *
node_state(const struct ld_lead *l, const struct lnode *nd)
{
	if (strcmp(nd->name, l->self) == 0)
		return "self";
	if (nd->lost)
		return "lost";
	if (nd->done)
		return "done";
	return nd->heard ? "ok" : "unheard";
}

static int
by_rank(const void *a, const void *b, void *arg)
{
	const struct judge_rank *rk = arg;
	int64_t x = rk[*(const uint32_t *)a].st.rank, y = rk[*(const uint32_t *)b].st.rank;

	return x < y ? -1 : x > y;
}

static json_t *
rank_json(const struct ld_lead *l, const struct judge_rank *jr, uint64_t now)
{
	const struct detect_rank *r = &jr->st;
	json_t *comms = json_array();
	uint32_t i;

	for (i = 0; comms && i < r->ncomm; i++)
		json_array_append_new(comms, ld_watch_comm_json(&r->comm[i], now));
	return json_pack("{s:I, s:s, s:i, s:s, s:o, s:b, s:I, s:b, s:o, s:o}",
			 "rank", (json_int_t)r->rank, "node", l->nodes[jr->node].name,
			 "gpu", (int)jr->gpu, "nic", jr->nic, "coords", coords_json(jr->co),
			 "present", jr->present != 0, "pid", (json_int_t)r->pid,
			 "exited", r->exited != 0,
			 "exit_status", r->exit_known ? json_integer(r->exit_status) : json_null(),
			 "comms", comms);
}

static json_t *
step_view_json(const struct ld_peers *p, const struct ld_lead *l, uint64_t now, uint64_t from,
	       size_t count)
{
	json_t *nodes = json_array(), *ranks = json_array(), *find = json_array(), *lay;
	uint32_t *order = l->nrk ? malloc(l->nrk * sizeof(*order)) : NULL;
	json_t *next;
	char boot[24];
	size_t i, shown;

	lay = coords_json(l->size);
	for (i = 0; nodes && i < l->nnodes; i++) {
		const struct lnode *nd = &l->nodes[i];

		snprintf(boot, sizeof(boot), "%016" PRIx64, nd->boot_id);
		json_array_append_new(nodes, json_pack("{s:s, s:s, s:o, s:I, s:I, s:o, s:I}",
						       "name", nd->name, "state", node_state(l, nd),
						       "last_s", nd->heard ? json_real(age_s(now, nd->last_ns)) :
						       json_null(),
						       "ranks", (json_int_t)nd->nrix,
						       "msg_seq", (json_int_t)nd->msg_seq,
						       "boot_id", nd->heard ? json_string(boot) : json_null(),
						       "summaries", (json_int_t)nd->summaries));
	}
	if (l->nrk && !order) {
		json_decref(nodes);
		json_decref(ranks);
		json_decref(find);
		json_decref(lay);
		return NULL;
	}
	for (i = 0; i < l->nrk; i++)
		order[i] = (uint32_t)i;
	if (l->nrk)
		qsort_r(order, l->nrk, sizeof(*order), by_rank, l->rk);
	for (i = 0; i < l->nrk && (uint64_t)l->rk[order[i]].st.rank < from; i++)
		;
	for (shown = 0; ranks && i < l->nrk && shown < count; i++, shown++)
		json_array_append_new(ranks, rank_json(l, &l->rk[order[i]], now));
	next = i < l->nrk ? json_integer(l->rk[order[i]].st.rank) : json_null();
	free(order);
	for (i = 0; find && i < l->nfind; i++)
		json_array_append_new(find, finding_json(l, &l->find[i], now));
	return json_pack("{s:I, s:I, s:I, s:s, s:s, s:o, s:I, s:o, s:f, s:I, s:I, s:o, s:I, s:I, "
			 "s:o, s:o, s:o, s:o}",
			 "job_id", (json_int_t)l->job, "step_id", (json_int_t)l->step,
			 "uid", (json_int_t)l->uid, "role", lead_role(l),
			 "self", l->self,
			 "leader", l->ordered && l->nnodes ? json_string(l->nodes[0].name) : json_null(),
			 "world", (json_int_t)l->world, "layout", lay,
			 "lost_s", (double)lost_ns(&p->d->cur->conf) / 1e9,
			 "rounds", (json_int_t)l->rounds,
			 "findings_dropped", (json_int_t)(l->nfind_total - l->nfind),
			 "nodes", nodes, "ranks_total", (json_int_t)l->nrk,
			 "ranks_from", (json_int_t)from, "ranks_next", next, "ranks", ranks,
			 "findings", find,
			 "ended", l->end.ending ? json_string(l->end.text) : json_null());
}

int
ld_peer_step_json(const struct ld_peers *p, uint64_t job, uint64_t step, uint64_t from,
		  size_t count, bool all, long uid, json_t **out, pl_err_t *err)
{
	const struct ld_lead *l = lead_find(p, job, step);
	long wi;

	*out = NULL;
	if (!l) {
		struct ld_watch_step ws;
		const char *leader;

		wi = ld_watch_step_find(p->d->watch, job, step);
		leader = wi >= 0 ? ld_watch_step_node(p->d->watch, (size_t)wi, 0) : NULL;
		if (wi >= 0)
			ld_watch_step_at(p->d->watch, (size_t)wi, &ws);
		if (leader && strcmp(leader, ws.node) == 0)
			return fail(err, 404, "job %" PRIu64 ".%" PRIu64 ": this node (%s) is its leader "
				    "but leads it not (yet): %s", job, step, ws.node,
				    p->d->cur->conf.peer_listen == LD_PEER_LISTEN_NO ?
				    "peer_listen = no, and the step spans several nodes" :
				    "no summary of it has come");
		if (leader)
			return fail(err, 404, "job %" PRIu64 ".%" PRIu64 ": not led here (%s): ask its "
				    "leader, %s", job, step, ws.node, leader);
		return fail(err, 404, "job %" PRIu64 ".%" PRIu64 ": not led here (%s): ask the layoutd "
			    "of the node of its rank 0", job, step, p->d->cur->conf.node_name);
	}
	if (!all && (long)l->uid != uid)
		return fail(err, 404, "job %" PRIu64 ".%" PRIu64 ": not led here for uid %ld", job,
			    step, uid);
	*out = step_view_json(p, l, mono_ns(), from, count);
	return *out ? 200 : fail(err, 500, "out of memory");
}

void
ld_peer_step_reply(const struct ld_peers *p, struct evhttp_request *req, bool all, long uid)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	struct step_query sq;
	json_t *o = NULL;
	pl_err_t err;
	int status;

	if (step_query(uri ? evhttp_uri_get_query(uri) : NULL, &sq) < 0) {
		reply_error(req, 400, "GET /v1/watch/step: " STEP_QUERY_HELP);
		return;
	}
	pl_err_clear(&err);
	status = ld_peer_step_json(p, sq.job, sq.step, sq.from, sq.count, all, uid, &o, &err);
	if (status == 200)
		reply_json(req, 200, o);
	else
		reply_error(req, status, err.text);
}

void
ld_peer_stats(const struct ld_peers *p, struct ld_peer_stats *st)
{
	const struct ld_lead *l;
	size_t k;

	*st = p->st;
	st->led_steps = p->nleads;
	st->nodes_lost = 0;
	for (l = p->leads; l; l = l->next)
		for (k = 0; k < l->nnodes; k++)
			st->nodes_lost += l->nodes[k].lost;
}

static const char *
link_state_name(enum link_state s)
{
	return s == LINK_ENCODING ? "credential" : s == LINK_POSTING ? "posting" : "idle";
}

json_t *
ld_peer_json(const struct ld_peers *p)
{
	const struct ld_conf *c = &p->d->cur->conf;
	json_t *ref = json_object(), *sends = json_array(), *leads = json_array();
	const struct sstep *ss;
	const struct ld_lead *l;
	struct ld_peer_stats st;
	uint64_t now = mono_ns();
	size_t i, k;
	int r;

	ld_peer_stats(p, &st);
	for (r = 0; ref && r < LD_NREFUSE; r++)
		json_object_set_new(ref, refusal_names[r], json_integer((json_int_t)st.refused[r]));
	for (ss = p->sends; sends && ss; ss = ss->next) {
		json_t *links = json_array();

		for (i = 0; links && i < ss->nlinks; i++) {
			const struct plink *ln = ss->links[i];

			json_array_append_new(links, json_pack("{s:s, s:I, s:s, s:i, s:I, s:I, s:o, s:o}",
							       "node", ln->node, "order", (json_int_t)ln->k,
							       "state", link_state_name(ln->state),
							       "fails", (int)ln->fails,
							       "sent", (json_int_t)ln->sent,
							       "failed", (json_int_t)ln->failed,
							       "last_error", ln->why[0] ? json_string(ln->why) :
							       json_null(),
							       "last_ok_s", ln->ok_ns ?
							       json_real(age_s(now, ln->ok_ns)) : json_null()));
		}
		json_array_append_new(sends, json_pack("{s:I, s:I, s:I, s:o, s:o}",
						       "job_id", (json_int_t)ss->job,
						       "step_id", (json_int_t)ss->step,
						       "msg_seq", (json_int_t)ss->seq,
						       "target", ss->target_name[0] ?
						       json_string(ss->target_name) : json_null(),
						       "links", links));
	}
	for (l = p->leads; leads && l; l = l->next) {
		size_t lost = 0;

		for (k = 0; k < l->nnodes; k++)
			lost += l->nodes[k].lost;
		json_array_append_new(leads, json_pack("{s:I, s:I, s:s, s:I, s:I, s:I, s:I}",
						       "job_id", (json_int_t)l->job,
						       "step_id", (json_int_t)l->step,
						       "role", lead_role(l),
						       "nodes", (json_int_t)l->nnodes,
						       "nodes_lost", (json_int_t)lost,
						       "ranks", (json_int_t)l->nrk,
						       "findings", (json_int_t)l->nfind));
	}
	return json_pack("{s:o, s:i, s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:o, s:I, s:I, s:I, s:I, "
			 "s:I, s:o, s:o}",
			 "listen", p->listen_port >= 0 ? json_sprintf("%s:%d", p->listen_host,
								  p->listen_port) : json_null(),
			 "peer_port", c->peer_port,
			 "fail_intervals", (json_int_t)c->peer_fail_intervals,
			 "timeout_ms", (json_int_t)c->peer_timeout_ms,
			 "lost_s", (double)lost_ns(c) / 1e9,
			 "munge_ttl_s", (json_int_t)c->munge_ttl_s,
			 "boot_id", (json_int_t)(p->boot_id >> 1),
			 "received", (json_int_t)st.received, "accepted", (json_int_t)st.accepted,
			 "refused", ref, "handed_in", (json_int_t)st.handed_in,
			 "sent", (json_int_t)st.sent, "send_failures", (json_int_t)st.send_failures,
			 "failovers", (json_int_t)st.failovers, "nodes_lost", (json_int_t)st.nodes_lost,
			 "sending", sends, "leading", leads);
}

/* ---- life ---------------------------------------------------------------------- */

void
ld_peer_set_findings_cb(struct ld_peers *p, ld_findings_cb cb)
{
	p->cb = cb;
}

struct ld_peers *
ld_peer_new(struct ld *d)
{
	struct ld_peers *p = calloc(1, sizeof(*p));
	int i;

	if (!p)
		return NULL;
	p->d = d;
	p->wake[0] = p->wake[1] = -1;
	p->listen_port = -1;
	for (i = 0; i < LD_NREFUSE; i++)
		p->rl[i].interval_ms = REFUSAL_LOG_MS;
	p->rl_send.interval_ms = REFUSAL_LOG_MS;
	if (getrandom(&p->boot_id, sizeof(p->boot_id), 0) != (ssize_t)sizeof(p->boot_id))
		p->boot_id = mono_ns() ^ ((uint64_t)getpid() << 32) ^ real_ns();
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pipe2(p->wake, O_NONBLOCK | O_CLOEXEC) < 0)
		goto fail;
	p->wake_ev = event_new(d->base, p->wake[0], EV_READ | EV_PERSIST, on_wake, p);
	if (!p->wake_ev || event_add(p->wake_ev, NULL) < 0)
		goto fail;
	if (pthread_create(&p->th, NULL, worker_main, p) != 0)
		goto fail;
	p->th_started = true;
	return p;
fail:
	ld_peer_free(p);
	return NULL;
}

/* Answer what the worker still holds (a request waits for each). */
static void
answer_pending(struct ld_peers *p, struct mjob *j)
{
	struct mjob *next;

	for (; j; j = next) {
		next = j->next;
		if (j->kind == MJ_DECODE && j->req)
			reply_error(j->req, 503, "layoutd is stopping");
		mjob_free(j);
	}
}

void
ld_peer_free(struct ld_peers *p)
{
	struct ld_lead *l;
	struct sstep *ss;

	if (!p)
		return;
	if (p->th_started) {
		pthread_mutex_lock(&p->mu);
		p->stop = true;
		pthread_cond_signal(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->th, NULL);
	}
	answer_pending(p, p->todo);
	answer_pending(p, p->done);
	p->todo = p->done = NULL;
	if (p->conns)
		ld_conns_shutdown(p->conns);
	if (p->http)
		evhttp_free(p->http);
	ld_conns_free(p->conns);
	while ((ss = p->sends)) {
		p->sends = ss->next;
		sstep_free(p, ss);
	}
	while ((l = p->leads)) {
		p->leads = l->next;
		lead_free(l);
	}
	if (p->wake_ev)
		event_free(p->wake_ev);
	if (p->wake[0] >= 0)
		close(p->wake[0]);
	if (p->wake[1] >= 0)
		close(p->wake[1]);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->scratch);
	free(p->scratch_info);
	free(p);
}

int
ld_peer_listen(struct ld_peers *p, pl_err_t *err)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct evhttp_bound_socket *bs;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct timeval tv;
	char host[LD_PATH];
	const char *a = NULL;
	int port = c->peer_listen, all = 0, pp = 0;
	long i;

	if (c->peer_listen == LD_PEER_LISTEN_NO)
		return 0;
	snprintf(host, sizeof(host), "%s", c->peer_host);
	if (c->peer_listen == LD_PEER_LISTEN_AUTO) {
		snprintf(host, sizeof(host), "0.0.0.0");
		port = c->peer_port;
		i = topo_find_node(p->d->cur->map, c->node_name);
		if (i >= 0 && topo_node_peer(p->d->cur->map, i, &a, &pp) == 0) {
			if (a && *a)
				snprintf(host, sizeof(host), "%s", a);
			if (pp > 0)
				port = pp;
		}
	}
	p->http = evhttp_new(p->d->base);
	p->conns = p->http ? ld_conns_new(p->d->base, p->http, &p->d->log) : NULL;
	if (!p->conns)
		return pl_err_set(err, "peer_listen: out of memory");
	all = EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
	      EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_PATCH;
	evhttp_set_allowed_methods(p->http, (ev_uint16_t)all);
	evhttp_set_gencb(p->http, on_peer_request, p);
	tv.tv_sec = c->request_timeout_ms / 1000;
	tv.tv_usec = (c->request_timeout_ms % 1000) * 1000;
	evhttp_set_timeout_tv(p->http, &tv);
	evhttp_set_max_body_size(p->http, (ev_ssize_t)SUM_MAX_BYTES);
	evhttp_set_max_headers_size(p->http, (ev_ssize_t)c->max_header);
	ld_conns_set_limits(p->conns, c->peer_max_connections, c->request_timeout_ms);
	bs = evhttp_bind_socket_with_handle(p->http, host, (ev_uint16_t)port);
	if (!bs)
		return pl_err_set(err, "peer_listen %s:%d: cannot listen there (%s)", host, port,
				  strerror(errno));
	if (ld_conns_watch(p->conns, evhttp_bound_socket_get_listener(bs)) < 0)
		return pl_err_set(err, "peer_listen %s:%d: cannot watch its listener", host, port);
	if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	snprintf(p->listen_host, sizeof(p->listen_host), "%s", host);
	p->listen_port = port;
	ld_log(&p->d->log, "peers: listening on http://%s%s%s:%d (node summaries, GET /v1/watch/step; "
	       "munge socket %s, credentials live %ld s)", strchr(host, ':') ? "[" : "", host,
	       strchr(host, ':') ? "]" : "", port, c->munge_socket[0] ? c->munge_socket :
	       "libmunge's default", c->munge_ttl_s);
	return 0;
}
