/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The judge's round: entries, groups and their flags (see judge.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "judge_int.h"

static int
waiting(const struct js_hot *c, uint64_t now, uint64_t thr)
{
	return rules_waiting(c->flags, c->colls, c->done, c->enter_ns, now, thr);
}

/* The entries are usable communicators only (js_build). */
static int
gpu_stuck(const struct js_hot *c, uint64_t now, uint64_t thr)
{
	return rules_gpu_stuck(c->flags, c->ch_inflight, c->progress_ns, now, thr);
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

/* js_stalled()'s rule for communicator c of a live rank (see there). */
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
void
js_build(struct round *r)
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
			if (!rules_usable(d->comm[k].flags))
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
void
js_mark_state(struct round *r)
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

int
js_wait_cmp(const void *a, const void *b)
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
void
js_mark_laggers(struct round *r, size_t g)
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
	qsort(w, nw, sizeof(*w), js_wait_cmp);
	for (i = gr->first; i < gr->first + gr->n; i++) {
		struct js_entry *e = &r->s->ent[i];
		uint64_t colls = ent_comm(r, e)->colls;

		/* (a member whose own kernel here is stuck enters no more
		 * for that: the stuck rule names it) */
		if (ent_comm(r, e)->exited || colls >= maxw || (e->flags & E_STUCK))
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
void
js_count_flags(struct round *r)
{
	size_t i;

	memset(r->s->nstuck, 0, r->n);
	memset(r->s->nheld, 0, r->n);
	memset(r->s->nbusy, 0, r->n);
	memset(r->s->culprit, 0, r->n);
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

/* Per input rank its smallest group of more than one member (for the
 * name of what its peers wait on), UINT32_MAX none. */
void
js_smallest_groups(struct round *r)
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

