/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plugin's pure parts: plugstack arguments, srun's command line, the
 * check of a placement answer against the step, request building and the
 * in-process fallback.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "spk_answer.h"
#include "spk_bounds.h"
#include "spk_plugin.h"
#include "spk_reg.h"
#include "spk_send.h"
#include "spk_request.h"
#include "spk_release.h"
#include "spk_shape.h"
#include "tap.h"
#include "topo.h"

static int
args(const char *line, struct spk_conf *c, char *msg, size_t len)
{
	char buf[8192], *av[32], *save = NULL, *tok;
	pl_err_t err;
	int ac = 0, rv;

	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " ", &save); tok && ac < 32; tok = strtok_r(NULL, " ", &save))
		av[ac++] = tok;
	pl_err_clear(&err);
	rv = spk_args_parse(ac, av, c, &err);
	snprintf(msg, len, "%s", err.text);
	return rv;
}

static void
test_args(void)
{
	struct spk_conf c;
	char msg[512];

	ok(args("", &c, msg, sizeof(msg)) == 0, "no arguments: defaults");
	is_str(c.socket, "/run/parallel-layout/layoutd-%n.sock", "default socket pattern");
	is_int(c.fallback, FALLBACK_LOCAL, "default fallback local");
	is_int(c.timeout_ms, 2000, "default timeout 2000 ms");
	is_int(c.export_mask, EXPORT_FRAMEWORK | EXPORT_NCCL, "default export framework,nccl");
	ok(c.reorder, "default reorder yes");
	ok(c.watch, "default watch yes");
	is_str(c.hook, PL_NCCL_HOOK, "default hook: the one the build installs");
	ok(c.hook[0] == '/' && strstr(c.hook, "/libparallel-layout-nccl.so"),
	   "the default hook is an absolute path to libparallel-layout-nccl.so (%s)", c.hook);
	is_str(c.watch_dir, "/dev/shm/parallel-layout", "default watch_dir");
	ok(args("map=/etc/m.json socket=/run/x-%n.sock fallback=fail timeout_ms=500 export=slurm,nccl "
		"reorder=no master_addr=10.0.0.1 master_port_base=30000 master_port_span=100 "
		"socket_ifname=ib0 ras_port_base=29000 ras_port_span=0 force=RANK,MASTER_PORT",
		&c, msg, sizeof(msg)) == 0, "every key parses (%s)", msg);
	is_str(c.map, "/etc/m.json", "map");
	is_int(c.fallback, FALLBACK_FAIL, "fallback=fail");
	is_int(c.timeout_ms, 500, "timeout_ms");
	is_int(c.export_mask, EXPORT_SLURM | EXPORT_NCCL, "export list");
	ok(!c.reorder, "reorder=no");
	is_int(c.master_port_base, 30000, "master_port_base");
	is_int(c.ras_port_span, 0, "ras_port_span 0 turns NCCL_RAS_ADDR off");
	is_str(c.force, "RANK,MASTER_PORT", "force list");
	ok(args("watch=no hook=/opt/pl/hook.so watch_dir=/run/plw", &c, msg, sizeof(msg)) == 0,
	   "the watch keys parse (%s)", msg);
	ok(!c.watch, "watch=no");
	is_str(c.hook, "/opt/pl/hook.so", "hook=");
	is_str(c.watch_dir, "/run/plw", "watch_dir=");
	ok(args("watch=maybe", &c, msg, sizeof(msg)) < 0, "bad watch refused");
	like(msg, "watch=maybe: expected yes or no", "with the accepted values");
	ok(args("hook=libparallel-layout-nccl.so", &c, msg, sizeof(msg)) < 0,
	   "a relative hook refused");
	like(msg, "hook=libparallel-layout-nccl.so: expected an absolute path", "saying why");
	ok(args("watch_dir=/", &c, msg, sizeof(msg)) < 0, "watch_dir=/ refused");
	ok(args("watch_dir=shm/pl", &c, msg, sizeof(msg)) < 0, "a relative watch_dir refused");
	like(msg, "watch_dir=shm/pl: expected an absolute path (not /)", "saying why");
	ok(args("timeout=5", &c, msg, sizeof(msg)) < 0, "unknown key refused");
	like(msg, "unknown key 'timeout' (accepted: map, socket", "naming it and the accepted keys");
	ok(args("map", &c, msg, sizeof(msg)) < 0, "a word without = refused");
	like(msg, "expected key=value", "saying what is expected");
	ok(args("fallback=maybe", &c, msg, sizeof(msg)) < 0, "bad fallback refused");
	like(msg, "fallback=maybe: expected local or fail", "with the accepted values");
	ok(args("timeout_ms=0", &c, msg, sizeof(msg)) < 0, "timeout 0 refused");
	ok(args("timeout_ms=12x", &c, msg, sizeof(msg)) < 0, "non-numeric timeout refused");
	like(msg, "expected a whole number from 1 to 60000", "with the range");
	ok(args("export=framework,mpi", &c, msg, sizeof(msg)) < 0, "unknown export family refused");
	like(msg, "unknown family 'mpi'", "naming it");
	ok(args("reorder=maybe", &c, msg, sizeof(msg)) < 0, "bad yes/no refused");
	ok(args("master_port_base=60000 master_port_span=10000", &c, msg, sizeof(msg)) < 0,
	   "a port range past 65535 refused");
	like(msg, "passes port 65535", "saying why");
	ok(args("timeout_ms=100 timeout_ms=200", &c, msg, sizeof(msg)) < 0, "a key given twice refused");
	like(msg, "timeout_ms is given twice", "naming it");
	{
		char line[6000];

		memset(line, 'x', sizeof(line));
		memcpy(line, "fallback=", 9);
		line[5009] = '\0';
		ok(args(line, &c, msg, sizeof(msg)) < 0 && strlen(msg) < 200,
		   "a 5,000-character value is echoed cut (%zu characters)", strlen(msg));
		like(msg, "...(5000 bytes)", "saying how long it was");
	}
}

/* The release the shape tests read command lines with. */
static const struct spk_release *shape_rel;

static void
shape(const char *line, struct spk_shape *s)
{
	char buf[1024], *av[64], *save = NULL, *tok;
	int ac = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " ", &save); tok && ac < 63; tok = strtok_r(NULL, " ", &save))
		av[ac++] = tok;
	av[ac] = NULL;
	spk_shape_parse(shape_rel, ac, av, s);
}

static void
test_shape(void)
{
	struct spk_shape s;

	int ma, mi;

	shape_rel = spk_release_find("22.05.8", &ma, &mi);
	unsetenv("SLURM_NTASKS");
	unsetenv("SLURM_NNODES");
	unsetenv("SLURM_NTASKS_PER_NODE");
	unsetenv("SLURM_DISTRIBUTION");
	shape("srun -N4 -n32 --parallel-layout=tp8,pp4 python train.py -n 5 -N 9", &s);
	ok(s.complete && s.ntasks == 32 && s.nnodes == 4, "-N4 -n32: 32 tasks on 4 nodes; the program's own -n is not ours");
	shape("srun --nodes 2 --ntasks=16 --parallel-layout tp8 -l true", &s);
	ok(s.complete && s.ntasks == 16 && s.nnodes == 2, "long options, with = or a separate value");
	shape("srun -ln16 -N2 true", &s);
	ok(s.ntasks == 16 && s.nnodes == 2, "short options clustered: -ln16");
	shape("srun --ntasks-per-node=8 -N4 true", &s);
	ok(s.ntasks == 32 && s.ntasks_per_node == 8, "ntasks from ntasks-per-node x nodes");
	shape("srun -w node[1-4] -n32 true", &s);
	ok(s.nodelist, "-w noted (Slurm then ignores SLURM_HOSTFILE)");
	shape("srun -m cyclic -n32 -N4 true", &s);
	ok(s.steer_blockers, "-m leaves Slurm's placement alone");
	shape("srun -N2-4 -n32 true", &s);
	ok(s.steer_blockers, "a node range leaves the count to Slurm");
	shape("srun --frobnicate -n8 true", &s);
	ok(!s.complete, "an option we do not know makes the shape incomplete");
	shape("srun --parallel-layout=tp8 --parallel-layout-verbose -n8 true", &s);
	ok(s.verbose && s.ntasks == 8, "the verbose option is seen whatever its position");
	setenv("SLURM_NTASKS", "32", 1);
	setenv("SLURM_NNODES", "4", 1);
	shape("srun --parallel-layout=tp8,pp4 true", &s);
	ok(s.ntasks == 32 && s.nnodes == 4, "inside an allocation: counts from SLURM_NTASKS/SLURM_NNODES");
	shape("srun -n8 true", &s);
	ok(s.ntasks == 8, "the command line wins over the environment");
	unsetenv("SLURM_NTASKS");
	unsetenv("SLURM_NNODES");
	shape("srun", &s);
	ok(s.ntasks == 0 && s.nnodes == 0, "nothing given: unknown");
	shape("srun -N2 --ntasks-per-node=99999999999999999999 true", &s);
	ok(s.invalid[0] && s.ntasks == 0 && s.ntasks_per_node == 0,
	   "a count past a long is refused, not wrapped");
	like(s.invalid, "--ntasks-per-node=99999999999999999999: expected a count from 1 to",
	     "naming the option and the accepted range");
	shape("srun -N 99999999 --ntasks-per-node=99999999 true", &s);
	ok(s.invalid[0] && s.ntasks == 0, "nodes x tasks per node past the limit is refused");
	like(s.invalid, "more than", "saying so");
	setenv("SLURM_NNODES", "2", 1);
	setenv("SLURM_NTASKS_PER_NODE", "99999999999999999999", 1);
	shape("srun true", &s);
	like(s.invalid, "SLURM_NTASKS_PER_NODE=99999999999999999999", "the same from SLURM_* variables");
	unsetenv("SLURM_NNODES");
	unsetenv("SLURM_NTASKS_PER_NODE");
	shape("srun -N2 --ntasks-per-node=8 true", &s);
	ok(!s.invalid[0] && s.ntasks == 16, "ordinary counts still multiply");
	shape("srun -F hosts.txt -n8 true", &s);
	ok(s.complete && s.steer_blockers && s.ntasks == 8, "-F FILE (--nodefile) takes its value and leaves placement alone");
	shape("srun -K1 -k -n8 true", &s);
	ok(s.complete && s.ntasks == 8, "-K1 and -k: optional values attached only");
	shape("srun -K -n8 true", &s);
	ok(s.complete && s.ntasks == 8, "-K alone takes no value");
	shape("srun --accel-bind=g --tasks-per-node 8 -N2 true", &s);
	ok(s.complete && s.nnodes == 2, "--accel-bind takes a value; --tasks-per-node is srun's alias");
	shape("srun --parallel-layout-watch no -n8 true", &s);
	ok(s.complete && s.ntasks == 8, "--parallel-layout-watch takes its value");
	shape("srun --label=yes -n8 true", &s);
	ok(!s.complete, "a value given to a flag: srun refuses it, the shape is incomplete");
	shape("srun --exclusive -n8 true", &s);
	ok(s.complete && s.ntasks == 8, "--exclusive alone is a flag (its value is optional)");
}

/* Each release's own options, read with the options of 22.05 and 24.11. */
static void
test_release(void)
{
	/* Each release with an srun option it brought (not in the release
	 * before) and one the release before had that it dropped. */
	static const struct {
		const char *version, *name, *added, *dropped;
	} known[] = {
		{ "22.05.8", "22.05", "accel-bind", NULL },
		{ "23.02.7", "23.02", "autocomplete", NULL },
		{ "23.11.10", "23.11", "treewidth", "gid" },
		{ "24.05.8", "24.05", "stepmgr", "power" },
		{ "24.11.5", "24.11", "oom-kill-step", NULL },
		{ "25.05.0-0rc1", "25.05", "wait-for-children", NULL },
		{ "25.11.2", "25.11", "resources", NULL },
		{ "26.05.1", "26.05", "async", NULL },
	};
	const struct spk_release *r22, *r24, *r25, *r26, *r;
	const char *name;
	struct spk_shape s;
	size_t i;
	int ma, mi;
	bool all = true;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		const char *a = known[i].added, *d = known[i].dropped;

		r = spk_release_find(known[i].version, &ma, &mi);
		if (!r || strcmp(r->name, known[i].name) != 0 ||
		    spk_release_long(r, a, strlen(a)) < 0 ||
		    (i > 0 && spk_release_long(r - 1, a, strlen(a)) >= 0) ||
		    (d && (spk_release_long(r, d, strlen(d)) >= 0 ||
			   spk_release_long(r - 1, d, strlen(d)) < 0))) {
			diag("%s: %s; --%s, --%s", known[i].version, r ? r->name : "not found", a,
			     d ? d : "");
			all = false;
		}
	}
	ok(all, "each release from 22.05 to 26.05 is found, with the srun options it added "
	   "and dropped");
	is_int(spk_nreleases, sizeof(known) / sizeof(known[0]), "and no other");
	r = spk_release_find("27.05.0", &ma, &mi);
	ok(!r && ma == 27 && mi == 5, "27.05: not known, read as 27.5");
	ok(spk_release_nearest(ma, mi) == &spk_releases[spk_nreleases - 1],
	   "a newer release reads command lines with the newest table");
	r = spk_release_find("21.08.8", &ma, &mi);
	ok(!r && spk_release_nearest(ma, mi) == &spk_releases[0], "an older one with the oldest");
	ok(!spk_release_find("", &ma, &mi) && ma == 0 && !spk_release_find("slurm", &ma, &mi) &&
	   !spk_release_find("24", &ma, &mi) && !spk_release_find("24.11x", &ma, &mi) &&
	   !spk_release_find(NULL, &ma, &mi) && !spk_release_find("99999.1", &ma, &mi),
	   "versions that cannot be read find nothing");
	ok(spk_release_nearest(0, 0) == &spk_releases[spk_nreleases - 1], "and read with the newest table");
	{
		char note[512];

		spk_release_unknown_note("27.05.0", note, sizeof(note));
		like(note, "Slurm 27.05.0 is not a release this plugin knows (22.05 to 26.05)",
		     "an unknown release is named in verbose mode, with the range known");
		like(note, "leaves Slurm's task placement alone", "saying placement is not steered");
		spk_release_unknown_note("", note, sizeof(note));
		like(note, "Slurm (version unknown)", "a version Slurm did not give");
	}

	r22 = spk_release_find("22.05.8", &ma, &mi);
	r24 = spk_release_find("24.11.5", &ma, &mi);
	r25 = spk_release_find("25.05.3", &ma, &mi);
	r26 = spk_release_find("26.05.0", &ma, &mi);
	ok(r22 && r24 && r25 && r26, "22.05, 24.11, 25.05, 26.05 found");
	if (!r22 || !r24 || !r25 || !r26)
		return;
	ok(!r22->init_failure_mode && !r24->init_failure_mode && r25->init_failure_mode &&
	   r25->nonzero_is_error && !r24->nonzero_is_error,
	   "init failure mode and non-zero-is-error from 25.05 on");
	is_int(spk_release_long(r22, "segment", 7), -1, "22.05 has no --segment");
	is_int(spk_release_long(r24, "segment", 7), PL_ARG_REQ, "24.11 has --segment SPEC");
	is_int(spk_release_long(r22, "oom-kill-step", 13), -1, "22.05 has no --oom-kill-step");
	is_int(spk_release_long(r24, "oom-kill-step", 13), PL_ARG_OPT, "24.11: --oom-kill-step[=0|1]");
	is_int(spk_release_long(r24, "wait-for-children", 17), -1, "24.11 has no --wait-for-children");
	is_int(spk_release_long(r25, "wait-for-children", 17), PL_ARG_NONE, "25.05 has it, a flag");
	ok(spk_release_long(r25, "spread-segments", 15) < 0 &&
	   spk_release_long(r26, "spread-segments", 15) == PL_ARG_NONE &&
	   spk_release_long(r26, "consolidate-segments", 20) == PL_ARG_NONE,
	   "--spread-segments and --consolidate-segments from 25.11");
	ok(spk_release_long(r25, "async", 5) < 0 && spk_release_long(r26, "async", 5) == PL_ARG_NONE,
	   "--async from 26.05");
	ok(spk_release_long(r22, "uid", 3) == PL_ARG_REQ && spk_release_long(r24, "uid", 3) < 0,
	   "--uid in 22.05, gone by 24.11");
	ok(spk_release_long(r22, "pty", 3) == PL_ARG_NONE && spk_release_long(r24, "pty", 3) == PL_ARG_OPT,
	   "--pty a flag in 22.05, an optional value in 24.11");
	ok(spk_release_long(r22, "power", 5) == PL_ARG_REQ && spk_release_long(r24, "power", 5) < 0,
	   "--power gone by 24.11");
	ok(spk_release_short(r22, 'n', &name) == PL_ARG_REQ &&
	   spk_release_short(r26, 'K', &name) == PL_ARG_OPT &&
	   spk_release_short(r22, 'l', &name) == PL_ARG_NONE &&
	   spk_release_short(r22, 'y', &name) < 0 && !name[0] &&
	   spk_release_short(r24, 'N', &name) == PL_ARG_REQ && strcmp(name, "nodes") == 0 &&
	   spk_release_short(r22, 0, &name) < 0,
	   "short letters: -n SPEC, -K[N], -l, no -y; -N is --nodes");
	ok(spk_release_long(r22, "segmen", 6) < 0 && spk_release_long(r22, "nodes", 4) < 0,
	   "a prefix is not an option (srun's own abbreviations make the shape incomplete)");

	/* The same command line, read with each release's table. */
	shape_rel = r22;
	shape("srun --segment=4 -n8 true", &s);
	ok(!s.complete, "22.05 does not know --segment: the shape is incomplete");
	shape_rel = r24;
	shape("srun --segment 4 -n8 true", &s);
	ok(s.complete && s.ntasks == 8, "24.11 reads --segment 4 -n8: 8 tasks");
	shape("srun --oom-kill-step -n8 true", &s);
	ok(s.complete && s.ntasks == 8, "--oom-kill-step alone does not swallow -n8");
	shape_rel = r25;
	shape("srun --wait-for-children -n 16 -N 2 true", &s);
	ok(s.complete && s.ntasks == 16 && s.nnodes == 2, "25.05 reads --wait-for-children -n 16 -N 2");
	shape_rel = r26;
	shape("srun --async --spread-segments -N4 -n32 true", &s);
	ok(s.complete && s.ntasks == 32 && s.nnodes == 4, "26.05 reads --async --spread-segments");
	shape_rel = r22;
}

/*
 * A placement worked out by hand for a step of 2 nodes x 2 tasks, tp2:
 * world 4, ranks 0,1 on nodeB (the step's second node) and 2,3 on nodeA.
 * view: "all", "hostfile" (rank_nodes, no tasks) or "node:NAME".
 */
static const char *const step_names[] = { "nodeA", "nodeB" };
static const long step_ntasks[] = { 2, 2 };

static void
hand_answer(struct proto_placement *p, const char *view)
{
	static const long rank_of_procid[] = { 2, 3, 0, 1 };
	pl_err_t err;
	long i, k = 0;

	memset(p, 0, sizeof(*p));
	snprintf(p->spec, sizeof(p->spec), "tp2");
	pl_err_clear(&err);
	layout_parse("tp2", &p->layout, &err);
	layout_resolve(&p->layout, 4, &err);
	p->world = 4;
	p->nnodes = 2;
	p->nodes = calloc(2, sizeof(*p->nodes));
	for (i = 0; i < 2; i++) {
		snprintf(p->nodes[i].name, sizeof(p->nodes[i].name), "%s", step_names[i]);
		p->nodes[i].ntasks = 2;
	}
	p->nodes[0].min_rank = 2;
	p->nodes[1].min_rank = 0;
	p->master_node = 1;
	p->tasks = calloc(4, sizeof(*p->tasks));
	for (i = 0; i < 4; i++) {
		struct proto_task *t = &p->tasks[k];
		long node = i / 2;

		if (strncmp(view, "node:", 5) == 0 && strcmp(view + 5, step_names[node]) != 0)
			continue;
		if (strcmp(view, "hostfile") == 0)
			continue;
		t->procid = i;
		t->rank = rank_of_procid[i];
		t->node = node;
		t->local_id = i % 2;
		t->local_rank = (int)(i % 2);
		t->co[PL_TP] = t->rank % 2;
		t->co[PL_DP] = t->rank / 2;
		k++;
	}
	p->ntasks = k;
	if (strncmp(view, "node:", 5) != 0) {
		p->rank_nodes = calloc(4, sizeof(long));
		p->rank_nodes[0] = p->rank_nodes[1] = 1;
		p->rank_nodes[2] = p->rank_nodes[3] = 0;
	}
}

#define COSTS "\"cost\":{\"cross_node_bytes_per_step\":0,\"cross_switch_bytes_per_step\":0}," \
	"\"baseline_cost\":{\"cross_node_bytes_per_step\":0,\"cross_switch_bytes_per_step\":0}," \
	"\"strategy\":\"s\",\"warnings\":[]"
#define NODE_JSON(name, mr) "{\"name\":\"" name "\",\"ntasks\":2,\"min_rank\":" #mr ",\"nccl_topo_file\":\"\"}"
#define TASK_JSON(procid, rank, lr) "{\"procid\":" #procid ",\"rank\":" #rank ",\"node\":0,\"local_id\":" #lr \
	",\"local_rank\":" #lr ",\"tp\":" #lr ",\"cp\":0,\"ep\":0,\"dp\":0,\"pp\":0,\"nic\":\"\"}"
static const char HOSTFILE_NO_RANK_NODES[] =
	"{\"spec\":\"tp2\",\"world\":4,\"layout\":{},\"map\":\"m\",\"nodes\":[" NODE_JSON("nodeA", 2) ","
	NODE_JSON("nodeB", 0) "],\"master_node\":1,\"tasks\":[]," COSTS "}";
static const char NODE_VIEW_ONE_NODE[] =
	"{\"spec\":\"tp2\",\"world\":4,\"layout\":{},\"map\":\"m\",\"nodes\":[" NODE_JSON("nodeB", 0)
	"],\"master_node\":0,\"tasks\":[" TASK_JSON(2, 0, 0) "," TASK_JSON(3, 1, 1) "]," COSTS "}";

static int
check(const struct proto_placement *p, const char *view, char *msg, size_t len)
{
	pl_err_t err;
	int rv;

	pl_err_clear(&err);
	rv = spk_answer_check(p, step_names, step_ntasks, 2, view, &err);
	snprintf(msg, len, "%s", err.text);
	return rv;
}

/* Each case breaks one field of a valid answer; the check must name it. */
static void
test_answer_check(void)
{
	struct proto_placement p;
	char msg[PL_ERR_TEXT];
	pl_err_t err;

#define BROKEN(view, change, needle, what) do { \
		hand_answer(&p, view); \
		change; \
		ok(check(&p, view, msg, sizeof(msg)) < 0, "refused: %s", what); \
		like(msg, needle, "  saying '%s'", needle); \
		proto_placement_free(&p); \
	} while (0)

	hand_answer(&p, "all");
	ok(check(&p, "all", msg, sizeof(msg)) == 0, "the hand-made answer passes, view all (%s)", msg);
	proto_placement_free(&p);
	hand_answer(&p, "hostfile");
	ok(check(&p, "hostfile", msg, sizeof(msg)) == 0, "view hostfile passes (%s)", msg);
	proto_placement_free(&p);
	hand_answer(&p, "node:nodeB");
	ok(check(&p, "node:nodeB", msg, sizeof(msg)) == 0, "view node:nodeB passes (%s)", msg);
	proto_placement_free(&p);

	/* The two answers that crashed srun and slurmstepd, as a daemon
	 * would send them: valid JSON that the parser accepts. */
	pl_err_clear(&err);
	ok(proto_placement_parse(HOSTFILE_NO_RANK_NODES, &p, &err) == 0,
	   "the parser takes a hostfile answer without rank_nodes (%s)", err.text);
	ok(check(&p, "hostfile", msg, sizeof(msg)) < 0, "refused: hostfile view without rank_nodes (srun crashed)");
	like(msg, "no rank_nodes", "  saying rank_nodes is missing");
	proto_placement_free(&p);
	pl_err_clear(&err);
	ok(proto_placement_parse(NODE_VIEW_ONE_NODE, &p, &err) == 0,
	   "the parser takes a node answer listing 1 of the step's 2 nodes (%s)", err.text);
	ok(check(&p, "node:nodeB", msg, sizeof(msg)) < 0,
	   "refused: fewer nodes than the step (slurmstepd read past the end)");
	like(msg, "placement lists 1 nodes, the step has 2", "  saying so");
	proto_placement_free(&p);
	BROKEN("node:nodeB", p.nnodes = 1, "placement lists 1 nodes, the step has 2",
	       "fewer nodes than the step (slurmstepd read past the end)");
	BROKEN("hostfile", p.nnodes = 1, "placement lists 1 nodes, the step has 2",
	       "fewer nodes, hostfile view");
	BROKEN("all", p.tasks[3].rank = 2, "rank 2 is given twice", "a duplicate rank");
	BROKEN("all", (p.tasks[3].rank = 4, p.rank_nodes = realloc(p.rank_nodes, 4 * sizeof(long))),
	       "rank 4 is not in 0..3", "rank >= world");
	BROKEN("all", p.tasks[1].node = 2, "node 2 is not a node index 0..1", "task node index out of range");
	BROKEN("all", p.rank_nodes[0] = 5, "rank_nodes[0] = 5 is not a node index", "rank_nodes out of range");
	BROKEN("all", p.master_node = 2, "master_node 2 is not a node index", "master_node out of range");
	BROKEN("all", snprintf(p.nodes[0].name, sizeof(p.nodes[0].name), "nodeZ"),
	       "nodes[0] is 'nodeZ', the step's node 0 is 'nodeA'", "another node's name");
	BROKEN("all", (snprintf(p.nodes[0].name, sizeof(p.nodes[0].name), "nodeB"),
		       snprintf(p.nodes[1].name, sizeof(p.nodes[1].name), "nodeA")),
	       "nodes[0] is 'nodeB'", "the nodes in another order");
	BROKEN("all", p.nodes[1].ntasks = 3, "nodes[1] (nodeB) has 3 tasks, the step runs 2",
	       "a wrong task count");
	BROKEN("all", p.world = 5, "world is 5, the step runs 4 tasks", "a world that is not the step's");
	BROKEN("node:nodeB", p.ntasks = 1, "lists 1 tasks, the view needs 2", "too few tasks for the node");
	BROKEN("node:nodeB", p.tasks[0].node = 0, "not on the node asked for",
	       "a task of another node in a node view");
	BROKEN("node:nodeB", p.tasks[1].local_rank = -1, "local_rank -1 is not a GPU index",
	       "local_rank out of range");
	BROKEN("node:nodeB", p.tasks[1].local_rank = 0, "two tasks on node 1 have local_rank 0",
	       "two tasks on one GPU");
	BROKEN("node:nodeB", p.tasks[1].local_id = 2, "local_id 2 is not in 0..1", "local_id out of range");
	BROKEN("node:nodeB", p.tasks[1].procid = 2, "procid 2 is given twice", "a duplicate procid");
	BROKEN("node:nodeB", p.tasks[0].co[PL_TP] = 2, "outside the layout", "a coordinate past the layout");
	BROKEN("node:nodeB", p.nodes[1].min_rank = 1, "min_rank 1, but its lowest rank is 0",
	       "a min_rank that does not match (NODE_RANK)");
	BROKEN("all", p.tasks[0].node = 1, "rank 2 on node 1, rank_nodes says 0",
	       "rank_nodes contradicting the tasks");
	BROKEN("hostfile", (p.rank_nodes[1] = 0, p.nodes[0].min_rank = 1),
	       "rank_nodes puts 3 ranks on node 0", "rank_nodes with wrong counts per node");
	hand_answer(&p, "node:nodeB");
	ok(check(&p, "node:nodeQ", msg, sizeof(msg)) < 0, "refused: a view naming no node of the step");
	pl_err_clear(&err);
	ok(spk_answer_layout_check(&p, "tp2", &err) == 0 && spk_answer_layout_check(&p, "tp2,dp2", &err) == 0,
	   "the answer is a placement of tp2 (= tp2,dp2 on 4 tasks) (%s)", err.text);
	ok(spk_answer_layout_check(&p, "tp4", &err) < 0, "refused: an answer for tp2 used for tp4");
	like(err.text, "placement is for layout 'tp2', not for --parallel-layout=tp4", "  naming both");
	pl_err_clear(&err);
	ok(spk_answer_layout_check(&p, "tp2,order=tp-cp-ep-pp-dp", &err) < 0,
	   "refused: the same sizes in another rank order");
	like(err.text, "placement is for layout 'tp2'", "  (not a parse error: %s)", err.text);
	/* An auto spec: the answer is the layout the planner chose; it must
	 * keep what the spec pins. */
	pl_err_clear(&err);
	ok(spk_answer_layout_check(&p, "auto", &err) == 0 &&
	   spk_answer_layout_check(&p, "auto,tp2,model=7b", &err) == 0,
	   "auto and auto,tp2: the answer tp2,dp2 keeps every pin (%s)", err.text);
	ok(spk_answer_layout_check(&p, "auto,tp4", &err) < 0, "refused: auto,tp4 answered with tp2");
	like(err.text, "does not keep tp= of --parallel-layout=auto,tp4", "  naming the pin (%s)", err.text);
	pl_err_clear(&err);
	ok(spk_answer_layout_check(&p, "auto,zero=1", &err) < 0, "refused: auto,zero=1 answered with zero 0");
	like(err.text, "does not keep zero=", "  naming zero (%s)", err.text);
	pl_err_clear(&err);
	ok(spk_answer_layout_check(&p, "auto,order=tp-cp-ep-pp-dp", &err) < 0,
	   "refused: auto in another rank order");
	like(err.text, "does not keep order=", "  naming the order (%s)", err.text);
	pl_err_clear(&err);
	ok(spk_answer_layout_check(&p, "auto,tp=x", &err) < 0, "a bad auto spec is a parse error");
	like(err.text, "--parallel-layout=auto,tp=x: ", "  naming the spec (%s)", err.text);
	proto_placement_free(&p);
#undef BROKEN
}


/* A 12,800-node step: the request is built from the layout with no fixed
 * limit (slurmstepd used to stop at 4,096 nodes) and reads back whole. */
static void
test_request(void)
{
	enum { N = 12800, PER = 8 };
	uint16_t *tasks = calloc(N, sizeof(*tasks));
	uint32_t **tids = calloc(N, sizeof(*tids));
	struct spk_step st;
	struct proto_request req, back;
	pl_err_t err;
	char *json = NULL;
	long n;
	int t;

	for (n = 0; n < N; n++) {
		tasks[n] = PER;
		tids[n] = calloc(PER, sizeof(**tids));
		for (t = 0; t < PER; t++)
			tids[n][t] = (uint32_t)(t * N + n);	/* cyclic */
	}
	pl_err_clear(&err);
	ok(spk_step_init(&st, "node[1-12800]", N, tasks, tids, &err) == 0, "a 12,800-node step layout (%s)",
	   err.text);
	is_int(st.world, (long)N * PER, "world 102,400");
	is_str(st.names[N - 1], "node12800", "the last node's name");
	is_int(spk_step_find(&st, "node9000"), 8999, "node9000 found at index 8999");
	ok(spk_request_build(&req, "tp8,pp16", &st, true, 7, 3, 1234, "node:node12800", &err) == 0,
	   "its request builds (%s)", err.text);
	json = proto_request_to_json(&req);
	ok(json != NULL, "and serializes");
	memset(&back, 0, sizeof(back));
	ok(json && proto_request_parse(json, &back, &err) == 0, "and parses back (%s)", err.text);
	is_int(back.nnodes, N, "with all 12,800 nodes");
	ok(back.nnodes == N && strcmp(back.nodes[N - 1].name, "node12800") == 0 &&
	   back.nodes[N - 1].tids && back.nodes[N - 1].tids[7] == 7L * N + N - 1,
	   "the last node's name and task ids travel");
	is_int(back.uid, 1234, "the job owner's uid travels");
	proto_request_free(&back);
	proto_request_free(&req);
	ok(spk_request_build(&req, "tp8", &st, false, 7, 3, -1, "hostfile", &err) == 0 &&
	   req.nodes[5].tids == NULL, "without tids: Slurm's block order");
	proto_request_free(&req);
	spk_step_free(&st);
	ok(spk_step_init(&st, "node[1-3]", 4, tasks, tids, &err) < 0, "a node list shorter than the layout is refused");
	spk_step_free(&st);
	free(json);
	for (n = 0; n < N; n++)
		free(tids[n]);
	free(tids);
	free(tasks);
}

/* The in-process fallback: a request struct in, a placement struct out,
 * checked like a daemon's answer. */
static void
test_fallback(void)
{
	struct topo_map *m = topo_synth_fat_tree(4, 8, 2, 2, 1);
	char dir[] = "/tmp/pl-plugin-test.XXXXXX", path[PATH_MAX], from[PATH_MAX + 256];
	const char *names[] = { "node00001", "node00002", "node00003", "node00004" };
	long ntasks[] = { 8, 8, 8, 8 };
	struct place_node nodes[4];
	struct proto_request req;
	struct proto_placement p;
	struct spk_conf c;
	pl_err_t err;
	int i;

	pl_err_clear(&err);
	ok(m && mkdtemp(dir), "a 4-node synthetic map");
	snprintf(path, sizeof(path), "%s/map.json", dir);
	ok(topo_save(m, path, &err) == 0, "saved (%s)", err.text);
	for (i = 0; i < 4; i++) {
		nodes[i].name = names[i];
		nodes[i].ntasks = 8;
		nodes[i].tids = NULL;
	}
	spk_args_parse(0, NULL, &c, &err);
	snprintf(c.map, sizeof(c.map), "%s", path);
	snprintf(c.socket, sizeof(c.socket), "%s/none-%%n.sock", dir);
	c.timeout_ms = 200;
	ok(proto_request_init(&req, "tp8,pp4", nodes, 4, 1, 0, "node:node00003", &err) == 0,
	   "a request (%s)", err.text);
	ok(spk_query(&c, "node00003", &req, &p, from, sizeof(from), &err) == 0,
	   "no daemon, fallback=local: placed in-process (%s)", err.text);
	like(from, "in-process from", "saying where it came from");
	ok(spk_answer_check(&p, names, ntasks, 4, "node:node00003", &err) == 0,
	   "the in-process answer fits the step (%s)", err.text);
	proto_placement_free(&p);
	c.fallback = FALLBACK_FAIL;
	pl_err_clear(&err);
	ok(spk_query(&c, "node00003", &req, &p, from, sizeof(from), &err) < 0, "fallback=fail: refused");
	like(err.text, "layoutd did not answer", "saying the daemon did not answer");
	proto_placement_free(&p);
	proto_request_free(&req);
	unlink(path);
	rmdir(dir);
	topo_free(m);
}

/* srun's map bounds, against a map whose answer is known by hand: types
 * gpu8 (80 GB, the default) and gpu4 (40 GB); rackA an NVLink block of
 * three gpu4 nodes (12 GPUs), rackB a block without NVLink holding two
 * gpu8 nodes (16 GPUs, but not one domain). */
static void
test_bounds(void)
{
	struct topo_map *m = topo_new();
	struct topo_nodetype t8, t4;
	struct topo_gpu g[8];
	struct spk_bounds b;
	char dir[] = "/tmp/pl-bounds-test.XXXXXX", path[PATH_MAX];
	pl_err_t err;
	int i, a, r;
	long n;
	FILE *f;

	memset(&t8, 0, sizeof(t8));
	memset(g, 0, sizeof(g));
	for (i = 0; i < 8; i++) {
		g[i].index = i;
		g[i].numa = -1;
		g[i].island = 0;
		g[i].nic = -1;
	}
	snprintf(t8.name, sizeof(t8.name), "gpu8");
	t8.ngpus = 8;
	t8.gpus = g;
	t8.gpu_memory_gb = 80;
	t4 = t8;
	snprintf(t4.name, sizeof(t4.name), "gpu4");
	t4.ngpus = 4;
	t4.gpu_memory_gb = 40;
	pl_err_clear(&err);
	ok(mkdtemp(dir) != NULL, "a temporary folder");
	snprintf(path, sizeof(path), "%s/map.json", dir);
	a = topo_add_type(m, &t8, &err);
	m->default_type = a;
	r = topo_add_type(m, &t4, &err);
	topo_add_block(m, "rackA", true, &err);
	topo_add_block(m, "rackB", false, &err);
	for (i = 0; i < 6; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%d", i + 1);
		n = topo_add_node(m, name, &err);
		if (n < 0)
			break;
		m->nodes[n].type = i < 3 ? r : -1;
		m->nodes[n].block = i < 3 ? 0 : i < 5 ? 1 : -1;
	}
	m->link[TOPO_LINK_SPINE].gbps = 12.5;
	ok(topo_save(m, path, &err) == 0, "the hand-made map saved (%s)", err.text);
	ok(spk_bounds_load(path, &b, &err) == 0, "its bounds read (%s)", err.text);
	is_int(b.domain, 12, "largest NVLink domain: rackA, 3 x 4 GPUs (rackB has no NVLink)");
	is_double(b.gpu_memory_gb, 40.0, 1e-9, "smallest GPU memory: 40 GB");
	is_double(b.link[TOPO_LINK_SPINE].gbps, 12.5, 1e-9, "the map's spine bandwidth");
	is_int(b.nnodes, 6, "6 nodes");
	topo_free(m);
	m = topo_synth_blocks(1000, 4, 18);
	ok(m && topo_save(m, path, &err) == 0 && spk_bounds_load(path, &b, &err) == 0,
	   "a 1,000-node map in 18-node NVLink racks (%s)", err.text);
	is_int(b.domain, 72, "its domain: 18 nodes x 4 GPUs");
	topo_free(m);
	f = fopen(path, "w");
	fputs("{\"node_types\": [], \"nodes\": [{\"name\": \"x\", \"type\": \"gpu9\"}]}", f);
	fclose(f);
	pl_err_clear(&err);
	ok(spk_bounds_load(path, &b, &err) < 0, "a node naming a missing type is refused");
	like(err.text, "type 'gpu9' is not in the map", "naming it");
	unlink(path);
	rmdir(dir);
}

/* Mode and owner of path, not following a symlink; -1 when absent. */
static long
mode_of(const char *path, long *uid)
{
	struct stat sb;

	if (lstat(path, &sb) < 0)
		return -1;
	*uid = (long)sb.st_uid;
	return (long)(sb.st_mode & 07777) | (S_ISDIR(sb.st_mode) ? 0100000L : 0);
}

static void
test_watch_dir(void)
{
	char top[] = "/tmp/pl-watch-XXXXXX", parent[256], path[512], want[600], f[700];
	long me = (long)geteuid(), uid = -1;
	pl_err_t err;
	FILE *fp;

	if (!mkdtemp(top)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(parent, sizeof(parent), "%s/plw", top);
	pl_err_clear(&err);
	ok(spk_watch_dir_make(parent, 77, 3, me, (long)getegid(), path, sizeof(path), &err) == 0,
	   "the step directory is made (%s)", err.text);
	snprintf(want, sizeof(want), "%s/77.3", parent);
	is_str(path, want, "named PARENT/JOB.STEP");
	is_int(mode_of(parent, &uid), 0100755L, "the parent made 0755");
	is_int(mode_of(path, &uid), 0100700L, "the step directory 0700");
	is_int(uid, me, "owned by the job's user");
	/* A second slurmstepd of the same machine, same step. */
	pl_err_clear(&err);
	ok(spk_watch_dir_make(parent, 77, 3, me, -1, path, sizeof(path), &err) == 0,
	   "made again for the same step: reused (%s)", err.text);
	snprintf(f, sizeof(f), "%s/plw-77.3.0.1", path);
	fp = fopen(f, "w");
	if (fp)
		fclose(fp);
	pl_err_clear(&err);
	ok(spk_watch_dir_remove(parent, 77, 3, &err) == 0, "removed (%s)", err.text);
	is_int(mode_of(path, &uid), -1L, "the directory and its record are gone");
	is_int(mode_of(parent, &uid), 0100755L, "the parent stays");
	ok(spk_watch_dir_remove(parent, 77, 3, &err) == 0, "removing a missing one is no error");

	/* Planted: a symlink at the step's name, pointing at a directory. */
	snprintf(want, sizeof(want), "%s/victim", top);
	mkdir(want, 0755);
	snprintf(path, sizeof(path), "%s/77.4", parent);
	ok(symlink(want, path) == 0, "a symlink planted at 77.4");
	pl_err_clear(&err);
	ok(spk_watch_dir_make(parent, 77, 4, me, -1, path, sizeof(path), &err) < 0,
	   "a symlink at the step's name is refused");
	like(err.text, "77.4: something other than a directory is there (not followed)",
	     "saying so");
	is_int(mode_of(want, &uid), 0100755L, "the link's target is not chmod-ed");
	snprintf(f, sizeof(f), "%s/victim/keep", top);
	fp = fopen(f, "w");
	if (fp)
		fclose(fp);
	ok(spk_watch_dir_remove(parent, 77, 4, &err) < 0, "removal does not follow the link");
	ok(access(f, F_OK) == 0, "the file behind the link is kept");
	snprintf(path, sizeof(path), "%s/77.4", parent);
	unlink(path);

	/* A symlink inside the step's directory is removed itself. */
	pl_err_clear(&err);
	ok(spk_watch_dir_make(parent, 77, 5, me, -1, path, sizeof(path), &err) == 0, "77.5 made");
	snprintf(want, sizeof(want), "%s/plw-link", path);
	ok(symlink(f, want) == 0, "a symlink to a file inside it");
	pl_err_clear(&err);
	ok(spk_watch_dir_remove(parent, 77, 5, &err) == 0, "removed (%s)", err.text);
	ok(access(f, F_OK) == 0, "the file the link named is kept");

	/* A parent others may write, and a parent that is a symlink. */
	chmod(parent, 0777);
	pl_err_clear(&err);
	ok(spk_watch_dir_make(parent, 77, 6, me, -1, path, sizeof(path), &err) < 0,
	   "a world-writable parent is refused");
	like(err.text, "not writable by others (mode 0755 or sticky)", "saying what is accepted");
	chmod(parent, 01777);
	pl_err_clear(&err);
	ok(spk_watch_dir_make(parent, 77, 6, me, -1, path, sizeof(path), &err) == 0,
	   "a sticky one is taken (%s)", err.text);
	spk_watch_dir_remove(parent, 77, 6, &err);
	rmdir(parent);
	ok(symlink(top, parent) == 0, "the parent planted as a symlink");
	pl_err_clear(&err);
	ok(spk_watch_dir_make(parent, 77, 7, me, -1, path, sizeof(path), &err) < 0,
	   "a symlink parent is refused");
	like(err.text, "without following a symlink", "saying so");
	snprintf(path, sizeof(path), "%s/77.7", top);
	is_int(mode_of(path, &uid), -1L, "nothing made behind it");
	unlink(parent);
	unlink(f);
	snprintf(want, sizeof(want), "%s/victim", top);
	rmdir(want);
	rmdir(top);
}

/* The bodies slurmstepd posts to layoutd, written out by hand from
 * layoutd(8); a node name with a quote, a backslash and a control byte
 * must come out escaped, and a node that is not UTF-8 gives no body. */
static void
test_watch_json(void)
{
	struct spk_watch_task t = { 77, 3, 5, 13, 4242, 1000, "gpu\"1\\\n", { 1, 0, 0, 2, 1 },
				   "/dev/shm/parallel-layout/77.3", 5, "mlx5_\"5", NULL, NULL };
	char path[64], *s;

	s = spk_watch_task_json(&t);
	is_str(s ? s : "(null)",
	       "{\"job_id\":77,\"step_id\":3,\"task\":5,\"rank\":13,\"pid\":4242,\"uid\":1000,"
	       "\"node\":\"gpu\\\"1\\\\\\n\",\"coords\":{\"tp\":1,\"cp\":0,\"ep\":0,\"dp\":2,\"pp\":1},"
	       "\"record\":\"/dev/shm/parallel-layout/77.3/plw-77.3.13.4242\",\"gpu\":5,"
	       "\"nic\":\"mlx5_\\\"5\"}",
	       "the task's body: every key layoutd wants, the record named as the hook names it, "
	       "its GPU and NIC");
	free(s);
	t.gpu = -7;
	t.nic = NULL;
	s = spk_watch_task_json(&t);
	like(s ? s : "(null)", "/plw-77.3.13.4242\",\"gpu\":-1,\"nic\":\"\"}",
	     "no GPU known is -1, no NIC is \"\"");
	free(s);
	/* layoutd refuses what a node summary cannot carry (1024 GPUs, 31-byte
	 * NIC names): the task is still registered, without them. */
	t.gpu = 1024;
	t.nic = "mlx5_012345678901234567890123456";
	s = spk_watch_task_json(&t);
	like(s ? s : "(null)", "\"gpu\":-1,\"nic\":\"\"}", "GPU 1024 and a 32-byte NIC name go as unknown");
	free(s);
	t.gpu = 1023;
	t.nic = "mlx5_01234567890123456789012345";
	s = spk_watch_task_json(&t);
	like(s ? s : "(null)", "\"gpu\":1023,\"nic\":\"mlx5_01234567890123456789012345\"}",
	     "GPU 1023 and a 31-byte NIC name go as they are");
	free(s);
	s = spk_watch_exit_json(77, 3, 5, 7 << 8);
	is_str(s ? s : "(null)", "{\"job_id\":77,\"step_id\":3,\"task\":5,\"status\":1792}",
	       "the exit's body carries the wait status");
	free(s);
	t.node = "gpu\xff";
	s = spk_watch_task_json(&t);
	ok(s == NULL, "a node name that is not UTF-8 gives no body");
	free(s);
	t.node = "n";
	ok(spk_watch_record_path(&t, path, 30) < 0, "a record path that does not fit is refused");
	ok(spk_watch_record_path(&t, path, sizeof(path)) == 0 &&
	   strcmp(path, "/dev/shm/parallel-layout/77.3/plw-77.3.13.4242") == 0,
	   "the record path (%s)", path);
}

/* A placement of nn nodes of tasks_per_node tasks, named node-NNNNN-xx...
 * (63 characters, the longest a map allows); ranks go to the nodes
 * backwards, so the last node leads. */
static void
step_place(struct proto_placement *p, long nn, long tasks_per_node)
{
	long i;
	int n;

	memset(p, 0, sizeof(*p));
	p->nnodes = nn;
	p->nodes = calloc((size_t)nn, sizeof(*p->nodes));
	p->world = nn * tasks_per_node;
	for (i = 0; p->nodes && i < nn; i++) {
		n = snprintf(p->nodes[i].name, sizeof(p->nodes[i].name), "node-%05ld-", i % 100000);
		memset(p->nodes[i].name + n, 'x', sizeof(p->nodes[i].name) - 1 - (size_t)n);
		p->nodes[i].ntasks = tasks_per_node;
		p->nodes[i].min_rank = (nn - 1 - i) * tasks_per_node;
	}
}

/*
 * The node's first task also tells layoutd the step: world, layout and the
 * nodes in order of their lowest rank (nodes[0] leads), as design of the
 * job-wide watch wants them; checked on a hand-made step, then on a
 * 12,800-node one against layoutd's request body limit.
 */
static void
test_watch_step_json(void)
{
	/* layoutd's max_body default (LD_DEFAULT_MAX_BODY, daemon/layoutd.h). */
	const size_t max_body = 64UL << 20;
	struct spk_watch_task t = { 9, 0, 0, 0, 100, 1000, "b\"x", { 0, 0, 0, 0, 0 },
				   "/dev/shm/parallel-layout/9.0", 0, "mlx5_0", NULL, NULL };
	struct proto_placement p;
	pl_err_t err;
	char *s, *at, want[64];
	long i, pos, last;
	bool ordered = true;
	struct timespec t0, t1;

	memset(&p, 0, sizeof(p));
	pl_err_clear(&err);
	layout_parse("tp2,pp2,cp1,ep1", &p.layout, &err);
	layout_resolve(&p.layout, 12, &err);
	p.world = 12;
	p.nnodes = 4;
	p.nodes = calloc(4, sizeof(*p.nodes));
	/* Slurm's order a, b"x, c, d; the placement gives rank 0 to c, then
	 * b"x from rank 4, a from 8; d got no task (left out). */
	snprintf(p.nodes[0].name, sizeof(p.nodes[0].name), "a");
	snprintf(p.nodes[1].name, sizeof(p.nodes[1].name), "b\"x");
	snprintf(p.nodes[2].name, sizeof(p.nodes[2].name), "c\\");
	snprintf(p.nodes[3].name, sizeof(p.nodes[3].name), "d");
	p.nodes[0].ntasks = p.nodes[1].ntasks = p.nodes[2].ntasks = 4;
	p.nodes[0].min_rank = 8;
	p.nodes[1].min_rank = 4;
	p.nodes[2].min_rank = 0;
	p.nodes[3].min_rank = 12;
	p.master_node = 2;
	t.place = &p;
	s = spk_watch_task_json(&t);
	is_str(s ? s : "(null)",
	       "{\"job_id\":9,\"step_id\":0,\"task\":0,\"rank\":0,\"pid\":100,\"uid\":1000,"
	       "\"node\":\"b\\\"x\",\"coords\":{\"tp\":0,\"cp\":0,\"ep\":0,\"dp\":0,\"pp\":0},"
	       "\"record\":\"/dev/shm/parallel-layout/9.0/plw-9.0.0.100\",\"gpu\":0,\"nic\":\"mlx5_0\","
	       "\"step\":{\"world\":12,\"layout\":{\"tp\":2,\"cp\":1,\"ep\":1,\"dp\":3,\"pp\":2},"
	       "\"nodes\":[\"c\\\\\",\"b\\\"x\",\"a\"]}}",
	       "the first task's body: the step's world, layout and nodes by lowest rank, escaped; "
	       "a node of no task left out");
	free(s);
	{
		struct watchopt wo;
		pl_err_t we;

		pl_err_clear(&we);
		watchopt_parse("hang=10m,slow=off", &wo, &we);
		t.watch = &wo;
		s = spk_watch_task_json(&t);
		like(s ? s : "", "\"watch\":{\"hang_s\":600,\"slow\":false}}}",
		     "--parallel-layout-watch=hang=10m,slow=off goes with the step");
		free(s);
		t.watch = NULL;
	}
	snprintf(p.nodes[0].name, sizeof(p.nodes[0].name), "a\xc3");
	s = spk_watch_task_json(&t);
	ok(s == NULL, "a step node name that is not UTF-8 gives no body");
	free(s);
	proto_placement_free(&p);

	/* 12,800 nodes of 63-character names, 8 tasks each. */
	step_place(&p, 12800, 8);
	layout_parse("tp8,pp16", &p.layout, &err);
	layout_resolve(&p.layout, p.world, &err);
	ok(strlen(p.nodes[0].name) == TOPO_NAME - 1, "63-character names (%zu)",
	   strlen(p.nodes[0].name));
	t.place = &p;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	s = spk_watch_task_json(&t);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ok(s != NULL, "a 12,800-node step's body builds");
	diag("12,800-node step: %zu bytes in %.2f ms", s ? strlen(s) : 0,
	     (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	ok(s && strlen(s) < max_body / 64, "it stays far under layoutd's max_body (%zu < 1 MiB)",
	   s ? strlen(s) : 0);
	like(s ? s : "", "\"step\":{\"world\":102400,\"layout\":{\"tp\":8,\"cp\":1,\"ep\":1,\"dp\":800,\"pp\":16}",
	     "with the world and the layout");
	/* Every node once, from the last (rank 0) to the first. */
	last = -1;
	for (i = 0, pos = 0; s && i < p.nnodes && ordered; i++) {
		snprintf(want, sizeof(want), "\"node-%05ld-", p.nnodes - 1 - i);
		at = strstr(s + pos, want);
		ordered = at && at - s > last;
		if (at) {
			last = at - s;
			pos = last + 1;
		}
	}
	ok(s && ordered && !strstr(s + pos, "\"node-"), "all 12,800 nodes in the order of their lowest rank");
	free(s);
	proto_placement_free(&p);
}

/* ---- a node's registrations in one message (spk_reg.h) ---------------- */

/* A layoutd stand-in on a unix socket: answers each request 200, or,
 * when old, 400 to a batch (as a layoutd older than the batch does), and
 * keeps the bodies it got. */
struct fake_ld {
	int fd;
	bool old;
	bool mute;		/* reads each request and never answers */
	int nreq;
	char bodies[8][512];
};

static void *
fake_ld_run(void *arg)
{
	struct fake_ld *f = arg;
	int c;

	while ((c = accept(f->fd, NULL, NULL)) >= 0) {
		char buf[4096], *hend, *cl;
		size_t got = 0, want = 0;
		ssize_t n;
		const char *ans;
		char out[256];
		bool batch;

		while ((n = read(c, buf + got, sizeof(buf) - 1 - got)) > 0) {
			got += (size_t)n;
			buf[got] = '\0';
			hend = strstr(buf, "\r\n\r\n");
			if (hend) {
				cl = strstr(buf, "Content-Length:");
				want = (size_t)(hend + 4 - buf) + (cl ? strtoul(cl + 15, NULL, 10) : 0);
				if (got >= want)
					break;
			}
		}
		hend = strstr(buf, "\r\n\r\n");
		if (f->mute) {
			f->nreq++;
			nanosleep(&(struct timespec){ 0, 700 * 1000 * 1000 }, NULL);
			close(c);
			continue;
		}
		batch = hend && strncmp(hend + 4, "{\"tasks\"", 8) == 0;
		if (f->nreq < 8 && hend)
			snprintf(f->bodies[f->nreq], sizeof(f->bodies[0]), "%s", hend + 4);
		f->nreq++;
		ans = f->old && batch ? "{\"error\":\"unknown key tasks\"}" : "{\"status\":\"ok\"}";
		snprintf(out, sizeof(out), "HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
			 f->old && batch ? "400 Bad Request" : "200 OK", strlen(ans), ans);
		if (write(c, out, strlen(out)) < 0)
			f->nreq += 100;
		close(c);
	}
	return NULL;
}

/* Start a stand-in at path; 0, or -1. */
static int
fake_ld_start(struct fake_ld *f, const char *path, bool old, pthread_t *th)
{
	struct sockaddr_un a;

	memset(f, 0, sizeof(*f));
	f->old = old;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	f->fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(f->fd, 8) < 0)
		return -1;
	return pthread_create(th, NULL, fake_ld_run, f) == 0 ? 0 : -1;
}

static void
fake_ld_stop(struct fake_ld *f, pthread_t th, const char *path)
{
	shutdown(f->fd, SHUT_RDWR);
	close(f->fd);
	pthread_join(th, NULL);
	unlink(path);
}

#define T0 "{\"task\":0}"
#define T2 "{\"task\":2}"

static void
test_reg(void)
{
	struct client_reply rep;
	struct spk_reg g;
	struct fake_ld f;
	char sock[64];
	pthread_t th;
	pl_err_t err;
	bool alone;

	ok(spk_reg_init(&g, 3) == 0, "reg: gathering 3 tasks");
	is_int(spk_reg_add(&g, T0), 0, "reg: task 0, more due");
	ok(!spk_reg_body(&g), "reg: no batch before the last");
	is_int(spk_reg_add(&g, NULL), 0, "reg: task 1 not registered, counted");
	is_int(spk_reg_add(&g, T2), 1, "reg: task 2, the last: complete");
	is_str(spk_reg_body(&g), "{\"tasks\":[" T0 "," T2 "]}", "reg: one message with both");
	is_int(spk_reg_add(&g, T0), 1, "reg: a task past the count adds nothing");
	is_str(spk_reg_body(&g), "{\"tasks\":[" T0 "," T2 "]}", "reg: the batch as it was");

	snprintf(sock, sizeof(sock), "/tmp/pl-reg-%ld.sock", (long)getpid());
	if (fake_ld_start(&f, sock, false, &th) < 0) {
		ok(0, "reg: a stand-in layoutd listens (%s)", strerror(errno));
		spk_reg_free(&g);
		return;
	}
	pl_err_clear(&err);
	ok(spk_reg_send(&g, sock, 2000, &rep, &alone, &err) == 0 && rep.status == 200 && !alone,
	   "reg: sent to a layoutd that takes batches: 200, in one request (%s)", err.text);
	free(rep.body);
	fake_ld_stop(&f, th, sock);
	ok(f.nreq == 1 && strcmp(f.bodies[0], spk_reg_body(&g)) == 0,
	   "reg: it got the one batch (%d requests)", f.nreq);

	fake_ld_start(&f, sock, true, &th);
	pl_err_clear(&err);
	ok(spk_reg_send(&g, sock, 2000, &rep, &alone, &err) == 0 && rep.status == 200 && alone,
	   "reg: an older layoutd refuses the batch (400): each task alone, the last 200 (%s)",
	   err.text);
	free(rep.body);
	fake_ld_stop(&f, th, sock);
	ok(f.nreq == 3 && strcmp(f.bodies[1], T0) == 0 && strcmp(f.bodies[2], T2) == 0,
	   "reg: it got the batch, then task 0 and task 2 alone (%d requests: %s %s)", f.nreq,
	   f.bodies[1], f.bodies[2]);
	spk_reg_free(&g);

	spk_reg_init(&g, 2);
	spk_reg_add(&g, T0);
	spk_reg_add(&g, T2);
	pl_err_clear(&err);
	ok(spk_reg_send(&g, sock, 500, &rep, &alone, &err) < 0 && err.text[0],
	   "reg: no layoutd: -1, saying why (%s)", err.text);
	free(rep.body);
	spk_reg_free(&g);

	spk_reg_init(&g, 2);
	spk_reg_add(&g, NULL);
	is_int(spk_reg_add(&g, NULL), 1, "reg: two tasks, none registered: complete");
	ok(!spk_reg_body(&g) && spk_reg_send(&g, sock, 500, &rep, &alone, &err) == 0 &&
	   rep.status == 0, "reg: nothing to send, nothing sent");
	spk_reg_free(&g);
}

static long
ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void
test_send(void)
{
	struct spk_send snd;
	struct spk_reg g;
	struct fake_ld f;
	char sock[64];
	pthread_t th;
	long t0;

	snprintf(sock, sizeof(sock), "/tmp/pl-send-%ld.sock", (long)getpid());
	if (fake_ld_start(&f, sock, false, &th) < 0) {
		ok(0, "send: a stand-in layoutd listens (%s)", strerror(errno));
		return;
	}
	spk_send_init(&snd, sock, 2000);
	spk_reg_init(&g, 2);
	spk_reg_add(&g, T0);
	spk_reg_add(&g, T2);
	ok(spk_send_reg(&snd, &g) == 0 && spk_send_post(&snd, "/v1/watch/exit", "{\"x\":1}") == 0 &&
	   spk_send_post(&snd, "/v1/watch/exit", "{\"x\":2}") == 0,
	   "send: the registrations and two exits queued, none waited for");
	spk_send_stop(&snd);
	fake_ld_stop(&f, th, sock);
	ok(f.nreq == 3 && strncmp(f.bodies[0], "{\"tasks\":[", 10) == 0 &&
	   strcmp(f.bodies[1], "{\"x\":1}") == 0 && strcmp(f.bodies[2], "{\"x\":2}") == 0,
	   "send: layoutd got them in the order said (%d requests)", f.nreq);
	ok(snd.sent == 3 && !snd.refused && !snd.dropped && !snd.down,
	   "send: 3 taken, none refused or dropped (%u %u %u)", snd.sent, snd.refused, snd.dropped);

	fake_ld_start(&f, sock, true, &th);
	spk_send_init(&snd, sock, 2000);
	spk_reg_init(&g, 2);
	spk_reg_add(&g, T0);
	spk_reg_add(&g, T2);
	spk_send_reg(&snd, &g);
	spk_send_post(&snd, "/v1/watch/exit", "{\"x\":1}");
	spk_send_stop(&snd);
	fake_ld_stop(&f, th, sock);
	ok(f.nreq == 4 && strcmp(f.bodies[1], T0) == 0 && strcmp(f.bodies[3], "{\"x\":1}") == 0 &&
	   snd.alone && snd.sent == 2,
	   "send: an older layoutd: the batch refused, its tasks one by one, then the exit (%d "
	   "requests)", f.nreq);

	spk_send_init(&snd, sock, 300);
	spk_send_post(&snd, "/v1/watch/exit", "{\"x\":1}");
	spk_send_post(&snd, "/v1/watch/exit", "{\"x\":2}");
	spk_send_stop(&snd);
	ok(snd.down && snd.dropped == 1 && snd.sent == 0 && snd.last[0],
	   "send: no layoutd: the first gets no answer, the rest dropped, said why (%s)", snd.last);

	fake_ld_start(&f, sock, false, &th);
	f.mute = true;
	spk_send_init(&snd, sock, 300);
	spk_send_post(&snd, "/v1/watch/exit", "{\"x\":1}");
	spk_send_post(&snd, "/v1/watch/exit", "{\"x\":2}");
	spk_send_post(&snd, "/v1/watch/exit", "{\"x\":3}");
	t0 = ms_now();
	spk_send_stop(&snd);
	t0 = ms_now() - t0;
	fake_ld_stop(&f, th, sock);
	ok(t0 < 700 && snd.down && snd.dropped == 2,
	   "send: a layoutd that never answers holds the stop %ld ms (timeout_ms 300): one "
	   "request timed out, two dropped", t0);

	spk_send_init(&snd, sock, 300);
	t0 = ms_now();
	spk_send_stop(&snd);
	ok(ms_now() - t0 < 50 && snd.sent == 0, "send: stopped with nothing ever queued: at once");
}

int
main(void)
{
	plan(243 + 15 + 7);
	test_args();
	test_shape();
	test_release();
	test_answer_check();
	test_request();
	test_fallback();
	test_bounds();
	test_watch_dir();
	test_watch_json();
	test_watch_step_json();
	test_reg();
	test_send();
	return done_testing();
}
