/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd watches its node's ranks: slurmstepd (root) registers each task
 * of a watched step with its record path (POST /v1/watch/tasks) and says
 * when it ended (POST /v1/watch/exit); a timer on the event loop reads
 * every record (lib/watch/reader.h) each watch_interval_ms, runs detection
 * (lib/watch/detect.h) with hang_threshold_s, logs a verdict when it first
 * appears and when it clears, and GET /v1/watch shows the state.  A sweep
 * removes the step directories of watch_dir left behind.
 */
#ifndef PL_LAYOUTD_WATCH_H
#define PL_LAYOUTD_WATCH_H

#include "watchopt.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "pl_err.h"

struct ld;
struct ld_watch;
struct detect_rank;
struct sum_rank_info;

/* The watch of d (its timer on d->base, its settings from d->cur->conf).
 * NULL when out of memory.  Free with ld_watch_free() before the base. */
struct ld_watch *ld_watch_new(struct ld *d);
void ld_watch_free(struct ld_watch *w);

/* Apply the current load's watch_interval_ms and watch_dir (after a
 * reload too), and sweep watch_dir once now (ld_watch_sweep). */
void ld_watch_apply(struct ld_watch *w);

/*
 * A registration or an exit (the request body, JSON).  Returns the HTTP
 * status (200, 400, 404, 409, 422, 507) and fills err on failure.
 *
 * A registration may carry "gpu" (the task's GPU index on the node, -1
 * unknown), "nic" (its NIC, "" none) and, from the node's first task,
 * "step": {"world", "layout": {"tp", "cp", "ep", "dp", "pp"}, "nodes":
 * [names ordered by the lowest rank each hosts]}: what the node's summary
 * for the step's leader (nodes[0]) needs.  A "step" that disagrees with
 * the one registered is refused (409), and so is a rank a second task
 * claims once the step is known; a task outside the step (rank, coordinates,
 * node) is refused (422).
 */
int ld_watch_register(struct ld_watch *w, const char *body, pl_err_t *err);

/* One task as ld_watch_register, or {"tasks": [TASK, ...]} (1 to
 * watch_max_tasks), each registered on its own: the first refusal's status
 * and err (naming the task by its place, and how many were taken), else
 * 200. */
int ld_watch_register_many(struct ld_watch *w, const char *body, pl_err_t *err);
int ld_watch_exit(struct ld_watch *w, const char *body, pl_err_t *err);

/* One sample now (what the timer does). */
void ld_watch_sample(struct ld_watch *w);

/* What runs after each sample (the peers send and judge then); NULL
 * none.  arg is the caller's and must outlive the registration. */
typedef void (*ld_watch_sampled_cb)(void *arg);
void ld_watch_on_sample(struct ld_watch *w, ld_watch_sampled_cb cb, void *arg);

/*
 * One pass of the sweep now (at start, at each reload, and every 60 s):
 * removes from watch_dir each step directory JOB.STEP that is not a
 * running step registered here, none of whose records (plw-J.S.R.PID)
 * names a pid that runs, and that has been idle for watch_leftover_s (an
 * unregistered one unchanged that long, a registered one ended that long
 * ago).  A link or file at a step's name is removed itself.  Other names
 * are left alone and logged once.  A pass is bounded; the next one goes
 * on where it stopped.
 */
void ld_watch_sweep(struct ld_watch *w);

/* What the peers take of the watch: the steps, by index (valid until the
 * next registration or sample). */
struct ld_watch_step {
	uint64_t job_id;
	uint64_t step_id;
	uint32_t uid;
	const char *node;	/* this node, as its tasks name it */
	bool ended;		/* every task has exited */
	size_t ntasks;
	size_t nknown;		/* tasks whose exit status is known */
	bool known;		/* a task brought the step's layout and node order */
	uint32_t world;		/* the rest only when known */
	uint32_t size[5];	/* tp, cp, ep, dp, pp */
	size_t nnodes;
	struct watchopt watch;	/* the user's settings (watchopt.h) */
};

size_t ld_watch_nsteps(const struct ld_watch *w);
void ld_watch_step_at(const struct ld_watch *w, size_t i, struct ld_watch_step *out);

/* Node k of step i's order (nodes[0] the leader), NULL past the end or
 * when the order is not known. */
const char *ld_watch_step_node(const struct ld_watch *w, size_t i, size_t k);

/* The index of job.step, or -1. */
long ld_watch_step_find(const struct ld_watch *w, uint64_t job, uint64_t step);

/*
 * Step i's ranks as of the last sample (each rank once, at most max),
 * with their exits, into ranks[] and their GPU, NIC and coordinates into
 * info[]: the node summary's input.  Returns how many.
 */
size_t ld_watch_step_ranks(const struct ld_watch *w, size_t i, struct detect_rank *ranks,
			   struct sum_rank_info *info, size_t max);

/* ---- the watch's numbers, for GET /metrics ---- */

/* Records by the state of their last read, in this order. */
enum ld_watch_rec { LD_WREC_OK, LD_WREC_BUSY, LD_WREC_REFUSED, LD_WREC_UNREAD, LD_WREC_N };

/* The node's own verdicts by kind, in this order. */
enum ld_watch_verd { LD_WVERD_EXITED, LD_WVERD_NOT_ENTERED, LD_WVERD_GPU_STUCK, LD_WVERD_BUSY,
		     LD_WVERD_N };

struct ld_watch_stats {
	unsigned long samples;		/* of the records, every watch_interval_ms */
	unsigned long records_shrunk;	/* reads cut short by SIGBUS */
	unsigned long pids_reused;	/* registered pids held by a later process */
	unsigned long sweeps;		/* passes of the sweep of watch_dir */
	unsigned long leftovers_removed;	/* step directories it removed */
	size_t steps_running, steps_ended;
	size_t records[LD_WREC_N];
	size_t verdicts[LD_WVERD_N];
};

void ld_watch_stats(const struct ld_watch *w, struct ld_watch_stats *st);

/* "ok", "busy", "refused", "unread" (as GET /v1/watch's record_state),
 * and "exited", "not-entered", "gpu-stuck" (as its verdicts' kind). */
const char *ld_watch_rec_name(enum ld_watch_rec r);
const char *ld_watch_verd_name(enum ld_watch_verd v);

struct detect_comm;

/* Task k of step i as of the last sample (valid until the next
 * registration or sample). */
struct ld_watch_task {
	int64_t rank;
	long pid;			/* as registered */
	uint64_t start;			/* its /proc/PID/stat start time then; 0 unknown */
	bool exited;
	double lag_s;			/* since it last entered a collective; < 0 never */
	size_t ncomms;			/* 0 unless its record was read (ok or busy) */
	const struct detect_comm *comms;
};

void ld_watch_task_at(const struct ld_watch *w, size_t i, size_t k, struct ld_watch_task *out);

/* One communicator's state as GET /v1/watch shows it (times as ages
 * against now).  NULL when out of memory. */
json_t *ld_watch_comm_json(const struct detect_comm *m, uint64_t now);

/* A rank's process tree as the views show it: null when not sampled,
 * else its state, wchan, processes, threads, cores, I/O rates and the
 * ages of its last progress and of its D state. */
json_t *ld_watch_proc_json(const struct detect_proc *p, uint64_t now);

/* GET /v1/watch without its "peer" part (the route adds ld_peer_json()):
 * every step when all, else those of uid.  NULL when out of memory. */
json_t *ld_watch_json(const struct ld_watch *w, bool all, long uid);

#endif
