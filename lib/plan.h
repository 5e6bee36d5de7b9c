/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cost and memory planner: memory per GPU, bytes each parallel axis moves
 * per training step, pipeline bubble, batch arithmetic, estimated
 * communication time, and the warnings a user needs.  Pure arithmetic.
 */
#ifndef PL_PLAN_H
#define PL_PLAN_H

#include <stdbool.h>

#include "layout.h"
#include "topo.h"

#define PLAN_MAX_WARNINGS 16
#define PLAN_WARNING_LEN 320

/* What the planner needs to know about the machines. */
struct plan_ctx {
	long world;		/* GPUs (tasks) in the job; 0 unknown (not checked) */
	long domain_gpus;	/* GPUs per NVLink domain (node, or block); 0 unknown */
	double gpu_memory_gb;	/* per GPU; 0 unknown (no memory warning) */
	/*
	 * Bus bandwidths; gbps 0 = unknown.  An NVLink class of 0 with a PCIe
	 * class above 0 means the domain has no NVLink: in-domain traffic is
	 * then timed on PCIe.
	 */
	struct topo_linkclass link[TOPO_NLINKS];
	const struct pl_layout *previous;	/* the layout this one replaces; NULL none */
	/*
	 * The step-time model (docs/ARCHITECTURE.md, "The step time"): dense
	 * peak per GPU, TFLOP/s (0: a nominal H100 SXM, 989 bf16 dense), the
	 * fraction of it a step achieves (0: 0.4), and the fraction of GPU
	 * memory plan_auto keeps free (0: 0.1; plan_compute ignores it).
	 */
	double gpu_peak_tflops;
	double efficiency;
	double mem_headroom;
	/*
	 * The latency of one step of a collective on each link class, in
	 * microseconds (0: nominal, 2 NVLink, 3 PCIe, 8 leaf, 12 spine).
	 */
	double latency_us[TOPO_NLINKS];
};

#define PLAN_NOMINAL_PEAK_TFLOPS 989.0
#define PLAN_DEFAULT_EFFICIENCY 0.4
#define PLAN_DEFAULT_HEADROOM 0.1

struct plan {
	/* memory, GB = 10^9 bytes, per GPU */
	double state_gb_per_gpu;	/* params + grads + optimizer after ZeRO */
	double activation_gb_per_gpu;	/* transformer layers (see docs/ARCHITECTURE.md) */
	double logits_gb_per_gpu;	/* s*b*V logits of the last stage */
	double embedding_gb_per_gpu;	/* the embedding activations of the first stage */
	double total_gb_per_gpu;
	/* bytes each GPU sends per training step (all micro-batches) */
	double tp_bytes_per_step;
	double cp_bytes_per_step;
	double pp_bytes_per_step;
	double dp_bytes_per_step;
	double ep_bytes_per_step;
	/* schedule */
	long micro_batches;	/* per pipeline per step (= grad_accum_steps) */
	long grad_accum_steps;
	long global_batch;
	/*
	 * (pp-1)/m for even stages; for uneven ones (m+pp-1)*big/(m*layers/pp)
	 * - 1, big being the largest stage's layers.
	 */
	double bubble_fraction;
	long inflight_micro_batches;	/* min(pp, m): what the first 1F1B stage holds */
	long layers_per_stage;	/* the largest stage's layers: layers/pp when even */
	long layers_first_stage;	/* uneven stages (Megatron-Core): first and last */
	long layers_last_stage;	/* stage; both layers/pp when even */
	/*
	 * Estimated seconds per step each axis spends on its link class: 0 when
	 * the axis moves nothing, -1 when that link class's bandwidth is unknown.
	 */
	double comm_seconds[PL_NAXES];
	enum topo_link comm_link[PL_NAXES];
	/*
	 * Seconds per training step.  compute = FLOPs/(world*peak*efficiency)
	 * with FLOPs per token 6*params + 6*layers*hidden*seq (causal
	 * attention, forward and backward), 8 and 8 with full recompute, 6
	 * and 8 with selective.  Each axis's comm_seconds counts in exposed
	 * except what overlaps: ring CP hides behind the attention compute,
	 * DP behind the last micro-batch's backward (ZeRO-3: behind the whole
	 * compute); TP, Ulysses CP, PP and EP are on the critical path.
	 * bubble = bubble_fraction * (compute + exposed TP, CP, PP, EP).
	 * step = compute + exposed + bubble.  exposed and step are -1 when a
	 * link class an axis uses has no known bandwidth.
	 */
	/*
	 * The latency part: each axis's collective steps per training step
	 * (a ring of n takes 2(n-1) steps for an all-reduce, n-1 for an
	 * all-gather, reduce-scatter or all-to-all, one per ring attention
	 * block, one per PP message; DP in buckets of 40M parameters) times
	 * its link class's latency.  Counted with comm_seconds in exposed.
	 */
	double comm_steps[PL_NAXES];
	double latency_seconds[PL_NAXES];
	double compute_seconds;
	double attention_seconds;	/* the causal attention part of compute */
	double exposed_comm_seconds;
	double exposed_seconds[PL_NAXES];	/* each axis's part of it */
	double bubble_seconds;
	double step_seconds;
	double peak_tflops;		/* what compute used ... */
	double efficiency;
	bool peak_nominal;		/* ... and whether the peak was the nominal one */
	int nwarnings;
	char warnings[PLAN_MAX_WARNINGS][PLAN_WARNING_LEN];
};

/*
 * Bytes per GPU of the model state (params + grads + optimizer) for `params`
 * parameters held by the GPU, under ZeRO stage `zero` sharded over `dp`
 * replicas.  Returns -1 for an unknown optimizer, a stage outside 0..3, a
 * dp below 1 or a negative or non-finite params.
 */
double plan_state_bytes(double params, enum pl_optimizer opt, int zero, long dp);

/*
 * Activation bytes one transformer layer stores for backward, for a whole
 * micro-batch of b samples of s tokens, hidden size h, a heads, with no
 * parallelism.  Returns -1 for a negative input or an unknown recompute.
 */
double plan_layer_activation_bytes(long s, long b, long h, long a, enum pl_recompute r);

/*
 * Fill *out for a resolved layout (every size >= 1, dp resolved).  ctx may
 * be NULL: nominal bandwidths, nothing known about the machines.  Layers
 * that pp does not divide plan as uneven stages (the largest drives memory,
 * traffic and the bubble) with a warning.  A figure the user did not give
 * (the assumed model, the default seq) never refuses: it warns.  Returns 0,
 * or -1 with err naming the offending value (a given model's heads not
 * divisible by tp or layers fewer than pp, a given seq not divisible by cp,
 * gbs by mbs*dp, a size or model figure that is not positive, a world that
 * does not match the layout).  *out is zeroed first.
 */
int plan_compute(const struct pl_layout *l, const struct plan_ctx *ctx,
		 struct plan *out, pl_err_t *err);

/*
 * A plan_ctx for n nodes of g GPUs: world n*g (0 when that overflows or is
 * not positive), NVLink domain = node, GPU memory unknown, no previous
 * layout, and the nominal link bandwidths documented in plan.c.
 */
void plan_ctx_default(struct plan_ctx *ctx, long nodes, long gpus_per_node);

/* The bytes per GPU per step of one axis from a plan; 0 for a bad axis. */
double plan_axis_bytes(const struct plan *p, enum pl_axis a);

/*
 * plan_compute without the warnings: every figure, nwarnings 0.  What
 * plan_auto runs on each candidate.
 */
int plan_estimate(const struct pl_layout *l, const struct plan_ctx *ctx,
		  struct plan *out, pl_err_t *err);

/*
 * Whether vpp model chunks per pipeline rank fit layers over pp ranks:
 * pp*vpp divides the layers, or (pp > 2) it divides layers + 2, Megatron-
 * Core's split that counts the embedding and the loss as a layer on the
 * first and last stage (plan_compute's uneven stages are then exactly
 * that split: first and last a layer short).  vpp 1 always fits.
 */
bool plan_vpp_fits(long layers, long pp, long vpp);

#define PLAN_AUTO_TOP 5

struct plan_candidate {
	struct pl_layout layout;	/* resolved: every size set, auto_layout false */
	struct plan plan;		/* plan_compute's, warnings included */
};

struct plan_auto_result {
	size_t n;			/* candidates in top */
	struct plan_candidate top[PLAN_AUTO_TOP];	/* best first */
	long considered;		/* layouts the world size and the pins allow */
	long fitting;			/* of those, the ones whose memory fits */
	char why[PLAN_WARNING_LEN];	/* why top[0] beat top[1], one line */
};

/*
 * Choose the layout for an auto spec (req->auto_layout; a concrete req is
 * planned as the only candidate).  Enumerates the layouts ctx->world allows
 * under req's pins (tp dividing the NVLink domain, cp dividing seq, pp up
 * to the layers, even or uneven, vpp where pp*vpp divides the layers,
 * ZeRO 0..3, recompute, sp, ring or Ulysses CP), keeps those whose memory
 * fits ctx->gpu_memory_gb less ctx->mem_headroom (unknown memory: a
 * nominal 80 GB), and ranks them by plan.step_seconds.  Ties (within a
 * relative 1e-9) go to less memory, then to the smaller tp, pp, cp, vpp,
 * zero, recompute, sp off, ring: the same inputs always give the same
 * answer.  Link classes come from the planner's domain rule (an axis's
 * span against ctx->domain_gpus); the caller re-checks the placement on
 * the step's real nodes.  A link class of unknown bandwidth is timed at
 * its nominal figure.  Returns 0, or -1 with err set when the pins do not
 * fit ctx->world, ctx->world is not positive, or nothing fits (the message
 * gives the smallest memory found and what to change).
 */
int plan_auto(const struct pl_layout *req, const struct plan_ctx *ctx,
	      struct plan_auto_result *out, pl_err_t *err);

#endif
