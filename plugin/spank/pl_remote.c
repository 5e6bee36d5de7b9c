/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurmstepd: find the step's exact layout, get this node's part of the
 * placement, and give every task its rank and environment.  Failures found
 * before task_init are kept and reported there: only a task_init failure
 * reaches the user (and fails the step with a non-zero exit).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "pl_plugin.h"

static void
keep_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
keep_error(const char *fmt, ...)
{
	va_list ap;

	if (pl.error[0])
		return;
	va_start(ap, fmt);
	vsnprintf(pl.error, sizeof(pl.error), fmt, ap);
	va_end(ap);
}

/* The step's nodes with their task ids, as a placement request. */
static char *
request_from_layout(const slurm_step_layout_t *lay, bool with_tids, const char *view)
{
	struct place_node *nodes = calloc(lay->node_cnt, sizeof(*nodes));
	long *tids = calloc(lay->task_cnt ? lay->task_cnt : 1, sizeof(*tids));
	hostlist_t hl = slurm_hostlist_create(lay->node_list);
	char *names[4096] = { NULL }, *req = NULL, *h;
	uint32_t n, t, off = 0;

	if (!nodes || !tids || !hl || lay->node_cnt > 4096)
		goto out;
	for (n = 0; n < lay->node_cnt; n++) {
		h = slurm_hostlist_shift(hl);
		if (!h)
			goto out;
		names[n] = strdup(h);
		free(h);
		if (!names[n])
			goto out;
		nodes[n].name = names[n];
		nodes[n].ntasks = lay->tasks[n];
		for (t = 0; t < lay->tasks[n]; t++)
			tids[off + t] = lay->tids[n][t];
		nodes[n].tids = with_tids ? &tids[off] : NULL;
		off += lay->tasks[n];
	}
	req = proto_request_json(pl.spec, nodes, lay->node_cnt, pl.job_id, pl.step_id, view);
out:
	for (n = 0; n < lay->node_cnt && n < 4096; n++)
		free(names[n]);
	if (hl)
		slurm_hostlist_destroy(hl);
	free(tids);
	free(nodes);
	return req;
}

/* Are the task ids Slurm put on this node exactly the ranks the placement
 * puts here?  Then Slurm followed our hostfile. */
static bool
matches(const slurm_step_layout_t *lay, uint32_t me, const struct proto_placement *p)
{
	uint32_t t;
	long k;

	if (p->ntasks != lay->tasks[me])
		return false;
	for (t = 0; t < lay->tasks[me]; t++) {
		bool found = false;

		for (k = 0; k < p->ntasks; k++)
			found |= p->tasks[k].rank == (long)lay->tids[me][t];
		if (!found)
			return false;
	}
	return true;
}

static void
master_address(void)
{
	node_info_msg_t *info = NULL;
	const char *name = pl.place.nodes[pl.place.master_node].name;

	if (pl.conf.master_addr[0]) {
		snprintf(pl.master_addr, sizeof(pl.master_addr), "%s", pl.conf.master_addr);
		return;
	}
	/* Node names need not resolve; the address Slurm uses always works. */
	if (slurm_load_node_single(&info, (char *)name, SHOW_ALL) == 0 && info &&
	    info->record_count > 0 && info->node_array[0].node_addr)
		snprintf(pl.master_addr, sizeof(pl.master_addr), "%s", info->node_array[0].node_addr);
	else
		snprintf(pl.master_addr, sizeof(pl.master_addr), "%s", name);
	if (info)
		slurm_free_node_info_msg(info);
}

int
pl_remote_user_init(spank_t sp)
{
	slurm_step_id_t id;
	slurm_step_layout_t *lay = NULL;
	uint32_t job = 0, step = 0, me;
	char *req = NULL, view[PROTO_VIEW_MAX], from[PATH_MAX + 128], msg[1024], env[16];
	const char *node = getenv("SLURMD_NODENAME");
	bool want_steer;
	long k;

	if (!pl.enabled)
		return 0;
	if (!pl.conf_ok) {
		keep_error("plugstack.conf: %s", pl.conf_error);
		return 0;
	}
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS) {
		keep_error("cannot read the job and step ids");
		return 0;
	}
	/* The batch script, the extern and the interactive steps inherit the
	 * option from sbatch/salloc but are not the training step. */
	if (step == SLURM_BATCH_SCRIPT || step == SLURM_EXTERN_CONT ||
	    step == SLURM_INTERACTIVE_STEP) {
		pl.enabled = false;
		return 0;
	}
	pl.job_id = job;
	pl.step_id = step;
	memset(&id, 0, sizeof(id));
	id.job_id = job;
	id.step_id = step;
	id.step_het_comp = NO_VAL;
	lay = slurm_job_step_layout_get(&id);
	if (!lay) {
		keep_error("cannot get the layout of step %u.%u from slurmctld", job, step);
		return 0;
	}
	snprintf(pl.node, sizeof(pl.node), "%s", node ? node : "");
	{
		hostlist_t hl = slurm_hostlist_create(lay->node_list);
		char *h;

		me = UINT32_MAX;
		for (k = 0; hl && (h = slurm_hostlist_shift(hl)); k++) {
			if (strcmp(h, pl.node) == 0)
				me = (uint32_t)k;
			free(h);
		}
		if (hl)
			slurm_hostlist_destroy(hl);
	}
	if (me == UINT32_MAX) {
		keep_error("node '%s' is not in step %u.%u (%s)", pl.node, job, step, lay->node_list);
		goto out;
	}
	snprintf(view, sizeof(view), "node:%s", pl.node);
	want_steer = spank_getenv(sp, "PARALLEL_LAYOUT_STEERED", env, sizeof(env)) ==
		     ESPANK_SUCCESS && strcmp(env, "1") == 0;
	if ((lay->task_dist & SLURM_DIST_STATE_BASE) == SLURM_DIST_ARBITRARY) {
		/* Placed by a hostfile: ours if this node holds exactly the
		 * ranks a block-ordered request puts here. */
		req = request_from_layout(lay, false, view);
		if (req && pl_query(&pl.conf, pl.node, req, &pl.place, from, sizeof(from), msg,
				    sizeof(msg)) == 0) {
			if (matches(lay, me, &pl.place)) {
				pl.steered = true;
				pl.have_place = true;
			} else {
				proto_placement_free(&pl.place);
			}
		}
		free(req);
		req = NULL;
	}
	if (want_steer && !pl.steered) {
		keep_error("Slurm did not place step %u.%u as srun asked (SLURM_HOSTFILE was changed or not honoured): node %s runs other tasks than the placement puts there",
			   job, step, pl.node);
		goto out;
	}
	if (!pl.have_place) {
		req = request_from_layout(lay, true, view);
		if (!req) {
			keep_error("out of memory");
			goto out;
		}
		if (pl_query(&pl.conf, pl.node, req, &pl.place, from, sizeof(from), msg,
			     sizeof(msg)) < 0) {
			keep_error("--parallel-layout=%s: %s", pl.spec, msg);
			goto out;
		}
		pl.have_place = true;
	}
	pl.node_index = me;
	pl.local_world = lay->tasks[me];
	pl.node_rank = 0;
	for (k = 0; k < pl.place.nnodes; k++)
		if (pl.place.nodes[k].min_rank < pl.place.nodes[me].min_rank)
			pl.node_rank++;
	master_address();
	if (pl.verbose)
		slurm_info(PLUGIN_NAME ": step %u.%u on %s: placement %s from %s", job, step,
			   pl.node, pl.steered ? "followed by Slurm" : "applied by RANK", from);
out:
	free(req);
	slurm_job_step_layout_free(lay);
	return 0;
}

/* Set var unless the user set it and the admin did not let us overwrite. */
static void
put(spank_t sp, const char *var, const char *val)
{
	char old[1024], pat[80];
	bool set = spank_getenv(sp, var, old, sizeof(old)) == ESPANK_SUCCESS;
	bool force = false;

	snprintf(pat, sizeof(pat), ",%s,", var);
	if (pl.conf.force[0]) {
		char list[sizeof(pl.conf.force) + 2];

		snprintf(list, sizeof(list), ",%s,", pl.conf.force);
		force = strstr(list, ",all,") || strstr(list, pat);
	}
	if (set && strcmp(old, val) != 0 && !force) {
		if (pl.verbose)
			fprintf(stderr, PLUGIN_NAME ": kept %s=%s set by the user (placement says %s)\n",
				var, old, val);
		return;
	}
	spank_setenv(sp, var, val, 1);
}

static void
putl(spank_t sp, const char *var, long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", v);
	put(sp, var, buf);
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

int
pl_remote_task_init(spank_t sp)
{
	static const char *const axis_env[PL_NAXES] = { "TP", "CP", "EP", "DP", "PP" };
	const struct proto_task *t = NULL;
	uint32_t gid = 0;
	char var[64], val[512], cvd[1024];
	long k, rank;
	int a, local_rank;

	if (!pl.enabled)
		return 0;
	if (pl.error[0] || !pl.have_place) {
		slurm_error(PLUGIN_NAME ": %s", pl.error[0] ? pl.error : "no placement for this step");
		return -1;
	}
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &gid) != ESPANK_SUCCESS) {
		slurm_error(PLUGIN_NAME ": cannot read the task's global id");
		return -1;
	}
	for (k = 0; k < pl.place.ntasks; k++)
		if (pl.steered ? pl.place.tasks[k].rank == (long)gid : pl.place.tasks[k].procid == (long)gid)
			t = &pl.place.tasks[k];
	if (!t) {
		slurm_error(PLUGIN_NAME ": task %u has no place on node %s in the placement", gid,
			    pl.node);
		return -1;
	}
	rank = t->rank;
	local_rank = t->local_rank;
	/* LOCAL_RANK indexes the GPUs the task sees. */
	if (spank_getenv(sp, "CUDA_VISIBLE_DEVICES", cvd, sizeof(cvd)) == ESPANK_SUCCESS) {
		int vi = visible_index(cvd, t->local_rank);

		if (vi >= 0)
			local_rank = vi;
		else if (pl.verbose)
			fprintf(stderr, PLUGIN_NAME ": GPU %d is not in CUDA_VISIBLE_DEVICES=%s; LOCAL_RANK=%d is a node index\n",
				t->local_rank, cvd, t->local_rank);
	}
	if (pl.conf.export_mask & EXPORT_FRAMEWORK) {
		putl(sp, "RANK", rank);
		putl(sp, "LOCAL_RANK", local_rank);
		putl(sp, "WORLD_SIZE", pl.place.world);
		putl(sp, "LOCAL_WORLD_SIZE", pl.local_world);
		putl(sp, "NODE_RANK", pl.node_rank);
		put(sp, "MASTER_ADDR", pl.master_addr);
		putl(sp, "MASTER_PORT", pl.conf.master_port_base +
		     (pl.job_id * 131 + pl.step_id) % pl.conf.master_port_span);
		put(sp, "PARALLEL_LAYOUT", pl.place.spec);
		for (a = 0; a < PL_NAXES; a++) {
			snprintf(var, sizeof(var), "PARALLEL_LAYOUT_%s", axis_env[a]);
			putl(sp, var, pl.place.layout.size[a]);
			snprintf(var, sizeof(var), "PARALLEL_LAYOUT_%s_RANK", axis_env[a]);
			putl(sp, var, t->co[a]);
		}
	}
	if (pl.conf.export_mask & EXPORT_NCCL) {
		if (t->nic[0]) {
			/* '=' asks NCCL for this exact device: mlx5_1 must not
			 * also select mlx5_10. */
			snprintf(val, sizeof(val), "=%s", t->nic);
			put(sp, "NCCL_IB_HCA", val);
		}
		if (pl.conf.socket_ifname[0])
			put(sp, "NCCL_SOCKET_IFNAME", pl.conf.socket_ifname);
		if (pl.place.nodes[pl.node_index].nccl_topo_file[0])
			put(sp, "NCCL_TOPO_FILE", pl.place.nodes[pl.node_index].nccl_topo_file);
		if (pl.conf.ras_port_span > 0) {
			snprintf(val, sizeof(val), "127.0.0.1:%ld",
				 pl.conf.ras_port_base + pl.job_id % pl.conf.ras_port_span);
			put(sp, "NCCL_RAS_ADDR", val);
		}
	}
	if (pl.conf.export_mask & EXPORT_SLURM) {
		/* Opt-in: for tools that read SLURM_PROCID (PyTorch Lightning). */
		spank_setenv(sp, "SLURM_PROCID", (snprintf(val, sizeof(val), "%ld", rank), val), 1);
		spank_setenv(sp, "SLURM_LOCALID", (snprintf(val, sizeof(val), "%d", local_rank), val), 1);
	}
	if (pl.verbose)
		fprintf(stderr, PLUGIN_NAME ": task %u on %s: RANK=%ld LOCAL_RANK=%d (GPU %d) tp%ld cp%ld ep%ld dp%ld pp%ld NIC %s, %s\n",
			gid, pl.node, rank, local_rank, t->local_rank, t->co[PL_TP], t->co[PL_CP],
			t->co[PL_EP], t->co[PL_DP], t->co[PL_PP], t->nic[0] ? t->nic : "-",
			pl.steered ? "placed by Slurm (SLURM_PROCID == RANK)" : "remapped by RANK");
	if (pl.steered && spank_getenv(sp, "SLURM_HOSTFILE", val, sizeof(val)) == ESPANK_SUCCESS &&
	    strncmp(val, "/tmp/parallel-layout-hostfile.", 30) == 0)
		spank_unsetenv(sp, "SLURM_HOSTFILE");	/* srun deleted it; a nested srun must not read it */
	spank_unsetenv(sp, "PARALLEL_LAYOUT_STEERED");
	return 0;
}
