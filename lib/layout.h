/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The layout spec a user types after --parallel-layout=, e.g. "tp8,pp4",
 * "tp4,cp2,pp8,dp=auto", "tp8,pp4,order=megatron-tp-pp-dp,model=70b".
 */
#ifndef PL_LAYOUT_H
#define PL_LAYOUT_H

#include <stdbool.h>

#include "pl_err.h"

/* Parallel axes.  The numeric order is only an index, never a rank order. */
enum pl_axis {
	PL_TP = 0,
	PL_CP,
	PL_EP,
	PL_DP,
	PL_PP,
	PL_NAXES
};

/* "tp", "cp", "ep", "dp", "pp". */
const char *pl_axis_name(enum pl_axis a);

/* Which framework's rank convention the order follows. */
enum pl_order_kind {
	PL_ORDER_MEGATRON = 0,	/* Megatron-Core RankGenerator (also custom orders) */
	PL_ORDER_TORCHTITAN,	/* torch DeviceMesh ("pp","dp","cp","tp") */
};

enum pl_recompute {
	PL_RECOMPUTE_NONE = 0,
	PL_RECOMPUTE_SELECTIVE,
	PL_RECOMPUTE_FULL,
};

enum pl_optimizer {
	PL_OPT_ADAM = 0,	/* mixed precision: 2 param + 2 grad + 12 optimizer bytes */
	PL_OPT_SGD,		/* momentum: 2 + 2 + 8 bytes */
};

/* How context parallelism splits attention (cp_algo=). */
enum pl_cp_algo {
	PL_CP_RING = 0,		/* ring attention: K and V blocks travel round the CP ring */
	PL_CP_ULYSSES,		/* DeepSpeed-Ulysses: all-to-all from sequence to head shards */
};

/*
 * What the user typed, in pl_layout.given: one bit per axis size
 * (PL_GIVEN_AXIS(PL_TP) for "tp8"; dp=auto sets none), then the keys the
 * planner may otherwise choose itself.
 */
#define PL_GIVEN_AXIS(a) (1u << (a))
#define PL_GIVEN_ZERO (1u << (PL_NAXES + 0))
#define PL_GIVEN_GBS (1u << (PL_NAXES + 1))
#define PL_GIVEN_MBS (1u << (PL_NAXES + 2))
#define PL_GIVEN_RECOMPUTE (1u << (PL_NAXES + 3))
#define PL_GIVEN_VPP (1u << (PL_NAXES + 4))
#define PL_GIVEN_SP (1u << (PL_NAXES + 5))
#define PL_GIVEN_CPALGO (1u << (PL_NAXES + 6))

struct pl_model {
	char name[32];		/* preset name, or "custom" */
	double params;		/* total parameters */
	long hidden;
	long layers;
	long heads;
	long vocab;
};

struct pl_layout {
	/*
	 * size[PL_DP] == 0 while dp is "auto" and unresolved.  With
	 * auto_layout every size the user did not give is 0 too, until
	 * plan_auto() chooses it.
	 */
	long size[PL_NAXES];
	bool dp_auto;
	bool auto_layout;	/* the token "auto": the planner chooses (plan_auto) */
	unsigned given;		/* PL_GIVEN_* bits: what the spec typed */
	/* The order innermost first, e.g. {TP, CP, EP, DP, PP}. */
	enum pl_axis order[PL_NAXES];
	enum pl_order_kind order_kind;
	char order_name[48];	/* "megatron", "megatron-tp-pp-dp", "torchtitan" or the tp-cp-... text */

	bool have_model;	/* model= or params= etc. was given */
	struct pl_model model;	/* a default (7b) when !have_model */
	long seq;		/* tokens per sample; default 4096 */
	bool have_seq;		/* seq= was given (else the default: never refused) */
	long mbs;		/* micro-batch size; default 1 */
	long gbs;		/* global batch; 0 = not pinned */
	int zero;		/* 0..3 */
	enum pl_recompute recompute;
	enum pl_optimizer optimizer;
	/*
	 * Interleaved 1F1B: virtual pipeline stages per pipeline rank (vpp=);
	 * 1 = plain 1F1B.  A layout built by hand with 0 plans as 1.
	 */
	long vpp;
	bool sp;		/* sequence parallelism with TP (sp, sp=on|off) */
	enum pl_cp_algo cp_algo;	/* cp_algo=ring (default) or ulysses */
};

/*
 * Parse spec into *out (all fields set: defaults where the spec is silent).
 * On error returns -1 and the message names the offending token and what is
 * accepted.  Does not know the world size: see layout_resolve().  Checks
 * what it can without one: vpp > 1 needs pp > 1 (unless the planner is to
 * choose pp) and, with a model given, layers divisible by pp*vpp; Ulysses
 * needs the given heads divisible by tp*cp.
 */
int layout_parse(const char *spec, struct pl_layout *out, pl_err_t *err);

/*
 * Fix the layout to a world size: resolve dp=auto, check that the product of
 * the sizes equals world, that gbs divides by mbs*dp, and the EP rules of the
 * order's framework.  Returns 0 or -1 with err set.  An auto layout is
 * refused: plan_auto() chooses its sizes (and returns them resolved).
 */
int layout_resolve(struct pl_layout *l, long world, pl_err_t *err);

/* The product tp*cp*pp (the world size must be a multiple of it). */
long layout_model_parallel(const struct pl_layout *l);

/* The product tp*cp*pp*dp of a resolved layout; 0 while dp is unresolved. */
long layout_world(const struct pl_layout *l);

/*
 * Megatron-Core's expert data parallel size world/(tp*ep*pp) (the expert
 * tensor parallel size is tp); 0 while unresolved or not a divisor.
 */
long layout_expert_dp(const struct pl_layout *l);

/*
 * Write a canonical spec ("tp8,pp4,dp2,order=megatron") into buf; it
 * parses back to the same sizes and keys.  An auto layout not yet chosen
 * writes "auto," and only what was given; a chosen one is concrete.
 * Returns the length it needed (like snprintf).
 */
int layout_format(const struct pl_layout *l, char *buf, unsigned long size);

/* The model presets: 7b, 13b, 70b (Llama 2), 405b (Llama 3.1).  NULL if unknown. */
const struct pl_model *layout_model_preset(const char *name);

#endif
