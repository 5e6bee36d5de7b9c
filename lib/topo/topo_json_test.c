/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cluster map file: round trips and strict reading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "topo.h"

static struct topo_map *
sample(void)
{
	static const char *const names[] = { "gpu01", "gpu02", "gpu03" };
	struct topo_map *m = topo_make_uniform(names, 3, 4, NULL);
	struct topo_nodetype small;
	int sp, l0;

	snprintf(m->name, sizeof(m->name), "sample");
	m->types[0].gpu_memory_gb = 80;
	m->types[0].gpus[2].island = 1;
	m->types[0].gpus[3].island = 1;
	m->types[0].nnics = 1;
	m->types[0].nics = calloc(1, sizeof(struct topo_nic));
	snprintf(m->types[0].nics[0].name, TOPO_NAME, "mlx5_0");
	m->types[0].nics[0].gbps = 400;
	m->types[0].nics[0].rail = 0;
	m->types[0].gpus[1].nic = 0;
	memset(&small, 0, sizeof(small));
	snprintf(small.name, sizeof(small.name), "small");
	m->nodes[2].type = topo_add_type(m, &small, NULL);
	sp = topo_add_switch(m, "spine", -1, NULL);
	l0 = topo_add_switch(m, "leaf0", sp, NULL);
	m->nodes[0].sw = l0;
	m->nodes[1].sw = l0;
	m->nodes[1].sw2 = sp;
	m->nodes[2].block = topo_add_block(m, "rack1", true, NULL);
	topo_set_node_addr(m, 0, "10.1.0.1", NULL);
	topo_set_node_port(m, 0, 6830, NULL);
	topo_set_node_addr(m, 1, "fd00::2", NULL);
	topo_set_node_port(m, 2, 19003, NULL);
	m->link[TOPO_LINK_LEAF].gbps = 47.5;
	m->link[TOPO_LINK_LEAF].measured = true;
	snprintf(m->link[TOPO_LINK_LEAF].source, sizeof(m->link[0].source), "all_reduce_perf");
	topo_finish(m);
	topo_index(m, NULL);
	return m;
}

static void
test_round_trip(void)
{
	struct topo_map *m = sample(), *back;
	char *text = topo_to_json_text(m), *again;
	pl_err_t err;

	pl_err_clear(&err);
	ok(text != NULL, "a map serialises");
	back = topo_from_json_text(text, &err);
	ok(back != NULL, "and reads back (%s)", err.text);
	if (!back)
		return;
	is_str(back->name, "sample", "name");
	is_int(back->nnodes, 3, "three nodes");
	is_int(back->ntypes, 2, "two node types");
	is_int(topo_node_type(back, 0)->ngpus, 4, "default type has 4 GPUs");
	is_int(topo_node_type(back, 2)->ngpus, 0, "gpu03 has its own type");
	is_int(topo_node_type(back, 0)->gpus[3].island, 1, "islands survive");
	is_str(topo_node_type(back, 0)->nics[0].name, "mlx5_0", "NICs survive");
	is_int(topo_node_type(back, 0)->gpus[1].nic, 0, "closest NIC survives");
	is_int(back->switches[back->nodes[1].sw].level, 0, "leaf level 0");
	is_str(back->switches[back->switches[back->nodes[1].sw].parent].name, "spine", "leaf's parent");
	is_int(back->switches[topo_find_switch(back, "spine")].level, 1, "spine level 1");
	is_int(back->nodes[1].sw2, topo_find_switch(back, "spine"), "second switch survives");
	is_str(back->blocks[back->nodes[2].block].name, "rack1", "block survives");
	ok(back->blocks[0].nvlink, "block is an NVLink domain");
	is_int(topo_find_node(back, "gpu02"), 1, "name index works after load");
	is_int(topo_find_node(back, "gpu04"), -1, "unknown names are not found");
	ok(back->link[TOPO_LINK_LEAF].measured && back->link[TOPO_LINK_LEAF].gbps == 47.5,
	   "measured link class survives");
	is_double(back->link[TOPO_LINK_NVLINK].gbps, 450, 1e-12, "nominal NVLink bandwidth");
	{
		const char *a[3];
		int p[3], i, rc = 0;

		for (i = 0; i < 3; i++)
			rc |= topo_node_peer(back, i, &a[i], &p[i]);
		ok(rc == 0 && a[0] && strcmp(a[0], "10.1.0.1") == 0 && p[0] == 6830,
		   "a node's address and peer port survive");
		ok(a[1] && strcmp(a[1], "fd00::2") == 0 && p[1] == 0, "an address without a port");
		ok(a[2] == NULL && p[2] == 19003, "a port without an address");
		ok(topo_node_peer(back, 3, &a[0], &p[0]) < 0 && a[0] == NULL && p[0] == 0,
		   "no peer for a node index past the map");
	}
	ok(strstr(text, "\"name\": \"gpu03\",\n   \"type\": \"small\",\n   \"block\": \"rack1\",\n   \"peer_port\": 19003\n") != NULL,
	   "the map file says peer_port, and no addr where there is none");
	again = topo_to_json_text(back);
	is_str(again, text, "second serialisation is identical");
	free(again);
	free(text);
	topo_free(back);
	topo_free(m);
}

static void
bad(const char *json, const char *needle, const char *name)
{
	pl_err_t err;
	struct topo_map *m;

	pl_err_clear(&err);
	m = topo_from_json_text(json, &err);
	ok(m == NULL, "%s: refused", name);
	like(err.text, needle, "%s: message names it", name);
	topo_free(m);
}

#define HEAD "{\"format\":\"parallel-layout-map\",\"version\":1,"

static void
test_errors(void)
{
	bad("{", "line 1", "truncated JSON");
	bad("[]", "Expected object", "not an object");
	bad("{\"format\":\"x\",\"version\":1}", "expected 'parallel-layout-map'", "wrong format");
	bad("{\"format\":\"parallel-layout-map\",\"version\":9}", "version 9", "future version");
	bad(HEAD "\"nodez\":[]}", "nodez", "unknown top-level key");
	bad(HEAD "\"nodes\":[{\"name\":\"a\",\"type\":\"t\"}]}", "type 't' is not in node_types",
	    "node of an unknown type");
	bad(HEAD "\"nodes\":[{\"name\":\"a\",\"switch\":\"s\"}]}", "switch 's' is not in switches",
	    "node under an unknown switch");
	bad(HEAD "\"nodes\":[{\"name\":\"a\"},{\"name\":\"a\"}]}", "listed twice", "duplicate node");
	bad(HEAD "\"switches\":[{\"name\":\"a\",\"parent\":\"b\"}]}", "parent 'b'", "unknown parent");
	bad(HEAD "\"node_types\":[{\"name\":\"t\",\"gpus\":[{\"index\":0,\"nic\":2}]}]}",
	    "names NIC 2", "GPU pointing past the NICs");
	bad(HEAD "\"node_types\":[{\"name\":\"t\",\"gpus\":[{\"idx\":0}]}]}", "gpus[0]",
	    "misspelt GPU key");
	bad(HEAD "\"link_classes\":{\"warp\":{\"gbps\":1}}}", "unknown class 'warp'", "unknown link class");
	bad(HEAD "\"link_classes\":{\"leaf\":{\"gbps\":-1}}}", "must be positive", "negative bandwidth");
	bad(HEAD "\"default_type\":\"x\"}", "default_type 'x'", "unknown default type");
	bad("{\"format\":\"parallel-layout-map\",\"format\":\"x\",\"version\":1}", "duplicate",
	    "duplicate keys");
	bad(HEAD "\"nodes\":[{\"name\":\"a\",\"adr\":\"x\"}]}",
	    "(accepted: name, type, switch, switch2, block, addr, peer_port)", "misspelt node key");
	bad(HEAD "\"nodes\":[{\"name\":\"a\",\"peer_port\":0}]}",
	    "node 'a': peer_port must be an integer from 1 to 65535", "peer_port 0");
	bad(HEAD "\"nodes\":[{\"name\":\"a\",\"peer_port\":65536}]}", "from 1 to 65535",
	    "peer_port 65536");
	bad(HEAD "\"nodes\":[{\"name\":\"a\",\"peer_port\":4294973126}]}", "from 1 to 65535",
	    "a peer_port that wraps an int to 5830");
	bad(HEAD "\"nodes\":[{\"name\":\"a\",\"peer_port\":\"6830\"}]}", "must be an integer",
	    "a peer_port string");
	bad(HEAD "\"nodes\":[{\"name\":\"a\",\"addr\":\"10.0.0.300\"}]}",
	    "node 'a': node address '10.0.0.300' is neither a host name nor an IP address (accepted:",
	    "a bad address");
	bad(HEAD "\"nodes\":[{\"name\":\"a\",\"addr\":\"\"}]}", "node 'a': node address is empty",
	    "an empty address");
	bad(HEAD "\"nodes\":[{\"name\":\"a\",\"addr\":\"a\\nb\"}]}", "node address 'a\\x0ab'",
	    "an address with a newline, echoed escaped");
	bad(HEAD "\"nodes\":[{\"name\":\"a\",\"addr\":7}]}", "nodes[0]", "a numeric address");
}

/* The setters keep a node's old value when they refuse a new one. */
static void
test_peer_setters(void)
{
	struct topo_map *m = sample();
	const char *addr;
	pl_err_t err;
	int port;

	pl_err_clear(&err);
	ok(topo_set_node_addr(m, 0, "bad addr", &err) < 0, "a bad address is refused");
	like(err.text, "node 'gpu01': node address 'bad addr'", "  naming the node and the address");
	topo_node_peer(m, 0, &addr, &port);
	ok(addr && strcmp(addr, "10.1.0.1") == 0 && port == 6830, "  the node keeps its address");
	pl_err_clear(&err);
	ok(topo_set_node_port(m, 0, 65536, &err) < 0, "port 65536 is refused");
	like(err.text, "node 'gpu01': peer port 65536 is not a port (accepted: 1 to 65535)",
	     "  saying what is accepted");
	ok(topo_set_node_addr(m, 0, NULL, &err) == 0 && topo_set_node_port(m, 0, 0, &err) == 0 &&
	   topo_node_peer(m, 0, &addr, &port) == 0 && !addr && port == 0, "NULL and 0 clear them");
	ok(topo_set_node_addr(m, 3, "a", &err) < 0 && topo_set_node_port(m, -1, 1, &err) < 0,
	   "node indices outside the map are refused");
	topo_free(m);
}

static void
test_files(void)
{
	struct topo_map *m = sample(), *back;
	char path[] = "/tmp/pl-map-XXXXXX";
	pl_err_t err;
	int fd = mkstemp(path);

	pl_err_clear(&err);
	ok(fd >= 0 && topo_save(m, path, &err) == 0, "save to a file");
	back = topo_load(path, &err);
	ok(back && back->nnodes == 3, "load it back");
	topo_free(back);
	pl_err_clear(&err);
	ok(topo_load("/nonexistent/map.json", &err) == NULL, "a missing file is an error");
	like(err.text, "/nonexistent/map.json", "naming the file");
	pl_err_clear(&err);
	ok(topo_save(m, "/nonexistent/dir/map.json", &err) < 0, "an unwritable path is an error");
	like(err.text, "/nonexistent/dir/map.json", "naming the path");
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	topo_free(m);
}

int
main(void)
{
	plan(87);
	test_round_trip();
	test_errors();
	test_peer_setters();
	test_files();
	return done_testing();
}
