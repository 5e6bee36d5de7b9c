/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placement on fixed topologies, with hand-worked expectations. */
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "order.h"
#include "place.h"
#include "topo.h"
#include "place_ref.h"
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

static int
is_close(double a, double b)
{
	double d = a > b ? a - b : b - a;

	return d <= 1e-9 * ((a < 0 ? -a : a) + (b < 0 ? -b : b) + 1.0);
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
		ok(plan_compute(&l, &ctx, &p, &err) == 0, "%s: plans (%s)", c[i].spec, err.text);
		for (a = 0; a < PL_NAXES; a++)
			bytes[a] = plan_axis_bytes(&p, a);
		ok(bytes[PL_TP] > 0 && bytes[PL_DP] + bytes[PL_PP] > 0, "%s: the axes move bytes",
		   c[i].spec);
		if (place_compute(&l, m, n, c[i].nodes, bytes, &r, &err) < 0) {
			ok(0, "%s: %s", c[i].spec, err.text);
			ok(0, "%s: not placed", c[i].spec);
		} else {
			struct ref_cost ours = { 0, 0 }, base = { 0, 0 };
			char why[256] = "";
			int valid = ref_recost(&l, m, n, c[i].nodes, &r, bytes, &ours, &base, why,
					       sizeof(why)) == 0;

			ok(valid && is_close(ours.sw, r.cost.cross_switch_bytes) &&
			   is_close(base.sw, r.baseline.cross_switch_bytes),
			   "%s: the reported costs are those of the tasks returned %s", c[i].spec, why);
			if (c[i].inter)
				ok(valid && base.sw > 0 && ours.sw * 1.5 <= base.sw,
				   "%s interleaved over %ld nodes: >= 1.5x fewer cross-switch bytes (%.3g vs %.3g GB)",
				   c[i].spec, c[i].nodes, ours.sw / 1e9, base.sw / 1e9);
			else
				ok(valid && base.sw > 0 && ours.sw <= base.sw * (1 + 1e-12),
				   "%s contiguous over %ld nodes: never worse than block order", c[i].spec,
				   c[i].nodes);
			place_result_free(&r);
		}
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
	struct place_node n[64], copy[64];
	struct pl_layout l = lay("tp4,cp2,pp4,dp16", 512);
	struct place_result a, b;
	char names[64][TOPO_NAME];
	pl_err_t err;
	long i;
	int same = 1, ra, rb;

	pl_err_clear(&err);
	for (i = 0; i < 64; i++) {
		n[i].name = m->nodes[i].name;
		n[i].ntasks = 8;
		n[i].tids = NULL;
		/* The same names at other addresses: nothing may depend on them. */
		snprintf(names[i], sizeof(names[i]), "%s", m->nodes[i].name);
		copy[i] = n[i];
		copy[i].name = names[i];
	}
	ra = place_compute(&l, m, n, 64, NULL, &a, &err);
	rb = place_compute(&l, m, copy, 64, NULL, &b, &err);
	ok(ra == 0 && rb == 0, "both place (%s)", err.text);
	for (i = 0; ra == 0 && rb == 0 && i < 512; i++)
		same &= a.tasks[i].rank == b.tasks[i].rank && a.tasks[i].local_rank == b.tasks[i].local_rank;
	ok(ra == 0 && rb == 0 && same, "the same inputs give the same ranks");
	if (ra == 0)
		place_result_free(&a);
	if (rb == 0)
		place_result_free(&b);
	topo_free(m);
}


/* A map of 8-GPU nodes node1..node4 (and more) with this topology.conf. */
static struct topo_map *
fabric(const char *conf)
{
	static const char *const none[] = { NULL };
	struct topo_map *m = topo_make_uniform(none, 0, 8, NULL);
	pl_err_t err;

	pl_err_clear(&err);
	if (topo_read_slurm_text(m, conf, "test", true, &err) < 0)
		diag("fabric: %s", err.text);
	return m;
}

/*
 * EP: tp2,ep2,dp4 over node1..node4 with 2 tasks each on the lab (leaves
 * {node1,node3} and {node2,node4}), bytes tp 8, dp 1, ep 3.  Expert groups
 * (Megatron: tp fastest, then ep): {0,2} {1,3} {4,6} {5,7}; dense DP rings
 * {0,2,4,6} and {1,3,5,7}.  Topology order node1, node3, node2, node4 gets
 * ranks 0-1, 2-3, 4-5, 6-7: every expert group stays under one leaf.  By
 * hand: EP 4 groups x 2 directed pairs x 3 = 24 cross-node, 0 cross-switch;
 * DP 2 rings x 4 edges (n1-n3, n3-n2, n2-n4, n4-n1) = 8 cross-node, 4 of
 * them across leaves.  Block order: EP pairs (n1,n2) and (n3,n4) all cross
 * leaves (24 + 24), the DP ring n1-n2-n3-n4 crosses on every edge (8 + 8).
 */
static void
test_ep(void)
{
	struct topo_map *m = lab(8);
	struct pl_layout l = lay("tp2,ep2,dp4", 8);
	double bytes[PL_NAXES] = { 0 };
	struct place_node n[4];
	struct place_result r;
	struct ref_cost ours = { 0, 0 }, base = { 0, 0 };
	char why[256] = "";
	pl_err_t err;
	int i;

	pl_err_clear(&err);
	step4(n, 2);
	bytes[PL_TP] = 8;
	bytes[PL_DP] = 1;
	bytes[PL_EP] = 3;
	ok(place_compute(&l, m, n, 4, bytes, &r, &err) == 0, "tp2,ep2,dp4 places (%s)", err.text);
	is_int(r.tasks[4].rank, 2, "node3's first task (procid 4) is rank 2");
	is_int(r.tasks[2].rank, 4, "node2's first task (procid 2) is rank 4");
	for (i = 0; i < 8; i += 4)
		ok(r.tasks[r.rank_procid[i]].co.c[PL_EP] == 0 &&
		   r.tasks[r.rank_procid[i + 2]].co.c[PL_EP] == 1 &&
		   m->nodes[topo_find_node(m, n[r.tasks[r.rank_procid[i]].node].name)].sw ==
		   m->nodes[topo_find_node(m, n[r.tasks[r.rank_procid[i + 2]].node].name)].sw,
		   "expert group {%d,%d} under one leaf", i, i + 2);
	is_double(r.cost.cross_node_bytes, 32, 1e-9, "cross-node: 24 EP + 8 DP");
	is_double(r.cost.cross_switch_bytes, 4, 1e-9, "cross-switch: 4 DP edges, no EP");
	is_double(r.baseline.cross_node_bytes, 32, 1e-9, "block order: the same cross-node bytes");
	is_double(r.baseline.cross_switch_bytes, 32, 1e-9, "block order: 24 EP + 8 DP across leaves");
	ok(ref_recost(&l, m, n, 4, &r, bytes, &ours, &base, why, sizeof(why)) == 0 &&
	   is_close(ours.node, 32) && is_close(ours.sw, 4) && is_close(base.sw, 32),
	   "the reference agrees %s", why);
	place_result_free(&r);
	topo_free(m);
}

/*
 * node2 hangs under leaf0 and leaf1; node1 only under leaf0, node3 only
 * under leaf1.  tp8,dp3 in block order: the DP ring node1-node2-node3
 * crosses leaves only on its closing edge node3-node1; the PP chain of
 * tp8,pp3 over node3, node2, node1 crosses none.  Bytes tp 8, dp 1, pp 2.
 */
static void
test_two_leaves(void)
{
	struct topo_map *m = fabric("SwitchName=leaf0 Nodes=node[1-2]\n"
				    "SwitchName=leaf1 Nodes=node[2-3]\n"
				    "SwitchName=spine Switches=leaf[0-1]\n");
	struct pl_layout l = lay("tp8,dp3", 24);
	double bytes[PL_NAXES] = { 0 };
	struct place_node n[3] = { { "node1", 8, NULL }, { "node2", 8, NULL }, { "node3", 8, NULL } };
	struct place_result r;
	pl_err_t err;

	pl_err_clear(&err);
	bytes[PL_TP] = 8;
	bytes[PL_DP] = 1;
	bytes[PL_PP] = 2;
	ok(m->nodes[topo_find_node(m, "node2")].sw2 >= 0, "node2 is under two leaves");
	ok(place_compute(&l, m, n, 3, bytes, &r, &err) == 0, "tp8,dp3 places (%s)", err.text);
	is_double(r.baseline.cross_node_bytes, 8 * 3, 1e-9, "block order: 8 DP rings x 3 edges");
	is_double(r.baseline.cross_switch_bytes, 8 * 1, 1e-9,
		  "only the edge node3-node1 crosses (node2 shares a leaf with both)");
	ok(r.cost.cross_switch_bytes <= 8 + 1e-9, "ours is no worse");
	place_result_free(&r);
	n[0].name = "node3";
	n[2].name = "node1";
	l = lay("tp8,pp3", 24);
	ok(place_compute(&l, m, n, 3, bytes, &r, &err) == 0, "tp8,pp3 places (%s)", err.text);
	is_double(r.baseline.cross_node_bytes, 8 * 2 * 2, 1e-9, "block order: 8 chains x 2 edges x 2");
	is_double(r.baseline.cross_switch_bytes, 0, 1e-9,
		  "node3-node2 and node2-node1 share leaf1 and leaf0");
	place_result_free(&r);
	topo_free(m);
}

/*
 * Axes after TP follow traffic.  Leaves {node1,node4} and {node2,node3}:
 * topology order node1, node4, node2, node3, so the axis placed right
 * after TP pairs nodes under one leaf and the next one crosses.  With PP
 * heavier (pp 5, dp 1) node4 must hold stage 1 of the same DP replica as
 * node1; with DP heavier (dp 5, pp 1) it must hold replica 1 of stage 0.
 * Costs by hand: the light axis crosses on 16 groups.
 */
static void
test_traffic_priority(void)
{
	struct topo_map *m = fabric("SwitchName=leaf0 Nodes=node[1,4]\n"
				    "SwitchName=leaf1 Nodes=node[2-3]\n"
				    "SwitchName=spine Switches=leaf[0-1]\n");
	struct pl_layout l = lay("tp8,pp2,dp2", 32);
	double bytes[PL_NAXES] = { 0 };
	struct place_node n[4];
	struct place_result r;
	pl_err_t err;

	pl_err_clear(&err);
	step4(n, 8);
	bytes[PL_TP] = 8;
	bytes[PL_PP] = 5;
	bytes[PL_DP] = 1;
	ok(place_compute(&l, m, n, 4, bytes, &r, &err) == 0, "pp-heavy places (%s)", err.text);
	ok(r.tasks[24].co.c[PL_PP] == 1 && r.tasks[24].co.c[PL_DP] == 0,
	   "pp heavier: node4 holds stage 1 of replica 0 (pp %ld, dp %ld)", r.tasks[24].co.c[PL_PP],
	   r.tasks[24].co.c[PL_DP]);
	ok(r.tasks[8].co.c[PL_PP] == 0 && r.tasks[8].co.c[PL_DP] == 1,
	   "pp heavier: node2 holds stage 0 of replica 1");
	/* 16 DP rings over 2 nodes (2 edges) cross; 16 PP chains (1 edge) do not. */
	is_double(r.cost.cross_switch_bytes, 16 * 2 * 1, 1e-9, "only DP crosses leaves");
	is_double(r.cost.cross_node_bytes, 16 * 2 * 1 + 16 * 5, 1e-9, "cross-node: DP and PP");
	place_result_free(&r);
	bytes[PL_PP] = 1;
	bytes[PL_DP] = 5;
	ok(place_compute(&l, m, n, 4, bytes, &r, &err) == 0, "dp-heavy places (%s)", err.text);
	ok(r.tasks[24].co.c[PL_PP] == 0 && r.tasks[24].co.c[PL_DP] == 1,
	   "dp heavier: node4 holds replica 1 of stage 0 (pp %ld, dp %ld)", r.tasks[24].co.c[PL_PP],
	   r.tasks[24].co.c[PL_DP]);
	is_double(r.cost.cross_switch_bytes, 16 * 1 * 1, 1e-9, "only PP crosses leaves");
	place_result_free(&r);
	topo_free(m);
}

/* layoutctl place --nodes node1,node1,node2,node2: the two node1 entries
 * would get the same eight GPUs (ranks 0 and 8 on GPU 0). */
static void
test_repeated_node(void)
{
	struct topo_map *m = lab(8);
	struct pl_layout l = lay("tp8", 32);
	struct place_node n[4] = { { "node1", 8, NULL }, { "node1", 8, NULL },
				   { "node2", 8, NULL }, { "node2", 8, NULL } };
	struct place_result r;
	pl_err_t err;

	pl_err_clear(&err);
	ok(place_compute(&l, m, n, 4, NULL, &r, &err) < 0, "a node listed twice is refused");
	is_str(err.text, "node 'node1' is listed twice in the step (positions 1 and 2 of 4): each node may appear once",
	       "naming it and where");
	pl_err_clear(&err);
	n[1].name = "node3";
	n[3].name = "node1";
	ok(place_check_nodes(n, 4, &err) < 0, "a repeat far apart");
	like(err.text, "node 'node1' is listed twice in the step (positions 1 and 4 of 4)",
	     "the first repeat in the caller's order");
	pl_err_clear(&err);
	n[3].name = "node4";
	ok(place_check_nodes(n, 4, &err) == 0 && !pl_err_isset(&err), "distinct nodes pass");
	topo_free(m);
}

/* The reference recomputes what place_compute reports, on every kind of step. */
static void
test_reference(void)
{
	static const struct { const char *fab; long nodes, group; const char *spec; int cyclic; } c[] = {
		{ "tree", 8, 2, "tp8,pp2,dp4", 0 },
		{ "tree", 8, 2, "tp2,cp2,pp2,dp8", 1 },
		{ "tree", 16, 4, "tp4,ep4,dp8,pp4", 0 },
		{ "tree", 16, 4, "tp8,dp16,order=torchtitan", 0 },
		{ "tree", 12, 3, "tp8,pp3,dp4,order=megatron-tp-pp-dp", 1 },
		{ "blocks", 16, 4, "tp16,pp2,dp2", 0 },
		{ "blocks", 16, 4, "tp4,ep2,dp16", 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int gpus = strcmp(c[i].fab, "blocks") == 0 ? 4 : 8;
		struct topo_map *m = gpus == 4 ? topo_synth_blocks(c[i].nodes, 4, c[i].group) :
					topo_synth_fat_tree(c[i].nodes, 8, c[i].group, 2, 1);
		long world = c[i].nodes * gpus, k, j;
		struct place_node *n = calloc((size_t)c[i].nodes, sizeof(*n));
		long *tids = calloc((size_t)world, sizeof(*tids));
		struct pl_layout l = lay(c[i].spec, world);
		double bytes[PL_NAXES] = { 8, 4, 3, 1, 2 };
		struct place_result r;
		struct ref_cost ours = { 0, 0 }, base = { 0, 0 };
		char why[256] = "";
		pl_err_t err;

		pl_err_clear(&err);
		for (k = 0; k < c[i].nodes; k++) {
			n[k].name = m->nodes[k].name;
			n[k].ntasks = gpus;
			if (c[i].cyclic) {
				for (j = 0; j < gpus; j++)
					tids[k * gpus + j] = k + j * c[i].nodes;
				n[k].tids = &tids[k * gpus];
			}
		}
		if (place_compute(&l, m, n, c[i].nodes, bytes, &r, &err) < 0) {
			ok(0, "%s on %s: %s", c[i].spec, c[i].fab, err.text);
		} else {
			int valid = ref_recost(&l, m, n, c[i].nodes, &r, bytes, &ours, &base, why,
					       sizeof(why)) == 0;

			ok(valid && is_close(ours.node, r.cost.cross_node_bytes) &&
			   is_close(ours.sw, r.cost.cross_switch_bytes) &&
			   is_close(base.node, r.baseline.cross_node_bytes) &&
			   is_close(base.sw, r.baseline.cross_switch_bytes) && ours.sw <= base.sw + 1e-9,
			   "%s on %s%s: reference %g/%g (base %g/%g), placer %g/%g (base %g/%g) %s",
			   c[i].spec, c[i].fab, c[i].cyclic ? ", cyclic" : "", ours.sw, ours.node, base.sw,
			   base.node, r.cost.cross_switch_bytes, r.cost.cross_node_bytes,
			   r.baseline.cross_switch_bytes, r.baseline.cross_node_bytes, why);
			place_result_free(&r);
		}
		free(tids);
		free(n);
		topo_free(m);
	}
}

int
main(void)
{
	plan(108);
	test_lab_pipeline();
	test_cyclic_tids();
	test_islands_and_nics();
	test_mixed_and_partial();
	test_refusals();
	test_blocks();
	test_quality_gates();
	test_rails();
	test_deterministic();
	test_ep();
	test_two_leaves();
	test_traffic_priority();
	test_repeated_node();
	test_reference();
	return done_testing();
}
