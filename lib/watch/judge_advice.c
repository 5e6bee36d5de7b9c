/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The judge's advice on the layout and the script (see judge.h). */
#include <stdio.h>
#include <string.h>

#include "judge_int.h"

/* The axes group g spans (group_span on its members). */
static unsigned
group_axes(struct round *r, size_t g)
{
	const struct js_group *gr = &r->s->grp[g];
	const struct detect_comm *c = ent_full(r, &r->s->ent[gr->first]);
	unsigned span = js_name_axes(c->name);
	size_t i;

	if (span)
		return span;
	for (i = 0; i < gr->n; i++)
		memcpy(r->s->co[i], r->rk[r->s->ent[gr->first + i].ix].co, sizeof(r->s->co[i]));
	return js_group_span(r->st, (const uint32_t (*)[JUDGE_NAXES])r->s->co, gr->n, NULL);
}

#define TP_NODES	16	/* distinct nodes counted */
#define TP_SHOW_NODES	3	/* and named */

/*
 * A TP group (its name says tp, or its members differ only in tp and cp)
 * whose members sit on more than one node as the summaries say, or that
 * NCCL counted more than one node for at its init (a member's nnodes,
 * version 4 summaries): its collectives cross the network.
 */
void
js_tp_network(struct round *r)
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
		int split = 0, agree = 1;

		/* One pass first (most groups stop here): on more than one
		 * node, by where the members are, or by NCCL's count when
		 * every member of the whole group gives the same one (a count
		 * one record gives alone may be another communicator's: a
		 * slot read as it was reused) */
		nccl_nodes = ent_full(r, &r->s->ent[gr->first])->nnodes;
		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];

			agree &= ent_full(r, e)->nnodes == nccl_nodes;
			split |= r->rk[e->ix].node != node0;
		}
		if (!agree || gr->missing)
			nccl_nodes = 0;
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
		f = js_group_finding(r, JUDGE_TP_NETWORK, g, &l);
		for (i = gr->first; i < gr->first + gr->n; i++)
			js_add_culprit(r, f, ix, i);
		f->npeers_waiting = gr->n;
		f->nspan = (uint32_t)(nn > (size_t)nccl_nodes ? nn : (size_t)nccl_nodes);
		js_put(&l, "its %u rank%s span", (unsigned)gr->n, gr->n == 1 ? "" : "s");
		if (nn >= 2) {
			js_put(&l, " %s%zu nodes (", more ? "more than " : "", nn);
			for (k = 0; k < nn && k < TP_SHOW_NODES; k++)
				js_put(&l, "%s%s", k ? ", " : "", js_node_name(r->st, nodes[k]));
			js_put(&l, "%s)", nn > TP_SHOW_NODES ? ", ..." : "");
		} else {
			js_put(&l, " %d nodes (NCCL's count)", (int)nccl_nodes);
		}
		js_put(&l, ": its collectives cross the network; a TP group belongs in one node: "
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
void
js_fsdp_root(struct round *r)
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
	f = js_group_finding(r, JUDGE_FSDP_ROOT, best, &l);
	f->bytes = best_gather;
	f->npeers_waiting = r->s->grp[best].n;
	share = best_run ? (double)best_top / (double)best_run : 1.0;
	f->cost_frac = share;
	rules_text_copy(f->func, sizeof(f->func), "AllGather", 10);
	js_put(&l, "one AllGather gathers %.1f GiB of parameters, %.0f %% of the largest run of "
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

	/* the steps: each rank's DP group's bursts (record.h), this round */
	for (i = 0; i < r->nent; i++)
		if (r->s->ent[i].rank >= 0 && (uint64_t)r->s->ent[i].rank < r->s->world)
			r->s->bub[r->s->ent[i].rank].steps_now = 0;
	for (g = 0; g < r->ngrp; g++) {
		const struct js_group *gr = &r->s->grp[g];

		if (group_axes(r, g) != 1u << JUDGE_DP)
			continue;
		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];

			if (e->rank >= 0 && (uint64_t)e->rank < r->s->world)
				r->s->bub[e->rank].steps_now = ent_full(r, e)->bursts;
		}
	}
	for (g = 0; g < r->ngrp; g++) {
		const struct js_group *gr = &r->s->grp[g];

		if (group_axes(r, g) != 1u << JUDGE_PP)
			continue;
		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];
			const struct detect_comm *c = ent_full(r, e);
			struct js_bubble *b;
			uint64_t fwd;

			if (e->rank < 0 || (uint64_t)e->rank >= r->s->world || !c->p2p_span_ns ||
			    c->p2p_wait_ns > c->p2p_span_ns)
				continue;
			b = &r->s->bub[e->rank];
			/* forward: to the next stage; the last stage's come from
			 * its previous (record.h's neighbour counts) */
			fwd = c->rank < c->nranks - 1 ? c->p2p_tx[1] : c->p2p_rx[0];
			if (b->hash != c->hash || c->p2p_span_ns < b->span0 ||
			    c->p2p_wait_ns < b->wait0 || fwd < b->fwd0 || b->steps_now < b->steps0) {
				uint64_t steps = b->steps_now;

				memset(b, 0, sizeof(*b));
				b->hash = c->hash;
				b->wait0 = c->p2p_wait_ns;
				b->span0 = c->p2p_span_ns;
				b->fwd0 = fwd;
				b->steps0 = b->steps_now = steps;
				continue;
			}
			if (c->p2p_span_ns - b->span0 < r->p->bubble_window_ns)
				continue;
			b->idle = (double)(c->p2p_wait_ns - b->wait0) /
				  (double)(c->p2p_span_ns - b->span0);
			b->have = 1;
			b->wait0 = c->p2p_wait_ns;
			b->span0 = c->p2p_span_ns;
			/* micro-batches a step, when the window saw whole steps
			 * (rounded: a window ends mid-step) */
			b->mb = 0;
			if (b->steps_now > b->steps0 && fwd > b->fwd0) {
				uint64_t d = b->steps_now - b->steps0, m = (fwd - b->fwd0 + d / 2) / d;

				b->mb = m > 0 && m < UINT32_MAX ? (uint32_t)m : 0;
			}
			b->fwd0 = fwd;
			b->steps0 = b->steps_now;
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
void
js_pp_bubble(struct round *r)
{
	const uint32_t pp = r->st->size[JUDGE_PP];
	struct js_val *st = r->s->vw;	/* per stage: idle added, ranks */
	uint32_t m, k, worst = UINT32_MAX, measured = 0;
	struct judge_finding *f;
	double plan, fed, idle = 0;
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
		if (b->mb && (!measured || b->mb < measured))
			measured = b->mb;
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
	/* m: told; else counted (the fewest any rank saw: the larger plan);
	 * else assumed.  The bubble is (pp - 1) / m of the compute: of the
	 * step's time, what the idle share measures, (pp - 1) / (m + pp - 1).
	 * A pipeline fed 4 x pp micro-batches a step idles (pp - 1) /
	 * (5 pp - 1): above that and the plan both, by the margin, it is
	 * worth a word, whichever explains it. */
	m = r->p->bubble_microbatches ? r->p->bubble_microbatches : measured ? measured : 4 * pp;
	plan = (double)(pp - 1) / (double)(m + pp - 1);
	fed = (double)(pp - 1) / (double)(5 * pp - 1);
	if (worst == UINT32_MAX || idle <= (plan < fed ? plan : fed) + r->p->bubble_margin)
		return;
	f = js_finding_new(r, JUDGE_PP_BUBBLE);
	snprintf(f->group, sizeof(f->group), "PP stage %u", worst);
	f->cost_frac = idle;
	f->plan_frac = plan;
	l.b = f->text;
	l.size = sizeof(f->text);
	l.len = 0;
	js_put(&l, "pipeline: PP stage %u idles %.0f %% of its time in p2p waits (plan "
	    "(p-1)/(m+p-1) = %.0f %%, m = %u%s); stages", worst, 100 * idle, 100 * plan, m,
	    r->p->bubble_microbatches ? "" : measured ? " counted: forward transfers a step" :
	    " assumed: 4 x pp");
	for (k = 0; k < pp && k < 8; k++)
		if (st[k].i)
			js_put(&l, " %u: %.0f %%", k, 100 * st[k].v);
	if (idle <= plan + r->p->bubble_margin)
		js_put(&l, "; the schedule's own bubble with so few micro-batches (%u of them "
		    "would idle %.0f %%): more micro-batches per step, or an interleaved "
		    "schedule", 4 * pp, 100 * fed);
	else
		js_put(&l, "; more than the schedule's bubble: a stage slower than the others, "
		    "or slow transfers between them, hold the rest; else more micro-batches "
		    "per step, or an interleaved schedule");
}
