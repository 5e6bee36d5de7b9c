/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon protocol: requests, answers and their parsers. */
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "tap.h"
#include "topo.h"

static struct topo_map *
lab(void)
{
	static const char *const none[] = { NULL };
	struct topo_map *m = topo_make_uniform(none, 0, 8, NULL);
	pl_err_t err;

	pl_err_clear(&err);
	topo_read_slurm_text(m, "SwitchName=leaf0 Nodes=node[1,3]\nSwitchName=leaf1 Nodes=node[2,4]\n"
			     "SwitchName=spine Switches=leaf[0-1]\n", "lab", true, &err);
	snprintf(m->name, sizeof(m->name), "lab");
	snprintf(m->types[0].nccl_topo_file, sizeof(m->types[0].nccl_topo_file), "/etc/nccl/topo.xml");
	return m;
}

static const struct place_node step[4] = {
	{ "node1", 8, NULL }, { "node2", 8, NULL }, { "node3", 8, NULL }, { "node4", 8, NULL },
};

static void
test_round_trip(void)
{
	struct topo_map *m = lab();
	char *req = proto_request_json("tp8,pp4", step, 4, 42, 0, NULL), *resp;
	struct proto_request r;
	struct proto_placement p;
	pl_err_t err;
	int status = 0;
	long i;
	int ok_perm = 1;

	pl_err_clear(&err);
	ok(req != NULL, "request serialises");
	ok(proto_request_parse(req, &r, &err) == 0, "and parses back (%s)", err.text);
	is_str(r.spec, "tp8,pp4", "spec");
	is_int(r.job_id, 42, "job id");
	is_int(r.nnodes, 4, "nodes");
	is_str(r.view, "all", "default view");
	proto_request_free(&r);

	resp = proto_place(m, req, &status);
	is_int(status, 200, "placement answered 200");
	ok(proto_placement_parse(resp, &p, &err) == 0, "answer parses (%s)", err.text);
	is_int(p.world, 32, "world 32");
	is_int(p.layout.size[PL_PP], 4, "layout resolved from the answer's spec");
	is_int(p.ntasks, 32, "all tasks in view all");
	is_int(p.master_node, 0, "rank 0 is on node1");
	is_str(p.nodes[1].nccl_topo_file, "/etc/nccl/topo.xml", "nodes carry their NCCL topology file");
	is_int(p.nodes[1].min_rank, 16, "node2's lowest rank is 16");
	is_int(p.nodes[2].min_rank, 8, "node3's lowest rank is 8");
	ok(p.rank_nodes != NULL, "rank_nodes present");
	/* Hand-worked (see place_test): stages on node1, node3, node2, node4. */
	is_int(p.rank_nodes[8], 2, "rank 8 on node3");
	is_int(p.rank_nodes[16], 1, "rank 16 on node2");
	for (i = 0; i < 32; i++)
		ok_perm &= p.tasks[i].procid == i && p.rank_nodes[p.tasks[i].rank] == p.tasks[i].node;
	ok(ok_perm, "tasks and rank_nodes agree");
	ok(p.cost.cross_switch_bytes < p.baseline.cross_switch_bytes, "cost below the baseline");
	proto_placement_free(&p);
	free(resp);
	free(req);

	req = proto_request_json("tp8,pp4", step, 4, 42, 0, "node:node3");
	resp = proto_place(m, req, &status);
	ok(status == 200 && proto_placement_parse(resp, &p, &err) == 0, "node view answers");
	is_int(p.ntasks, 8, "only node3's 8 tasks");
	is_int(p.tasks[0].procid, 16, "node3's first task is procid 16");
	is_int(p.tasks[0].rank, 8, "and it is rank 8");
	ok(p.rank_nodes == NULL, "no rank_nodes in a node view");
	proto_placement_free(&p);
	free(resp);
	free(req);

	req = proto_request_json("tp8,pp4", step, 4, 42, 0, "hostfile");
	resp = proto_place(m, req, &status);
	ok(status == 200 && proto_placement_parse(resp, &p, &err) == 0, "hostfile view answers");
	ok(p.ntasks == 0 && p.rank_nodes != NULL, "rank_nodes without tasks");
	proto_placement_free(&p);
	free(resp);
	free(req);
	topo_free(m);
}

static void
expect_error(const struct topo_map *m, const char *req, int want_status, const char *needle,
	     const char *name)
{
	struct proto_placement p;
	pl_err_t err;
	int status = 0;
	char *resp = proto_place(m, req, &status);

	pl_err_clear(&err);
	is_int(status, want_status, "%s: status %d", name, want_status);
	ok(proto_placement_parse(resp, &p, &err) < 0, "%s: an error body", name);
	like(err.text, needle, "%s: message", name);
	free(resp);
}

static void
test_errors(void)
{
	struct topo_map *m = lab();
	char *req;

	expect_error(m, "{", 400, "not JSON", "truncated request");
	expect_error(m, "{\"spec\":\"tp8\"}", 400, "nodes", "no nodes");
	expect_error(m, "{\"spec\":\"tp8\",\"nodes\":[],\"x\":1}", 400, "x", "unknown key");
	expect_error(m, "{\"spec\":\"tp8\",\"nodes\":[]}", 400, "non-empty", "empty nodes");
	expect_error(m, "{\"spec\":\"tp8\",\"nodes\":[{\"name\":\"node1\",\"ntasks\":0}]}", 400,
		     "ntasks=0", "zero tasks");
	expect_error(m, "{\"spec\":\"tp8\",\"nodes\":[{\"name\":\"node1\",\"ntasks\":8,\"tids\":[1]}]}",
		     400, "tids", "short tids");
	expect_error(m, "{\"spec\":\"tp8\",\"view\":\"some\",\"nodes\":[{\"name\":\"node1\",\"ntasks\":8}]}",
		     400, "view 'some'", "bad view");
	expect_error(m, "{\"spec\":\"tp8\",\"view\":\"node:node9\",\"nodes\":[{\"name\":\"node1\",\"ntasks\":8}]}",
		     400, "not in the step", "view of a node outside the step");
	req = proto_request_json("tp16,pp2", step, 4, 1, 0, NULL);
	expect_error(m, req, 422, "tp=16 exceeds the 8 GPUs", "a layout that cannot be placed");
	free(req);
	req = proto_request_json("tq8", step, 4, 1, 0, NULL);
	expect_error(m, req, 422, "'tq8'", "a bad spec");
	free(req);
	topo_free(m);
}

int
main(void)
{
	plan(57);
	test_round_trip();
	test_errors();
	return done_testing();
}
