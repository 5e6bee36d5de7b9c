/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"

/* Room for a formatted spec in svc_choice_text. */
#define SVC_SPEC_TEXT 256

long
svc_domain_gpus(const struct topo_map *m, const struct place_node *nodes, long nnodes)
{
	long best = 0, i, *block_gpus;

	/* One pass sums each NVLink block's GPUs in the step, one more takes
	 * the largest domain: linear in the step's nodes. */
	block_gpus = calloc((size_t)m->nblocks + 1, sizeof(*block_gpus));
	for (i = 0; i < nnodes; i++) {
		long mi = topo_find_node(m, nodes[i].name);
		const struct topo_nodetype *t = mi >= 0 ? topo_node_type(m, mi) : NULL;
		int b = mi >= 0 ? m->nodes[mi].block : -1;

		if (t && b >= 0 && m->blocks[b].nvlink && block_gpus)
			block_gpus[b] += t->ngpus;
		if (t && t->ngpus > best)
			best = t->ngpus;
	}
	for (i = 0; block_gpus && i < m->nblocks; i++)
		if (block_gpus[i] > best)
			best = block_gpus[i];
	/* Out of memory, the nodes alone stand in: a smaller domain only
	 * makes the planner's advice more cautious. */
	free(block_gpus);
	return best;
}

/* The smallest GPU memory among the step's nodes; 0 when unknown. */
static double
min_gpu_memory(const struct topo_map *m, const struct place_node *nodes, long nnodes)
{
	double best = 0;
	long i;

	for (i = 0; i < nnodes; i++) {
		const struct topo_nodetype *t = topo_node_type(m, topo_find_node(m, nodes[i].name));

		if (t && t->gpu_memory_gb > 0 && (best == 0 || t->gpu_memory_gb < best))
			best = t->gpu_memory_gb;
	}
	return best;
}

/* The plan, then the placement, of out->layout (resolved). */
static int
plan_and_place(const struct topo_map *m, const struct place_node *nodes, long nnodes,
	       const struct svc_options *opt, const struct pl_layout *previous,
	       struct svc_result *out, pl_err_t *err)
{
	double bytes[PL_NAXES];
	pl_err_t inner;
	int a;

	out->pctx.previous = previous;
	pl_err_clear(&inner);
	out->plan_ok = plan_compute(&out->layout, &out->pctx, &out->plan, &inner) == 0;
	out->pctx.previous = NULL;	/* it points at the caller's frame */
	out->plan_error[0] = out->place_error[0] = '\0';
	if (!out->plan_ok) {
		snprintf(out->plan_error, sizeof(out->plan_error), "%s", inner.text);
		/* A model the user typed must plan; the assumed default need not. */
		if (out->layout.have_model || !opt->need_place)
			return pl_err_set(err, "%s", inner.text);
	}
	for (a = 0; a < PL_NAXES; a++)
		bytes[a] = out->plan_ok ? plan_axis_bytes(&out->plan, a) : 0;
	pl_err_clear(&inner);
	out->place_ok = place_compute(&out->layout, m, nodes, nnodes,
				      out->plan_ok ? bytes : NULL, &out->place, &inner) == 0;
	if (!out->place_ok) {
		snprintf(out->place_error, sizeof(out->place_error), "%s", inner.text);
		if (opt->need_place)
			return pl_err_set(err, "%s", inner.text);
	}
	return 0;
}

/*
 * An auto spec: rank the candidates on the step's machines, then take the
 * best one that plans and places on the step's nodes.  The ranking uses
 * the planner's domain rule for each axis's link class; the placement is
 * the check that the step's real nodes agree.
 */
static int
choose(const struct topo_map *m, const struct place_node *nodes, long nnodes,
       const struct svc_options *opt, const struct pl_layout *previous,
       struct svc_result *out, pl_err_t *err)
{
	struct pl_layout req = out->layout;
	pl_err_t first;
	size_t k;

	out->choice = calloc(1, sizeof(*out->choice));
	if (!out->choice)
		return pl_err_set(err, "out of memory for the auto layout's candidates");
	if (plan_auto(&req, &out->pctx, out->choice, err) < 0)
		return -1;
	pl_err_clear(&first);
	for (k = 0; k < out->choice->n; k++) {
		pl_err_t why;

		pl_err_clear(&why);
		out->layout = out->choice->top[k].layout;
		if (plan_and_place(m, nodes, nnodes, opt, previous, out, &why) == 0 &&
		    (out->place_ok || !opt->need_place)) {
			out->choice_index = k;
			return 0;
		}
		if (!pl_err_isset(&first))
			first = why;
		place_result_free(&out->place);
		memset(&out->place, 0, sizeof(out->place));
	}
	return pl_err_set(err, "auto: none of the %zu best layouts places on the step's nodes; "
			  "the best one: %s", out->choice->n,
			  pl_err_isset(&first) ? first.text : "no candidate");
}

int
svc_run(const struct topo_map *m, const char *spec, const struct place_node *nodes,
	long nnodes, const struct svc_options *opt, struct svc_result *out, pl_err_t *err)
{
	static const struct svc_options none;
	struct pl_layout previous;
	long i;

	memset(out, 0, sizeof(*out));
	if (!opt)
		opt = &none;
	if (layout_parse(spec, &out->layout, err) < 0)
		return -1;
	if (opt->previous && layout_parse(opt->previous, &previous, err) < 0)
		return -1;
	for (i = 0; i < nnodes; i++)
		out->world += nodes[i].ntasks;
	if (!out->layout.auto_layout && layout_resolve(&out->layout, out->world, err) < 0)
		return -1;
	if (opt->previous && layout_resolve(&previous, out->world, err) < 0)
		return -1;
	plan_ctx_default(&out->pctx, nnodes, 1);
	out->pctx.world = out->world;
	out->pctx.domain_gpus = svc_domain_gpus(m, nodes, nnodes);
	out->pctx.gpu_memory_gb = opt->gpu_memory_gb > 0 ? opt->gpu_memory_gb :
				  min_gpu_memory(m, nodes, nnodes);
	memcpy(out->pctx.link, m->link, sizeof(out->pctx.link));
	out->pctx.mem_headroom = opt->mem_headroom;
	out->pctx.efficiency = opt->efficiency;
	out->pctx.gpu_peak_tflops = opt->gpu_peak_tflops;
	if (out->layout.auto_layout) {
		if (choose(m, nodes, nnodes, opt, opt->previous ? &previous : NULL, out, err) < 0)
			goto fail;
		return 0;
	}
	if (plan_and_place(m, nodes, nnodes, opt, opt->previous ? &previous : NULL, out, err) < 0)
		goto fail;
	return 0;
fail:
	svc_result_free(out);
	return -1;
}

void
svc_choice_text(const struct svc_result *r, char *buf, size_t size)
{
	const struct plan_auto_result *c = r->choice;
	char spec[SVC_SPEC_TEXT];

	if (!size)
		return;
	buf[0] = '\0';
	if (!c || r->choice_index >= c->n)
		return;
	layout_format(&r->layout, spec, sizeof(spec));
	snprintf(buf, size, "auto chose %s (estimated %.3g s a step; candidate %zu of the %ld "
		 "that fit, of %ld considered)%s%s", spec, r->plan.step_seconds,
		 r->choice_index + 1, c->fitting, c->considered,
		 r->choice_index == 0 && c->why[0] ? ": " : "",
		 r->choice_index == 0 ? c->why : ": the better ones do not place on the step's nodes");
}

void
svc_result_free(struct svc_result *r)
{
	if (!r)
		return;
	place_result_free(&r->place);
	memset(&r->place, 0, sizeof(r->place));
	free(r->choice);
	r->choice = NULL;
}
