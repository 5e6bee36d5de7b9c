/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The job-wide judge (see judge.h): its state and the round's order. */
#include <stdlib.h>
#include <string.h>

#include "judge_int.h"

#define MAX_WORLD	16777216u
#define NS		1000000000ULL

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
	case JUDGE_BUSY:
		return "busy";
	case JUDGE_MISMATCH:
		return "mismatch";
	}
	return "unknown";
}

void
judge_params_default(struct judge_params *p)
{
	memset(p, 0, sizeof(*p));
	p->hang_threshold_ns = JUDGE_HANG_THRESHOLD_S * NS;
	p->busy_threshold_ns = JUDGE_BUSY_THRESHOLD_S * NS;
	p->stall_threshold_ns = 300 * NS;
	p->slow_window = 16;
	p->slow_rounds = 20;
	p->slow_persist_ns = 20 * NS;
	p->slow_margin = 0.02;
	p->slow_margin_off = 0.01;
	p->slow_smooth = 0.3;
	p->end_grace_ns = 2 * NS;
	p->bubble_window_ns = JUDGE_BUBBLE_WINDOW_S * NS;
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
	free(s->culprit);
	free(s->awaited);
	free(s->seen);
	free(s->unw);
	free(s->sig);
	free(s->sigp);
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
	s->culprit = calloc(world, 1);
	s->awaited = calloc(world, 1);
	s->seen = calloc(world, 1);
	s->unw = calloc(world, sizeof(*s->unw));
	s->sig = calloc(world, sizeof(*s->sig));
	s->sigp = calloc(world, sizeof(*s->sigp));
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
	    !s->rgrp || !s->nstuck || !s->nheld || !s->nbusy || !s->culprit || !s->awaited || !s->seen || !s->unw || !s->slow || !s->bub ||
	    !s->sig || !s->sigp)
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

int
judge_kind_advice(enum judge_kind k)
{
	return k == JUDGE_TP_NETWORK || k == JUDGE_FSDP_ROOT || k == JUDGE_PP_BUBBLE;
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
	js_build(&r);
	js_mark_state(&r);
	for (g = 0; g < r.ngrp; g++)
		js_mark_laggers(&r, g);
	js_count_flags(&r);
	js_smallest_groups(&r);
	js_exits(&r);
	js_nodes_lost(&r);
	js_mismatch(&r);
	js_not_entered(&r);
	js_p2p_unposted(&r);
	js_unwatched(&r);
	js_gpu_stuck_all(&r);
	js_stalled(&r);
	if (!p->slow_off)
		js_slow_rule(&r);
	if (r.count && !r.fallback)
		s->found_ns = now_ns;
	for (g = 0; g < r.count && g < r.max; g++)
		if (out[g].kind == JUDGE_NOT_ENTERED || out[g].kind == JUDGE_GPU_STUCK ||
		    out[g].kind == JUDGE_MISMATCH || out[g].kind == JUDGE_BUSY) {
			if (!s->hang_last_ns || rules_age(now_ns, s->hang_last_ns) > end_grace(p))
				s->hang_first_ns = now_ns;
			s->hang_last_ns = now_ns;
			break;
		}
	/* Advice last: no other rule sees it (the slow rule is not held off
	 * by it, nor the never-silent rule's memory). */
	js_tp_network(&r);
	js_fsdp_root(&r);
	js_pp_bubble(&r);
	return r.count;
}
