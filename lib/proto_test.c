/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The daemon protocol: requests, answers and their parsers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto.h"
#include "service.h"
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

/*
 * layoutd's path for a request text (layoutd_http.c): parse, answer,
 * serialize; an error body on a refusal.  The answer text (caller frees)
 * and the HTTP status.
 */
static char *
place_text(const struct topo_map *m, const char *request_text, int *status)
{
	struct proto_request req;
	struct proto_placement p;
	pl_err_t err;
	char *text;

	pl_err_clear(&err);
	if (proto_request_parse(request_text, &req, &err) < 0) {
		*status = 400;
		return proto_error_json(err.text);
	}
	if (proto_answer(m, &req, &p, status, &err) < 0) {
		proto_placement_free(&p);
		proto_request_free(&req);
		return proto_error_json(err.text);
	}
	text = proto_placement_json(&p);
	proto_placement_free(&p);
	proto_request_free(&req);
	return text;
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

	resp = place_text(m, req, &status);
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
	resp = place_text(m, req, &status);
	ok(status == 200 && proto_placement_parse(resp, &p, &err) == 0, "node view answers");
	is_int(p.ntasks, 8, "only node3's 8 tasks");
	is_int(p.tasks[0].procid, 16, "node3's first task is procid 16");
	is_int(p.tasks[0].rank, 8, "and it is rank 8");
	ok(p.rank_nodes == NULL, "no rank_nodes in a node view");
	proto_placement_free(&p);
	free(resp);
	free(req);

	req = proto_request_json("tp8,pp4", step, 4, 42, 0, "hostfile");
	resp = place_text(m, req, &status);
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
	char *resp = place_text(m, req, &status);

	pl_err_clear(&err);
	is_int(status, want_status, "%s: status %d", name, want_status);
	ok(proto_placement_parse(resp, &p, &err) < 0, "%s: an error body", name);
	like(err.text, needle, "%s: message", name);
	free(resp);
}

/* 50,000 copies of one name (a 1.6 MB request): refused, naming it. */
static void
test_many_copies(const struct topo_map *m)
{
	struct place_node *many = calloc(50000, sizeof(*many));
	char *req;
	long i;

	for (i = 0; many && i < 50000; i++) {
		many[i].name = "node1";
		many[i].ntasks = 1;
	}
	req = many ? proto_request_json("tp1,dp50000", many, 50000, 1, 0, "node:node1") : NULL;
	ok(req != NULL, "a request of 50,000 copies of node1");
	expect_error(m, req ? req : "", 400, "node 'node1' is listed twice", "50,000 copies of a node");
	free(req);
	free(many);
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
	expect_error(m, "{\"spec\":\"tp8,dp2\",\"nodes\":[{\"name\":\"node2\",\"ntasks\":8},"
		     "{\"name\":\"node1\",\"ntasks\":4},{\"name\":\"node1\",\"ntasks\":4}]}", 400,
		     "node 'node1' is listed twice in the step (positions 2 and 3 of 3)", "a repeated node");
	test_many_copies(m);
	expect_error(m, "{\"spec\":\"tp8\",\"nodes\":[{\"name\":\"no\\nde\",\"ntasks\":8}]}", 422,
		     "node 'no\\x0ade' is not in the topology map", "a newline in a node name is echoed escaped");
	expect_error(m, "{\"spec\":\"tp8\",\"uid\":-1,\"nodes\":[{\"name\":\"node1\",\"ntasks\":8}]}",
		     400, "uid must be an integer 0..4294967294", "a negative uid");
	expect_error(m, "{\"spec\":\"tp8\",\"uid\":\"root\",\"nodes\":[{\"name\":\"node1\",\"ntasks\":8}]}",
		     400, "uid must be an integer", "a uid that is not a number");
	expect_error(m, "{\"spec\":\"tp8\",\"uid\":4294967295,\"nodes\":[{\"name\":\"node1\",\"ntasks\":8}]}",
		     400, "uid must be", "uid (uid_t)-1");
	topo_free(m);
}


/* Every field of two placements, compared one by one. */
static int
same_placement(const struct proto_placement *a, const struct proto_placement *b)
{
	long i;
	int w, k;

	if (strcmp(a->spec, b->spec) || strcmp(a->map, b->map) || a->world != b->world ||
	    a->nnodes != b->nnodes || a->ntasks != b->ntasks || a->master_node != b->master_node ||
	    strcmp(a->strategy, b->strategy) || a->nwarnings != b->nwarnings ||
	    a->cost.cross_node_bytes != b->cost.cross_node_bytes ||
	    a->cost.cross_switch_bytes != b->cost.cross_switch_bytes ||
	    a->baseline.cross_node_bytes != b->baseline.cross_node_bytes ||
	    a->baseline.cross_switch_bytes != b->baseline.cross_switch_bytes ||
	    !a->rank_nodes != !b->rank_nodes || strcmp(a->layout.order_name, b->layout.order_name))
		return 0;
	for (k = 0; k < PL_NAXES; k++)
		if (a->layout.size[k] != b->layout.size[k])
			return 0;
	for (i = 0; i < a->nnodes; i++)
		if (strcmp(a->nodes[i].name, b->nodes[i].name) || a->nodes[i].ntasks != b->nodes[i].ntasks ||
		    a->nodes[i].min_rank != b->nodes[i].min_rank ||
		    strcmp(a->nodes[i].nccl_topo_file, b->nodes[i].nccl_topo_file))
			return 0;
	for (i = 0; i < a->ntasks; i++) {
		const struct proto_task *x = &a->tasks[i], *y = &b->tasks[i];

		if (x->procid != y->procid || x->rank != y->rank || x->node != y->node ||
		    x->local_id != y->local_id || x->local_rank != y->local_rank || strcmp(x->nic, y->nic))
			return 0;
		for (k = 0; k < PL_NAXES; k++)
			if (x->co[k] != y->co[k])
				return 0;
	}
	for (i = 0; a->rank_nodes && i < a->world; i++)
		if (a->rank_nodes[i] != b->rank_nodes[i])
			return 0;
	for (w = 0; w < a->nwarnings; w++)
		if (strcmp(a->warnings[w], b->warnings[w]))
			return 0;
	return strcmp(a->choice, b->choice) == 0;
}

/* Whether text is what jansson itself writes for the same values
 * (json_dumps of json_loads, compact): the wire format is unchanged. */
static int
canonical(const char *text)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;
	char *again = v ? json_dumps(v, JSON_COMPACT) : NULL;
	int same = again && strcmp(again, text) == 0;

	if (!same)
		diag("not canonical: %.200s", text ? text : "(null)");
	free(again);
	json_decref(v);
	return same;
}

/* proto_answer's struct, its JSON and the JSON read back: one placement. */
static void
test_struct_calls(void)
{
	static const char *const views[] = { NULL, "node:node2", "hostfile" };
	struct topo_map *m = lab();
	struct proto_request req;
	pl_err_t err;
	size_t v;

	for (v = 0; v < 3; v++) {
		struct proto_placement a, b, c;
		char *text = NULL, *again = NULL, *viajson = NULL, *reqtext;
		int status = 0, st2 = 0;

		pl_err_clear(&err);
		ok(proto_request_init(&req, "tp8,pp2,dp2,model=70b", step, 4, 7, 3, views[v], &err) == 0,
		   "view %s: request_init (%s)", views[v] ? views[v] : "all", err.text);
		is_int(req.uid, -1, "uid unknown after init");
		ok(proto_answer(m, &req, &a, &status, &err) == 0 && status == 200,
		   "view %s: proto_answer 200 (%s)", views[v] ? views[v] : "all", err.text);
		text = proto_placement_json(&a);
		ok(text && proto_placement_parse(text, &b, &err) == 0, "its JSON parses (%s)", err.text);
		ok(same_placement(&a, &b), "view %s: parse(json(p)) == p, field by field",
		   views[v] ? views[v] : "all");
		again = proto_placement_json(&b);
		ok(text && again && strcmp(text, again) == 0, "and serialises to the same text");
		ok(canonical(text), "byte for byte what jansson writes for it");
		/* The text path: request JSON through parse, answer, json. */
		reqtext = proto_request_to_json(&req);
		ok(canonical(reqtext), "the request too");
		viajson = reqtext ? place_text(m, reqtext, &st2) : NULL;
		ok(st2 == 200 && viajson && text && strcmp(viajson, text) == 0,
		   "the request's JSON parsed and answered gives the same answer text");
		ok(proto_placement_parse(viajson ? viajson : "", &c, &err) == 0 && same_placement(&a, &c),
		   "the plugin's fallback struct equals the daemon's answer");
		proto_placement_free(&c);
		free(viajson);
		free(reqtext);
		free(again);
		free(text);
		proto_placement_free(&a);
		proto_placement_free(&b);
		proto_request_free(&req);
	}
	/* Hand-checked contents of the node view: node2 hosts stage 2 (ranks 16..23, see place_test). */
	{
		struct proto_placement a;
		int status = 0;

		proto_request_init(&req, "tp8,pp4", step, 4, 7, 3, "node:node2", &err);
		ok(proto_answer(m, &req, &a, &status, &err) == 0, "node2 view answers");
		is_int(a.ntasks, 8, "node2 view holds its 8 tasks");
		is_int(a.tasks[0].procid, 8, "its first task is procid 8");
		is_int(a.tasks[0].rank, 16, "and rank 16");
		is_int(a.tasks[7].co[PL_PP], 2, "its last task is in stage 2");
		is_str(a.map, "lab", "the map's name");
		ok(a.rank_nodes == NULL, "a node view has no rank_nodes");
		proto_placement_free(&a);
		proto_request_free(&req);
	}
	topo_free(m);
}

/* Strings and reals that need care, against jansson's own writing. */
static void
test_json_writer(void)
{
	static const double reals[] = { 0, -0.0, 1, 3, 1.0 / 3, 1e20, 1.5e-7, 123456789012345678.0,
					 6.02214076e23, 5e-324, 1.7976931348623157e308, 268435456 };
	static const struct place_node odd[1] = { { "n\"1\\\x01\x1f\x7f\xc3\xa9/\t", 1, NULL } };
	struct proto_placement p;
	struct proto_request req;
	pl_err_t err;
	size_t i;
	char *text;
	int all = 1;

	memset(&p, 0, sizeof(p));
	p.world = 1;
	p.layout.size[PL_TP] = p.layout.size[PL_PP] = p.layout.size[PL_CP] = 1;
	p.layout.size[PL_EP] = p.layout.size[PL_DP] = 1;
	snprintf(p.spec, sizeof(p.spec), "tp1");
	snprintf(p.map, sizeof(p.map), "%s", odd[0].name);
	snprintf(p.strategy, sizeof(p.strategy), "a \"quoted\" \\ strategy\r\n");
	p.nwarnings = 1;
	snprintf(p.warnings[0], PLAN_WARNING_LEN, "\xe2\x82\xac and \xf0\x9f\x98\x80");
	for (i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		p.cost.cross_node_bytes = reals[i];
		p.baseline.cross_switch_bytes = -reals[i];
		text = proto_placement_json(&p);
		all &= canonical(text);
		free(text);
	}
	ok(all, "reals and escapes are written as jansson writes them");
	snprintf(p.map, sizeof(p.map), "bad\xc3(");
	text = proto_placement_json(&p);
	ok(text == NULL, "a name that is not UTF-8 makes no JSON (as jansson refuses it)");
	free(text);
	snprintf(p.map, sizeof(p.map), "\xed\xa0\x80");
	text = proto_placement_json(&p);
	ok(text == NULL, "nor does a UTF-16 surrogate");
	free(text);
	snprintf(p.map, sizeof(p.map), "lab");
	p.cost.cross_node_bytes = NAN;
	text = proto_placement_json(&p);
	ok(text == NULL, "nor a cost that is not a number");
	free(text);
	pl_err_clear(&err);
	proto_request_init(&req, "tp1", odd, 1, 1, 0, NULL, &err);
	text = proto_request_to_json(&req);
	ok(canonical(text), "a request with an odd node name is canonical too");
	free(text);
	proto_request_free(&req);
}

static void
test_uid(void)
{
	struct proto_request req, back;
	pl_err_t err;
	char *text;

	pl_err_clear(&err);
	proto_request_init(&req, "tp8", step, 1, 5, 0, "node:node1", &err);
	text = proto_request_to_json(&req);
	ok(text && !strstr(text, "uid"), "uid -1 is not sent");
	free(text);
	req.uid = 1000;
	text = proto_request_to_json(&req);
	ok(text && strstr(text, ",\"uid\":1000"), "uid 1000 is sent (%s)", text ? text : "NULL");
	ok(text && proto_request_parse(text, &back, &err) == 0, "and parses (%s)", err.text);
	is_int(back.uid, 1000, "uid read back");
	is_str(back.view, "node:node1", "view read back");
	proto_request_free(&back);
	free(text);
	proto_request_free(&req);
	ok(proto_request_parse("{\"spec\":\"tp8\",\"nodes\":[{\"name\":\"node1\",\"ntasks\":8}]}",
			       &back, &err) == 0 && back.uid == -1, "no uid: -1");
	proto_request_free(&back);
	ok(proto_request_parse("{\"spec\":\"tp8\",\"uid\":0,\"nodes\":[{\"name\":\"node1\",\"ntasks\":8}]}",
			       &back, &err) == 0 && back.uid == 0, "uid 0 (root) is a uid");
	proto_request_free(&back);
}

static void
test_init_errors(void)
{
	struct proto_request req;
	struct place_node longname[1] = { { NULL, 8, NULL } };
	char name[TOPO_NAME + 8], spec[PROTO_SPEC_MAX + 8];
	pl_err_t err;

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	longname[0].name = name;
	pl_err_clear(&err);
	ok(proto_request_init(&req, "tp8", longname, 1, 1, 0, NULL, &err) < 0, "a 71-byte node name is refused");
	like(err.text, "1 to 63 characters", "saying what is accepted");
	ok(req.nodes == NULL && req.nnodes == 0, "and nothing is left to free");
	memset(spec, 't', sizeof(spec) - 1);
	spec[sizeof(spec) - 1] = '\0';
	pl_err_clear(&err);
	ok(proto_request_init(&req, spec, step, 4, 1, 0, NULL, &err) < 0, "a 4103-byte spec is refused");
	like(err.text, "longer than 4095", "saying the limit");
	ok(strlen(err.text) < 200, "the spec is clipped in the message");
	pl_err_clear(&err);
	ok(proto_request_init(&req, "tp8", step, 4, 1, 0, "node:node1", &err) == 0, "a good request");
	strcpy(req.view, "everything");
	{
		struct topo_map *m = lab();
		struct proto_placement p;
		int status = 0;

		ok(proto_answer(m, &req, &p, &status, &err) < 0 && status == 400,
		   "proto_answer checks the view itself: 400");
		like(err.text, "view 'everything'", "naming it");
		proto_placement_free(&p);
		topo_free(m);
	}
	proto_request_free(&req);
}

/* The step's largest NVLink domain, by hand: 8 nodes of 4 GPUs, node i in
 * NVLink block i % 4. */
static void
test_domain_gpus(void)
{
	struct topo_map *b = topo_synth_blocks(8, 4, 2), *t = lab();
	struct place_node n[3] = { { NULL, 4, NULL }, { NULL, 4, NULL }, { NULL, 4, NULL } };

	n[0].name = b->nodes[0].name;
	n[1].name = b->nodes[4].name;
	n[2].name = b->nodes[1].name;
	is_int(svc_domain_gpus(b, n, 3), 8, "two nodes of block 0 in the step: 8 GPUs");
	n[1].name = b->nodes[2].name;
	is_int(svc_domain_gpus(b, n, 3), 4, "one node per block: 4 GPUs");
	is_int(svc_domain_gpus(t, step, 4), 8, "no blocks: a node's 8 GPUs");
	topo_free(b);
	topo_free(t);
}

/*
 * An auto spec: the answer carries the layout chosen (a spec without
 * "auto" that reads back to the same sizes), how it was chosen, and the
 * same on every node's view; a hostile "auto" text is refused.
 */
static void
test_auto(void)
{
	static const char *const views[] = { NULL, "node:node1", "node:node4", "hostfile" };
	struct topo_map *m = lab();
	struct proto_placement first, a, b;
	struct proto_request req;
	struct pl_layout l;
	pl_err_t err;
	char *text, *bad;
	size_t v;
	int status = 0;

	memset(&first, 0, sizeof(first));
	m->types[0].gpu_memory_gb = 80;
	for (v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
		pl_err_clear(&err);
		proto_request_init(&req, "auto,model=7b,tp4", step, 4, 7, 3, views[v], &err);
		ok(proto_answer(m, &req, &a, &status, &err) == 0 && status == 200,
		   "auto,model=7b,tp4, view %s: answered (%s)", views[v] ? views[v] : "all", err.text);
		ok(strncmp(a.choice, "auto chose ", 11) == 0, "  it says what it chose: %.120s", a.choice);
		ok(!strstr(a.spec, "auto") && layout_parse(a.spec, &l, &err) == 0 &&
		   layout_resolve(&l, 32, &err) == 0 && !l.auto_layout,
		   "  its spec '%s' is a concrete layout of the 32 tasks", a.spec);
		ok(a.layout.size[PL_TP] == 4 && layout_world(&a.layout) == 32,
		   "  the pinned tp4 is kept, the sizes make 32");
		text = proto_placement_json(&a);
		ok(text && strstr(text, "\"auto\":\"auto chose ") && proto_placement_parse(text, &b, &err) == 0 &&
		   same_placement(&a, &b), "  its JSON carries \"auto\" and reads back the same");
		if (v == 0)
			first = a;
		else
			ok(strcmp(first.spec, a.spec) == 0 && strcmp(first.choice, a.choice) == 0,
			   "  every view chose the same layout (%s)", a.spec);
		free(text);
		proto_placement_free(&b);
		if (v)
			proto_placement_free(&a);
		proto_request_free(&req);
	}
	/* A concrete spec's answer has no "auto" key. */
	proto_request_init(&req, "tp8,pp4", step, 4, 7, 3, NULL, &err);
	proto_answer(m, &req, &a, &status, &err);
	text = proto_placement_json(&a);
	ok(text && !strstr(text, "\"auto\"") && a.choice[0] == '\0', "a concrete spec's answer has no \"auto\"");
	free(text);
	proto_placement_free(&a);
	proto_request_free(&req);
	/* Input from a daemon: control characters and overlong texts refused. */
	text = proto_placement_json(&first);
	bad = text ? malloc(strlen(text) + 2 * PROTO_CHOICE_MAX) : NULL;
	if (bad) {
		char *at = strstr(text, "\"auto\":\"");
		size_t head = at ? (size_t)(at - text) + 8 : 0;

		snprintf(bad, strlen(text) + 2 * PROTO_CHOICE_MAX, "%.*s\\u001b[31mred\"}",
			 (int)head, text);
		pl_err_clear(&err);
		ok(at && proto_placement_parse(bad, &b, &err) < 0, "an \"auto\" text with an escape "
		   "character is refused");
		like(err.text, "\"auto\" must be printable text", "  saying what is accepted (%s)", err.text);
		proto_placement_free(&b);
		memset(bad + head, 'x', PROTO_CHOICE_MAX);
		snprintf(bad + head + PROTO_CHOICE_MAX, PROTO_CHOICE_MAX, "\"}");
		ok(at && proto_placement_parse(bad, &b, &err) < 0, "an \"auto\" text of %d bytes is refused",
		   PROTO_CHOICE_MAX);
		proto_placement_free(&b);
	}
	free(bad);
	free(text);
	/* Nothing fits: a 422 naming why. */
	proto_request_init(&req, "auto,model=405b,tp8,pp1", step, 4, 7, 3, NULL, &err);
	pl_err_clear(&err);
	ok(proto_answer(m, &req, &a, &status, &err) < 0 && status == 422,
	   "auto with pins that leave nothing that fits 80 GB: 422 (%s)", err.text);
	proto_placement_free(&a);
	proto_request_free(&req);
	proto_placement_free(&first);
	topo_free(m);
}

int
main(void)
{
	plan(165);
	test_round_trip();
	test_errors();
	test_struct_calls();
	test_json_writer();
	test_uid();
	test_init_errors();
	test_domain_gpus();
	test_auto();
	return done_testing();
}
