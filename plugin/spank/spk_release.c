/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Slurm releases the plugin knows, and srun's options in each.
 *
 * The option table was read from each release's own option definitions
 * (the options srun accepts, their letters and whether each takes a
 * value), release by release from 22.05 to 26.05; the behaviours from
 * srun's and slurmstepd's sources of each release, and checked on the
 * emulated cluster for 22.05 and 24.11.  A new release is one row in
 * spk_releases[] and the options it adds or drops.
 */
#include <stdio.h>
#include <string.h>

#include "spk_release.h"

/* Indexes into spk_releases[]. */
enum {
	R22_05, R23_02, R23_11, R24_05, R24_11, R25_05, R25_11, R26_05,
	R_LAST = R26_05
};

const struct spk_release spk_releases[] = {
	/* name    major minor steer  post_opt  fail_mode  nonzero */
	{ "22.05", 22, 5, true, true, false, false },
	{ "23.02", 23, 2, true, true, false, false },
	{ "23.11", 23, 11, true, true, false, false },
	{ "24.05", 24, 5, true, true, false, false },
	{ "24.11", 24, 11, true, true, false, false },
	{ "25.05", 25, 5, true, true, true, true },
	{ "25.11", 25, 11, true, true, true, true },
	{ "26.05", 26, 5, true, true, true, true },
};
const size_t spk_nreleases = sizeof(spk_releases) / sizeof(spk_releases[0]);

/*
 * One srun option, from release `since` to release `until` (indexes into
 * spk_releases[]).  An option whose value rule changed has one row per
 * rule.  Sorted by name (the tests check it).
 */
struct srun_opt {
	const char *name;
	char letter;		/* its short form; 0 none */
	unsigned char arg;	/* enum spk_arg */
	unsigned char since, until;
};

static const struct srun_opt srun_opts[] = {
	{ "accel-bind", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "account", 'A', PL_ARG_REQ, R22_05, R_LAST },
	{ "acctg-freq", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "async", 0, PL_ARG_NONE, R26_05, R_LAST },
	{ "autocomplete", 0, PL_ARG_REQ, R23_02, R_LAST },
	{ "bb", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "bbf", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "bcast", 0, PL_ARG_OPT, R22_05, R_LAST },
	{ "bcast-exclude", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "begin", 'b', PL_ARG_REQ, R22_05, R_LAST },
	{ "chdir", 'D', PL_ARG_REQ, R22_05, R_LAST },
	{ "cluster", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "cluster-constraint", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "clusters", 'M', PL_ARG_REQ, R22_05, R_LAST },
	{ "comment", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "compress", 0, PL_ARG_OPT, R22_05, R_LAST },
	{ "consolidate-segments", 0, PL_ARG_NONE, R25_11, R_LAST },
	{ "constraint", 'C', PL_ARG_REQ, R22_05, R_LAST },
	{ "container", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "container-id", 0, PL_ARG_REQ, R23_02, R_LAST },
	{ "container-type", 0, PL_ARG_REQ, R26_05, R_LAST },
	{ "context", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "contiguous", 0, PL_ARG_NONE, R22_05, R_LAST },
	{ "core-spec", 'S', PL_ARG_REQ, R22_05, R_LAST },
	{ "cores-per-socket", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "cpu-bind", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "cpu-freq", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "cpu_bind", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "cpus-per-gpu", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "cpus-per-task", 'c', PL_ARG_REQ, R22_05, R_LAST },
	{ "deadline", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "debugger-test", 0, PL_ARG_NONE, R22_05, R_LAST },
	{ "delay-boot", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "dependency", 'd', PL_ARG_REQ, R22_05, R_LAST },
	{ "disable-status", 'X', PL_ARG_NONE, R22_05, R_LAST },
	{ "distribution", 'm', PL_ARG_REQ, R22_05, R_LAST },
	{ "epilog", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "error", 'e', PL_ARG_REQ, R22_05, R_LAST },
	{ "exact", 0, PL_ARG_NONE, R22_05, R_LAST },
	{ "exclude", 'x', PL_ARG_REQ, R22_05, R_LAST },
	{ "exclusive", 0, PL_ARG_OPT, R22_05, R_LAST },
	{ "export", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "external-launcher", 0, PL_ARG_NONE, R23_11, R23_11 },
	{ "external-launcher", 0, PL_ARG_OPT, R24_05, R_LAST },
	{ "extra", 0, PL_ARG_REQ, R23_02, R_LAST },
	{ "extra-node-info", 'B', PL_ARG_REQ, R22_05, R_LAST },
	{ "gid", 0, PL_ARG_REQ, R22_05, R23_02 },
	{ "gpu-bind", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "gpu-freq", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "gpus", 'G', PL_ARG_REQ, R22_05, R_LAST },
	{ "gpus-per-node", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "gpus-per-socket", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "gpus-per-task", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "gres", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "gres-flags", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "help", 'h', PL_ARG_NONE, R22_05, R_LAST },
	{ "het-group", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "hint", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "hold", 'H', PL_ARG_NONE, R22_05, R_LAST },
	{ "ignore-signals", 0, PL_ARG_REQ, R26_05, R_LAST },
	{ "immediate", 'I', PL_ARG_OPT, R22_05, R_LAST },
	{ "input", 'i', PL_ARG_REQ, R22_05, R_LAST },
	{ "interactive", 0, PL_ARG_NONE, R22_05, R_LAST },
	{ "job-name", 'J', PL_ARG_REQ, R22_05, R_LAST },
	{ "jobid", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "kill-on-bad-exit", 'K', PL_ARG_OPT, R22_05, R_LAST },
	{ "label", 'l', PL_ARG_NONE, R22_05, R_LAST },
	{ "licenses", 'L', PL_ARG_REQ, R22_05, R_LAST },
	{ "mail-type", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "mail-user", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "mcs-label", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "mem", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "mem-bind", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "mem-per-cpu", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "mem-per-gpu", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "mem-update", 0, PL_ARG_REQ, R26_05, R_LAST },
	{ "mincpus", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "mpi", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "msg-timeout", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "multi-prog", 0, PL_ARG_NONE, R22_05, R_LAST },
	{ "network", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "nice", 0, PL_ARG_OPT, R22_05, R_LAST },
	{ "no-allocate", 'Z', PL_ARG_NONE, R22_05, R_LAST },
	{ "no-kill", 'k', PL_ARG_OPT, R22_05, R_LAST },
	{ "nodefile", 'F', PL_ARG_REQ, R22_05, R_LAST },
	{ "nodelist", 'w', PL_ARG_REQ, R22_05, R_LAST },
	{ "nodes", 'N', PL_ARG_REQ, R22_05, R_LAST },
	{ "ntasks", 'n', PL_ARG_REQ, R22_05, R_LAST },
	{ "ntasks-per-core", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "ntasks-per-gpu", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "ntasks-per-node", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "ntasks-per-socket", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "ntasks-per-tres", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "oom-kill-step", 0, PL_ARG_OPT, R24_11, R_LAST },
	{ "open-mode", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "output", 'o', PL_ARG_REQ, R22_05, R_LAST },
	{ "overcommit", 'O', PL_ARG_NONE, R22_05, R_LAST },
	{ "overlap", 0, PL_ARG_OPT, R22_05, R_LAST },
	{ "oversubscribe", 's', PL_ARG_NONE, R22_05, R_LAST },
	{ "pack-group", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "parsable", 0, PL_ARG_NONE, R26_05, R_LAST },
	{ "partition", 'p', PL_ARG_REQ, R22_05, R_LAST },
	{ "power", 0, PL_ARG_REQ, R22_05, R23_11 },
	{ "prefer", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "preserve-env", 'E', PL_ARG_NONE, R22_05, R_LAST },
	{ "priority", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "profile", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "prolog", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "propagate", 0, PL_ARG_OPT, R22_05, R_LAST },
	{ "pty", 0, PL_ARG_NONE, R22_05, R22_05 },
	{ "pty", 0, PL_ARG_OPT, R23_02, R_LAST },
	{ "qos", 'q', PL_ARG_REQ, R22_05, R_LAST },
	{ "quiet", 'Q', PL_ARG_NONE, R22_05, R_LAST },
	{ "quit-on-interrupt", 0, PL_ARG_NONE, R22_05, R_LAST },
	{ "reboot", 0, PL_ARG_NONE, R22_05, R_LAST },
	{ "relative", 'r', PL_ARG_REQ, R22_05, R_LAST },
	{ "reservation", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "resources", 0, PL_ARG_REQ, R25_11, R_LAST },
	{ "resv-ports", 0, PL_ARG_OPT, R22_05, R_LAST },
	{ "segment", 0, PL_ARG_REQ, R24_05, R_LAST },
	{ "send-libs", 0, PL_ARG_OPT, R22_05, R_LAST },
	{ "signal", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "slurmd-debug", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "sockets-per-node", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "spread-job", 0, PL_ARG_NONE, R22_05, R_LAST },
	{ "spread-segments", 0, PL_ARG_NONE, R25_11, R_LAST },
	{ "stepmgr", 0, PL_ARG_NONE, R24_05, R_LAST },
	{ "switches", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "task-epilog", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "task-prolog", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "tasks-per-node", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "test-only", 0, PL_ARG_NONE, R22_05, R_LAST },
	{ "thread-spec", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "threads", 'T', PL_ARG_REQ, R22_05, R_LAST },
	{ "threads-per-core", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "time", 't', PL_ARG_REQ, R22_05, R_LAST },
	{ "time-min", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "tmp", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "treewidth", 0, PL_ARG_REQ, R23_11, R_LAST },
	{ "tres-bind", 0, PL_ARG_REQ, R23_11, R_LAST },
	{ "tres-per-task", 0, PL_ARG_REQ, R23_02, R_LAST },
	{ "uid", 0, PL_ARG_REQ, R22_05, R23_02 },
	{ "unbuffered", 'u', PL_ARG_NONE, R22_05, R_LAST },
	{ "usage", 0, PL_ARG_NONE, R22_05, R_LAST },
	{ "use-min-nodes", 0, PL_ARG_NONE, R22_05, R_LAST },
	{ "verbose", 'v', PL_ARG_NONE, R22_05, R_LAST },
	{ "version", 'V', PL_ARG_NONE, R22_05, R_LAST },
	{ "wait", 'W', PL_ARG_REQ, R22_05, R_LAST },
	{ "wait-for-children", 0, PL_ARG_NONE, R25_05, R_LAST },
	{ "wckey", 0, PL_ARG_REQ, R22_05, R_LAST },
	{ "whole", 0, PL_ARG_NONE, R22_05, R_LAST },
	{ "x11", 0, PL_ARG_OPT, R22_05, R_LAST },
};

#define NOPTS (sizeof(srun_opts) / sizeof(srun_opts[0]))

static long
index_of(const struct spk_release *r)
{
	if (!r || r < spk_releases || r >= spk_releases + spk_nreleases)
		return -1;
	return r - spk_releases;
}

static bool
in(const struct srun_opt *o, long ri)
{
	return ri >= o->since && ri <= o->until;
}

/* Leading digits of *p as an int (at most 9999), advancing *p; -1 when none. */
static int
number(const char **p)
{
	int x = 0, n = 0;

	while (**p >= '0' && **p <= '9' && n < 4) {
		x = x * 10 + (**p - '0');
		(*p)++;
		n++;
	}
	return n ? x : -1;
}

const struct spk_release *
spk_release_find(const char *version, int *major, int *minor)
{
	const char *p = version;
	int ma, mi;
	size_t i;

	*major = *minor = 0;
	if (!p)
		return NULL;
	ma = number(&p);
	if (ma < 0 || *p != '.')
		return NULL;
	p++;
	mi = number(&p);
	if (mi < 0 || (*p && *p != '.' && *p != '-'))
		return NULL;
	*major = ma;
	*minor = mi;
	for (i = 0; i < spk_nreleases; i++)
		if (spk_releases[i].major == ma && spk_releases[i].minor == mi)
			return &spk_releases[i];
	return NULL;
}

const struct spk_release *
spk_release_nearest(int major, int minor)
{
	const struct spk_release *first = &spk_releases[0];

	if (major > 0 && (major < first->major || (major == first->major && minor < first->minor)))
		return first;
	return &spk_releases[spk_nreleases - 1];
}

int
spk_release_long(const struct spk_release *r, const char *name, size_t len)
{
	long ri = index_of(r);
	size_t i;

	for (i = 0; ri >= 0 && i < NOPTS; i++)
		if (strlen(srun_opts[i].name) == len && strncmp(srun_opts[i].name, name, len) == 0 &&
		    in(&srun_opts[i], ri))
			return srun_opts[i].arg;
	return -1;
}

int
spk_release_short(const struct spk_release *r, char c, const char **name)
{
	long ri = index_of(r);
	size_t i;

	for (i = 0; c && ri >= 0 && i < NOPTS; i++)
		if (srun_opts[i].letter == c && in(&srun_opts[i], ri)) {
			*name = srun_opts[i].name;
			return srun_opts[i].arg;
		}
	*name = "";
	return -1;
}


void
spk_release_unknown_note(const char *version, char *out, size_t outlen)
{
	snprintf(out, outlen,
		 "Slurm %.40s is not a release this plugin knows (%s to %s): it validates the layout with the nearest release's srun options and sets each task's ranks in its environment, but leaves Slurm's task placement alone (SLURM_PROCID may differ from RANK)",
		 version && version[0] ? version : "(version unknown)", spk_releases[0].name,
		 spk_releases[spk_nreleases - 1].name);
}
