/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The planner's figures, checked against values worked out by hand (the
 * working is in the comments).  Layouts are built here rather than parsed
 * so that this test depends on the arithmetic alone.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "tap.h"

#define TOL 1e-9

/* A Llama-2-7B shaped layout: 7e9 params, h 4096, 32 layers, 32 heads, V 32000. */
static struct pl_layout
lay(long tp, long cp, long ep, long dp, long pp)
{
	struct pl_layout l;

	memset(&l, 0, sizeof(l));
	l.size[PL_TP] = tp;
	l.size[PL_CP] = cp;
	l.size[PL_EP] = ep;
	l.size[PL_DP] = dp;
	l.size[PL_PP] = pp;
	l.order[0] = PL_TP;
	l.order[1] = PL_CP;
	l.order[2] = PL_EP;
	l.order[3] = PL_DP;
	l.order[4] = PL_PP;
	l.order_kind = PL_ORDER_MEGATRON;
	snprintf(l.order_name, sizeof(l.order_name), "megatron");
	l.have_model = true;
	snprintf(l.model.name, sizeof(l.model.name), "custom");
	l.model.params = 7e9;
	l.model.hidden = 4096;
	l.model.layers = 32;
	l.model.heads = 32;
	l.model.vocab = 32000;
	l.seq = 4096;
	l.have_seq = true;
	l.mbs = 1;
	l.gbs = 0;
	l.zero = 0;
	l.recompute = PL_RECOMPUTE_NONE;
	l.optimizer = PL_OPT_ADAM;
	return l;
}

/* The index of the first warning containing needle, or -1. */
static int
find_warning(const struct plan *p, const char *needle)
{
	int i;

	for (i = 0; i < p->nwarnings; i++)
		if (strstr(p->warnings[i], needle))
			return i;
	return -1;
}

static int
compute(const struct pl_layout *l, const struct plan_ctx *ctx, struct plan *p)
{
	pl_err_t err;

	pl_err_clear(&err);
	if (plan_compute(l, ctx, p, &err) < 0) {
		diag("plan_compute failed: %s", err.text);
		return -1;
	}
	return 0;
}

static void
test_state(void)
{
	static const struct {
		double params;
		double gb[4];	/* ZeRO 0..3 at dp=8 */
	} zt[] = {
		/* 16P, (4+12/8)P = 5.5P, (2+14/8)P = 3.75P, 16P/8 = 2P */
		{ 7e9, { 112.0, 38.5, 26.25, 14.0 } },
		{ 13e9, { 208.0, 71.5, 48.75, 26.0 } },
		{ 70e9, { 1120.0, 385.0, 262.5, 140.0 } },
	};
	struct plan_ctx ctx;
	struct pl_layout l;
	struct plan p;
	char buf[32];
	size_t i;
	int z;

	is_double(plan_state_bytes(7e9, PL_OPT_ADAM, 0, 1), 112e9, TOL, "7B Adam, no sharding: 112 GB");
	is_double(plan_state_bytes(7e9, PL_OPT_SGD, 0, 1), 84e9, TOL, "7B SGD: 12 B/param = 84 GB");
	/* SGD: 4 + 8/8 = 5, 2 + 10/8 = 3.25, 12/8 = 1.5 bytes per param */
	is_double(plan_state_bytes(7e9, PL_OPT_SGD, 1, 8), 35e9, TOL, "SGD ZeRO-1 dp8");
	is_double(plan_state_bytes(7e9, PL_OPT_SGD, 2, 8), 22.75e9, TOL, "SGD ZeRO-2 dp8");
	is_double(plan_state_bytes(7e9, PL_OPT_SGD, 3, 8), 10.5e9, TOL, "SGD ZeRO-3 dp8");
	is_double(plan_state_bytes(7e9, PL_OPT_ADAM, 3, 1), 112e9, TOL, "ZeRO-3 over dp=1 shards nothing");
	ok(plan_state_bytes(7e9, PL_OPT_ADAM, 4, 8) < 0, "ZeRO stage 4 is refused");
	ok(plan_state_bytes(7e9, PL_OPT_ADAM, 1, 0) < 0, "dp=0 is refused");
	ok(plan_state_bytes(NAN, PL_OPT_ADAM, 1, 8) < 0, "NaN params are refused");
	ok(plan_state_bytes(7e9, (enum pl_optimizer)9, 0, 1) < 0, "unknown optimizer is refused");

	l = lay(1, 1, 1, 1, 1);
	if (compute(&l, NULL, &p) == 0)
		is_double(p.state_gb_per_gpu, 112.0, TOL, "plan: 7B alone on one GPU holds 112 GB of state");

	plan_ctx_default(&ctx, 1, 8);
	for (i = 0; i < sizeof(zt) / sizeof(zt[0]); i++) {
		for (z = 0; z < 4; z++) {
			l = lay(1, 1, 1, 8, 1);
			l.model.params = zt[i].params;
			l.zero = z;
			if (compute(&l, &ctx, &p) < 0)
				continue;
			is_double(p.state_gb_per_gpu, zt[i].gb[z], TOL,
				  "%.0fB ZeRO-%d at dp=8: %.2f GB", zt[i].params / 1e9, z,
				  zt[i].gb[z]);
		}
	}
	/* the rounded figures a report shows */
	snprintf(buf, sizeof(buf), "%.1f/%.1f", 26.25, 48.75);
	is_str(buf, "26.2/48.8", "ZeRO-2 7B/13B print as 26.2/48.8");

	/* TP and PP divide the parameters first: 7e9/(8*4) params, 16 B each */
	l = lay(8, 1, 1, 4, 4);
	if (compute(&l, NULL, &p) == 0)
		is_double(p.state_gb_per_gpu, 3.5, TOL, "tp8,pp4: 7e9/32*16 B = 3.5 GB");
	/* CP ranks are data-parallel replicas of the weights: ZeRO-3 over dp*cp = 8 */
	l = lay(1, 2, 1, 4, 1);
	l.zero = 3;
	if (compute(&l, NULL, &p) == 0)
		is_double(p.state_gb_per_gpu, 14.0, TOL, "cp2,dp4 ZeRO-3 shards over 8: 14 GB");
}

static void
test_activations(void)
{
	struct pl_layout l;
	struct plan p;

	/* s*b*h = 4096*4096 = 2^24; 32 layers: (34 + 5*32*4096/4096) = 194 */
	is_double(32 * plan_layer_activation_bytes(4096, 1, 4096, 32, PL_RECOMPUTE_NONE),
		  104152956928.0, TOL, "no recompute: 194*2^24*32 = 104152956928 B");
	is_double(32 * plan_layer_activation_bytes(4096, 1, 4096, 32, PL_RECOMPUTE_SELECTIVE),
		  18253611008.0, TOL, "selective: 34*2^24*32 = 18253611008 B");
	is_double(32 * plan_layer_activation_bytes(4096, 1, 4096, 32, PL_RECOMPUTE_FULL),
		  1073741824.0, TOL, "full: 2*2^24*32 = 1073741824 B");
	ok(plan_layer_activation_bytes(-1, 1, 4096, 32, PL_RECOMPUTE_NONE) < 0, "negative seq refused");
	ok(plan_layer_activation_bytes(4096, 1, 4096, 32, (enum pl_recompute)7) < 0,
	   "unknown recompute refused");

	l = lay(1, 1, 1, 1, 1);
	if (compute(&l, NULL, &p) == 0) {
		is_double(p.activation_gb_per_gpu, 104.152956928, TOL, "plan: 104.15 GB unparallelised");
		is_int(p.inflight_micro_batches, 1, "pp=1 holds one micro-batch");
		/* 4096*32000*4 = 524288000; 4096*4096*2 = 33554432 */
		is_double(p.logits_gb_per_gpu, 0.524288, TOL, "fp32 logits 0.524288 GB");
		is_double(p.embedding_gb_per_gpu, 0.033554432, TOL, "embedding 0.033554432 GB");
		/* 112 + 104.152956928 + 0.524288 + 0.033554432 */
		is_double(p.total_gb_per_gpu, 216.71079936, TOL, "total 216.71079936 GB");
	}
	l.recompute = PL_RECOMPUTE_SELECTIVE;
	if (compute(&l, NULL, &p) == 0)
		is_double(p.activation_gb_per_gpu, 18.253611008, TOL, "plan: selective 18.25 GB");
	l.recompute = PL_RECOMPUTE_FULL;
	if (compute(&l, NULL, &p) == 0)
		is_double(p.activation_gb_per_gpu, 1.073741824, TOL, "plan: full 1.07 GB");

	/* TP with SP divides everything by 8 */
	l = lay(8, 1, 1, 1, 1);
	l.sp = true;
	if (compute(&l, NULL, &p) == 0) {
		is_double(p.activation_gb_per_gpu, 13.019119616, TOL, "tp8: 104.152956928/8");
		is_double(p.logits_gb_per_gpu, 0.065536, TOL, "tp8: logits/8");
		is_double(p.embedding_gb_per_gpu, 0.004194304, TOL, "tp8: embedding/8");
	}
	/* CP divides the whole layer, score term included: 52.076478464 */
	l = lay(1, 2, 1, 1, 1);
	if (compute(&l, NULL, &p) == 0) {
		is_double(p.activation_gb_per_gpu, 52.076478464, TOL, "cp2: 104.152956928/2");
		is_double(p.logits_gb_per_gpu, 0.262144, TOL, "cp2: logits of 2048 tokens");
	}
	/* pp4, default m = 16: 8 layers * 4 in flight = the 32-layer figure */
	l = lay(1, 1, 1, 1, 4);
	if (compute(&l, NULL, &p) == 0) {
		is_int(p.layers_per_stage, 8, "pp4: 8 layers per stage");
		is_int(p.inflight_micro_batches, 4, "pp4, 16 micro-batches: 4 in flight");
		is_double(p.activation_gb_per_gpu, 104.152956928, TOL, "pp4: 8 layers x 4 in flight");
		is_double(p.embedding_gb_per_gpu, 0.134217728, TOL, "pp4: embedding x 4 in flight");
	}
	/* pinned gbs=2 at dp=1: m = 2 < pp, 194*2^24*8*2 = 52076478464 */
	l.gbs = 2;
	if (compute(&l, NULL, &p) == 0) {
		is_int(p.inflight_micro_batches, 2, "pp4, 2 micro-batches: 2 in flight");
		is_double(p.activation_gb_per_gpu, 52.076478464, TOL, "pp4 m=2: 52.08 GB");
	}
}

static void
test_traffic(void)
{
	struct pl_layout l;
	struct plan p;

	/* 4 * 2^24*2 B * 2*7/8 * 32 layers = 2^32 * 1.75 */
	l = lay(8, 1, 1, 1, 1);
	if (compute(&l, NULL, &p) == 0) {
		is_double(p.tp_bytes_per_step, 7516192768.0, TOL, "tp8: 7516192768 B per step");
		is_double(plan_axis_bytes(&p, PL_TP), 7516192768.0, TOL, "plan_axis_bytes(tp)");
		is_double(p.pp_bytes_per_step, 0, TOL, "pp=1 moves nothing");
		is_double(p.dp_bytes_per_step, 0, TOL, "dp=1 moves nothing");
		is_double(p.cp_bytes_per_step, 0, TOL, "cp=1 moves nothing");
		is_double(p.ep_bytes_per_step, 0, TOL, "ep=1 moves nothing");
	}
	l.recompute = PL_RECOMPUTE_FULL;	/* 6 all-reduces per layer */
	if (compute(&l, NULL, &p) == 0)
		is_double(p.tp_bytes_per_step, 11274289152.0, TOL, "tp8 full recompute: x6/4");
	l = lay(1, 1, 1, 1, 1);
	if (compute(&l, NULL, &p) == 0)
		is_double(p.tp_bytes_per_step, 0, TOL, "tp=1 moves nothing");
	/* CP halves s for TP: tp8,cp2 = 7516192768/2 */
	l = lay(8, 2, 1, 1, 1);
	if (compute(&l, NULL, &p) == 0)
		is_double(p.tp_bytes_per_step, 3758096384.0, TOL, "tp8,cp2: s/cp tokens");

	/* pp4, m=16: interior stage sends 2 * 2^25 B per micro-batch = 2^30 */
	l = lay(1, 1, 1, 1, 4);
	if (compute(&l, NULL, &p) == 0)
		is_double(p.pp_bytes_per_step, 1073741824.0, TOL, "pp4: 2^30 B per step");
	l = lay(1, 1, 1, 1, 2);	/* m = 8, one direction per stage */
	if (compute(&l, NULL, &p) == 0)
		is_double(p.pp_bytes_per_step, 268435456.0, TOL, "pp2: 2^25*8 B per step");
	l = lay(8, 1, 1, 4, 4);
	if (compute(&l, NULL, &p) == 0) {
		is_double(p.pp_bytes_per_step, 134217728.0, TOL, "tp8,pp4: 2^30/8");
		/* 7e9/32 params * 2 B * 2*3/4 */
		is_double(p.dp_bytes_per_step, 656250000.0, TOL, "tp8,pp4,dp4 gradients");
		/* 4 * 2^25 * 1.75 * 8 layers * 16 micro-batches */
		is_double(p.tp_bytes_per_step, 30064771072.0, TOL, "tp8,pp4: 8 layers x 16 mb");
	}

	/* 7e9 * 2 B * 2*7/8 = 24.5e9; ZeRO-3: 3 * 7/8 * 14e9 = 36.75e9 */
	l = lay(1, 1, 1, 8, 1);
	if (compute(&l, NULL, &p) == 0)
		is_double(p.dp_bytes_per_step, 24.5e9, TOL, "dp8: 24.5e9 B of gradients");
	l.zero = 1;
	if (compute(&l, NULL, &p) == 0)
		is_double(p.dp_bytes_per_step, 24.5e9, TOL, "dp8 ZeRO-1: same volume");
	l.zero = 3;
	if (compute(&l, NULL, &p) == 0)
		is_double(p.dp_bytes_per_step, 36.75e9, TOL, "dp8 ZeRO-3: 3x one-way volume");

	/* K+V: 2 * 2048*4096*2 = 2^25 per step; 1 step; x3 fwd+bwd; x32 layers */
	l = lay(1, 2, 1, 1, 1);
	if (compute(&l, NULL, &p) == 0) {
		is_double(p.cp_bytes_per_step, 3221225472.0, TOL, "cp2: 3*2^30 B");
		/* the cp pair also reduces gradients: 14e9 * 2*1/2 */
		is_double(p.dp_bytes_per_step, 14e9, TOL, "cp2,dp1 reduces gradients over 2");
	}
	/* cp4: K+V 2*1024*4096*2 = 2^24, 3 steps, x3, x32 = 9*2^29 */
	l = lay(1, 4, 1, 1, 1);
	if (compute(&l, NULL, &p) == 0)
		is_double(p.cp_bytes_per_step, 4831838208.0, TOL, "cp4: 9*2^29 B");

	/* ep4: 4 all-to-alls * 2^25 * 3/4 * 32 layers = 3*2^30 */
	l = lay(1, 1, 4, 4, 1);
	if (compute(&l, NULL, &p) == 0) {
		is_double(p.ep_bytes_per_step, 3221225472.0, TOL, "ep4: 3*2^30 B");
		is_double(plan_axis_bytes(&p, PL_EP), 3221225472.0, TOL, "plan_axis_bytes(ep)");
		is_double(plan_axis_bytes(&p, PL_NAXES), 0, TOL, "plan_axis_bytes(bad axis) = 0");
	}
	is_double(plan_axis_bytes(NULL, PL_TP), 0, TOL, "plan_axis_bytes(NULL) = 0");
}

static void
test_schedule(void)
{
	static const long ms[] = { 4, 8, 16, 32, 64 };
	static const double bub[] = { 1.75, 0.875, 0.4375, 0.21875, 0.109375 };
	static const char *const pct[] = { "175.0", "87.5", "43.8", "21.9", "10.9" };
	struct pl_layout l;
	struct plan p;
	char buf[32];
	size_t i;

	for (i = 0; i < 5; i++) {
		l = lay(1, 1, 1, 1, 8);
		l.gbs = ms[i];
		if (compute(&l, NULL, &p) < 0)
			continue;
		is_int(p.micro_batches, ms[i], "pp8 gbs=%ld: %ld micro-batches", ms[i], ms[i]);
		is_double(p.bubble_fraction, bub[i], TOL, "pp8 m=%ld: bubble %g", ms[i], bub[i]);
		snprintf(buf, sizeof(buf), "%.1f", 100 * p.bubble_fraction);
		is_str(buf, pct[i], "pp8 m=%ld: the bubble prints as expected", ms[i]);
	}
	l = lay(1, 1, 1, 2, 8);
	if (compute(&l, NULL, &p) == 0) {
		is_int(p.micro_batches, 32, "pp8 unpinned: 4*pp = 32 micro-batches");
		is_int(p.global_batch, 64, "global batch 1*32*2 = 64");
		is_double(p.bubble_fraction, 0.21875, TOL, "7/32 bubble");
	}
	l = lay(1, 1, 1, 2, 1);
	if (compute(&l, NULL, &p) == 0) {
		is_int(p.micro_batches, 1, "pp1 unpinned: 1 micro-batch");
		is_int(p.global_batch, 2, "global batch mbs*dp = 2");
		is_double(p.bubble_fraction, 0, TOL, "no bubble at pp=1");
	}
	l = lay(1, 1, 1, 8, 1);
	l.gbs = 64;
	l.mbs = 2;
	if (compute(&l, NULL, &p) == 0) {
		is_int(p.micro_batches, 4, "gbs 64 / (2*8) = 4 micro-batches");
		is_int(p.grad_accum_steps, 4, "4 accumulation steps");
		is_int(p.global_batch, 64, "global batch stays the pinned 64");
	}
}

static void
test_links(void)
{
	struct plan_ctx ctx;
	struct pl_layout l;
	struct plan p;

	plan_ctx_default(&ctx, 4, 8);
	is_int(ctx.world, 32, "default ctx: 4 nodes x 8 GPUs");
	is_int(ctx.domain_gpus, 8, "default ctx: a node is the NVLink domain");
	is_double(ctx.link[TOPO_LINK_NVLINK].gbps, 450, TOL, "nominal NVLink 450 GB/s");
	is_double(ctx.link[TOPO_LINK_PCIE].gbps, 25, TOL, "nominal PCIe 25 GB/s");
	is_double(ctx.link[TOPO_LINK_LEAF].gbps, 50, TOL, "nominal leaf 50 GB/s");
	is_double(ctx.link[TOPO_LINK_SPINE].gbps, 25, TOL, "nominal spine 25 GB/s");
	ok(!ctx.link[TOPO_LINK_LEAF].measured, "nominal figures are not measured");
	like(ctx.link[TOPO_LINK_LEAF].source, "nominal", "source says nominal");
	ok(ctx.previous == NULL && ctx.gpu_memory_gb == 0, "no previous layout, memory unknown");
	plan_ctx_default(&ctx, LONG_MAX, 8);
	is_int(ctx.world, 0, "an overflowing world is left unknown");
	plan_ctx_default(NULL, 1, 8);
	ok(1, "plan_ctx_default(NULL) does nothing");

	/* tp8 inside the node, dp4 across nodes */
	plan_ctx_default(&ctx, 4, 8);
	l = lay(8, 1, 1, 4, 1);
	if (compute(&l, &ctx, &p) == 0) {
		is_int(p.comm_link[PL_TP], TOPO_LINK_NVLINK, "tp8 on NVLink");
		is_int(p.comm_link[PL_DP], TOPO_LINK_LEAF, "dp across nodes on leaf");
		is_double(p.comm_seconds[PL_TP], 7516192768.0 / 450e9, TOL, "tp seconds at 450 GB/s");
		/* 7e9/8*2 B * 2*3/4 = 2.625e9 B at 50 GB/s */
		is_double(p.comm_seconds[PL_DP], 0.0525, TOL, "dp 2.625e9 B at 50 GB/s");
		is_double(p.comm_seconds[PL_PP], 0, TOL, "pp=1: no time");
	}
	/* tp2,dp4 fits one node: dp span 8 on NVLink */
	plan_ctx_default(&ctx, 1, 8);
	l = lay(2, 1, 1, 4, 1);
	if (compute(&l, &ctx, &p) == 0)
		is_int(p.comm_link[PL_DP], TOPO_LINK_NVLINK, "tp2,dp4 in one node: dp on NVLink");
	/* tp4,cp2 fits the node, pp4 does not */
	plan_ctx_default(&ctx, 4, 8);
	l = lay(4, 2, 1, 1, 4);
	if (compute(&l, &ctx, &p) == 0) {
		is_int(p.comm_link[PL_CP], TOPO_LINK_NVLINK, "tp4*cp2 = 8: cp on NVLink");
		is_int(p.comm_link[PL_PP], TOPO_LINK_LEAF, "pp across nodes on leaf");
	}
	/* tp4,cp4: cp span 16 > 8 */
	l = lay(4, 4, 1, 2, 1);
	if (compute(&l, &ctx, &p) == 0)
		is_int(p.comm_link[PL_CP], TOPO_LINK_LEAF, "tp4*cp4 = 16: cp on leaf");
	/* a rank order with pp inside dp: pp2 span 2*2 = 4 on NVLink, dp span 16 */
	l = lay(2, 1, 1, 8, 2);
	l.order[3] = PL_PP;
	l.order[4] = PL_DP;
	if (compute(&l, &ctx, &p) == 0) {
		is_int(p.comm_link[PL_PP], TOPO_LINK_NVLINK, "order tp-pp-dp: pp inside the node");
		is_int(p.comm_link[PL_DP], TOPO_LINK_LEAF, "order tp-pp-dp: dp across nodes");
	}
	/* no NVLink: in-node traffic at PCIe speed */
	plan_ctx_default(&ctx, 1, 8);
	ctx.link[TOPO_LINK_NVLINK].gbps = 0;
	l = lay(8, 1, 1, 1, 1);
	if (compute(&l, &ctx, &p) == 0) {
		is_int(p.comm_link[PL_TP], TOPO_LINK_PCIE, "no NVLink: tp on PCIe");
		is_double(p.comm_seconds[PL_TP], 7516192768.0 / 25e9, TOL, "tp at 25 GB/s");
	}
	/* unknown bandwidth: -1 */
	plan_ctx_default(&ctx, 2, 8);
	ctx.link[TOPO_LINK_LEAF].gbps = 0;
	l = lay(8, 1, 1, 2, 1);
	if (compute(&l, &ctx, &p) == 0)
		is_double(p.comm_seconds[PL_DP], -1, TOL, "unknown leaf bandwidth: -1 s");
	/* unknown domain: tp assumed on NVLink, the rest on leaf */
	plan_ctx_default(&ctx, 0, 0);
	l = lay(8, 1, 1, 2, 1);
	if (compute(&l, &ctx, &p) == 0) {
		is_int(p.comm_link[PL_TP], TOPO_LINK_NVLINK, "unknown domain: tp on NVLink");
		is_int(p.comm_link[PL_DP], TOPO_LINK_LEAF, "unknown domain: dp on leaf");
	}
}

static void
expect_error(const struct pl_layout *l, const struct plan_ctx *ctx, const char *needle,
	     const char *what)
{
	struct plan p;
	pl_err_t err;
	int rv;

	pl_err_clear(&err);
	memset(&p, 0x5a, sizeof(p));
	rv = plan_compute(l, ctx, &p, &err);
	ok(rv == -1, "%s: refused", what);
	like(err.text, needle, "%s: message", what);
	ok(p.nwarnings == 0 && p.total_gb_per_gpu == 0, "%s: plan left zeroed", what);
}

static void
test_errors(void)
{
	struct plan_ctx ctx;
	struct pl_layout l;
	struct plan p;
	pl_err_t err;

	l = lay(1, 1, 1, 1, 5);
	l.model.layers = 4;
	expect_error(&l, NULL, "layers=4 is fewer than pp=5", "a given model: fewer layers than stages");
	l = lay(5, 1, 1, 1, 1);
	expect_error(&l, NULL, "heads=32 is not divisible by tp=5", "heads % tp");
	pl_err_clear(&err);
	plan_compute(&l, NULL, &p, &err);
	like(err.text, "1, 2, 4, 8, 16, 32", "the message lists the accepted tp");
	l = lay(1, 3, 1, 1, 1);
	expect_error(&l, NULL, "seq=4096 is not divisible by cp=3", "seq % cp");
	l = lay(0, 1, 1, 1, 1);
	expect_error(&l, NULL, "tp=0", "tp=0");
	l = lay(1, 1, 1, 1, -2);
	expect_error(&l, NULL, "pp=-2", "negative pp");
	l = lay(1, 1, 1, 0, 1);
	expect_error(&l, NULL, "dp is unresolved", "dp=auto left unresolved");
	l = lay(1, 1, 1, 1, 1);
	l.seq = 0;
	expect_error(&l, NULL, "seq=0", "seq=0");
	l = lay(1, 1, 1, 1, 1);
	l.mbs = -1;
	expect_error(&l, NULL, "mbs=-1", "negative mbs");
	l = lay(1, 1, 1, 1, 1);
	l.model.hidden = 0;
	expect_error(&l, NULL, "hidden=0", "hidden=0");
	l = lay(1, 1, 1, 1, 1);
	l.model.vocab = 0;
	expect_error(&l, NULL, "vocab=0", "vocab=0");
	l = lay(1, 1, 1, 1, 1);
	l.model.params = 0;
	expect_error(&l, NULL, "params=0", "params=0");
	l.model.params = NAN;
	expect_error(&l, NULL, "params=nan", "params NaN");
	l.model.params = INFINITY;
	expect_error(&l, NULL, "params=inf", "params infinite");
	l = lay(1, 1, 1, 1, 1);
	l.zero = 4;
	expect_error(&l, NULL, "zero=4 is not a ZeRO stage", "zero=4");
	l = lay(1, 1, 1, 1, 1);
	l.gbs = -8;
	expect_error(&l, NULL, "gbs=-8", "negative gbs");
	l = lay(1, 1, 1, 8, 1);
	l.gbs = 100;
	expect_error(&l, NULL, "gbs=100 is not divisible by mbs*dp", "gbs % (mbs*dp)");
	l.gbs = 4;	/* smaller than mbs*dp */
	expect_error(&l, NULL, "gbs=4 is not divisible", "gbs below mbs*dp");
	l = lay(1, 1, 1, 8, 1);
	l.recompute = (enum pl_recompute)9;
	expect_error(&l, NULL, "recompute=9", "unknown recompute");
	l = lay(1, 1, 1, 8, 1);
	l.optimizer = (enum pl_optimizer)9;
	expect_error(&l, NULL, "optimizer=9", "unknown optimizer");
	plan_ctx_default(&ctx, 8, 8);
	l = lay(8, 1, 1, 4, 1);
	expect_error(&l, &ctx, "needs tp*cp*pp*dp = 32 GPUs but the job has 64", "world mismatch");

	pl_err_clear(&err);
	ok(plan_compute(NULL, NULL, &p, &err) == -1 && pl_err_isset(&err), "NULL layout refused");
	pl_err_clear(&err);
	ok(plan_compute(&l, NULL, NULL, &err) == -1 && pl_err_isset(&err), "NULL plan refused");
	ok(plan_compute(&l, NULL, NULL, NULL) == -1, "NULL err is allowed");

}

/* Huge figures: no overflow, no hang. */
static void
test_huge(void)
{
	struct pl_layout l;
	struct plan p;
	pl_err_t err;

	l = lay(1, 1, 1, 1, LONG_MAX);
	l.model.layers = LONG_MAX;
	expect_error(&l, NULL, "too large", "pp=LONG_MAX with the default micro-batches");
	l.gbs = LONG_MAX;
	expect_error(&l, NULL, "overflows", "pp=LONG_MAX, gbs=LONG_MAX: batch overflow");
	l = lay(1, 1, 1, LONG_MAX, 1);
	l.mbs = LONG_MAX;
	expect_error(&l, NULL, "overflows", "mbs*dp overflow");
	l.gbs = LONG_MAX;
	expect_error(&l, NULL, "not divisible by mbs*dp", "pinned gbs below an overflowing mbs*dp");
	l = lay(2, 1, 1, 1, 1);
	l.model.heads = 999983;	/* prime: the divisor list is short */
	expect_error(&l, NULL, "a divisor of 999983: 1, 999983", "a prime head count");
	l = lay(1, 1, 1, 1, 1);
	l.seq = LONG_MAX;
	l.model.hidden = LONG_MAX;
	l.model.vocab = LONG_MAX;
	l.model.params = 1e300;
	pl_err_clear(&err);
	ok(plan_compute(&l, NULL, &p, &err) == 0 && !isnan(p.total_gb_per_gpu),
	   "huge seq/hidden/params: a figure, not a crash");
}

static void
test_warnings(void)
{
	struct plan_ctx ctx;
	struct pl_layout l;
	struct plan p;
	int i;

	/* TP across NVLink domains */
	plan_ctx_default(&ctx, 4, 8);
	l = lay(16, 1, 1, 2, 1);
	if (compute(&l, &ctx, &p) == 0) {
		i = find_warning(&p, "tp=16 spans NVLink domains of 8 GPUs: every layer's "
				 "all-reduce crosses the network");
		ok(i >= 0, "tp16 on 8-GPU nodes: warned");
		is_int(p.comm_link[PL_TP], TOPO_LINK_LEAF, "tp16 timed on leaf");
	}
	l = lay(8, 1, 1, 4, 1);
	if (compute(&l, &ctx, &p) == 0) {
		ok(find_warning(&p, "spans NVLink") < 0, "tp8 on 8-GPU nodes: no warning");
		is_int(p.nwarnings, 0, "a clean layout has no warnings");
	}
	plan_ctx_default(&ctx, 0, 0);
	l = lay(16, 1, 1, 2, 1);
	if (compute(&l, &ctx, &p) == 0)
		ok(find_warning(&p, "spans NVLink") < 0, "unknown domain size: no tp warning");

	/* pipeline bubble */
	l = lay(1, 1, 1, 1, 8);
	l.gbs = 16;
	if (compute(&l, NULL, &p) == 0)
		ok(find_warning(&p, "pipeline bubble 43.8 % (pp=8, 16 micro-batches): "
				"raise gbs or use more micro-batches") >= 0, "bubble 43.8 %%: warned");
	l.gbs = 8;
	if (compute(&l, NULL, &p) == 0)
		ok(find_warning(&p, "pipeline bubble 87.5 % (pp=8, 8 micro-batches)") >= 0,
		   "bubble 87.5 %%: warned");
	l.gbs = 32;
	if (compute(&l, NULL, &p) == 0)
		ok(find_warning(&p, "bubble") < 0, "bubble 21.9 %%: no warning");
	l.gbs = 0;
	if (compute(&l, NULL, &p) == 0)
		ok(find_warning(&p, "bubble") < 0, "default micro-batches: no warning");
	l = lay(1, 1, 1, 1, 4);	/* 3/12 = exactly 25 % */
	l.gbs = 12;
	if (compute(&l, NULL, &p) == 0)
		ok(find_warning(&p, "bubble") < 0, "bubble exactly 25 %%: no warning");

}

static void
test_warn_memory(void)
{
	struct plan_ctx ctx;
	struct pl_layout l;
	struct plan p;
	int i;

	/* 56 + 52.076478464 + 0.262144 + 0.016777216 = 108.35539968 */
	plan_ctx_default(&ctx, 1, 8);
	ctx.gpu_memory_gb = 80;
	l = lay(2, 1, 1, 4, 1);
	l.sp = true;
	if (compute(&l, &ctx, &p) == 0) {
		is_double(p.total_gb_per_gpu, 108.35539968, TOL, "tp2,dp4 7B: 108.36 GB");
		i = find_warning(&p, "estimated 108.4 GB per GPU exceeds the 80 GB of each GPU: ");
		ok(i >= 0, "108.4 GB on an 80 GB GPU: warned");
		if (i >= 0)
			like(p.warnings[i], "recompute=selective", "suggests selective recompute");
	}
	/* selective: 56 + 9.126805504 + 0.262144 + 0.016777216 = 65.40572672 */
	l.recompute = PL_RECOMPUTE_SELECTIVE;
	if (compute(&l, &ctx, &p) == 0) {
		is_double(p.total_gb_per_gpu, 65.40572672, TOL, "with selective: 65.41 GB");
		ok(find_warning(&p, "exceeds") < 0, "65.4 GB on 80 GB: no warning");
	}
	ctx.gpu_memory_gb = 0;
	l.recompute = PL_RECOMPUTE_NONE;
	if (compute(&l, &ctx, &p) == 0)
		ok(find_warning(&p, "exceeds") < 0, "GPU memory unknown: no warning");

}

static void
test_warn_previous(void)
{
	struct plan_ctx ctx;
	struct pl_layout l, prev;
	struct plan p;
	int i;

	/* dp changes under an unpinned global batch: m = 16 both times */
	plan_ctx_default(&ctx, 32, 8);
	prev = lay(8, 1, 1, 4, 4);
	ctx.previous = &prev;
	l = lay(8, 1, 1, 8, 4);
	if (compute(&l, &ctx, &p) == 0)
		ok(find_warning(&p, "dp changes from 4 to 8 (previous layout tp8,pp4): the "
				"global batch changes from 64 to 128 unless gbs= is pinned") >= 0,
		   "dp 4 -> 8: warned");
	/* pinned: 256/(1*4) = 64 -> 256/(1*8) = 32 */
	prev.gbs = 256;
	l.gbs = 256;
	if (compute(&l, &ctx, &p) == 0) {
		i = find_warning(&p, "dp changes from 4 to 8");
		ok(i >= 0, "dp 4 -> 8 with gbs pinned: noted");
		if (i >= 0)
			like(p.warnings[i], "note: dp changes from 4 to 8 (previous layout tp8,pp4): "
			     "gbs=256 is pinned, so gradient accumulation changes from 64 to 32",
			     "the note names the accumulation steps");
		ok(find_warning(&p, "global batch changes") < 0, "pinned: the global batch stays");
	}
	/* same dp: nothing */
	plan_ctx_default(&ctx, 16, 8);
	prev = lay(8, 1, 1, 4, 4);
	ctx.previous = &prev;
	l = lay(8, 1, 1, 4, 4);
	if (compute(&l, &ctx, &p) == 0)
		is_int(p.nwarnings, 0, "same layout as before: no warning");
	/* same dp, pp 4 -> 8: m 16 -> 32, global batch 64 -> 128 */
	l = lay(4, 1, 1, 4, 8);
	if (compute(&l, &ctx, &p) == 0)
		ok(find_warning(&p, "the global batch changes from 64 to 128") >= 0,
		   "pp 4 -> 8 at the same dp: the global batch change is warned");
	/* a previous layout that cannot be scheduled is ignored */
	prev.size[PL_DP] = 0;
	l = lay(8, 1, 1, 8, 4);
	plan_ctx_default(&ctx, 32, 8);
	ctx.previous = &prev;
	if (compute(&l, &ctx, &p) == 0)
		is_int(p.nwarnings, 0, "an unresolved previous layout: no warning");

	/* every warning at once stays within the array */
	plan_ctx_default(&ctx, 32, 8);
	ctx.gpu_memory_gb = 1;
	prev = lay(8, 1, 1, 4, 4);
	ctx.previous = &prev;
	l = lay(16, 1, 1, 2, 8);
	l.gbs = 16;
	if (compute(&l, &ctx, &p) == 0) {
		ok(p.nwarnings >= 3 && p.nwarnings <= PLAN_MAX_WARNINGS, "%d warnings at once",
		   p.nwarnings);
		for (i = 0; i < p.nwarnings; i++)
			ok(strlen(p.warnings[i]) < PLAN_WARNING_LEN - 1, "warning %d fits: %s", i,
			   p.warnings[i]);
	}
}

/*
 * Layers pp does not divide: Megatron-Core's uneven stages, planned, not
 * refused.  Figures by hand for 7B (L 32, h 4096, a 32, s 4096) on
 * tp8,pp3: middle stage ceil(32/3) = 11, first and last share 32-11 = 21
 * as 11 and 10; m = 4*3 = 12.
 */
static void
test_uneven(void)
{
	struct pl_layout l;
	struct plan p;

	l = lay(8, 1, 1, 1, 3);
	l.sp = true;
	if (compute(&l, NULL, &p) == 0) {
		is_int(p.layers_per_stage, 11, "tp8,pp3: the largest stage has 11 layers");
		is_int(p.layers_first_stage, 11, "first stage 11");
		is_int(p.layers_last_stage, 10, "last stage 10");
		/* (m+pp-1)*11 / (m*32/3) - 1 = 14*11/128 - 1 = 26/128 */
		is_double(p.bubble_fraction, 0.203125, TOL, "bubble 26/128: the 11-layer stage sets the pace");
		/* 7e9*11/32/8 = 300781250 params * 16 B */
		is_double(p.state_gb_per_gpu, 4.8125, TOL, "state: the largest stage's share, 4.8125 GB");
		/* (34+5*32)*4096^2 = 3254779904 B a layer, /8, x 11 layers x 3 in flight */
		is_double(p.activation_gb_per_gpu, 13.425967104, TOL, "activations: 11 layers x 3 micro-batches");
		/* 4 * 2^25 * 1.75 * 11 layers * 12 micro-batches */
		is_double(p.tp_bytes_per_step, 31004295168.0, TOL, "tp traffic of 11 layers");
		/* 2 directions * 2^25/8 * 12 */
		is_double(p.pp_bytes_per_step, 100663296.0, TOL, "pp traffic as for any interior stage");
		ok(find_warning(&p, "layers=32 do not divide by pp=3") >= 0, "warned: uneven");
		ok(find_warning(&p, "first 11, 1 middle of 11, last 10 layers") >= 0, "the split is named");
		ok(find_warning(&p, "--decoder-first-pipeline-num-layers 11 --decoder-last-pipeline-num-layers 10") >= 0,
		   "and how to ask Megatron-Core for it");
	}
	/* 13 layers on pp8: middle 2 would leave 13-12 = 1 for two stages, so
	 * middle 1 each, first and last share 13-6 = 7 as 4 and 3. */
	l = lay(1, 1, 1, 1, 8);
	l.model.layers = 13;
	if (compute(&l, NULL, &p) == 0) {
		is_int(p.layers_first_stage, 4, "13 on pp8: first stage 4");
		is_int(p.layers_last_stage, 3, "last 3");
		is_int(p.layers_per_stage, 4, "the largest 4 (4+6*1+3 = 13)");
		/* m = 32: (32+7)*4 / (32*13/8) - 1 = 156/52 - 1 = 2 */
		is_double(p.bubble_fraction, 2.0, TOL, "bubble (39*4)/(52) - 1 = 2");
	}
	/* 5 on pp4: 2,1,1,1 */
	l = lay(1, 1, 1, 1, 4);
	l.model.layers = 5;
	if (compute(&l, NULL, &p) == 0) {
		is_int(p.layers_first_stage, 2, "5 on pp4: first 2");
		is_int(p.layers_last_stage, 1, "last 1");
		is_int(p.layers_per_stage, 2, "largest 2");
	}
	/* pp2: the first takes the odd layer */
	l = lay(1, 1, 1, 1, 2);
	l.model.layers = 999983;
	if (compute(&l, NULL, &p) == 0) {
		is_int(p.layers_first_stage, 499992, "pp2: first 499992");
		is_int(p.layers_last_stage, 499991, "last 499991");
		ok(find_warning(&p, "uneven stages of 499992 and 499991 layers") >= 0, "warned with the split");
	}
	/* even stages: unchanged, and no warning */
	l = lay(1, 1, 1, 1, 4);
	if (compute(&l, NULL, &p) == 0) {
		is_int(p.layers_first_stage, 8, "32 on pp4: 8 a stage");
		is_int(p.layers_last_stage, 8, "last 8");
		is_double(p.bubble_fraction, 3.0 / 16.0, TOL, "bubble (pp-1)/m");
		ok(find_warning(&p, "divide") < 0, "no uneven warning");
	}
}

/* What the user did not give never refuses a layout: it warns. */
static void
test_assumed(void)
{
	struct pl_layout l;
	struct plan p;

	l = lay(3, 1, 1, 1, 1);
	l.have_model = false;	/* 32 heads assumed, tp3 */
	if (compute(&l, NULL, &p) == 0)
		ok(find_warning(&p, "the assumed model's heads=32 do not divide by tp=3") >= 0,
		   "assumed heads by tp: planned, warned");
	else
		ok(0, "assumed heads by tp: planned, warned");
	l = lay(1, 3, 1, 1, 1);
	l.have_seq = false;	/* seq 4096 by default, cp3 */
	if (compute(&l, NULL, &p) == 0)
		ok(find_warning(&p, "the default seq=4096 does not divide by cp=3") >= 0,
		   "default seq by cp: planned, warned");
	else
		ok(0, "default seq by cp: planned, warned");
	l = lay(1, 1, 1, 1, 64);
	l.have_model = false;	/* 32 layers assumed, 64 stages */
	if (compute(&l, NULL, &p) == 0) {
		is_int(p.layers_per_stage, 1, "assumed 32 layers on pp64: one a stage");
		ok(find_warning(&p, "fewer than pp=64 stages") >= 0, "warned");
	} else {
		ok(0, "assumed 32 layers on pp64: planned");
		ok(0, "warned");
	}
	l = lay(1, 1, 1, 1, 3);
	l.have_model = false;
	if (compute(&l, NULL, &p) == 0)
		ok(find_warning(&p, "the assumed model's layers=32 do not divide by pp=3") >= 0,
		   "assumed layers by pp: says the model is assumed");
	else
		ok(0, "assumed layers by pp: says the model is assumed");
}


/* Refused with a message containing needle. */
static void
refused(const struct pl_layout *l, const char *needle, const char *what)
{
	struct plan p;
	pl_err_t err;

	pl_err_clear(&err);
	ok(plan_compute(l, NULL, &p, &err) < 0, "%s: refused", what);
	like(err.text, needle, "%s: says why", what);
}

/*
 * The interleaved schedule.  7b on pp4, m = 16, vpp 2: bubble
 * (pp-1)/(v*m) = 3/32; each micro-batch crosses a rank v times, so PP sends
 * 2 * 2^25 B * 16 * 2; the first stage holds (1 + (pp-1)/(pp*v)) = 11/8
 * times the plain 1F1B activations (104.152956928 GB).
 */
static void
test_vpp(void)
{
	struct pl_layout l;
	struct plan p;

	l = lay(1, 1, 1, 1, 4);
	l.vpp = 2;
	if (compute(&l, NULL, &p) == 0) {
		is_double(p.bubble_fraction, 0.09375, TOL, "vpp2,pp4,m16: bubble 3/32");
		is_double(p.pp_bytes_per_step, 2147483648.0, TOL, "vpp2: twice the PP bytes");
		is_double(p.comm_steps[PL_PP], 64, TOL, "vpp2: 2 directions x 16 x 2 messages");
		is_double(p.activation_gb_per_gpu, 143.210315776, TOL,
			  "vpp2: 104.152956928 GB x 11/8 in flight");
	}
	l.vpp = 1;
	if (compute(&l, NULL, &p) == 0) {
		is_double(p.bubble_fraction, 0.1875, TOL, "vpp1: bubble 3/16");
		is_double(p.pp_bytes_per_step, 1073741824.0, TOL, "vpp1: 2 * 2^25 * 16");
	}
	l.vpp = 0;
	if (compute(&l, NULL, &p) == 0)
		is_double(p.bubble_fraction, 0.1875, TOL, "vpp 0 (a layout built by hand) plans as 1");
	/*
	 * 30 layers on pp4: 30+2 = 32 = 4*2*4, Megatron-Core's split with the
	 * embedding and the loss counted as layers: stages 7, 8, 8, 7.  Bubble
	 * (v*m + pp - 1) * 8 / (v*m * 7.5) - 1 = 35*8/240 - 1 = 1/6.
	 */
	l = lay(1, 1, 1, 1, 4);
	l.model.layers = 30;
	l.vpp = 2;
	if (compute(&l, NULL, &p) == 0) {
		is_int(p.layers_first_stage, 7, "30 layers, pp4: first stage 7");
		is_int(p.layers_per_stage, 8, "middle stages 8");
		is_double(p.bubble_fraction, 1.0 / 6.0, TOL, "uneven vpp2: bubble 1/6");
	}
	ok(plan_vpp_fits(32, 4, 2) && plan_vpp_fits(30, 4, 2) && plan_vpp_fits(126, 16, 4) &&
	   !plan_vpp_fits(32, 4, 3) && !plan_vpp_fits(30, 2, 2) && plan_vpp_fits(5, 1, 1) &&
	   !plan_vpp_fits(8, 1, 2), "plan_vpp_fits: layers or layers+2 over pp*vpp");
	l = lay(1, 1, 1, 1, 1);
	l.vpp = 2;
	refused(&l, "vpp=2 needs pp > 1", "vpp2 with pp1");
	l = lay(1, 1, 1, 1, 4);
	l.vpp = 3;
	refused(&l, "pp*vpp = 4*3", "vpp3 on 32 layers over pp4");
	/* gbs 6 on dp2: 3 micro-batches, not a multiple of pp4 */
	l = lay(1, 1, 1, 2, 4);
	l.vpp = 2;
	l.gbs = 6;
	refused(&l, "multiple of pp=4", "vpp2 with 3 micro-batches on pp4");
}

/*
 * Sequence parallelism, 7b on tp8 (sbh = 2^24): without it the 10sbh of
 * LayerNorm inputs and dropout masks stays whole: 32 * (10 + 24/8) sbh +
 * 32 * 5as^2b/8 = 17.716740096 GB; selective 32 * 13 sbh = 6.979321856
 * (with sp 32 * 34/8 sbh = 2.281701376); full keeps the layer input whole,
 * 32 * 2 sbh = 1.073741824 (with sp /8 = 0.134217728).
 */
static void
test_sp(void)
{
	static const struct {
		enum pl_recompute r;
		bool sp;
		double gb;
	} t[] = {
		{ PL_RECOMPUTE_NONE, false, 17.716740096 },
		{ PL_RECOMPUTE_NONE, true, 13.019119616 },
		{ PL_RECOMPUTE_SELECTIVE, false, 6.979321856 },
		{ PL_RECOMPUTE_SELECTIVE, true, 2.281701376 },
		{ PL_RECOMPUTE_FULL, false, 1.073741824 },
		{ PL_RECOMPUTE_FULL, true, 0.134217728 },
	};
	struct pl_layout l;
	struct plan p, q;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		l = lay(8, 1, 1, 1, 1);
		l.recompute = t[i].r;
		l.sp = t[i].sp;
		if (compute(&l, NULL, &p) == 0)
			is_double(p.activation_gb_per_gpu, t[i].gb, TOL, "tp8 recompute %d sp %d: %.9f GB",
				  (int)t[i].r, (int)t[i].sp, t[i].gb);
	}
	/* sp moves the same bytes (reduce-scatter + all-gather = all-reduce) */
	l = lay(8, 1, 1, 1, 1);
	if (compute(&l, NULL, &p) == 0) {
		l.sp = true;
		if (compute(&l, NULL, &q) == 0)
			is_double(q.tp_bytes_per_step, p.tp_bytes_per_step, TOL, "sp: same TP bytes");
	}
	/* tp1: sp changes nothing */
	l = lay(1, 1, 1, 1, 1);
	l.sp = true;
	if (compute(&l, NULL, &p) == 0)
		is_double(p.activation_gb_per_gpu, 104.152956928, TOL, "sp on tp1: no change");
}

/*
 * CP on tp2,cp4, 7b, m = 1: a = s/cp*b*h*2 = 1024*4096*2 = 8388608 B, over
 * tp 4194304.  Ring: (1 fwd + 2 bwd) passes * (cp-1) steps * K and V *
 * 4194304 * 32 layers = 2415919104 B, steps 2 * 3 * 32 = 192.  Ulysses:
 * (4 + 4) all-to-alls * 4194304 * 3/4 * 32 = 805306368 B, steps 8 * 3 * 32
 * = 768.  Full recompute replays the forward: ring 4 * 3 * 2 * 4194304 *
 * 32 = 3221225472, Ulysses 12 * 4194304 * 3/4 * 32 = 1207959552.
 */
static void
test_cp_algo(void)
{
	struct pl_layout l;
	struct plan p;

	l = lay(2, 4, 1, 1, 1);
	if (compute(&l, NULL, &p) == 0) {
		is_double(p.cp_bytes_per_step, 2415919104.0, TOL, "ring: 2415919104 B");
		is_double(p.comm_steps[PL_CP], 192, TOL, "ring: 192 steps");
	}
	l.cp_algo = PL_CP_ULYSSES;
	if (compute(&l, NULL, &p) == 0) {
		is_double(p.cp_bytes_per_step, 805306368.0, TOL, "Ulysses: 805306368 B");
		is_double(p.comm_steps[PL_CP], 768, TOL, "Ulysses: 768 steps");
	}
	l.recompute = PL_RECOMPUTE_FULL;
	if (compute(&l, NULL, &p) == 0)
		is_double(p.cp_bytes_per_step, 1207959552.0, TOL, "Ulysses, full recompute");
	l.cp_algo = PL_CP_RING;
	if (compute(&l, NULL, &p) == 0)
		is_double(p.cp_bytes_per_step, 3221225472.0, TOL, "ring, full recompute");
	/* 32 heads over tp8*cp8 = 64 ranks */
	l = lay(8, 8, 1, 1, 1);
	l.cp_algo = PL_CP_ULYSSES;
	refused(&l, "heads=32 do not divide by tp*cp = 8*8", "Ulysses tp8,cp8 on 32 heads");
	l.cp_algo = PL_CP_RING;
	ok(compute(&l, NULL, &p) == 0, "the same as a ring: accepted");
}

/*
 * The step time, 7b, seq 4096, peak 1000 TFLOP/s at efficiency 0.5.
 * dp8 (one GPU per domain, so DP on leaf), m = 1, global batch 8 = 32768
 * tokens: FLOPs 6*7e9*32768 + 6*32*4096*4096*32768 = 1481809116266496
 * over 8 * 1e15 * 0.5: compute 0.370452279066624 s, attention
 * 0.026388279066624.  DP: 24.5e9 B / 50 GB/s + 175 buckets * 2*7 steps * 8
 * us = 0.5096 s, hidden behind 2/3 of the compute: exposed 0.262631813955584.
 */
static void
test_times(void)
{
	struct plan_ctx ctx;
	struct pl_layout l;
	struct plan p;

	plan_ctx_default(&ctx, 8, 1);
	ctx.gpu_peak_tflops = 1000;
	ctx.efficiency = 0.5;
	l = lay(1, 1, 1, 8, 1);
	if (compute(&l, &ctx, &p) == 0) {
		is_double(p.compute_seconds, 0.370452279066624, TOL, "compute 0.3705 s");
		is_double(p.attention_seconds, 0.026388279066624, TOL, "attention 0.0264 s");
		is_double(p.comm_steps[PL_DP], 2450, TOL, "dp: 175 buckets x 14 steps");
		is_double(p.latency_seconds[PL_DP], 0.0196, TOL, "dp latency 2450 x 8 us");
		is_double(p.exposed_seconds[PL_DP], 0.262631813955584, TOL, "dp exposed");
		is_double(p.step_seconds, 0.633084093022208, TOL, "step = compute + exposed dp");
		ok(!p.peak_nominal && p.peak_tflops == 1000, "the given peak is used");
	}
	l.recompute = PL_RECOMPUTE_FULL;
	if (compute(&l, &ctx, &p) == 0)
		is_double(p.compute_seconds, 0.370452279066624 * 4.0 / 3.0, TOL,
			  "full recompute: 4/3 of the compute");
	/*
	 * pp2 on 2 GPUs of one domain, m = 8: compute 1481809116266496 / 1e15,
	 * PP 2^25 * 8 B / 450 GB/s + 8 messages * 2 us = 0.000612523235556 s,
	 * bubble 1/8 of both: step 1.667724344439808.
	 */
	plan_ctx_default(&ctx, 1, 2);
	ctx.gpu_peak_tflops = 1000;
	ctx.efficiency = 0.5;
	l = lay(1, 1, 1, 1, 2);
	if (compute(&l, &ctx, &p) == 0) {
		is_double(p.compute_seconds, 1.481809116266496, TOL, "pp2 compute");
		is_double(p.bubble_seconds, 0.18530270493775644, TOL, "bubble 1/8 of the path");
		is_double(p.step_seconds, 1.667724344439808, TOL, "pp2 step");
	}
	/* the defaults, and an unknown bandwidth */
	plan_ctx_default(&ctx, 2, 8);
	l = lay(8, 1, 1, 2, 1);
	if (compute(&l, &ctx, &p) == 0)
		ok(p.peak_nominal && p.peak_tflops == 989 && p.efficiency == 0.4,
		   "nominal: 989 TFLOP/s at 0.4");
	ctx.link[TOPO_LINK_LEAF].gbps = 0;
	if (compute(&l, &ctx, &p) == 0)
		ok(p.step_seconds == -1 && p.exposed_comm_seconds == -1, "unknown leaf: step -1");
}

int
main(void)
{
	plan(309);
	test_state();
	test_activations();
	test_traffic();
	test_schedule();
	test_links();
	test_errors();
	test_huge();
	test_warnings();
	test_warn_memory();
	test_warn_previous();
	test_uneven();
	test_assumed();
	test_vpp();
	test_sp();
	test_cp_algo();
	test_times();
	return done_testing();
}
