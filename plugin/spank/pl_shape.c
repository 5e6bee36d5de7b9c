/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * srun's options, as Slurm 22.05 documents them, split into those that take
 * an argument and those that do not: enough to walk the command line to the
 * program and pick out the task and node counts.  An option we do not know
 * makes the shape incomplete, and then we only validate what we are sure of.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pl_shape.h"

/* Short options that take an argument. */
static const char short_arg[] = "AbBcCdDeGiJLmMnNopqrStTwWx";

/* Long options that take an argument (as `--opt value` or `--opt=value`). */
static const char *const long_arg[] = {
	"account", "acctg-freq", "bb", "bbf", "bcast-exclude", "begin", "chdir",
	"cluster-constraint", "clusters", "comment", "constraint", "container", "core-spec",
	"cores-per-socket", "cpu-bind", "cpu-freq", "cpus-per-gpu", "cpus-per-task", "deadline",
	"delay-boot", "dependency", "distribution", "epilog", "error", "exclude", "export",
	"extra-node-info", "gid", "gpu-bind", "gpu-freq", "gpus", "gpus-per-node",
	"gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "het-group", "hint", "input",
	"job-name", "jobid", "licenses", "mail-type", "mail-user", "mcs-label", "mem",
	"mem-bind", "mem-per-cpu", "mem-per-gpu", "mincpus", "mpi", "network", "nodefile",
	"nodelist", "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node",
	"ntasks-per-socket", "output", "partition", "power", "priority", "profile", "prolog",
	"qos", "relative", "reservation", "signal", "slurmd-debug", "sockets-per-node",
	"switches", "task-epilog", "task-prolog", "thread-spec", "threads", "threads-per-core",
	"time", "time-min", "tmp", "uid", "wait", "wckey",
	/* SPANK options registered by plugins (ours among them). */
	"parallel-layout",
	NULL
};

/* Long options without an argument, or with an optional one (=value only). */
static const char *const long_flag[] = {
	"accel-bind", "bcast", "compress", "contiguous", "disable-status", "exact", "exclusive",
	"external-launcher", "get-user-env", "help", "hold", "immediate", "interactive",
	"jobid-exact", "kill-on-bad-exit", "label", "multi-prog", "no-allocate", "no-kill",
	"nice", "overcommit", "oversubscribe", "preserve-env", "propagate", "pty", "quiet",
	"quit-on-interrupt", "reboot", "resv-ports", "send-libs", "spread-job", "test-only",
	"unbuffered", "usage", "use-min-nodes", "verbose", "version", "x11", "whole",
	"parallel-layout-verbose",
	NULL
};

/* Options after which we leave Slurm's own task placement alone. */
static const char *const blockers[] = {
	"distribution", "relative", "exclude", "multi-prog", "nodefile", "het-group", NULL
};

static bool
listed(const char *const *list, const char *name, size_t len)
{
	int i;

	for (i = 0; list[i]; i++)
		if (strlen(list[i]) == len && strncmp(list[i], name, len) == 0)
			return true;
	return false;
}

static long
count(const char *v)
{
	char *end = NULL;
	long x = strtol(v, &end, 10);

	/* "-N 2-4" (a range) counts as its minimum; Slurm may pick more. */
	return end != v && x > 0 ? x : 0;
}

static void
take(struct pl_shape *s, const char *name, size_t len, const char *v)
{
	if (len == 6 && strncmp(name, "ntasks", 6) == 0)
		s->ntasks = count(v);
	else if (len == 5 && strncmp(name, "nodes", 5) == 0) {
		s->nnodes = count(v);
		/* A range leaves the count to Slurm. */
		if (strchr(v, '-'))
			s->steer_blockers = true;
	} else if (len == 15 && strncmp(name, "ntasks-per-node", 15) == 0)
		s->ntasks_per_node = count(v);
	else if (len == 8 && strncmp(name, "nodelist", 8) == 0)
		s->nodelist = true;
	else if (len == 23 && strncmp(name, "parallel-layout-verbose", 23) == 0)
		s->verbose = true;
	if (listed(blockers, name, len))
		s->steer_blockers = true;
}

static const char *
short_name(char c)
{
	switch (c) {
	case 'n': return "ntasks";
	case 'N': return "nodes";
	case 'w': return "nodelist";
	case 'm': return "distribution";
	case 'r': return "relative";
	case 'x': return "exclude";
	default: return "";
	}
}

static void
from_env(struct pl_shape *s)
{
	const char *v;

	if (!s->ntasks && (v = getenv("SLURM_NTASKS")))
		s->ntasks = count(v);
	if (!s->nnodes && (v = getenv("SLURM_NNODES")))
		s->nnodes = count(v);
	if (!s->ntasks_per_node && (v = getenv("SLURM_NTASKS_PER_NODE")))
		s->ntasks_per_node = count(v);
	if (getenv("SLURM_DISTRIBUTION"))
		s->steer_blockers = true;
	if (s->ntasks && s->ntasks_per_node && !s->nnodes && s->ntasks % s->ntasks_per_node == 0)
		s->nnodes = s->ntasks / s->ntasks_per_node;
	if (s->nnodes && s->ntasks_per_node && !s->ntasks)
		s->ntasks = s->nnodes * s->ntasks_per_node;
}

void
pl_shape_parse(int argc, char **argv, struct pl_shape *s)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->complete = true;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0 || a[0] != '-' || a[1] == '\0')
			break;	/* the program starts here */
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);

			if (listed(long_arg, name, len)) {
				const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : "");

				take(s, name, len, v);
			} else if (listed(long_flag, name, len)) {
				take(s, name, len, "");
			} else {
				s->complete = false;
			}
			continue;
		}
		/* A cluster of short options: "-l", "-n8", "-ln 8". */
		for (a++; *a; a++) {
			if (strchr(short_arg, *a)) {
				const char *v = a[1] ? a + 1 : (i + 1 < argc ? argv[++i] : "");
				const char *name = short_name(*a);

				take(s, name, strlen(name), v);
				break;
			}
			if (!strchr("EHIKlOQsuvXhVZ", *a))
				s->complete = false;
		}
	}
	from_env(s);
}

int
pl_shape_self(struct pl_shape *s)
{
	char buf[65536], *argv[1024];
	size_t n;
	int argc = 0;
	FILE *f = fopen("/proc/self/cmdline", "r");

	memset(s, 0, sizeof(*s));
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (size_t o = 0; o < n && argc < 1023; o += strlen(buf + o) + 1)
		argv[argc++] = buf + o;
	argv[argc] = NULL;
	if (n == sizeof(buf) - 1)
		return -1;	/* truncated: too long to trust */
	pl_shape_parse(argc, argv, s);
	return 0;
}
