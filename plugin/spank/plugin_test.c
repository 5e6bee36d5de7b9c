/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plugin's pure parts: plugstack arguments and srun's command line. */
#include <stdlib.h>
#include <string.h>

#include "pl_plugin.h"
#include "pl_shape.h"
#include "tap.h"

static int
args(const char *line, struct pl_conf *c, char *msg, size_t len)
{
	char buf[1024], *av[32], *save = NULL, *tok;
	int ac = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " ", &save); tok && ac < 32; tok = strtok_r(NULL, " ", &save))
		av[ac++] = tok;
	msg[0] = '\0';
	return pl_args_parse(ac, av, c, msg, len);
}

static void
test_args(void)
{
	struct pl_conf c;
	char msg[512];

	ok(args("", &c, msg, sizeof(msg)) == 0, "no arguments: defaults");
	is_str(c.socket, "/run/parallel-layout/layoutd-%n.sock", "default socket pattern");
	is_int(c.fallback, FALLBACK_LOCAL, "default fallback local");
	is_int(c.timeout_ms, 2000, "default timeout 2000 ms");
	is_int(c.export_mask, EXPORT_FRAMEWORK | EXPORT_NCCL, "default export framework,nccl");
	ok(c.reorder, "default reorder yes");
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
}

static void
shape(const char *line, struct pl_shape *s)
{
	char buf[1024], *av[64], *save = NULL, *tok;
	int ac = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " ", &save); tok && ac < 63; tok = strtok_r(NULL, " ", &save))
		av[ac++] = tok;
	av[ac] = NULL;
	pl_shape_parse(ac, av, s);
}

static void
test_shape(void)
{
	struct pl_shape s;

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
}

int
main(void)
{
	plan(41);
	test_args();
	test_shape();
	return done_testing();
}
