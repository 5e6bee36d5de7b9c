/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The automatic layout: the rules of thumb (TP inside the node, CP only
 * when activations do not fit, PP across nodes, DP outermost), pins,
 * determinism, errors, and the published layouts it is compared with
 * (docs/ARCHITECTURE.md, "The automatic layout", keeps the table).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "tap.h"

/* GPT-3 175B as Megatron-LM's papers give it (96 layers, h 12288, 96 heads). */
#define GPT3 "params=175e9,hidden=12288,layers=96,heads=96,vocab=51200,seq=2048"

static struct plan_auto_result res;

/* plan_auto on nodes of gpn GPUs with mem GB (0: the nominal 80) and peak
 * TFLOP/s (0: nominal).  Returns its return code; err holds the message. */
static int
run(const char *spec, long nodes, long gpn, double mem, double peak, pl_err_t *err)
{
	struct plan_ctx ctx;
	struct pl_layout l;

	pl_err_clear(err);
	memset(&res, 0, sizeof(res));
	if (layout_parse(spec, &l, err) < 0)
		return -2;
	plan_ctx_default(&ctx, nodes, gpn);
	ctx.gpu_memory_gb = mem;
	ctx.gpu_peak_tflops = peak;
	return plan_auto(&l, &ctx, &res, err);
}

/* "tp8 cp1 pp16 dp128" of the winner */
static const char *
sizes(const struct plan_candidate *c, char *buf, size_t size)
{
	const struct pl_layout *l = &c->layout;

	snprintf(buf, size, "tp%ld cp%ld pp%ld dp%ld", l->size[PL_TP], l->size[PL_CP],
		 l->size[PL_PP], l->size[PL_DP]);
	return buf;
}

static int
chosen(const char *spec, long nodes, long gpn, double mem, double peak, const char *what)
{
	pl_err_t err;
	int rc = run(spec, nodes, gpn, mem, peak, &err);

	if (!ok(rc == 0 && res.n > 0, "%s: planned", what)) {
		diag("  %s", err.text);
		return -1;
	}
	return 0;
}

static void
test_errors(void)
{
	struct plan_ctx ctx;
	struct pl_layout l;
	pl_err_t err;

	ok(run("auto,tp8,pp16", 8, 8, 80, 0, &err) < 0, "tp8*pp16 on 64 GPUs: refused");
	like(err.text, "the pinned tp*pp = 128 does not divide the 64 GPUs", "names the pins");
	ok(run("auto,tp8,cp1,pp2,dp2", 8, 8, 80, 0, &err) < 0, "all four pinned, 32 of 64");
	like(err.text, "use 32 of the 64 GPUs", "says how many");
	ok(run("auto,model=405b", 1, 8, 80, 0, &err) < 0, "405b on 8 GPUs: nothing fits");
	like(err.text, "the smallest needs", "gives the smallest memory found");
	like(err.text, "use more GPUs", "and what to change");
	ok(run("auto,model=70b,gbs=3,tp1,pp1", 8, 8, 80, 0, &err) < 0, "gbs=3, tp1, pp1 on 64 GPUs");
	like(err.text, "satisfies the pins", "no layout satisfies the pins");
	layout_parse("auto,model=7b", &l, &err);
	plan_ctx_default(&ctx, 0, 8);
	pl_err_clear(&err);
	ok(plan_auto(&l, &ctx, &res, &err) < 0, "world 0: refused");
	like(err.text, "needs the job's world size", "says what is missing");
	plan_ctx_default(&ctx, 1, 8);
	ctx.mem_headroom = 1.5;
	pl_err_clear(&err);
	ok(plan_auto(&l, &ctx, &res, &err) < 0, "headroom 1.5: refused");
	/* a concrete spec is its own only candidate */
	if (chosen("tp8,pp2,model=7b", 2, 8, 80, 0, "a concrete spec") == 0) {
		is_int(res.n, 1, "one candidate");
		ok(res.top[0].layout.size[PL_TP] == 8 && res.top[0].layout.size[PL_DP] == 1,
		   "the given layout, resolved");
	}
}

/* Every candidate resolved, formats to a concrete spec that reads back. */
static void
test_resolved(void)
{
	struct pl_layout back;
	char spec[512];
	pl_err_t err;
	size_t i;
	int good = 1;

	if (chosen("auto,model=70b", 16, 8, 80, 0, "70b on 128 GPUs") < 0)
		return;
	ok(res.considered >= res.fitting && res.fitting >= (long)res.n && res.n == PLAN_AUTO_TOP,
	   "considered %ld >= fitting %ld >= 5 shown", res.considered, res.fitting);
	for (i = 0; i < res.n; i++) {
		const struct plan_candidate *c = &res.top[i];

		struct pl_layout copy = c->layout;

		layout_format(&c->layout, spec, sizeof(spec));
		pl_err_clear(&err);
		if (c->layout.auto_layout || layout_world(&c->layout) != 128 ||
		    layout_resolve(&copy, 128, &err) < 0 ||
		    strstr(spec, "auto") || layout_parse(spec, &back, &err) < 0 ||
		    memcmp(back.size, c->layout.size, sizeof(back.size)) != 0 ||
		    back.vpp != c->layout.vpp || back.sp != c->layout.sp ||
		    back.zero != c->layout.zero || back.recompute != c->layout.recompute ||
		    back.cp_algo != c->layout.cp_algo || back.gbs != c->layout.gbs ||
		    (i > 0 && c->plan.step_seconds < res.top[i - 1].plan.step_seconds) ||
		    c->plan.total_gb_per_gpu > 72.0) {
			diag("  candidate %zu '%s': %s", i, spec, err.text);
			good = 0;
		}
	}
	ok(good, "each candidate: resolved, fits 72 GB, in order, its spec reads back");
	if (chosen("auto,model=7b,ep4", 2, 8, 80, 0, "ep4 pinned on 16 GPUs") == 0) {
		good = 1;
		for (i = 0; i < res.n; i++) {
			struct pl_layout copy = res.top[i].layout;

			pl_err_clear(&err);
			if (copy.size[PL_EP] != 4 || layout_resolve(&copy, 16, &err) < 0) {
				diag("  candidate %zu: %s", i, err.text);
				good = 0;
			}
		}
		ok(good, "ep4: every candidate keeps ep4 and passes Megatron-Core's expert rules");
	}
	like(res.why, "faster than", "why names the runner-up");
}

static void
test_deterministic(void)
{
	static struct plan_auto_result first;
	size_t i;
	int same = 1;

	if (chosen("auto,model=405b,seq=8192", 128, 8, 80, 0, "405b on 1024 GPUs") < 0)
		return;
	first = res;
	if (chosen("auto,model=405b,seq=8192", 128, 8, 80, 0, "again") < 0)
		return;
	same = first.n == res.n && first.considered == res.considered &&
	       strcmp(first.why, res.why) == 0;
	for (i = 0; same && i < res.n; i++)
		same = memcmp(&first.top[i].layout, &res.top[i].layout, sizeof(res.top[i].layout)) == 0 &&
		       first.top[i].plan.step_seconds == res.top[i].plan.step_seconds;
	ok(same, "the same inputs give the same answer, bit for bit");
}

static void
test_pins(void)
{
	size_t i;
	int good = 1;

	if (chosen("auto,model=70b,tp4,gbs=1024,zero=1,vpp=2", 16, 8, 80, 0, "pins") < 0)
		return;
	for (i = 0; i < res.n; i++) {
		const struct pl_layout *l = &res.top[i].layout;

		if (l->size[PL_TP] != 4 || l->gbs != 1024 || l->zero != 1 || l->vpp != 2 ||
		    l->size[PL_PP] < 2)
			good = 0;
	}
	ok(good, "every candidate keeps tp4, gbs=1024, zero=1, vpp2 (so pp > 1)");
	if (chosen("auto,model=70b,seq=32768,cp_algo=ulysses,cp4", 16, 8, 80, 0, "Ulysses pinned") == 0)
		ok(res.top[0].layout.cp_algo == PL_CP_ULYSSES && res.top[0].layout.size[PL_CP] == 4,
		   "cp4 Ulysses kept");
	if (chosen("auto,model=70b,recompute=full,sp=off", 16, 8, 80, 0, "recompute, sp pinned") == 0)
		ok(res.top[0].layout.recompute == PL_RECOMPUTE_FULL && !res.top[0].layout.sp,
		   "full recompute, no sp");
	/* without gbs the planner pins one for all: 4M tokens, odd part of 96 */
	if (chosen("auto,model=7b", 12, 8, 80, 0, "96 GPUs, gbs not given") == 0)
		is_int(res.top[0].layout.gbs, 1536, "gbs 3 * 512: 6.3M tokens at seq 4096");
}

/* The article's rules of thumb. */
static void
test_rules(void)
{
	char b[64];
	size_t i;
	int good;

	/* TP inside the node: never wider than the NVLink domain, and the
	 * axis the biggest model gets as wide as the node */
	if (chosen("auto,model=405b,seq=8192,gbs=1024", 128, 8, 80, 0, "405b, 128 nodes of 8") == 0) {
		good = 1;
		for (i = 0; i < res.n; i++)
			if (8 % res.top[i].layout.size[PL_TP] != 0 ||
			    res.top[i].plan.comm_link[PL_TP] != TOPO_LINK_NVLINK)
				good = 0;
		ok(good, "TP inside the node: every candidate's tp divides 8, on NVLink");
		is_int(res.top[0].layout.size[PL_TP], 8, "405b: tp8, the whole node (%s)",
		       sizes(&res.top[0], b, sizeof(b)));
		/* PP across nodes */
		ok(res.top[0].layout.size[PL_PP] > 1 &&
		   res.top[0].plan.comm_link[PL_PP] == TOPO_LINK_LEAF,
		   "PP across nodes: pp%ld on the leaf links", res.top[0].layout.size[PL_PP]);
	}
	if (chosen("auto,model=70b", 32, 4, 80, 0, "70b, nodes of 4") == 0) {
		good = 1;
		for (i = 0; i < res.n; i++)
			if (res.top[i].layout.size[PL_TP] > 4)
				good = 0;
		ok(good, "nodes of 4 GPUs: no candidate has tp above 4");
	}
	/* CP only when activations do not fit */
	if (chosen("auto,model=7b,seq=2048", 1, 8, 80, 0, "7b at 2k on 8 GPUs") == 0)
		is_int(res.top[0].layout.size[PL_CP], 1, "7b at 2k: activations fit, cp1 (%s)",
		       sizes(&res.top[0], b, sizeof(b)));
	/* 70b at 4k on 128 GPUs fits without CP at tp8 (and without full
	 * recomputation): no candidate has CP, though ring CP hidden behind
	 * attention would look cheap to the cost model alone. */
	if (chosen("auto,model=70b,seq=4096", 16, 8, 80, 0, "70b at 4k on 128 GPUs") == 0) {
		good = 1;
		for (i = 0; i < res.n; i++)
			if (res.top[i].layout.size[PL_CP] != 1)
				good = 0;
		ok(good, "70b at 4k: activations fit without CP, no candidate has cp (%s first)",
		   sizes(&res.top[0], b, sizeof(b)));
	}
	/* 405B at 8k on 512 GPUs fits without CP only by recomputing every
	 * layer: CP joins the search, and wins (NVIDIA's recipe has cp2). */
	if (chosen("auto,model=405b,seq=8192,gbs=256", 64, 8, 80, 0, "405b at 8k on 512") == 0)
		ok(res.top[0].layout.size[PL_CP] > 1 && res.top[0].layout.recompute != PL_RECOMPUTE_FULL,
		   "405b at 8k on 512: CP instead of full recomputation (%s)",
		   sizes(&res.top[0], b, sizeof(b)));
	if (chosen("auto,model=405b,seq=131072,gbs=128", 2048, 8, 80, 0, "405b at 128k") == 0)
		ok(res.top[0].layout.size[PL_CP] >= 8, "405b at 128k: cp%ld",
		   res.top[0].layout.size[PL_CP]);
	{
		pl_err_t err;

		ok(run("auto,model=405b,seq=131072,gbs=128,cp1,recompute=selective", 2048, 8, 80,
		       0, &err) < 0, "405b at 128k with cp1 and selective recompute: nothing fits");
	}
	/* DP outermost: more GPUs at the same batch grow dp, the model axes stay */
	if (chosen("auto,model=70b,gbs=1024", 16, 8, 80, 0, "70b on 128") == 0) {
		struct plan_candidate small = res.top[0];

		if (chosen("auto,model=70b,gbs=1024", 64, 8, 80, 0, "70b on 512") == 0)
			ok(res.top[0].layout.size[PL_DP] > small.layout.size[PL_DP] &&
			   layout_model_parallel(&res.top[0].layout) <=
			   layout_model_parallel(&small.layout),
			   "DP outermost: 128 -> 512 GPUs grows dp (%ld -> %ld), not tp*cp*pp",
			   small.layout.size[PL_DP], res.top[0].layout.size[PL_DP]);
	}
}

/*
 * Published layouts.  Where ours differs the check pins what ours chose,
 * and docs/ARCHITECTURE.md says why.
 */
static void
test_published(void)
{
	char b[64];

	/* Llama 3 405B, 16,384 H100 80 GB, seq 8192, 16M tokens (gbs 2048):
	 * tp8 cp1 pp16 dp128.  Ours keeps tp8 and pp16 and takes cp2: at cp1
	 * the 16 micro-batches in flight on the first stage need full
	 * recompute to fit. */
	if (chosen("auto,model=405b,seq=8192,gbs=2048", 2048, 8, 80, 0, "Llama 3 405B, 8k") == 0) {
		is_str(sizes(&res.top[0], b, sizeof(b)), "tp8 cp2 pp16 dp64",
		       "Llama 3 8k: tp8 pp16 as published, cp2 dp64 where it has cp1 dp128");
		ok(res.top[0].layout.vpp > 1, "interleaved, vpp%ld", res.top[0].layout.vpp);
	}
	if (chosen("auto,model=405b,seq=8192,gbs=2048,cp1", 2048, 8, 80, 0, "Llama 3 8k, cp1") == 0) {
		size_t i;
		int found = 0;

		for (i = 0; i < res.n; i++)
			if (strcmp(sizes(&res.top[i], b, sizeof(b)), "tp8 cp1 pp16 dp128") == 0)
				found = res.top[i].layout.recompute == PL_RECOMPUTE_FULL;
		ok(found, "with cp1 pinned, Llama 3's tp8 pp16 dp128 is a candidate, with full "
		   "recompute");
	}
	/* seq 131072, gbs 128: tp8 cp16 pp16 dp8; ours cp16 with pp8 dp16 */
	if (chosen("auto,model=405b,seq=131072,gbs=128", 2048, 8, 80, 0, "Llama 3 405B, 128k") == 0) {
		is_int(res.top[0].layout.size[PL_CP], 16, "Llama 3 128k: cp16 as published");
		is_str(sizes(&res.top[0], b, sizeof(b)), "tp8 cp16 pp8 dp16",
		       "tp8 as published, pp8 dp16 where it has pp16 dp8");
	}
	/* NVIDIA's DGX Cloud benchmark: 405B on 512 H100, seq 8192, gbs 256:
	 * tp8 pp8 cp2 dp4 vp8, matched exactly */
	if (chosen("auto,model=405b,seq=8192,gbs=256", 64, 8, 80, 0, "405B on 512 H100") == 0) {
		is_str(sizes(&res.top[0], b, sizeof(b)), "tp8 cp2 pp8 dp4", "405B on 512: as published");
		is_int(res.top[0].layout.vpp, 8, "vp8 as published");
	}
	/* Megatron-LM (Narayanan et al. 2021): GPT-3 175B on 1536 A100 80 GB
	 * (312 TFLOP/s), gbs 1536: tp8 pp16 dp12.  Ours: tp4 pp8 dp48 with
	 * ZeRO-3; with the paper's means pinned (no ZeRO, full recompute, no
	 * sp, no CP) tp4 pp12 dp32. */
	if (chosen("auto," GPT3 ",gbs=1536", 192, 8, 80, 312, "GPT-3 175B, 1536 A100") == 0)
		is_str(sizes(&res.top[0], b, sizeof(b)), "tp4 cp1 pp8 dp48",
		       "GPT-3: ours tp4 pp8 dp48 (published tp8 pp16 dp12)");
	if (chosen("auto," GPT3 ",gbs=1536,zero=0,recompute=full,sp=off,cp1", 192, 8, 80, 312,
		   "GPT-3, 2021 means") == 0)
		is_str(sizes(&res.top[0], b, sizeof(b)), "tp4 cp1 pp12 dp32",
		       "GPT-3 with the paper's means: tp4 pp12 dp32");
}

int
main(void)
{
	plan(65);
	test_errors();
	test_resolved();
	test_deterministic();
	test_pins();
	test_rules();
	test_published();
	return done_testing();
}
