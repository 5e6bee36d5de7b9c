/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurmstepd: find the step's exact layout, get this node's part of the
 * placement, check it against the step, and give every task its rank and
 * environment.  The request is made in init_post_opt, the last remote
 * callback that runs as root (user_init runs with the user's euid), so
 * layoutd can trust the job id and uid it is sent.  Failures found before
 * task_init are kept and reported there: only a task_init failure reaches
 * the user, and then the whole step is cancelled, because the tasks on the
 * other nodes would wait for their missing peers until their own timeout.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "client.h"
#include "spk_answer.h"
#include "spk_context.h"
#include "spk_reg.h"
#include "spk_send.h"
#include "spk_request.h"

/* The remote context's own state: one step in one slurmstepd. */
static struct {
	bool active;			/* the step uses the option (not batch/extern) */
	char error[1024];		/* found before task_init; reported there */
	bool have_place;
	struct proto_placement place;	/* this node's view */
	bool steered;			/* procid == rank (Slurm placed by our hostfile) */
	long node_index;		/* this node in place.nodes */
	char node[TOPO_NAME];
	char master_addr[256];
	uint32_t job_id, step_id;
	long node_rank;			/* order of this node by its lowest rank */
	long local_world;
	bool watch;			/* the step's record directory is made */
	char watch_parent[PATH_MAX];	/* plugstack watch_dir, for the removal */
	char watch_path[PATH_MAX];	/* PARALLEL_LAYOUT_WATCH_DIR */
	char watch_why[512];		/* why the watch is off, for verbose mode */
	long uid;			/* the job's, -1 when unknown */
	bool layoutd_down;		/* a registration got no answer: stop asking */
} ctx;

/*
 * The node's registrations of its tasks with layoutd, gathered in one
 * message (spk_reg.h) as task_post_fork sees each, and every message to
 * layoutd about the watch sent by a thread of its own (spk_send.h): a task
 * neither starts nor ends waiting for layoutd.
 */
static struct {
	struct spk_reg g;
	bool on;			/* gathering (g made) */
	bool broken;			/* out of memory: each task alone */
	bool sent;			/* the batch is queued */
	struct spk_send snd;
	bool snd_on;			/* snd made */
	bool verbose;
} reg;

static void sender_stop(void);



static void
keep_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
keep_error(const char *fmt, ...)
{
	va_list ap;

	if (ctx.error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(ctx.error, sizeof(ctx.error), fmt, ap);
	va_end(ap);
}

/*
 * SIGKILL to every task of the step.  Slurm 23.11 gave
 * slurm_kill_job_step() a flags argument (22.05 has three arguments,
 * 24.11 four; 0 is the old behaviour), and 25.11 takes the step as a
 * slurm_step_id_t (no heterogeneous component: NO_VAL).
 */
static void
kill_step(uint32_t job_id, uint32_t step_id)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
	slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;

	id.job_id = job_id;
	id.step_id = step_id;
	slurm_kill_job_step(&id, SIGKILL, 0);
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
	slurm_kill_job_step(job_id, step_id, SIGKILL, 0);
#else
	slurm_kill_job_step(job_id, step_id, SIGKILL);
#endif
}

/*
 * A task of the step fails here: say why, then cancel the whole step, so
 * that the tasks already running on the other nodes do not sit waiting for
 * their missing peers.  The cancel (an RPC to slurmctld, bounded by Slurm's
 * MessageTimeout) is sent from a detached child, so this task's own exit is
 * never delayed.  Each task_init runs in its own child of slurmstepd, so
 * nothing is shared between the tasks of a node: a failure of the whole
 * node (node_wide) is sent by its first local task only, a failure of one
 * task by that task.
 */
static int
fail_step(spank_t sp, bool node_wide, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
fail_step(spank_t sp, bool node_wide, const char *fmt, ...)
{
	uint32_t local = 0;
	char msg[1200];
	va_list ap;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	slurm_error(PLUGIN_NAME ": %s; cancelling step %u.%u", msg, ctx.job_id, ctx.step_id);
	if (node_wide && spank_get_item(sp, S_TASK_ID, &local) == ESPANK_SUCCESS && local != 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* The grandchild: the task child that forked it exits now. */
		if (fork() == 0)
			kill_step(ctx.job_id, ctx.step_id);
		_exit(0);
	}
	if (pid > 0) {
		int st;

		waitpid(pid, &st, 0);
	} else {
		kill_step(ctx.job_id, ctx.step_id);
	}
	return -1;
}

/* Are the task ids Slurm put on this node exactly the ranks the placement
 * puts here?  Then Slurm followed our hostfile.  (The answer was checked:
 * every rank is unique and in range.) */
static bool
matches(const struct spk_step *st, long me, const struct proto_placement *p)
{
	unsigned char *here = calloc((size_t)p->world, 1);
	bool ok = here && p->ntasks == st->ntasks[me];
	long k;

	for (k = 0; ok && k < p->ntasks; k++)
		here[p->tasks[k].rank] = 1;
	for (k = 0; ok && k < st->ntasks[me]; k++)
		ok = st->tids[me][k] >= 0 && st->tids[me][k] < p->world && here[st->tids[me][k]];
	free(here);
	return ok;
}

static void
master_address(const struct spk_opts *o)
{
	node_info_msg_t *info = NULL;
	const char *name = ctx.place.nodes[ctx.place.master_node].name;

	if (o->conf.master_addr[0]) {
		snprintf(ctx.master_addr, sizeof(ctx.master_addr), "%s", o->conf.master_addr);
		return;
	}
	/* Node names need not resolve; the address Slurm uses always works. */
	if (slurm_load_node_single(&info, (char *)name, SHOW_ALL) == 0 && info &&
	    info->record_count > 0 && info->node_array[0].node_addr)
		snprintf(ctx.master_addr, sizeof(ctx.master_addr), "%s", info->node_array[0].node_addr);
	else
		snprintf(ctx.master_addr, sizeof(ctx.master_addr), "%s", name);
	if (info)
		slurm_free_node_info_msg(info);
}

/*
 * Ask for this node's view of the placement (with the step's task ids, or
 * in block order to see whether Slurm followed srun's hostfile) and check
 * the answer against the step.  0, or -1 with err.
 */
static int
ask(const struct spk_opts *o, const struct spk_step *st, bool with_tids, long uid,
    const char *view, char *from, size_t fromlen, pl_err_t *err)
{
	struct proto_request req;
	int rv = -1;

	proto_placement_free(&ctx.place);
	if (spk_request_build(&req, o->spec, st, with_tids, ctx.job_id, ctx.step_id, uid, view,
			     err) < 0)
		return -1;
	if (spk_query(&o->conf, ctx.node, &req, &ctx.place, from, fromlen, err) == 0 &&
	    spk_answer_check(&ctx.place, (const char *const *)st->names, st->ntasks, st->nnodes,
			    view, err) == 0 &&
	    spk_answer_layout_check(&ctx.place, o->spec, err) == 0)
		rv = 0;
	else
		proto_placement_free(&ctx.place);
	proto_request_free(&req);
	return rv;
}

/* The step's layout from slurmctld, as a spk_step; -1 with the reason kept. */
static int
step_layout(struct spk_step *st, long *dist)
{
	slurm_step_id_t id;
	slurm_step_layout_t *lay;
	pl_err_t err;
	int rv;

	memset(&id, 0, sizeof(id));
	id.job_id = ctx.job_id;
	id.step_id = ctx.step_id;
	id.step_het_comp = NO_VAL;
	lay = slurm_job_step_layout_get(&id);
	if (!lay) {
		keep_error("cannot get the layout of step %u.%u from slurmctld", ctx.job_id,
			   ctx.step_id);
		return -1;
	}
	pl_err_clear(&err);
	rv = spk_step_init(st, lay->node_list, (long)lay->node_cnt, lay->tasks, lay->tids, &err);
	if (rv < 0)
		keep_error("step %u.%u: %s", ctx.job_id, ctx.step_id, err.text);
	*dist = (long)(lay->task_dist & SLURM_DIST_STATE_BASE);
	slurm_job_step_layout_free(lay);
	return rv;
}

/*
 * This node's placement for step st (this node is st's node me), checked
 * against the step; for a step placed by srun's hostfile, whether Slurm
 * followed it.  Failures are kept for task_init.
 */
static void
place_here(const struct spk_opts *o, const struct spk_step *st, long me, long uid, bool want_steer,
	   long dist)
{
	char view[PROTO_VIEW_MAX], from[PATH_MAX + 256], spec[PL_CLIP_BUF], clip[PL_CLIP_BUF];
	pl_err_t err;
	long k;

	pl_err_clear(&err);
	pl_clip(o->spec, spec, sizeof(spec));
	snprintf(view, sizeof(view), "node:%s", ctx.node);
	if (dist == SLURM_DIST_ARBITRARY) {
		/* Placed by a hostfile: ours if this node holds exactly the
		 * ranks a block-ordered request puts here. */
		if (ask(o, st, false, uid, view, from, sizeof(from), &err) == 0 &&
		    matches(st, me, &ctx.place)) {
			ctx.steered = true;
			ctx.have_place = true;
		} else {
			proto_placement_free(&ctx.place);
		}
		if (want_steer && pl_err_isset(&err)) {
			/* No answer to compare with: say why, not "mismatch". */
			keep_error("--parallel-layout=%s: %s", spec, err.text);
			return;
		}
		pl_err_clear(&err);
	}
	if (want_steer && !ctx.steered) {
		keep_error("Slurm did not place step %u.%u as srun asked (SLURM_HOSTFILE was changed or not honoured): node %s runs other tasks than the placement puts there",
			   ctx.job_id, ctx.step_id, pl_clip(ctx.node, clip, sizeof(clip)));
		return;
	}
	if (!ctx.have_place) {
		if (ask(o, st, true, uid, view, from, sizeof(from), &err) < 0) {
			keep_error("--parallel-layout=%s: %s", spec, err.text);
			return;
		}
		ctx.have_place = true;
	}
	ctx.node_index = me;
	ctx.local_world = st->ntasks[me];
	ctx.node_rank = 0;
	for (k = 0; k < ctx.place.nnodes; k++)
		if (ctx.place.nodes[k].min_rank < ctx.place.nodes[me].min_rank)
			ctx.node_rank++;
	master_address(o);
	if (o->verbose)
		slurm_info(PLUGIN_NAME ": step %u.%u on %s: placement %s from %s (asked as uid %ld for job owner %ld)%s%s",
			   ctx.job_id, ctx.step_id, ctx.node,
			   ctx.steered ? "followed by Slurm" : "applied by RANK", from, (long)geteuid(),
			   uid, ctx.place.choice[0] ? "; " : "", ctx.place.choice);
}

/*
 * The NCCL watch's record directory for the step, made here as root and
 * given to the job's user.  Best-effort: a failure turns the watch off for
 * the step (said once to the log, and to the user in verbose mode), it
 * never fails the step.
 */
static void
watch_prepare(spank_t sp, const struct spk_opts *o, long uid)
{
	gid_t gid = (gid_t)-1;
	pl_err_t err;

	if (!o->conf.watch || !(o->conf.export_mask & EXPORT_NCCL)) {
		snprintf(ctx.watch_why, sizeof(ctx.watch_why), "the site turned it off (plugstack %s)",
			 o->conf.watch ? "export= without nccl" : "watch=no");
		return;
	}
	if (o->watch_off) {
		snprintf(ctx.watch_why, sizeof(ctx.watch_why), "--parallel-layout-watch=no");
		return;
	}
	if (uid < 0) {
		/* A directory the tasks cannot write is no use to them. */
		snprintf(ctx.watch_why, sizeof(ctx.watch_why), "the job's uid is not known");
		return;
	}
	if (spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
		gid = (gid_t)-1;
	pl_err_clear(&err);
	if (spk_watch_dir_make(o->conf.watch_dir, ctx.job_id, ctx.step_id, uid,
			      gid == (gid_t)-1 ? -1 : (long)gid, ctx.watch_path,
			      sizeof(ctx.watch_path), &err) < 0) {
		slurm_error(PLUGIN_NAME ": step %u.%u: NCCL watch off: %s", ctx.job_id, ctx.step_id,
			    err.text);
		snprintf(ctx.watch_why, sizeof(ctx.watch_why), "%s", err.text);
		return;
	}
	snprintf(ctx.watch_parent, sizeof(ctx.watch_parent), "%s", o->conf.watch_dir);
	ctx.watch = true;
}

int
spk_remote_prepare(spank_t sp, const struct spk_opts *o)
{
	struct spk_step st = { 0, NULL, NULL, NULL, 0 };
	uint32_t job = 0, step = 0;
	uid_t uid = (uid_t)-1;
	char env[16], clip[PL_CLIP_BUF];
	const char *node = getenv("SLURMD_NODENAME");
	bool want_steer;
	long me, dist = 0;

	if (!o->enabled || ctx.active)
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS) {
		ctx.active = true;
		keep_error("cannot read the job and step ids");
		return 0;
	}
	/* The batch script, the extern and the interactive steps inherit the
	 * option from sbatch/salloc but are not the training step. */
	if (step == SLURM_BATCH_SCRIPT || step == SLURM_EXTERN_CONT ||
	    step == SLURM_INTERACTIVE_STEP)
		return 0;
	ctx.active = true;
	ctx.job_id = job;
	ctx.step_id = step;
	if (!o->conf_ok) {
		keep_error("plugstack.conf: %s", o->conf_err.text);
		return 0;
	}
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
		uid = (uid_t)-1;
	ctx.uid = uid == (uid_t)-1 ? -1 : (long)uid;
	if (step_layout(&st, &dist) < 0)
		goto out;
	snprintf(ctx.node, sizeof(ctx.node), "%s", node ? node : "");
	me = spk_step_find(&st, ctx.node);
	if (me < 0) {
		keep_error("node '%s' is not in step %u.%u", pl_clip(ctx.node, clip, sizeof(clip)),
			   job, step);
		goto out;
	}
	want_steer = spank_getenv(sp, "PARALLEL_LAYOUT_STEERED", env, sizeof(env)) ==
		     ESPANK_SUCCESS && strcmp(env, "1") == 0;
	place_here(o, &st, me, uid == (uid_t)-1 ? -1 : (long)uid, want_steer, dist);
	if (!ctx.error[0] && ctx.have_place)
		watch_prepare(sp, o, uid == (uid_t)-1 ? -1 : (long)uid);
out:
	spk_step_free(&st);
	return 0;
}

void
spk_remote_exit(void)
{
	pl_err_t err;

	sender_stop();		/* never unloaded under its thread */
	proto_placement_free(&ctx.place);
	if (!ctx.watch)
		return;
	ctx.watch = false;
	pl_err_clear(&err);
	if (spk_watch_dir_remove(ctx.watch_parent, ctx.job_id, ctx.step_id, &err) < 0)
		slurm_error(PLUGIN_NAME ": step %u.%u: %s", ctx.job_id, ctx.step_id, err.text);
}

/* Set var unless the user set it and the admin did not let us overwrite. */
static void
put(spank_t sp, const struct spk_opts *o, const char *var, const char *val)
{
	char old[1024], pat[80];
	spank_err_t got = spank_getenv(sp, var, old, sizeof(old));
	/* A value too long for old[] is the user's all the same. */
	bool set = got == ESPANK_SUCCESS || got == ESPANK_NOSPACE;
	bool force = false;

	snprintf(pat, sizeof(pat), ",%s,", var);
	if (o->conf.force[0]) {
		char list[sizeof(o->conf.force) + 2];

		snprintf(list, sizeof(list), ",%s,", o->conf.force);
		force = strstr(list, ",all,") || strstr(list, pat);
	}
	if (got == ESPANK_NOSPACE)
		snprintf(old, sizeof(old), "(a value over %zu bytes)", sizeof(old) - 1);
	if (set && strcmp(old, val) != 0 && !force) {
		if (o->verbose) {
			char clip[PL_CLIP_BUF];

			fprintf(stderr, PLUGIN_NAME ": kept %s=%s set by the user (placement says %s)\n",
				var, pl_clip(old, clip, sizeof(clip)), val);
		}
		return;
	}
	spank_setenv(sp, var, val, 1);
}

static void
putl(spank_t sp, const struct spk_opts *o, const char *var, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	put(sp, o, var, buf);
}

/* The index of gpu in a CUDA_VISIBLE_DEVICES list, or -1. */
static int
visible_index(const char *list, int gpu)
{
	char buf[1024], *save = NULL, *tok;
	int i = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++)
		if (strtol(tok, NULL, 10) == gpu)
			return i;
	return -1;
}

static void
export_framework(spank_t sp, const struct spk_opts *o, const struct proto_task *t, int local_rank)
{
	static const char *const axis_env[PL_NAXES] = { "TP", "CP", "EP", "DP", "PP" };
	char var[64];
	int a;

	putl(sp, o, "RANK", t->rank);
	putl(sp, o, "LOCAL_RANK", local_rank);
	putl(sp, o, "WORLD_SIZE", ctx.place.world);
	putl(sp, o, "LOCAL_WORLD_SIZE", ctx.local_world);
	putl(sp, o, "NODE_RANK", ctx.node_rank);
	put(sp, o, "MASTER_ADDR", ctx.master_addr);
	putl(sp, o, "MASTER_PORT", o->conf.master_port_base +
	     (long)(((uint64_t)ctx.job_id * 131 + ctx.step_id) % (uint64_t)o->conf.master_port_span));
	put(sp, o, "PARALLEL_LAYOUT", ctx.place.spec);
	for (a = 0; a < PL_NAXES; a++) {
		snprintf(var, sizeof(var), "PARALLEL_LAYOUT_%s", axis_env[a]);
		putl(sp, o, var, ctx.place.layout.size[a]);
		snprintf(var, sizeof(var), "PARALLEL_LAYOUT_%s_RANK", axis_env[a]);
		putl(sp, o, var, t->co[a]);
	}
}

static void
export_nccl(spank_t sp, const struct spk_opts *o, const struct proto_task *t)
{
	char val[512];

	if (t->nic[0]) {
		/* '=' asks NCCL for this exact device: mlx5_1 must not also
		 * select mlx5_10. */
		snprintf(val, sizeof(val), "=%s", t->nic);
		put(sp, o, "NCCL_IB_HCA", val);
	}
	if (o->conf.socket_ifname[0])
		put(sp, o, "NCCL_SOCKET_IFNAME", o->conf.socket_ifname);
	if (ctx.place.nodes[ctx.node_index].nccl_topo_file[0])
		put(sp, o, "NCCL_TOPO_FILE", ctx.place.nodes[ctx.node_index].nccl_topo_file);
	if (o->conf.ras_port_span > 0) {
		snprintf(val, sizeof(val), "127.0.0.1:%ld",
			 o->conf.ras_port_base + (long)(ctx.job_id % (uint64_t)o->conf.ras_port_span));
		put(sp, o, "NCCL_RAS_ADDR", val);
	}
}

/* The NCCL watch for this task, unless the user loads a profiler plugin
 * of their own (NCCL takes one only). */
static void
export_watch(spank_t sp, const struct spk_opts *o, uint32_t gid)
{
	char old[1024], clip[PL_CLIP_BUF];
	spank_err_t got;

	if (!ctx.watch) {
		if (o->verbose)
			fprintf(stderr, PLUGIN_NAME ": task %u: NCCL watch off: %s\n", gid,
				ctx.watch_why[0] ? ctx.watch_why : "no record directory");
		return;
	}
	got = spank_getenv(sp, "NCCL_PROFILER_PLUGIN", old, sizeof(old));
	if (got == ESPANK_SUCCESS || got == ESPANK_NOSPACE) {
		if (o->verbose)
			fprintf(stderr, PLUGIN_NAME ": task %u: NCCL watch off: NCCL_PROFILER_PLUGIN=%s is the user's\n",
				gid, got == ESPANK_SUCCESS ? pl_clip(old, clip, sizeof(clip)) :
				"(a long value)");
		return;
	}
	spank_setenv(sp, "NCCL_PROFILER_PLUGIN", o->conf.hook, 1);
	spank_setenv(sp, "PARALLEL_LAYOUT_WATCH_DIR", ctx.watch_path, 1);
	if (o->verbose)
		fprintf(stderr, PLUGIN_NAME ": task %u: NCCL watch on: NCCL_PROFILER_PLUGIN=%s PARALLEL_LAYOUT_WATCH_DIR=%s\n",
			gid, o->conf.hook, ctx.watch_path);
}

/* The placement's task for Slurm's task gid, or NULL. */
static const struct proto_task *
task_of(uint32_t gid)
{
	long k;

	for (k = 0; k < ctx.place.ntasks; k++)
		if (ctx.steered ? ctx.place.tasks[k].rank == (long)gid :
		    ctx.place.tasks[k].procid == (long)gid)
			return &ctx.place.tasks[k];
	return NULL;
}

/* LOCAL_RANK indexes the GPUs the task sees. */
static int
local_rank_of(spank_t sp, const struct spk_opts *o, const struct proto_task *t)
{
	char cvd[1024], clip[PL_CLIP_BUF];
	int vi;

	if (spank_getenv(sp, "CUDA_VISIBLE_DEVICES", cvd, sizeof(cvd)) != ESPANK_SUCCESS)
		return t->local_rank;
	vi = visible_index(cvd, t->local_rank);
	if (vi >= 0)
		return vi;
	if (o->verbose)
		fprintf(stderr, PLUGIN_NAME ": GPU %d is not in CUDA_VISIBLE_DEVICES=%s; LOCAL_RANK=%d is a node index\n",
			t->local_rank, pl_clip(cvd, clip, sizeof(clip)), t->local_rank);
	return t->local_rank;
}

int
spk_remote_task_init(spank_t sp, const struct spk_opts *o)
{
	const struct proto_task *t = NULL;
	uint32_t gid = 0;
	char val[512];
	int local_rank;

	if (!o->enabled || !ctx.active)
		return 0;
	if (ctx.error[0] || !ctx.have_place)
		return fail_step(sp, true, "%s", ctx.error[0] ? ctx.error : "no placement for this step");
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &gid) != ESPANK_SUCCESS)
		return fail_step(sp, false, "cannot read the task's global id");
	t = task_of(gid);
	if (!t)
		return fail_step(sp, false, "task %u has no place on node %s in the placement", gid,
				 ctx.node);
	local_rank = local_rank_of(sp, o, t);
	if (o->conf.export_mask & EXPORT_FRAMEWORK)
		export_framework(sp, o, t, local_rank);
	if (o->conf.export_mask & EXPORT_NCCL) {
		export_nccl(sp, o, t);
		export_watch(sp, o, gid);
	}
	if (o->conf.export_mask & EXPORT_SLURM) {
		/* Opt-in: for tools that read SLURM_PROCID (PyTorch Lightning). */
		spank_setenv(sp, "SLURM_PROCID", (snprintf(val, sizeof(val), "%ld", t->rank), val), 1);
		spank_setenv(sp, "SLURM_LOCALID", (snprintf(val, sizeof(val), "%d", local_rank), val), 1);
	}
	if (o->verbose)
		fprintf(stderr, PLUGIN_NAME ": task %u on %s: RANK=%ld LOCAL_RANK=%d (GPU %d) tp%ld cp%ld ep%ld dp%ld pp%ld NIC %s, %s\n",
			gid, ctx.node, t->rank, local_rank, t->local_rank, t->co[PL_TP], t->co[PL_CP],
			t->co[PL_EP], t->co[PL_DP], t->co[PL_PP], t->nic[0] ? t->nic : "-",
			ctx.steered ? "placed by Slurm (SLURM_PROCID == RANK)" : "remapped by RANK");
	if (ctx.steered && spank_getenv(sp, "SLURM_HOSTFILE", val, sizeof(val)) == ESPANK_SUCCESS &&
	    strncmp(val, SPK_HOSTFILE_PREFIX, sizeof(SPK_HOSTFILE_PREFIX) - 1) == 0)
		spank_unsetenv(sp, "SLURM_HOSTFILE");	/* srun deleted it; a nested srun must not read it */
	spank_unsetenv(sp, "PARALLEL_LAYOUT_STEERED");
	return 0;
}

/*
 * Tell this node's layoutd one thing about the watch (best effort): a
 * first call that gets no answer stops the later ones of the step, so a
 * daemon that is down costs the step at most one timeout_ms.
 */
static void
tell_layoutd(const struct spk_opts *o, const char *path, const char *body, uint32_t gid)
{
	struct client_reply r = { 0, NULL, 0 };
	char sock[PATH_MAX], clip[PL_CLIP_BUF];
	pl_err_t err;

	pl_err_clear(&err);
	if (client_socket_path(o->conf.socket, ctx.node, sock, sizeof(sock)) < 0) {
		ctx.layoutd_down = true;
		return;
	}
	if (client_request(sock, "POST", path, body, o->conf.timeout_ms, &r, &err) < 0) {
		ctx.layoutd_down = true;
		if (o->verbose)
			slurm_info(PLUGIN_NAME ": step %u.%u task %u: NCCL watch not registered with layoutd at %s: %s",
				   ctx.job_id, ctx.step_id, gid, pl_clip_path(sock, clip, sizeof(clip)),
				   err.text);
	} else if (r.status != 200 && o->verbose) {
		slurm_info(PLUGIN_NAME ": step %u.%u task %u: layoutd at %s answered %s with HTTP %ld: %s",
			   ctx.job_id, ctx.step_id, gid, pl_clip_path(sock, clip, sizeof(clip)), path,
			   r.status, pl_clip(r.body ? r.body : "", clip, sizeof(clip)));
	}
	free(r.body);
}

/* Is the watch on for the tasks of this step (the hook loaded by them)? */
static bool
watched(spank_t sp, const struct spk_opts *o)
{
	char old[16];
	spank_err_t got;

	if (!o->enabled || !ctx.active || ctx.error[0] || !ctx.have_place || !ctx.watch ||
	    ctx.layoutd_down || ctx.uid < 0 || !(o->conf.export_mask & EXPORT_NCCL))
		return false;
	/* The user's own profiler plugin keeps ours out (export_watch). */
	got = spank_getenv(sp, "NCCL_PROFILER_PLUGIN", old, sizeof(old));
	return got != ESPANK_SUCCESS && got != ESPANK_NOSPACE;
}

/* The sender, made with the first message (false: no socket path). */
static bool
sender_on(const struct spk_opts *o)
{
	char sock[PATH_MAX];

	if (reg.snd_on)
		return true;
	if (client_socket_path(o->conf.socket, ctx.node, sock, sizeof(sock)) < 0)
		return false;
	spk_send_init(&reg.snd, sock, o->conf.timeout_ms);
	reg.snd_on = true;
	reg.verbose = o->verbose;
	return true;
}

/* Everything queued sent (within timeout_ms), the thread stopped; what
 * came of it said in verbose mode. */
static void
sender_stop(void)
{
	char clip[PL_CLIP_BUF];

	if (reg.on)
		spk_reg_free(&reg.g);	/* never complete: a task not forked */
	reg.on = false;
	if (!reg.snd_on)
		return;
	spk_send_stop(&reg.snd);
	reg.snd_on = false;
	if (!reg.verbose)
		return;
	if (reg.snd.down && !reg.snd.sent)
		slurm_info(PLUGIN_NAME ": step %u.%u: NCCL watch not registered with layoutd at %s: "
			   "no answer (%s); %u later messages dropped", ctx.job_id, ctx.step_id,
			   pl_clip_path(reg.snd.sock, clip, sizeof(clip)), reg.snd.last,
			   reg.snd.dropped);
	else if (reg.snd.down || reg.snd.refused || reg.snd.dropped)
		slurm_info(PLUGIN_NAME ": step %u.%u: NCCL watch messages to layoutd at %s: %u taken, "
			   "%u refused%s, %u dropped%s: %s", ctx.job_id, ctx.step_id,
			   pl_clip_path(reg.snd.sock, clip, sizeof(clip)), reg.snd.sent,
			   reg.snd.refused, reg.snd.alone ? " (tasks one by one: an older layoutd)" : "",
			   reg.snd.dropped, reg.snd.down ? " (no answer: layoutd down)" : "",
			   reg.snd.last);
}

/* The tasks gathered so far, each alone and here (the batch cannot be
 * made: out of memory); from now on each task goes alone. */
static void
reg_flush_alone(const struct spk_opts *o)
{
	uint32_t i;

	for (i = 0; i < reg.g.n && !ctx.layoutd_down; i++)
		tell_layoutd(o, "/v1/watch/tasks", spk_reg_cut(&reg.g, i), 0);
	spk_reg_free(&reg.g);
	reg.on = false;
	reg.broken = true;
}

/* Task gid's registration (body; NULL: a task not registered, counted
 * all the same) joins the node's; the last local task's post_fork sends
 * them all, off the tasks' start (reg). */
static void
reg_task(spank_t sp, const struct spk_opts *o, const char *body, uint32_t gid)
{
	uint32_t want = 0;
	int got;

	if (reg.sent)
		return;		/* (a task past the count: not ours to add) */
	if (!reg.on && !reg.broken &&
	    (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &want) != ESPANK_SUCCESS || want == 0 ||
	     spk_reg_init(&reg.g, want) < 0))
		reg.broken = true;
	else if (!reg.broken)
		reg.on = true;
	if (reg.broken) {
		if (body)
			tell_layoutd(o, "/v1/watch/tasks", body, gid);	/* alone, as before */
		return;
	}
	got = spk_reg_add(&reg.g, body);
	if (got < 0) {
		reg_flush_alone(o);
		if (body)
			tell_layoutd(o, "/v1/watch/tasks", body, gid);
		return;
	}
	if (got == 0)
		return;
	reg.sent = true;
	if (!spk_reg_body(&reg.g)) {
		spk_reg_free(&reg.g);	/* none registered */
		reg.on = false;
		return;
	}
	if (!sender_on(o)) {
		reg_flush_alone(o);
		return;
	}
	spk_send_reg(&reg.snd, &reg.g);	/* (taken, or sent here) */
	reg.on = false;
}

int
spk_remote_task_post_fork(spank_t sp, const struct spk_opts *o)
{
	struct spk_watch_task w;
	const struct proto_task *t;
	uint32_t gid = 0;
	pid_t pid = 0;
	char *body;
	int a, local = -1;

	if (!watched(sp, o))
		return 0;
	/* every local task is counted, registered or not (reg_task) */
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &gid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_TASK_PID, &pid) != ESPANK_SUCCESS || pid <= 0 ||
	    !(t = task_of(gid))) {
		reg_task(sp, o, NULL, gid);
		return 0;
	}
	memset(&w, 0, sizeof(w));
	w.job = ctx.job_id;
	w.step = ctx.step_id;
	w.task = (long)gid;
	/* The hook names its record by RANK, else SLURM_PROCID. */
	w.rank = o->conf.export_mask & (EXPORT_FRAMEWORK | EXPORT_SLURM) ? t->rank : (long)gid;
	w.pid = (long)pid;
	w.uid = ctx.uid;
	w.node = ctx.node;
	for (a = 0; a < PL_NAXES; a++)
		w.co[a] = t->co[a];
	w.dir = ctx.watch_path;
	/* The GPU of the node it is placed on, whatever CUDA_VISIBLE_DEVICES
	 * makes of it for the task (LOCAL_RANK). */
	w.gpu = t->local_rank >= 0 ? t->local_rank : -1;
	w.nic = t->nic;
	/* The step once per node, from its first task: who leads (the node
	 * of rank 0) and in which order the others take over. */
	if (spank_get_item(sp, S_TASK_ID, &local) == ESPANK_SUCCESS && local == 0) {
		w.place = &ctx.place;
		w.watch = &o->watch;
	}
	body = spk_watch_task_json(&w);
	reg_task(sp, o, body, gid);
	free(body);
	return 0;
}

int
spk_remote_task_exit(spank_t sp, const struct spk_opts *o)
{
	uint32_t gid = 0;
	int status = 0;
	char *body;

	if (!watched(sp, o) || spank_get_item(sp, S_TASK_GLOBAL_ID, &gid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS || !task_of(gid) ||
	    (reg.snd_on && spk_send_down(&reg.snd)))
		return 0;
	body = spk_watch_exit_json(ctx.job_id, ctx.step_id, (long)gid, status);
	if (body && sender_on(o))
		spk_send_post(&reg.snd, "/v1/watch/exit", body);	/* after the registrations */
	else if (body)
		tell_layoutd(o, "/v1/watch/exit", body, gid);
	free(body);
	return 0;
}
