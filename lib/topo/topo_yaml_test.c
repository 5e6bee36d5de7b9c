/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm topology.yaml: the YAML subset parser, the choice of a topology,
 * tree and block topologies giving the maps their topology.conf gives, and
 * the refusals, each naming file:line.  On the files in tests/data/slurm
 * and on small inline texts.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "topo_test_names.h"
#include "topo.h"
#include "yaml_sub.h"

static const char *data;

static char *
data_path(const char *rel)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "%s/%s", data, rel);
	return buf;
}

/* The map of a topology.yaml text (NULL and err set on failure). */
static struct topo_map *
yaml_map(const char *text, const char *name, bool nvlink, struct topo_yaml_info *info,
	 pl_err_t *err)
{
	struct topo_map *m = topo_new();

	pl_err_clear(err);
	if (topo_read_slurm_yaml_text(m, text, "t.yaml", name, nvlink, info, err) < 0) {
		topo_free(m);
		return NULL;
	}
	return m;
}

/* The JSON of the map of a topology.conf text; caller frees. */
static char *
conf_json(const char *text, bool nvlink)
{
	struct topo_map *m = topo_new();
	pl_err_t err;
	char *j = NULL;

	pl_err_clear(&err);
	if (topo_read_slurm_text(m, text, "t.conf", nvlink, &err) == 0)
		j = topo_to_json_text(m);
	else
		diag("%s", err.text);
	topo_free(m);
	return j;
}

static void
test_parser(void)
{
	static const char text[] =
		"---\n"
		"# a comment\n"
		"a: 1   # trailing comment\n"
		"b:\n"
		"- x\n"
		"- 'it''s'\n"
		"c: [4, \"16\", five]\n"
		"d:\n"
		"  e: \"q\\\"uote # not a comment\"\n"
		"  f:\n"
		"    - g: 1\n"
		"      h: 2\n"
		"    -\n"
		"      g: 3\n"
		"  empty:\n"
		"...\n";
	struct ysub_node *root;
	const struct ysub_node *v, *d;
	pl_err_t err;

	pl_err_clear(&err);
	root = ysub_parse(text, "p.yaml", &err);
	ok(root && root->kind == YSUB_MAP && root->n == 4, "parser: a top mapping of 4 keys");
	if (!root) {
		diag("%s", err.text);
		return;
	}
	v = ysub_get(root, "a");
	is_str(v ? v->text : NULL, "1", "a plain scalar, its comment cut");
	v = ysub_get(root, "b");
	ok(v && v->kind == YSUB_SEQ && v->n == 2 && strcmp(v->kids[1]->text, "it's") == 0,
	   "a sequence at its key's indentation; '' inside single quotes");
	v = ysub_get(root, "c");
	ok(v && v->flow && v->n == 3 && strcmp(v->kids[1]->text, "16") == 0 &&
	   v->kids[1]->quoted && strcmp(v->kids[2]->text, "five") == 0, "a flow sequence [4, \"16\", five]");
	d = ysub_get(root, "d");
	v = ysub_get(d, "e");
	is_str(v ? v->text : NULL, "q\"uote # not a comment", "a double-quoted scalar keeps '#' and unescapes \\\"");
	v = ysub_get(d, "f");
	ok(v && v->kind == YSUB_SEQ && v->n == 2 && v->kids[0]->kind == YSUB_MAP && v->kids[0]->n == 2 &&
	   ysub_get(v->kids[1], "g") && strcmp(ysub_get(v->kids[1], "g")->text, "3") == 0,
	   "mappings as items, on the '- ' line or below it");
	v = ysub_get(d, "empty");
	ok(v && v->kind == YSUB_NULL && v->line == 15, "a key without a value is null, at its line");
	ysub_free(root);

	root = ysub_parse("a: 1\nb: 2\na: 3\n", "p.yaml", &err);
	ok(!root, "a key given twice is refused");
	like(err.text, "p.yaml:3: key 'a' is given twice in one mapping (first at line 1)", "naming both lines");
	ysub_free(root);
	pl_err_clear(&err);
	root = ysub_parse("a: [1, 2\n", "p.yaml", &err);
	ok(!root && strstr(err.text, "p.yaml:1: a flow sequence that does not close"), "an open flow sequence");
	ysub_free(root);
	pl_err_clear(&err);
	root = ysub_parse("a: |\n  text\n", "p.yaml", &err);
	ok(!root && strstr(err.text, "p.yaml:1:") && strstr(err.text, "block scalars"),
	   "a block scalar is refused by name");
	ysub_free(root);
	pl_err_clear(&err);
	root = ysub_parse("a: b\n  c\n", "p.yaml", &err);
	ok(!root && strstr(err.text, "p.yaml:2: bad indentation"), "a scalar over two lines is refused");
	ysub_free(root);
	pl_err_clear(&err);
	root = ysub_parse("# only a comment\n", "p.yaml", &err);
	ok(root && root->kind == YSUB_NULL, "an empty document is null");
	ysub_free(root);
}

/* lab-topology.yaml gives the map lab-topology.conf gives. */
static void
test_lab(void)
{
	struct topo_map *a = topo_new(), *b = topo_new();
	struct topo_yaml_info info;
	char *ja = NULL, *jb = NULL;
	pl_err_t err;

	pl_err_clear(&err);
	ok(topo_read_slurm_yaml(a, data_path("slurm/lab-topology.yaml"), NULL, true, &info, &err) == 0,
	   "lab-topology.yaml reads");
	if (err.text[0])
		diag("%s", err.text);
	ok(topo_read_slurm(b, data_path("lab-topology.conf"), true, &err) == 0, "lab-topology.conf reads");
	is_str(info.topology, "lab", "its one topology");
	is_str(info.kind, "tree", "a tree");
	is_int(info.ntopologies, 1, "one topology in the file");
	ja = topo_to_json_text(a);
	jb = topo_to_json_text(b);
	ok(ja && jb && strcmp(ja, jb) == 0, "the same map as lab-topology.conf (JSON compared)");
	is_str(leaf_of(a, "node3"), "leaf0", "node3 under leaf0, as the names interleave");
	is_str(parent_of(a, "leaf1"), "spine", "leaf1 under spine");
	is_str(topo_sniff(data_path("slurm/lab-topology.yaml")), "slurm-topology-yaml",
	       "topo_sniff knows a topology.yaml");
	is_str(topo_sniff(data_path("lab-topology.conf")), "slurm-topology", "and still a topology.conf");
	free(ja);
	free(jb);
	topo_free(a);
	topo_free(b);
}

static const char tree_conf[] =
	"SwitchName=core Switches=spine[0-1]\n"
	"SwitchName=spine0 Switches=leaf[0-1]\n"
	"SwitchName=spine1 Switches=leaf[2-3]\n"
	"SwitchName=leaf0 Nodes=gpu[01-04]\n"
	"SwitchName=leaf1 Nodes=gpu[05-08]\n"
	"SwitchName=leaf2 Nodes=gpu[09-12]\n"
	"SwitchName=leaf3 Nodes=gpu[13-16]\n";
static const char block_conf[] =
	"BlockSizes=8,16\n"
	"BlockName=rack1 Nodes=gpu[01-08]\n"
	"BlockName=rack2 Nodes=gpu[09-16]\n";

/* tree-and-block-topology.yaml: each topology as its topology.conf. */
static void
test_several(void)
{
	const char *path = data_path("slurm/tree-and-block-topology.yaml");
	struct topo_yaml_info info;
	struct topo_map *m;
	char *jy, *jc;
	pl_err_t err;
	int nv;

	for (nv = 0; nv < 2; nv++) {
		m = topo_new();
		pl_err_clear(&err);
		ok(topo_read_slurm_yaml(m, path, NULL, nv, &info, &err) == 0,
		   "several topologies: the default reads (%s blocks)", nv ? "nvlink" : "network");
		is_str(info.topology, "nvl-racks", "cluster_default: true chooses nvl-racks, the second");
		is_int(info.ntopologies, 3, "of 3");
		jy = topo_to_json_text(m);
		jc = conf_json(block_conf, nv);
		ok(jy && jc && strcmp(jy, jc) == 0, "the block topology is the map of its topology.conf");
		ok(m->nblocks == 2 && m->blocks[0].nvlink == (nv == 1), "--blocks %s applies",
		   nv ? "nvlink" : "network");
		is_str(block_of(m, "gpu09"), "rack2", "gpu09 in rack2 (a quoted hostlist)");
		free(jy);
		free(jc);
		topo_free(m);
	}
	m = topo_new();
	ok(topo_read_slurm_yaml(m, path, "ib", true, &info, &err) == 0, "--name ib reads the tree");
	is_str(info.kind, "tree", "a tree");
	jy = topo_to_json_text(m);
	jc = conf_json(tree_conf, true);
	ok(jy && jc && strcmp(jy, jc) == 0, "the yaml tree is the map of the same topology.conf");
	is_str(parent_of(m, "spine1"), "core", "spine1 under core");
	is_str(leaf_of(m, "gpu13"), "leaf3", "gpu13 under leaf3");
	ok(m->nblocks == 0, "no blocks from the other topology");
	free(jy);
	free(jc);
	topo_free(m);
	m = topo_new();
	ok(topo_read_slurm_yaml(m, path, "any", true, &info, &err) == 0, "--name any reads the flat one");
	ok(m->nnodes == 0 && m->nswitches == 0 && m->nblocks == 0 && strcmp(info.kind, "flat") == 0,
	   "a flat topology: no switches, no blocks, no nodes");
	topo_free(m);
	m = topo_new();
	pl_err_clear(&err);
	ok(topo_read_slurm_yaml(m, path, "nvl", true, &info, &err) < 0, "an unknown --name is refused");
	like(err.text, "no topology 'nvl' (accepted: ib, nvl-racks, any)", "listing the file's topologies");
	topo_free(m);
}

static void
test_choice(void)
{
	static const char first[] =
		"- topology: one\n  flat: true\n"
		"- topology: two\n  cluster_default: no\n  tree:\n    switches:\n"
		"    - switch: s\n      nodes: n[1-2]\n";
	static const char two_defaults[] =
		"- topology: one\n  flat: true\n"
		"- topology: two\n  cluster_default: True\n  block:\n    blocks:\n"
		"    - block: b\n      nodes: n[1-2]\n"
		"- topology: three\n  cluster_default: true\n  flat: true\n";
	static const char single[] =
		"topology: alone\n"
		"tree:\n  switches:\n    switch: s\n    nodes: n1\n";
	struct topo_yaml_info info;
	struct topo_map *m;
	pl_err_t err;

	m = yaml_map(first, NULL, true, &info, &err);
	ok(m && strcmp(info.topology, "one") == 0 && m->nnodes == 0,
	   "no cluster_default: the first topology (flat, so no nodes)");
	topo_free(m);
	m = yaml_map(first, "two", true, &info, &err);
	ok(m && m->nnodes == 2 && m->nswitches == 1, "the second by name");
	topo_free(m);
	m = yaml_map(two_defaults, NULL, true, &info, &err);
	ok(m && strcmp(info.topology, "two") == 0 && m->nblocks == 1,
	   "the first of two with cluster_default: true");
	topo_free(m);
	m = yaml_map(single, NULL, true, &info, &err);
	ok(m && strcmp(info.topology, "alone") == 0 && m->nnodes == 1 && m->nswitches == 1,
	   "one topology without the list, one switch without the list (as Slurm takes them)");
	if (!m)
		diag("%s", err.text);
	topo_free(m);
}

struct bad_case {
	const char *what;
	const char *text;
	const char *want;
};

static void
test_errors(void)
{
	static const struct bad_case cases[] = {
		{ "a tab",
		  "- topology: a\n  tree:\n\tswitches: x\n",
		  "t.yaml:3: a tab character (accepted: spaces" },
		{ "bad indentation",
		  "- topology: a\n  tree:\n    switches:\n    - switch: s\n      nodes: n1\n"
		  "     children: x\n",
		  "t.yaml:6: bad indentation (5 spaces)" },
		{ "an unknown key",
		  "- topology: a\n  flat: true\n  frob: 1\n",
		  "t.yaml:3: topology 'a': unknown key 'frob' (accepted: topology, cluster_default, tree, block, flat)" },
		{ "an unknown switch key",
		  "- topology: a\n  tree:\n    switches:\n    - switch: s\n      nodes: n1\n"
		  "      link_speed: 100\n",
		  "t.yaml:6: topology 'a': switches: unknown key 'link_speed' (accepted: switch, children, nodes)" },
		{ "an undefined child switch",
		  "- topology: a\n  tree:\n    switches:\n    - switch: top\n      children: s[1-2]\n"
		  "    - switch: s1\n      nodes: n1\n",
		  "t.yaml:4: SwitchName=top: Switches= names 's2', which no SwitchName= line defines" },
		{ "a switch of neither nodes nor children",
		  "- topology: a\n  tree:\n    switches:\n    - switch: s\n",
		  "t.yaml:4: topology 'a': switch 's': has neither children: nor nodes:" },
		{ "a switch of both",
		  "- topology: a\n  tree:\n    switches:\n    - switch: s\n      nodes: n1\n      children: t\n",
		  "t.yaml:4: topology 'a': switch 's': has both children: and nodes:" },
		{ "a switch without a name",
		  "- topology: a\n  tree:\n    switches:\n    - nodes: n1\n",
		  "t.yaml:4: topology 'a': switches: no 'switch:'" },
		{ "a topology without a name",
		  "- flat: true\n",
		  "t.yaml:1: a topology: no 'topology:'" },
		{ "no kind",
		  "- topology: a\n  cluster_default: true\n",
		  "t.yaml:1: topology 'a': has none of tree:, block: or flat: true" },
		{ "two kinds",
		  "- topology: a\n  flat: true\n  block:\n    blocks:\n    - block: b\n",
		  "t.yaml:1: topology 'a': has more than one of tree:, block: and flat: true" },
		{ "a bad boolean",
		  "- topology: a\n  cluster_default: maybe\n  flat: true\n",
		  "t.yaml:2: topology: cluster_default: 'maybe' is not a boolean" },
		{ "a bad block size",
		  "- topology: a\n  block:\n    block_sizes: [4, four]\n    blocks:\n    - block: b\n",
		  "t.yaml:3: topology 'a': block: block_sizes: 'four' is not a positive whole number" },
		{ "no blocks",
		  "- topology: a\n  block:\n    block_sizes: [4]\n",
		  "t.yaml:2: topology 'a': block: no blocks" },
		{ "a node in two blocks",
		  "- topology: a\n  block:\n    blocks:\n    - block: b\n      nodes: n[1-2]\n"
		  "    - block: c\n      nodes: n2\n",
		  "t.yaml:6: BlockName=c: node 'n2' is already in block 'b'" },
		{ "a bad hostlist",
		  "- topology: a\n  tree:\n    switches:\n    - switch: s\n      nodes: n[1-\n",
		  "t.yaml:4: SwitchName=s: Nodes=: hostlist 'n[1-'" },
		{ "a node list as a sequence",
		  "- topology: a\n  tree:\n    switches:\n    - switch: s\n      nodes: [n1, n2]\n",
		  "t.yaml:5: topology 'a': switch 's': nodes: is a sequence (accepted: one name or hostlist expression" },
		{ "a name with a blank",
		  "- topology: a\n  tree:\n    switches:\n    - switch: \"s 1\"\n      nodes: n1\n",
		  "t.yaml:4: topology 'a': switches: switch: 's 1'" },
		{ "a topology defined twice",
		  "- topology: a\n  flat: true\n- topology: a\n  flat: true\n",
		  "t.yaml:3: topology 'a' is defined twice (first at line 1" },
		{ "a flow mapping",
		  "- topology: a\n  tree: {switches: []}\n",
		  "t.yaml:2: '{switches: []}': not accepted: flow mappings" },
		{ "an alias",
		  "- topology: a\n  tree: *t\n",
		  "t.yaml:2: '*t': not accepted: aliases" },
		{ "two documents",
		  "---\n- topology: a\n  flat: true\n---\n- topology: b\n  flat: true\n",
		  "t.yaml:4: a second document ('---')" },
		{ "a scalar document",
		  "just text\n",
		  "t.yaml:1: the document is a scalar (accepted: a list of topologies" },
		{ "an empty file",
		  "\n# nothing\n",
		  "t.yaml:1: the document is nothing" },
		{ "a switch cycle",
		  "- topology: a\n  tree:\n    switches:\n    - switch: x\n      children: y\n"
		  "    - switch: y\n      children: x\n",
		  "t.yaml: switches form a cycle: x -> y -> x" },
		{ "a bad line in another topology",
		  "- topology: a\n  flat: true\n- topology: b\n  tree:\n    switches:\n    - switch: s\n",
		  "t.yaml:6: topology 'b': switch 's': has neither" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct topo_map *m;
		pl_err_t err;

		m = yaml_map(cases[i].text, NULL, true, NULL, &err);
		ok(!m, "refused: %s", cases[i].what);
		like(err.text, cases[i].want, "  naming file:line: %s", cases[i].what);
		topo_free(m);
	}
}

int
main(void)
{
	plan(13 + 10 + 22 + 4 + 26 * 2);
	data = getenv("PL_TEST_DATA");
	if (!data)
		data = "../tests/data";
	test_parser();
	test_lab();
	test_several();
	test_choice();
	test_errors();
	return done_testing();
}
