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
};

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

#endif
