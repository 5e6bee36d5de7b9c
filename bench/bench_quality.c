/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Placement quality: bytes per step that cross leaf switches (or NVLink
 * blocks), ours against Slurm's block order with RANK = SLURM_PROCID, on fat
 * trees whose node names interleave across leaves, on fat trees whose names
 * follow the leaves, and on NVLink-block clusters.  Targets: at least 1.5x
 * fewer on interleaved fabrics, never worse anywhere.
 *
 * Both figures are recomputed here from the tasks place_compute returned
 * (lib/place_ref.h: its own cost model, none of the placer's bookkeeping),
 * after checking that every task sits where Slurm put it, the ranks are a
 * permutation and no GPU is used twice; the cost the placer reports for
 * itself must agree with the recomputed one, or the gate fails.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "place.h"
#include "topo.h"
#include "place_ref.h"
#include "plan.h"

struct qcase {
	const char *fabric;	/* "interleaved", "contiguous", "blocks" */
	long nodes;
	int gpus;
	long per_group;		/* nodes per leaf or per block */
	const char *spec;
};

static const struct qcase cases[] = {
	{ "interleaved", 4, 8, 2, "tp8,pp4" },
	{ "interleaved", 4, 8, 2, "tp8,pp2,dp2" },
	{ "interleaved", 4, 8, 2, "tp8,pp2,dp2,model=70b" },
	{ "interleaved", 16, 8, 4, "tp8,pp4,dp4" },
	{ "interleaved", 16, 8, 4, "tp4,cp2,pp4,dp4" },
	{ "interleaved", 64, 8, 8, "tp8,pp8,dp8,model=70b" },
	{ "interleaved", 64, 8, 16, "tp8,pp4,dp16,model=13b" },
	{ "interleaved", 128, 8, 32, "tp8,pp16,dp8,model=70b" },
	{ "interleaved", 32, 8, 8, "tp8,dp32" },
	{ "contiguous", 16, 8, 4, "tp8,pp4,dp4" },
	{ "contiguous", 64, 8, 8, "tp8,pp8,dp8,model=70b" },
	{ "contiguous", 32, 8, 8, "tp4,cp2,pp4,dp8" },
	{ "contiguous", 32, 8, 8, "tp8,dp32" },
	{ "blocks", 32, 4, 16, "tp8,pp4,dp4" },
	{ "blocks", 72, 4, 18, "tp4,pp4,dp18" },
	{ "blocks", 64, 4, 16, "tp16,pp4,dp4,model=70b" },
};

/* Relative agreement of two byte counts. */
static int
agree(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1.0);
}

/* Run one case: the recomputed costs in *ours and *base; -1 when the
 * placement fails, is not a valid placement of the step, or reports
 * costs other than those of the tasks it returned. */
static int
run_case(const struct qcase *q, struct ref_cost *ours, struct ref_cost *base)
{
	struct topo_map *m;
	struct place_node *nodes = NULL;
	struct place_result r;
	struct pl_layout l;
	struct plan_ctx ctx;
	struct plan p;
	double bytes[PL_NAXES];
	char why[256] = "";
	pl_err_t err;
	long i;
	int a, rv = -1, placed = 0;

	pl_err_clear(&err);
	if (strcmp(q->fabric, "blocks") == 0)
		m = topo_synth_blocks(q->nodes, q->gpus, q->per_group);
	else
		m = topo_synth_fat_tree(q->nodes, q->gpus, q->per_group, 4,
				   strcmp(q->fabric, "interleaved") == 0);
	nodes = calloc((size_t)q->nodes, sizeof(*nodes));
	if (!m || !nodes)
		goto out;
	for (i = 0; i < q->nodes; i++) {
		nodes[i].name = m->nodes[i].name;
		nodes[i].ntasks = q->gpus;
	}
	if (layout_parse(q->spec, &l, &err) < 0 || layout_resolve(&l, q->nodes * q->gpus, &err) < 0)
		goto out;
	plan_ctx_default(&ctx, q->nodes, q->gpus);
	ctx.domain_gpus = strcmp(q->fabric, "blocks") == 0 ? q->gpus * q->per_group : q->gpus;
	if (plan_compute(&l, &ctx, &p, &err) < 0)
		goto out;
	for (a = 0; a < PL_NAXES; a++)
		bytes[a] = plan_axis_bytes(&p, a);
	if (place_compute(&l, m, nodes, q->nodes, bytes, &r, &err) < 0)
		goto out;
	placed = 1;
	if (ref_recost(&l, m, nodes, q->nodes, &r, bytes, ours, base, why, sizeof(why)) < 0)
		goto out;
	if (!agree(ours->sw, r.cost.cross_switch_bytes) || !agree(ours->node, r.cost.cross_node_bytes) ||
	    !agree(base->sw, r.baseline.cross_switch_bytes) ||
	    !agree(base->node, r.baseline.cross_node_bytes)) {
		snprintf(why, sizeof(why),
			 "reported cost %.6g/%.6g GB (baseline %.6g/%.6g) but its tasks cost %.6g/%.6g (baseline %.6g/%.6g)",
			 r.cost.cross_switch_bytes / 1e9, r.cost.cross_node_bytes / 1e9,
			 r.baseline.cross_switch_bytes / 1e9, r.baseline.cross_node_bytes / 1e9,
			 ours->sw / 1e9, ours->node / 1e9, base->sw / 1e9, base->node / 1e9);
		goto out;
	}
	if (base->sw <= 0) {
		snprintf(why, sizeof(why), "the baseline crosses no switch: nothing to measure");
		goto out;
	}
	rv = 0;
out:
	if (rv < 0)
		fprintf(stderr, "bench_quality: %s %s: %s\n", q->fabric, q->spec,
			why[0] ? why : err.text);
	if (placed)
		place_result_free(&r);
	free(nodes);
	topo_free(m);
	return rv;
}

int
main(void)
{
	size_t i;
	double worst_interleaved = INFINITY;
	int never_worse = 1;

	printf("# placement quality: cross-switch GB per step, ours vs Slurm block order\n");
	printf("%-12s %6s %5s %-28s %14s %14s %8s\n", "fabric", "nodes", "group", "layout",
	       "ours_GB", "baseline_GB", "ratio");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct qcase *q = &cases[i];
		struct ref_cost co, cb;
		double ours, base, ratio;

		if (run_case(q, &co, &cb) < 0)
			return 1;
		ours = co.sw / 1e9;
		base = cb.sw / 1e9;
		ratio = ours > 0 ? base / ours : (base > 0 ? INFINITY : 1.0);
		printf("%-12s %6ld %5ld %-28s %14.3f %14.3f %8.2f\n", q->fabric, q->nodes,
		       q->per_group, q->spec, ours, base, ratio);
		if (ours > base * (1 + 1e-9))
			never_worse = 0;
		if (strcmp(q->fabric, "interleaved") == 0 && ratio < worst_interleaved)
			worst_interleaved = ratio;
	}
	printf("# worst ratio on interleaved fabrics: %.2f (target >= 1.5): %s\n",
	       worst_interleaved, worst_interleaved >= 1.5 ? "met" : "MISSED");
	printf("# never worse than the baseline: %s\n", never_worse ? "met" : "MISSED");
	return worst_interleaved >= 1.5 && never_worse ? 0 : 1;
}
