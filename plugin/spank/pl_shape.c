/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * srun's options, as Slurm 22.05 documents them, split into those that take
 * an argument and those that do not: enough to walk the command line to the
 * program and pick out the task and node counts.  An option we do not know
 * makes the shape incomplete, and then we only validate what we are sure of.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pl_err.h"
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

/*
 * A count: its leading digits ("-N 2-4", a range, counts as its minimum;
 * Slurm may pick more).  0 when there is no number; past
 * PL_SHAPE_MAX_COUNT the shape is marked invalid, naming where the
 * count came from.
 */
static long
count(struct pl_shape *s, const char *what, const char *v)
{
	char clip[PL_CLIP_BUF];
	long x = 0;
	const char *p;

	for (p = v; isdigit((unsigned char)*p); p++) {
		if (x > (PL_SHAPE_MAX_COUNT - (*p - '0')) / 10) {
			if (!s->invalid[0])
				snprintf(s->invalid, sizeof(s->invalid), "%s=%s: expected a count from 1 to %ld",
					 what, pl_clip(v, clip, sizeof(clip)), PL_SHAPE_MAX_COUNT);
			return 0;
		}
		x = x * 10 + (*p - '0');
	}
	return x;
}

static void
take(struct pl_shape *s, const char *name, size_t len, const char *v)
{
	if (len == 6 && strncmp(name, "ntasks", 6) == 0)
		s->ntasks = count(s, "--ntasks", v);
	else if (len == 5 && strncmp(name, "nodes", 5) == 0) {
		s->nnodes = count(s, "--nodes", v);
		/* A range leaves the count to Slurm. */
		if (strchr(v, '-'))
			s->steer_blockers = true;
	} else if (len == 15 && strncmp(name, "ntasks-per-node", 15) == 0)
		s->ntasks_per_node = count(s, "--ntasks-per-node", v);
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
		s->ntasks = count(s, "SLURM_NTASKS", v);
	if (!s->nnodes && (v = getenv("SLURM_NNODES")))
		s->nnodes = count(s, "SLURM_NNODES", v);
	if (!s->ntasks_per_node && (v = getenv("SLURM_NTASKS_PER_NODE")))
		s->ntasks_per_node = count(s, "SLURM_NTASKS_PER_NODE", v);
	if (getenv("SLURM_DISTRIBUTION"))
		s->steer_blockers = true;
	if (s->ntasks && s->ntasks_per_node && !s->nnodes && s->ntasks % s->ntasks_per_node == 0)
		s->nnodes = s->ntasks / s->ntasks_per_node;
	if (s->nnodes && s->ntasks_per_node && !s->ntasks) {
		/* Both are at most PL_SHAPE_MAX_COUNT: the product fits a long. */
		if (s->nnodes > PL_SHAPE_MAX_COUNT / s->ntasks_per_node) {
			if (!s->invalid[0])
				snprintf(s->invalid, sizeof(s->invalid),
					 "%ld nodes x %ld tasks per node: more than %ld tasks",
					 s->nnodes, s->ntasks_per_node, PL_SHAPE_MAX_COUNT);
		} else {
			s->ntasks = s->nnodes * s->ntasks_per_node;
		}
	}
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
	struct buf b = BUF_INIT;
	char chunk[8192], **argv = NULL;
	size_t n, o;
	int argc = 0, rv = -1;
	FILE *f = fopen("/proc/self/cmdline", "r");

	memset(s, 0, sizeof(*s));
	if (!f)
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	if (ferror(f) || b.bad)
		goto out;
	for (o = 0; o < b.len; o += strlen(b.s + o) + 1)
		argc++;
	argv = calloc((size_t)argc + 1, sizeof(*argv));
	if (!argv)
		goto out;
	argc = 0;
	for (o = 0; o < b.len; o += strlen(b.s + o) + 1)
		argv[argc++] = b.s + o;
	pl_shape_parse(argc, argv, s);
	rv = 0;
out:
	fclose(f);
	free(argv);
	buf_free(&b);
	return rv;
}
