/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The automatic layout: every layout the world size and the pins allow is
 * planned by plan_estimate, the ones whose memory fits are ranked by the
 * estimated step time, and the best few come back resolved.  The search is
 * a plain nested loop over short lists, in a fixed order, so that the same
 * inputs always give the same answer; docs/ARCHITECTURE.md ("The automatic
 * layout") states each choice.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"

/* GPU memory assumed when the map does not know it: an H100 SXM. */
#define NOMINAL_GPU_GB 80.0
/* GPUs per NVLink domain assumed when unknown: an HGX node. */
#define NOMINAL_DOMAIN 8
/* Fewer tokens than this per CP rank is not worth a ring step. */
#define CP_MIN_TOKENS 512
/* The tokens per step of a global batch the planner picks itself (2^22). */
#define DEFAULT_STEP_TOKENS 4194304.0
/* Step times this close (relative) are a tie. */
#define TIE 1e-9
/* The longest divisor list kept (a world of 2^24 has 25 power-of-two ones). */
#define MAX_LIST 256

struct list {
	long v[MAX_LIST];
	int n;
};

struct search {
	const struct pl_layout *orig;	/* as the caller gave it, for messages */
	const struct pl_layout *req;	/* with the planner's gbs */
	struct plan_ctx ctx;
	double usable_gb;
	struct plan_auto_result *out;
	struct plan scratch;
	/* the smallest memory seen, for the error when nothing fits */
	double min_gb;
	struct pl_layout min_layout;
	bool have_min;
	/*
	 * CP only when the activations need it: the first pass plans cp 1
	 * only; a second pass, cp above 1 only, runs when no layout of the
	 * first fits without full recomputation (or, with recompute= pinned,
	 * when none fits at all), and both passes' layouts are then ranked
	 * together.  A pinned cp is its own only size.  cp_needed is true
	 * while the second pass runs.
	 */
	bool cp_needed;
	bool fits_cheaply;	/* a first-pass layout fits (without full
				 * recomputation unless recompute= is pinned) */
};

static void
push(struct list *l, long v)
{
	if (l->n < MAX_LIST)
		l->v[l->n++] = v;
}

/* The divisors of n up to max, ascending, that keep(v) accepts. */
static void
divisors(struct list *l, long n, long max, bool (*keep)(const struct search *, long),
	 const struct search *s)
{
	long d;

	l->n = 0;
	for (d = 1; d <= n && d <= max; d++)
		if (n % d == 0 && (!keep || keep(s, d)))
			push(l, d);
}

static bool
keep_tp(const struct search *s, long tp)
{
	return s->req->model.heads % tp == 0 && s->ctx.domain_gpus % tp == 0;
}

static bool
keep_cp(const struct search *s, long cp)
{
	if ((cp > 1) != s->cp_needed)
		return false;
	return s->req->seq % cp == 0 && s->req->seq / cp >= CP_MIN_TOKENS;
}

/* "tp8,cp2,pp16,dp64,vpp2,sp,zero=1,recompute=selective,ulysses" */
static void
name(const struct pl_layout *l, char *buf, size_t size)
{
	static const char *const rc[] = { "", ",recompute=selective", ",recompute=full" };
	int n;

	n = snprintf(buf, size, "tp%ld", l->size[PL_TP]);
	if (l->size[PL_CP] > 1 && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ",cp%ld", l->size[PL_CP]);
	if (l->size[PL_EP] > 1 && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ",ep%ld", l->size[PL_EP]);
	if (n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ",pp%ld,dp%ld", l->size[PL_PP],
			      l->size[PL_DP]);
	if (l->vpp > 1 && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ",vpp%ld", l->vpp);
	if (l->sp && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ",sp");
	if (l->zero > 0 && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ",zero=%d", l->zero);
	if ((unsigned)l->recompute < 3 && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, "%s", rc[l->recompute]);
	if (l->size[PL_CP] > 1 && l->cp_algo == PL_CP_ULYSSES && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ",ulysses");
}

/*
 * The fixed order that settles what the step time does not: no more CP,
 * sharding or recomputation than needed, then less memory, then the
 * smaller tp, pp, vpp, sp off, ring.
 */
static int
key_cmp(const long *ka, const long *kb, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ka[i] != kb[i])
			return ka[i] < kb[i] ? -1 : 1;
	return 0;
}

static bool
same_time(double a, double b)
{
	return fabs(a - b) <= TIE * fmax(fabs(a), fabs(b));
}

/* Negative when candidate a ranks before b. */
static int
rank_cmp(const struct pl_layout *la, const struct plan *pa, const struct pl_layout *lb,
	 const struct plan *pb)
{
	const long first_a[] = { la->size[PL_CP], la->zero, (long)la->recompute };
	const long first_b[] = { lb->size[PL_CP], lb->zero, (long)lb->recompute };
	const long last_a[] = { la->size[PL_TP], la->size[PL_PP], la->vpp, (long)la->sp,
				(long)la->cp_algo };
	const long last_b[] = { lb->size[PL_TP], lb->size[PL_PP], lb->vpp, (long)lb->sp,
				(long)lb->cp_algo };
	int c;

	if (!same_time(pa->step_seconds, pb->step_seconds))
		return pa->step_seconds < pb->step_seconds ? -1 : 1;
	c = key_cmp(first_a, first_b, 3);
	if (c)
		return c;
	if (!same_time(pa->total_gb_per_gpu, pb->total_gb_per_gpu))
		return pa->total_gb_per_gpu < pb->total_gb_per_gpu ? -1 : 1;
	return key_cmp(last_a, last_b, 5);
}

/*
 * Keep the candidate among the best PLAN_AUTO_TOP, in rank order, each a
 * different set of sizes (the best variant of each), so that the layouts
 * side by side differ in more than a ZeRO stage.
 */
static void
offer(struct search *s, const struct pl_layout *l)
{
	struct plan_auto_result *o = s->out;
	const struct plan *p = &s->scratch;
	size_t i, at = o->n;

	/* one entry per set of sizes: its best variant */
	for (i = 0; i < o->n; i++) {
		if (memcmp(o->top[i].layout.size, l->size, sizeof(l->size)) != 0)
			continue;
		if (rank_cmp(l, p, &o->top[i].layout, &o->top[i].plan) >= 0)
			return;
		for (; i + 1 < o->n; i++)
			o->top[i] = o->top[i + 1];
		o->n--;
		break;
	}
	for (i = 0; i < o->n; i++)
		if (rank_cmp(l, p, &o->top[i].layout, &o->top[i].plan) < 0) {
			at = i;
			break;
		}
	if (at >= PLAN_AUTO_TOP)
		return;
	if (o->n < PLAN_AUTO_TOP)
		o->n++;
	for (i = o->n - 1; i > at; i--)
		o->top[i] = o->top[i - 1];
	o->top[at].layout = *l;
	/* the warnings are filled for the winners only, at the end */
	memcpy(&o->top[at].plan, p, offsetof(struct plan, nwarnings));
	o->top[at].plan.nwarnings = 0;
}

/* Plan one fully chosen layout and keep it if it fits and ranks. */
static void
consider(struct search *s, const struct pl_layout *l)
{
	struct plan *p = &s->scratch;

	if (plan_estimate(l, &s->ctx, p, NULL) < 0 || !(p->step_seconds >= 0))
		return;
	s->out->considered++;
	if (!s->have_min || p->total_gb_per_gpu < s->min_gb) {
		s->min_gb = p->total_gb_per_gpu;
		s->min_layout = *l;
		s->have_min = true;
	}
	if (p->total_gb_per_gpu > s->usable_gb)
		return;
	s->out->fitting++;
	if (l->recompute != PL_RECOMPUTE_FULL || (s->req->given & PL_GIVEN_RECOMPUTE))
		s->fits_cheaply = true;
	offer(s, l);
}

/* The choices that change memory and time but not the sizes. */
static void
variants(struct search *s, struct pl_layout *l)
{
	const struct pl_layout *r = s->req;
	unsigned g = r->given;
	long v, vmax = 1, m;
	int z, rc, sp, algo;

	if (l->size[PL_PP] > 1)
		vmax = (l->model.layers + 2) / l->size[PL_PP];
	m = l->gbs / (l->mbs * l->size[PL_DP]);
	for (v = 1; v <= vmax; v++) {
		if ((g & PL_GIVEN_VPP) ? v != (r->vpp > 0 ? r->vpp : 1) :
		    (v > 1 && (!plan_vpp_fits(l->model.layers, l->size[PL_PP], v) ||
			       m % l->size[PL_PP] != 0)))
			continue;
		l->vpp = v;
		for (z = 0; z <= 3; z++) {
			if ((g & PL_GIVEN_ZERO) && z != r->zero)
				continue;
			l->zero = z;
			for (rc = 0; rc <= 2; rc++) {
				if ((g & PL_GIVEN_RECOMPUTE) && rc != (int)r->recompute)
					continue;
				l->recompute = (enum pl_recompute)rc;
				for (sp = 0; sp <= 1; sp++) {
					if ((g & PL_GIVEN_SP) ? sp != (int)r->sp :
					    (sp && l->size[PL_TP] == 1))
						continue;
					l->sp = sp != 0;
					for (algo = 0; algo <= 1; algo++) {
						if ((g & PL_GIVEN_CPALGO) ?
						    algo != (int)r->cp_algo :
						    (algo && (l->size[PL_CP] == 1 ||
							      l->model.heads %
							      (l->size[PL_TP] * l->size[PL_CP]))))
							continue;
						l->cp_algo = (enum pl_cp_algo)algo;
						consider(s, l);
					}
				}
			}
		}
	}
}

/* One (tp, cp, ep, pp): dp is what is left. */
static void
sizes(struct search *s, long tp, long cp, long ep, long pp)
{
	const struct pl_layout *r = s->req;
	struct pl_layout l = *r;
	long dp = s->ctx.world / (tp * cp * pp);

	if ((r->given & PL_GIVEN_AXIS(PL_DP)) && dp != r->size[PL_DP])
		return;
	if (l.gbs % (l.mbs * dp) != 0)
		return;
	/* Megatron-Core's expert rule: world % (tp*ep*pp) == 0 */
	if (ep > 1 && (cp * dp) % ep != 0)
		return;
	l.auto_layout = false;
	l.dp_auto = false;
	l.size[PL_TP] = tp;
	l.size[PL_CP] = cp;
	l.size[PL_EP] = ep;
	l.size[PL_PP] = pp;
	l.size[PL_DP] = dp;
	variants(s, &l);
}

/* The pinned size of axis a, or 0. */
static long
pinned(const struct pl_layout *r, enum pl_axis a)
{
	return (r->given & PL_GIVEN_AXIS(a)) && r->size[a] > 0 ? r->size[a] : 0;
}

static void
enumerate(struct search *s)
{
	const struct pl_layout *r = s->req;
	long world = s->ctx.world, ep = pinned(r, PL_EP) ? r->size[PL_EP] : 1;
	struct list tps, cps, pps;
	int i, j, k;

	tps.n = 0;
	if (pinned(r, PL_TP))
		push(&tps, r->size[PL_TP]);
	else
		divisors(&tps, world, s->ctx.domain_gpus, keep_tp, s);
	for (i = 0; i < tps.n; i++) {
		long tp = tps.v[i];

		cps.n = 0;
		if (pinned(r, PL_CP))
			push(&cps, world % (tp * r->size[PL_CP]) == 0 ? r->size[PL_CP] : 0);
		else
			divisors(&cps, world / tp, r->seq, keep_cp, s);
		for (j = 0; j < cps.n; j++) {
			long cp = cps.v[j];

			if (cp < 1)
				continue;
			pps.n = 0;
			if (pinned(r, PL_PP))
				push(&pps, world % (tp * cp * r->size[PL_PP]) == 0 ?
				     r->size[PL_PP] : 0);
			else
				divisors(&pps, world / (tp * cp), r->model.layers, NULL, s);
			for (k = 0; k < pps.n; k++)
				if (pps.v[k] >= 1)
					sizes(s, tp, cp, ep, pps.v[k]);
		}
	}
}

/* The odd part of the world times the smallest power of two giving at
 * least DEFAULT_STEP_TOKENS tokens: every dp made of the world's odd
 * factors and few enough twos divides it. */
static long
default_gbs(long world, long seq, long mbs)
{
	long odd = world, g;

	while (odd % 2 == 0)
		odd /= 2;
	g = odd * mbs;
	while ((double)g * (double)seq < DEFAULT_STEP_TOKENS && g < (1L << 30) / 2)
		g *= 2;
	return g;
}

/* The pins against the world size, before any search. */
static int
check_pins(const struct pl_layout *r, long world, pl_err_t *err)
{
	static const enum pl_axis axes[] = { PL_TP, PL_CP, PL_PP, PL_DP };
	char what[96] = "", list[96] = "";
	double prod = 1.0;
	size_t i, n = 0, w = 0;

	for (i = 0; i < sizeof(axes) / sizeof(axes[0]); i++) {
		long v = pinned(r, axes[i]);
		int c;

		if (!v)
			continue;
		prod *= (double)v;
		c = snprintf(what + n, sizeof(what) - n, "%s%s", n ? "*" : "",
			     pl_axis_name(axes[i]));
		if (c > 0 && (size_t)c < sizeof(what) - n)
			n += (size_t)c;
		c = snprintf(list + w, sizeof(list) - w, "%s%s%ld", w ? "," : "",
			     pl_axis_name(axes[i]), v);
		if (c > 0 && (size_t)c < sizeof(list) - w)
			w += (size_t)c;
	}
	if (n && fmod((double)world, prod) != 0)
		return pl_err_set(err, "auto,%s: the pinned %s = %.0f does not divide the "
				  "%ld GPUs of the job (accepted: pins whose product "
				  "divides %ld)", list, what, prod, world, world);
	if (pinned(r, PL_DP) && pinned(r, PL_TP) && pinned(r, PL_CP) && pinned(r, PL_PP) &&
	    prod != (double)world)
		return pl_err_set(err, "auto,%s: the pinned sizes use %.0f of the %ld GPUs "
				  "(accepted: leave one size out for the planner)", list,
				  prod, world);
	if (pinned(r, PL_EP) && world % r->size[PL_EP] != 0)
		return pl_err_set(err, "auto,ep%ld: ep does not divide the %ld GPUs of the "
				  "job", r->size[PL_EP], world);
	return 0;
}

static int
setup(struct search *s, const struct pl_layout *req, const struct plan_ctx *ctx,
      struct plan_auto_result *out, pl_err_t *err)
{
	struct plan_ctx nominal;
	double headroom;
	int k;

	if (!req || !out)
		return pl_err_set(err, "plan_auto: no layout or no result to fill");
	if (!ctx || ctx->world <= 0)
		return pl_err_set(err, "auto: the planner needs the job's world size (got %ld "
				  "GPUs; accepted: a positive count)", ctx ? ctx->world : 0L);
	headroom = ctx->mem_headroom > 0 ? ctx->mem_headroom : PLAN_DEFAULT_HEADROOM;
	if (!(headroom < 1.0))
		return pl_err_set(err, "auto: a memory headroom of %g leaves nothing "
				  "(accepted: a fraction below 1, e.g. 0.1)", ctx->mem_headroom);
	if (req->mbs < 1 || req->seq < 1 || req->model.layers < 1 || req->model.heads < 1)
		return pl_err_set(err, "auto: mbs, seq, layers and heads must be positive");
	memset(s, 0, sizeof(*s));
	s->orig = s->req = req;
	s->out = out;
	s->ctx = *ctx;
	s->ctx.previous = NULL;
	s->ctx.mem_headroom = headroom;
	if (s->ctx.domain_gpus <= 0)
		s->ctx.domain_gpus = NOMINAL_DOMAIN;
	if (!(s->ctx.gpu_memory_gb > 0))
		s->ctx.gpu_memory_gb = NOMINAL_GPU_GB;
	plan_ctx_default(&nominal, 1, 1);
	for (k = 0; k < TOPO_NLINKS; k++)
		if (!(s->ctx.link[k].gbps > 0) &&
		    !(k == TOPO_LINK_NVLINK && ctx->link[TOPO_LINK_PCIE].gbps > 0))
			s->ctx.link[k] = nominal.link[k];
	s->usable_gb = s->ctx.gpu_memory_gb * (1.0 - headroom);
	return 0;
}

/* Which part of the step separates the winner from the runner-up most. */
static void
explain(struct search *s)
{
	static const char *const parts[] = { "compute", "TP", "CP", "EP", "DP", "PP", "bubble" };
	struct plan_auto_result *o = s->out;
	const struct plan *a = &o->top[0].plan, *b;
	char wn[96], rn[96];
	double da[7], db[7], best = 0;
	int i, at = -1;

	name(&o->top[0].layout, wn, sizeof(wn));
	if (o->n < 2) {
		snprintf(o->why, sizeof(o->why), "%.64s is the only layout of the %ld considered "
			 "that fits %.1f GB (%.0f GB less %.0f %% headroom): %.1f GB, %.2f s a step",
			 wn, o->considered, s->usable_gb, s->ctx.gpu_memory_gb,
			 100.0 * s->ctx.mem_headroom, a->total_gb_per_gpu, a->step_seconds);
		return;
	}
	b = &o->top[1].plan;
	name(&o->top[1].layout, rn, sizeof(rn));
	if (same_time(a->step_seconds, b->step_seconds)) {
		const struct pl_layout *x = &o->top[0].layout, *y = &o->top[1].layout;

		if (x->size[PL_CP] != y->size[PL_CP] || x->zero != y->zero ||
		    x->recompute != y->recompute)
			snprintf(o->why, sizeof(o->why), "%.64s ties with %.64s at %.3f s a step "
				 "and uses no more CP, ZeRO sharding or recomputation than it "
				 "needs", wn, rn, a->step_seconds);
		else if (!same_time(a->total_gb_per_gpu, b->total_gb_per_gpu))
			snprintf(o->why, sizeof(o->why), "%.64s ties with %.64s at %.3f s a step and "
				 "needs less memory (%.1f GB against %.1f GB)", wn, rn,
				 a->step_seconds, a->total_gb_per_gpu, b->total_gb_per_gpu);
		else
			snprintf(o->why, sizeof(o->why), "%.64s ties with %.64s at %.3f s a step and "
				 "%.1f GB: the smaller tp, pp, vpp come first", wn, rn,
				 a->step_seconds, a->total_gb_per_gpu);
		return;
	}
	da[0] = a->compute_seconds;
	db[0] = b->compute_seconds;
	for (i = 0; i < PL_NAXES; i++) {
		da[1 + i] = a->exposed_seconds[i];
		db[1 + i] = b->exposed_seconds[i];
	}
	da[6] = a->bubble_seconds;
	db[6] = b->bubble_seconds;
	for (i = 0; i < 7; i++)
		if (db[i] - da[i] > best) {
			best = db[i] - da[i];
			at = i;
		}
	if (at < 0) {
		snprintf(o->why, sizeof(o->why), "%.64s: %.3f s a step against %.3f s for %.64s", wn,
			 a->step_seconds, b->step_seconds, rn);
		return;
	}
	snprintf(o->why, sizeof(o->why), "%.64s: %.3f s a step, %.1f %% faster than %.64s "
		 "(%.3f s); the largest difference is %s%s, %.3f s against %.3f s", wn,
		 a->step_seconds, 100.0 * (b->step_seconds - a->step_seconds) / b->step_seconds,
		 rn, b->step_seconds, parts[at], at >= 1 && at <= 5 ? " communication left exposed" :
		 "", da[at], db[at]);
}

static int
nothing_fits(struct search *s, pl_err_t *err)
{
	char mn[96], spec[256];

	layout_format(s->orig, spec, sizeof(spec));
	if (!s->have_min)
		return pl_err_set(err, "%s: no layout of %ld GPUs satisfies the pins (tp "
				  "dividing the %ld GPUs of an NVLink domain and the heads, "
				  "cp dividing seq, pp at most the layers, gbs divisible by "
				  "mbs*dp%s); pin fewer keys or change gbs", spec,
				  s->ctx.world, s->ctx.domain_gpus,
				  (s->req->given & PL_GIVEN_VPP) ? ", layers by pp*vpp" : "");
	name(&s->min_layout, mn, sizeof(mn));
	return pl_err_set(err, "%s: none of the %ld layouts of %ld GPUs fits %.1f GB (%.0f GB "
			  "less %.0f %% headroom); the smallest needs %.1f GB (%s): use more "
			  "GPUs or GPUs with more memory, a smaller seq or mbs, or pin fewer "
			  "keys", spec, s->out->considered, s->ctx.world, s->usable_gb,
			  s->ctx.gpu_memory_gb, 100.0 * s->ctx.mem_headroom, s->min_gb, mn);
}

int
plan_auto(const struct pl_layout *req, const struct plan_ctx *ctx,
	  struct plan_auto_result *out, pl_err_t *err)
{
	struct pl_layout r;
	struct search s;
	size_t i;

	if (out)
		memset(out, 0, sizeof(*out));
	if (setup(&s, req, ctx, out, err) < 0)
		return -1;
	r = *req;
	if (!r.auto_layout) {
		/* a concrete layout is its own only candidate */
		if (layout_resolve(&r, ctx->world, err) < 0)
			return -1;
		r.given = PL_GIVEN_AXIS(PL_TP) | PL_GIVEN_AXIS(PL_CP) | PL_GIVEN_AXIS(PL_EP) |
			  PL_GIVEN_AXIS(PL_PP) | PL_GIVEN_AXIS(PL_DP) | PL_GIVEN_ZERO |
			  PL_GIVEN_RECOMPUTE | PL_GIVEN_VPP | PL_GIVEN_SP | PL_GIVEN_CPALGO |
			  PL_GIVEN_GBS | PL_GIVEN_MBS;
	} else {
		if (check_pins(&r, ctx->world, err) < 0)
			return -1;
		if (!(r.given & PL_GIVEN_GBS) || r.gbs <= 0)
			r.gbs = default_gbs(ctx->world, r.seq, r.mbs);
	}
	s.req = &r;
	enumerate(&s);
	if (!s.fits_cheaply && !pinned(&r, PL_CP)) {
		/* The activations do not fit without CP (or only by
		 * recomputing every layer): CP joins the search. */
		s.cp_needed = true;
		enumerate(&s);
	}
	if (out->n == 0)
		return nothing_fits(&s, err);
	for (i = 0; i < out->n; i++) {
		struct plan_candidate *c = &out->top[i];

		c->layout.given = r.given;
		if (plan_compute(&c->layout, &s.ctx, &c->plan, err) < 0)
			return -1;
	}
	explain(&s);
	return 0;
}
