/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The job-wide judge (see judge.h). */
#include <ctype.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "judge.h"

#define MAX_WORLD	16777216u
#define NS		1000000000ULL

/* js_entry.flags */
#define E_WAITING	0x01u	/* in its last collective past the threshold */
#define E_LAGGER	0x02u	/* a waiting peer entered more */
#define E_HELD		0x04u	/* waits here on a member that lags */
#define E_STUCK		0x08u	/* kernels in flight, quiet past the threshold */
#define E_NAMED		0x10u	/* named in a finding this round */
#define E_JUDGED	0x20u	/* its group was judged for slowness */

/* One (rank, communicator) of the round. */
struct js_entry {
	uint64_t hash;
	int64_t rank;		/* global rank (the sort key after hash) */
	uint32_t ix;		/* index into the input ranks */
	uint16_t comm;		/* index into the rank's comm[] */
	uint16_t flags;		/* E_* */
	uint32_t group;		/* index into the groups */
	uint32_t pc;		/* E_LAGGER: the waiting peer it lags (entry) */
	double lead, excess;	/* the slow-rank rule, when E_JUDGED */
};

/*
 * What the passes read of an entry's communicator (and of its rank),
 * copied once a round by build() into hot[], in the entries' order.  The
 * passes go over the entries again and again, and the rank records the
 * fields come from are 6.4 KB apiece, tens of MB for a large step: reading
 * them there was a cache miss per field and pass, most of the judge's
 * time.  The texts (name, func) are read where they are, by the few
 * entries a finding names (ent_full).
 */
struct js_hot {
	uint64_t hash, colls, done, enter_ns, progress_ns, ch_inflight;
	uint64_t wait_sum_ns, gap_sum_ns;
	int32_t rank, nranks, p2p_peer;
	uint32_t flags, nwait;
	uint32_t exited;	/* the rank's: 1 it ended */
};

/* What places an entry in the sort. */
struct js_key {
	uint64_t hash;
	int64_t rank;
	uint32_t ix;
	uint32_t comm;
};

/* The members of one communicator: entries [first, first + n). */
struct js_group {
	uint32_t first, n;
	uint64_t min_live_colls;
	int any_exited, any_lagger, missing;
};

/* The slow-rank rule's memory of one global rank. */
struct js_slow {
	uint64_t since_ns;	/* when it first qualified (streak) */
	uint64_t mark_hash;	/* the communicator of the last counted round */
	uint64_t mark_done;	/* and its completions then */
	uint64_t name_hash;	/* named: the communicator of its finding */
	uint32_t rounds;	/* counted rounds in the streak */
	uint32_t named;
	/* This round: */
	double lead;		/* its score: its largest lead when it
				 * qualifies, else 0 */
	double cost;		/* its largest lead */
	uint32_t best;		/* the entry of that, UINT32_MAX not judged */
	uint32_t name_ent;	/* the entry of name_hash, UINT32_MAX none */
	double ev;		/* its positive leads, added */
	double busy_lead;	/* its lead in its busiest communicator */
	uint64_t busy_done;	/* that one's completions */
	uint8_t held;		/* it waits on a member somewhere */
	uint8_t explained;	/* a pipeline peer is held or leads more */
	uint8_t pad[6];
};

/* One rank's smoothed lead and excess in one of its communicators (by
 * slot), updated in rounds with new completions. */
struct js_smooth {
	uint64_t hash;		/* 0: nothing yet */
	uint64_t done;		/* completions at the last update */
	double lead, excess;
};

/* The pipeline-bubble rule's window of one global rank in its PP group:
 * the p2p time when the window began, and the idle share of the last
 * window that closed. */
struct js_bubble {
	uint64_t hash;		/* its PP communicator, 0 none yet */
	uint64_t wait0, span0;
	double idle;
	int have;		/* idle is measured */
};

/* Sorting scratch: a key and an entry (or rank) index. */
struct js_wait {
	uint64_t t;
	uint32_t e;
};

struct js_val {
	double v;
	uint32_t i;
};

/* Everything a round needs, sized once for the world: a rank has at most
 * PLW_MAX_COMMS entries, a group at most one per rank. */
struct judge_state {
	uint32_t world;
	size_t cap;		/* entries: world * PLW_MAX_COMMS */
	struct js_entry *ent;
	struct js_group *grp;
	struct js_wait *wt;	/* a group's waiting members; exits */
	struct js_val *vw, *vc;	/* a group's mean waits and cycles */
	struct js_val *vt;	/* sort_vals' scratch */
	uint32_t *pw, *pc;	/* a member's place among them */
	uint32_t (*co)[JUDGE_NAXES]; /* a group's coordinates */
	uint32_t *rgrp;		/* per input rank: its smallest group */
	uint8_t *nstuck, *nheld; /* per input rank: entries flagged so */
	uint8_t *nbusy;		/* per input rank: entries waiting or stuck */
	struct js_slow *slow;	/* per global rank */
	struct js_smooth *sm;	/* per slot and global rank */
	struct js_bubble *bub;	/* per global rank */
	/* the last round's entries in input order and where the sort put
	 * each: a round with the same entries (most rounds of a healthy
	 * step) takes that order again instead of sorting */
	struct js_key *nat;
	uint32_t *perm;
	struct js_entry *tmp;
	struct js_hot *hot;	/* per entry, this round (build) */
	struct js_hot *hot_in;	/* the same in input order, before the sort */
	size_t nnat;
	struct judge_end end;	/* the last round's note on the step's end */
	uint64_t found_ns;	/* the last round with a finding (not by the
				 * never-silent rule), 0 none */
	uint64_t hang_first_ns;	/* the rounds with a hang finding (not
				 * entered, GPU stuck): the first and */
	uint64_t hang_last_ns;	/* the last of them, 0 none */
};

const char *
judge_kind_name(enum judge_kind k)
{
	switch (k) {
	case JUDGE_EXITED:
		return "exited";
	case JUDGE_NODE_LOST:
		return "node-lost";
	case JUDGE_NOT_ENTERED:
		return "not-entered";
	case JUDGE_GPU_STUCK:
		return "gpu-stuck";
	case JUDGE_STALLED:
		return "stalled";
	case JUDGE_SLOW:
		return "slow";
	case JUDGE_TP_NETWORK:
		return "tp-over-network";
	case JUDGE_FSDP_ROOT:
		return "fsdp-root-only";
	case JUDGE_PP_BUBBLE:
		return "pipeline-bubble";
	}
	return "unknown";
}

void
judge_params_default(struct judge_params *p)
{
	memset(p, 0, sizeof(*p));
	p->hang_threshold_ns = 60 * NS;
	p->stall_threshold_ns = 300 * NS;
	p->slow_window = 16;
	p->slow_rounds = 20;
	p->slow_persist_ns = 20 * NS;
	p->slow_margin = 0.02;
	p->slow_margin_off = 0.01;
	p->slow_smooth = 0.3;
	p->end_grace_ns = 2 * NS;
	p->bubble_window_ns = 60 * NS;
	p->bubble_margin = 0.10;
	p->bubble_microbatches = 0;
}

void
judge_state_free(struct judge_state *s)
{
	if (!s)
		return;
	free(s->ent);
	free(s->grp);
	free(s->wt);
	free(s->vw);
	free(s->vc);
	free(s->vt);
	free(s->pw);
	free(s->pc);
	free(s->co);
	free(s->rgrp);
	free(s->nstuck);
	free(s->nheld);
	free(s->nbusy);
	free(s->slow);
	free(s->sm);
	free(s->bub);
	free(s->nat);
	free(s->perm);
	free(s->tmp);
	free(s->hot);
	free(s->hot_in);
	free(s);
}

struct judge_state *
judge_state_new(uint32_t world, pl_err_t *err)
{
	struct judge_state *s = NULL;

	if (world < 1 || world > MAX_WORLD) {
		pl_err_set(err, "judge: world %u is out of range (1 to %u)", world, MAX_WORLD);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	s->world = world;
	s->cap = (size_t)world * PLW_MAX_COMMS;
	s->ent = calloc(s->cap, sizeof(*s->ent));
	s->grp = calloc(s->cap, sizeof(*s->grp));
	s->wt = calloc(world, sizeof(*s->wt));
	s->vw = calloc(world, sizeof(*s->vw));
	s->vc = calloc(world, sizeof(*s->vc));
	s->vt = calloc(world, sizeof(*s->vt));
	s->pw = calloc(world, sizeof(*s->pw));
	s->pc = calloc(world, sizeof(*s->pc));
	s->co = calloc(world, sizeof(*s->co));
	s->rgrp = calloc(world, sizeof(*s->rgrp));
	s->nstuck = calloc(world, 1);
	s->nheld = calloc(world, 1);
	s->nbusy = calloc(world, 1);
	s->slow = calloc(world, sizeof(*s->slow));
	s->sm = calloc(s->cap, sizeof(*s->sm));
	s->bub = calloc(world, sizeof(*s->bub));
	s->nat = calloc(s->cap, sizeof(*s->nat));
	s->perm = calloc(s->cap, sizeof(*s->perm));
	s->tmp = calloc(s->cap, sizeof(*s->tmp));
	s->hot = calloc(s->cap, sizeof(*s->hot));
	s->hot_in = calloc(s->cap, sizeof(*s->hot_in));
	if (!s->sm || !s->nat || !s->perm || !s->tmp || !s->hot || !s->hot_in || !s->ent ||
	    !s->grp || !s->wt || !s->vw || !s->vc || !s->vt || !s->pw || !s->pc || !s->co ||
	    !s->rgrp || !s->nstuck || !s->nheld || !s->nbusy || !s->slow || !s->bub)
		goto oom;
	return s;
oom:
	judge_state_free(s);
	pl_err_set(err, "judge: out of memory for a step of %u ranks", world);
	return NULL;
}

double
judge_state_lead(const struct judge_state *s, int64_t rank)
{
	if (!s || rank < 0 || rank >= (int64_t)s->world)
		return 0;
	return s->slow[rank].lead;
}

void
judge_state_end(const struct judge_state *s, struct judge_end *out)
{
	if (s)
		*out = s->end;
	else
		memset(out, 0, sizeof(*out));
}

/* ---- small helpers ---------------------------------------------------- */

static uint64_t
age(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

/* The step's-end grace (judge.h): end_grace_ns, at least
 * DETECT_EXIT_GRACE_NS. */
static uint64_t
end_grace(const struct judge_params *p)
{
	return p->end_grace_ns > DETECT_EXIT_GRACE_NS ? p->end_grace_ns : DETECT_EXIT_GRACE_NS;
}

static void
text_copy(char *dst, size_t size, const char *src, size_t srclen)
{
	size_t n = strnlen(src, srclen);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Appending to a fixed line; a line cut short ends in "...". */
struct line {
	char *b;
	size_t size, len;
};

static void __attribute__((format(printf, 2, 3)))
put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (l->len + 1 >= l->size)
		return;
	va_start(ap, fmt);
	k = vsnprintf(l->b + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	if ((size_t)k >= l->size - l->len) {
		l->len = l->size - 1;
		if (l->size >= 4)
			memcpy(l->b + l->size - 4, "...", 4);
		return;
	}
	l->len += (size_t)k;
}

static void
put_secs(struct line *l, uint64_t ns)
{
	double s = (double)ns / 1e9;

	if (s < 10)
		put(l, "%.1f s", s);
	else
		put(l, "%.0f s", s);
}

static const char *
node_name(const struct judge_step *st, uint32_t node)
{
	if (node < st->nnodes && st->nodes[node].name && st->nodes[node].name[0])
		return st->nodes[node].name;
	return "an unknown node";
}

/* "13 on node2 GPU 5" */
static void
put_where(struct line *l, const struct judge_step *st, const struct judge_rank *r)
{
	put(l, "%lld on %s", (long long)r->st.rank, node_name(st, r->node));
	if (r->gpu >= 0)
		put(l, " GPU %d", (int)r->gpu);
}

/* "rank 13 on node2 GPU 5" or "ranks 13 on node2 GPU 5, 14 on ... and 3
 * more": the first few culprits of a finding, described. */
static void
put_culprits(struct line *l, const struct judge_step *st, const struct judge_rank *ranks,
	     const uint32_t *ix, size_t n, size_t total)
{
	size_t i, show = n < 3 ? n : 3;

	put(l, total == 1 ? "rank " : "ranks ");
	for (i = 0; i < show; i++) {
		if (i)
			put(l, i + 1 == show && total == show ? " and " : ", ");
		put_where(l, st, &ranks[ix[i]]);
	}
	if (total > show)
		put(l, " and %zu more", total - show);
}

/* ---- group names ------------------------------------------------------ */

#define AX_EDP	JUDGE_NAXES		/* a sixth axis: expert dp */
#define NAX6	(JUDGE_NAXES + 1)

static const char *const ax_word[NAX6] = { "tp", "cp", "ep", "dp", "pp", "edp" };
static const char *const ax_upper[NAX6] = { "TP", "CP", "EP", "DP", "PP", "EDP" };

/* The axes (bit 1 << axis, AX_EDP included) a name spans, 1 << NAX6 for
 * "world", 0 when the name is not made of those words. */
static unsigned
name_axes(const char *name)
{
	char w[8];
	unsigned mask = 0;
	size_t i = 0, k;

	if (!name || !*name)
		return 0;
	for (;;) {
		size_t len = 0;

		while (name[i] && name[i] != '-' && name[i] != '_') {
			if (len + 1 >= sizeof(w))
				return 0;
			w[len++] = (char)tolower((unsigned char)name[i++]);
		}
		w[len] = '\0';
		if (strcmp(w, "world") == 0) {
			mask |= 1u << NAX6;
		} else {
			for (k = 0; k < NAX6 && strcmp(w, ax_word[k]) != 0; k++)
				;
			if (k == NAX6)
				return 0;
			mask |= 1u << k;
		}
		if (!name[i])
			break;
		i++;
	}
	return mask;
}

/* A member's coordinate on axis a of six (expert dp derived). */
static uint32_t
coord6(const struct judge_step *st, const uint32_t *co, int a)
{
	uint32_t ep = st->size[JUDGE_EP] ? st->size[JUDGE_EP] : 1;

	if (a == AX_EDP)
		return (co[JUDGE_CP] + st->size[JUDGE_CP] * co[JUDGE_DP]) / ep;
	return co[a];
}

static uint32_t
size6(const struct judge_step *st, int a)
{
	uint32_t ep = st->size[JUDGE_EP] ? st->size[JUDGE_EP] : 1;

	if (a == AX_EDP)
		return st->size[JUDGE_CP] * st->size[JUDGE_DP] / ep;
	return st->size[a] ? st->size[a] : 1;
}

static const int dense[] = { JUDGE_TP, JUDGE_CP, JUDGE_DP, JUDGE_PP };
static const int expert[] = { JUDGE_TP, JUDGE_EP, AX_EDP, JUDGE_PP };

/* The axes a group of n members spans (bits as name_axes'): its name's,
 * else its coordinates'. */
static unsigned
group_span(const struct judge_step *st, const uint32_t (*co)[JUDGE_NAXES], size_t n,
	   const char *name)
{
	unsigned span = name_axes(name);
	const int *axes;
	size_t i;
	int k;

	if (span)
		return span;
	/* From the coordinates: expert axes when ep differs. */
	for (i = 1; i < n; i++)
		if (co[i][JUDGE_EP] != co[0][JUDGE_EP])
			span |= 1u << JUDGE_EP;
	axes = span ? expert : dense;
	for (k = 0; k < 4; k++)
		for (i = 1; i < n; i++)
			if (coord6(st, co[i], axes[k]) != coord6(st, co[0], axes[k]))
				span |= 1u << axes[k];
	return span;
}

void
judge_group_name(const struct judge_step *st, const uint32_t (*co)[JUDGE_NAXES], size_t n,
		 const char *name, char *out, size_t size)
{
	struct line l = { out, size, 0 };
	unsigned span, big = 0;
	const int *axes;
	uint64_t index = 0, stride = 1;
	int k, first = 1;

	if (!size)
		return;
	out[0] = '\0';
	if (!n)
		return;
	span = group_span(st, co, n, name);
	axes = span & (1u << JUDGE_EP | 1u << AX_EDP) ? expert : dense;
	for (k = 0; k < 4; k++)
		if (size6(st, axes[k]) > 1)
			big |= 1u << axes[k];
	if ((span & (1u << NAX6)) || (big && (span & big) == big)) {
		put(&l, "world");
		return;
	}
	if (!span) {
		/* One member, or members that agree on every coordinate. */
		put(&l, "group of %zu rank%s", n, n == 1 ? "" : "s");
		return;
	}
	for (k = 0; k < NAX6; k++) {
		static const int shown[NAX6] = { JUDGE_TP, JUDGE_CP, JUDGE_EP, AX_EDP, JUDGE_DP,
						 JUDGE_PP };

		if (span & (1u << shown[k])) {
			put(&l, "%s%s", first ? "" : "-", ax_upper[shown[k]]);
			first = 0;
		}
	}
	for (k = 0; k < 3; k++) {
		if (span & (1u << axes[k]))
			continue;
		index += coord6(st, co[0], axes[k]) * stride;
		stride *= size6(st, axes[k]);
	}
	put(&l, " group %llu", (unsigned long long)index);
	if (!(span & (1u << JUDGE_PP)) && size6(st, JUDGE_PP) > 1)
		put(&l, " of PP stage %u", co[0][JUDGE_PP]);
}

/* ---- the round's entries and groups ----------------------------------- */

static int
usable(const struct detect_comm *c)
{
	return !(c->flags & (DETECT_BUSY | DETECT_FINAL));
}

/* In its last collective for longer than the threshold (detect.c's rule). */
static int
waiting(const struct js_hot *c, uint64_t now, uint64_t thr)
{
	if (!c->colls || age(now, c->enter_ns) <= thr)
		return 0;
	return !((c->flags & DETECT_GPU) && c->done >= c->colls);
}

static int
gpu_stuck(const struct js_hot *c, uint64_t now, uint64_t thr)
{
	return (c->flags & DETECT_GPU) && c->ch_inflight && age(now, c->progress_ns) > thr;
}

static int
ent_cmp(const void *a, const void *b)
{
	const struct js_entry *x = a, *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->ix != y->ix)
		return x->ix < y->ix ? -1 : 1;
	return (int)x->comm - (int)y->comm;
}

/* The round's context: what every pass reads. */
struct round {
	const struct judge_step *st;
	const struct judge_rank *rk;
	size_t n;
	uint64_t now;
	const struct judge_params *p;
	struct judge_state *s;
	size_t nent, ngrp;
	struct judge_finding *out;
	size_t max, count;
	struct judge_finding sink;	/* findings past max */
	int any_lost;
	int any_exit;		/* a present rank exited (named or not) */
	int fallback;		/* the never-silent rule named the stuck kernels */
	/* stalled()'s evidence, gathered by build() on its way through the
	 * ranks: no_stall when a live rank is in a collective (or its state
	 * says nothing), else how many live ranks ran any and when the last
	 * one was seen */
	int no_stall;
	size_t stall_nr;
	uint64_t stall_last;
};

/* Entry e's hot copy (e points into s->ent). */
static const struct js_hot *
ent_comm(const struct round *r, const struct js_entry *e)
{
	return &r->s->hot[e - r->s->ent];
}

/* Entry e's communicator itself, texts included. */
static const struct detect_comm *
ent_full(const struct round *r, const struct js_entry *e)
{
	return &r->rk[e->ix].st.comm[e->comm];
}

/* Sort the m entries of this round: in the last round's order when they
 * are the same entries (the sort's keys are unique, so its order is a
 * function of them alone), else by qsort, keeping that order for the
 * next round. */
static void
sort_entries(struct judge_state *s, size_t m)
{
	size_t i;
	bool same = m == s->nnat;

	for (i = 0; same && i < m; i++)
		same = s->nat[i].hash == s->ent[i].hash && s->nat[i].rank == s->ent[i].rank &&
		       s->nat[i].ix == s->ent[i].ix && s->nat[i].comm == s->ent[i].comm;
	if (same) {
		for (i = 0; i < m; i++)
			s->tmp[i] = s->ent[s->perm[i]];
		memcpy(s->ent, s->tmp, m * sizeof(*s->ent));
		return;
	}
	for (i = 0; i < m; i++) {
		s->nat[i].hash = s->ent[i].hash;
		s->nat[i].rank = s->ent[i].rank;
		s->nat[i].ix = s->ent[i].ix;
		s->nat[i].comm = s->ent[i].comm;
		s->ent[i].group = (uint32_t)i;	/* its place in input order, set again below */
	}
	qsort(s->ent, m, sizeof(*s->ent), ent_cmp);
	for (i = 0; i < m; i++)
		s->perm[i] = s->ent[i].group;
	s->nnat = m;
}

/* The hot copy of communicator c of rank d. */
static void
hot_copy(struct js_hot *h, const struct detect_rank *d, const struct detect_comm *c)
{
	h->hash = c->hash;
	h->colls = c->colls;
	h->done = c->done;
	h->enter_ns = c->enter_ns;
	h->progress_ns = c->progress_ns;
	h->ch_inflight = c->ch_inflight;
	h->wait_sum_ns = c->wait_sum_ns;
	h->gap_sum_ns = c->gap_sum_ns;
	h->rank = c->rank;
	h->nranks = c->nranks;
	h->p2p_peer = c->p2p_peer;
	h->flags = c->flags;
	h->nwait = c->nwait;
	h->exited = d->exited != 0;
}

/* stalled()'s rule for communicator c of a live rank (see there). */
static void
stall_note(struct round *r, const struct detect_comm *c, int *ran)
{
	if (c->flags & DETECT_BUSY) {
		r->no_stall = 1;
		return;
	}
	if (c->flags & DETECT_FINAL)
		return;
	if (!(c->flags & DETECT_GPU) || c->done < c->colls || c->ch_inflight) {
		r->no_stall = 1;
		return;
	}
	*ran |= c->colls > 0;
	if (c->enter_ns > r->stall_last)
		r->stall_last = c->enter_ns;
	if (c->progress_ns > r->stall_last)
		r->stall_last = c->progress_ns;
}

/* Every present rank's usable communicators, sorted by (hash, rank), a
 * rank's second slot of one hash dropped; then the groups. */
static void
build(struct round *r)
{
	struct judge_state *s = r->s;
	size_t i, k, m = 0;

	for (i = 0; i < r->n; i++) {
		const struct detect_rank *d = &r->rk[i].st;
		int ran = 0;

		if (!r->rk[i].present)
			continue;
		for (k = 0; k < d->ncomm && k < PLW_MAX_COMMS; k++) {
			struct js_entry *e = &s->ent[m];

			if (!d->exited && !r->no_stall)
				stall_note(r, &d->comm[k], &ran);
			if (!usable(&d->comm[k]))
				continue;
			memset(e, 0, sizeof(*e));
			e->hash = d->comm[k].hash;
			e->rank = d->rank;
			e->ix = (uint32_t)i;
			e->comm = (uint16_t)k;
			hot_copy(&s->hot_in[m], d, &d->comm[k]);
			m++;
		}
		if (!d->exited)
			r->stall_nr += ran;
	}
	sort_entries(s, m);
	r->nent = 0;
	r->ngrp = 0;
	for (i = 0; i < m; i++) {
		struct js_entry *e = &s->ent[i];
		struct js_group *g;

		if (r->nent && s->ent[r->nent - 1].hash == e->hash &&
		    s->ent[r->nent - 1].ix == e->ix)
			continue;
		if (!r->nent || s->ent[r->nent - 1].hash != e->hash) {
			g = &s->grp[r->ngrp++];
			memset(g, 0, sizeof(*g));
			g->first = (uint32_t)r->nent;
		}
		g = &s->grp[r->ngrp - 1];
		s->ent[r->nent] = *e;
		s->ent[r->nent].group = (uint32_t)(r->ngrp - 1);
		s->hot[r->nent] = s->hot_in[s->perm[i]];	/* sorted i is input perm[i] */
		g->n++;
		r->nent++;
	}
}

/* Per group: the live members' fewest collectives, exits, missing
 * members; per entry: waiting, stuck. */
static void
mark_state(struct round *r)
{
	uint64_t thr = r->p->hang_threshold_ns;
	size_t g, i;

	for (g = 0; g < r->ngrp; g++) {
		struct js_group *gr = &r->s->grp[g];
		int32_t nranks = 0;

		gr->min_live_colls = UINT64_MAX;
		for (i = gr->first; i < gr->first + gr->n; i++) {
			struct js_entry *e = &r->s->ent[i];
			const struct js_hot *c = ent_comm(r, e);

			if (c->nranks > nranks)
				nranks = c->nranks;
			if (ent_comm(r, e)->exited) {
				gr->any_exited = 1;
				continue;
			}
			if (c->colls < gr->min_live_colls)
				gr->min_live_colls = c->colls;
			if (waiting(c, r->now, thr))
				e->flags |= E_WAITING;
			if (gpu_stuck(c, r->now, thr))
				e->flags |= E_STUCK;
		}
		gr->missing = nranks > 0 && (uint32_t)nranks > gr->n;
	}
}

static int
wait_cmp(const void *a, const void *b)
{
	const struct js_wait *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->e < y->e ? -1 : x->e > y->e;
}

/*
 * The laggers of group g: live members that a live waiting peer with more
 * collectives waits on (pc: the one that waited longest, as detect.c).
 * Then the held entries: waiting on a live member with fewer collectives.
 */
static void
mark_laggers(struct round *r, size_t g)
{
	struct js_group *gr = &r->s->grp[g];
	struct js_wait *w = r->s->wt;
	size_t i, j, nw = 0;
	uint64_t maxw = 0;

	for (i = gr->first; i < gr->first + gr->n; i++) {
		const struct js_entry *e = &r->s->ent[i];

		if (!(e->flags & E_WAITING))
			continue;
		w[nw].t = ent_comm(r, e)->enter_ns;
		w[nw].e = (uint32_t)i;
		if (ent_comm(r, e)->colls > maxw)
			maxw = ent_comm(r, e)->colls;
		nw++;
	}
	if (!nw)
		return;		/* nobody waits: no lagger, nobody held */
	qsort(w, nw, sizeof(*w), wait_cmp);
	for (i = gr->first; i < gr->first + gr->n; i++) {
		struct js_entry *e = &r->s->ent[i];
		uint64_t colls = ent_comm(r, e)->colls;

		if (ent_comm(r, e)->exited || colls >= maxw)
			continue;
		for (j = 0; j < nw; j++)
			if (w[j].e != i && ent_comm(r, &r->s->ent[w[j].e])->colls > colls)
				break;
		if (j == nw)
			continue;
		e->flags |= E_LAGGER;
		e->pc = w[j].e;
		gr->any_lagger = 1;
	}
	for (i = gr->first; i < gr->first + gr->n; i++) {
		struct js_entry *e = &r->s->ent[i];

		if ((e->flags & E_WAITING) && ent_comm(r, e)->colls > gr->min_live_colls)
			e->flags |= E_HELD;
	}
}

/* Per input rank: how many of its entries are stuck, held. */
static void
count_flags(struct round *r)
{
	size_t i;

	memset(r->s->nstuck, 0, r->n);
	memset(r->s->nheld, 0, r->n);
	memset(r->s->nbusy, 0, r->n);
	for (i = 0; i < r->nent; i++) {
		const struct js_entry *e = &r->s->ent[i];

		if ((e->flags & (E_WAITING | E_STUCK)) && r->s->nbusy[e->ix] < 255)
			r->s->nbusy[e->ix]++;
		if ((e->flags & E_STUCK) && r->s->nstuck[e->ix] < 255)
			r->s->nstuck[e->ix]++;
		if ((e->flags & E_HELD) && r->s->nheld[e->ix] < 255)
			r->s->nheld[e->ix]++;
	}
}

/* detect.c's victim rule: 2 when the rank is stuck on the GPU in another
 * communicator, 1 when it waits in another on a member that lags, else 0. */
static int
victim(const struct round *r, const struct js_entry *e)
{
	int stuck = r->s->nstuck[e->ix] - !!(e->flags & E_STUCK);
	int held = r->s->nheld[e->ix] - !!(e->flags & E_HELD);

	return stuck > 0 ? 2 : held > 0 ? 1 : 0;
}

/* ---- findings ----------------------------------------------------------- */

static struct judge_finding *
finding_new(struct round *r, enum judge_kind kind)
{
	struct judge_finding *f = r->count < r->max ? &r->out[r->count] : &r->sink;

	r->count++;
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->node = -1;
	f->exit_status = -1;
	return f;
}

/* The name of group g (judge_group_name on its members, lowest rank
 * first). */
static void
group_label(struct round *r, size_t g, char *out, size_t size)
{
	const struct js_group *gr = &r->s->grp[g];
	const struct detect_comm *c = ent_full(r, &r->s->ent[gr->first]);
	size_t i;

	for (i = 0; i < gr->n; i++)
		memcpy(r->s->co[i], r->rk[r->s->ent[gr->first + i].ix].co, sizeof(r->s->co[i]));
	judge_group_name(r->st, (const uint32_t (*)[JUDGE_NAXES])r->s->co, gr->n, c->name, out,
			 size);
}

/* A finding about group g: its name, communicator, text started. */
static struct judge_finding *
group_finding(struct round *r, enum judge_kind kind, size_t g, struct line *l)
{
	struct judge_finding *f = finding_new(r, kind);
	const struct detect_comm *c = ent_full(r, &r->s->ent[r->s->grp[g].first]);

	group_label(r, g, f->group, sizeof(f->group));
	f->comm_hash = c->hash;
	text_copy(f->comm, sizeof(f->comm), c->name, sizeof(c->name));
	l->b = f->text;
	l->size = sizeof(f->text);
	l->len = 0;
	put(l, "%s: ", f->group);
	return f;
}

/* Add culprit entry i to f (ranks ascend: the entries do). */
static void
add_culprit(struct round *r, struct judge_finding *f, uint32_t *ix, size_t i)
{
	const struct js_entry *e = &r->s->ent[i];

	if (f->nculprits < JUDGE_MAX_CULPRITS) {
		ix[f->nculprits] = e->ix;
		f->culprits[f->nculprits++] = e->rank;
	}
	if (!f->ncul_total)
		f->node = (int32_t)r->rk[e->ix].node;
	f->ncul_total++;
}

/* "AllReduce #4412", or "collective 4413" when its func is unknown. */
static void
put_coll(struct line *l, const struct judge_finding *f)
{
	if (f->func[0])
		put(l, "%s #%llu", f->func, (unsigned long long)f->seq);
	else
		put(l, "collective %llu", (unsigned long long)f->colls);
}

/* One finding per collective that the named laggers of group g did not
 * enter (the colls of the peer each lags). */
static void
lag_findings(struct round *r, size_t g)
{
	const struct js_group *gr = &r->s->grp[g];
	uint64_t done_below = 0;

	for (;;) {
		uint64_t target = UINT64_MAX;
		const struct js_hot *pc = NULL;
		const struct detect_comm *pcf = NULL;
		struct judge_finding *f;
		uint32_t ix[JUDGE_MAX_CULPRITS];
		struct line l;
		size_t i;

		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];
			uint64_t t = ent_comm(r, &r->s->ent[e->pc])->colls;

			if ((e->flags & E_NAMED) && t > done_below && t < target)
				target = t;
		}
		if (target == UINT64_MAX)
			return;
		f = group_finding(r, JUDGE_NOT_ENTERED, g, &l);
		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];
			const struct js_hot *p = ent_comm(r, &r->s->ent[e->pc]);

			if (!(e->flags & E_NAMED) || p->colls != target)
				continue;
			add_culprit(r, f, ix, i);
			if (!pc || p->enter_ns < pc->enter_ns) {
				pc = p;
				pcf = ent_full(r, &r->s->ent[e->pc]);
			}
		}
		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];

			if ((e->flags & E_WAITING) && ent_comm(r, e)->colls >= target)
				f->npeers_waiting++;
		}
		text_copy(f->func, sizeof(f->func), pcf->func, sizeof(pcf->func));
		f->seq = pcf->seq;
		f->colls = target;
		f->since_ns = pc->enter_ns;
		f->for_ns = age(r->now, pc->enter_ns);
		put_culprits(&l, r->st, r->rk, ix, f->nculprits, f->ncul_total);
		put(&l, " never entered ");
		put_coll(&l, f);
		put(&l, "; %zu peer%s waiting ", f->npeers_waiting, f->npeers_waiting == 1 ? "" : "s");
		put_secs(&l, f->for_ns);
		done_below = target;
	}
}

/*
 * detect.c's naming of laggers over the whole step: those held by their
 * own wait elsewhere are left out (stuck there on the GPU, always; waiting
 * there on a lagger, unless every lagger not stuck is held so: a cycle).
 */
static void
not_entered(struct round *r)
{
	size_t i, g;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		size_t found = 0, named = 0;

		for (i = 0; i < r->nent; i++) {
			struct js_entry *e = &r->s->ent[i];
			int held;

			if (!(e->flags & E_LAGGER))
				continue;
			held = victim(r, e);
			found += held != 2;
			if (held == 2 || (pass == 0 && held))
				continue;
			e->flags |= E_NAMED;
			named++;
		}
		if (named || !found)
			break;
	}
	for (g = 0; g < r->ngrp; g++)
		lag_findings(r, g);
}

/* One finding per collective stuck on the GPU in group g, naming the
 * members whose kernels still run (E_NAMED set by the caller). */
static void
stuck_findings(struct round *r, size_t g)
{
	const struct js_group *gr = &r->s->grp[g];
	uint64_t done_below = 0;

	for (;;) {
		uint64_t target = UINT64_MAX, quiet = 0;
		struct judge_finding *f;
		uint32_t ix[JUDGE_MAX_CULPRITS];
		struct line l;
		size_t i;

		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];
			uint64_t t;

			if (!(e->flags & E_NAMED))
				continue;
			t = ent_comm(r, e)->done + 1;
			if (t > done_below && t < target)
				target = t;
		}
		if (target == UINT64_MAX)
			return;
		f = group_finding(r, JUDGE_GPU_STUCK, g, &l);
		f->colls = target;
		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];
			const struct js_hot *c = ent_comm(r, e);

			if (!(e->flags & E_NAMED) || c->done + 1 != target) {
				f->npeers_waiting++;
				continue;
			}
			add_culprit(r, f, ix, i);
			if (age(r->now, c->progress_ns) > quiet) {
				quiet = age(r->now, c->progress_ns);
				f->since_ns = c->progress_ns;
			}
			if (!f->func[0] && c->colls == target) {
				const struct detect_comm *cf = ent_full(r, e);

				text_copy(f->func, sizeof(f->func), cf->func, sizeof(cf->func));
				f->seq = cf->seq;
			}
		}
		f->for_ns = quiet;
		put_coll(&l, f);
		put(&l, " stuck on the GPU ");
		put_secs(&l, f->for_ns);
		put(&l, ", kernels still running on ");
		put_culprits(&l, r->st, r->rk, ix, f->nculprits, f->ncul_total);
		done_below = target;
	}
}

/* Whether a live member of group gr is in none of gr's collectives but in
 * flight past the threshold in another communicator: gr's stuck kernels
 * wait on a rank held elsewhere (a pipeline stage whose TP group waits on
 * a rank stuck in its own transfer), the effect of a cause there. */
static int
member_held_elsewhere(const struct round *r, const struct js_group *gr)
{
	size_t i;

	for (i = gr->first; i < gr->first + gr->n; i++) {
		const struct js_entry *e = &r->s->ent[i];

		if (ent_comm(r, e)->exited || (e->flags & (E_WAITING | E_STUCK)))
			continue;
		if (r->s->nbusy[e->ix] > 0)
			return 1;
	}
	return 0;
}

/*
 * The p2p rule (judge.h) for the stuck entry i of group gr: 1 when it
 * waits in a p2p operation on a peer that is in flight with another peer
 * (itself waiting) or in no p2p operation of gr (missing: it never posted
 * its part), the effect of a cause elsewhere; 0 when its peer is in flight
 * in the same transfer (*mate set to the peer's entry), or nothing is
 * known of its p2p operations.
 */
static int
p2p_effect(const struct round *r, const struct js_group *gr, size_t i, uint32_t *mate)
{
	const struct js_hot *c = ent_comm(r, &r->s->ent[i]);
	size_t j;

	*mate = UINT32_MAX;
	if ((c->flags & (DETECT_P2P | DETECT_GPU)) != (DETECT_P2P | DETECT_GPU) ||
	    c->colls > c->done)
		return 0;
	for (j = gr->first; j < gr->first + gr->n; j++) {
		const struct js_entry *e = &r->s->ent[j];
		const struct js_hot *pc = ent_comm(r, e);

		if (j == i || pc->rank != c->p2p_peer)
			continue;
		if (ent_comm(r, e)->exited || !(pc->flags & DETECT_P2P) ||
		    pc->p2p_peer != c->rank)
			return 1;
		*mate = (uint32_t)j;
		return 0;
	}
	return 1;
}

/* Whether an entry of group gr has flag. */
static int
group_any(const struct round *r, const struct js_group *gr, uint16_t flag)
{
	size_t i;

	for (i = gr->first; i < gr->first + gr->n; i++)
		if (r->s->ent[i].flags & flag)
			return 1;
	return 0;
}

/* Stuck kernels where the group has no cause of its own (a member that
 * exited or lags, members missing while a node is lost, a member held in
 * another communicator); when nothing at all was found and no rank
 * exited, every stuck kernel. */
static void
gpu_stuck_all(struct round *r)
{
	size_t i, g;
	int pass;

	for (i = 0; i < r->nent; i++)
		r->s->ent[i].flags &= (uint16_t)~E_NAMED;
	for (pass = 0; pass < 2; pass++) {
		size_t before = r->count;

		/* Never silent, unless an exit explains the waits (one named,
		 * one in its grace, or the step being ended), or the causes
		 * named a moment ago have just gone (a rank aborting on its
		 * timeout: its exit comes next); and only for kernels stuck a
		 * grace past the threshold. */
		if (pass == 1 && (r->count > 0 || r->any_exit ||
				  (r->s->found_ns && age(r->now, r->s->found_ns) <= end_grace(r->p))))
			break;
		for (g = 0; g < r->ngrp; g++) {
			const struct js_group *gr = &r->s->grp[g];

			if (!group_any(r, gr, E_STUCK))
				continue;	/* (most groups: nothing below to do) */
			if (pass == 0 && (gr->any_exited || gr->any_lagger ||
					  (gr->missing && r->any_lost) ||
					  member_held_elsewhere(r, gr)))
				continue;
			for (i = gr->first; i < gr->first + gr->n; i++) {
				uint32_t mate;

				if (!(r->s->ent[i].flags & E_STUCK))
					continue;
				if (pass == 1) {
					/* a grace past the threshold: the cause (a rank
					 * its peers wait for elsewhere) crosses it a
					 * round or so after the stages it holds */
					if (age(r->now, ent_comm(r, &r->s->ent[i])->progress_ns) >
					    r->p->hang_threshold_ns + end_grace(r->p))
						r->s->ent[i].flags |= E_NAMED;
					continue;
				}
				if (p2p_effect(r, gr, i, &mate))
					continue;
				r->s->ent[i].flags |= E_NAMED;
				if (mate != UINT32_MAX)
					r->s->ent[mate].flags |= E_NAMED;
			}
			stuck_findings(r, g);
		}
		if (r->count > before) {
			r->fallback = pass == 1;
			break;
		}
	}
}

/* Per input rank its smallest group of more than one member (for the
 * name of what its peers wait on), UINT32_MAX none. */
static void
smallest_groups(struct round *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		r->s->rgrp[i] = UINT32_MAX;
	for (i = 0; i < r->nent; i++) {
		const struct js_entry *e = &r->s->ent[i];
		uint32_t cur = r->s->rgrp[e->ix];

		if (r->s->grp[e->group].n < 2)
			continue;
		if (cur == UINT32_MAX || r->s->grp[e->group].n < r->s->grp[cur].n)
			r->s->rgrp[e->ix] = e->group;
	}
}

static int
exit_failed(int status)
{
	return status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* An exit, for the step's-end rule (judge.h): a failure, an end by a
 * termination signal (or with no status yet), or exit 0. */
enum { X_FAIL, X_TERM, X_ZERO };

static int
term_signal(int sig)
{
	return sig == SIGTERM || sig == SIGKILL || sig == SIGINT || sig == SIGHUP;
}

static int
exit_class(const struct detect_rank *d)
{
	int st = d->exit_status;

	if (!d->exit_known)
		return X_TERM;
	if (WIFSIGNALED(st))
		return term_signal(WTERMSIG(st)) ? X_TERM : X_FAIL;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return X_ZERO;
	if (WIFEXITED(st) && WEXITSTATUS(st) > 128 && term_signal(WEXITSTATUS(st) - 128))
		return X_TERM;
	return X_FAIL;
}

/* The signal of an X_TERM exit, 0 when its status is not known. */
static int
exit_signal(const struct detect_rank *d)
{
	if (!d->exit_known)
		return 0;
	if (WIFSIGNALED(d->exit_status))
		return WTERMSIG(d->exit_status);
	return WEXITSTATUS(d->exit_status) - 128;
}

/* An exited rank: st its wait status, -1 unknown. */
static void
exit_finding(struct round *r, uint32_t ix, int st)
{
	const struct judge_rank *jr = &r->rk[ix];
	struct judge_finding *f = finding_new(r, JUDGE_EXITED);
	struct line l = { f->text, sizeof(f->text), 0 };

	f->culprits[0] = jr->st.rank;
	f->nculprits = f->ncul_total = 1;
	f->node = (int32_t)jr->node;
	f->exit_status = st;
	f->since_ns = jr->st.exit_ns;
	f->for_ns = jr->st.exit_ns ? age(r->now, jr->st.exit_ns) : 0;
	if (r->s->rgrp[ix] != UINT32_MAX)
		group_label(r, r->s->rgrp[ix], f->group, sizeof(f->group));
	else
		text_copy(f->group, sizeof(f->group), "world", 6);
	put(&l, "%s: rank ", f->group);
	put_where(&l, r->st, jr);
	if (st < 0)
		put(&l, " exited (status unknown)");
	else if (WIFSIGNALED(st))
		put(&l, " was killed by signal %d", WTERMSIG(st));
	else
		put(&l, " exited with status %d", WEXITSTATUS(st));
	put(&l, exit_failed(st) ? "; its peers will wait on it" :
	    " while the step runs on; its peers will wait on it");
}

/* The note of a step being ended by signal (judge_state_end). */
static void
end_note(struct round *r, uint32_t nterm, uint32_t nexited, int sig, uint64_t since)
{
	struct judge_end *e = &r->s->end;
	struct line l = { e->text, sizeof(e->text), 0 };
	uint32_t world = r->st->world ? r->st->world : (uint32_t)r->n;

	e->ending = 1;
	e->nsignaled = nterm;
	e->nexited = nexited;
	e->sig = sig;
	e->since_ns = since;
	put(&l, "step cancelled/ended by signal: %u of %u ranks ended by a termination signal",
	    nterm, world);
	if (sig > 0)
		put(&l, " (the first by signal %d)", sig);
	put(&l, "; no rank named");
}

/*
 * The exits, by the step's-end rule (judge.h): the step ending by signal
 * names nobody; otherwise the first cause is named (the failures within
 * the grace of it), and what follows it is the step coming down.
 */
static void
exits(struct round *r)
{
	struct js_wait *w = r->s->wt;
	uint64_t grace = end_grace(r->p);
	uint64_t t_term = UINT64_MAX, t_fail = UINT64_MAX, t0 = UINT64_MAX;
	uint32_t world = r->st->world ? r->st->world : (uint32_t)r->n;
	uint32_t nterm = 0;
	size_t i, nx = 0, nrun = 0;
	int pass, sig = 0;

	memset(&r->s->end, 0, sizeof(r->s->end));
	for (i = 0; i < r->n; i++) {
		const struct detect_rank *d = &r->rk[i].st;

		if (!r->rk[i].present)
			continue;
		if (!d->exited) {
			nrun++;
			continue;
		}
		w[nx].t = (uint64_t)d->rank;
		w[nx++].e = (uint32_t)i;
		r->any_exit = 1;
		switch (exit_class(d)) {
		case X_TERM:
			nterm++;
			if (d->exit_ns < t_term || t_term == UINT64_MAX) {
				t_term = d->exit_ns;
				sig = exit_signal(d);
			}
			break;
		case X_FAIL:
			if (d->exit_ns < t_fail)
				t_fail = d->exit_ns;
			break;
		}
	}
	if (2 * (uint64_t)nterm > world && (t_fail == UINT64_MAX || t_fail > t_term)) {
		end_note(r, nterm, (uint32_t)nx, sig, t_term);
		return;
	}
	qsort(w, nx, sizeof(*w), wait_cmp);
	/* Which exits are causes: a failure at once, an end by signal after
	 * the grace, exit 0 past the threshold while the step runs on. */
	for (i = 0; i < nx; i++) {
		const struct detect_rank *d = &r->rk[w[i].e].st;
		uint64_t gone = d->exit_ns ? age(r->now, d->exit_ns) : UINT64_MAX;
		int c = exit_class(d), cause;

		cause = c == X_FAIL || (c == X_TERM && gone > grace) ||
			(c == X_ZERO && nrun && gone > r->p->hang_threshold_ns);
		/* An exit while a hang is named is its effect: the peers'
		 * timeouts (NCCL's watchdog) aborting them. */
		if (r->s->hang_first_ns && d->exit_ns >= r->s->hang_first_ns &&
		    d->exit_ns <= r->s->hang_last_ns + grace)
			cause = 0;
		w[i].t = cause ? 1 : 0;
		if (cause && d->exit_ns < t0)
			t0 = d->exit_ns;
	}
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < nx; i++) {
			const struct detect_rank *d = &r->rk[w[i].e].st;
			int c = exit_class(d);

			if (!w[i].t || (c == X_ZERO) != (pass == 1))
				continue;
			/* Within the grace of the first cause; a kill or exit 0
			 * after a failure is the step coming down. */
			if ((d->exit_ns > t0 && d->exit_ns - t0 > grace) ||
			    (c != X_FAIL && t_fail != UINT64_MAX && d->exit_ns > t_fail))
				continue;
			exit_finding(r, w[i].e, d->exit_known ? d->exit_status : -1);
		}
}

static void
nodes_lost(struct round *r)
{
	size_t k, i;

	for (k = 0; k < r->st->nnodes; k++) {
		const struct judge_node *nd = &r->st->nodes[k];
		struct judge_finding *f;
		struct line l;
		size_t nr = 0;

		if (!nd->lost)
			continue;
		r->any_lost = 1;
		for (i = 0; i < r->n; i++)
			nr += r->rk[i].node == k;
		f = finding_new(r, JUDGE_NODE_LOST);
		l.b = f->text;
		l.size = sizeof(f->text);
		l.len = 0;
		text_copy(f->group, sizeof(f->group), "world", 6);
		f->node = (int32_t)k;
		f->since_ns = nd->last_ns;
		f->for_ns = nd->last_ns ? age(r->now, nd->last_ns) : 0;
		if (nd->name && nd->name[0])
			put(&l, "world: node %s lost: ", nd->name);
		else
			put(&l, "world: node %zu (name unknown) lost: ", k);
		if (nd->last_ns) {
			put(&l, "no summary for ");
			put_secs(&l, f->for_ns);
		} else {
			put(&l, "no summary yet");
		}
		put(&l, "; its %zu rank%s unknown", nr, nr == 1 ? "" : "s");
	}
}

/*
 * Every present live rank that has run a collective is idle outside NCCL:
 * nothing in flight or entered and not completed (the GPU part says so)
 * in any communicator, nothing busy; the last of their activity longer
 * ago than the stall threshold.
 */
static void
stalled(struct round *r)
{
	uint64_t last = r->stall_last;
	size_t nr = r->stall_nr;
	struct judge_finding *f;
	struct line l;

	if (r->no_stall || !nr || age(r->now, last) <= r->p->stall_threshold_ns)
		return;
	f = finding_new(r, JUDGE_STALLED);
	l.b = f->text;
	l.size = sizeof(f->text);
	l.len = 0;
	text_copy(f->group, sizeof(f->group), "world", 6);
	f->since_ns = last;
	f->for_ns = age(r->now, last);
	put(&l, "world: all %zu ranks idle outside NCCL for ", nr);
	put_secs(&l, f->for_ns);
	put(&l, ", none in a collective (a checkpoint, a stuck file system?)");
}

/* ---- the slow-rank rule --------------------------------------------------- */

static inline bool
val_lt(const struct js_val *x, const struct js_val *y)
{
	return x->v < y->v || (x->v == y->v && x->i < y->i);
}

/* Sort v[0..m) by (value, then index), with t[0..m) as
 * scratch: a bottom-up merge sort over runs that insertion sort makes
 * (the slow rule sorts every group's values twice a round, 32,768
 * members in the world group of a 16,384-rank step; qsort's calls
 * through a comparison function were most of it).  O(m log m) whatever
 * the values, which come from the ranks. */
static void
sort_vals(struct js_val *v, struct js_val *t, size_t m)
{
	const size_t run = 16;
	struct js_val *src = v, *dst = t, *sw;
	size_t lo, w, i, j, k, mid, hi;

	for (lo = 0; lo < m; lo += run) {
		hi = lo + run < m ? lo + run : m;
		for (i = lo + 1; i < hi; i++) {
			struct js_val x = v[i];

			for (j = i; j > lo && val_lt(&x, &v[j - 1]); j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
	}
	for (w = run; w < m; w *= 2) {
		for (lo = 0; lo < m; lo += 2 * w) {
			mid = lo + w < m ? lo + w : m;
			hi = lo + 2 * w < m ? lo + 2 * w : m;
			for (i = lo, j = mid, k = lo; k < hi; k++) {
				bool left = j >= hi || (i < mid && !val_lt(&src[j], &src[i]));

				dst[k] = left ? src[i++] : src[j++];
			}
		}
		sw = src;
		src = dst;
		dst = sw;
	}
	if (src != v)
		memcpy(v, src, m * sizeof(*v));
}

/* The median of the m values of v (sorted) without the one at place p. */
static double
median_without(const struct js_val *v, size_t m, size_t p)
{
	size_t k = m - 1, q = (k - 1) / 2;
	double a = v[q < p ? q : q + 1].v;

	if (k % 2)
		return a;
	q++;
	return (a + v[q < p ? q : q + 1].v) / 2;
}

/* Whether group g can be judged for slowness: two or more members, all
 * live, GPU part recorded, windows of slow_window completions. */
static int
slow_judgeable(const struct round *r, const struct js_group *gr)
{
	size_t i;

	if (gr->n < 2)
		return 0;
	for (i = gr->first; i < gr->first + gr->n; i++) {
		const struct js_entry *e = &r->s->ent[i];
		const struct js_hot *c = ent_comm(r, e);

		if (ent_comm(r, e)->exited || !(c->flags & DETECT_GPU) ||
		    c->nwait < r->p->slow_window || !c->nwait)
			return 0;
	}
	return 1;
}

/* The smoothed lead and excess of entry e, given this round's: a new
 * communicator in the slot starts from them; a round with no new
 * completions changes nothing. */
static void
smooth(struct round *r, struct js_entry *e, double lead, double excess)
{
	const struct js_hot *c = ent_comm(r, e);
	struct js_smooth *sm;
	double a = r->p->slow_smooth;

	e->lead = lead;
	e->excess = excess;
	if (e->rank < 0 || e->rank >= (int64_t)r->s->world || !(a > 0 && a <= 1))
		return;
	/* slot-major: a group's members (ranks in order) lie near each other */
	sm = &r->s->sm[(size_t)e->comm * r->s->world + (size_t)e->rank];
	if (sm->hash != c->hash || !sm->hash) {
		sm->hash = c->hash;
		sm->lead = lead;
		sm->excess = excess;
	} else if (sm->done != c->done) {
		sm->lead += a * (lead - sm->lead);
		sm->excess += a * (excess - sm->excess);
	}
	sm->done = c->done;
	e->lead = sm->lead;
	e->excess = sm->excess;
}

/* Each member's lead and excess in group g (judge.h). */
static void
slow_group(struct round *r, size_t g)
{
	const struct js_group *gr = &r->s->grp[g];
	struct js_val *vw = r->s->vw, *vc = r->s->vc;
	size_t i, m = gr->n;

	if (!slow_judgeable(r, gr))
		return;
	for (i = 0; i < m; i++) {
		const struct js_hot *c = ent_comm(r, &r->s->ent[gr->first + i]);
		double w = (double)c->wait_sum_ns / c->nwait;

		vw[i].v = w;
		vc[i].v = w + (double)c->gap_sum_ns / c->nwait;
		vw[i].i = vc[i].i = (uint32_t)i;
	}
	sort_vals(vw, r->s->vt, m);
	sort_vals(vc, r->s->vt, m);
	for (i = 0; i < m; i++) {
		r->s->pw[vw[i].i] = (uint32_t)i;
		r->s->pc[vc[i].i] = (uint32_t)i;
	}
	for (i = 0; i < m; i++) {
		struct js_entry *e = &r->s->ent[gr->first + i];
		size_t p = r->s->pw[i];
		double cyc = median_without(vc, m, r->s->pc[i]);

		if (!(cyc > 0))
			continue;
		smooth(r, e, (median_without(vw, m, p) - vw[p].v) / cyc,
		       (vw[p].v - vw[p == 0 ? 1 : 0].v) / cyc);
		e->flags |= E_JUDGED;
	}
}

/* Forget a rank's streak (and where it was named). */
static void
slow_reset(struct js_slow *sl)
{
	sl->since_ns = 0;
	sl->mark_hash = 0;
	sl->mark_done = 0;
	sl->rounds = 0;
	sl->named = 0;
	sl->name_hash = 0;
}

/* The margin a rank must lead by: lower once it is named. */
static double
slow_need(const struct round *r, const struct js_slow *sl)
{
	return sl->named ? r->p->slow_margin_off : r->p->slow_margin;
}

/* Per global rank this round: held, its positive leads added, its
 * largest lead and where, its lead in its busiest communicator (the most
 * completions: the finest steps of its compute, TP in Megatron). */
static void
slow_evidence(struct round *r)
{
	struct judge_state *s = r->s;
	size_t i;

	for (i = 0; i < s->world; i++) {
		struct js_slow *sl = &s->slow[i];

		sl->lead = sl->cost = 0;
		sl->best = UINT32_MAX;
		sl->name_ent = UINT32_MAX;
		sl->busy_lead = 0;
		sl->busy_done = 0;
		sl->ev = 0;
		sl->held = sl->explained = 0;
	}
	for (i = 0; i < r->nent; i++) {
		const struct js_entry *e = &s->ent[i];
		struct js_slow *sl;

		if (!(e->flags & E_JUDGED) || e->rank < 0 || e->rank >= (int64_t)s->world)
			continue;
		sl = &s->slow[e->rank];
		sl->held |= e->excess >= r->p->slow_margin;
		if (e->lead > 0)
			sl->ev += e->lead;
		if (sl->name_hash && e->hash == sl->name_hash)
			sl->name_ent = (uint32_t)i;
		if (sl->best == UINT32_MAX || ent_comm(r, e)->done > sl->busy_done ||
		    (ent_comm(r, e)->done == sl->busy_done && e->lead > sl->busy_lead)) {
			sl->busy_done = ent_comm(r, e)->done;
			sl->busy_lead = e->lead;
		}
		if (sl->best == UINT32_MAX || e->lead > sl->cost) {
			sl->cost = e->lead;
			sl->best = (uint32_t)i;
		}
	}
}

/* A rank's pipeline: the ranks that share its tp, cp, ep and dp
 * coordinates (its PP group, whatever the communicators are called). */
static uint64_t
pipe_key(const struct judge_step *st, const uint32_t *co)
{
	uint64_t k = co[JUDGE_DP];

	k = k * (st->size[JUDGE_EP] ? st->size[JUDGE_EP] : 1) + co[JUDGE_EP];
	k = k * (st->size[JUDGE_CP] ? st->size[JUDGE_CP] : 1) + co[JUDGE_CP];
	return k * (st->size[JUDGE_TP] ? st->size[JUDGE_TP] : 1) + co[JUDGE_TP];
}

/*
 * A delay travels down a pipeline through the p2p transfers, which the
 * wait ring does not time: the ranks of every stage arrive late at their
 * DP collectives.  A rank is explained when a rank of its pipeline is held
 * (it waits on a slow rank of its own stage) or leads more (its positive
 * leads added: the slow rank leads in its TP group as well as in DP).
 */
static void
slow_pipelines(struct round *r)
{
	struct judge_state *s = r->s;
	struct js_wait *w = s->wt;
	size_t i, j, a, b, nw = 0;

	for (i = 0; i < r->n; i++)
		if (r->rk[i].present && r->rk[i].st.rank >= 0 &&
		    r->rk[i].st.rank < (int64_t)s->world) {
			w[nw].t = pipe_key(r->st, r->rk[i].co);
			w[nw++].e = (uint32_t)i;
		}
	qsort(w, nw, sizeof(*w), wait_cmp);
	for (a = 0; a < nw; a = b) {
		for (b = a + 1; b < nw && w[b].t == w[a].t; b++)
			;
		for (i = a; i < b; i++) {
			struct js_slow *x = &s->slow[r->rk[w[i].e].st.rank];

			for (j = a; j < b && !x->explained; j++) {
				const struct js_slow *y = &s->slow[r->rk[w[j].e].st.rank];

				x->explained = j != i && y != x && (y->held || y->ev > x->ev);
			}
		}
	}
}

/*
 * The streaks: a rank qualifies when its largest lead and its lead in its
 * busiest communicator reach the margin, it is held nowhere and explained
 * by no pipeline peer.  A qualifying round
 * counts when the communicator of its largest lead has new completions; a
 * round that does not qualify ends the streak.
 */
static void
slow_streaks(struct round *r)
{
	struct judge_state *s = r->s;
	size_t i;

	slow_evidence(r);
	slow_pipelines(r);
	for (i = 0; i < s->world; i++) {
		struct js_slow *sl = &s->slow[i];
		const struct js_hot *c;

		if (sl->best == UINT32_MAX || sl->held || sl->explained ||
		    sl->cost < slow_need(r, sl) || sl->busy_lead < slow_need(r, sl)) {
			slow_reset(sl);
			continue;
		}
		sl->lead = sl->cost;
		c = ent_comm(r, &s->ent[sl->best]);
		if (!sl->rounds && !sl->since_ns)
			sl->since_ns = r->now;
		if (c->hash != sl->mark_hash || c->done != sl->mark_done) {
			sl->rounds++;
			sl->mark_hash = c->hash;
			sl->mark_done = c->done;
		}
		if (sl->rounds >= r->p->slow_rounds &&
		    age(r->now, sl->since_ns) >= r->p->slow_persist_ns)
			sl->named = 1;
	}
}

/*
 * The entry a named rank's finding is about: the communicator it was first
 * reported in while that is still judged (an alert keeps its
 * fingerprint), else the one of its largest lead now.
 */
static uint32_t
slow_entry(struct round *r, struct js_slow *sl)
{
	if (sl->name_ent == UINT32_MAX) {
		sl->name_ent = sl->best;
		sl->name_hash = r->s->ent[sl->best].hash;
	}
	return sl->name_ent;
}

static void
slow_findings(struct round *r)
{
	struct judge_state *s = r->s;
	size_t i;

	for (i = 0; i < s->world; i++) {
		struct js_slow *sl = &s->slow[i];
		const struct js_entry *e;
		struct judge_finding *f;
		uint32_t ix[1], k;
		struct line l;

		if (!sl->named)
			continue;
		k = slow_entry(r, sl);
		e = &s->ent[k];
		f = group_finding(r, JUDGE_SLOW, e->group, &l);
		add_culprit(r, f, ix, k);
		f->npeers_waiting = s->grp[e->group].n - 1;
		f->cost_frac = e->lead;
		f->since_ns = sl->since_ns;
		f->for_ns = age(r->now, sl->since_ns);
		put(&l, "rank ");
		put_where(&l, r->st, &r->rk[e->ix]);
		if (f->npeers_waiting == 1)
			put(&l, " is slow: its peer loses %.1f %% of its time waiting on it, for ",
			    100 * e->lead);
		else
			put(&l, " is slow: its %zu peers lose %.1f %% of their time waiting on it, for ",
			    f->npeers_waiting, 100 * e->lead);
		put_secs(&l, f->for_ns);
	}
}

static void
slow(struct round *r)
{
	size_t i, g, blocking = 0;

	for (i = 0; i < r->count && i < r->max; i++)
		blocking += r->out[i].kind != JUDGE_NODE_LOST && !judge_kind_advice(r->out[i].kind);
	if (r->count > r->max)
		blocking += r->count - r->max;
	if (blocking) {
		for (i = 0; i < r->s->world; i++) {
			slow_reset(&r->s->slow[i]);
			r->s->slow[i].lead = 0;
			r->s->slow[i].cost = 0;
		}
		memset(r->s->sm, 0, r->s->cap * sizeof(*r->s->sm));
		return;
	}
	for (g = 0; g < r->ngrp; g++)
		slow_group(r, g);
	slow_streaks(r);
	slow_findings(r);
}

/* ---- the layout's diagnoses ------------------------------------------------ */

int
judge_kind_advice(enum judge_kind k)
{
	return k == JUDGE_TP_NETWORK || k == JUDGE_FSDP_ROOT || k == JUDGE_PP_BUBBLE;
}

/* The axes group g spans (group_span on its members). */
static unsigned
group_axes(struct round *r, size_t g)
{
	const struct js_group *gr = &r->s->grp[g];
	const struct detect_comm *c = ent_full(r, &r->s->ent[gr->first]);
	unsigned span = name_axes(c->name);
	size_t i;

	if (span)
		return span;
	for (i = 0; i < gr->n; i++)
		memcpy(r->s->co[i], r->rk[r->s->ent[gr->first + i].ix].co, sizeof(r->s->co[i]));
	return group_span(r->st, (const uint32_t (*)[JUDGE_NAXES])r->s->co, gr->n, NULL);
}

#define TP_NODES	16	/* distinct nodes counted */
#define TP_SHOW_NODES	3	/* and named */

/*
 * A TP group (its name says tp, or its members differ only in tp and cp)
 * whose members sit on more than one node as the summaries say, or that
 * NCCL counted more than one node for at its init (a member's nnodes,
 * version 4 summaries): its collectives cross the network.
 */
static void
tp_network(struct round *r)
{
	const unsigned tp_only = 1u << JUDGE_TP | 1u << JUDGE_CP;
	size_t g, i, k;

	for (g = 0; g < r->ngrp; g++) {
		const struct js_group *gr = &r->s->grp[g];
		uint32_t nodes[TP_NODES], ix[JUDGE_MAX_CULPRITS];
		size_t nn = 0;
		int more = 0;
		int32_t nccl_nodes = 0;
		struct judge_finding *f;
		unsigned span;
		struct line l;

		uint32_t node0 = r->rk[r->s->ent[gr->first].ix].node;
		int split = 0;

		/* One pass first (most groups stop here): on more than one
		 * node, by the summaries or by NCCL's count? */
		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];
			int32_t nc = ent_full(r, e)->nnodes;

			if (nc > nccl_nodes)
				nccl_nodes = nc;
			split |= r->rk[e->ix].node != node0;
		}
		if (!split && nccl_nodes < 2)
			continue;
		span = group_axes(r, g);
		if (!(span & (1u << JUDGE_TP)) || (span & ~tp_only))
			continue;
		for (i = gr->first; i < gr->first + gr->n; i++) {
			uint32_t node = r->rk[r->s->ent[i].ix].node;

			for (k = 0; k < nn && nodes[k] != node; k++)
				;
			if (k < nn)
				continue;
			if (nn < TP_NODES)
				nodes[nn++] = node;
			else
				more = 1;
		}
		f = group_finding(r, JUDGE_TP_NETWORK, g, &l);
		for (i = gr->first; i < gr->first + gr->n; i++)
			add_culprit(r, f, ix, i);
		f->npeers_waiting = gr->n;
		f->nspan = (uint32_t)(nn > (size_t)nccl_nodes ? nn : (size_t)nccl_nodes);
		put(&l, "its %u rank%s span", (unsigned)gr->n, gr->n == 1 ? "" : "s");
		if (nn >= 2) {
			put(&l, " %s%zu nodes (", more ? "more than " : "", nn);
			for (k = 0; k < nn && k < TP_SHOW_NODES; k++)
				put(&l, "%s%s", k ? ", " : "", node_name(r->st, nodes[k]));
			put(&l, "%s)", nn > TP_SHOW_NODES ? ", ..." : "");
		} else {
			put(&l, " %d nodes (NCCL's count)", (int)nccl_nodes);
		}
		put(&l, ": its collectives cross the network; a TP group belongs in one node: "
		    "check the script's rank order or its own new_group");
	}
}

/* A gathered total at least this large is worth a warning (FSDP). */
#define FSDP_MIN_GATHER_BYTES	(UINT64_C(512) << 20)
/* The share of its run the one AllGather carries at least. */
#define FSDP_SHARE		0.9

/*
 * FSDP wrapped only at its root: in a data-parallel group (its name or its
 * members span dp, expert dp, or it is the world), one AllGather carries
 * at least 90 % of the AllGather run with the most bytes (record.h: a
 * forward pass's gathers) and gathers at least FSDP_MIN_GATHER_BYTES (its
 * per-rank bytes times the group's ranks).  One finding for the step: the
 * group whose AllGather gathers most.
 */
static void
fsdp_root(struct round *r)
{
	const unsigned dp_like = 1u << JUDGE_DP | 1u << AX_EDP | 1u << NAX6;
	size_t g, i, best = SIZE_MAX;
	uint64_t best_gather = 0, best_top = 0, best_run = 0, best_calls = 0;
	struct judge_finding *f;
	struct line l;
	double share;

	for (g = 0; g < r->ngrp; g++) {
		const struct js_group *gr = &r->s->grp[g];
		uint64_t top = 0, run = 0, calls = 0, gather;
		int32_t nranks = 0;
		unsigned span;

		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct detect_comm *c = ent_full(r, &r->s->ent[i]);

			if (c->nranks > nranks)
				nranks = c->nranks;
			if (c->ag_peak_top > top) {
				top = c->ag_peak_top;
				run = c->ag_peak_bytes;
				calls = c->ag_peak_calls;
			}
		}
		if (!top || nranks < 2 || (double)top < FSDP_SHARE * (double)run)
			continue;
		gather = top > UINT64_MAX / (uint64_t)nranks ? UINT64_MAX : top * (uint64_t)nranks;
		if (gather < FSDP_MIN_GATHER_BYTES || gather <= best_gather)
			continue;
		span = group_axes(r, g);
		if (!(span & dp_like))
			continue;
		best = g;
		best_gather = gather;
		best_top = top;
		best_run = run;
		best_calls = calls;
	}
	if (best == SIZE_MAX)
		return;
	f = group_finding(r, JUDGE_FSDP_ROOT, best, &l);
	f->bytes = best_gather;
	f->npeers_waiting = r->s->grp[best].n;
	share = best_run ? (double)best_top / (double)best_run : 1.0;
	f->cost_frac = share;
	text_copy(f->func, sizeof(f->func), "AllGather", 10);
	put(&l, "one AllGather gathers %.1f GiB of parameters, %.0f %% of the largest run of "
	    "AllGathers (%llu call%s): FSDP wraps only the root module; wrap each transformer "
	    "block (auto_wrap_policy, or fully_shard per block)",
	    (double)best_gather / (double)(UINT64_C(1) << 30),
	    100 * share, (unsigned long long)best_calls, best_calls == 1 ? "" : "s");
}

/* Each present rank's window in its PP group (a group spanning pp
 * alone): a new baseline when the group or the record changed, a
 * measurement when the p2p span grew by the window. */
static void
bubble_windows(struct round *r)
{
	size_t g, i;

	for (g = 0; g < r->ngrp; g++) {
		const struct js_group *gr = &r->s->grp[g];

		if (group_axes(r, g) != 1u << JUDGE_PP)
			continue;
		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];
			const struct detect_comm *c = ent_full(r, e);
			struct js_bubble *b;

			if (e->rank < 0 || (uint64_t)e->rank >= r->s->world || !c->p2p_span_ns ||
			    c->p2p_wait_ns > c->p2p_span_ns)
				continue;
			b = &r->s->bub[e->rank];
			if (b->hash != c->hash || c->p2p_span_ns < b->span0 ||
			    c->p2p_wait_ns < b->wait0) {
				memset(b, 0, sizeof(*b));
				b->hash = c->hash;
				b->wait0 = c->p2p_wait_ns;
				b->span0 = c->p2p_span_ns;
				continue;
			}
			if (c->p2p_span_ns - b->span0 < r->p->bubble_window_ns)
				continue;
			b->idle = (double)(c->p2p_wait_ns - b->wait0) /
				  (double)(c->p2p_span_ns - b->span0);
			b->have = 1;
			b->wait0 = c->p2p_wait_ns;
			b->span0 = c->p2p_span_ns;
		}
	}
}

/*
 * The pipeline bubble: per PP stage, the mean idle share of its present
 * ranks' last windows (p2p wait over p2p span); a warning when the worst
 * stage idles more than the plan, (pp - 1) / (m + pp - 1), by
 * bubble_margin.  m is
 * bubble_microbatches, or 4 * pp assumed when not known.  One finding per
 * step.
 */
static void
pp_bubble(struct round *r)
{
	const uint32_t pp = r->st->size[JUDGE_PP];
	struct js_val *st = r->s->vw;	/* per stage: idle added, ranks */
	uint32_t m, k, worst = UINT32_MAX;
	struct judge_finding *f;
	double plan, idle = 0;
	struct line l;
	size_t i;

	if (pp < 2 || pp > r->s->world)
		return;
	bubble_windows(r);
	for (k = 0; k < pp; k++) {
		st[k].v = 0;
		st[k].i = 0;
	}
	for (i = 0; i < r->n; i++) {
		const struct judge_rank *jr = &r->rk[i];
		const struct js_bubble *b;

		if (!jr->present || jr->st.rank < 0 || (uint64_t)jr->st.rank >= r->s->world ||
		    jr->co[JUDGE_PP] >= pp)
			continue;
		b = &r->s->bub[jr->st.rank];
		if (!b->have)
			continue;
		st[jr->co[JUDGE_PP]].v += b->idle;
		st[jr->co[JUDGE_PP]].i++;
	}
	for (k = 0; k < pp; k++) {
		if (!st[k].i)
			continue;
		st[k].v /= st[k].i;
		if (worst == UINT32_MAX || st[k].v > idle) {
			worst = k;
			idle = st[k].v;
		}
	}
	m = r->p->bubble_microbatches ? r->p->bubble_microbatches : 4 * pp;
	/* the bubble is (pp - 1) / m of the compute: of the step's time,
	 * what the idle share measures, (pp - 1) / (m + pp - 1) */
	plan = (double)(pp - 1) / (double)(m + pp - 1);
	if (worst == UINT32_MAX || idle <= plan + r->p->bubble_margin)
		return;
	f = finding_new(r, JUDGE_PP_BUBBLE);
	snprintf(f->group, sizeof(f->group), "PP stage %u", worst);
	f->cost_frac = idle;
	f->plan_frac = plan;
	l.b = f->text;
	l.size = sizeof(f->text);
	l.len = 0;
	put(&l, "pipeline: PP stage %u idles %.0f %% of its time in p2p waits (plan "
	    "(p-1)/(m+p-1) = %.0f %%, m = %u%s); stages", worst, 100 * idle, 100 * plan, m,
	    r->p->bubble_microbatches ? "" : " assumed: 4 x pp");
	for (k = 0; k < pp && k < 8; k++)
		if (st[k].i)
			put(&l, " %u: %.0f %%", k, 100 * st[k].v);
	put(&l, "; more micro-batches per step, or an interleaved schedule");
}

size_t
judge_run(const struct judge_step *step, const struct judge_rank *ranks, size_t n,
	  uint64_t now_ns, const struct judge_params *p, struct judge_state *s,
	  struct judge_finding *out, size_t max)
{
	struct round r;
	size_t g;

	memset(&r, 0, sizeof(r));
	r.st = step;
	r.rk = ranks;
	r.n = n < s->world ? n : s->world;
	r.now = now_ns;
	r.p = p;
	r.s = s;
	r.out = out;
	r.max = out ? max : 0;
	build(&r);
	mark_state(&r);
	for (g = 0; g < r.ngrp; g++)
		mark_laggers(&r, g);
	count_flags(&r);
	smallest_groups(&r);
	exits(&r);
	nodes_lost(&r);
	not_entered(&r);
	gpu_stuck_all(&r);
	stalled(&r);
	slow(&r);
	if (r.count && !r.fallback)
		s->found_ns = now_ns;
	for (g = 0; g < r.count && g < r.max; g++)
		if (out[g].kind == JUDGE_NOT_ENTERED || out[g].kind == JUDGE_GPU_STUCK) {
			if (!s->hang_last_ns || age(now_ns, s->hang_last_ns) > end_grace(p))
				s->hang_first_ns = now_ns;
			s->hang_last_ns = now_ns;
			break;
		}
	/* Advice last: no other rule sees it (the slow rule is not held off
	 * by it, nor the never-silent rule's memory). */
	tp_network(&r);
	fsdp_root(&r);
	pp_bubble(&r);
	return r.count;
}
