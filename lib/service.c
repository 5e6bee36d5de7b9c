/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"

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

int
svc_run(const struct topo_map *m, const char *spec, const struct place_node *nodes,
	long nnodes, const struct svc_options *opt, struct svc_result *out, pl_err_t *err)
{
	static const struct svc_options none;
	struct pl_layout previous;
	double bytes[PL_NAXES];
	pl_err_t inner;
	long i;
	int a;

	memset(out, 0, sizeof(*out));
	if (!opt)
		opt = &none;
	if (layout_parse(spec, &out->layout, err) < 0)
		return -1;
	if (opt->previous && layout_parse(opt->previous, &previous, err) < 0)
		return -1;
	for (i = 0; i < nnodes; i++)
		out->world += nodes[i].ntasks;
	if (layout_resolve(&out->layout, out->world, err) < 0)
		return -1;
	if (opt->previous && layout_resolve(&previous, out->world, err) < 0)
		return -1;
	plan_ctx_default(&out->pctx, nnodes, 1);
	out->pctx.world = out->world;
	out->pctx.domain_gpus = svc_domain_gpus(m, nodes, nnodes);
	out->pctx.gpu_memory_gb = opt->gpu_memory_gb > 0 ? opt->gpu_memory_gb :
				  min_gpu_memory(m, nodes, nnodes);
	memcpy(out->pctx.link, m->link, sizeof(out->pctx.link));
	out->pctx.previous = opt->previous ? &previous : NULL;
	pl_err_clear(&inner);
	out->plan_ok = plan_compute(&out->layout, &out->pctx, &out->plan, &inner) == 0;
	out->pctx.previous = NULL;	/* it pointed at this stack frame */
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

void
svc_result_free(struct svc_result *r)
{
	if (r)
		place_result_free(&r->place);
}
