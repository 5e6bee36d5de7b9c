/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One placement job from start to finish: resolve the layout against the
 * step, plan it (memory, traffic, warnings) and place it.  layoutctl, layoutd
 * and the plugin's in-process fallback all call this, so they cannot differ.
 */
#ifndef PL_SERVICE_H
#define PL_SERVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "layout.h"
#include "place.h"
#include "plan.h"
#include "topo.h"

struct svc_options {
	const char *previous;	/* the layout this one replaces, for the dp warning; NULL */
	double gpu_memory_gb;	/* overrides the map's; 0 = the map's */
	bool need_place;	/* a refused placement is an error (else a warning) */
	/* The planner's model (plan_ctx's fields of the same names; 0 = its
	 * defaults): what layoutctl plan's --headroom, --efficiency and
	 * --peak-tflops set. */
	double mem_headroom;
	double efficiency;
	double gpu_peak_tflops;
};

struct svc_result {
	struct pl_layout layout;	/* resolved (for auto: the layout chosen) */
	long world;
	struct plan_ctx pctx;
	struct plan plan;
	bool plan_ok;
	char plan_error[PL_ERR_TEXT];
	struct place_result place;
	bool place_ok;
	char place_error[PL_ERR_TEXT];
	/*
	 * For an auto spec: the planner's ranking, best first; NULL for any
	 * other spec.  choice_index is the candidate taken: the best one that
	 * places on the step's nodes.
	 */
	struct plan_auto_result *choice;
	size_t choice_index;
};

/*
 * Run spec on the step's nodes (Slurm order) of map m.  An auto spec
 * ("auto,model=70b") is first chosen by plan_auto() against the step's
 * nodes (their NVLink domain, GPU memory and the map's link classes), and
 * the best-ranked candidate that also places on them is taken; every node
 * that runs this on the same inputs takes the same one.  Returns 0, or -1
 * with err naming what is wrong with the spec or the step (then *out holds
 * nothing to free).  With !opt->need_place a refused placement is recorded
 * in out->place_error and is not an error; a plan that fails for the
 * assumed default model is not an error either (placement then orders axes
 * by the default weights).  Caller frees with svc_result_free().
 */
int svc_run(const struct topo_map *m, const char *spec, const struct place_node *nodes,
	    long nnodes, const struct svc_options *opt, struct svc_result *out,
	    pl_err_t *err);

void svc_result_free(struct svc_result *r);

/* One line for people: "auto chose tp8,pp2,dp2 (step 1.23 s est., 1st of
 * 5 fitting of 40 layouts): <why>", or "" when r holds no choice. */
void svc_choice_text(const struct svc_result *r, char *buf, size_t size);

/* GPUs of the largest NVLink domain among the step's nodes (a node, or the
 * step's part of an NVLink block). */
long svc_domain_gpus(const struct topo_map *m, const struct place_node *nodes, long nnodes);

#endif
