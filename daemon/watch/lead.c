/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The steps this node leads (lead.h): per step the nodes and
 * every rank heard of, taken from the summaries as they come (over the
 * network, in relays' batches, or this node's own), the judge's rounds
 * over them each interval, the findings to the alerts, and the step's
 * view for GET /v1/watch/step.
 *
 * The leader keeps per node the last summary (its ranks copied into one
 * array of judge_rank, rebased on receipt), when it came, its boot_id and
 * msg_seq; a summary not newer than the held one from the same daemon
 * start is refused as stale.  A node silent for peer_lost_s is lost (its
 * ranks not present for the judge, which reports the node); a node whose
 * last summary had every rank exited is done, never lost.  A restarted
 * leader has nothing to rebuild: the next summaries are the whole state.
 */
#define _GNU_SOURCE		/* qsort_r */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "alerts.h"
#include "buf.h"
#include "detect.h"
#include "judge.h"
#include "layoutd.h"
#include "lead.h"
#include "stackfile.h"
#include "stacks.h"
#include "register.h"
#include "util.h"
#include "view.h"
#include "summary.h"
#include "topo_ix.h"

#define LEAD_MAX_FINDINGS 256		/* findings kept per step and round */


/* ---- the state ----------------------------------------------------------- */

/* A node of a step led here. */
struct lnode {
	char name[LD_PEER_NODE_LEN];
	bool heard;		/* a summary came */
	bool done;		/* in its last summary every rank had exited */
	bool lost;		/* as of the last round */
	bool unheard;		/* lost, to an acting leader that never heard
				 * from it (it may send to the leader still) */
	bool late;		/* not lost, its last summary older than
				 * late_ns (): its ranks not judged */
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
	uint64_t hang_ns, busy_ns;	/* the last round's thresholds */
	int slow_off;			/* and whether the slow rule was off */
	bool user_held_said;		/* the user's settings held, logged */
	char self[LD_PEER_NODE_LEN];
	struct lnode *nodes;
	size_t nnodes, capnodes;
	struct topo_ix node_ix;		/* name -> index into nodes */
	struct judge_node *jn;		/* capnodes of them, for the judge */
	struct judge_rank *rk;		/* every rank heard of */
	size_t nrk, caprk;
	uint32_t *rank_at;		/* world of them: index + 1 into rk, 0 none */
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

static const char *
lnode_name(const void *ctx, long i)
{
	const struct ld_lead *l = ctx;

	return l->nodes[i].name;
}

static long
node_find(const struct ld_lead *l, const char *name)
{
	return topo_ix_find(&l->node_ix, name, lnode_name, l);
}

static long
rank_find(const struct ld_lead *l, int64_t rank)
{
	if (rank < 0 || (uint64_t)rank >= l->world)
		return -1;
	return (long)l->rank_at[rank] - 1;
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
	if (topo_ix_add(&l->node_ix, (long)l->nnodes, lnode_name, l) < 0)
		return -1;
	return (long)l->nnodes++;
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
	topo_ix_free(&l->node_ix);
	free(l->rk);
	free(l->rank_at);
	judge_state_free(l->js);
	free(l);
}

/* The steps led here, and what the leader needs of the rest. */
struct ld_leads {
	struct ld *d;
	ld_findings_cb cb;
	ld_lead_target_cb target;	/* the peers': where own summaries go */
	void *target_arg;
	struct ld_lead *leads;
	long nleads;
	struct sum_space dec;		/* what ld_lead_take decodes into */
	struct sum_header last;		/* the header ld_lead_take took last */
};

static struct ld_lead *
lead_find(const struct ld_leads *p, uint64_t job, uint64_t step)
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
lead_new(struct ld_leads *p, const struct sum_header *h, long wi, uint64_t now, int *status,
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
	l->rank_at = calloc(l->world, sizeof(*l->rank_at));
	if (!l->rank_at)
		goto oom;
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
			snprintf(why, n, "%s %" PRIu32 ", not the step's %" PRIu32, reg_axes[a], h->size[a],
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
lead_take_ranks(struct ld_leads *p, struct ld_lead *l, long ni, const struct detect_rank *r,
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
		if ((long)l->rk[x].node != ni && !l->nodes[l->rk[x].node].lost &&
		    (l->rk[x].present || l->nodes[l->rk[x].node].late))
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
	/* a node sends the same ranks round after round: keep its index */
	rix = n == nd->nrix ? nd->rix : n ? malloc(n * sizeof(*rix)) : NULL;
	if (n && !rix)
		return fail(err, 500, "out of memory");
	for (i = 0; i < nd->nrix; i++)
		if ((long)l->rk[nd->rix[i]].node == ni)
			l->rk[nd->rix[i]].present = 0;
	for (i = 0; i < n; i++) {
		struct judge_rank *jr;

		x = rank_find(l, r[i].rank);
		if (x < 0) {
			/* 0 <= rank < world: sum_decode's check, the world the step's */
			x = (long)l->nrk++;
			l->rk[x].st.rank = r[i].rank;
			l->rank_at[r[i].rank] = (uint32_t)x + 1;
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
	if (rix != nd->rix)
		free(nd->rix);
	nd->rix = rix;
	nd->nrix = n;
	return 0;
}

/*
 * A summary decoded into p->dec (n ranks, header h), come at recv_ns: over
 * the network (own false: the sender's node must be another) or this
 * node's own, handed in (target: this node is its own target, so the step
 * is led here).  The HTTP status with err and *r, as ld_lead_take.
 */
static int
lead_take_decoded(struct ld_leads *p, const struct sum_header *hp, size_t n, uint64_t recv_ns,
		  bool own, bool target, const struct ld_take_check *chk, enum ld_peer_refusal *r,
		  pl_err_t *err)
{
	const struct sum_rank_info *info;
	const struct detect_rank *ranks;
	const struct sum_header h = *hp;
	struct ld_lead *l;
	struct lnode *nd;
	char why[WHY_LEN];
	size_t i;
	int status = 422;
	bool done = true;
	long ni, wi;

	ranks = p->dec.ranks;
	info = p->dec.info;
	*r = LD_REFUSE_STEP;
	status = 409;
	l = lead_find(p, h.job_id, h.step_id);
	if (chk && !chk->ok(chk->arg, l, &h, why, sizeof(why))) {
		*r = LD_REFUSE_ORIGIN;
		status = 403;
		pl_err_set(err, "job %" PRIu64 ".%" PRIu64 " from node %s: %s", h.job_id, h.step_id,
			   h.node, why);
		goto out;
	}
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
	return status;
}


long
ld_lead_node_index(const struct ld_lead *l, const char *name)
{
	return l && l->ordered ? node_find(l, name) : -1;
}

const char *
ld_lead_node_name(const struct ld_lead *l, size_t i)
{
	return i < l->nnodes ? l->nodes[i].name : "";
}

size_t
ld_lead_nnodes(const struct ld_lead *l)
{
	return l->nnodes;
}

int
ld_lead_take(struct ld_leads *p, const void *data, size_t len, uint64_t recv_ns,
	     const struct ld_take_check *chk, enum ld_peer_refusal *r, pl_err_t *err)
{
	struct sum_header h;
	size_t n = 0;

	int status;

	*r = LD_REFUSE_SUMMARY;
	if (sum_decode_in(data, len, recv_ns, &h, &p->dec, &n, err) < 0)
		return 422;
	status = lead_take_decoded(p, &h, n, recv_ns, false, false, chk, r, err);
	if (status == 200)
		p->last = h;
	return status;
}

const struct sum_header *
ld_lead_last(const struct ld_leads *p)
{
	return &p->last;
}

int
ld_lead_take_own(struct ld_leads *p, const struct sum_header *h, const struct detect_rank *ranks,
		 const struct sum_rank_info *info, size_t n, uint64_t recv_ns, bool target,
		 enum ld_peer_refusal *r, pl_err_t *err)
{
	size_t nout = 0;

	*r = LD_REFUSE_SUMMARY;
	if (sum_carry(h, ranks, info, n, recv_ns, &p->dec, &nout, err) < 0)
		return 422;
	return lead_take_decoded(p, h, nout, recv_ns, true, target, NULL, r, err);
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
log_findings(struct ld_leads *p, struct ld_lead *l)
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

/*
 * How old a node's last summary may be and still be judged: half the hang
 * threshold, at least two of its watch intervals, at most peer_lost_s.  A
 * summary is what its node saw then; judged at `now` its waits grow while
 * nothing is heard (a frozen layoutd, a slow link), and a transfer in
 * flight when it was read would cross the threshold before the node is
 * lost.  Half the threshold: a wait named stuck was seen in the node's own
 * summary to have lasted at least the other half.
 */
static uint64_t
late_ns(const struct ld_conf *c, const struct lnode *nd, uint64_t hang)
{
	uint64_t v = hang / 2, two = (uint64_t)(nd->interval_ms ? nd->interval_ms :
					       c->watch_interval_ms) * 2 * UINT64_C(1000000);

	if (v < two)
		v = two;
	return v < lost_ns(c) ? v : lost_ns(c);
}

/* Liveness: a node silent for peer_lost_s (since the step was led here,
 * when never heard) is lost, unless its ranks had all exited; one whose
 * last summary is older than late_ns() is late (its ranks not present, no
 * finding of its own).  A node acting for the leader judges only what it
 * heard: a node it never heard from is unheard (its ranks unknown, no
 * finding: it may reach the leader still), and the leader's own loss says
 * which nodes came here.  hang: the step's hang threshold. */
static void
lead_liveness(struct ld_leads *p, struct ld_lead *l, uint64_t now, uint64_t hang)
{
	const struct ld_conf *c = &p->d->cur->conf;
	uint64_t lost = lost_ns(c), since;
	bool acting = l->ordered && lead_acting(l);
	size_t k, i;

	for (k = 0; k < l->nnodes; k++) {
		struct lnode *nd = &l->nodes[k];
		bool was = nd->lost, self = strcmp(nd->name, l->self) == 0;

		since = nd->heard ? nd->last_ns : l->created_ns;
		nd->lost = !self && !nd->done && now > since && now - since > lost;
		nd->unheard = nd->lost && acting && k != 0 && !nd->heard;
		nd->late = !self && !nd->lost && !nd->done && nd->heard && now > since &&
			   now - since > late_ns(c, nd, hang);
		if (nd->lost && !was && nd->unheard)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": node %s not heard from "
			       "in %.1f s: acting for the leader %s, its ranks are not judged here",
			       l->job, l->step, nd->name, age_s(now, since), l->nodes[0].name);
		else if (nd->lost && !was)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": node %s lost: %s for %.1f s "
			       "(peer_lost_s %.1f)", l->job, l->step, nd->name,
			       nd->heard ? "no summary" : "never heard from", age_s(now, since),
			       (double)lost / 1e9);
		else if (was && !nd->lost)
			ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": node %s is back", l->job,
			       l->step, nd->name);
		if (nd->lost || nd->late)
			for (i = 0; i < nd->nrix; i++)
				if (l->rk[nd->rix[i]].node == k)
					l->rk[nd->rix[i]].present = 0;
		l->jn[k].name = nd->name;
		l->jn[k].lost = nd->lost;
		l->jn[k].late = nd->late;
		l->jn[k].leader = acting && k == 0;
		l->jn[k].unheard = nd->unheard;
		l->jn[k].last_ns = nd->heard ? nd->last_ns : 0;
	}
}

/*
 * The step's order became known here after the lead began without it (a
 * follower's summary came before this node's own registration): the
 * nodes go into the step's order, those the order lacks after them.
 */
static void
lead_adopt_order(struct ld_leads *p, struct ld_lead *l, size_t wi, const struct ld_watch_step *ws)
{
	size_t n = ws->nnodes, old = l->nnodes, extra = 0, k;
	struct lnode *nn = calloc(n + old, sizeof(*nn));
	struct judge_node *jn = calloc(n + old, sizeof(*jn));
	uint32_t *map = calloc(old ? old : 1, sizeof(*map));
	bool *taken = calloc(old ? old : 1, sizeof(*taken));
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
	topo_ix_free(&l->node_ix);
	l->nodes = nn;
	l->jn = jn;
	l->nnodes = n + extra;
	l->capnodes = n + old;
	nn = NULL;
	jn = NULL;
	for (k = 0; k < l->nnodes; k++)
		if (topo_ix_add(&l->node_ix, (long)k, lnode_name, l) < 0)
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
lead_order(struct ld_leads *p, struct ld_lead *l)
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

/*
 * The step's own settings (its user's --parallel-layout-watch, in its
 * registration here) over the site's, within the bounds the site sets
 * (user_hang_min_s, user_hang_max_s, user_busy_max_s, user_slow_off): a
 * value outside them is held to them, and said once.
 */
static void
user_params(struct ld_leads *p, struct ld_lead *l, struct judge_params *jp)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct ld_watch_step ws;
	long wi = ld_watch_step_find(p->d->watch, l->job, l->step);
	uint64_t v;
	bool held = false;

	if (wi < 0)
		return;
	ld_watch_step_at(p->d->watch, (size_t)wi, &ws);
	if (!ws.known)
		return;
	if (ws.watch.hang_s) {
		v = ws.watch.hang_s;
		if ((long)v < c->user_hang_min_s || (long)v > c->user_hang_max_s) {
			v = (long)v < c->user_hang_min_s ? (uint64_t)c->user_hang_min_s :
							   (uint64_t)c->user_hang_max_s;
			held = true;
		}
		jp->hang_threshold_ns = v * NS;
	}
	if (ws.watch.busy_s) {
		v = ws.watch.busy_s;
		if ((long)v > c->user_busy_max_s) {
			v = (uint64_t)c->user_busy_max_s;
			held = true;
		}
		jp->busy_threshold_ns = v * NS;
	}
	if (ws.watch.slow == 0) {
		if (c->user_slow_off)
			jp->slow_off = 1;
		else
			held = true;
	}
	if (held && !l->user_held_said)
		ld_log(&p->d->log, "peer: job %" PRIu64 ".%" PRIu64 ": the user's watch settings "
		       "(hang %" PRIu32 " s, busy %" PRIu32 " s, slow %s) held to the site's bounds: "
		       "hang %.0f s, busy %.0f s, slow %s", l->job, l->step, ws.watch.hang_s,
		       ws.watch.busy_s, ws.watch.slow == 0 ? "off" : ws.watch.slow > 0 ? "on" : "-",
		       (double)jp->hang_threshold_ns / 1e9, (double)jp->busy_threshold_ns / 1e9,
		       jp->slow_off ? "off" : "on");
	l->user_held_said |= held;
}

static void
lead_round(struct ld_leads *p, struct ld_lead *l, uint64_t now)
{
	const struct ld_conf *c = &p->d->cur->conf;
	struct judge_params jp;
	struct judge_step js;
	struct ld_step_view v;

	lead_order(p, l);
	ld_conf_watch_params(c, &jp, NULL);
	user_params(p, l, &jp);
	lead_liveness(p, l, now, jp.hang_threshold_ns);
	lead_step(l, &js);
	l->hang_ns = jp.hang_threshold_ns;
	l->busy_ns = jp.busy_threshold_ns;
	l->slow_off = jp.slow_off;
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
lead_sent_on(const struct ld_leads *p, const struct ld_lead *l)
{
	const char *t = p->target(p->target_arg, l->job, l->step);

	return t && strcmp(t, l->self) != 0 ? t : NULL;
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
void
ld_lead_all(struct ld_leads *p, uint64_t now)
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
				lead_liveness(p, l, now, l->hang_ns);
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
		json_object_set_new(o, reg_axes[a], json_integer(co[a]));
	return o;
}

/* "NODE:PATH" of each culprit's stacks (watch/stacks.h) whose node is
 * known; [] when stacks are off. */
static json_t *
stack_files_json(const struct ld *d, const struct ld_lead *l, const struct judge_finding *f)
{
	char name[LD_PATH + LD_PEER_NODE_LEN + 2];
	json_t *a = json_array();
	long x;
	size_t i;

	for (i = 0; a && i < f->nculprits; i++) {
		x = rank_find(l, f->culprits[i]);
		if (x >= 0 && l->rk[x].node < l->nnodes &&
		    ld_stacks_name(d, l->nodes[l->rk[x].node].name, l->job, l->step,
				   f->culprits[i], name, sizeof(name)) == 0)
			json_array_append_new(a, json_string(name));
	}
	return a;
}

/* A mismatch's signature: func, count, datatype, root (null: none).  Its
 * texts came through a summary: printable, NUL-terminated (detect_sig_of). */
static json_t *
sig_json(const struct detect_sig *g)
{
	return json_pack("{s:s, s:I, s:s, s:o}", "func", g->func, "count", (json_int_t)g->count,
			 "datatype", g->dtype, "root",
			 g->root >= 0 ? json_integer(g->root) : json_null());
}

static json_t *
finding_json(const struct ld *d, const struct ld_lead *l, const struct judge_finding *f,
	     uint64_t now)
{
	json_t *cul = json_array(), *o;
	char h[24];
	size_t i;

	for (i = 0; cul && i < f->nculprits; i++)
		json_array_append_new(cul, json_integer(f->culprits[i]));
	snprintf(h, sizeof(h), "%016" PRIx64, f->comm_hash);
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:o, s:I, s:o, s:I, s:f, "
			 "s:f, s:o, s:o, s:s}",
			 "kind", judge_kind_name(f->kind), "severity", alert_severity(f),
			 "evidence", detect_evidence_name(f->evidence),
			 "group", f->group, "comm", f->comm,
			 "comm_hash", h, "func", f->func, "seq", (json_int_t)f->seq,
			 "colls", (json_int_t)f->colls, "culprits", cul,
			 "culprits_total", (json_int_t)f->ncul_total,
			 "node", f->node >= 0 && (size_t)f->node < l->nnodes ?
			 json_string(l->nodes[f->node].name) : json_null(),
			 "peers_waiting", (json_int_t)f->npeers_waiting,
			 "for_s", (double)f->for_ns / 1e9, "since_s", age_s(now, f->since_ns),
			 "exit_status", f->kind == JUDGE_EXITED && f->exit_status >= 0 ?
			 json_integer(f->exit_status) : json_null(),
			 "cost_frac", f->kind == JUDGE_SLOW || f->kind == JUDGE_FSDP_ROOT ?
			 json_real(f->cost_frac) : json_null(),
			 "text", f->text);
	if (o && f->kind == JUDGE_TP_NETWORK)
		json_object_set_new(o, "nodes_spanned", json_integer(f->nspan));
	if (o && f->kind == JUDGE_FSDP_ROOT)
		json_object_set_new(o, "gather_bytes", json_integer((json_int_t)f->bytes));
	if (o && f->kind == JUDGE_PP_BUBBLE) {
		json_object_set_new(o, "idle_frac", json_real(f->cost_frac));
		json_object_set_new(o, "plan_frac", json_real(f->plan_frac));
	}
	if (o && f->kind == JUDGE_MISMATCH) {
		json_object_set_new(o, "signature", sig_json(&f->sig));
		json_object_set_new(o, "peers_signature", sig_json(&f->sig_peers));
		json_object_set_new(o, "peers_alike", json_integer((json_int_t)f->nalike));
	}
	if (o && stackfile_wanted(f))
		json_object_set_new(o, "stack_files", stack_files_json(d, l, f));
	return o;
}

static const char *
node_state(const struct ld_lead *l, const struct lnode *nd)
{
	if (strcmp(nd->name, l->self) == 0)
		return "self";
	if (nd->unheard)
		return "unheard";
	if (nd->lost)
		return "lost";
	if (nd->late)
		return "late";
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
	return json_pack("{s:I, s:s, s:i, s:s, s:o, s:b, s:I, s:b, s:o, s:o, s:o}",
			 "rank", (json_int_t)r->rank, "node", l->nodes[jr->node].name,
			 "gpu", (int)jr->gpu, "nic", jr->nic, "coords", coords_json(jr->co),
			 "present", jr->present != 0, "pid", (json_int_t)r->pid,
			 "exited", r->exited != 0,
			 "exit_status", r->exit_known ? json_integer(r->exit_status) : json_null(),
			 "comms", comms, "proc", ld_watch_proc_json(&r->proc, now));
}

static json_t *
step_view_json(const struct ld_leads *p, const struct ld_lead *l, uint64_t now, uint64_t from,
	       size_t count)
{
	json_t *nodes = json_array(), *ranks = json_array(), *find = json_array(), *lay;
	uint32_t *order = l->nrk ? malloc(l->nrk * sizeof(*order)) : NULL;
	json_t *next, *o;
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
		json_array_append_new(find, finding_json(p->d, l, &l->find[i], now));
	o = json_pack("{s:I, s:I, s:I, s:s, s:s, s:o, s:I, s:o, s:f, s:I, s:I, s:o, s:I, s:I, "
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
	/* the thresholds the last round judged by (the user's settings
	 * within the site's bounds) */
	if (o && l->rounds)
		json_object_set_new(o, "judged_by", json_pack("{s:f, s:f, s:b}", "hang_threshold_s",
			(double)l->hang_ns / 1e9, "busy_threshold_s", (double)l->busy_ns / 1e9,
			"slow", !l->slow_off));
	return o;
}


int
ld_lead_not_here(const struct ld *d, uint64_t job, uint64_t step, pl_err_t *err)
{
	return fail(err, 404, "job %" PRIu64 ".%" PRIu64 ": not led here (%s): ask the layoutd "
		    "of the node of its rank 0", job, step, d->cur->conf.node_name);
}

int
ld_lead_step_json(const struct ld_leads *p, uint64_t job, uint64_t step, uint64_t from,
		  size_t count, bool all, long uid, json_t **out, pl_err_t *err)
{
	const struct ld_lead *l = lead_find(p, job, step);

	*out = NULL;
	if (!l)
		return 0;
	if (!all && (long)l->uid != uid)
		return ld_lead_not_here(p->d, job, step, err);
	*out = step_view_json(p, l, mono_ns(), from, count);
	return *out ? 200 : fail(err, 500, "out of memory");
}


/* ---- what the rest of the peers ask ------------------------------------------ */

const struct ld_lead *
ld_lead_find(const struct ld_leads *p, uint64_t job, uint64_t step)
{
	return lead_find(p, job, step);
}

struct ld_leads *
ld_leads_new(struct ld *d, ld_lead_target_cb target, void *arg)
{
	struct ld_leads *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->d = d;
	p->target = target;
	p->target_arg = arg;
	return p;
}

void
ld_leads_set_findings_cb(struct ld_leads *p, ld_findings_cb cb)
{
	p->cb = cb;
}

long
ld_lead_count(const struct ld_leads *p)
{
	return p->nleads;
}

void
ld_leads_free(struct ld_leads *p)
{
	struct ld_lead *l;

	if (!p)
		return;
	while ((l = p->leads)) {
		p->leads = l->next;
		lead_free(l);
	}
	sum_space_free(&p->dec);
	free(p);
}

long
ld_lead_nodes_lost(const struct ld_leads *p)
{
	const struct ld_lead *l;
	long lost = 0;
	size_t k;

	for (l = p->leads; l; l = l->next)
		for (k = 0; k < l->nnodes; k++)
			lost += l->nodes[k].lost && !l->nodes[k].unheard;
	return lost;
}

json_t *
ld_lead_json(const struct ld_leads *p, bool all, long uid)
{
	json_t *leads = json_array();
	const struct ld_lead *l;
	size_t k;

	for (l = p->leads; leads && l; l = l->next) {
		size_t lost = 0;

		if (!all && (long)l->uid != uid)
			continue;
		for (k = 0; k < l->nnodes; k++)
			lost += l->nodes[k].lost && !l->nodes[k].unheard;
		json_array_append_new(leads, json_pack("{s:I, s:I, s:s, s:I, s:I, s:I, s:I}",
						       "job_id", (json_int_t)l->job,
						       "step_id", (json_int_t)l->step,
						       "role", lead_role(l),
						       "nodes", (json_int_t)l->nnodes,
						       "nodes_lost", (json_int_t)lost,
						       "ranks", (json_int_t)l->nrk,
						       "findings", (json_int_t)l->nfind));
	}
	return leads;
}
