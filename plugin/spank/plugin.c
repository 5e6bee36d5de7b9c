/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SPANK entry points.  This file owns SPANK_PLUGIN and only dispatches
 * on spank_context(); the work is in spk_local.c (srun, sbatch, salloc) and
 * spk_remote.c (slurmstepd).  Jobs that do not use --parallel-layout pay one
 * option registration and nothing else.
 */
#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "spk_context.h"

SPANK_PLUGIN(parallel_layout, 1);

/*
 * Slurm 25.05 on: a failed slurm_spank_init() of a required plugin fails
 * the job rather than draining the node.  Ours never fails (every refusal
 * is made in srun before the allocation, or in a task's own task_init),
 * but if a later change made it fail, the node must not be drained for a
 * user's bad option.  The symbol is looked up by name; older releases do
 * not declare it.
 */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif

/* The option values and plugstack arguments of this process; the contexts
 * read them, and keep their own state in their own files. */
static struct spk_opts opts;

static int
on_layout(int val, const char *optarg, int remote)
{
	(void)val;
	if (!optarg || !*optarg) {
		slurm_error(PLUGIN_NAME ": --parallel-layout needs a value, e.g. --parallel-layout=tp8,pp4");
		return -1;
	}
	if (strlen(optarg) >= sizeof(opts.spec)) {
		char clip[PL_CLIP_BUF];

		slurm_error(PLUGIN_NAME ": --parallel-layout=%s: longer than %zu characters",
			    pl_clip(optarg, clip, sizeof(clip)), sizeof(opts.spec) - 1);
		return -1;
	}
	/* Slurm may call an option callback twice: the first did the work. */
	if (opts.enabled && strcmp(opts.spec, optarg) == 0)
		return 0;
	opts.enabled = true;
	snprintf(opts.spec, sizeof(opts.spec), "%s", optarg);
	return remote ? 0 : spk_local_option(&opts);
}

static int
on_verbose(int val, const char *optarg, int remote)
{
	(void)val;
	(void)optarg;
	(void)remote;
	opts.verbose = true;
	return 0;
}

static int
on_watch(int val, const char *optarg, int remote)
{
	pl_err_t err;

	(void)val;
	(void)remote;
	pl_err_clear(&err);
	if (watchopt_parse(optarg ? optarg : "", &opts.watch, &err) < 0) {
		slurm_error(PLUGIN_NAME ": %s", err.text);
		return -1;
	}
	opts.watch_off = opts.watch.off;
	return 0;
}

static struct spank_option opt_layout = {
	"parallel-layout", "SPEC",
	"Place ranks for a parallel training layout, e.g. tp8,pp4 or tp4,cp2,pp8,model=70b "
	"(sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, NCCL_IB_HCA ... per task)",
	1, 0, on_layout
};

static struct spank_option opt_verbose = {
	"parallel-layout-verbose", NULL,
	"Say how --parallel-layout placed the step and which variables it set or kept",
	0, 1, on_verbose
};

static struct spank_option opt_watch = {
	"parallel-layout-watch", "yes|no|hang=DUR,busy=DUR,slow=on|off",
	"With --parallel-layout: let the NCCL watch record what each rank's NCCL is doing "
	"(NCCL_PROFILER_PLUGIN; default yes where the site turned it on), or watch the step "
	"with its own hang threshold, busy time and slow-rank rule (e.g. hang=10m,busy=2h,"
	"slow=off; within the site's bounds)",
	1, 0, on_watch
};

/* Which Slurm runs us: the release's data come from the table
 * (spk_release.c); a release it lacks gets what is certain on any. */
static void
slurm_release(spank_t sp)
{
	char *v = NULL;

	if (spank_get_item(sp, S_SLURM_VERSION, &v) != ESPANK_SUCCESS)
		v = NULL;
	snprintf(opts.slurm_version, sizeof(opts.slurm_version), "%s", v ? v : "");
	opts.release = spk_release_find(opts.slurm_version, &opts.slurm_major, &opts.slurm_minor);
}

int
slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();

	if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR)
		return 0;
	slurm_release(sp);
	watchopt_clear(&opts.watch);
	/* A bad plugstack line is reported to the jobs that use the option,
	 * not to every job of the cluster. */
	pl_err_clear(&opts.conf_err);
	opts.conf_ok = spk_args_parse(ac, av, &opts.conf, &opts.conf_err) == 0;
	if (spank_option_register(sp, &opt_layout) != ESPANK_SUCCESS ||
	    spank_option_register(sp, &opt_verbose) != ESPANK_SUCCESS ||
	    spank_option_register(sp, &opt_watch) != ESPANK_SUCCESS)
		slurm_error(PLUGIN_NAME ": cannot register --parallel-layout");
	return 0;
}

/* In slurmstepd the option callbacks have run by now, and this is the last
 * callback before user_init, which runs with the user's euid. */
int
slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return spank_context() == S_CTX_REMOTE ? spk_remote_prepare(sp, &opts) : 0;
}

int
slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return spank_context() == S_CTX_REMOTE ? spk_remote_task_init(sp, &opts) : 0;
}

int
slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return spank_context() == S_CTX_REMOTE ? spk_remote_task_post_fork(sp, &opts) : 0;
}

int
slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return spank_context() == S_CTX_REMOTE ? spk_remote_task_exit(sp, &opts) : 0;
}

int
slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_LOCAL)
		spk_local_exit();
	if (spank_context() == S_CTX_REMOTE)
		spk_remote_exit();
	return 0;
}
