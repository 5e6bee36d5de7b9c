/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm topology.conf, nccl-tests output, the runs that measure a map's link
 * classes and the format guess, on the real files in tests/data and on small
 * inline texts.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hosts.h"
#include "tap.h"
#include "topo_test_names.h"
#include "topo.h"

static const char *data;

static char *
data_path(const char *rel)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "%s/%s", data, rel);
	return buf;
}

static struct topo_map *
load(const char *rel, bool nvlink)
{
	struct topo_map *m = topo_new();
	pl_err_t err;

	pl_err_clear(&err);
	if (topo_read_slurm(m, data_path(rel), nvlink, &err) < 0) {
		diag("%s: %s", rel, err.text);
		topo_free(m);
		return NULL;
	}
	return m;
}

static int
level_of(const struct topo_map *m, const char *sw)
{
	int i = topo_find_switch(m, sw);

	return i < 0 ? -99 : m->switches[i].level;
}

static int
count_roots(const struct topo_map *m)
{
	int i, n = 0;

	for (i = 0; i < m->nswitches; i++)
		n += m->switches[i].parent < 0;
	return n;
}

static long
count_under(const struct topo_map *m, const char *sw)
{
	int s = topo_find_switch(m, sw);
	long i, n = 0;

	for (i = 0; i < m->nnodes; i++)
		n += m->nodes[i].sw == s || m->nodes[i].sw2 == s;
	return n;
}

static void
test_circe(void)
{
	struct topo_map *m = load("slurm/circe-superpod_topology.conf", false);
	long i;

	ok(m != NULL, "circe: loads");
	if (!m)
		return;
	is_int(m->nswitches, 5, "circe: 5 switches");
	is_int(count_roots(m), 5, "circe: no root switch, 5 separate trees");
	is_int(level_of(m, "s4"), 0, "circe: every switch is a leaf");
	/* 18+18+18+18+8 names, circe-n051 twice. */
	is_int(m->nnodes, 79, "circe: 79 distinct nodes");
	is_str(leaf_of(m, "circe-n001"), "s0", "circe: n001 under s0");
	is_str(leaf_of(m, "n019"), "s0", "circe: stray n019 under s0");
	is_str(leaf_of(m, "circe-n017"), "s1", "circe: n017 under s1");
	is_str(leaf_of(m, "circe-n036"), "s1", "circe: n036 under s1");
	is_str(leaf_of(m, "circe-n040"), "s3", "circe: n040 under s3");
	is_str(leaf_of(m, "circe-n080"), "s4", "circe: n080 under s4");
	ok(topo_find_node(m, "circe-n019") < 0, "circe: circe-n019 is not listed");
	ok(topo_find_node(m, "circe-n059") < 0, "circe: circe-n059 is not listed");
	i = topo_find_node(m, "circe-n051");
	ok(i >= 0 && m->nodes[i].sw == topo_find_switch(m, "s2") &&
	   m->nodes[i].sw2 == topo_find_switch(m, "s4"), "circe: n051 under s2 and s4");
	i = topo_find_node(m, "circe-n050");
	ok(i >= 0 && m->nodes[i].sw2 == -1, "circe: n050 has one switch");
	is_int(count_under(m, "s4"), 8, "circe: 8 nodes under s4");
	is_int(m->nblocks, 0, "circe: no blocks");
	topo_free(m);
}

static void
test_tara(void)
{
	struct topo_map *m = load("slurm/nstda-tara_topology.conf", false);

	ok(m != NULL, "tara: loads (no final newline)");
	if (!m)
		return;
	is_int(m->nswitches, 5, "tara: 5 switches");
	is_int(m->nnodes, 10, "tara: 10 nodes");
	is_str(parent_of(m, "s0"), "s4", "tara: s0 under s4");
	is_str(parent_of(m, "s3"), "s4", "tara: s3 under s4");
	is_str(parent_of(m, "s4"), "-", "tara: s4 is the root");
	is_int(level_of(m, "s4"), 1, "tara: root at level 1");
	is_int(level_of(m, "s2"), 0, "tara: s2 is a leaf");
	is_str(leaf_of(m, "tara-dgx1-002"), "s3", "tara: dgx1-002 under s3");
	is_str(leaf_of(m, "tara-c-005"), "s1", "tara: c-005 under s1");
	is_str(leaf_of(m, "tara-m-001"), "s2", "tara: m-001 under s2");
	topo_free(m);
}

static void
test_unsw(void)
{
	struct topo_map *m = load("slurm/unsw-abacus_topology.conf", false);

	ok(m != NULL, "unsw: loads (tabs, double spaces, root last)");
	if (!m)
		return;
	is_int(m->nswitches, 5, "unsw: 5 switches");
	is_int(m->nnodes, 13, "unsw: 13 nodes");
	is_str(m->switches[4].name, "abacusc-net", "unsw: root declared last");
	is_int(count_roots(m), 1, "unsw: one root");
	is_str(parent_of(m, "abacusc-0"), "abacusc-net", "unsw: abacusc-0 under the root");
	is_str(parent_of(m, "abacusc-neta"), "abacusc-net", "unsw: abacusc-neta under the root");
	is_int(level_of(m, "abacusc-net"), 1, "unsw: root at level 1");
	is_str(leaf_of(m, "abacus"), "abacusc-neta", "unsw: head node under abacusc-neta");
	is_str(leaf_of(m, "abacusc-2-3"), "abacusc-2", "unsw: abacusc-2-3 under abacusc-2");
	topo_free(m);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
test_3level(void)
{
	const char *preload = getenv("LD_PRELOAD");
	struct topo_map *m;
	double t0, ms;

	t0 = now_ms();
	m = load("slurm/schedmd-testsuite_3level-tree_topology.conf", false);
	ms = now_ms() - t0;
	ok(m != NULL, "3level: loads");
	if (!m)
		return;
	diag("3level: 10000 nodes read in %.1f ms", ms);
	/* Under valgrind everything is ~50x slower; the bound is for real runs. */
	if (preload && strstr(preload, "vgpreload"))
		ok(1, "3level: timing not checked under valgrind");
	else
		ok(ms < 100, "3level: loads in under 100 ms (%.1f ms)", ms);
	/* root + 2 + 26 + 500 */
	is_int(m->nswitches, 529, "3level: 529 switches");
	is_int(m->nnodes, 10000, "3level: 10000 nodes");
	is_int(count_roots(m), 1, "3level: one root");
	is_int(level_of(m, "root"), 3, "3level: root at level 3");
	is_int(level_of(m, "im1"), 2, "3level: im1 at level 2");
	is_int(level_of(m, "grp22"), 1, "3level: grp22 at level 1");
	is_int(level_of(m, "leaf349"), 0, "3level: leaf349 at level 0");
	is_str(parent_of(m, "im0"), "root", "3level: im0 under root");
	is_str(parent_of(m, "grp35"), "im1", "3level: grp35 under im1");
	is_str(parent_of(m, "leaf349"), "grp22", "3level: leaf349 under grp22");
	is_str(parent_of(m, "leaf350"), "grp23", "3level: leaf350 under grp23");
	is_str(parent_of(m, "leaf100"), "grp10", "3level: leaf100 under grp10");
	is_str(leaf_of(m, "peta10000"), "leaf100", "3level: peta10000 under leaf100");
	is_str(leaf_of(m, "peta10019"), "leaf100", "3level: peta10019 under leaf100");
	is_str(leaf_of(m, "peta10020"), "leaf101", "3level: peta10020 under leaf101");
	is_str(leaf_of(m, "peta14999"), "leaf349", "3level: peta14999 under leaf349");
	is_str(leaf_of(m, "peta15000"), "leaf350", "3level: peta15000 under leaf350");
	is_str(leaf_of(m, "peta19999"), "leaf599", "3level: peta19999 under leaf599");
	is_int(count_under(m, "leaf400"), 20, "3level: 20 nodes per leaf");
	is_str(m->nodes[0].name, "peta10000", "3level: nodes in file order");
	topo_free(m);
}

static void
test_trunks(void)
{
	struct topo_map *m = load("slurm/schedmd-testsuite_disconnected-trunks_topology.conf",
				  false);

	ok(m != NULL, "trunks: loads");
	if (!m)
		return;
	is_int(m->nswitches, 7, "trunks: 7 switches");
	is_int(m->nnodes, 40, "trunks: 40 nodes");
	is_int(count_roots(m), 3, "trunks: spineA, spineB and leafC are roots");
	is_str(parent_of(m, "leafA2"), "spineA", "trunks: leafA2 under spineA");
	is_str(parent_of(m, "leafB1"), "spineB", "trunks: leafB1 under spineB");
	is_str(parent_of(m, "leafC"), "-", "trunks: leafC has no parent");
	is_int(level_of(m, "spineB"), 1, "trunks: spineB at level 1");
	is_int(level_of(m, "leafC"), 0, "trunks: leafC at level 0");
	is_str(leaf_of(m, "node8"), "leafA1", "trunks: node8 under leafA1");
	is_str(leaf_of(m, "node9"), "leafA2", "trunks: node9 under leafA2");
	is_str(leaf_of(m, "node33"), "leafC", "trunks: node33 under leafC");
	topo_free(m);
}

static void
test_blocks(void)
{
	struct topo_map *m = load("slurm/schedmd-testsuite_block_topology.conf", false);
	long i;

	ok(m != NULL, "block: loads");
	if (m) {
		is_int(m->nblocks, 8, "block: 8 blocks");
		is_int(m->nswitches, 0, "block: no switches");
		is_int(m->nnodes, 32, "block: 32 nodes");
		is_str(m->blocks[0].name, "b1", "block: first block b1");
		is_str(m->blocks[7].name, "b8", "block: last block b8");
		ok(!m->blocks[0].nvlink, "block: nvlink flag off as asked");
		i = topo_find_node(m, "node05");
		ok(i >= 0 && m->nodes[i].block == 1, "block: node05 in b2");
		i = topo_find_node(m, "node32");
		ok(i >= 0 && m->nodes[i].block == 7, "block: node32 in b8");
		i = topo_find_node(m, "node01");
		ok(i >= 0 && m->nodes[i].block == 0 && m->nodes[i].sw == -1,
		   "block: node01 in b1, no switch");
		topo_free(m);
	}
	m = load("slurm/topograph_expected-block_nvl-racks_topology.conf", true);
	ok(m != NULL, "nvl-racks: loads");
	if (!m)
		return;
	is_int(m->nblocks, 12, "nvl-racks: 12 blocks");
	is_int(m->nnodes, 96, "nvl-racks: 96 nodes");
	ok(m->blocks[0].nvlink && m->blocks[11].nvlink, "nvl-racks: blocks are NVLink domains");
	is_str(m->blocks[5].name, "rack32", "nvl-racks: sixth block rack32");
	i = topo_find_node(m, "srv3205");
	ok(i >= 0 && m->nodes[i].block == 5, "nvl-racks: srv3205 in rack32");
	i = topo_find_node(m, "srv6208");
	ok(i >= 0 && m->nodes[i].block == 11, "nvl-racks: srv6208 in rack62");
	ok(topo_find_node(m, "srv1109") < 0, "nvl-racks: srv1109 not listed");
	topo_free(m);
}

/* Read text into a fresh map; returns the error text ("" on success). */
static char errbuf[PL_ERR_TEXT + 16];
static struct topo_map *last;

static const char *
text(const char *t)
{
	pl_err_t err;

	topo_free(last);
	last = topo_new();
	pl_err_clear(&err);
	if (topo_read_slurm_text(last, t, NULL, false, &err) < 0) {
		snprintf(errbuf, sizeof(errbuf), "ERR: %s", err.text);
		if (!err.text[0])
			snprintf(errbuf, sizeof(errbuf), "ERR without a message");
	} else {
		errbuf[0] = '\0';
	}
	return errbuf;
}

static void
test_inline_ok(void)
{
	struct topo_map *m;
	pl_err_t err;
	long i;

	is_str(text(""), "", "empty text");
	is_int(last->nswitches + last->nnodes, 0, "empty text adds nothing");
	is_str(text("# only a comment\n\n   \n"), "", "comments and blank lines");
	is_str(text("switchname=a NODES=n[1-2] linkspeed=100\n"), "", "keys in any case");
	is_int(last->nnodes, 2, "two nodes");
	is_double(last->switches[0].gbps, 100, 1e-9, "LinkSpeed kept");
	is_str(text("SwitchName = a  Nodes = n1\r\nSwitchName=b\tSwitches=a\r\n"), "",
	       "blanks around '=', tabs, CRLF");
	is_str(parent_of(last, "a"), "b", "CRLF file links");
	is_str(text("SwitchName=a Nodes=\"n[1-3]\"  # three nodes\n"), "", "quoted value, comment");
	is_int(last->nnodes, 3, "quoted hostlist expanded");
	is_str(text("SwitchName=a \\\n  Nodes=n[1-4]\nSwitchName=b Switches=a"), "",
	       "backslash continues a line");
	is_int(last->nnodes, 4, "continued line read");
	is_str(text("SwitchName=a Nodes=x\nSwitchName=b Nodes=x\nSwitchName=c Nodes=x\n"),
	       "", "a node under three switches does not fail");
	ok(last->nnodes == 1 && last->nodes[0].sw == 0 && last->nodes[0].sw2 == 1,
	   "first two switches kept");
	is_str(text("SwitchName=a Nodes=x,x\n"), "", "a node twice under one switch");
	ok(last->nnodes == 1 && last->nodes[0].sw2 == -1, "no second switch for a repeat");
	is_str(text("SwitchName=top Switches=mid\nSwitchName=mid Switches=leaf\n"
		    "SwitchName=leaf Nodes=n1\nBlockName=b1 Nodes=n1\nBlockSizes=1"), "",
	       "tree and block lines together");
	is_int(level_of(last, "top"), 2, "top at level 2");
	ok(last->nnodes == 1 && last->nodes[0].block == 0 && last->nodes[0].sw == 2,
	   "node in a block and under a switch");
	is_str(text("BlockName=b1\n"), "", "a block without nodes");

	/* Nodes already in the map are updated, not duplicated. */
	m = topo_new();
	pl_err_clear(&err);
	topo_add_node(m, "n2", &err);
	topo_add_node(m, "other", &err);
	topo_index(m, &err);
	ok(topo_read_slurm_text(m, "SwitchName=a Nodes=n[1-3]\n", "t.conf", false, &err) == 0,
	   "read into a map with nodes");
	is_int(m->nnodes, 4, "existing node not duplicated");
	i = topo_find_node(m, "n2");
	ok(i == 0 && m->nodes[0].sw == 0, "existing node updated in place");
	ok(topo_find_node(m, "n3") == 3, "index rebuilt");
	topo_free(m);
}

static void
test_inline_errors(void)
{
	char big[300];

	like(text("SwitchName=top Switches=a,b\nSwitchName=a Nodes=n1\n"),
	     "topology.conf:1: SwitchName=top: Switches= names 'b', which no SwitchName= "
	     "line defines", "undefined switch");
	like(text("SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n"),
	     "topology.conf:2: SwitchName=a: switch is defined twice (first at line 1)",
	     "switch defined twice");
	like(text("SwitchName=a Switches=b\nSwitchName=b Switches=a\n"),
	     "switches form a cycle: a -> b -> a", "two-switch cycle");
	like(text("SwitchName=x Nodes=n1\nSwitchName=a Switches=b\nSwitchName=b Switches=c\n"
		  "SwitchName=c Switches=a,x\n"), "cycle: a -> b -> c -> a",
	     "three-switch cycle");
	like(text("SwitchName=a Switches=a\n"), "topology.conf:1: SwitchName=a: lists itself",
	     "switch under itself");
	like(text("SwitchName=l Nodes=n1\nSwitchName=p1 Switches=l\nSwitchName=p2 Switches=l\n"),
	     "topology.conf:3: switch 'l' is listed under both 'p1' (line 2) and 'p2' (line 3)",
	     "switch under two parents");
	like(text("NodeName=x Nodes=y\n"),
	     "topology.conf:1: unknown line 'NodeName=x' (accepted: lines starting "
	     "SwitchName=, BlockName= or BlockSizes=)", "unknown line");
	like(text("\n\nSwitchName=leaf0 Nods=n1\n"),
	     "topology.conf:3: SwitchName=leaf0: unknown key 'Nods' (accepted: SwitchName, "
	     "Switches, Nodes, LinkSpeed)", "unknown switch key");
	like(text("BlockName=b1 Switches=x\n"),
	     "BlockName=b1: unknown key 'Switches' (accepted: BlockName, Nodes)",
	     "unknown block key");
	like(text("BlockSizes=4 Nodes=x\n"), "unknown key 'Nodes'", "key after BlockSizes");
	like(text("SwitchName=a Nodes=n[5-3]\n"),
	     "topology.conf:1: SwitchName=a: Nodes=: hostlist 'n[5-3]': range 5-3 is descending",
	     "hostlist error in Nodes=");
	like(text("SwitchName=b Nodes=n1\nSwitchName=a Switches=b[\n"),
	     "topology.conf:2: SwitchName=a: Switches=: hostlist 'b[': '[' at offset 1",
	     "hostlist error in Switches=");
	like(text("BlockName=b Nodes=a,,b\n"), "topology.conf:1: BlockName=b: Nodes=: hostlist",
	     "hostlist error in a block");
	like(text("SwitchName=a Nodes=n1 Switches=b\n"), "has both Switches= and Nodes=",
	     "both children kinds");
	like(text("SwitchName=a\n"), "topology.conf:1: SwitchName=a: has neither",
	     "switch without children");
	like(text("SwitchName=a Nodes=n1 LinkSpeed=fast\n"), "LinkSpeed 'fast' is not a whole",
	     "bad LinkSpeed");
	like(text("SwitchName=a Nodes=n1 LinkSpeed=99999999999\n"), "LinkSpeed", "huge LinkSpeed");
	like(text("SwitchName=a Nodes=n1 Nodes=n2\n"), "key 'Nodes' is given twice",
	     "repeated key");
	like(text("SwitchName=a Nodes=\n"), "topology.conf:1: 'Nodes=': empty value",
	     "empty value");
	like(text("SwitchName=a Nodes n1\n"), "expected key=value, found 'Nodes'",
	     "token without '='");
	like(text("SwitchName=a Nodes=\"n1\n"), "unterminated quote", "unterminated quote");
	like(text("SwitchName=s[1-2] Nodes=n1\n"), "must be a single name", "hostlist as a name");
	like(text("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[2-3]\n"),
	     "topology.conf:2: BlockName=b2: node 'n2' is already in block 'b1'",
	     "node in two blocks");
	like(text("BlockName=b1 Nodes=n1\nBlockName=b1 Nodes=n2\n"), "block is defined twice",
	     "block defined twice");
	like(text("BlockSizes=4,x\n"), "BlockSizes=4,x: expected positive whole numbers",
	     "bad BlockSizes");
	like(text("BlockSizes=4,,8\n"), "expected positive", "empty BlockSizes entry");
	like(text("BlockSizes=0\n"), "expected positive", "zero BlockSizes");
	like(text("BlockSizes=4\nBlockSizes=8\n"), "topology.conf:2: BlockSizes is given twice",
	     "BlockSizes twice");
	like(text("SwitchName=a Nodes=n[1-100000000]\n"), "too many names", "huge node range");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "SwitchName=a Nodes=", 19);
	like(text(big), "topology.conf:1: node name", "node name too long");
	memset(big, 'x', sizeof(big) - 1);
	memcpy(big, "SwitchName=", 11);
	like(text(big), "SwitchName=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	     "xxxxxxxx...(288 bytes): name is longer than 63 characters",
	     "switch name too long: clipped to 64 characters, its length said");
	like(text("Switch\x1bName=a Nodes=n1\n"), "unknown line 'Switch\\x1bName=a'",
	     "an escape byte in a key is written as \\x1b");
	big[11 + 63] = '\0';
	is_str(text(big), "ERR: topology.conf:1: SwitchName=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	       "xxxxxxxxxxxxxxxxxxxxxxx: has neither Switches= nor Nodes=",
	       "a 63-character switch name is fine");
	like(text("\xff\xfe=\x01\n"), "unknown line", "binary junk");
	like(text("SwitchName=a Nodes=n[1-"), "no matching ']'", "truncated file");
	like(text("=x\n"), "empty key", "empty key");
}

static void
test_files_errors(void)
{
	struct topo_map *m = topo_new();
	pl_err_t err;
	char path[] = "/tmp/pl_slurm_XXXXXX";
	int fd;

	pl_err_clear(&err);
	ok(topo_read_slurm(m, "/nonexistent/topology.conf", false, &err) < 0,
	   "missing file fails");
	like(err.text, "/nonexistent/topology.conf: cannot open", "missing file named");
	fd = mkstemp(path);
	if (fd >= 0) {
		ssize_t w = write(fd, "SwitchName=a Nodes=n1\nSwitchName=b Nodes=n[3-2]\n", 48);

		close(fd);
		pl_err_clear(&err);
		ok(w == 48 && topo_read_slurm(m, path, false, &err) < 0, "bad file fails");
		ok(strncmp(err.text, path, strlen(path)) == 0 && strstr(err.text, ":2: "),
		   "error names file:line (%s)", err.text);
		unlink(path);
	}
	topo_free(m);
}

/* ---- `scontrol show nodes` output ---- */

/* Read text; 0 or -1, the message in msg. */
static int
read_nodes(const char *text, struct topo_slurm_node **recs, long *n, char *msg, size_t len)
{
	pl_err_t err;
	int rv;

	pl_err_clear(&err);
	rv = topo_read_slurm_nodes_text(text, "nodes.txt", recs, n, &err);
	snprintf(msg, len, "%s", err.text);
	return rv;
}

/* "name addr port" of every record, ';'-separated, into buf. */
static const char *
nodes_str(const struct topo_slurm_node *r, long n, char *buf, size_t size)
{
	size_t len = 0;
	long i;

	buf[0] = '\0';
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s %s %ld", i ? ";" : "", r[i].name,
					r[i].addr[0] ? r[i].addr : "-", r[i].port);
	return buf;
}

static void
test_scontrol_nodes(void)
{
	struct topo_slurm_node *r = NULL, *r2 = NULL;
	char msg[PL_ERR_TEXT], got[2048], want[2048], name[80], text[600];
	pl_err_t err;
	long n = 0, n2 = 0;

	/* The emulated cluster's four nodes, as Slurm 22.05.8 printed them. */
	pl_err_clear(&err);
	ok(topo_read_slurm_nodes(data_path("lab-scontrol-nodes.txt"), NULL, &r, &n, &err) == 0,
	   "the lab's scontrol show nodes -o reads (%s)", err.text);
	is_str(nodes_str(r, n, got, sizeof(got)),
	       "node1 127.0.0.1 18801;node2 127.0.0.1 18802;node3 127.0.0.1 18803;node4 127.0.0.1 18804",
	       "each node's NodeAddr and slurmd Port");
	ok(n == 4 && r[0].line == 1 && r[3].line == 4, "one line per node");
	pl_err_clear(&err);
	ok(topo_read_slurm_nodes(data_path("lab-scontrol-nodes-long.txt"), "long", &r2, &n2, &err) == 0,
	   "the long form (no -o) reads (%s)", err.text);
	is_str(nodes_str(r2, n2, want, sizeof(want)), got, "to the same nodes, addresses and ports");
	ok(n2 == 4 && r2[0].line == 1 && r2[1].line == 19 && r2[3].line == 55,
	   "records start at their NodeName= lines (1, 19, 37, 55)");
	free(r);
	free(r2);
	r = r2 = NULL;

	/* A cluster of distinct addresses on the default SlurmdPort (no Port=
	 * shown); gpu004's drain reason holds "Port=1", which is text. */
	pl_err_clear(&err);
	ok(topo_read_slurm_nodes(data_path("example-scontrol-nodes.txt"), NULL, &r, &n, &err) == 0,
	   "a real-looking cluster's listing reads (%s)", err.text);
	is_str(nodes_str(r, n, got, sizeof(got)),
	       "gpu001 10.12.0.11 0;gpu002 10.12.0.12 0;gpu003 10.12.0.13 0;gpu004 10.12.0.14 0;"
	       "gpu005 gpu005.ib.hpc.example.org 0;gpu006 fd00:12::16 0",
	       "IPv4, a DNS name and IPv6; no Port= is port 0 (SlurmdPort); a Reason's words are not fields");
	free(r);
	r = NULL;

	/* Free text comes after the fields we read; what follows it is its own. */
	ok(read_nodes("NodeName=a OS=Linux 6.1 #1 NodeAddr=10.0.0.9 Port=7 SMP\n", &r, &n, msg,
		      sizeof(msg)) == 0 && n == 1 && !r[0].addr[0] && r[0].port == 0,
	   "words after OS= are never read as fields");
	free(r);
	r = NULL;
	ok(read_nodes("NodeName=a NodeAddr=10.0.0.1 Port=7001 NodeAddr=10.0.0.2 Port=7002\r\n\n\nNodeName=b\n",
		      &r, &n, msg, sizeof(msg)) == 0 && n == 2 && strcmp(r[0].addr, "10.0.0.1") == 0 &&
	   r[0].port == 7001 && !r[1].addr[0] && r[1].line == 4,
	   "the first NodeAddr and Port count; blank lines and CR are fine; a record may lack both");
	free(r);
	r = NULL;
	memset(name, 'n', TOPO_NAME - 1);
	name[TOPO_NAME - 1] = '\0';
	snprintf(text, sizeof(text), "NodeName=%s NodeAddr=%s\n", name, name);
	ok(read_nodes(text, &r, &n, msg, sizeof(msg)) == 0 && strcmp(r[0].name, name) == 0 &&
	   strcmp(r[0].addr, name) == 0, "a 63-character name and address are kept whole");
	free(r);
	r = NULL;

	/* Refusals name the file, the line and what is accepted. */
	{
		static const struct {
			const char *text, *needle, *name;
		} bad[] = {
			{ "", "nodes.txt: names no node (accepted: `scontrol show nodes -o` output",
			  "empty input" },
			{ "\n  \n", "names no node", "only blank lines" },
			{ "No nodes in the system\n", "nodes.txt:1: 'No' does not start a node's record (accepted:",
			  "scontrol's own message" },
			{ "   NodeAddr=1.2.3.4\n", "nodes.txt:1: an indented line outside a node's record",
			  "an indented line first" },
			{ "NodeName=a\n\n   Port=5\n", "nodes.txt:3: an indented line outside",
			  "an indented line after a blank one" },
			{ "NodeName= Arch=x\n", "nodes.txt:1: NodeName= is empty", "an empty name" },
			{ "NodeName=a NodeAddr=10.0.0.256\n",
			  "nodes.txt:1: node 'a': NodeAddr: node address '10.0.0.256' is neither a host name nor an IP address (accepted:",
			  "an IPv4 address out of range" },
			{ "NodeName=a\n   NodeAddr=[::1]\n", "nodes.txt:2: node 'a': NodeAddr: node address '[::1]'",
			  "a bracketed IPv6 address (line 2)" },
			{ "NodeName=a NodeAddr=\n", "node 'a': NodeAddr: node address is empty",
			  "an empty NodeAddr" },
			{ "NodeName=a Port=0\n", "nodes.txt:1: node 'a': Port=0 is not a port (accepted: 1 to 65535)",
			  "port 0" },
			{ "NodeName=a Port=65536\n", "Port=65536 is not a port", "port 65536" },
			{ "NodeName=a Port=99999999999999999999\n", "is not a port", "a 20-digit port" },
			{ "NodeName=a Port=68x\n", "Port=68x is not a port", "a port with a letter" },
			{ "NodeName=a Port=\n", "Port= is not a port", "an empty port" },
		};
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			ok(read_nodes(bad[i].text, &r, &n, msg, sizeof(msg)) < 0 && r == NULL && n == 0,
			   "refused: %s", bad[i].name);
			like(msg, bad[i].needle, "  saying so");
		}
	}
	memset(name, 'n', TOPO_NAME);
	name[TOPO_NAME] = '\0';
	snprintf(text, sizeof(text), "NodeName=%s\n", name);
	ok(read_nodes(text, &r, &n, msg, sizeof(msg)) < 0, "a 64-character name is refused");
	like(msg, "longer than 63 characters", "  saying the limit");
	memset(text, 'a', sizeof(text));
	memcpy(text, "NodeName=x NodeAddr=", 20);
	text[20 + TOPO_ADDR_MAX + 1] = '\n';
	text[20 + TOPO_ADDR_MAX + 2] = '\0';
	ok(read_nodes(text, &r, &n, msg, sizeof(msg)) < 0, "a 256-byte NodeAddr is refused");
	like(msg, "NodeAddr is longer than 255 bytes", "  saying the limit");
	pl_err_clear(&err);
	ok(topo_read_slurm_nodes("/nonexistent/nodes.txt", NULL, &r, &n, &err) < 0 &&
	   strstr(err.text, "/nonexistent/nodes.txt: cannot open"), "a missing file is named");
}

/* Node addresses: what topo_addr_check takes and refuses. */
static void
test_addr_check(void)
{
	static const char *const good[] = {
		"node1", "gpu-a17.ib.example.org", "rack_3-n07", "10.0.0.1", "255.255.255.255",
		"::1", "fd00:12::16", "::ffff:10.1.2.3", "x", "1node", "a.b.c.d",
	};
	static const char *const refused[] = {
		"", "-node", "node-", "a..b", ".a", "a.", "10.0.0.256", "1.2.3", "10.0.0.1.5",
		"a b", "a\tb", "a\x01", "[::1]", "fd00::12::1", "no\xc3\xa9ud", "a:b", "a;b", "a/b",
	};
	char lab[300], msg[PL_ERR_TEXT];
	pl_err_t err;
	size_t i;
	bool all = true;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		pl_err_clear(&err);
		if (topo_addr_check(good[i], &err) < 0) {
			diag("refused '%s': %s", good[i], err.text);
			all = false;
		}
	}
	ok(all, "host names, IPv4 and IPv6 literals are taken");
	all = true;
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		pl_err_clear(&err);
		if (topo_addr_check(refused[i], &err) == 0 || !strstr(err.text, "(accepted: ")) {
			diag("took '%s'", refused[i]);
			all = false;
		}
	}
	ok(all, "bad labels, bad dotted quads, blanks, control bytes, brackets, non-ASCII refused, saying what is accepted");
	memset(lab, 'a', 64);
	lab[64] = '\0';
	ok(topo_addr_check(lab, &err) < 0, "a 64-byte label is refused");
	lab[63] = '\0';
	ok(topo_addr_check(lab, &err) == 0, "a 63-byte label is taken");
	/* 4 x (63 + 1) = 256 bytes: past the limit. */
	snprintf(lab, sizeof(lab), "%.63s.%.63s.%.63s.%.63s", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
		 "ccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",
		 "ddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd");
	ok(strlen(lab) == 255 && topo_addr_check(lab, &err) == 0, "a 255-byte name is taken");
	strcat(lab, "e");
	pl_err_clear(&err);
	ok(topo_addr_check(lab, &err) < 0, "a 256-byte name is refused");
	snprintf(msg, sizeof(msg), "%s", err.text);
	like(msg, "longer than 255 bytes", "  saying the limit");
}

/* ---- nccl-tests ---- */

static int
read_nt(struct nccltests_result *r, const char *path, char *msg, size_t len)
{
	pl_err_t err;
	int rv;

	pl_err_clear(&err);
	rv = topo_read_nccltests(r, path, &err);
	snprintf(msg, len, "%s", err.text);
	return rv;
}

/* Write text to a temporary file; caller unlinks. */
static int
temp_file(char *path, const char *t)
{
	int fd;
	size_t n = strlen(t);

	strcpy(path, "/tmp/pl_nt_XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, t, n) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* The file with CRLF line ends, or "N/A" for #wrong. */
static char *
transform(const char *rel, int crlf, int na)
{
	FILE *f = fopen(data_path(rel), "rb");
	char *out = malloc(1 << 20);
	size_t n = 0;
	int c, col = 0, row = 0, lead = 1;

	if (!f || !out) {
		if (f)
			fclose(f);
		free(out);
		return NULL;
	}
	while ((c = fgetc(f)) != EOF && n + 8 < (1 << 20)) {
		if (c == '\n' && crlf)
			out[n++] = '\r';
		/* In data rows (first non-blank a digit), the #wrong cells are
		 * the only lone "0" tokens. */
		if (lead && c != ' ') {
			row = c >= '0' && c <= '9';
			lead = 0;
		}
		if (na && row && c == '0' && col > 0 && out[n - 1] == ' ') {
			int d = fgetc(f);

			if (d == '\n' || d == ' ') {
				memcpy(out + n, "N/A", 3);
				n += 3;
				ungetc(d, f);
				col++;
				continue;
			}
			ungetc(d, f);
		}
		out[n++] = (char)c;
		col = c == '\n' ? 0 : col + 1;
		lead = c == '\n' ? 1 : lead;
	}
	out[n] = '\0';
	fclose(f);
	return out;
}

static void
test_nccltests(void)
{
	struct nccltests_result r;
	char msg[PL_ERR_TEXT], path[64];
	char *t;

	ok(read_nt(&r, data_path("nccl/gcp-a3mega-2x8-h100_all_reduce_perf.txt"),
		   msg, sizeof(msg)) == 0, "gcp: reads (Markdown title, quoted lines) %s", msg);
	is_int(r.nranks, 16, "gcp: 16 ranks");
	is_int(r.nnodes, 2, "gcp: 2 hosts");
	is_int(r.nrows, 31, "gcp: 31 sizes from 8 B to 8 GiB");
	is_int(r.max_bytes, 8589934592L, "gcp: largest size 8 GiB");
	is_double(r.busbw_max, 338.82, 1e-9, "gcp: busbw at 8 GiB is the out-of-place 338.82");
	is_double(r.busbw_avg, 70.742, 1e-9, "gcp: average 70.742");

	ok(read_nt(&r, data_path("nccl/h200-2x8-baremetal_all_reduce_perf_nccl-tests-issue256.txt"),
		   msg, sizeof(msg)) == 0, "h200: reads %s", msg);
	is_int(r.nranks, 16, "h200: 16 ranks");
	is_int(r.nnodes, 2, "h200: 2 hosts");
	is_int(r.nrows, 3, "h200: 3 sizes");
	is_int(r.max_bytes, 9663676416L, "h200: largest size 9 GiB");
	is_double(r.busbw_max, 488.81, 1e-9, "h200: busbw 488.81");
	is_double(r.busbw_avg, 475.782, 1e-9, "h200: average 475.782");
	ok(strcmp(r.host[0], "fs-207") == 0 && strcmp(r.host[1], "fs-208") == 0,
	   "h200: its hosts, in rank order: %s, %s", r.host[0], r.host[1]);

	t = transform("nccl/h200-2x8-baremetal_all_reduce_perf_nccl-tests-issue256.txt", 1, 1);
	ok(t && strstr(t, "\r\n"), "CRLF copy made");
	{
		const char *q = t;
		int nna = 0;

		while (q && (q = strstr(q, "N/A")) != NULL) {
			nna++;
			q += 3;
		}
		is_int(nna, 6, "N/A in the 6 #wrong cells of 3 rows");
	}
	if (t && temp_file(path, t) == 0) {
		ok(read_nt(&r, path, msg, sizeof(msg)) == 0, "CRLF + N/A: reads %s", msg);
		is_int(r.nrows, 3, "CRLF + N/A: 3 rows");
		is_double(r.busbw_max, 488.81, 1e-9, "CRLF + N/A: busbw 488.81");
		is_int(r.nnodes, 2, "CRLF + N/A: 2 hosts");
		unlink(path);
	}
	free(t);

	/* In-place better than out-of-place; extra columns; old bus id format. */
	if (temp_file(path,
		      "#  Rank  0 Group  0 Pid 1 on a device  0 [0x18] GPU\n"
		      "#  Rank  1 Group  0 Pid 2 on b device  0 [0x18] GPU\n"
		      "#  Rank  2 Group  0 Pid 3 on b device  1 [0x19] GPU\n"
		      "#  size count type redop root time algbw busbw #wrong i_cv% "
		      "time algbw busbw #wrong i_cv%\n"
		      "  1024 256 float sum -1 10.0 0.10 0.13 0 1.5 9.0 0.11 0.15 0 1.2\n"
		      "  2048 512 float sum -1 10.0 0.20 0.27 0 1.5 9.0 0.22 0.30 0 1.2\n"
		      "  4096 1024 float sum -1 1") == 0) {
		ok(read_nt(&r, path, msg, sizeof(msg)) == 0, "extra columns: reads %s", msg);
		is_int(r.nrows, 2, "extra columns: cut-off last row skipped");
		is_int(r.max_bytes, 2048, "extra columns: largest size");
		is_double(r.busbw_max, 0.30, 1e-9, "extra columns: in-place busbw taken");
		is_double(r.busbw_avg, 0, 1e-9, "no footer: average 0");
		is_int(r.nranks, 3, "3 ranks");
		is_int(r.nnodes, 2, "2 hosts");
		unlink(path);
	}
	if (temp_file(path, "# nThread 1 nGpus 1\n# Using devices\n#\n") == 0) {
		ok(read_nt(&r, path, msg, sizeof(msg)) < 0, "no rows fails");
		like(msg, "no result rows: is this all_reduce_perf output?", "no rows message");
		unlink(path);
	}
	if (temp_file(path, "") == 0) {
		ok(read_nt(&r, path, msg, sizeof(msg)) < 0, "empty file fails");
		unlink(path);
	}
	ok(read_nt(&r, data_path("slurm/circe-superpod_topology.conf"), msg, sizeof(msg)) < 0,
	   "a topology.conf is not nccl-tests output");
	ok(read_nt(&r, "/nonexistent/x.txt", msg, sizeof(msg)) < 0, "missing file fails");
	like(msg, "/nonexistent/x.txt: cannot open", "missing file named");
}

/* ---- format guess ---- */

static const char *
expected_format(const char *dir, const char *file)
{
	size_t n = strlen(file);

	if (strcmp(dir, "hwloc") == 0)
		return "hwloc";
	if (strcmp(dir, "nvidia-smi-topo") == 0)
		return "nvsmi";
	if (strcmp(dir, "slurm") == 0)
		return n > 5 && strcmp(file + n - 5, ".yaml") == 0 ? "slurm-topology-yaml" :
		       "slurm-topology";
	if (strcmp(dir, "nccl") == 0) {
		if (strstr(file, "graph"))
			return NULL;	/* NCCL_GRAPH_FILE, not a topology */
		return n > 4 && strcmp(file + n - 4, ".txt") == 0 ? "nccl-tests" : "nccl-xml";
	}
	return "?";
}

static void
test_sniff_dir(const char *dir)
{
	char path[1024];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", data, dir);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		const char *want, *got;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", data, dir, de->d_name);
		got = topo_sniff(path);
		want = expected_format(dir, de->d_name);
		if (want && strcmp(want, "?") == 0)
			ok(1, "sniff %s/%s: %s (not checked)", dir, de->d_name,
			   got ? got : "(null)");
		else
			is_str(got, want, "sniff %s/%s is %s", dir, de->d_name,
			       want ? want : "nothing");
	}
	closedir(d);
}

static void
test_sniff(void)
{
	char path[64];
	struct dirent *de;
	DIR *d = opendir(data);

	is_str(topo_sniff(data_path("SOURCES.md")), NULL, "sniff SOURCES.md: nothing");
	if (d) {
		while ((de = readdir(d)) != NULL)
			if (de->d_name[0] != '.' && !strchr(de->d_name, '.'))
				test_sniff_dir(de->d_name);
		closedir(d);
	}
	is_str(topo_sniff("/nonexistent"), NULL, "sniff: missing file");
	is_str(topo_sniff(NULL), NULL, "sniff: NULL path");
	if (temp_file(path, "\xef\xbb\xbf\n  {\"name\": \"x\"}\n") == 0) {
		is_str(topo_sniff(path), "map", "sniff: JSON object");
		unlink(path);
	}
	if (temp_file(path, "# comment\nswitchname = s0 Nodes=n1\n") == 0) {
		is_str(topo_sniff(path), "slurm-topology", "sniff: lower-case SwitchName");
		unlink(path);
	}
	if (temp_file(path, "  BLOCKNAME=b1 Nodes=n[1-4]") == 0) {
		is_str(topo_sniff(path), "slurm-topology", "sniff: upper-case BlockName");
		unlink(path);
	}
	if (temp_file(path, "#  size count type redop root time algbw busbw\n") == 0) {
		is_str(topo_sniff(path), "nccl-tests", "sniff: nccl-tests header alone");
		unlink(path);
	}
	if (temp_file(path, "") == 0) {
		is_str(topo_sniff(path), NULL, "sniff: empty file");
		unlink(path);
	}
	if (temp_file(path, "<!-- x --><?xml?><html>") == 0) {
		is_str(topo_sniff(path), NULL, "sniff: other XML");
		unlink(path);
	}
	if (temp_file(path, "<!-- unterminated") == 0) {
		is_str(topo_sniff(path), NULL, "sniff: unterminated XML comment");
		unlink(path);
	}
}

/* ---- the runs that measure the link classes (bwtest) ---- */

/* "a,b" of a run, "" for none. */
static const char *
run_nodes(const struct topo_map *m, const struct topo_bwrun *r)
{
	static char buf[2 * TOPO_NAME + 2];

	snprintf(buf, sizeof(buf), "%s%s%s", r->nnodes > 0 ? m->nodes[r->node[0]].name : "",
		 r->nnodes > 1 ? "," : "", r->nnodes > 1 ? m->nodes[r->node[1]].name : "");
	return buf;
}

/* Map indices of the names in list (a hostlist); caller frees. */
static long *
pick(const struct topo_map *m, const char *list, long *n)
{
	struct hosts h = { 0, NULL };
	long k, *c;

	if (hosts_expand(&h, list, 0, NULL) < 0)
		return NULL;
	c = calloc((size_t)h.n + 1, sizeof(*c));
	for (k = 0; c && k < h.n; k++)
		c[k] = topo_find_node(m, h.names[k]);
	*n = h.n;
	hosts_free(&h);
	return c;
}

static void
test_bwtest_runs(void)
{
	struct topo_bwrun r[TOPO_BW_NRUNS];
	struct nccltests_result nt;
	struct topo_map *m;
	pl_err_t err;
	long *c, n, none[1] = { 0 };

	/* The lab: leaf0 = node[1,3], leaf1 = node[2,4], spine above both. */
	m = topo_new();
	pl_err_clear(&err);
	topo_read_slurm(m, data_path("lab-topology.conf"), true, &err);
	topo_index(m, &err);
	ok(topo_bwtest_runs(m, NULL, 0, r, &err) == 0, "lab: runs chosen %s", err.text);
	is_str(run_nodes(m, &r[TOPO_BW_INTRA]), "node1", "lab: inside node1");
	is_int(r[TOPO_BW_INTRA].cls, TOPO_LINK_NVLINK, "lab: a node of no known type measures nvlink");
	is_str(run_nodes(m, &r[TOPO_BW_LEAF]), "node1,node3", "lab: node1 and node3 share leaf0");
	is_str(run_nodes(m, &r[TOPO_BW_SPINE]), "node1,node2", "lab: node2 is under leaf1");
	is_str(r[TOPO_BW_SPINE].via >= 0 ? m->switches[r[TOPO_BW_SPINE].via].name : "", "spine",
	       "lab: joined at the spine");
	c = pick(m, "node[2,4,1]", &n);
	topo_bwtest_runs(m, c, n, r, &err);
	is_str(run_nodes(m, &r[TOPO_BW_LEAF]), "node2,node4", "lab: the candidates' order is kept");
	is_str(run_nodes(m, &r[TOPO_BW_SPINE]), "node2,node1", "lab: and the spine pair starts there");
	free(c);
	c = pick(m, "node1", &n);
	topo_bwtest_runs(m, c, n, r, &err);
	ok(r[TOPO_BW_LEAF].nnodes == 0 && r[TOPO_BW_SPINE].nnodes == 0 && r[TOPO_BW_INTRA].nnodes == 1,
	   "lab, node1 alone: only the intra-node run (%s; %s)", r[TOPO_BW_LEAF].why,
	   r[TOPO_BW_SPINE].why);
	free(c);
	is_int(topo_bwtest_runs(m, none, 0, r, &err), -1, "an empty candidate list: refused");
	is_int(topo_intra_class(m), TOPO_LINK_NVLINK, "no node types: nvlink inside a node");
	m->link[TOPO_LINK_PCIE].measured = true;
	is_int(topo_intra_class(m), TOPO_LINK_PCIE, "only pcie measured: pcie inside a node");
	memset(&nt, 0, sizeof(nt));
	pl_err_clear(&err);
	ok(topo_link_measured(m, TOPO_LINK_LEAF, &nt, "x.txt", &err) < 0 && strstr(err.text, "x.txt") &&
	   !m->link[TOPO_LINK_LEAF].measured, "a result of no bandwidth is refused, naming it");
	topo_free(m);

	/* Three levels: leaf100 and leaf101 under grp10 meet lower than the root. */
	m = load("slurm/schedmd-testsuite_3level-tree_topology.conf", true);
	topo_index(m, &err);
	topo_finish(m);
	topo_bwtest_runs(m, NULL, 0, r, &err);
	is_str(run_nodes(m, &r[TOPO_BW_SPINE]), "peta10000,peta10020", "3-level: the closest other leaf");
	is_str(r[TOPO_BW_SPINE].via >= 0 ? m->switches[r[TOPO_BW_SPINE].via].name : "", "grp10",
	       "3-level: joined at grp10, level 1");
	c = pick(m, "peta[10000,15000,10400]", &n);
	topo_bwtest_runs(m, c, n, r, &err);
	is_str(run_nodes(m, &r[TOPO_BW_SPINE]), "peta10000,peta10400",
	       "3-level: grp11's leaf (under im0) before grp23's (under im1, across the root)");
	free(c);
	topo_free(m);

	/* Disconnected trunks: leafC's nodes reach no other leaf. */
	m = load("slurm/schedmd-testsuite_disconnected-trunks_topology.conf", true);
	topo_index(m, &err);
	topo_finish(m);
	c = pick(m, "node[33,17,34]", &n);
	topo_bwtest_runs(m, c, n, r, &err);
	ok(r[TOPO_BW_SPINE].nnodes == 0 && strstr(r[TOPO_BW_SPINE].why, "leafC"),
	   "trunks: leafC joins no other tree: %s", r[TOPO_BW_SPINE].why);
	free(c);
	topo_free(m);

	/* Blocks: NVLink blocks have no leaf run; network blocks do. */
	m = load("slurm/schedmd-testsuite_block_topology.conf", true);
	topo_index(m, &err);
	topo_bwtest_runs(m, NULL, 0, r, &err);
	ok(r[TOPO_BW_LEAF].nnodes == 0 && strstr(r[TOPO_BW_LEAF].why, "NVLink"),
	   "NVLink blocks: no leaf run: %s", r[TOPO_BW_LEAF].why);
	is_str(run_nodes(m, &r[TOPO_BW_SPINE]), "node01,node05", "NVLink blocks: the spine run crosses b1 to b2");
	topo_free(m);
	m = load("slurm/schedmd-testsuite_block_topology.conf", false);
	topo_index(m, &err);
	topo_bwtest_runs(m, NULL, 0, r, &err);
	is_str(run_nodes(m, &r[TOPO_BW_LEAF]), "node01,node02", "network blocks: a leaf run inside b1");
	topo_free(m);
}

int
main(void)
{
	plan(284 + 23);
	data = getenv("PL_TEST_DATA");
	if (!data)
		data = "../tests/data";
	test_circe();
	test_tara();
	test_unsw();
	test_3level();
	test_trunks();
	test_blocks();
	test_inline_ok();
	test_inline_errors();
	topo_free(last);
	test_files_errors();
	test_scontrol_nodes();
	test_addr_check();
	test_nccltests();
	test_bwtest_runs();
	test_sniff();
	return done_testing();
}
