/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The watch registration: what the SPANK plugin tells the node's layoutd
 * about a task it watches (POST /v1/watch/tasks) and about its end (POST
 * /v1/watch/exit), and where the tasks' records live.  This is the
 * format's one home: the plugin encodes with it, layoutd decodes with it,
 * and every refusal of a field is written here.
 *
 * A task: {"job_id", "step_id", "task", "rank", "pid", "uid", "node",
 * "coords": {"tp", "cp", "ep", "dp", "pp"}, "record"} and optionally
 * "gpu" (-1 unknown), "nic" ("" none) and, from the node's first task,
 * "step": {"world", "layout": {"tp", "cp", "ep", "dp", "pp"}, "nodes":
 * [NAME, ...]} (the nodes in the order of their lowest rank, nodes[0] the
 * leader).  An exit: {"job_id", "step_id", "task", "status"} (a wait
 * status).  No other key is taken.
 *
 * Version: REG_VERSION.  The version-1 body carries no "version" key, so
 * that a plugin and a layoutd of different releases keep talking during a
 * rolling upgrade; a decoder takes "version": 1 as well and refuses any
 * other number, naming it.  A later version writes its number.
 */
#ifndef PL_WATCH_REGISTER_H
#define PL_WATCH_REGISTER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "pl_err.h"
#include "watchopt.h"

/* The default watch directory (plugstack watch_dir=, layoutd.conf
 * watch_dir): one step directory JOB.STEP per watched step under it, and
 * PARALLEL_LAYOUT_WATCH_DIR in the tasks' environment names the step's. */
#define REG_WATCH_DIR	"/dev/shm/parallel-layout"

#define REG_VERSION	1
#define REG_NAXES	5		/* coords and layout: tp, cp, ep, dp, pp */
#define REG_NODE_LEN	64		/* a node name and its NUL */
#define REG_PATH_LEN	1024		/* a record's path and its NUL */
#define REG_MAX_NODES	65536		/* nodes in a step's "step" */

/* The names of the axes, in the order of coords[] and size[]. */
extern const char *const reg_axes[REG_NAXES];

/* A step as its first task describes it. */
struct reg_step {
	uint32_t world;
	uint32_t size[REG_NAXES];
	struct watchopt watch;		/* the user's own settings (watchopt.h);
					 * on the wire as "watch": {"hang_s",
					 * "busy_s", "slow"} when any is given */
	size_t nnodes;
	char *pool;			/* the names, each NUL-terminated */
	uint32_t *off;			/* node k's name at pool + off[k] */
};

/* A task's registration.  After reg_task_decode, node, record and nic
 * point into the decoded body, which reg_task_clear frees with step. */
struct reg_task {
	json_int_t job, step_id, task, rank, pid, uid;
	json_int_t coords[REG_NAXES];
	json_int_t gpu;			/* -1 unknown */
	const char *node, *record, *nic;
	struct reg_step *step;		/* NULL: not sent */
	json_t *body_;			/* private */
};

/* A task's end. */
struct reg_exit {
	json_int_t job, step_id, task;
	int status;			/* wait status, 0 to 65535 */
};

/* A step of world ranks laid out as size[] on the nnodes names (copied).
 * NULL when out of memory. */
struct reg_step *reg_step_new(uint32_t world, const uint32_t size[REG_NAXES],
			      const char *const *names, size_t nnodes);
const char *reg_step_node(const struct reg_step *s, size_t k);
void reg_step_free(struct reg_step *s);

/* The registration's JSON text (caller frees); NULL when out of memory or
 * a text field is not UTF-8. */
char *reg_task_encode(const struct reg_task *t);
char *reg_exit_encode(const struct reg_exit *e);

/*
 * body read and checked into *t: every field's type and range, the task
 * below max_tasks, the "step" whole (world = tp * cp * dp * pp, 1 to
 * REG_MAX_NODES distinct node names).  0, or the HTTP status (400 not the
 * shape, 422 a value out of range, 500 out of memory) with err naming the
 * field and what is accepted; *t is then clear.
 */
int reg_task_decode(const char *body, long max_tasks, struct reg_task *t, pl_err_t *err);
void reg_task_clear(struct reg_task *t);

/* The same for an exit. */
int reg_exit_decode(const char *body, struct reg_exit *e, pl_err_t *err);

#endif
