/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placement on fixed topologies, with hand-worked expectations. */
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "order.h"
#include "place.h"
#include "topo.h"
#include "plan.h"
#include "tap.h"

static struct pl_layout
lay(const char *spec, long world)
{
	struct pl_layout l;
	pl_err_t err;

	pl_err_clear(&err);
	if (layout_parse(spec, &l, &err) < 0 || layout_resolve(&l, world, &err) < 0)
		diag("layout %s: %s", spec, err.text);
	return l;
}

/* The emulated lab: node[1,3] under leaf0, node[2,4] under leaf1. */
static struct topo_map *
lab(int gpus)
{
	static const char *const none[] = { NULL };
	struct topo_map *m = topo_make_uniform(none, 0, gpus, NULL);
	pl_err_t err;

	pl_err_clear(&err);
	if (topo_read_slurm_text(m, "SwitchName=leaf0 Nodes=node[1,3]\n"
				 "SwitchName=leaf1 Nodes=node[2,4]\n"
				 "SwitchName=spine Switches=leaf[0-1]\n", "lab", true, &err) < 0)
		diag("lab: %s", err.text);
	return m;
}

static void
step4(struct place_node *n, long tasks)
{
	static const char *const names[] = { "node1", "node2", "node3", "node4" };
	int i;

	for (i = 0; i < 4; i++) {
		n[i].name = names[i];
		n[i].ntasks = tasks;
		n[i].tids = NULL;
	}
}

static void
test_lab_pipeline(void)
{
	struct topo_map *m = lab(8);
	struct pl_layout l = lay("tp8,pp4", 32);
	struct place_node n[4];
	struct place_result r;
	pl_err_t err;
	long i;
	int tp_ok = 1;

	pl_err_clear(&err);
	step4(n, 8);
	ok(place_compute(&l, m, n, 4, NULL, &r, &err) == 0, "tp8,pp4 on the lab places");
	/* Topology order node1, node3, node2, node4; pp is outermost. */
	is_int(r.tasks[0].co.c[PL_PP], 0, "node1 holds stage 0");
	is_int(r.tasks[16].co.c[PL_PP], 1, "node3 (procids 16-23) holds stage 1");
	is_int(r.tasks[8].co.c[PL_PP], 2, "node2 (procids 8-15) holds stage 2");
	is_int(r.tasks[24].co.c[PL_PP], 3, "node4 holds stage 3");
	is_int(r.tasks[8].rank, 16, "procid 8 is rank 16");
	is_int(r.rank_procid[16], 8, "rank 16 is procid 8");
	for (i = 0; i < 32; i++)
		tp_ok &= r.tasks[i].local_rank == r.tasks[i].co.c[PL_TP] &&
			 r.tasks[i].local_id == i % 8;
	ok(tp_ok, "LOCAL_RANK is the TP coordinate on plain 8-GPU nodes");
	/* Chain: 3 hops cross the leaves in block order, 1 in ours. */
	is_double(r.baseline.cross_switch_bytes, 3 * r.cost.cross_switch_bytes, 1e-12,
		  "cross-switch bytes are a third of block order's");
	is_double(r.cost.cross_node_bytes, r.baseline.cross_node_bytes, 1e-12,
		  "cross-node bytes are unchanged (every stage is a node)");
	place_result_free(&r);
	topo_free(m);
}

static void
test_cyclic_tids(void)
{
	struct topo_map *m = lab(8);
	struct pl_layout l = lay("tp2,pp2,dp2", 8);
	struct place_node n[4];
	struct place_result r;
	long tids[4][2], i, j;
	pl_err_t err;
	int node_ok = 1;

	pl_err_clear(&err);
	step4(n, 2);
	/* srun -m cyclic: task t on node t % 4. */
	for (i = 0; i < 4; i++) {
		for (j = 0; j < 2; j++)
			tids[i][j] = i + 4 * j;
		n[i].tids = tids[i];
	}
	ok(place_compute(&l, m, n, 4, NULL, &r, &err) == 0, "cyclic task ids place");
	for (i = 0; i < 8; i++)
		node_ok &= r.tasks[i].node == i % 4 && r.tasks[i].local_id == i / 4;
	ok(node_ok, "each procid stays on the node Slurm put it on");
	for (i = 0; i < 8; i += 2)
		ok(r.tasks[r.rank_procid[i]].node == r.tasks[r.rank_procid[i + 1]].node,
		   "TP pair %ld-%ld shares a node", i, i + 1);
	place_result_free(&r);
	tids[3][1] = 3;
	pl_err_clear(&err);
	ok(place_compute(&l, m, n, 4, NULL, &r, &err) < 0, "a task id listed twice is refused");
	like(err.text, "listed twice", "and named");
	topo_free(m);
}

static void
test_islands_and_nics(void)
{
	static const char *const names[] = { "a1", "a2" };
	struct topo_map *m = topo_make_uniform(names, 2, 8, NULL);
	struct topo_nodetype *t = &m->types[0];
	struct pl_layout l = lay("tp4,dp4", 16);
	struct place_node n[2] = { { "a1", 8, NULL }, { "a2", 8, NULL } };
	struct place_result r;
	pl_err_t err;
	int g, i;

	pl_err_clear(&err);
	/* Odd GPUs form one NVLink island, even ones another (a DGX-1-like
	 * numbering); NIC k serves GPUs 2k and 2k+1. */
	t->nnics = 4;
	t->nics = calloc(4, sizeof(*t->nics));
	for (g = 0; g < 4; g++)
		snprintf(t->nics[g].name, sizeof(t->nics[g].name), "mlx5_%d", g);
	for (g = 0; g < 8; g++) {
		t->gpus[g].island = g % 2;
		t->gpus[g].nic = g / 2;
	}
	ok(place_compute(&l, m, n, 2, NULL, &r, &err) == 0, "islands: places");
	for (i = 0; i < 4; i++)
		is_int(r.tasks[r.rank_procid[i]].local_rank, 2 * i, "rank %d uses even GPU %d", i, 2 * i);
	is_int(r.tasks[r.rank_procid[4]].local_rank, 1, "the second TP group starts on GPU 1");
	is_str(r.tasks[r.rank_procid[3]].nic_name, "mlx5_3", "rank 3 (GPU 6) uses its closest NIC mlx5_3");
	place_result_free(&r);
	topo_free(m);
}

static void
test_mixed_and_partial(void)
{
	static const char *const names[] = { "big1", "big2", "small1", "small2" };
	struct topo_map *m = topo_make_uniform(names, 4, 8, NULL);
	struct topo_nodetype four;
	struct pl_layout l = lay("tp4,dp6", 24);
	struct place_node n[4] = { { "big1", 8, NULL }, { "small1", 4, NULL },
				   { "big2", 8, NULL }, { "small2", 4, NULL } };
	struct place_result r;
	pl_err_t err;
	long i;
	int ok_tp = 1;

	pl_err_clear(&err);
	memset(&four, 0, sizeof(four));
	snprintf(four.name, sizeof(four.name), "four");
	four.ngpus = 4;
	four.gpus = calloc(4, sizeof(*four.gpus));
	for (i = 0; i < 4; i++) {
		four.gpus[i].index = (int)i;
		four.gpus[i].island = 0;
		four.gpus[i].nic = -1;
	}
	m->nodes[2].type = m->nodes[3].type = topo_add_type(m, &four, &err);
	topo_nodetype_clear(&four);
	ok(place_compute(&l, m, n, 4, NULL, &r, &err) == 0, "mixed 8- and 4-GPU nodes place");
	for (i = 0; i < 24; i++)
		ok_tp &= r.tasks[r.rank_procid[i]].node == r.tasks[r.rank_procid[i - i % 4]].node;
	ok(ok_tp, "every TP group on one node");
	place_result_free(&r);

	n[0].ntasks = 6;
	n[2].ntasks = 6;
	l = lay("tp2,dp10", 20);
	ok(place_compute(&l, m, n, 4, NULL, &r, &err) == 0, "partial nodes (6 of 8 GPUs) place");
	place_result_free(&r);
	l = lay("tp4,dp5", 20);
	ok(place_compute(&l, m, n, 4, NULL, &r, &err) < 0, "6 tasks cannot hold tp4 groups");
	like(err.text, "runs 6 tasks, not a multiple of tp=4", "and the node is named");
	n[1].ntasks = 5;
	pl_err_clear(&err);
	l = lay("tp1,dp21", 21);
	ok(place_compute(&l, m, n, 4, NULL, &r, &err) < 0, "more tasks than GPUs is refused");
	like(err.text, "runs 5 tasks but has 4 GPUs", "naming the node's GPUs");
	topo_free(m);
}

static void
test_refusals(void)
{
	struct topo_map *m = lab(8);
	struct pl_layout l = lay("tp16,pp2", 32);
	struct place_node n[4];
	struct place_result r;
	pl_err_t err;

	pl_err_clear(&err);
	step4(n, 8);
	ok(place_compute(&l, m, n, 4, NULL, &r, &err) < 0, "tp16 on 8-GPU nodes is refused");
	is_str(err.text, "tp=16 exceeds the 8 GPUs per NVLink domain of node node1", "with the reason");
	pl_err_clear(&err);
	l = lay("tp8,pp2", 16);
	ok(place_compute(&l, m, n, 4, NULL, &r, &err) < 0, "a world that differs from the step is refused");
	like(err.text, "runs 32 tasks but the layout's world size is 16", "with both sizes");
	pl_err_clear(&err);
	n[3].name = "node9";
	l = lay("tp8,pp4", 32);
	ok(place_compute(&l, m, n, 4, NULL, &r, &err) < 0, "a node outside the map is refused");
	like(err.text, "node 'node9' is not in the topology map", "naming the node");
	topo_free(m);
}

static void
test_blocks(void)
{
	struct topo_map *m = topo_synth_blocks(8, 4, 2);
	struct pl_layout l = lay("tp8,dp4", 32);
	struct place_node n[8];
	struct place_result r;
	pl_err_t err;
	long i;
	int same_block = 1;

	pl_err_clear(&err);
	for (i = 0; i < 8; i++) {
		n[i].name = m->nodes[i].name;
		n[i].ntasks = 4;
		n[i].tids = NULL;
	}
	/* Racks interleave: node i is in rack i % 4, so block order would split
	 * every TP group across racks. */
	ok(place_compute(&l, m, n, 8, NULL, &r, &err) == 0, "tp8 over 4-GPU nodes in NVLink blocks places");
	for (i = 0; i < 32; i++)
		same_block &= m->nodes[r.tasks[r.rank_procid[i]].node].block ==
			      m->nodes[r.tasks[r.rank_procid[i - i % 8]].node].block;
	ok(same_block, "every TP group inside one NVLink block");
	/* Only DP crosses blocks: 8 rings over 4 blocks, 4 edges each, at the
	 * default DP weight of 1. */
	is_double(r.cost.cross_switch_bytes, 32, 1e-12, "only the DP rings cross blocks");
	/* Block order: 4 TP rings over 2 nodes in different racks (2 edges at
	 * weight 8 each) plus the same 8 DP rings crossing racks: 64 + 32. */
	is_double(r.baseline.cross_switch_bytes, 96, 1e-12, "block order pays TP bytes across racks");
	place_result_free(&r);
	topo_free(m);
}

/* The quality gates of the benchmark, as a test. */
static void
test_quality_gates(void)
{
	static const struct { long nodes, per_leaf; int inter; const char *spec; } c[] = {
		{ 4, 2, 1, "tp8,pp4" },
		{ 16, 4, 1, "tp8,pp4,dp4" },
		{ 64, 8, 1, "tp8,pp8,dp8,model=70b" },
		{ 16, 4, 1, "tp4,cp2,pp4,dp4" },
		{ 16, 4, 0, "tp8,pp4,dp4" },
		{ 32, 8, 0, "tp8,dp32" },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct topo_map *m = topo_synth_fat_tree(c[i].nodes, 8, c[i].per_leaf, 4, c[i].inter);
		struct place_node *n = calloc((size_t)c[i].nodes, sizeof(*n));
		struct pl_layout l = lay(c[i].spec, c[i].nodes * 8);
		struct plan_ctx ctx;
		struct plan p;
		struct place_result r;
		double bytes[PL_NAXES];
		pl_err_t err;
		long k;
		int a;

		pl_err_clear(&err);
		for (k = 0; k < c[i].nodes; k++) {
			n[k].name = m->nodes[k].name;
			n[k].ntasks = 8;
		}
		plan_ctx_default(&ctx, c[i].nodes, 8);
		plan_compute(&l, &ctx, &p, &err);
		for (a = 0; a < PL_NAXES; a++)
			bytes[a] = plan_axis_bytes(&p, a);
		if (place_compute(&l, m, n, c[i].nodes, bytes, &r, &err) < 0) {
			ok(0, "%s: %s", c[i].spec, err.text);
		} else if (c[i].inter) {
			ok(r.cost.cross_switch_bytes * 1.5 <= r.baseline.cross_switch_bytes,
			   "%s interleaved over %ld nodes: >= 1.5x fewer cross-switch bytes (%.3g vs %.3g GB)",
			   c[i].spec, c[i].nodes, r.cost.cross_switch_bytes / 1e9,
			   r.baseline.cross_switch_bytes / 1e9);
		} else {
			ok(r.cost.cross_switch_bytes <= r.baseline.cross_switch_bytes,
			   "%s contiguous over %ld nodes: never worse than block order", c[i].spec,
			   c[i].nodes);
		}
		place_result_free(&r);
		free(n);
		topo_free(m);
	}
}

/* On a rail-optimised fabric (one NIC per GPU), DP and PP peers on other
 * nodes keep the GPU index and so the rail. */
static void
test_rails(void)
{
	struct topo_map *m = topo_synth_fat_tree(8, 8, 2, 4, 1);
	struct pl_layout l = lay("tp8,pp2,dp4", 64);
	struct place_node n[8];
	struct place_result r;
	pl_err_t err;
	long i;
	int rails = 1;

	pl_err_clear(&err);
	for (i = 0; i < 8; i++) {
		n[i].name = m->nodes[i].name;
		n[i].ntasks = 8;
		n[i].tids = NULL;
	}
	ok(place_compute(&l, m, n, 8, NULL, &r, &err) == 0, "rails: places");
	for (i = 0; i < 64; i++) {
		const struct place_task *t = &r.tasks[r.rank_procid[i]];
		/* Megatron default order: dp stride 8, pp stride 32. */
		const struct place_task *dpeer = &r.tasks[r.rank_procid[(i + 8) % 64]];
		const struct place_task *ppeer = &r.tasks[r.rank_procid[(i + 32) % 64]];

		rails &= t->local_rank == dpeer->local_rank && t->local_rank == ppeer->local_rank &&
			 strcmp(t->nic_name, dpeer->nic_name) == 0 && t->node != dpeer->node;
	}
	ok(rails, "every DP and PP peer uses the same GPU index and NIC rail on another node");
	place_result_free(&r);
	topo_free(m);
}

static void
test_deterministic(void)
{
	struct topo_map *m = topo_synth_fat_tree(64, 8, 8, 4, 1);
	struct place_node n[64];
	struct pl_layout l = lay("tp4,cp2,pp4,dp16", 512);
	struct place_result a, b;
	pl_err_t err;
	long i;
	int same = 1;

	pl_err_clear(&err);
	for (i = 0; i < 64; i++) {
		n[i].name = m->nodes[i].name;
		n[i].ntasks = 8;
		n[i].tids = NULL;
	}
	place_compute(&l, m, n, 64, NULL, &a, &err);
	place_compute(&l, m, n, 64, NULL, &b, &err);
	for (i = 0; i < 512; i++)
		same &= a.tasks[i].rank == b.tasks[i].rank && a.tasks[i].local_rank == b.tasks[i].local_rank;
	ok(same, "the same inputs give the same ranks");
	place_result_free(&a);
	place_result_free(&b);
	topo_free(m);
}

int
main(void)
{
	plan(51);
	test_lab_pipeline();
	test_cyclic_tids();
	test_islands_and_nics();
	test_mixed_and_partial();
	test_refusals();
	test_blocks();
	test_quality_gates();
	test_rails();
	test_deterministic();
	return done_testing();
}
