/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cost and memory planner.  Every figure is a closed formula of the
 * layout so that a user can check it by hand; docs/ARCHITECTURE.md states
 * each one.  All products are taken in double: a size typed by a user may
 * be huge and a long product could overflow.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"

/*
 * Nominal bus bandwidths (GB/s) for plan_ctx_default, used until nccl-tests
 * figures are imported.  NVLink: an H100 SXM has 900 GB/s of NVLink4 in
 * both directions together, 450 GB/s each way, about what all_reduce_perf
 * reports as busbw inside an 8-GPU HGX node.  PCIe: Gen4 x16 is 32 GB/s raw
 * each way, about 25 after protocol overhead.  Leaf: one 400 Gb/s NIC per
 * GPU.  Spine: the leaf figure halved for a 2:1 oversubscribed tree.
 */
#define NOMINAL_NVLINK_GBPS 450.0
#define NOMINAL_PCIE_GBPS 25.0
#define NOMINAL_LEAF_GBPS 50.0
#define NOMINAL_SPINE_GBPS 25.0

/* Nominal latency of one step of a collective, microseconds. */
static const double nominal_latency_us[TOPO_NLINKS] = {
	[TOPO_LINK_NVLINK] = 2.0,
	[TOPO_LINK_PCIE] = 3.0,
	[TOPO_LINK_LEAF] = 8.0,
	[TOPO_LINK_SPINE] = 12.0,
};
/* Megatron-LM's gradient bucket: 40M parameters. */
#define DP_BUCKET_PARAMS 4e7

/* Larger than this and a divisor list would take too long to build. */
#define DIVISOR_LIST_MAX 1000000L

/* Virtual stages per pipeline rank: a layout built by hand with 0 is 1. */
static long
vpp_of(const struct pl_layout *l)
{
	return l->vpp > 1 ? l->vpp : 1;
}

/* Own copy so that the planner links without layout.c. */
static const char *const axis_names[PL_NAXES] = { "tp", "cp", "ep", "dp", "pp" };

static void warn(struct plan *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
warn(struct plan *out, const char *fmt, ...)
{
	va_list ap;

	if (out->nwarnings >= PLAN_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(out->warnings[out->nwarnings], PLAN_WARNING_LEN, fmt, ap);
	va_end(ap);
	out->nwarnings++;
}

/* plan_state_bytes over a replica count that may exceed a long. */
static double
state_bytes(double params, enum pl_optimizer opt, int zero, double r)
{
	double p = 2.0, g = 2.0, o;

	if (!isfinite(params) || params < 0 || !(r >= 1))
		return -1.0;
	switch (opt) {
	case PL_OPT_ADAM:
		o = 12.0;	/* fp32 master copy, momentum, variance */
		break;
	case PL_OPT_SGD:
		o = 8.0;	/* fp32 master copy, momentum */
		break;
	default:
		return -1.0;
	}
	switch (zero) {
	case 0:
		return params * (p + g + o);
	case 1:
		return params * (p + g + o / r);
	case 2:
		return params * (p + (g + o) / r);
	case 3:
		return params * (p + g + o) / r;
	default:
		return -1.0;
	}
}

double
plan_state_bytes(double params, enum pl_optimizer opt, int zero, long dp)
{
	return state_bytes(params, opt, zero, (double)dp);
}

double
plan_layer_activation_bytes(long s, long b, long h, long a, enum pl_recompute r)
{
	double sbh;

	if (s < 0 || b < 0 || h < 0 || a < 0)
		return -1.0;
	sbh = (double)s * (double)b * (double)h;
	switch (r) {
	case PL_RECOMPUTE_NONE:
		/*
		 * 34sbh + 5as^2b: written without the division by h of the
		 * usual s*b*h*(34 + 5as/h) so that it stays exact.
		 */
		return 34.0 * sbh + 5.0 * (double)a * (double)s * (double)s * (double)b;
	case PL_RECOMPUTE_SELECTIVE:
		return 34.0 * sbh;
	case PL_RECOMPUTE_FULL:
		return 2.0 * sbh;	/* only the layer input, bf16 */
	default:
		return -1.0;
	}
}

static void
set_link(struct topo_linkclass *c, double gbps, const char *what)
{
	c->gbps = gbps;
	c->measured = false;
	snprintf(c->source, sizeof(c->source), "nominal: %s", what);
}

void
plan_ctx_default(struct plan_ctx *ctx, long nodes, long gpus_per_node)
{
	if (!ctx)
		return;
	memset(ctx, 0, sizeof(*ctx));
	if (nodes > 0 && gpus_per_node > 0 && nodes <= LONG_MAX / gpus_per_node)
		ctx->world = nodes * gpus_per_node;
	ctx->domain_gpus = gpus_per_node > 0 ? gpus_per_node : 0;
	set_link(&ctx->link[TOPO_LINK_NVLINK], NOMINAL_NVLINK_GBPS,
		 "H100 NVLink4, 450 GB/s each way");
	set_link(&ctx->link[TOPO_LINK_PCIE], NOMINAL_PCIE_GBPS,
		 "PCIe Gen4 x16, about 25 GB/s each way");
	set_link(&ctx->link[TOPO_LINK_LEAF], NOMINAL_LEAF_GBPS,
		 "one 400 Gb/s NIC per GPU");
	set_link(&ctx->link[TOPO_LINK_SPINE], NOMINAL_SPINE_GBPS,
		 "400 Gb/s per GPU with 2:1 oversubscription");
}

double
plan_axis_bytes(const struct plan *p, enum pl_axis a)
{
	if (!p)
		return 0.0;
	switch (a) {
	case PL_TP:
		return p->tp_bytes_per_step;
	case PL_CP:
		return p->cp_bytes_per_step;
	case PL_EP:
		return p->ep_bytes_per_step;
	case PL_DP:
		return p->dp_bytes_per_step;
	case PL_PP:
		return p->pp_bytes_per_step;
	default:
		return 0.0;
	}
}

/* "e.g. 1, 2, 4, 8" for n's divisors, or "" when n is too large to list. */
static void
divisors_text(long n, char *buf, size_t size)
{
	size_t len = 0;
	int count = 0;
	long d;

	buf[0] = '\0';
	if (n < 1 || n > DIVISOR_LIST_MAX)
		return;
	for (d = 1; d <= n && count < 12; d++) {
		int w;

		if (n % d != 0)
			continue;
		w = snprintf(buf + len, size - len, "%s%ld", count ? ", " : ": ", d);
		if (w < 0 || (size_t)w >= size - len)
			break;
		len += (size_t)w;
		count++;
	}
	if (d <= n && len + 5 < size)
		snprintf(buf + len, size - len, ", ...");
}

static int
check_divides(long n, const char *nname, long d, const char *dname,
	      const char *why, pl_err_t *err)
{
	char list[160];

	if (n % d == 0)
		return 0;
	divisors_text(n, list, sizeof(list));
	return pl_err_set(err, "%s=%ld is not divisible by %s=%ld (%s; accepted %s: "
			  "a divisor of %ld%s)", nname, n, dname, d, why, dname, n, list);
}

static int
check_positive(const struct pl_layout *l, pl_err_t *err)
{
	const struct {
		const char *name;
		long v;
	} f[] = {
		{ "seq", l->seq }, { "mbs", l->mbs }, { "hidden", l->model.hidden },
		{ "layers", l->model.layers }, { "heads", l->model.heads },
		{ "vocab", l->model.vocab },
	};
	size_t i;

	for (i = 0; i < PL_NAXES; i++) {
		if (i == PL_DP && l->size[i] == 0)
			return pl_err_set(err, "dp is unresolved (dp=auto): resolve the "
					  "layout to the job's world size first");
		if (l->size[i] < 1)
			return pl_err_set(err, "%s=%ld: a parallel size must be a "
					  "positive integer", axis_names[i], l->size[i]);
	}
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (f[i].v < 1)
			return pl_err_set(err, "%s=%ld: must be a positive integer",
					  f[i].name, f[i].v);
	if (!isfinite(l->model.params) || l->model.params <= 0)
		return pl_err_set(err, "params=%g: must be a positive number of "
				  "parameters", l->model.params);
	if (l->gbs < 0)
		return pl_err_set(err, "gbs=%ld: must be positive, or 0 for not pinned",
				  l->gbs);
	if (l->zero < 0 || l->zero > 3)
		return pl_err_set(err, "zero=%d is not a ZeRO stage (accepted: 0, 1, 2, 3)",
				  l->zero);
	if (l->recompute != PL_RECOMPUTE_NONE && l->recompute != PL_RECOMPUTE_SELECTIVE &&
	    l->recompute != PL_RECOMPUTE_FULL)
		return pl_err_set(err, "recompute=%d is unknown (accepted: none, "
				  "selective, full)", (int)l->recompute);
	if (l->optimizer != PL_OPT_ADAM && l->optimizer != PL_OPT_SGD)
		return pl_err_set(err, "optimizer=%d is unknown (accepted: adam, sgd)",
				  (int)l->optimizer);
	if (l->vpp < 0)
		return pl_err_set(err, "vpp=%ld: must be a positive integer", l->vpp);
	if (l->cp_algo != PL_CP_RING && l->cp_algo != PL_CP_ULYSSES)
		return pl_err_set(err, "cp_algo=%d is unknown (accepted: ring, ulysses)",
				  (int)l->cp_algo);
	return 0;
}

bool
plan_vpp_fits(long layers, long pp, long vpp)
{
	if (layers < 1 || pp < 1 || vpp < 1)
		return false;
	if (vpp == 1)
		return true;
	if (pp < 2 || layers < pp * vpp - 2)
		return false;
	return layers % (pp * vpp) == 0 || (pp > 2 && (layers + 2) % (pp * vpp) == 0);
}

/* The interleaved schedule's and Ulysses' own rules. */
static int
check_variants(const struct pl_layout *l, pl_err_t *err)
{
	long pp = l->size[PL_PP], v = vpp_of(l), tp = l->size[PL_TP], cp = l->size[PL_CP];

	if (v > 1 && pp == 1)
		return pl_err_set(err, "vpp=%ld needs pp > 1 (the interleaved schedule "
				  "splits each pipeline rank's layers into vpp chunks; "
				  "accepted: vpp=1, or pp of 2 or more)", v);
	if (v > 1 && l->have_model && (double)pp * (double)v > (double)l->model.layers)
		return pl_err_set(err, "vpp=%ld with pp=%ld needs %.0f model chunks but "
				  "there are %ld layers (accepted: pp*vpp at most the "
				  "layers)", v, pp, (double)pp * (double)v, l->model.layers);
	if (v > 1 && l->have_model && !plan_vpp_fits(l->model.layers, pp, v))
		return pl_err_set(err, "vpp=%ld: neither layers=%ld nor layers+2 (the "
				  "embedding and the loss counted as a layer each) divide "
				  "by pp*vpp = %ld*%ld (accepted: a vpp dividing layers/pp "
				  "or, for pp > 2, (layers+2)/pp)", v, l->model.layers, pp, v);
	if (cp > 1 && l->cp_algo == PL_CP_ULYSSES && l->have_model &&
	    l->model.heads % (tp * cp) != 0)
		return pl_err_set(err, "cp_algo=ulysses: heads=%ld do not divide by tp*cp "
				  "= %ld*%ld (Ulysses gives each of the tp*cp ranks "
				  "whole heads; accepted: cp_algo=ring, or tp*cp "
				  "dividing %ld)", l->model.heads, tp, cp, l->model.heads);
	return 0;
}

static int
check_layout(const struct pl_layout *l, const struct plan_ctx *ctx, pl_err_t *err)
{
	double need;

	if (check_positive(l, err) < 0 || check_variants(l, err) < 0)
		return -1;
	/*
	 * Only what the user typed is held to the framework's rules: an
	 * assumed model or the default seq must never refuse a layout (srun
	 * accepts it).  Layers need not divide by pp at all (uneven stages).
	 */
	if (l->have_model && l->model.layers < l->size[PL_PP])
		return pl_err_set(err, "layers=%ld is fewer than pp=%ld (each pipeline stage "
				  "needs at least one layer; accepted: pp of at most %ld)",
				  l->model.layers, l->size[PL_PP], l->model.layers);
	if ((l->have_model &&
	     check_divides(l->model.heads, "heads", l->size[PL_TP], "tp",
			   "each TP rank takes whole attention heads", err) < 0) ||
	    (l->have_seq &&
	     check_divides(l->seq, "seq", l->size[PL_CP], "cp",
			   "each CP rank takes seq/cp tokens", err) < 0))
		return -1;
	need = (double)l->size[PL_TP] * (double)l->size[PL_CP] *
	       (double)l->size[PL_PP] * (double)l->size[PL_DP];
	if (ctx->world > 0 && need != (double)ctx->world)
		return pl_err_set(err, "the layout needs tp*cp*pp*dp = %.0f GPUs but the "
				  "job has %ld (accepted: sizes whose product is %ld)",
				  need, ctx->world, ctx->world);
	return 0;
}

/*
 * How the layers split over pp stages.  Even when pp divides them.
 * Otherwise as Megatron-Core's uneven pipeline allows it (the first and
 * the last stage take their own counts, every middle stage the same): the
 * middle stages take ceil(layers/pp) when that leaves the first and last
 * stage a layer each, else floor(layers/pp), and the first and last stage
 * split the rest, the first taking the odd one.  Fewer layers than stages
 * (only an assumed model gets here) plan as one layer a stage.
 */
static void
plan_stages(const struct pl_layout *l, struct plan *out)
{
	long L = l->model.layers, pp = l->size[PL_PP], k, rest;

	if (L % pp == 0 || L < pp) {
		k = L < pp ? 1 : L / pp;
		out->layers_per_stage = out->layers_first_stage = out->layers_last_stage = k;
		return;
	}
	if (pp == 2) {
		out->layers_first_stage = L - L / 2;
		out->layers_last_stage = L / 2;
		out->layers_per_stage = out->layers_first_stage;
		return;
	}
	k = L / pp + 1;
	rest = L - (pp - 2) * k;
	if (rest < 2) {
		k = L / pp;
		rest = L - (pp - 2) * k;
	}
	out->layers_first_stage = rest - rest / 2;
	out->layers_last_stage = rest / 2;
	out->layers_per_stage = k > out->layers_first_stage ? k : out->layers_first_stage;
}

/*
 * Micro-batches per step.  A pinned gbs fixes them; otherwise 4*pp keeps
 * the 1F1B bubble (pp-1)/(4pp) under 25 %, and pp=1 needs no accumulation.
 * Returns -1 (err set) when gbs does not split or a figure overflows.
 */
static long
schedule_m(const struct pl_layout *l, pl_err_t *err)
{
	long mbs = l->mbs, dp = l->size[PL_DP], pp = l->size[PL_PP], m;

	if (l->gbs > 0) {
		/* mbs > gbs/dp first, so that mbs*dp cannot overflow */
		if (mbs > l->gbs / dp || l->gbs % (mbs * dp) != 0)
			return pl_err_set(err, "gbs=%ld is not divisible by mbs*dp = "
					  "%ld*%ld (accepted: a multiple of %.0f)",
					  l->gbs, mbs, dp, (double)mbs * (double)dp);
		m = l->gbs / (mbs * dp);
		/* Megatron-LM's rule for the interleaved schedule */
		if (vpp_of(l) > 1 && m % pp != 0)
			return pl_err_set(err, "vpp=%ld: the interleaved schedule needs "
					  "the micro-batches gbs/(mbs*dp) = %ld to be a "
					  "multiple of pp=%ld (accepted: vpp=1, or a gbs "
					  "that is a multiple of %.0f)", vpp_of(l), m, pp,
					  (double)mbs * (double)dp * (double)pp);
		return m;
	}
	if (pp == 1)
		return 1;
	if (pp > LONG_MAX / 4)
		return pl_err_set(err, "pp=%ld is too large for the default of 4*pp "
				  "micro-batches (accepted: pin gbs=)", pp);
	return 4 * pp;
}

static int
plan_schedule(const struct pl_layout *l, struct plan *out, pl_err_t *err)
{
	long m = schedule_m(l, err);
	double gb;

	if (m < 0)
		return -1;
	gb = (double)l->mbs * (double)m * (double)l->size[PL_DP];
	if (gb > (double)LONG_MAX / 2)
		return pl_err_set(err, "the global batch mbs*m*dp = %ld*%ld*%ld overflows "
				  "(accepted: smaller mbs, dp or gbs)", l->mbs, m,
				  l->size[PL_DP]);
	out->micro_batches = m;
	out->grad_accum_steps = m;
	out->global_batch = l->gbs > 0 ? l->gbs : l->mbs * m * l->size[PL_DP];
	out->inflight_micro_batches = l->size[PL_PP] < m ? l->size[PL_PP] : m;
	plan_stages(l, out);
	if (l->model.layers % l->size[PL_PP] == 0) {
		/* interleaved 1F1B: (pp-1)/(vpp*m) */
		out->bubble_fraction = (double)(l->size[PL_PP] - 1) /
				       ((double)vpp_of(l) * (double)m);
	} else {
		/*
		 * The largest stage sets the pace: v*m + pp - 1 slots of its
		 * chunks (big/v layers), against v*m slots of layers/(pp*v)
		 * for a perfect split.  Even stages give (pp-1)/(v*m).
		 */
		double pp = (double)l->size[PL_PP], big = (double)out->layers_per_stage;
		double even = (double)l->model.layers / pp, vm = (double)vpp_of(l) * (double)m;

		out->bubble_fraction = (vm + pp - 1.0) * big / (vm * even) - 1.0;
	}
	return 0;
}

/*
 * Parameters one GPU of the largest stage holds: params/(tp*pp) for even
 * stages, the largest stage's share of the layers over tp otherwise.
 */
static double
held_params(const struct pl_layout *l, const struct plan *out)
{
	double tp = (double)l->size[PL_TP], pp = (double)l->size[PL_PP];

	if (l->model.layers % l->size[PL_PP] == 0)
		return l->model.params / (tp * pp);
	return l->model.params * (double)out->layers_per_stage / (double)l->model.layers / tp;
}

/*
 * One layer's activation bytes on one TP rank (before CP).  With sequence
 * parallelism TP divides the whole figure; without it the 10sbh of the
 * LayerNorm inputs and dropout masks stay whole on every rank (and the
 * full-recompute checkpoint, the layer input, too), the 24sbh and the
 * 5as^2b of the attention divide by tp.
 */
static double
layer_bytes_tp(const struct pl_layout *l, double tp)
{
	long s = l->seq, b = l->mbs, h = l->model.hidden, a = l->model.heads;
	double whole = plan_layer_activation_bytes(s, b, h, a, l->recompute);
	double sbh = (double)s * (double)b * (double)h;

	if (l->sp || tp <= 1)
		return whole / tp;
	switch (l->recompute) {
	case PL_RECOMPUTE_NONE:
		return 10.0 * sbh + (whole - 10.0 * sbh) / tp;
	case PL_RECOMPUTE_SELECTIVE:
		return 10.0 * sbh + 24.0 * sbh / tp;
	default:
		return whole;
	}
}

/*
 * Memory of the busiest GPU.  Activations: the first 1F1B stage holds
 * min(pp, m) micro-batches of layers/pp layers, and the interleaved
 * schedule (1 + (pp-1)/(pp*vpp)) times that; TP (see layer_bytes_tp) and
 * CP each divide a layer's figure.  The fp32 logits
 * live on the last stage for one micro-batch at a time; adding them to the
 * first stage's figure overstates pp > 1 a little, on the safe side.
 */
static void
plan_memory(const struct pl_layout *l, struct plan *out)
{
	double tp = (double)l->size[PL_TP], cp = (double)l->size[PL_CP];
	double replicas = (double)l->size[PL_DP] * cp;
	double tokens = (double)l->seq / cp * (double)l->mbs;	/* per CP rank */
	double layer, held = (double)out->inflight_micro_batches;
	out->state_gb_per_gpu = state_bytes(held_params(l, out), l->optimizer,
					    l->zero, replicas) / 1e9;
	double v = (double)vpp_of(l), pp = (double)l->size[PL_PP];

	layer = layer_bytes_tp(l, tp);
	if (v > 1)
		held *= 1.0 + (pp - 1.0) / (pp * v);
	out->activation_gb_per_gpu = layer / cp * (double)out->layers_per_stage * held / 1e9;
	out->logits_gb_per_gpu = tokens * (double)l->model.vocab * 4.0 / tp / 1e9;
	out->embedding_gb_per_gpu = tokens * (double)l->model.hidden * 2.0 / tp * held / 1e9;
	out->total_gb_per_gpu = out->state_gb_per_gpu + out->activation_gb_per_gpu +
				out->logits_gb_per_gpu + out->embedding_gb_per_gpu;
}

/* Bytes each member sends in a ring all-reduce of one byte over n ranks. */
static double
ring(double n)
{
	return n > 1 ? 2.0 * (n - 1.0) / n : 0.0;
}

/* The latency-bound steps of each axis per training step (plan.h). */
static void
plan_steps(const struct pl_layout *l, struct plan *out, double fwd, double held)
{
	double tp = (double)l->size[PL_TP], cp = (double)l->size[PL_CP];
	double ep = (double)l->size[PL_EP], pp = (double)l->size[PL_PP];
	double r = (double)l->size[PL_DP] * cp, m = (double)out->micro_batches;
	double per = (double)out->layers_per_stage * m;	/* layer passes of a step */
	double buckets = ceil(held / DP_BUCKET_PARAMS);

	out->comm_steps[PL_TP] = tp > 1 ? (2.0 * fwd + 2.0) * 2.0 * (tp - 1.0) * per : 0.0;
	if (cp <= 1)
		out->comm_steps[PL_CP] = 0.0;
	else if (l->cp_algo == PL_CP_ULYSSES)
		out->comm_steps[PL_CP] = (4.0 * fwd + 4.0) * (cp - 1.0) * per;
	else
		out->comm_steps[PL_CP] = (fwd + 1.0) * (cp - 1.0) * per;
	out->comm_steps[PL_PP] = pp > 1 ? (pp > 2 ? 2.0 : 1.0) * m * (double)vpp_of(l) : 0.0;
	out->comm_steps[PL_DP] = r > 1 ? buckets * (l->zero == 3 ? 2.0 * m + 1.0 : 2.0) *
					 (r - 1.0) : 0.0;
	out->comm_steps[PL_EP] = ep > 1 ? (2.0 * fwd + 2.0) * (ep - 1.0) * per : 0.0;
}

static void
plan_traffic(const struct pl_layout *l, struct plan *out)
{
	double tp = (double)l->size[PL_TP], cp = (double)l->size[PL_CP];
	double ep = (double)l->size[PL_EP], pp = (double)l->size[PL_PP];
	double replicas = (double)l->size[PL_DP] * cp;
	double m = (double)out->micro_batches, lps = (double)out->layers_per_stage;
	double h = (double)l->model.hidden;
	/* one micro-batch's bf16 hidden states on one CP rank, s/cp*b*h*2 */
	double act = (double)l->seq / cp * (double)l->mbs * h * 2.0;
	/* full recomputation replays each forward pass once in backward */
	double fwd = l->recompute == PL_RECOMPUTE_FULL ? 2.0 : 1.0;
	double held = held_params(l, out);

	out->tp_bytes_per_step = (2.0 * fwd + 2.0) * act * ring(tp) * lps * m;
	if (cp <= 1)
		out->cp_bytes_per_step = 0.0;
	else if (l->cp_algo == PL_CP_ULYSSES)
		/*
		 * Ulysses: forward all-to-alls Q, K, V (sequence to heads) and
		 * the output back, each rank keeping 1/cp of what it holds;
		 * backward the same four for the gradients.
		 */
		out->cp_bytes_per_step = (4.0 * fwd + 4.0) * act / tp * (cp - 1.0) / cp *
					 lps * m;
	else
		/*
		 * Ring attention: cp-1 steps each pass this rank's K and V,
		 * split over TP by heads; backward passes K, V and their
		 * gradients.
		 */
		out->cp_bytes_per_step = (fwd + 2.0) * (cp - 1.0) * 2.0 * act / tp * lps * m;
	/*
	 * An interior stage sends activations on and gradients back; with
	 * vpp model chunks a micro-batch crosses every rank vpp times.
	 */
	out->pp_bytes_per_step = pp > 1 ? (pp > 2 ? 2.0 : 1.0) * act / tp * m *
					  (double)vpp_of(l) : 0.0;
	/*
	 * ZeRO 0-2: one all-reduce (or reduce-scatter and all-gather) of the
	 * gradients per step.  ZeRO-3 gathers the parameters again for every
	 * micro-batch's forward and backward and reduce-scatters the
	 * gradients once: 2m + 1 one-way volumes (3 for m = 1).
	 */
	out->dp_bytes_per_step = replicas > 1 ? 2.0 * held * (l->zero == 3 ? 2.0 * m + 1.0 : 2.0) *
					       (replicas - 1.0) / replicas : 0.0;
	/* dispatch and combine, forward and backward, every layer, top-1 */
	out->ep_bytes_per_step = ep > 1 ? (2.0 * fwd + 2.0) * act / tp * (ep - 1.0) / ep *
					  lps * m : 0.0;
	plan_steps(l, out, fwd, held);
}

/*
 * How many consecutive ranks one group of axis a spans: the product of its
 * size and the sizes of the axes inside it in the rank order.  EP carves
 * up the data-parallel ranks, so it adds nothing to the other axes' spans.
 */
static double
axis_span(const struct pl_layout *l, enum pl_axis a)
{
	static const enum pl_axis def[PL_NAXES] = { PL_TP, PL_CP, PL_EP, PL_DP, PL_PP };
	const enum pl_axis *order = l->order;
	unsigned seen = 0;
	double span = 1.0;
	int i;

	for (i = 0; i < PL_NAXES; i++) {
		if ((unsigned)order[i] >= PL_NAXES || (seen & (1u << order[i])))
			break;
		seen |= 1u << order[i];
	}
	if (seen != (1u << PL_NAXES) - 1)
		order = def;
	for (i = 0; i < PL_NAXES; i++) {
		if (order[i] == PL_EP && a != PL_EP)
			continue;
		span *= (double)l->size[order[i]];
		if (order[i] == a)
			break;
	}
	return span;
}

static void
plan_links(const struct pl_layout *l, const struct plan_ctx *ctx, struct plan *out)
{
	enum topo_link inside = TOPO_LINK_NVLINK;
	double dom = (double)ctx->domain_gpus;
	int a;

	if (ctx->link[TOPO_LINK_NVLINK].gbps <= 0 && ctx->link[TOPO_LINK_PCIE].gbps > 0)
		inside = TOPO_LINK_PCIE;
	for (a = 0; a < PL_NAXES; a++) {
		double bytes = plan_axis_bytes(out, (enum pl_axis)a);
		double span = axis_span(l, (enum pl_axis)a), gbps;
		enum topo_link k;

		if (l->size[a] <= 1)
			k = inside;
		else if (dom > 0)
			k = span <= dom && fmod(dom, span) == 0 ? inside : TOPO_LINK_LEAF;
		else
			k = a == PL_TP ? inside : TOPO_LINK_LEAF;
		out->comm_link[a] = k;
		out->latency_seconds[a] = out->comm_steps[a] * 1e-6 *
					  (ctx->latency_us[k] > 0 ? ctx->latency_us[k] :
					   nominal_latency_us[k]);
		gbps = ctx->link[k].gbps;
		if (bytes <= 0)
			out->comm_seconds[a] = 0.0;
		else
			out->comm_seconds[a] = gbps > 0 ? bytes / (gbps * 1e9) : -1.0;
	}
}

/*
 * The step time (plan.h states the model).  DP's window: gradients of a
 * bucket are reduced while the last micro-batch's backward (2/3 of its
 * compute) goes on; ZeRO-3 also prefetches parameters through every
 * micro-batch.
 */
static void
plan_times(const struct pl_layout *l, const struct plan_ctx *ctx, struct plan *out)
{
	double P = l->model.params, L = (double)l->model.layers;
	double h = (double)l->model.hidden, s = (double)l->seq;
	double world = 1.0, weights = 6.0, attn = 6.0, rate, tokens, window, path;
	bool unknown = false;
	int a;

	for (a = 0; a < PL_NAXES; a++)
		if (a != PL_EP)
			world *= (double)l->size[a];
	out->peak_nominal = !(ctx->gpu_peak_tflops > 0);
	out->peak_tflops = out->peak_nominal ? PLAN_NOMINAL_PEAK_TFLOPS : ctx->gpu_peak_tflops;
	out->efficiency = ctx->efficiency > 0 && ctx->efficiency <= 1 ? ctx->efficiency :
			  PLAN_DEFAULT_EFFICIENCY;
	if (l->recompute == PL_RECOMPUTE_FULL)
		weights = attn = 8.0;
	else if (l->recompute == PL_RECOMPUTE_SELECTIVE)
		attn = 8.0;
	rate = world * out->peak_tflops * 1e12 * out->efficiency;
	tokens = (double)out->global_batch * s;
	out->attention_seconds = attn * L * h * s * tokens / rate;
	out->compute_seconds = weights * P * tokens / rate + out->attention_seconds;
	for (a = 0; a < PL_NAXES; a++) {
		double c = out->comm_seconds[a];

		if (c < 0) {
			unknown = true;
			continue;
		}
		c += out->latency_seconds[a];
		if (a == PL_CP && l->cp_algo == PL_CP_RING)
			c = fmax(0.0, c - out->attention_seconds);
		if (a == PL_DP) {
			window = l->zero == 3 ? out->compute_seconds :
				 2.0 / 3.0 * out->compute_seconds / (double)out->micro_batches;
			c = fmax(0.0, c - window);
		}
		out->exposed_seconds[a] = c;
	}
	if (unknown) {
		out->exposed_comm_seconds = out->bubble_seconds = out->step_seconds = -1.0;
		return;
	}
	path = out->compute_seconds + out->exposed_seconds[PL_TP] + out->exposed_seconds[PL_CP] +
	       out->exposed_seconds[PL_PP] + out->exposed_seconds[PL_EP];
	out->exposed_comm_seconds = 0.0;
	for (a = 0; a < PL_NAXES; a++)
		out->exposed_comm_seconds += out->exposed_seconds[a];
	out->bubble_seconds = out->bubble_fraction * path;
	out->step_seconds = out->compute_seconds + out->exposed_comm_seconds +
			    out->bubble_seconds;
}

/* "tp8,pp4": the model-parallel sizes above 1 (dp is named separately). */
static void
short_spec(const struct pl_layout *l, char *buf, size_t size)
{
	static const enum pl_axis show[] = { PL_TP, PL_CP, PL_EP, PL_PP };
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(show) / sizeof(show[0]); i++) {
		int w;

		if (l->size[show[i]] <= 1)
			continue;
		w = snprintf(buf + len, size - len, "%s%s%ld", len ? "," : "",
			     axis_names[show[i]], l->size[show[i]]);
		if (w < 0 || (size_t)w >= size - len)
			return;
		len += (size_t)w;
	}
	if (len == 0)
		snprintf(buf, size, "dp only");
}

static void
warn_previous(const struct pl_layout *l, const struct plan_ctx *ctx, struct plan *out)
{
	const struct pl_layout *prev = ctx->previous;
	long pm, dp = l->size[PL_DP];
	double pgb;
	char spec[96];

	if (!prev || prev->size[PL_DP] < 1 || prev->mbs < 1 || prev->gbs < 0 ||
	    prev->size[PL_PP] < 1)
		return;
	pm = schedule_m(prev, NULL);
	if (pm < 0)
		return;
	pgb = (double)prev->mbs * (double)pm * (double)prev->size[PL_DP];
	short_spec(prev, spec, sizeof(spec));
	if (l->gbs > 0) {
		if (prev->size[PL_DP] != dp)
			warn(out, "note: dp changes from %ld to %ld (previous layout %s): "
			     "gbs=%ld is pinned, so gradient accumulation changes from "
			     "%ld to %ld micro-batches per step", prev->size[PL_DP], dp,
			     spec, l->gbs, pm, out->micro_batches);
		return;
	}
	if (pgb == (double)out->global_batch)
		return;
	if (prev->size[PL_DP] != dp)
		warn(out, "dp changes from %ld to %ld (previous layout %s): the global "
		     "batch changes from %.0f to %ld unless gbs= is pinned",
		     prev->size[PL_DP], dp, spec, pgb, out->global_batch);
	else
		warn(out, "the global batch changes from %.0f to %ld (previous layout %s "
		     "ran %ld micro-batches, pp=%ld runs %ld) unless gbs= is pinned",
		     pgb, out->global_batch, spec, pm, l->size[PL_PP], out->micro_batches);
}

static void
warn_memory(const struct pl_layout *l, const struct plan_ctx *ctx, struct plan *out)
{
	char tips[160];

	if (ctx->gpu_memory_gb <= 0 || out->total_gb_per_gpu <= ctx->gpu_memory_gb)
		return;
	snprintf(tips, sizeof(tips), "%s%s%s%s", l->zero < 3 ? "a higher zero= stage, " : "",
		 l->recompute == PL_RECOMPUTE_NONE ? "recompute=selective, " : "",
		 l->recompute == PL_RECOMPUTE_SELECTIVE ? "recompute=full, " : "",
		 "or a larger tp or pp");
	warn(out, "estimated %.1f GB per GPU exceeds the %g GB of each GPU: try %s "
	     "(state %.1f, activations %.1f, logits %.1f GB)", out->total_gb_per_gpu,
	     ctx->gpu_memory_gb, tips, out->state_gb_per_gpu, out->activation_gb_per_gpu,
	     out->logits_gb_per_gpu);
}

/* What an assumed figure or an uneven split means for the plan. */
static void
warn_shape(const struct pl_layout *l, struct plan *out)
{
	long L = l->model.layers, pp = l->size[PL_PP];
	const char *who = l->have_model ? "" : "the assumed model's ";

	if (L < pp)
		warn(out, "the assumed model's %ld layers are fewer than pp=%ld stages: planned "
		     "as one layer a stage (give model= or layers= for yours)", L, pp);
	else if (L % pp != 0 && pp == 2)
		warn(out, "%slayers=%ld do not divide by pp=2: planned as uneven stages of %ld "
		     "and %ld layers (Megatron-Core: --decoder-first-pipeline-num-layers %ld); "
		     "the larger stage sets memory and the bubble", who, L,
		     out->layers_first_stage, out->layers_last_stage, out->layers_first_stage);
	else if (L % pp != 0)
		warn(out, "%slayers=%ld do not divide by pp=%ld: planned as uneven stages, first "
		     "%ld, %ld middle of %ld, last %ld layers (Megatron-Core: "
		     "--decoder-first-pipeline-num-layers %ld --decoder-last-pipeline-num-layers "
		     "%ld); the largest stage (%ld) sets memory and the bubble", who, L, pp,
		     out->layers_first_stage, pp - 2,
		     (L - out->layers_first_stage - out->layers_last_stage) / (pp - 2),
		     out->layers_last_stage, out->layers_first_stage, out->layers_last_stage,
		     out->layers_per_stage);
	if (!l->have_model && l->model.heads % l->size[PL_TP] != 0)
		warn(out, "the assumed model's heads=%ld do not divide by tp=%ld: its figures "
		     "are a rough guide (give model= or heads= for yours)", l->model.heads,
		     l->size[PL_TP]);
	if (!l->have_model && !plan_vpp_fits(L, pp, vpp_of(l)))
		warn(out, "the assumed model's layers=%ld do not divide by pp*vpp = %ld*%ld: "
		     "the bubble is a rough guide (give model= or layers= for yours)", L, pp,
		     vpp_of(l));
	if (!l->have_model && l->cp_algo == PL_CP_ULYSSES && l->size[PL_CP] > 1 &&
	    l->model.heads % (l->size[PL_TP] * l->size[PL_CP]) != 0)
		warn(out, "the assumed model's heads=%ld do not divide by tp*cp = %ld*%ld as "
		     "Ulysses needs (give model= or heads= for yours)", l->model.heads,
		     l->size[PL_TP], l->size[PL_CP]);
	if (!l->have_seq && l->seq % l->size[PL_CP] != 0)
		warn(out, "the default seq=%ld does not divide by cp=%ld: figures use seq/cp "
		     "tokens per rank (give seq= for yours)", l->seq, l->size[PL_CP]);
}

static void
plan_warnings(const struct pl_layout *l, const struct plan_ctx *ctx, struct plan *out)
{
	long pp = l->size[PL_PP];

	warn_shape(l, out);

	if (ctx->domain_gpus > 0 && l->size[PL_TP] > ctx->domain_gpus)
		warn(out, "tp=%ld spans NVLink domains of %ld GPUs: every layer's "
		     "all-reduce crosses the network", l->size[PL_TP], ctx->domain_gpus);
	if (pp > 1 && out->bubble_fraction > 0.25)
		warn(out, "pipeline bubble %.1f %% (pp=%ld, %ld micro-batches): raise gbs "
		     "or use more micro-batches (%.0f or more keep it at or under 25 %%)",
		     100.0 * out->bubble_fraction, pp, out->micro_batches,
		     4.0 * (double)(pp - 1));
	warn_memory(l, ctx, out);
	warn_previous(l, ctx, out);
}

/* Everything but the warnings; the warnings themselves are not cleared. */
static int
estimate(const struct pl_layout *l, const struct plan_ctx *ctx, struct plan *out,
	 pl_err_t *err)
{
	if (l->auto_layout)
		return pl_err_set(err, "auto: the layout is chosen by the planner "
				  "(plan_auto), which plans each candidate itself");
	if (check_layout(l, ctx, err) < 0 || plan_schedule(l, out, err) < 0)
		return -1;
	plan_memory(l, out);
	plan_traffic(l, out);
	plan_links(l, ctx, out);
	plan_times(l, ctx, out);
	return 0;
}

int
plan_estimate(const struct pl_layout *l, const struct plan_ctx *ctx,
	      struct plan *out, pl_err_t *err)
{
	struct plan_ctx nominal;

	if (!out)
		return pl_err_set(err, "plan_estimate: no plan to fill");
	/* the warnings stay as they were: 5 kB a call the search need not clear */
	memset(out, 0, offsetof(struct plan, nwarnings));
	out->nwarnings = 0;
	if (!l)
		return pl_err_set(err, "plan_estimate: no layout");
	if (!ctx) {
		plan_ctx_default(&nominal, 0, 0);
		ctx = &nominal;
	}
	if (estimate(l, ctx, out, err) < 0) {
		memset(out, 0, offsetof(struct plan, nwarnings));
		return -1;
	}
	return 0;
}

int
plan_compute(const struct pl_layout *l, const struct plan_ctx *ctx,
	     struct plan *out, pl_err_t *err)
{
	struct plan_ctx nominal;

	if (!out)
		return pl_err_set(err, "plan_compute: no plan to fill");
	memset(out, 0, sizeof(*out));
	if (!l)
		return pl_err_set(err, "plan_compute: no layout");
	if (!ctx) {
		plan_ctx_default(&nominal, 0, 0);
		ctx = &nominal;
	}
	if (estimate(l, ctx, out, err) < 0) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	plan_warnings(l, ctx, out);
	return 0;
}
