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

struct pl_model {
	char name[32];		/* preset name, or "custom" */
	double params;		/* total parameters */
	long hidden;
	long layers;
	long heads;
	long vocab;
};

struct pl_layout {
	/* size[PL_DP] == 0 while dp is "auto" and unresolved. */
	long size[PL_NAXES];
	bool dp_auto;
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
};

/*
 * Parse spec into *out (all fields set: defaults where the spec is silent).
 * On error returns -1 and the message names the offending token and what is
 * accepted.  Does not know the world size: see layout_resolve().
 */
int layout_parse(const char *spec, struct pl_layout *out, pl_err_t *err);

/*
 * Fix the layout to a world size: resolve dp=auto, check that the product of
 * the sizes equals world, that gbs divides by mbs*dp, and the EP rules of the
 * order's framework.  Returns 0 or -1 with err set.
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
 * Write a canonical spec ("tp8,pp4,dp2,order=megatron") into buf.
 * Returns the length it needed (like snprintf).
 */
int layout_format(const struct pl_layout *l, char *buf, unsigned long size);

/* The model presets: 7b, 13b, 70b (Llama 2), 405b (Llama 3.1).  NULL if unknown. */
const struct pl_model *layout_model_preset(const char *name);

#endif
