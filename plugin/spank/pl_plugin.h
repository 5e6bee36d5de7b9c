/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SPANK plugin's shared state.  plugin.c owns SPANK_PLUGIN and only
 * dispatches on spank_context(); pl_local.c serves srun, sbatch and salloc;
 * pl_remote.c serves slurmstepd.  Nothing here may exit, abort or block
 * longer than the configured timeout.
 */
#ifndef PL_PLUGIN_H
#define PL_PLUGIN_H

#include <limits.h>
#include <stdbool.h>

#include <slurm/spank.h>

#include "proto.h"

#define PLUGIN_NAME "parallel-layout"

/* Environment families the plugin may export (plugstack export=). */
enum {
	EXPORT_FRAMEWORK = 1 << 0,	/* RANK, LOCAL_RANK, WORLD_SIZE, MASTER_*, PARALLEL_LAYOUT_* */
	EXPORT_NCCL = 1 << 1,		/* NCCL_IB_HCA, NCCL_TOPO_FILE, NCCL_SOCKET_IFNAME, NCCL_RAS_ADDR */
	EXPORT_SLURM = 1 << 2,		/* rewrite SLURM_PROCID/SLURM_LOCALID (opt-in) */
};

enum pl_fallback {
	FALLBACK_LOCAL = 0,	/* compute the placement in-process from the map file */
	FALLBACK_FAIL,		/* refuse the step */
};

/* plugstack.conf arguments (pl_args.c). */
struct pl_conf {
	char map[PATH_MAX];		/* cluster map file */
	char socket[PATH_MAX];		/* layoutd socket pattern, %n = node name */
	enum pl_fallback fallback;
	long timeout_ms;		/* each daemon call */
	unsigned export_mask;
	bool reorder;			/* steer Slurm's own placement inside allocations */
	char master_addr[256];		/* "" = the address Slurm knows for rank 0's node */
	long master_port_base, master_port_span;
	char socket_ifname[256];	/* NCCL_SOCKET_IFNAME when set */
	long ras_port_base, ras_port_span;	/* NCCL_RAS_ADDR ports; span 0 = off */
	char force[512];		/* variables we may overwrite although set ("all") */
};

struct pl_state {
	bool enabled;			/* --parallel-layout was given */
	char spec[PROTO_SPEC_MAX];
	bool verbose;			/* --parallel-layout-verbose */
	bool conf_ok;
	struct pl_conf conf;
	char conf_error[512];
	/* local */
	char hostfile[PATH_MAX];	/* ours to delete at exit */
	/* remote */
	char error[1024];		/* found before task_init; reported there */
	bool have_place;
	struct proto_placement place;	/* this node's view */
	bool steered;			/* procid == rank (Slurm placed by our hostfile) */
	long node_index;		/* this node in place.nodes */
	char node[TOPO_NAME];
	char master_addr[256];
	long job_id, step_id;
	long node_rank;			/* order of this node by its lowest rank */
	long local_world;
};

extern struct pl_state pl;

/* Parse plugstack arguments strictly.  -1 with msg on an unknown key or a
 * bad value. */
int pl_args_parse(int ac, char **av, struct pl_conf *c, char *msg, size_t len);

/*
 * Get a placement for request_json: from layoutd at the socket for `node`,
 * or (when it cannot be reached and fallback=local) computed in-process from
 * the map file.  Returns 0, or -1 with msg.  *from says which ("layoutd at
 * PATH" or "in-process from MAP").
 */
int pl_query(const struct pl_conf *c, const char *node, const char *request_json,
	     struct proto_placement *out, char *from, size_t fromlen, char *msg, size_t len);

/* Local context (srun, sbatch, salloc). */
int pl_local_option(void);
void pl_local_exit(void);

/* Remote context (slurmstepd). */
int pl_remote_user_init(spank_t sp);
int pl_remote_task_init(spank_t sp);

#endif
