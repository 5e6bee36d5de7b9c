/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Assembling a map (topo_build.c) and the node index it leans on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "topo.h"
#include "topo_build.h"

static char tmpdir[] = "/tmp/pl-build-test.XXXXXX";

static const char *
write_tmp(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The index survives topo_add_node(): a name added after topo_index() is
 * found at once, and one added twice is reported by the next topo_index(). */
static void
index_kept(void)
{
	struct topo_map *m = topo_new();
	pl_err_t err;
	long a, b;

	pl_err_clear(&err);
	topo_add_node(m, "a1", &err);
	is_int(topo_find_node(m, "a1"), -1, "not indexed yet: not found");
	is_int(topo_index(m, &err), 0, "an index of one node");
	a = topo_add_node(m, "a2", &err);
	b = topo_add_node(m, "a3", &err);
	is_int(topo_find_node(m, "a2"), a, "a node added after topo_index is found");
	is_int(topo_find_node(m, "a3"), b, "and the next one");
	is_int(topo_find_node(m, "a1"), 0, "the first is still found");
	topo_add_node(m, "a2", &err);
	is_int(topo_find_node(m, "a2"), -1, "a name added twice drops the index");
	is_int(topo_index(m, &err), -1, "and topo_index reports it");
	like(err.text, "node 'a2' is listed twice", "naming the node");
	topo_free(m);
}

/* 100,000 nodes: quadratic work took over 60 s here, the index makes it
 * a fraction of a second. */
static void
many_nodes(void)
{
	struct topo_build b;
	struct topo_map *m;
	pl_err_t err;
	double t0, t1;

	memset(&b, 0, sizeof(b));
	pl_err_clear(&err);
	b.nodes = "n[1-50000]";
	b.node = "8";
	b.types[b.ntypes++] = "small:m[1-50000]=4";
	t0 = now();
	m = topo_build_map(&b, &err);
	t1 = now();
	ok(m != NULL, "100,000 nodes build (%s)", err.text);
	is_int(m ? m->nnodes : 0, 100000, "all of them");
	is_int(m ? topo_find_node(m, "m50000") : -1, 99999, "the last is indexed");
	ok(t1 - t0 < 5.0, "in under 5 s (took %.3f s)", t1 - t0);
	diag("topo_build_map: 100000 nodes in %.3f s", t1 - t0);
	topo_free(m);
}

static void
refused(const struct topo_build *b, const char *needle, const char *what)
{
	struct topo_map *m;
	pl_err_t err;

	pl_err_clear(&err);
	m = topo_build_map(b, &err);
	ok(m == NULL, "refused: %s", what);
	like(err.text, needle, "%s: the message says so", what);
	topo_free(m);
}

static void
refusals(void)
{
	struct topo_build b;
	char name[80];

	memset(&b, 0, sizeof(b));
	b.nodes = "a[1-2]";
	b.types[b.ntypes++] = "x:a1=4";
	b.types[b.ntypes++] = "x:a2=8";
	refused(&b, "node type 'x' is given twice", "a repeated --node-type name");

	memset(&b, 0, sizeof(b));
	b.node = "8";
	b.nodes = "a[1-2]";
	b.types[b.ntypes++] = "default:a2=4";
	refused(&b, "node type 'default' is given twice", "--node-type named like --node's type");

	memset(&b, 0, sizeof(b));
	b.node = "8";
	b.slurm = write_tmp("empty.conf", "# nothing here\n");
	refused(&b, "the map has no nodes", "an empty topology.conf");

	memset(&b, 0, sizeof(b));
	memset(name, 'n', 64);
	name[64] = '\0';
	b.name = name;
	b.node = "8";
	b.nodes = "a1";
	refused(&b, "--name=nnnn", "a 64-character --name");
	refused(&b, "longer than 63 characters", "the limit is named");
	name[63] = '\0';
	{
		pl_err_t err;
		struct topo_map *m;

		pl_err_clear(&err);
		m = topo_build_map(&b, &err);
		ok(m && strcmp(m->name, name) == 0, "a 63-character --name is kept whole");
		topo_free(m);
	}

	memset(&b, 0, sizeof(b));
	{
		char path[400];
		pl_err_t err;

		/* A source is a file name: its end (the name) is what must show. */
		memset(path, 'z', 300);
		strcpy(path + 300, "/missing-node.xml");
		b.nodes = "a1";
		b.node = path;
		pl_err_clear(&err);
		ok(topo_build_map(&b, &err) == NULL, "an unreadable --node is refused");
		ok(strstr(err.text, "=...zzz") && strstr(err.text, "zzz/missing-node.xml: cannot read") &&
		   strlen(err.text) < 300, "its long name echoed by its end, the file's name");
	}
}

/* topo_load refuses a map file of no nodes (layoutd used to serve it). */
static void
load_empty(void)
{
	pl_err_t err;
	const char *path = write_tmp("empty.json",
		"{\"format\": \"parallel-layout-map\", \"version\": 1, \"name\": \"e\","
		" \"node_types\": [{\"name\": \"t\", \"gpus\": [{\"index\": 0}]}],"
		" \"default_type\": \"t\", \"nodes\": []}\n");
	struct topo_map *m;

	pl_err_clear(&err);
	m = topo_load(path, &err);
	ok(m == NULL, "a 0-node map file does not load");
	like(err.text, "the map has no nodes", "saying why");
	topo_free(m);
}

int
main(void)
{
	plan(27);
	if (!mkdtemp(tmpdir))
		return 1;
	index_kept();
	many_nodes();
	refusals();
	load_empty();
	unlink(write_tmp("empty.conf", ""));
	unlink(write_tmp("empty.json", ""));
	rmdir(tmpdir);
	return done_testing();
}
