/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The judge's slow-rank rule (see judge.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "judge_int.h"

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
		sl->held_by = 0;
		sl->held = sl->explained = 0;
	}
	for (i = 0; i < r->nent; i++) {
		const struct js_entry *e = &s->ent[i];
		struct js_slow *sl;

		if (!(e->flags & E_JUDGED) || e->rank < 0 || e->rank >= (int64_t)s->world)
			continue;
		sl = &s->slow[e->rank];
		sl->held |= e->excess >= r->p->slow_margin;
		if (e->excess > sl->held_by)
			sl->held_by = e->excess;
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
 * A delay travels down a pipeline through the p2p transfers: the ranks of
 * every stage arrive late at their DP collectives.  A rank is explained
 * when a rank of its pipeline is held (it waits on a slow rank of its own
 * stage) by at least the rank's own largest lead, or leads more (its
 * positive leads added: the slow rank leads in its TP group as well as in
 * DP).  A pipeline peer held by less (the jitter of a healthy TP pair,
 * two or three hundredths of a cycle) explains no larger lead.
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
	qsort(w, nw, sizeof(*w), js_wait_cmp);
	for (a = 0; a < nw; a = b) {
		for (b = a + 1; b < nw && w[b].t == w[a].t; b++)
			;
		for (i = a; i < b; i++) {
			struct js_slow *x = &s->slow[r->rk[w[i].e].st.rank];

			for (j = a; j < b && !x->explained; j++) {
				const struct js_slow *y = &s->slow[r->rk[w[j].e].st.rank];

				x->explained = j != i && y != x &&
					       ((y->held && y->held_by >= x->cost) || y->ev > x->ev);
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
		    rules_age(r->now, sl->since_ns) >= r->p->slow_persist_ns)
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
		f = js_group_finding(r, JUDGE_SLOW, e->group, &l);
		js_add_culprit(r, f, ix, k);
		f->npeers_waiting = s->grp[e->group].n - 1;
		f->cost_frac = e->lead;
		f->since_ns = sl->since_ns;
		f->for_ns = rules_age(r->now, sl->since_ns);
		js_put(&l, "rank ");
		js_put_where(&l, r->st, &r->rk[e->ix]);
		if (f->npeers_waiting == 1)
			js_put(&l, " is slow: its peer loses %.1f %% of its time waiting on it, for ",
			    100 * e->lead);
		else
			js_put(&l, " is slow: its %zu peers lose %.1f %% of their time waiting on it, for ",
			    f->npeers_waiting, 100 * e->lead);
		js_put_secs(&l, f->for_ns);
	}
}

void
js_slow_rule(struct round *r)
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
