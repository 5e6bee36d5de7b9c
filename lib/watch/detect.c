/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Detection on one node as pure functions (see detect.h). */
#include <string.h>

#include "detect.h"
#include "rules.h"

_Static_assert(sizeof(struct detect_comm) == 272, "detect_comm stays compact");

/* NCCL's ncclProfileKernelCh bit: with it the GPU part is recorded. */
#define KERNEL_CH_BIT	(1u << 6)

const char *
detect_evidence_name(int ev)
{
	return ev == DETECT_INFERRED ? "inferred" : "observed";
}

const char *
detect_kind_name(enum detect_kind k)
{
	switch (k) {
	case DETECT_EXITED:
		return "exited";
	case DETECT_NOT_ENTERED:
		return "not-entered";
	case DETECT_GPU_STUCK:
		return "gpu-stuck";
	case DETECT_RANK_BUSY:
		return "busy";
	case DETECT_MISMATCH:
		return "mismatch";
	}
	return "unknown";
}

/* a + b, or UINT64_MAX when that does not fit (the record is input). */
static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * The window stats from the wait ring: ring[(n - 1) % PLW_RING] holds the
 * n-th completion, so the last min(done, PLW_RING) entries are valid.  The
 * ring is part of the GPU part, copied consistently with done.
 */
static void
window(const struct plw_gpu *g, struct detect_comm *c)
{
	uint64_t n = g->done < PLW_RING ? g->done : PLW_RING, k;

	c->nwait = (uint32_t)n;
	for (k = 0; k < n; k++) {
		const struct plw_wait *w = &g->ring[(g->done - 1 - k) % PLW_RING];

		uint64_t p2p = g->ring_p2p[(g->done - 1 - k) % PLW_RING];

		c->wait_sum_ns = sat_add(c->wait_sum_ns, w->wait_ns);
		/* the compute before it: its gap less the pipeline's transfers
		 * in it (the record is input: never below 0) */
		c->gap_sum_ns = sat_add(c->gap_sum_ns, w->gap_ns > p2p ? w->gap_ns - p2p : 0);
	}
}

void
detect_summarize(const struct reader_snap *snap, struct detect_rank *out)
{
	int gpu = (snap->hdr.event_mask & KERNEL_CH_BIT) != 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->job_id = snap->hdr.job_id;
	out->step_id = snap->hdr.step_id;
	out->rank = snap->hdr.rank;
	out->pid = snap->hdr.pid;
	for (i = 0; i < PLW_MAX_COMMS; i++) {
		const struct reader_slot *s = &snap->slot[i];
		struct detect_comm *c;

		if (s->state == READER_SLOT_FREE)
			continue;
		c = &out->comm[out->ncomm++];
		c->hash = s->ident.comm_hash;
		rules_text_copy(c->name, sizeof(c->name), s->ident.name.c, sizeof(s->ident.name.c));
		c->rank = s->ident.rank;
		c->nranks = s->ident.nranks;
		c->nnodes = s->ident.nnodes;
		c->p2p_peer = -1;
		c->root = -1;
		if (s->state == READER_SLOT_BUSY) {
			c->flags = DETECT_BUSY;
			continue;
		}
		if (gpu)
			c->flags |= DETECT_GPU;
		if (s->ident.state == PLW_SLOT_FINALIZED)
			c->flags |= DETECT_FINAL;
		c->colls = s->launch.colls;
		c->seq = s->launch.seq_number;
		rules_text_copy(c->func, sizeof(c->func), s->launch.func.c, sizeof(s->launch.func.c));
		rules_text_copy(c->dtype, sizeof(c->dtype), s->launch.datatype.c,
				sizeof(s->launch.datatype.c));
		c->count = s->launch.count;
		c->root = s->launch.root;
		c->bursts = s->launch.bursts;
		if (c->nranks >= 2 && c->nranks <= PLW_PEER_BUCKETS && c->rank >= 0 &&
		    c->rank < c->nranks) {
			int prev = (c->rank + c->nranks - 1) % c->nranks;
			int next = (c->rank + 1) % c->nranks;

			c->p2p_tx[0] = s->launch.sends[prev];
			c->p2p_rx[0] = s->launch.recvs[prev];
			c->p2p_tx[1] = s->launch.sends[next];
			c->p2p_rx[1] = s->launch.recvs[next];
		}
		c->enter_ns = s->launch.enqueue_ns;
		c->done = s->gpu.done;
		c->ch_inflight = s->gpu.ch_started - s->gpu.ch_stopped;
		c->progress_ns = s->gpu.progress_ns;
		if (detect_ag_ok(s->launch.ag_peak_bytes, s->launch.ag_peak_calls,
				 s->launch.ag_peak_top)) {
			c->ag_peak_bytes = s->launch.ag_peak_bytes;
			c->ag_peak_calls = s->launch.ag_peak_calls;
			c->ag_peak_top = s->launch.ag_peak_top;
		}
		if (gpu && s->gpu.p2p_wait_ns <= s->gpu.p2p_span_ns) {
			c->p2p_wait_ns = s->gpu.p2p_wait_ns;
			c->p2p_span_ns = s->gpu.p2p_span_ns;
		}
		if (gpu && s->launch.p2ps > s->gpu.p2p_done) {
			c->flags |= DETECT_P2P | (s->launch.p2p_is_send ? DETECT_SEND : 0);
			c->p2p_peer = s->launch.p2p_peer;
		}
		if (gpu)
			window(&s->gpu, c);
	}
}

void
detect_sig_of(const struct detect_comm *c, struct detect_sig *out)
{
	memset(out, 0, sizeof(*out));
	rules_text_copy(out->func, sizeof(out->func), c->func, sizeof(c->func));
	rules_text_copy(out->dtype, sizeof(out->dtype), c->dtype, sizeof(c->dtype));
	out->count = c->count;
	out->root = c->root;
}

/* The comm of rank r with this hash (in the same job and step as a), or
 * NULL. */
static const struct detect_comm *
find_comm(const struct detect_rank *a, const struct detect_rank *r, uint64_t hash)
{
	uint32_t k;

	if (r->job_id != a->job_id || r->step_id != a->step_id)
		return NULL;
	for (k = 0; k < r->ncomm && k < PLW_MAX_COMMS; k++)
		if (r->comm[k].hash == hash && rules_usable(r->comm[k].flags))
			return &r->comm[k];
	return NULL;
}

/* A peer waiting in its last entered collective for longer than the
 * threshold: nothing entered since, not completed on the GPU (when that
 * is recorded). */
static int
waiting(const struct detect_comm *p, uint64_t now, uint64_t thr)
{
	return rules_waiting(p->flags, p->colls, p->done, p->enter_ns, now, thr);
}

/* A collective in flight on the GPU with no channel progress for longer
 * than the threshold. */
static int
gpu_stuck(const struct detect_comm *c, uint64_t now, uint64_t thr)
{
	return rules_gpu_stuck(c->flags, c->ch_inflight, c->progress_ns, now, thr);
}

#define MISMATCH_MAX	256	/* local members a mismatch is judged among */

/*
 * The mismatch rule on rank i's comm c (detect.h): among the live local
 * members at c's position, when every member of c is on the node and one
 * of them has waited there past the threshold, how many kinds of signature
 * there are (0 or 1: no mismatch).  *odd is 1 when rank i's signature is
 * not the majority's, or no kind is (*tie), *want the majority's (on a
 * tie one that differs from rank i's), *since the earliest entry there.
 */
static size_t
mismatch(const struct detect_rank *ranks, size_t n, size_t i, const struct detect_comm *c,
	 uint64_t now, uint64_t thr, int *odd, int *tie, struct detect_sig *want, uint64_t *since)
{
	struct detect_sig sig[MISMATCH_MAX];
	const struct detect_sig *ps[MISMATCH_MAX];
	size_t j, m = 0, members = 0, me = 0, major, kinds;
	int wait = 0;

	*odd = *tie = 0;
	*since = c->enter_ns;
	if (ranks[i].exited || !rules_usable(c->flags) || !c->colls || !c->func[0] ||
	    c->nranks <= 0)
		return 0;
	for (j = 0; j < n; j++) {
		const struct detect_comm *p = j == i ? c : find_comm(&ranks[i], &ranks[j], c->hash);

		if (!p)
			continue;
		members++;
		if (ranks[j].exited || p->colls != c->colls || !p->func[0])
			continue;
		if (m == MISMATCH_MAX)
			return 0;
		if (j == i)
			me = m;
		detect_sig_of(p, &sig[m]);
		ps[m] = &sig[m];
		m++;
		wait |= waiting(p, now, thr);
		if (p->enter_ns < *since)
			*since = p->enter_ns;
	}
	if (members < (size_t)c->nranks || m < 2 || !wait)
		return 0;
	kinds = rules_sig_split(ps, m, &major);
	if (kinds < 2)
		return kinds;
	if (major == SIZE_MAX) {
		*tie = *odd = 1;
		for (j = 0; j < m - 1 && rules_sig_same(ps[j], ps[me]); j++)
			;
		*want = sig[j];
	} else {
		*odd = !rules_sig_same(ps[me], ps[major]);
		*want = sig[major];
	}
	return kinds;
}

/* Whether rank i's comm c holds a mismatch (mismatch()). */
static int
mismatched(const struct detect_rank *ranks, size_t n, size_t i, const struct detect_comm *c,
	   uint64_t now, uint64_t thr)
{
	struct detect_sig want;
	uint64_t since;
	int odd, tie;

	return mismatch(ranks, n, i, c, now, thr, &odd, &tie, &want, &since) >= 2;
}

/*
 * Whether rank i lags in its comm c: a live local peer of the same comm
 * has entered more collectives and waits in its last one longer than the
 * threshold.  Sets *peer and *pc to the peer that waited longest.  Not
 * when rank i's own kernel in c is stuck on the GPU: that is why it enters
 * no more, and the stuck rule names it.
 */
static int
lagging(const struct detect_rank *ranks, size_t n, size_t i, const struct detect_comm *c,
	uint64_t now, uint64_t thr, size_t *peer, const struct detect_comm **pc)
{
	size_t j;
	int found = 0;

	if (ranks[i].exited || !rules_usable(c->flags) || gpu_stuck(c, now, thr))
		return 0;
	for (j = 0; j < n; j++) {
		const struct detect_comm *p;

		if (j == i || ranks[j].exited)
			continue;
		p = find_comm(&ranks[i], &ranks[j], c->hash);
		if (!p || p->colls <= c->colls || !waiting(p, now, thr))
			continue;
		if (!found || p->enter_ns < (*pc)->enter_ns) {
			*peer = j;
			*pc = p;
			found = 1;
		}
	}
	return found;
}

/*
 * Whether rank i's lag in c is the effect of its own wait elsewhere: 2 when
 * in another communicator its collective is stuck on the GPU (that is the
 * verdict to give), 1 when in another communicator it has entered more
 * than a local peer that lags there and waits in that collective (a rank
 * held in TP by a stopped peer never reaches the DP collective its DP
 * peers wait in), else 0.
 */
static int
victim(const struct detect_rank *ranks, size_t n, size_t i, const struct detect_comm *c,
       uint64_t now, uint64_t thr)
{
	size_t j, peer;
	uint32_t k;
	const struct detect_comm *pc;
	int held = 0;

	for (k = 0; k < ranks[i].ncomm && k < PLW_MAX_COMMS; k++) {
		const struct detect_comm *c2 = &ranks[i].comm[k];

		if (c2->hash == c->hash || !rules_usable(c2->flags))
			continue;
		if (gpu_stuck(c2, now, thr) || mismatched(ranks, n, i, c2, now, thr))
			return 2;
		if (held || !waiting(c2, now, thr))
			continue;
		for (j = 0; j < n && !held; j++) {
			const struct detect_comm *m;

			if (j == i || ranks[j].exited)
				continue;
			m = find_comm(&ranks[i], &ranks[j], c2->hash);
			held = m && m->colls < c2->colls &&
			       lagging(ranks, n, j, m, now, thr, &peer, &pc);
		}
	}
	return held;
}

/* Whether rank r waits, or is stuck on the GPU, past the threshold in a
 * communicator other than the one with this hash. */
static int
held_elsewhere(const struct detect_rank *r, uint64_t hash, uint64_t now, uint64_t thr)
{
	uint32_t k;

	for (k = 0; k < r->ncomm && k < PLW_MAX_COMMS; k++) {
		const struct detect_comm *o = &r->comm[k];

		if (o->hash != hash && rules_usable(o->flags) &&
		    (waiting(o, now, thr) || gpu_stuck(o, now, thr)))
			return 1;
	}
	return 0;
}

/* Whether the comm of rank i with c's hash has a local member that exited
 * or lags, or that is in none of its operations but held past the
 * threshold in another communicator (a pipeline stage whose TP group waits
 * on a rank stuck in its own transfer: p2p operations count no
 * collectives, so no lag shows): then its peers' stuck kernels are the
 * effect. */
static int
comm_has_cause(const struct detect_rank *ranks, size_t n, size_t i,
	       const struct detect_comm *c, uint64_t now, uint64_t thr)
{
	size_t j, peer;
	const struct detect_comm *pc;

	if (mismatched(ranks, n, i, c, now, thr))
		return 1;
	for (j = 0; j < n; j++) {
		const struct detect_comm *m = j == i ? c : find_comm(&ranks[i], &ranks[j], c->hash);

		if (!m)
			continue;
		if (ranks[j].exited || lagging(ranks, n, j, m, now, thr, &peer, &pc))
			return 1;
		/* a member behind on the GPU (it has not completed what rank i
		 * did): rank i's kernel waits on it */
		if (j != i && (m->flags & c->flags & DETECT_GPU) && m->done < c->done)
			return 1;
		if (!waiting(m, now, thr) && !gpu_stuck(m, now, thr) &&
		    held_elsewhere(&ranks[j], c->hash, now, thr))
			return 1;
	}
	return 0;
}

/* How many local ranks are members of rank i's comm c (i included). */
static size_t
local_members(const struct detect_rank *ranks, size_t n, size_t i, const struct detect_comm *c)
{
	size_t j, m = 0;

	for (j = 0; j < n; j++)
		m += j == i || find_comm(&ranks[i], &ranks[j], c->hash);
	return m;
}

/* The live local members of rank i's comm c that have completed the
 * collective whose kernel still runs on rank i (the (done+1)-th): then
 * rank i's kernel is stuck where its peers' kernels ended, which its own
 * record shows.  *recent is set when one did so a moment ago: the two
 * records were read on either side of that completion
 * (rules_just_completed), and nothing is named stuck there this sample,
 * not even by the never-silent rule. */
static size_t
peers_completed(const struct detect_rank *ranks, size_t n, size_t i, const struct detect_comm *c,
		uint64_t now, int *recent)
{
	size_t j, done = 0;

	*recent = 0;
	for (j = 0; j < n; j++) {
		const struct detect_comm *m;

		if (j == i || ranks[j].exited)
			continue;
		m = find_comm(&ranks[i], &ranks[j], c->hash);
		if (!m || !(m->flags & DETECT_GPU) || m->done <= c->done)
			continue;
		done++;
		*recent |= rules_just_completed(m->flags, m->done, c->done, m->progress_ns, now,
						DETECT_EXIT_GRACE_NS);
	}
	return done;
}

/* Whether live local peers wait for rank i in a communicator other than
 * c, where it lags. */
static int
holds_peers(const struct detect_rank *ranks, size_t n, size_t i, const struct detect_comm *c,
	    uint64_t now, uint64_t thr)
{
	const struct detect_comm *pc;
	size_t peer;
	uint32_t k;

	for (k = 0; k < ranks[i].ncomm && k < PLW_MAX_COMMS; k++)
		if (ranks[i].comm[k].hash != c->hash &&
		    lagging(ranks, n, i, &ranks[i].comm[k], now, thr, &peer, &pc))
			return 1;
	return 0;
}

/*
 * What a stuck kernel of rank i in c rests on, on this node (completed:
 * its live local peers that completed it, peers_completed): 1 observed (a
 * local peer completed the collective that still runs here), 2 inferred
 * (every member is on this node and none is a cause: nobody else can be;
 * or a p2p transfer that holds local peers waiting for rank i elsewhere,
 * whose other end may be the cause), 0 nothing this node can tell (a p2p
 * transfer that holds nobody here: its other end only waits as this one
 * does; a communicator with members elsewhere: the step's leader sees
 * them all).
 */
static int
stuck_evidence(const struct detect_rank *ranks, size_t n, size_t i, const struct detect_comm *c,
	       size_t completed, uint64_t now, uint64_t thr)
{
	if (c->flags & DETECT_P2P)
		return holds_peers(ranks, n, i, c, now, thr) ? DETECT_INFERRED : 0;
	if (completed)
		return DETECT_OBSERVED;
	if (c->nranks > 0 && local_members(ranks, n, i, c) >= (size_t)c->nranks)
		return DETECT_INFERRED;
	return 0;
}

/* Whether a live local member of rank j's comm c has entered more
 * collectives and not completed them: it waits on rank j there (past the
 * threshold or not), and the lag rule names rank j in c. */
static int
awaited_in_coll(const struct detect_rank *ranks, size_t n, size_t j, const struct detect_comm *c)
{
	size_t q;

	for (q = 0; q < n; q++) {
		const struct detect_comm *m;

		if (q == j || ranks[q].exited)
			continue;
		m = find_comm(&ranks[j], &ranks[q], c->hash);
		if (m && m->colls > c->colls && (!(m->flags & DETECT_GPU) || m->done < m->colls))
			return 1;
	}
	return 0;
}

/* Whether comm c is in a collective: entered and, as its GPU part says,
 * not completed (past the threshold or not); without the GPU part nothing
 * tells, and one entered ever counts. */
static int
in_coll(const struct detect_comm *c)
{
	return !(c->flags & DETECT_GPU) ? c->colls > 0 : c->colls > c->done;
}

/* The local member of rank i's comm c whose part of c's p2p operation in
 * flight never came (rules_p2p_unposted), while it is idle outside NCCL
 * (in no collective, none waiting or stuck, no transfer of its own in
 * flight, every communicator quiet for the threshold: rules_quiet):
 * its index, or n when there is none. */
static size_t
unposted_peer(const struct detect_rank *ranks, size_t n, size_t i, const struct detect_comm *c,
	      uint64_t now, uint64_t thr)
{
	size_t j;
	uint32_t k;

	for (j = 0; j < n; j++) {
		const struct detect_comm *p;
		int idle = 1;

		if (j == i || ranks[j].exited)
			continue;
		p = find_comm(&ranks[i], &ranks[j], c->hash);
		if (!p || p->rank != c->p2p_peer)
			continue;
		if ((p->flags & DETECT_P2P) || !rules_p2p_unposted(c, p))
			return n;
		for (k = 0; k < ranks[j].ncomm && k < PLW_MAX_COMMS && idle; k++)
			idle = !rules_usable(ranks[j].comm[k].flags) ||
			       (!waiting(&ranks[j].comm[k], now, thr) &&
				!gpu_stuck(&ranks[j].comm[k], now, thr) &&
				!in_coll(&ranks[j].comm[k]) &&
				rules_quiet(ranks[j].comm[k].flags, ranks[j].comm[k].colls,
					    ranks[j].comm[k].enter_ns,
					    ranks[j].comm[k].progress_ns, now, thr) &&
				!awaited_in_coll(ranks, n, j, &ranks[j].comm[k]));
		return idle ? j : n;
	}
	return n;
}

/* Whether a live local peer waits for exited rank i: past the threshold
 * in a communicator rank i belonged to, at a collective it never reached
 * (the one exit rule's test for an exit 0: rules.h). */
static int
awaited(const struct detect_rank *ranks, size_t n, size_t i, uint64_t now, uint64_t thr)
{
	uint32_t k;
	size_t j;

	for (k = 0; k < ranks[i].ncomm && k < PLW_MAX_COMMS; k++) {
		const struct detect_comm *c = &ranks[i].comm[k];

		if (c->flags & DETECT_BUSY)
			continue;
		for (j = 0; j < n; j++) {
			const struct detect_comm *m;

			if (j == i || ranks[j].exited)
				continue;
			m = find_comm(&ranks[i], &ranks[j], c->hash);
			if (m && rules_exit0_awaited(c->colls, m->flags, m->colls, m->done, m->enter_ns,
						     now, thr))
				return 1;
		}
	}
	return 0;
}

/* Whether a local member of rank i's comm c has exited. */
static int
comm_lost_member(const struct detect_rank *ranks, size_t n, size_t i, const struct detect_comm *c)
{
	size_t j;

	for (j = 0; j < n; j++)
		if (j != i && ranks[j].exited && find_comm(&ranks[i], &ranks[j], c->hash))
			return 1;
	return 0;
}

static void
verdict_base(struct detect_verdict *v, enum detect_kind kind, const struct detect_rank *r,
	     const struct detect_comm *c)
{
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->evidence = DETECT_OBSERVED;
	v->job_id = r->job_id;
	v->step_id = r->step_id;
	v->rank = r->rank;
	v->pid = r->pid;
	v->peer_rank = -1;
	if (c) {
		v->comm_hash = c->hash;
		rules_text_copy(v->comm_name, sizeof(v->comm_name), c->name, sizeof(c->name));
	}
}

/* Append v when there is room; count it anyway. */
static void
emit(struct detect_verdict *out, size_t max, size_t *count, const struct detect_verdict *v)
{
	if (*count < max)
		out[*count] = *v;
	(*count)++;
}

/* Rank r lags in c behind peer p, whose collective pc it has not entered. */
static void
lag_verdict(struct detect_verdict *v, const struct detect_rank *r, const struct detect_comm *c,
	    const struct detect_rank *p, const struct detect_comm *pc, uint64_t now)
{
	verdict_base(v, DETECT_NOT_ENTERED, r, c);
	rules_text_copy(v->func, sizeof(v->func), pc->func, sizeof(pc->func));
	v->seq = pc->seq;
	v->colls = pc->colls;
	v->peer_rank = p->rank;
	v->for_ns = rules_age(now, pc->enter_ns);
}

/* Rank r's collective in flight on the GPU in c. */
static void
stuck_verdict(struct detect_verdict *v, const struct detect_rank *r, const struct detect_comm *c,
	      uint64_t now)
{
	verdict_base(v, DETECT_GPU_STUCK, r, c);
	/* The collective in flight is the (done+1)-th; its func and seq are
	 * known when it is the last one entered. */
	v->colls = c->done + 1;
	if (c->colls == c->done + 1) {
		rules_text_copy(v->func, sizeof(v->func), c->func, sizeof(c->func));
		v->seq = c->seq;
	}
	v->for_ns = rules_age(now, c->progress_ns);
}

/* Rank r called sig at c's position where its peers called want. */
static void
mismatch_verdict(struct detect_verdict *v, const struct detect_rank *r, const struct detect_comm *c,
		 const struct detect_sig *want, uint64_t since, uint64_t now)
{
	verdict_base(v, DETECT_MISMATCH, r, c);
	detect_sig_of(c, &v->sig);
	v->want = *want;
	rules_text_copy(v->func, sizeof(v->func), c->func, sizeof(c->func));
	v->seq = c->seq;
	v->colls = c->colls;
	v->for_ns = rules_age(now, since);
}

size_t
detect_run(const struct detect_rank *ranks, size_t n, uint64_t now_ns, uint64_t threshold_ns,
	   struct detect_verdict *out, size_t max)
{
	return detect_run_busy(ranks, n, now_ns, threshold_ns, DETECT_BUSY_THRESHOLD_NS, out, max);
}

size_t
detect_run_busy(const struct detect_rank *ranks, size_t n, uint64_t now_ns,
		uint64_t threshold_ns, uint64_t busy_ns, struct detect_verdict *out, size_t max)
{
	struct detect_verdict v;
	size_t count = 0, i, peer;
	uint32_t k;
	int pass, held;

	/* Exits: the failures (rules_exit_class, or the status unknown past
	 * the grace) first, then the ends by Slurm's signals past the
	 * threshold (scancel kills every rank: that is no failure), and an
	 * exit 0 only when a live peer waits for it (a normal end with skew
	 * is no fault). */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++) {
			const struct detect_rank *r = &ranks[i];
			uint64_t gone = r->exit_ns ? rules_age(now_ns, r->exit_ns) : UINT64_MAX;
			int bad = !r->exit_known ||
				  rules_exit_class(r->exit_status) == RULES_EXIT_FAILED;

			if (!r->exited || bad != (pass == 0))
				continue;
			if (!r->exit_known ? gone <= DETECT_EXIT_GRACE_NS :
			    !bad && gone <= threshold_ns)
				continue;
			if (r->exit_known && rules_exit_class(r->exit_status) == RULES_EXIT_ZERO &&
			    !awaited(ranks, n, i, now_ns, threshold_ns))
				continue;
			verdict_base(&v, DETECT_EXITED, &ranks[i], NULL);
			v.exit_status = r->exit_known ? r->exit_status : -1;
			emit(out, max, &count, &v);
		}
	/* Mismatches: the ranks whose call at the position their peers wait
	 * in is not the majority's (every one there on a tie). */
	for (i = 0; i < n; i++)
		for (k = 0; k < ranks[i].ncomm && k < PLW_MAX_COMMS; k++) {
			const struct detect_comm *c = &ranks[i].comm[k];
			struct detect_sig want;
			uint64_t since;
			int odd, tie;

			if (mismatch(ranks, n, i, c, now_ns, threshold_ns, &odd, &tie, &want,
				     &since) < 2 || !odd)
				continue;
			mismatch_verdict(&v, &ranks[i], c, &want, since, now_ns);
			emit(out, max, &count, &v);
		}
	/* Laggers held by their own wait elsewhere are left out; when every
	 * lagger is held by another's lag (a cycle: each waits on the other),
	 * those are named all the same. */
	for (pass = 0; pass < 2; pass++) {
		size_t found = 0, named = 0;

		for (i = 0; i < n; i++)
			for (k = 0; k < ranks[i].ncomm && k < PLW_MAX_COMMS; k++) {
				const struct detect_comm *c = &ranks[i].comm[k], *pc = NULL;

				if (!lagging(ranks, n, i, c, now_ns, threshold_ns, &peer, &pc))
					continue;
				held = victim(ranks, n, i, c, now_ns, threshold_ns);
				found += held != 2;
				if (held == 2 || (pass == 0 && held))
					continue;
				named++;
				lag_verdict(&v, &ranks[i], c, &ranks[peer], pc, now_ns);
				if (rules_busy(&ranks[i].proc, pc->enter_ns, now_ns, threshold_ns,
					       busy_ns))
					v.kind = DETECT_RANK_BUSY;
				if (held)
					v.evidence = DETECT_INFERRED;
				emit(out, max, &count, &v);
			}
		if (named || !found)
			break;
	}
	/* A transfer stuck on a local neighbour that never posted its part and
	 * is idle outside NCCL: that neighbour, once. */
	for (i = 0; i < n; i++)
		for (k = 0; k < ranks[i].ncomm && k < PLW_MAX_COMMS; k++) {
			const struct detect_comm *c = &ranks[i].comm[k], *pc;
			size_t j, q;
			int seen = 0;

			if (ranks[i].exited || !gpu_stuck(c, now_ns, threshold_ns) ||
			    !(c->flags & DETECT_P2P) || c->colls > c->done)
				continue;
			j = unposted_peer(ranks, n, i, c, now_ns, threshold_ns);
			if (j == n)
				continue;
			for (q = 0; q < count && q < max && !seen; q++)
				seen = out[q].rank == ranks[j].rank && out[q].comm_hash == c->hash &&
				       (out[q].kind == DETECT_NOT_ENTERED || out[q].kind == DETECT_RANK_BUSY);
			if (seen)
				continue;
			pc = find_comm(&ranks[i], &ranks[j], c->hash);
			verdict_base(&v, DETECT_NOT_ENTERED, &ranks[j], pc);
			if (rules_busy(&ranks[j].proc, c->progress_ns, now_ns, threshold_ns, busy_ns))
				v.kind = DETECT_RANK_BUSY;
			rules_text_copy(v.func, sizeof(v.func), (c->flags & DETECT_SEND) ? "Recv" : "Send",
					5);
			v.peer_rank = ranks[i].rank;
			v.for_ns = rules_age(now_ns, c->progress_ns);
			emit(out, max, &count, &v);
		}
	/* Stuck kernels whose communicator has no local cause, where this
	 * node can tell (stuck_evidence); when nothing at all is named (a
	 * cycle of waits, each stuck on the GPU), every such stuck kernel,
	 * inferred: a hang is never silent. */
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1 && count > 0)
			break;
		for (i = 0; i < n; i++)
			for (k = 0; k < ranks[i].ncomm && k < PLW_MAX_COMMS; k++) {
				const struct detect_comm *c = &ranks[i].comm[k];
				size_t completed;
				int ev, recent;

				if (ranks[i].exited || !gpu_stuck(c, now_ns, threshold_ns))
					continue;
				completed = peers_completed(ranks, n, i, c, now_ns, &recent);
				if (recent)
					continue;
				ev = stuck_evidence(ranks, n, i, c, completed, now_ns, threshold_ns);
				if (!ev)
					continue;
				if (pass == 0 &&
				    comm_has_cause(ranks, n, i, c, now_ns, threshold_ns))
					continue;
				/* Not even then a rank whose communicator lost a
				 * member: it waits for the one that is gone, whose
				 * exit is named once its status or the grace is in. */
				if (pass == 1 && comm_lost_member(ranks, n, i, c))
					continue;
				stuck_verdict(&v, &ranks[i], c, now_ns);
				v.evidence = pass == 1 ? DETECT_INFERRED : ev;
				emit(out, max, &count, &v);
			}
	}
	return count;
}
