/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The peers (watch/peer.h): node summaries to each step's leader, the
 * leader's view of the whole step, the judge over it.
 *
 * munge runs on a worker thread (watch/munge_worker.c says why): a request whose
 * credential is being checked is answered from there
 * (ld_conns_request_defer), and a summary past its queue is refused as
 * busy.  The credentials made here live munge_ttl_s (default 10 s): enough
 * for a delivery and clock skew between nodes, short enough that munged's
 * replay cache stays small at 2,048 summaries a second.
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
 * its alerts over (watch/alert.c) unless the step ended.
 *
 * The fan-in (peer_fanin): the first node of each group of the order (the
 * second in the leader's) relays for its group (POST /v1/peer/relay: held
 * per member, the newest) and sends them on with its own in one batch a
 * round (POST /v1/peer/batch); see fanin_width() and docs/ARCHITECTURE.md.
 *
 * The steps this node leads, their judge and their view: watch/lead.c.
 */
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

#include <arpa/inet.h>
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
#include "layoutd_reply.h"
#include "lead.h"
#include "munge_worker.h"
#include "peer.h"
#include "stacks.h"
#include "util.h"
#include "view.h"
#include "peerwire.h"
#include "sha256.h"
#include "summary.h"
#include "topo.h"

#define REFUSAL_LOG_MS 10000.0		/* one line per reason this often */
#define SOURCE_MAX_JOBS (LD_MUNGE_QUEUE_MAX / 4)	/* POSTs one address has waiting */
#define SOURCE_LEN 64			/* a source address, as text */
#define PEER_CONNECT_MS 1000L		/* connecting to a peer, at most */
/* GET /v1/watch/step gives at most this many ranks an answer: building a
 * 16,384-rank step's whole answer (39 MB) held the loop 1.4 s. */
#define STEP_PAGE 1024
#define STEP_QUERY_HELP "want the query job=JOBID&step=STEPID, optionally &from=RANK&count=N " \
	"(a page of at most 1024 ranks)"

/* ---- the state ----------------------------------------------------------- */

enum link_state { LINK_IDLE, LINK_ENCODING, LINK_POSTING, LINK_CHECKING };

/* What a link posts: this node's summary to a leader, this node's summary
 * to its relay, or (this node a relay) a batch of its own and its
 * members' summaries to a leader. */
enum link_kind { LINK_SUMMARY, LINK_RELAY, LINK_BATCH };
static const char *const link_paths[3] = {
	PEERWIRE_PATH_SUMMARY, PEERWIRE_PATH_RELAY, PEERWIRE_PATH_BATCH
};

/* The deliveries of one step's summaries to one node. */
struct mjob;
struct sstep;

/* What one source address has waiting for the worker. */
struct source {
	char host[SOURCE_LEN];
	size_t bytes;
	unsigned jobs;
};

struct ld_peers {
	struct ld *d;
	uint64_t boot_id;
	struct ld_munge *munge;		/* the worker (watch/munge_worker.c) */
	/* the listener */
	struct evhttp *http;
	struct ld_conns *conns;
	char listen_host[LD_PATH];
	int listen_port;		/* -1 none */
	/* the state */
	struct sstep *sends;
	struct ld_leads *leads;		/* the steps led here (watch/lead.c) */
	uint64_t next_link_id;
	unsigned long tick;
	struct detect_rank *scratch;
	struct sum_rank_info *scratch_info;
	size_t cap_scratch;
	struct ld_peer_stats st;
	struct ld_ratelog rl[LD_NREFUSE];
	struct ld_ratelog rl_send;
	struct ld_ratelog rl_answer;	/* answers refused (answer_refused) */
	bool munge_down;		/* this node's munged failed, not since back */
	uint64_t munge_down_ns;		/* since when */
	unsigned long munge_down_unsent; /* summaries not sent meanwhile */
	char munge_why[WHY_LEN];	/* what it said */
	size_t queued_bytes;		/* POST bodies held for the worker */
	struct source *srcs;		/* and by source address, those with any */
	size_t nsrcs, capsrcs;
};

struct plink {
	uint64_t id;			/* for the worker's answer */
	size_t k;			/* the node's place in the step's order */
	enum link_kind kind;
	char node[LD_PEER_NODE_LEN];
	struct sstep *owner;
	struct ld_peers *peers;
	enum link_state state;
	uint64_t http;			/* the POST in flight */
	char req_hex[SHA256_HEX_LEN];	/* its body's checksum: the answer's
					 * credential covers it (peerwire.h) */
	struct buf body;		/* the summary being delivered */
	struct buf next;		/* a newer one: replaces an undelivered one */
	bool has_next;
	unsigned fails;			/* failed deliveries in a row */
	unsigned long sent, failed;
	char why[WHY_LEN];		/* the last failure */
	uint64_t ok_ns;
};

/* A member's summary held at its relay until the next batch. */
struct held {
	char node[LD_PEER_NODE_LEN];
	uint64_t boot_id, msg_seq;
	uint64_t recv_ns;
	struct buf body;
	bool full;			/* a summary waits (else the slot is free) */
};

/* This node's summaries of one step. */
struct sstep {
	struct sstep *next;
	uint64_t job, step;
	uint64_t seq;			/* msg_seq of the last summary */
	size_t target;			/* where they go (SIZE_MAX: none yet) */
	char target_name[LD_PEER_NODE_LEN];
	bool target_relay;		/* the target is this node's relay */
	struct plink **links;
	size_t nlinks;
	bool final_sent;		/* the step ended and its last state went */
	size_t final_known;		/* the exit statuses known in it: one learned
					 * after (slurmstepd's word can come after
					 * the pid is seen gone) sends it again */
	bool off_noted;			/* said that peer_listen = no keeps it home */
	unsigned long mark;
	/* as a relay: the members' summaries waiting for the next batch */
	struct held *held;
	size_t nheld, capheld, held_bytes;
	struct buf batch;
};

/* What GET /v1/watch/step asks: the step and a page of its ranks. */
struct step_query {
	uint64_t job, step;
	uint64_t from;			/* the first rank shown */
	size_t count;			/* ranks shown at most */
};

/* What a munge job is for: a request's credential (DECODE: a summary, a
 * member's summary for its relay, a batch, a step GET), this node's answer
 * to a POST (ENCODE, MJ_REPLY) or a peer's answer to this node's POST
 * (DECODE, MJ_ANSWER); a link's own credential is ENCODE with MJ_SUMMARY. */
enum mj_what { MJ_SUMMARY, MJ_RELAY, MJ_BATCH, MJ_STEP, MJ_REPLY, MJ_ANSWER };

/* A munge job and what the loop does with its answer. */
struct mjob {
	struct ld_munge_job mj;		/* first: the worker's part */
	uint64_t link_id;		/* ENCODE of a link, MJ_ANSWER */
	enum mj_what what;		/* DECODE */
	struct evhttp_request *req;
	char *expect;			/* the payload the credential must carry */
	struct evbuffer *in;		/* a POST's body as it came, moved off the
					 * request: the worker copies and hashes it
					 * into body and expect (post_prep) */
	unsigned char *body;
	size_t len;
	uint64_t recv_ns;
	struct step_query sq;		/* MJ_STEP */
	char from[80];
	char src[SOURCE_LEN];		/* a POST's source address */
	struct ld_peers *p;		/* a POST's: its len counts in p->queued_bytes
					 * and in its source's */
};

const char *
ld_peer_refusal_name(enum ld_peer_refusal r)
{
	return peerwire_refusal_name((enum peerwire_refusal)r);
}

/*
 * The fan-in.  With width w (peer_fanin; auto: none up to 64 nodes, else
 * the square root of the step's nodes, rounded up), the step's order falls
 * into groups of w: nodes[g*w] (g >= 1) relays for nodes[g*w+1 ..
 * g*w+w-1], and in the leader's group nodes[1] for nodes[2 .. w-1] (w >= 3);
 * the relays send to the leader order as without a fan-in.  The leader
 * then takes about sqrt(N) messages a round instead of N-1 (a message
 * costs it about 0.1 ms: HTTP, the credential, the wakeups).  Every node
 * computes the same groups from the same order; a relay takes any node
 * after it in the order, so nodes whose peer_fanin differs still deliver.
 */
static size_t
fanin_width(const struct ld_conf *c, size_t nnodes)
{
	size_t w = 1;

	if (c->peer_fanin >= 2)
		return (size_t)c->peer_fanin;
	if (c->peer_fanin == 0 || nnodes <= 64)
		return 0;
	while (w * w < nnodes)
		w++;
	return w;
}

/* Node me's relay, or SIZE_MAX: it sends to the leader order itself. */
static size_t
relay_of(size_t w, size_t me)
{
	if (w < 2 || me == 0)
		return SIZE_MAX;
	if (me < w)
		return w >= 3 && me >= 2 ? 1 : SIZE_MAX;
	return me % w == 0 ? SIZE_MAX : me - me % w;
}

static bool
is_relay(size_t w, size_t me)
{
	return w >= 2 && ((me >= w && me % w == 0) || (me == 1 && w >= 3));
}

/* ---- munge jobs ---------------------------------------------------------- */

/* The source address host's entry, or NULL (none waiting). */
static struct source *
source_find(struct ld_peers *p, const char *host)
{
	size_t i;

	for (i = 0; i < p->nsrcs; i++)
		if (strcmp(p->srcs[i].host, host) == 0)
			return &p->srcs[i];
	return NULL;
}

/* A POST of len bytes from host waits for the worker: counted; false when
 * out of memory. */
static bool
source_add(struct ld_peers *p, const char *host, size_t len)
{
	struct source *s = source_find(p, host);

	if (!s) {
		if (p->nsrcs == p->capsrcs) {
			size_t cap = p->capsrcs ? 2 * p->capsrcs : 16;
			struct source *v = realloc(p->srcs, cap * sizeof(*v));

			if (!v)
				return false;
			p->srcs = v;
			p->capsrcs = cap;
		}
		s = &p->srcs[p->nsrcs++];
		memset(s, 0, sizeof(*s));
		copy_str(s->host, sizeof(s->host), host);
	}
	s->bytes += len;
	s->jobs++;
	return true;
}

/* ... and is answered: its entry goes with its last POST. */
static void
source_done(struct ld_peers *p, const char *host, size_t len)
{
	struct source *s = source_find(p, host);

	if (!s)
		return;
	s->bytes -= len < s->bytes ? len : s->bytes;
	if (--s->jobs == 0)
		*s = p->srcs[--p->nsrcs];
}

static void
mjob_free(struct mjob *j)
{
	if (j) {
		free(j->mj.in);
		free(j->mj.out);
		free(j->expect);
		free(j->body);
		if (j->in)
			evbuffer_free(j->in);
		if (j->p) {
			j->p->queued_bytes -= j->len;
			source_done(j->p, j->src, j->len);
		}
		free(j);
	}
}

static struct mjob *
mjob_new(struct ld_peers *p, enum ld_munge_kind kind, const char *in)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct mjob *j = calloc(1, sizeof(*j));

	if (!j || !(j->mj.in = strdup(in))) {
		free(j);
		return NULL;
	}
	j->mj.kind = kind;
	copy_str(j->mj.socket, sizeof(j->mj.socket), c->munge_socket);
	j->mj.ttl = (int)c->munge_ttl_s;
	return j;
}

/* ---- replies on the peer listener ------------------------------------------ */

/* The address req came from ("?" unknown). */
static void
req_host(struct evhttp_request *req, char *out, size_t n)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	char *host = NULL;
	ev_uint16_t port = 0;

	if (evcon)
		evhttp_connection_get_peer(evcon, &host, &port);
	snprintf(out, n, "%s", host ? host : "?");
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
		   ld_peer_refusal_name(r), status, from, ld_escape(&eb, msg, 300), p->st.refused[r]);
	buf_free(&eb);
	if (req)
		ld_reply_error(req, status, msg);
}

/* ---- the peer listener: POST /v1/peer/summary, GET /v1/watch/step ---------- */

/* Whether a credential of uid speaks for a layoutd: root's or slurm_user's. */
static bool
trusted_uid(const struct ld_conf *c, long uid)
{
	return uid == 0 || (c->slurm_uid >= 0 && uid == c->slurm_uid);
}

/* Whether j's decoded credential carries the payload it must (expect). */
static bool
payload_is_expected(const struct mjob *j)
{
	return j->mj.out && j->expect && j->mj.outlen == strlen(j->expect) &&
	       memcmp(j->mj.out, j->expect, j->mj.outlen) == 0;
}

/* Whether a munge error is this node's own munged's (not reachable, not
 * answering, failing), not the credential's: nobody else is to blame. */
static bool
munge_local(int merr)
{
	return merr == EMUNGE_SOCKET || merr == EMUNGE_TIMEOUT || merr == EMUNGE_NO_MEMORY ||
	       merr == EMUNGE_SNAFU;
}

/* This node's munged worked (ok) or failed (why): one line when that
 * changes, not one a summary. */
static void
munge_state(struct ld_peers *p, bool ok, const char *why)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct buf eb = BUF_INIT;

	if (ok && p->munge_down) {
		ld_log(&p->d->log, "peer: munge: credentials work again after %.1f s (%lu summaries "
		       "of this node not sent meanwhile)", age_s(mono_ns(), p->munge_down_ns),
		       p->munge_down_unsent);
	} else if (!ok && !p->munge_down) {
		p->munge_down_ns = mono_ns();
		p->munge_down_unsent = 0;
		snprintf(p->munge_why, sizeof(p->munge_why), "%s", why);
		ld_log(&p->d->log, "peer: munge: this node's munged (%s) cannot make or check "
		       "credentials: %s; this node's summaries are not sent (the leaders of its steps "
		       "will count it lost) and the summaries sent to it are refused (503, their "
		       "senders go on to the next node); no other node is blamed",
		       c->munge_socket[0] ? c->munge_socket : "libmunge's default socket",
		       ld_escape(&eb, why, 200));
		buf_free(&eb);
	}
	p->munge_down = !ok;
}

/* Whether j's munge call failed for this node's own munged (said once by
 * munge_state, as is its return). */
static bool
munge_failed_here(struct ld_peers *p, const struct mjob *j)
{
	bool here = munge_local(j->mj.merr);

	munge_state(p, !here, j->mj.why);
	return here;
}

/* The credential of a POST checked: munge, uid, the body's checksum.
 * false: refused (and answered). */
static bool
post_credential_ok(struct ld_peers *p, struct mjob *j, const char *path)
{
	const struct ld_conf *c = &p->d->cur->conf;
	enum ld_peer_refusal r;

	if (!j->body || !j->expect) {
		ld_reply_error(j->req, 500, "out of memory");
		return false;
	}
	if (munge_failed_here(p, j)) {
		refuse(p, j->req, j->from, LD_REFUSE_MUNGED, 503, "POST %s: this node's munged cannot "
		       "check the credential now: %s", path, j->mj.why);
		return false;
	}
	if (j->mj.merr != EMUNGE_SUCCESS) {
		r = j->mj.merr == EMUNGE_CRED_REPLAYED ? LD_REFUSE_REPLAYED :
		    j->mj.merr == EMUNGE_CRED_EXPIRED || j->mj.merr == EMUNGE_CRED_REWOUND ?
		    LD_REFUSE_EXPIRED : LD_REFUSE_CRED;
		refuse(p, j->req, j->from, r, 403, "POST %s: the munge credential is refused: %s",
		       path, j->mj.why);
		return false;
	}
	if (!trusted_uid(c, j->mj.uid)) {
		refuse(p, j->req, j->from, LD_REFUSE_UID, 403, "POST %s: the credential is uid %ld's: "
		       "want root's or slurm_user's (%s)", path, j->mj.uid,
		       c->slurm_user[0] ? c->slurm_user : "none set");
		return false;
	}
	if (!payload_is_expected(j)) {
		refuse(p, j->req, j->from, LD_REFUSE_CHECKSUM, 403, "POST %s: the credential's "
		       "payload is not the SHA-256 of the body (%s)", path, j->expect);
		return false;
	}
	return true;
}

/*
 * The 200 answer o to a checked POST j, with its own credential
 * (peerwire.h: over the request's checksum and the answer's body), made on
 * the worker and sent from reply_encoded: whoever posted takes a 200 only
 * from root or slurm_user.  The request stays deferred meanwhile.
 */
static void
reply_signed(struct ld_peers *p, struct mjob *j, json_t *o)
{
	char pay[PEERWIRE_REPLY_LEN];
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	struct mjob *r = NULL;
	size_t n = text ? strlen(text) : 0;

	json_decref(o);
	if (text) {
		char *t = realloc(text, n + 2);

		if (t) {
			t[n++] = '\n';
			t[n] = '\0';
			text = t;
			r = mjob_new(p, LD_MUNGE_ENCODE, peerwire_reply_payload(j->expect, t, n, pay));
		}
	}
	if (!r) {
		free(text);
		ld_reply_error(j->req, 500, "out of memory");
		return;
	}
	r->what = MJ_REPLY;
	r->req = j->req;
	r->body = (unsigned char *)text;
	r->len = n;
	copy_str(r->from, sizeof(r->from), j->from);
	if (ld_munge_submit(p->munge, &r->mj) < 0) {
		ld_reply_error(j->req, 503, "the munge queue is full: the answer cannot be signed");
		mjob_free(r);
	}
}

/* The credential of an answer is made (or not): send it. */
static void
reply_encoded(struct ld_peers *p, struct mjob *j)
{
	if (j->mj.merr != EMUNGE_SUCCESS || !j->mj.out) {
		ld_ratelog(&p->d->log, &p->rl_send, "peer: the answer to %s cannot be signed: "
			   "munge_encode: %.180s", j->from, j->mj.why);
		ld_reply_error(j->req, 503, "the answer cannot be signed (munge_encode failed)");
		return;
	}
	evhttp_add_header(evhttp_request_get_output_headers(j->req), PEERWIRE_HEADER, j->mj.out);
	ld_reply(j->req, 200, LD_CT_JSON, (const char *)j->body, j->len);
}

/* ---- who may speak for a node (peer_check_origin) --------------------------- */

/* Whether node name's address in the map is origin (an IPv4 address as
 * munge gives it); else why. */
static bool
from_node(const struct ld_peers *p, const char *name, const char *origin, char *why, size_t n)
{
	const struct topo_map *m = p->d->cur->map;
	long i = m ? topo_find_node(m, name) : -1;
	const char *addr = NULL;
	struct in_addr a, b;
	int port = 0;

	if (i < 0 || topo_node_peer(m, i, &addr, &port) < 0 || !addr || !*addr) {
		snprintf(why, n, "the map gives node %.64s no address to hold its credential's "
			 "origin against", name);
		return false;
	}
	if (inet_pton(AF_INET, addr, &a) != 1) {
		snprintf(why, n, "node %.64s's address in the map, %.64s, is no IPv4 address (munge's "
			 "origins are)", name, addr);
		return false;
	}
	if (!origin[0] || inet_pton(AF_INET, origin, &b) != 1 || a.s_addr != b.s_addr) {
		snprintf(why, n, "its credential comes from %s, not from node %.64s's address %.64s "
			 "(peer_check_origin)", origin[0] ? origin : "an unknown address", name, addr);
		return false;
	}
	return true;
}

/* What checks a summary's credential against its node: the origin of the
 * request's credential and, for a batch, the relay width. */
struct origin_check {
	const struct ld_peers *p;
	const char *origin;
	bool batch;
};

/* A summary of node h->node is taken from the host of its own node; in a
 * batch, from its own node (the relay's own summary) or its relay's (by
 * the step's node order and peer_fanin): no node speaks for another. */
static bool
origin_ok(void *arg, const struct ld_lead *l, const struct sum_header *h, char *why, size_t n)
{
	const struct origin_check *oc = arg;
	size_t w, g;
	long i;

	if (!oc->batch)
		return from_node(oc->p, h->node, oc->origin, why, n);
	if (from_node(oc->p, h->node, oc->origin, why, n))
		return true;	/* the relay's own summary */
	i = ld_lead_node_index(l, h->node);
	if (i < 0) {
		snprintf(why, n, "in a relay's batch, its credential not from this node, and the "
			 "step's node order is not known here to find its relay");
		return false;
	}
	w = fanin_width(&oc->p->d->cur->conf, ld_lead_nnodes(l));
	g = relay_of(w, (size_t)i);
	if (g == SIZE_MAX) {
		snprintf(why, n, "in a relay's batch, but nodes[%ld] has no relay with peer_fanin "
			 "width %zu: it sends to its leader itself", i, w);
		return false;
	}
	if (!from_node(oc->p, ld_lead_node_name(l, g), oc->origin, why, n)) {
		char t[WHY_LEN];

		snprintf(t, sizeof(t), "%s", why);
		snprintf(why, n, "in a batch not from its relay nodes[%zu] %.40s: %.120s", g,
			 ld_lead_node_name(l, g), t);
		return false;
	}
	return true;
}

/* The check for a POST j's summaries (NULL: peer_check_origin = no). */
static const struct ld_take_check *
take_check(struct ld_peers *p, const struct mjob *j, bool batch, struct origin_check *oc,
	   struct ld_take_check *chk)
{
	if (!p->d->cur->conf.peer_check_origin)
		return NULL;
	oc->p = p;
	oc->origin = j->mj.origin;
	oc->batch = batch;
	chk->ok = origin_ok;
	chk->arg = oc;
	return chk;
}

/* The 200 answer to a node's summary: with the captures of its culprits'
 * stacks the leader asks of it (peerwire.h), if any. */
static json_t *
summary_answer(struct ld_peers *p, const struct sum_header *h)
{
	json_t *o = json_pack("{s:s}", "status", "ok");
	json_t *cap = ld_stacks_asked(p->d->stacks, h->job_id, h->step_id, h->node);

	if (o && cap)
		json_object_set_new(o, "capture", cap);
	else
		json_decref(cap);
	return o;
}

static void
summary_checked(struct ld_peers *p, struct mjob *j)
{
	struct origin_check oc;
	struct ld_take_check chk;
	enum ld_peer_refusal r;
	pl_err_t err;
	int status;

	if (!post_credential_ok(p, j, "/v1/peer/summary"))
		return;
	pl_err_clear(&err);
	status = ld_lead_take(p->leads, j->body, j->len, j->recv_ns,
			      take_check(p, j, false, &oc, &chk), &r, &err);
	if (status != 200) {
		refuse(p, j->req, j->from, r, status, "POST /v1/peer/summary: %s", err.text);
		return;
	}
	p->st.accepted++;
	reply_signed(p, j, summary_answer(p, ld_lead_last(p->leads)));
}

static struct sstep *sstep_get(struct ld_peers *p, uint64_t job, uint64_t step);

/* Where name is in watch step wi's order of n nodes, or SIZE_MAX. */
static size_t
order_index(struct ld_peers *p, size_t wi, size_t n, const char *name)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (strcmp(ld_watch_step_node(p->d->watch, wi, k), name) == 0)
			return k;
	return SIZE_MAX;
}

/*
 * A member's summary come to this node as its relay: checked whole
 * (sum_decode), then held for the next batch, replacing an older one of
 * the same node; taken in directly when this node leads the step itself
 * (its own summaries reach no node before it).  The HTTP status, with
 * err and *r.
 */
static int
relay_take(struct ld_peers *p, struct mjob *j, enum ld_peer_refusal *r, pl_err_t *err)
{
	struct sum_rank_info *info = NULL;
	struct detect_rank *ranks = NULL;
	struct ld_watch_step ws;
	struct sum_header h;
	struct sstep *ss;
	struct held *hd = NULL;
	size_t n, me, from, i, need;
	char why[WHY_LEN];
	long wi;
	int status = 409;

	*r = LD_REFUSE_SUMMARY;
	if (sum_decode(j->body, j->len, j->recv_ns, &h, &ranks, &info, &n, err) < 0)
		return 422;
	free(ranks);
	free(info);
	if (p->d->cur->conf.peer_check_origin && !from_node(p, h.node, j->mj.origin, why, sizeof(why))) {
		*r = LD_REFUSE_ORIGIN;
		return fail(err, 403, "job %" PRIu64 ".%" PRIu64 " from node %s: %s", h.job_id,
			    h.step_id, h.node, why);
	}
	*r = LD_REFUSE_STEP;
	wi = ld_watch_step_find(p->d->watch, h.job_id, h.step_id);
	if (wi >= 0)
		ld_watch_step_at(p->d->watch, (size_t)wi, &ws);
	if (wi < 0 || !ws.known)
		return fail(err, 409, "job %" PRIu64 ".%" PRIu64 " from node %s: the step is not "
			    "registered on this node (yet), so it cannot relay it: send to the leader",
			    h.job_id, h.step_id, h.node);
	if (ws.uid != h.uid || ws.world != h.world || memcmp(ws.size, h.size, sizeof(ws.size)) != 0)
		return fail(err, 409, "job %" PRIu64 ".%" PRIu64 " from node %s: uid %" PRIu32
			    ", world %" PRIu32 " or layout other than the step registered here",
			    h.job_id, h.step_id, h.node, h.uid, h.world);
	me = order_index(p, (size_t)wi, ws.nnodes, ws.node);
	from = order_index(p, (size_t)wi, ws.nnodes, h.node);
	if (me == SIZE_MAX || from == SIZE_MAX || from <= me)
		return fail(err, 409, "job %" PRIu64 ".%" PRIu64 ": node %s is %s the step's order "
			    "after this node (%s), so this node does not relay for it", h.job_id,
			    h.step_id, h.node, from == SIZE_MAX ? "not in" : "not", ws.node);
	ss = sstep_get(p, h.job_id, h.step_id);
	if (!ss)
		return fail(err, 500, "out of memory");
	if (ss->target == me) {
		/* this node leads the step now: no node before it answers */
		status = ld_lead_take(p->leads, j->body, j->len, j->recv_ns, NULL, r, err);
		if (status == 200)
			p->st.accepted++;
		return status;
	}
	/* a member keeps its slot once it has one: the last msg_seq relayed
	 * refuses a stale one after the batch went too */
	for (i = 0; i < ss->nheld && !hd; i++)
		if (ss->held[i].node[0] && strcmp(ss->held[i].node, h.node) == 0)
			hd = &ss->held[i];
	if (hd && hd->boot_id == h.boot_id && h.msg_seq <= hd->msg_seq) {
		*r = LD_REFUSE_STALE;
		return fail(err, 409, "job %" PRIu64 ".%" PRIu64 " from node %s: msg_seq %" PRIu64
			    " is not newer than %" PRIu64 ", held to relay", h.job_id, h.step_id,
			    h.node, h.msg_seq, hd->msg_seq);
	}
	/* room for every held summary and this node's own in one batch */
	need = ss->held_bytes - (hd && hd->full ? hd->body.len + SUM_BATCH_ITEM_BYTES : 0) +
	       j->len + SUM_BATCH_ITEM_BYTES;
	if (need > SUM_BATCH_MAX_BYTES - SUM_BATCH_HEADER_BYTES - SUM_BATCH_ITEM_BYTES -
	    SUM_MAX_BYTES || (!hd && ss->nheld + 2 > SUM_BATCH_MAX_ITEMS)) {
		*r = LD_REFUSE_BUSY;
		return fail(err, 507, "job %" PRIu64 ".%" PRIu64 " from node %s: this relay holds "
			    "%zu summaries of %zu bytes already, a batch's most: send to the "
			    "leader", h.job_id, h.step_id, h.node, ss->nheld, ss->held_bytes);
	}
	if (!hd) {
		if (ss->nheld == ss->capheld) {
			size_t cap = ss->capheld ? 2 * ss->capheld : 8;
			struct held *v = realloc(ss->held, cap * sizeof(*v));

			if (!v)
				return fail(err, 500, "out of memory");
			memset(v + ss->capheld, 0, (cap - ss->capheld) * sizeof(*v));
			ss->held = v;
			ss->capheld = cap;
		}
		hd = &ss->held[ss->nheld++];
		copy_str(hd->node, sizeof(hd->node), h.node);
	} else if (hd->full) {
		ss->held_bytes -= hd->body.len + SUM_BATCH_ITEM_BYTES;
	}
	hd->body.len = 0;
	if (buf_add(&hd->body, j->body, j->len) < 0) {
		buf_free(&hd->body);
		hd->full = false;
		return fail(err, 500, "out of memory");
	}
	hd->full = true;
	hd->boot_id = h.boot_id;
	hd->msg_seq = h.msg_seq;
	hd->recv_ns = j->recv_ns;
	ss->held_bytes += j->len + SUM_BATCH_ITEM_BYTES;
	p->st.relayed++;
	return 200;
}

static void
relay_checked(struct ld_peers *p, struct mjob *j)
{
	enum ld_peer_refusal r;
	pl_err_t err;
	int status;

	if (!post_credential_ok(p, j, "/v1/peer/relay"))
		return;
	pl_err_clear(&err);
	status = relay_take(p, j, &r, &err);
	if (status != 200) {
		refuse(p, j->req, j->from, r, status, "POST /v1/peer/relay: %s", err.text);
		return;
	}
	reply_signed(p, j, json_pack("{s:s}", "status", "ok"));
}

/*
 * Every summary of a batch taken, each as if it had come alone, at the
 * time it came to the relay (the batch's arrival less its hold).  An item
 * refused is counted and logged on its own; the batch is answered 200
 * when one item was taken, else with the first refusal.
 */
static int
batch_take(struct ld_peers *p, const struct ld_take_check *chk, const void *data, size_t len,
	   uint64_t recv_ns, size_t *taken, size_t *refused, enum ld_peer_refusal *r, pl_err_t *err)
{
	const void *s;
	size_t off = 0, sl;
	uint64_t hold;
	int status, first = 0;
	enum ld_peer_refusal ir, fr = LD_REFUSE_SUMMARY;
	pl_err_t ierr, ferr;

	*taken = *refused = 0;
	*r = LD_REFUSE_SUMMARY;
	if (sum_batch_check(data, len, err) < 0)
		return 422;
	pl_err_clear(&ferr);
	while (sum_batch_next(data, len, &off, &s, &sl, &hold, err) == 1) {
		pl_err_clear(&ierr);
		status = ld_lead_take(p->leads, s, sl, hold < recv_ns ? recv_ns - hold : 1, chk, &ir,
				      &ierr);
		p->st.batch_items++;
		if (status == 200) {
			(*taken)++;
			p->st.accepted++;
			continue;
		}
		(*refused)++;
		refuse(p, NULL, "a batch", ir, status, "an item of POST /v1/peer/batch: %s", ierr.text);
		if (!first) {
			first = status;
			fr = ir;
			ferr = ierr;
		}
	}
	if (*taken || !first)
		return 200;
	*r = fr;
	*err = ferr;
	return first;
}

static void
batch_checked(struct ld_peers *p, struct mjob *j)
{
	struct origin_check oc;
	struct ld_take_check chk;
	enum ld_peer_refusal r;
	size_t taken, refused;
	pl_err_t err;
	int status;

	if (!post_credential_ok(p, j, "/v1/peer/batch"))
		return;
	pl_err_clear(&err);
	p->st.batches_in++;
	status = batch_take(p, take_check(p, j, true, &oc, &chk), j->body, j->len, j->recv_ns, &taken,
			    &refused, &r, &err);
	if (status != 200) {
		refuse(p, j->req, j->from, r, status, "POST /v1/peer/batch: %s", err.text);
		return;
	}
	reply_signed(p, j, json_pack("{s:s, s:I, s:I}", "status", "ok", "taken", (json_int_t)taken,
				     "refused", (json_int_t)refused));
}

static void
step_checked(struct ld_peers *p, struct mjob *j)
{
	const struct ld_conf *c = &p->d->cur->conf;
	bool all;
	json_t *o = NULL;
	pl_err_t err;
	int status;

	if (munge_failed_here(p, j)) {
		refuse(p, j->req, j->from, LD_REFUSE_MUNGED, 503, "GET /v1/watch/step: this node's "
		       "munged cannot check the credential now: %s", j->mj.why);
		return;
	}
	if (j->mj.merr != EMUNGE_SUCCESS) {
		refuse(p, j->req, j->from, j->mj.merr == EMUNGE_CRED_REPLAYED ? LD_REFUSE_REPLAYED :
		       LD_REFUSE_CRED, 403, "GET /v1/watch/step: the munge credential is refused: %s",
		       j->mj.why);
		return;
	}
	if (!payload_is_expected(j)) {
		refuse(p, j->req, j->from, LD_REFUSE_CHECKSUM, 403, "GET /v1/watch/step: the "
		       "credential's payload is not the request line '%s'", j->expect);
		return;
	}
	all = trusted_uid(c, j->mj.uid);
	pl_err_clear(&err);
	status = ld_peer_step_json(p, j->sq.job, j->sq.step, j->sq.from, j->sq.count, all, j->mj.uid,
				   &o, &err);
	if (o)
		ld_reply_json(j->req, status, o);
	else
		ld_reply_error(j->req, status, err.text);
}

/* The worker's answers, on the loop. */
static void link_encoded(struct ld_peers *p, struct mjob *j);
static void answer_checked(struct ld_peers *p, struct mjob *j);

static void
on_munged(void *arg, struct ld_munge_job *mj)
{
	struct ld_peers *p = arg;
	struct mjob *j = (struct mjob *)mj;

	if (j->what == MJ_REPLY)
		reply_encoded(p, j);
	else if (j->mj.kind == LD_MUNGE_ENCODE)
		link_encoded(p, j);
	else if (j->what == MJ_ANSWER)
		answer_checked(p, j);
	else if (j->what == MJ_SUMMARY)
		summary_checked(p, j);
	else if (j->what == MJ_RELAY)
		relay_checked(p, j);
	else if (j->what == MJ_BATCH)
		batch_checked(p, j);
	else
		step_checked(p, j);
	mjob_free(j);
}

/* Hand a checked request's job to the worker: answered from there. */
static void
defer_to_worker(struct ld_peers *p, struct evhttp_request *req, struct mjob *j, const char *what)
{
	if (ld_munge_submit(p->munge, &j->mj) < 0) {
		refuse(p, req, j->from, LD_REFUSE_BUSY, 503, "%s: %d credentials are waiting to be "
		       "checked already: try again", what, LD_MUNGE_QUEUE_MAX);
		mjob_free(j);
		return;
	}
	ld_conns_request_defer(p->conns);
}

/* The request's credential when it reads as one (peerwire_cred_shape:
 * "MUNGE:", base64, ":"), else NULL: anything else is refused before its
 * body is looked at. */
static const char *
credential(struct evhttp_request *req)
{
	const char *v = evhttp_find_header(evhttp_request_get_input_headers(req), PEERWIRE_HEADER);

	return v && peerwire_cred_shape(v) ? v : NULL;
}

/* On the worker: the body out of its evbuffer and the payload its
 * credential must carry (its SHA-256), so that neither the copy nor the
 * hash of up to SUM_BATCH_MAX_BYTES holds the loop.  Out of memory leaves
 * expect NULL: refused as a checksum that does not match. */
static void
post_prep(struct ld_munge_job *mj)
{
	struct mjob *j = (struct mjob *)mj;
	char hex[SHA256_HEX_LEN];

	j->body = malloc(j->len);
	if (j->body && evbuffer_remove(j->in, j->body, j->len) == (int)j->len)
		j->expect = strdup(peerwire_post_payload(j->body, j->len, hex));
	evbuffer_free(j->in);
	j->in = NULL;
}

/* POST path (a summary, a member's summary for its relay, or a batch):
 * its credential to the worker, with the body's SHA-256 it must carry. */
static void
do_post(struct ld_peers *p, struct evhttp_request *req, const char *from, enum mj_what what,
	const char *path)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	const char *cred = credential(req);
	const char *want = what == MJ_BATCH ? "a batch of node summaries" : "a node summary";
	size_t most = (size_t)p->d->cur->conf.peer_max_queued_bytes;
	size_t src_most = (size_t)p->d->cur->conf.peer_source_max_queued_bytes;
	const struct source *s;
	char host[SOURCE_LEN];
	struct mjob *j;

	p->st.received++;
	if (!cred) {
		refuse(p, req, from, LD_REFUSE_UNAUTH, 401, "POST %s: no X-PL-Munge header that reads "
		       "as a munge credential of at most %d bytes: want one of root or slurm_user "
		       "whose payload is the SHA-256 of the body, in lowercase hex", path,
		       PEERWIRE_CRED_MAX);
		return;
	}
	if (len == 0 || (what != MJ_BATCH && len > SUM_MAX_BYTES)) {
		refuse(p, req, from, LD_REFUSE_REQUEST, len ? 413 : 400, "POST %s: %s body of %zu "
		       "bytes: want %s", path, len ? "a" : "an empty", len, want);
		return;
	}
	/* what waits for the worker is bounded in bytes as well as in jobs */
	if (p->queued_bytes + len > most) {
		refuse(p, req, from, LD_REFUSE_BUSY, 503, "POST %s: %zu bytes of bodies are waiting "
		       "for their credentials to be checked already (peer_max_queued_bytes %zu): "
		       "try again", path, p->queued_bytes, most);
		return;
	}
	/* and per source address: one client cannot take it all */
	req_host(req, host, sizeof(host));
	s = source_find(p, host);
	if (s && (s->bytes + len > src_most || s->jobs >= SOURCE_MAX_JOBS)) {
		refuse(p, req, from, LD_REFUSE_BUSY, 503, "POST %s: %s has %u POSTs of %zu bytes "
		       "waiting for their credentials to be checked already (at most %d, "
		       "peer_source_max_queued_bytes %zu): try again", path, host, s->jobs, s->bytes,
		       SOURCE_MAX_JOBS, src_most);
		return;
	}
	if (!s && len > src_most) {
		refuse(p, req, from, LD_REFUSE_BUSY, 503, "POST %s: a body of %zu bytes is more than "
		       "one source may have waiting (peer_source_max_queued_bytes %zu)", path, len,
		       src_most);
		return;
	}
	j = mjob_new(p, LD_MUNGE_DECODE, cred);
	if (j && !(j->in = evbuffer_new())) {
		mjob_free(j);
		j = NULL;
	}
	/* the body's chains move over whole: no copy on the loop */
	if (!j || evbuffer_add_buffer(j->in, in) < 0) {
		mjob_free(j);
		ld_reply_error(req, 500, "out of memory");
		return;
	}
	if (!source_add(p, host, len)) {
		mjob_free(j);
		ld_reply_error(req, 500, "out of memory");
		return;
	}
	copy_str(j->src, sizeof(j->src), host);
	j->mj.prep = post_prep;
	j->what = what;
	j->len = len;
	j->p = p;
	p->queued_bytes += len;
	j->req = req;
	j->recv_ns = mono_ns();
	copy_str(j->from, sizeof(j->from), from);
	defer_to_worker(p, req, j, path);
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
		ld_reply_error(req, 400, "GET /v1/watch/step: " STEP_QUERY_HELP);
		return;
	}
	if (!cred) {
		refuse(p, req, from, LD_REFUSE_UNAUTH, 401, "GET /v1/watch/step over TCP: no "
		       "X-PL-Munge header: want a munge credential whose payload is the request "
		       "line, 'GET %s'", evhttp_request_get_uri(req));
		return;
	}
	peerwire_get_payload(&line, evhttp_request_get_uri(req));
	j = mjob_new(p, LD_MUNGE_DECODE, cred);
	if (!j || line.bad || !(j->expect = buf_take(&line))) {
		buf_free(&line);
		mjob_free(j);
		ld_reply_error(req, 500, "out of memory");
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
	int k;

	ld_conns_request_begin(p->conns, req);
	req_from(req, from, sizeof(from));
	for (k = 0; path && k < 3; k++)
		if (strcmp(path, link_paths[k]) == 0)
			break;
	if (path && k < 3) {
		if (m == EVHTTP_REQ_POST) {
			do_post(p, req, from, k == LINK_RELAY ? MJ_RELAY : k == LINK_BATCH ? MJ_BATCH :
				MJ_SUMMARY, link_paths[k]);
		} else {
			evhttp_add_header(oh, "Allow", "POST");
			refuse(p, req, from, LD_REFUSE_REQUEST, 405, "%s: method not allowed (allowed: "
			       "POST)", link_paths[k]);
		}
	} else if (path && strcmp(path, PEERWIRE_PATH_STEP) == 0) {
		if (m == EVHTTP_REQ_GET) {
			do_step_get(p, req, from);
		} else {
			evhttp_add_header(oh, "Allow", "GET");
			refuse(p, req, from, LD_REFUSE_REQUEST, 405, "/v1/watch/step: method not allowed "
			       "(allowed: GET)");
		}
	} else {
		refuse(p, req, from, LD_REFUSE_REQUEST, 404, "no such endpoint on the peer listener: "
		       "%s (endpoints: /v1/peer/summary, /v1/peer/relay, /v1/peer/batch, "
		       "/v1/watch/step)",
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
	for (i = 0; i < ss->nheld; i++)
		buf_free(&ss->held[i].body);
	free(ss->held);
	buf_free(&ss->batch);
	free(ss);
}

/* The link of ss to node k (name) posting kind, made when new.  NULL when
 * out of memory. */
static struct plink *
link_get(struct ld_peers *p, struct sstep *ss, size_t k, const char *name, enum link_kind kind)
{
	struct plink **v, *ln;
	size_t i;

	for (i = 0; i < ss->nlinks; i++)
		if (ss->links[i]->k == k && ss->links[i]->kind == kind)
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
	ln->kind = kind;
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

/* The summary that came while k was busy, if any, goes now. */
static void
link_next(struct ld_peers *p, struct plink *k)
{
	struct buf t;

	if (!k->has_next)
		return;
	t = k->body;
	k->body = k->next;
	k->next = t;
	buf_free(&k->next);
	k->has_next = false;
	link_start(p, k);
}

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
	link_next(p, k);
}

/* k's summary not sent, or its answer not checked, for this node's own
 * munged or worker (why): not the target's failure, so nothing fails
 * over (the leader counts this node lost if it lasts); counted. */
static void
link_unsent(struct ld_peers *p, struct plink *k, const char *why)
{
	struct sstep *ss = k->owner;
	struct buf eb = BUF_INIT;

	k->state = LINK_IDLE;
	p->st.unsent++;
	p->munge_down_unsent++;
	snprintf(k->why, sizeof(k->why), "not sent: %s", why);
	ld_ratelog(&p->d->log, &p->rl_send, "peer: job %" PRIu64 ".%" PRIu64 ": a summary to node "
		   "%s not sent: %s", ss->job, ss->step, k->node, ld_escape(&eb, why, 300));
	buf_free(&eb);
	link_next(p, k);
}

/* The leader's 200 answer to a summary (body, NUL-terminated, checked)
 * may ask for captures of this node's culprits (peerwire.h): an answer
 * that is not JSON asks nothing. */
static void
take_captures(struct ld_peers *p, struct plink *k, const char *body)
{
	json_t *o;

	if (!strstr(body, "\"capture\""))
		return;
	o = json_loads(body, 0, NULL);
	if (json_is_object(o) && json_object_get(o, "capture"))
		ld_stacks_requested(p->d->stacks, k->owner->job, k->owner->step, k->node,
				    json_object_get(o, "capture"));
	json_decref(o);
}

/* Hand k's munge job j to the worker: k is then in state, or its delivery
 * failed (the queue full). */
static void
link_submit(struct ld_peers *p, struct plink *k, struct mjob *j, enum link_state state)
{
	j->link_id = k->id;
	if (ld_munge_submit(p->munge, &j->mj) < 0) {
		mjob_free(j);
		link_unsent(p, k, "this node's munge queue is full");
		return;
	}
	k->state = state;
}

/* A 200 to k's POST refused (why): counted, said (at most every
 * REFUSAL_LOG_MS: a program on a peer's port answers every round), and
 * the delivery failed. */
static void
answer_refused(struct ld_peers *p, struct plink *k, const char *why)
{
	p->st.answers_refused++;
	ld_ratelog(&p->d->log, &p->rl_answer, "peer: job %" PRIu64 ".%" PRIu64 ": an answer refused: "
		   "%s", k->owner->job, k->owner->step, why);
	link_ended(p, k, false, why);
}

/*
 * A 200 to this node's POST over k: taken only with its credential
 * (peerwire.h), checked on the worker (answer_checked); anything else
 * answering on the peer port (a user's program bound there while layoutd
 * was down) fails the delivery, and the sender fails over as for a node
 * that does not answer.
 */
static void
answer_check(struct ld_peers *p, struct plink *k, const struct ld_http_result *r)
{
	char pay[PEERWIRE_REPLY_LEN], why[WHY_LEN];
	struct mjob *j = NULL;

	k->http = 0;
	if (!r->header || !peerwire_cred_shape(r->header)) {
		snprintf(why, sizeof(why), "node %s answered 200 with no %s credential: not "
			 "layoutd's answer (another program on its peer port?)", k->node,
			 PEERWIRE_HEADER);
		answer_refused(p, k, why);
		return;
	}
	if (r->len > LD_HTTP_BODY_MAX || !r->body) {
		snprintf(why, sizeof(why), "node %s answered with %zu bytes: more than an answer "
			 "holds (%d)", k->node, r->len, LD_HTTP_BODY_MAX);
		answer_refused(p, k, why);
		return;
	}
	j = mjob_new(p, LD_MUNGE_DECODE, r->header);
	if (j) {
		j->expect = strdup(peerwire_reply_payload(k->req_hex, r->body, r->len, pay));
		j->body = malloc(r->len + 1);
	}
	if (!j || !j->expect || !j->body) {
		mjob_free(j);
		link_ended(p, k, false, "out of memory");
		return;
	}
	memcpy(j->body, r->body, r->len);
	j->body[r->len] = '\0';
	j->len = r->len;
	j->what = MJ_ANSWER;
	link_submit(p, k, j, LINK_CHECKING);
}

/* An answer's credential checked: the delivery ends, ok when it is root's
 * or slurm_user's over what was sent and what came back. */
static void
answer_checked(struct ld_peers *p, struct mjob *j)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct plink *k = link_by_id(p, j->link_id);
	char why[WHY_LEN];

	if (!k || k->state != LINK_CHECKING)
		return;		/* the step went meanwhile */
	if (munge_failed_here(p, j)) {
		snprintf(why, sizeof(why), "node %.40s's answer not checked: this node's munged: "
			 "%.100s", k->node, j->mj.why);
		link_unsent(p, k, why);
		return;
	}
	if (j->mj.merr != EMUNGE_SUCCESS) {
		snprintf(why, sizeof(why), "node %.40s's answer: its credential is refused: %.100s",
			 k->node, j->mj.why);
	} else if (!trusted_uid(c, j->mj.uid)) {
		snprintf(why, sizeof(why), "node %s's answer carries uid %ld's credential: want "
			 "root's or slurm_user's (another program on its peer port?)", k->node,
			 j->mj.uid);
	} else if (!payload_is_expected(j)) {
		snprintf(why, sizeof(why), "node %s's answer: its credential covers another request "
			 "or body", k->node);
	} else {
		if (k->kind == LINK_SUMMARY)
			take_captures(p, k, (const char *)j->body);
		link_ended(p, k, true, "");
		return;
	}
	answer_refused(p, k, why);
}

static void
on_posted(void *arg, const struct ld_http_result *r)
{
	struct plink *k = arg;
	char why[WHY_LEN];
	size_t n;

	if (r->status == 200) {
		answer_check(k->peers, k, r);
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

/* Deliver k->body: its credential first (the worker), then the POST. */
static void
link_start(struct ld_peers *p, struct plink *k)
{
	char hex[SHA256_HEX_LEN];
	struct mjob *j;

	j = mjob_new(p, LD_MUNGE_ENCODE, peerwire_post_payload(k->body.s, k->body.len, hex));
	copy_str(k->req_hex, sizeof(k->req_hex), hex);
	if (!j) {
		link_ended(p, k, false, "out of memory");
		return;
	}
	link_submit(p, k, j, LINK_ENCODING);
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
	if (j->mj.merr != EMUNGE_SUCCESS || !j->mj.out) {
		munge_state(p, false, j->mj.why);
		snprintf(why, sizeof(why), "this node's munge_encode: %.160s", j->mj.why);
		link_unsent(p, k, why);
		return;
	}
	munge_state(p, true, NULL);
	peerwire_url(&url, p->d->cur->map, k->node, c->peer_port, link_paths[k->kind]);
	buf_printf(&hdr, PEERWIRE_HEADER ": %s", j->mj.out);
	headers[0] = buf_str(&hdr);
	headers[1] = NULL;
	memset(&rq, 0, sizeof(rq));
	rq.url = buf_str(&url);
	rq.content_type = "application/octet-stream";
	rq.body = k->body.s;
	rq.len = k->body.len;
	rq.headers = headers;
	rq.want_header = PEERWIRE_HEADER;
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

static const char *
ld_peer_target(const struct ld_peers *p, uint64_t job, uint64_t step, size_t *k, bool *relay)
{
	const struct sstep *ss;

	for (ss = p->sends; ss; ss = ss->next)
		if (ss->job == job && ss->step == step) {
			if (ss->target == SIZE_MAX || !ss->target_name[0])
				return NULL;
			*k = ss->target;
			*relay = ss->target_relay;
			return ss->target_name;
		}
	return NULL;
}

/* What the leader asks: where this node's own summaries of job.step go. */
static const char *
lead_target(void *arg, uint64_t job, uint64_t step)
{
	size_t k;
	bool relay;

	return ld_peer_target(arg, job, step, &k, &relay);
}

/* This node's summary of watch step wi into out, its header into *hp and
 * its ranks (p->scratch, p->scratch_info) counted in *np.  0, or -1
 * (logged). */
static int
build_summary(struct ld_peers *p, size_t wi, const struct ld_watch_step *ws, struct sstep *ss,
	      uint64_t now, struct buf *out, struct sum_header *hp, size_t *np)
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
	*hp = h;
	*np = n;
	return 0;
}

/* As relay of step ss: its own summary (sum, may be NULL) and every held
 * one into ss->batch.  The number of items. */
static size_t
relay_batch(struct ld_peers *p, struct sstep *ss, const struct buf *sum, uint64_t now)
{
	struct buf eb = BUF_INIT;
	size_t i;
	pl_err_t err;

	pl_err_clear(&err);
	if (sum_batch_begin(&ss->batch, &err) < 0 ||
	    (sum && sum_batch_add(&ss->batch, sum->s, sum->len, 0, &err) < 0))
		goto fail;
	for (i = 0; i < ss->nheld; i++)
		if (ss->held[i].full &&
		    sum_batch_add(&ss->batch, ss->held[i].body.s, ss->held[i].body.len,
				  now > ss->held[i].recv_ns ? now - ss->held[i].recv_ns : 0, &err) < 0)
			goto fail;
	return sum_batch_count(&ss->batch);
fail:
	ld_ratelog(&p->d->log, &p->rl_send, "peer: job %" PRIu64 ".%" PRIu64 ": no batch to "
		   "relay: %s", ss->job, ss->step, ld_escape(&eb, err.text, 300));
	buf_free(&eb);
	ss->batch.len = 0;
	return 0;
}

/* The held summaries sent on (or taken in): their slots free again. */
static void
relay_clear(struct sstep *ss)
{
	size_t i;

	for (i = 0; i < ss->nheld; i++) {
		ss->held[i].full = false;
		ss->held[i].body.len = 0;
	}
	ss->held_bytes = 0;
}

/*
 * Route one round of step wi: this node's summary (sum; NULL when it has
 * none this round), as a relay with its members' held ones in one batch.
 * A member of a relay's group sends to its relay while the relay takes
 * them; past peer_fail_intervals failures there, or without a relay, to
 * the first node of the order that has not failed peer_fail_intervals
 * deliveries in a row (those before it get it too, to be found again once
 * they answer), or, reaching this node, into this node's own view.  A node
 * that leads the step (a follower sends to it) takes its own summary in as
 * well.
 */
static void
route_summary(struct ld_peers *p, size_t wi, const struct ld_watch_step *ws, struct sstep *ss,
	      const struct buf *sum, const struct sum_header *h, size_t n, uint64_t now)
{
	const struct ld_conf *c = &p->d->cur->conf;
	enum ld_peer_refusal r;
	const char *name = NULL;
	struct plink *k;
	bool self = false;
	size_t i, w = fanin_width(c, ws->nnodes), me, relay, to = SIZE_MAX;
	enum link_kind kind = LINK_SUMMARY;
	const struct buf *out = sum;
	pl_err_t err;

	me = order_index(p, wi, ws->nnodes, ws->node);
	relay = me == SIZE_MAX ? SIZE_MAX : relay_of(w, me);
	if (me != SIZE_MAX && (is_relay(w, me) || ss->held_bytes)) {
		if (!relay_batch(p, ss, sum, now))
			return;
		out = &ss->batch;
		kind = LINK_BATCH;
		relay = SIZE_MAX;	/* a batch goes to a leader */
	} else if (!sum) {
		return;
	}
	if (relay != SIZE_MAX) {
		name = ld_watch_step_node(p->d->watch, wi, relay);
		k = link_get(p, ss, relay, name, LINK_RELAY);
		if (k) {
			link_send(p, k, out);
			if (k->fails < (unsigned)c->peer_fail_intervals)
				to = relay;
		}
	}
	for (i = 0; to == SIZE_MAX && i < ws->nnodes; i++) {
		if (i == relay)
			continue;
		name = ld_watch_step_node(p->d->watch, wi, i);
		if (strcmp(name, ws->node) == 0) {
			self = true;
			to = i;
			break;
		}
		k = link_get(p, ss, i, name, kind);
		if (!k)
			continue;
		link_send(p, k, out);
		if (k->fails < (unsigned)c->peer_fail_intervals)
			to = i;
	}
	if (to != ss->target && to != SIZE_MAX) {
		name = ld_watch_step_node(p->d->watch, wi, to);
		k = to != relay && to > 0 ? link_get(p, ss, 0, ld_watch_step_node(p->d->watch, wi, 0),
						      kind) : NULL;
		if (to == relay && ss->target != SIZE_MAX)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": summaries go to the "
			       "relay %s (nodes[%zu]) again", ss->job, ss->step, name, to);
		else if (to != relay && to > 0)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": summaries go to %s "
			       "(nodes[%zu]%s): the nodes before it%s failed %ld deliveries in a row (the "
			       "leader %s: %s)", ss->job, ss->step, name, to, self ? ", this node" : "",
			       relay != SIZE_MAX ? " and the relay" : "", c->peer_fail_intervals,
			       ld_watch_step_node(p->d->watch, wi, 0), k ? k->why : "?");
		else if (to == 0 && ss->target != SIZE_MAX)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": summaries go to the "
			       "leader %s%s", ss->job, ss->step, name, relay != SIZE_MAX ?
			       " (the relay failed)" : " again");
		if (to != relay && (to > 0 || relay != SIZE_MAX) &&
		    (ss->target == SIZE_MAX || ss->target == 0 || ss->target == relay))
			p->st.failovers++;
		ss->target = to;
		ss->target_relay = to == relay;
		snprintf(ss->target_name, sizeof(ss->target_name), "%s", name);
	}
	if (sum && (self || ld_lead_find(p->leads, ws->job_id, ws->step_id))) {
		pl_err_clear(&err);
		if (ld_lead_take_own(p->leads, h, p->scratch, p->scratch_info, n, now, self, &r,
				     &err) == 200)
			p->st.handed_in++;
		else
			ld_ratelog(&p->d->log, &p->rl_send, "peer: job %" PRIu64 ".%" PRIu64 ": this "
				   "node's own summary refused (%s): %s", ws->job_id, ws->step_id,
				   ld_peer_refusal_name(r), err.text);
	}
	if (self && kind == LINK_BATCH) {
		/* this relay leads: its members' summaries are taken in here */
		for (i = 0; i < ss->nheld; i++) {
			if (!ss->held[i].full)
				continue;
			pl_err_clear(&err);
			if (ld_lead_take(p->leads, ss->held[i].body.s, ss->held[i].body.len,
					 ss->held[i].recv_ns, NULL, &r, &err) == 200)
				p->st.accepted++;
			else
				refuse(p, NULL, ss->held[i].node, r, 409, "a relayed summary: %s",
				       err.text);
		}
	}
	if (kind == LINK_BATCH)
		relay_clear(ss);
}

/* Every watched step this node knows the order of: its summary. */
static void
send_all(struct ld_peers *p, uint64_t now)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct buf sum = BUF_INIT;
	struct sstep *ss, **pp;
	struct ld_watch_step ws;
	struct sum_header h;
	size_t i, nr, n = ld_watch_nsteps(p->d->watch);

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
		if (ws.ended && ss->final_sent && ws.nknown == ss->final_known) {
			if (ss->held_bytes)
				route_summary(p, i, &ws, ss, NULL, NULL, 0, now);	/* members' only */
			continue;
		}
		if (build_summary(p, i, &ws, ss, now, &sum, &h, &nr) < 0)
			continue;
		route_summary(p, i, &ws, ss, &sum, &h, nr, now);
		ss->final_sent = ws.ended;
		ss->final_known = ws.nknown;
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

void
ld_peer_tick(struct ld_peers *p)
{
	uint64_t now = mono_ns();

	send_all(p, now);
	ld_lead_all(p->leads, now);
}

/*
 * The step runs here but is led elsewhere: 421 with where this node sends
 * its summaries (the leader, or the node acting for it), so a client
 * follows one hop instead of asking every node.
 */
static int
ld_peer_elsewhere(const struct ld_peers *p, uint64_t job, uint64_t step, const char *self,
	       const char *leader, json_t **out, pl_err_t *err)
{
	bool relay = false, acting;
	size_t k = 0;
	const char *to = ld_peer_target(p, job, step, &k, &relay);
	const char *target = to ? to : leader;

	/* a relay leads or names where it sends in turn: one hop more */
	acting = to && !relay && k > 0;
	*out = peerwire_misdirected(job, step, self, target, relay, acting, err);
	return *out ? 421 : fail(err, 500, "out of memory");
}

int
ld_peer_step_json(const struct ld_peers *p, uint64_t job, uint64_t step, uint64_t from,
		  size_t count, bool all, long uid, json_t **out, pl_err_t *err)
{
	struct ld_watch_step ws;
	const char *leader;
	int status;
	long wi;

	status = ld_lead_step_json(p->leads, job, step, from, count, all, uid, out, err);
	if (status != 0)
		return status;
	wi = ld_watch_step_find(p->d->watch, job, step);
	leader = wi >= 0 ? ld_watch_step_node(p->d->watch, (size_t)wi, 0) : NULL;
	if (wi >= 0)
		ld_watch_step_at(p->d->watch, (size_t)wi, &ws);
	/* another user's step: the words of a step unknown here */
	if (wi >= 0 && !all && (long)ws.uid != uid)
		return ld_lead_not_here(p->d, job, step, err);
	if (leader && strcmp(leader, ws.node) == 0)
		return fail(err, 404, "job %" PRIu64 ".%" PRIu64 ": this node (%s) is its leader "
			    "but leads it not (yet): %s", job, step, ws.node,
			    p->d->cur->conf.peer_listen == LD_PEER_LISTEN_NO ?
			    "peer_listen = no, and the step spans several nodes" :
			    "no summary of it has come");
	if (leader)
		return ld_peer_elsewhere(p, job, step, ws.node, leader, out, err);
	return ld_lead_not_here(p->d, job, step, err);
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
		ld_reply_error(req, 400, "GET /v1/watch/step: " STEP_QUERY_HELP);
		return;
	}
	pl_err_clear(&err);
	status = ld_peer_step_json(p, sq.job, sq.step, sq.from, sq.count, all, uid, &o, &err);
	if (o)
		ld_reply_json(req, status, o);
	else
		ld_reply_error(req, status, err.text);
}

void
ld_peer_stats(const struct ld_peers *p, struct ld_peer_stats *st)
{
	*st = p->st;
	st->munge_ok = !p->munge_down;
	st->led_steps = ld_lead_count(p->leads);
	st->nodes_lost = ld_lead_nodes_lost(p->leads);
}

/* This node's munged, as the last credential made or checked here found
 * it. */
static json_t *
munge_json(const struct ld_peers *p)
{
	return json_pack("{s:b, s:o, s:o}", "ok", !p->munge_down,
			 "down_s", p->munge_down ? json_real(age_s(mono_ns(), p->munge_down_ns)) :
			 json_null(),
			 "error", p->munge_down ? json_string(p->munge_why) : json_null());
}

static const char *
link_state_name(enum link_state s)
{
	return s == LINK_ENCODING ? "credential" : s == LINK_POSTING ? "posting" :
	       s == LINK_CHECKING ? "checking" : "idle";
}

/* Whether job.step, watched here, is uid's (a step no longer watched here
 * has no owner known any more: it is shown to trusted callers only). */
static bool
step_of(const struct ld_peers *p, uint64_t job, uint64_t step, long uid)
{
	struct ld_watch_step ws;
	long wi = ld_watch_step_find(p->d->watch, job, step);

	if (wi < 0)
		return false;
	ld_watch_step_at(p->d->watch, (size_t)wi, &ws);
	return (long)ws.uid == uid;
}

json_t *
ld_peer_json(const struct ld_peers *p, bool all, long uid)
{
	const struct ld_conf *c = &p->d->cur->conf;
	json_t *ref = json_object(), *sends = json_array(), *leads = ld_lead_json(p->leads, all, uid);
	const struct sstep *ss;
	struct ld_peer_stats st;
	uint64_t now = mono_ns();
	size_t i;
	int r;

	ld_peer_stats(p, &st);
	for (r = 0; ref && r < LD_NREFUSE; r++)
		json_object_set_new(ref, ld_peer_refusal_name(r), json_integer((json_int_t)st.refused[r]));
	for (ss = p->sends; sends && ss; ss = ss->next) {
		json_t *links;

		if (!all && !step_of(p, ss->job, ss->step, uid))
			continue;
		links = json_array();

		for (i = 0; links && i < ss->nlinks; i++) {
			const struct plink *ln = ss->links[i];

			json_array_append_new(links, json_pack("{s:s, s:I, s:s, s:s, s:i, s:I, s:I, s:o, "
							       "s:o}",
							       "node", ln->node, "order", (json_int_t)ln->k,
							       "path", link_paths[ln->kind],
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
	return json_pack("{s:o, s:i, s:o, s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:o, s:I, s:I, s:I, "
			 "s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}",
			 "listen", p->listen_port >= 0 ? json_sprintf("%s:%d", p->listen_host,
								  p->listen_port) : json_null(),
			 "peer_port", c->peer_port,
			 "fanin", c->peer_fanin == LD_PEER_FANIN_AUTO ? json_string("auto") :
			 json_integer((json_int_t)c->peer_fanin),
			 "fail_intervals", (json_int_t)c->peer_fail_intervals,
			 "timeout_ms", (json_int_t)c->peer_timeout_ms,
			 "lost_s", (double)lost_ns(c) / 1e9,
			 "munge_ttl_s", (json_int_t)c->munge_ttl_s,
			 "boot_id", (json_int_t)(p->boot_id >> 1),
			 "received", (json_int_t)st.received, "accepted", (json_int_t)st.accepted,
			 "refused", ref, "handed_in", (json_int_t)st.handed_in,
			 "sent", (json_int_t)st.sent, "send_failures", (json_int_t)st.send_failures,
			 "unsent", (json_int_t)st.unsent, "munge", munge_json(p),
			 "answers_refused", (json_int_t)st.answers_refused,
			 "failovers", (json_int_t)st.failovers, "relayed", (json_int_t)st.relayed,
			 "batches_in", (json_int_t)st.batches_in,
			 "batch_items", (json_int_t)st.batch_items, "nodes_lost", (json_int_t)st.nodes_lost,
			 "sending", sends, "leading", leads);
}

/* ---- life ---------------------------------------------------------------------- */

void
ld_peer_set_findings_cb(struct ld_peers *p, ld_findings_cb cb)
{
	ld_leads_set_findings_cb(p->leads, cb);
}

struct ld_peers *
ld_peer_new(struct ld *d)
{
	struct ld_peers *p = calloc(1, sizeof(*p));
	int i;

	if (!p)
		return NULL;
	p->d = d;
	p->listen_port = -1;
	for (i = 0; i < LD_NREFUSE; i++)
		p->rl[i].interval_ms = REFUSAL_LOG_MS;
	p->rl_send.interval_ms = REFUSAL_LOG_MS;
	p->rl_answer.interval_ms = REFUSAL_LOG_MS;
	if (getrandom(&p->boot_id, sizeof(p->boot_id), 0) != (ssize_t)sizeof(p->boot_id))
		p->boot_id = mono_ns() ^ ((uint64_t)getpid() << 32) ^ real_ns();
	p->leads = ld_leads_new(d, lead_target, p);
	if (!p->leads)
		goto fail;
	p->munge = ld_munge_new(d->base, on_munged, p);
	if (!p->munge)
		goto fail;
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
		next = (struct mjob *)j->mj.next;
		if ((j->mj.kind == LD_MUNGE_DECODE || j->what == MJ_REPLY) && j->req)
			ld_reply_error(j->req, 503, "layoutd is stopping");
		mjob_free(j);
	}
}

void
ld_peer_free(struct ld_peers *p)
{
	struct sstep *ss;

	if (!p)
		return;
	if (p->munge)
		answer_pending(p, (struct mjob *)ld_munge_stop(p->munge));
	if (p->conns)
		ld_conns_shutdown(p->conns);
	if (p->http)
		evhttp_free(p->http);
	ld_conns_free(p->conns);
	while ((ss = p->sends)) {
		p->sends = ss->next;
		sstep_free(p, ss);
	}
	ld_leads_free(p->leads);
	ld_munge_free(p->munge);
	free(p->scratch);
	free(p->scratch_info);
	free(p->srcs);
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
	evhttp_set_max_body_size(p->http, (ev_ssize_t)SUM_BATCH_MAX_BYTES);
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
