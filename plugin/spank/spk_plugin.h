/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the plugin's files share.  plugin.c owns SPANK_PLUGIN, the option
 * values and the plugstack arguments (struct spk_opts) and only dispatches
 * on spank_context(); spk_local.c serves srun, sbatch and salloc and
 * spk_remote.c serves slurmstepd, each with its own static context.  Nothing
 * here may exit, abort or block longer than the configured timeout.
 */
#ifndef SPK_PLUGIN_H
#define SPK_PLUGIN_H

#include <limits.h>
#include <stdbool.h>

#include "pl_err.h"
#include "spk_release.h"
#include "proto.h"
#include "watch/register.h"

#define PLUGIN_NAME "parallel-layout"

/* Environment families the plugin may export (plugstack export=). */
enum {
	EXPORT_FRAMEWORK = 1 << 0,	/* RANK, LOCAL_RANK, WORLD_SIZE, MASTER_*, PARALLEL_LAYOUT_* */
	EXPORT_NCCL = 1 << 1,		/* NCCL_IB_HCA, NCCL_TOPO_FILE, NCCL_SOCKET_IFNAME, NCCL_RAS_ADDR */
	EXPORT_SLURM = 1 << 2,		/* rewrite SLURM_PROCID/SLURM_LOCALID (opt-in) */
};

enum spk_fallback {
	FALLBACK_LOCAL = 0,	/* compute the placement in-process from the map file */
	FALLBACK_FAIL,		/* refuse the step */
};

/* plugstack.conf arguments (spk_args.c). */
struct spk_conf {
	char map[PATH_MAX];		/* cluster map file */
	char socket[PATH_MAX];		/* layoutd socket pattern, %n = node name */
	enum spk_fallback fallback;
	long timeout_ms;		/* each daemon call */
	unsigned export_mask;
	bool reorder;			/* steer Slurm's own placement inside allocations */
	char master_addr[256];		/* "" = the address Slurm knows for rank 0's node */
	long master_port_base, master_port_span;
	char socket_ifname[256];	/* NCCL_SOCKET_IFNAME when set */
	long ras_port_base, ras_port_span;	/* NCCL_RAS_ADDR ports; span 0 = off */
	char force[512];		/* variables we may overwrite although set ("all") */
	bool watch;			/* turn the NCCL watch on for placed steps */
	char hook[PATH_MAX];		/* NCCL_PROFILER_PLUGIN: the hook's absolute path */
	char watch_dir[PATH_MAX];	/* root of the per-step record directories */
};

/* Where the NCCL hook is installed; set by the build (pkglibdir).  The
 * fallback is for builds of spk_args.c that do not pass it (the fuzzers). */
#ifndef PL_NCCL_HOOK
#define PL_NCCL_HOOK "/usr/local/lib/parallel-layout/libparallel-layout-nccl.so"
#endif
#define PL_WATCH_DIR REG_WATCH_DIR

/* The option values and the plugstack arguments of this process. */
struct spk_opts {
	bool enabled;			/* --parallel-layout was given */
	char spec[PROTO_SPEC_MAX];
	bool verbose;			/* --parallel-layout-verbose */
	bool watch_off;			/* --parallel-layout-watch=no */
	struct watchopt watch;		/* --parallel-layout-watch=hang=...,... */
	bool conf_ok;
	struct spk_conf conf;
	pl_err_t conf_err;		/* why conf_ok is false */
	/* The running Slurm (spank_get_item(S_SLURM_VERSION) in init): its
	 * release in the table, or NULL when the table lacks it. */
	char slurm_version[32];		/* "" when Slurm did not say */
	const struct spk_release *release;
	int slurm_major, slurm_minor;	/* what the version string gave; 0 unread */
};

/*
 * Parse plugstack arguments strictly (a key table: unknown keys, repeated
 * keys and bad values are errors).  Fills *c (defaults first) and returns
 * 0, or -1 with err naming the argument and what is accepted.
 */
int spk_args_parse(int ac, char **av, struct spk_conf *c, pl_err_t *err);

/*
 * Get a placement for req: from layoutd at the socket for `node` (JSON on
 * the socket), or, when it cannot be reached and fallback=local, computed
 * in-process from the map file (no JSON).  Returns 0, or -1 with err.
 * *from says which ("layoutd at PATH" or "in-process from MAP").  Caller
 * frees *out with proto_placement_free(), also after a failure.
 */
int spk_query(const struct spk_conf *c, const char *node, const struct proto_request *req,
	     struct proto_placement *out, char *from, size_t fromlen, pl_err_t *err);

/*
 * The step's record directory for the NCCL watch: PARENT/JOB.STEP, made
 * (or, when another slurmstepd of the same machine made it, reused) as a
 * real directory owned by uid:gid, mode 0700.  PARENT is made 0755 when
 * absent and must be a real directory owned by this process's euid that
 * nobody else can write (or sticky).  No symlink is followed.  Writes the
 * directory's path to out and returns 0, or -1 with err (then nothing is
 * left half made).
 */
int spk_watch_dir_make(const char *parent, unsigned long job, unsigned long step, long uid,
		      long gid, char *out, size_t outlen, pl_err_t *err);

/*
 * Remove PARENT/JOB.STEP and the entries in it, following no symlink (a
 * symlink in it is removed itself).  Returns 0, or -1 with err; a missing
 * directory is not an error.
 */
int spk_watch_dir_remove(const char *parent, unsigned long job, unsigned long step,
			pl_err_t *err);

/* One task of a watched step, as slurmstepd tells layoutd about it. */
struct spk_watch_task {
	unsigned long job, step;
	long task;			/* the task's global id */
	long rank, pid, uid;
	const char *node;
	long co[PL_NAXES];
	const char *dir;		/* the step's record directory */
	int gpu;			/* the node's GPU index it is placed on; -1 unknown */
	const char *nic;		/* the NIC it was given; NULL or "" none */
	/* The node's first task only (lowest local task id), else NULL: the
	 * step as the placement gives it, so the node's layoutd learns the
	 * world, the layout and which node leads (the one of rank 0). */
	const struct proto_placement *place;
	const struct watchopt *watch;	/* with place: the user's settings */
};

/*
 * The record the NCCL hook of task t creates: DIR/plw-JOB.STEP.RANK.PID.
 * Returns 0, or -1 when it does not fit in outlen.
 */
int spk_watch_record_path(const struct spk_watch_task *t, char *out, size_t outlen);

/*
 * The bodies of POST /v1/watch/tasks and POST /v1/watch/exit (status: the
 * wait status).  A task's body: job_id, step_id, task, rank, pid, uid,
 * node, coords {tp, cp, ep, dp, pp}, record, gpu (-1 unknown, or past
 * what a node summary carries), nic ("" none, or longer than a summary
 * carries) and, when t->place is set, step {world, layout {tp, cp, ep, dp,
 * pp}, nodes: the names of the nodes that host ranks, ordered by the
 * lowest rank each hosts (nodes[0] hosts rank 0)}.  Strings are escaped as
 * JSON wants; NULL when out of memory, when a name is not UTF-8 or the
 * record path does not fit.  Caller frees.
 */
char *spk_watch_task_json(const struct spk_watch_task *t);
char *spk_watch_exit_json(unsigned long job, unsigned long step, long task, int status);

#endif
