/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The node's watched ranks (watch/view.h).  The records are the users'
 * files: reader_read() checks each one, and a SIGBUS raised by a record
 * shrunk under its mapping is caught around that one call.
 *
 * Why a SIGBUS guard and not pread() into a private buffer: reader_read()
 * does the path checks (no symbolic link anywhere, owners, modes) on the
 * descriptors it opens and reads through its own mapping; reading with
 * pread here would mean doing those checks a second time outside lib/.
 * The handler is installed only for the call and jumps back out of it;
 * what the interrupted call held (its mapping and its two descriptors) is
 * found again through /proc/self and released, so a hostile user can
 * neither kill the daemon nor make it leak.
 *
 * A registered pid is told from a later process that got the same pid by
 * its start time (lib/watch/procstat.h), read at registration and compared
 * at each sample.
 *
 * The sweep of the step directories left behind in watch_dir is
 * watch/sweep.c; it asks this file what a JOB.STEP is (sweep_step).
 */
#define _XOPEN_SOURCE 700	/* S_ISVTX */
#define _GNU_SOURCE		/* syscall(): pidfd_open, pidfd_send_signal */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "buf.h"
#include "clock.h"
#include "detect.h"
#include "layoutd.h"
#include "sweep.h"
#include "view.h"
#include "procstat.h"
#include "proctree.h"
#include "reader.h"
#include "register.h"
#include "summary.h"

#define NAXES 5
#define LD_NODE_LEN REG_NODE_LEN
#define LD_MAX_VERDICTS 1024

#define SWEEP_PERIOD_S 60		/* the sweep of watch_dir runs this often */


enum rec_state { REC_UNREAD, REC_OK, REC_BUSY, REC_REFUSED };

struct wtask {
	long task, rank, pid;
	char node[LD_NODE_LEN];
	long coords[NAXES];
	char *record;
	bool exited, status_known;
	int status;			/* wait status when status_known */
	uint64_t exit_ns;		/* when it was first seen exited (mono_ns) */
	bool start_known;		/* the start time could be read at registration */
	uint64_t start;			/* /proc/PID/stat field 22 then */
	int pidfd;			/* the process itself (pidfd_open), -1 none */
	enum rec_state rs;
	bool refusal_logged;
	char refusal[PL_ERR_TEXT];
	int gpu;			/* the node's GPU index, -1 unknown */
	char nic[SUM_NIC_LEN];		/* "" none */
	struct detect_rank sum;		/* the last accepted summary */
	struct proctree_sample tree;	/* its process tree, last sampled */
	uint64_t tree_ns;		/* then (mono_ns), 0 never */
	struct detect_proc proc;	/* what the samples say */
};

struct wstep {
	long job, step, uid;
	long ntasks, cap;
	struct wtask **tasks;		/* cap of them (watch_max_tasks then), ntasks used */
	unsigned long seq;		/* registration order, for eviction */
	char node[LD_NODE_LEN];		/* this node, as its tasks name it */
	struct reg_step *decl;		/* NULL until a task brings one */
};

struct ld_watch {
	struct ld *d;
	struct event *timer;
	ld_watch_sampled_cb sampled;	/* after each sample, or NULL */
	void *sampled_arg;
	long nsteps;
	struct wstep **steps;		/* allocated per step, nsteps used */
	long cap_steps;
	unsigned long regs;		/* registrations ever */
	unsigned long samples;
	unsigned long sigbus;		/* reads cut short by SIGBUS */
	struct detect_rank *ranks;	/* detect_run's input, per sample */
	size_t cap_ranks;
	struct detect_verdict verd[LD_MAX_VERDICTS];
	size_t nverd, verd_total;
	struct detect_verdict prev[LD_MAX_VERDICTS];
	size_t nprev;
	uint64_t now_ns;		/* of the last sample */
	struct event *sweeper;
	struct ld_sweep *sweep;		/* watch/sweep.c */
	unsigned long reused;		/* registered pids found held by another process */
};

/* A pidfd for pid (Linux 5.3 and later), or -1. */
static int
pidfd_of(long pid)
{
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, (pid_t)pid, 0);

	if (fd >= 0) {
		(void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
		return (int)fd;
	}
#else
	(void)pid;
#endif
	return -1;
}

/* Whether the process of pidfd still runs (or has not been reaped yet, as
 * kill(pid, 0) says of a zombie). */
static bool
pidfd_alive(int pidfd)
{
#ifdef SYS_pidfd_send_signal
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 || errno != ESRCH;
#else
	(void)pidfd;
	return false;
#endif
}

static double
age_s(uint64_t now, uint64_t t)
{
	return t && now > t ? (double)(now - t) / 1e9 : 0.0;
}

/* ---- the SIGBUS guard ---------------------------------------------------- */

static sigjmp_buf bus_jmp;
static volatile sig_atomic_t bus_armed;
static void *volatile bus_addr;

static void
on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (bus_armed) {
		bus_armed = 0;
		bus_addr = si->si_addr;
		siglongjmp(bus_jmp, 1);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* After a SIGBUS in the read: unmap the mapping that holds addr, and close
 * the descriptors of its file and of the record's directory (dir). */
static void
bus_release(const void *addr, const struct stat *dir)
{
	uintptr_t a = (uintptr_t)addr;
	unsigned long long lo, hi, ino = 0;
	unsigned maj = 0, mi = 0;
	dev_t fdev = 0;
	char line[512];
	struct dirent *e;
	FILE *f;
	DIR *dd;

	f = fopen("/proc/self/maps", "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %*s %*s %x:%x %llu", &lo, &hi, &maj, &mi, &ino) == 5 &&
		    a >= lo && a < hi) {
			munmap((void *)(uintptr_t)lo, (size_t)(hi - lo));
			fdev = makedev(maj, mi);
			break;
		}
	if (f)
		fclose(f);
	dd = opendir("/proc/self/fd");
	while (dd && (e = readdir(dd))) {
		struct stat st;
		int fd = atoi(e->d_name);

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dirfd(dd) || fd <= 2 ||
		    fstat(fd, &st) < 0)
			continue;
		if ((S_ISREG(st.st_mode) && ino && st.st_ino == ino && st.st_dev == fdev) ||
		    (S_ISDIR(st.st_mode) && st.st_ino == dir->st_ino && st.st_dev == dir->st_dev))
			close(fd);
	}
	if (dd)
		closedir(dd);
}

/* reader_read() with a SIGBUS handler for the call only. */
static int
guarded_read(struct ld_watch *w, const char *path, const struct reader_expect *x, struct reader_snap *snap,
	     pl_err_t *err)
{
	struct sigaction sa, old;
	struct stat dir;
	char dpath[LD_PATH], c[PL_CLIP_BUF];
	char *slash;
	int rv;

	snprintf(dpath, sizeof(dpath), "%s", path);
	slash = strrchr(dpath, '/');
	if (slash)
		*(slash == dpath ? slash + 1 : slash) = '\0';
	if (!slash || stat(dpath, &dir) < 0)
		memset(&dir, 0, sizeof(dir));
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(bus_jmp, 1) == 0) {
		bus_armed = 1;
		rv = reader_read(path, x, snap, err);
		bus_armed = 0;
	} else {
		bus_release(bus_addr, &dir);
		w->sigbus++;
		memset(snap, 0, sizeof(*snap));
		pl_err_clear(err);
		pl_err_set(err, "watch record %s: shrunk while it was read (SIGBUS), want %zu bytes",
			   pl_clip_path(path, c, sizeof(c)), sizeof(struct plw_record));
		rv = -1;
	}
	sigaction(SIGBUS, &old, NULL);
	return rv;
}

/* ---- the table ------------------------------------------------------------ */

static void
task_free(struct wtask *t)
{
	if (t) {
		if (t->pidfd >= 0)
			close(t->pidfd);
		free(t->record);
		free(t);
	}
}

static void
step_free(struct wstep *s)
{
	long i;

	if (!s)
		return;
	for (i = 0; i < s->ntasks; i++)
		task_free(s->tasks[i]);
	free(s->tasks);
	reg_step_free(s->decl);
	free(s);
}

static struct wstep *
step_find(const struct ld_watch *w, long job, long step)
{
	long i;

	for (i = 0; i < w->nsteps; i++)
		if (w->steps[i]->job == job && w->steps[i]->step == step)
			return w->steps[i];
	return NULL;
}

static bool
step_ended(const struct wstep *s)
{
	long i;

	for (i = 0; i < s->ntasks; i++)
		if (!s->tasks[i]->exited)
			return false;
	return s->ntasks > 0;
}

static void
step_remove(struct ld_watch *w, long i)
{
	step_free(w->steps[i]);
	memmove(&w->steps[i], &w->steps[i + 1], (size_t)(w->nsteps - i - 1) * sizeof(w->steps[0]));
	w->nsteps--;
}

/* A new step; when the table is full the oldest ended step makes room.
 * NULL with err when none has ended or out of memory. */
static struct wstep *
step_add(struct ld_watch *w, long job, long stepid, long uid, pl_err_t *err, int *status)
{
	const struct ld_conf *c = &w->d->cur->conf;
	struct wstep *s;
	long i, old = -1;

	if (w->nsteps >= c->watch_max_steps) {
		for (i = 0; i < w->nsteps; i++)
			if (step_ended(w->steps[i]) && (old < 0 || w->steps[i]->seq < w->steps[old]->seq))
				old = i;
		if (old < 0) {
			*status = 507;
			pl_err_set(err, "job %ld.%ld: %ld steps are watched and running, watch_max_steps = %ld",
				   job, stepid, w->nsteps, c->watch_max_steps);
			return NULL;
		}
		step_remove(w, old);
	}
	if (w->nsteps >= w->cap_steps) {
		long n = c->watch_max_steps > w->nsteps ? c->watch_max_steps : w->nsteps + 1;
		struct wstep **p = realloc(w->steps, (size_t)n * sizeof(*p));

		if (!p)
			goto oom;
		w->steps = p;
		w->cap_steps = n;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->tasks = calloc((size_t)c->watch_max_tasks, sizeof(*s->tasks)))) {
		free(s);
		goto oom;
	}
	s->cap = c->watch_max_tasks;
	s->job = job;
	s->step = stepid;
	s->uid = uid;
	s->seq = ++w->regs;
	w->steps[w->nsteps++] = s;
	return s;
oom:
	*status = 500;
	pl_err_set(err, "out of memory");
	return NULL;
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ld_watch_sample(arg);
}

static void
on_sweep(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	ld_watch_sweep(arg);
}

static enum ld_sweep_step sweep_step(void *arg, long job, long step, uint64_t now,
				      double *ended);

struct ld_watch *
ld_watch_new(struct ld *d)
{
	struct ld_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->d = d;
	w->timer = event_new(d->base, -1, EV_PERSIST, on_timer, w);
	w->sweeper = event_new(d->base, -1, EV_PERSIST, on_sweep, w);
	w->sweep = ld_sweep_new(d, sweep_step, w);
	if (!w->timer || !w->sweeper || !w->sweep) {
		if (w->timer)
			event_free(w->timer);
		if (w->sweeper)
			event_free(w->sweeper);
		ld_sweep_free(w->sweep);
		free(w);
		return NULL;
	}
	ld_watch_apply(w);
	return w;
}

void
ld_watch_apply(struct ld_watch *w)
{
	long ms = w->d->cur->conf.watch_interval_ms;
	struct timeval tv;

	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	event_add(w->timer, &tv);
	tv.tv_sec = SWEEP_PERIOD_S;
	tv.tv_usec = 0;
	event_add(w->sweeper, &tv);
	ld_watch_sweep(w);
}

void
ld_watch_free(struct ld_watch *w)
{
	if (!w)
		return;
	event_free(w->sweeper);
	event_free(w->timer);
	ld_sweep_free(w->sweep);
	while (w->nsteps > 0)
		step_remove(w, w->nsteps - 1);
	free(w->steps);
	free(w->ranks);
	free(w);
}

/* ---- registration ---------------------------------------------------------- */

/* Fill err and return the HTTP status. */
#define refuse(err, status, ...) pl_err_status(err, status, __VA_ARGS__)

/* Whether two steps agree; else what differs, into why. */
static bool
decl_same(const struct reg_step *a, const struct reg_step *b, char *why, size_t n)
{
	size_t k;
	int i;

	if (a->world != b->world) {
		snprintf(why, n, "world %" PRIu32 ", not %" PRIu32, b->world, a->world);
		return false;
	}
	for (i = 0; i < NAXES; i++)
		if (a->size[i] != b->size[i]) {
			snprintf(why, n, "layout.%s %" PRIu32 ", not %" PRIu32, reg_axes[i], b->size[i],
				 a->size[i]);
			return false;
		}
	if (a->nnodes != b->nnodes) {
		snprintf(why, n, "%zu nodes, not %zu", b->nnodes, a->nnodes);
		return false;
	}
	for (k = 0; k < a->nnodes; k++)
		if (strcmp(reg_step_node(a, k), reg_step_node(b, k)) != 0) {
			snprintf(why, n, "nodes[%zu] %s, not %s", k, reg_step_node(b, k), reg_step_node(a, k));
			return false;
		}
	return true;
}

/* Whether a task (its rank, coordinates and node) fits the step; else why. */
static bool
task_fits(const struct reg_step *dc, long rank, const long *co, const char *node, char *why,
	  size_t n)
{
	size_t k;
	int i;

	if (rank >= (long)dc->world) {
		snprintf(why, n, "rank %ld is not below the step's world %" PRIu32, rank, dc->world);
		return false;
	}
	for (i = 0; i < NAXES; i++)
		if (co[i] >= (long)dc->size[i]) {
			snprintf(why, n, "coords.%s = %ld is not below the step's %s = %" PRIu32,
				 reg_axes[i], co[i], reg_axes[i], dc->size[i]);
			return false;
		}
	for (k = 0; k < dc->nnodes; k++)
		if (strcmp(reg_step_node(dc, k), node) == 0)
			return true;
	snprintf(why, n, "node %s is not among the step's %zu nodes", node, dc->nnodes);
	return false;
}

/*
 * What a registration brings beside the task itself must agree with the
 * step as registered so far: one node per layoutd, one "step" (409 when
 * another comes), every task inside it, each rank once (409).  0, or the
 * HTTP status with err.
 */
static int
step_agrees(const struct wstep *s, const struct reg_step *dc, long task, long rank, const long *co,
	    const char *node, pl_err_t *err)
{
	const struct reg_step *eff = dc ? dc : s ? s->decl : NULL;
	char why[200];
	long k;

	if (s && s->node[0] && strcmp(s->node, node) != 0)
		return refuse(err, 422, "POST /v1/watch/tasks: job %ld.%ld task %ld: node %s, but its "
			      "tasks here are node %s's (one layoutd watches one node)", s->job,
			      s->step, task, node, s->node);
	if (dc && s && s->decl && !decl_same(s->decl, dc, why, sizeof(why)))
		return refuse(err, 409, "POST /v1/watch/tasks: job %ld.%ld task %ld: its step has %s "
			      "as registered before: refused", s->job, s->step, task, why);
	if (!eff)
		return 0;
	if (!task_fits(eff, rank, co, node, why, sizeof(why)))
		return refuse(err, 422, "POST /v1/watch/tasks: task %ld: %s", task, why);
	for (k = 0; s && k < s->ntasks; k++) {
		const struct wtask *t = s->tasks[k];

		if (t->task == task)
			continue;	/* registered again: replaced */
		if (t->rank == rank)
			return refuse(err, 409, "POST /v1/watch/tasks: job %ld.%ld task %ld: rank %ld is "
				      "task %ld's already", s->job, s->step, task, rank, t->task);
		if (dc && !s->decl && !task_fits(dc, t->rank, t->coords, t->node, why, sizeof(why)))
			return refuse(err, 409, "POST /v1/watch/tasks: job %ld.%ld task %ld: its step "
				      "disagrees with task %ld registered before: %s", s->job,
				      s->step, task, t->task, why);
	}
	return 0;
}

int
ld_watch_register(struct ld_watch *w, const char *body, pl_err_t *err)
{
	const struct ld_conf *c = &w->d->cur->conf;
	char cl[PL_CLIP_BUF];
	struct procstat ps;
	struct reg_task r;
	struct wstep *s;
	struct wtask *t = NULL;
	struct reg_step *dc;
	const char *node, *rec;
	long lco[NAXES], k;
	pl_err_t perr;
	int status, i;

	if ((status = reg_task_decode(body, c->watch_max_tasks, &r, err)) != 0)
		return status;
	status = 422;
	dc = r.step;
	r.step = NULL;		/* the step keeps it, or it is freed below */
	node = r.node;
	rec = r.record;
	for (i = 0; i < NAXES; i++)
		lco[i] = (long)r.coords[i];
	s = step_find(w, (long)r.job, (long)r.step_id);
	if (s && s->uid != (long)r.uid) {
		pl_err_set(err, "POST /v1/watch/tasks: job %ld.%ld belongs to uid %ld, not %ld",
			   (long)r.job, (long)r.step_id, s->uid, (long)r.uid);
		goto out;
	}
	if ((status = step_agrees(s, dc, (long)r.task, (long)r.rank, lco, node, err)) != 0)
		goto out;
	status = 422;
	if (!s && !(s = step_add(w, (long)r.job, (long)r.step_id, (long)r.uid, err, &status)))
		goto out;
	t = calloc(1, sizeof(*t));
	if (t)
		t->pidfd = -1;
	if (!t || !(t->record = strdup(rec))) {
		status = 500;
		pl_err_set(err, "out of memory");
		goto out;
	}
	t->task = (long)r.task;
	t->rank = (long)r.rank;
	t->pid = (long)r.pid;
	t->gpu = (int)r.gpu;
	snprintf(t->nic, sizeof(t->nic), "%s", r.nic);
	pl_err_clear(&perr);
	if (procstat_read(t->pid, &ps, &perr) == 0) {
		t->start = ps.start;
		t->start_known = true;
		/* A descriptor of the process itself: asking it costs one
		 * system call per sample instead of reading /proc/PID/stat,
		 * and it never names a later process that took the pid.  It
		 * is kept only when the process is still the one whose start
		 * time we read. */
		t->pidfd = pidfd_of(t->pid);
		if (t->pidfd >= 0 && procstat_same_process(t->pid, t->start, &perr) != PROCSTAT_SAME) {
			close(t->pidfd);
			t->pidfd = -1;
		}
		pl_err_clear(&perr);
	}
	snprintf(t->node, sizeof(t->node), "%s", node);
	for (i = 0; i < NAXES; i++)
		t->coords[i] = lco[i];
	for (k = 0; k < s->ntasks; k++)
		if (s->tasks[k]->task == t->task)
			break;
	if (k == s->ntasks && (s->ntasks >= c->watch_max_tasks || s->ntasks >= s->cap)) {
		status = 507;
		pl_err_set(err, "job %ld.%ld: %ld tasks registered, watch_max_tasks = %ld",
			   s->job, s->step, s->ntasks, c->watch_max_tasks);
		goto out;
	}
	if (k < s->ntasks)
		task_free(s->tasks[k]);	/* registered again: the newer one counts */
	else
		s->ntasks++;
	s->tasks[k] = t;
	snprintf(s->node, sizeof(s->node), "%s", node);
	ld_log(&w->d->log, "watch: job %ld.%ld task %ld rank %ld pid %ld uid %ld registered, record %s",
	       s->job, s->step, t->task, t->rank, t->pid, s->uid, pl_clip_path(rec, cl, sizeof(cl)));
	if (!t->start_known)
		ld_log(&w->d->log, "watch: job %ld.%ld task %ld pid %ld: no start time (%s): its end is "
		       "seen by kill(pid, 0) alone, a reuse of the pid is not noticed", s->job, s->step,
		       t->task, t->pid, perr.text);
	if (dc && !s->decl) {
		ld_log(&w->d->log, "watch: job %ld.%ld: %" PRIu32 " ranks on %zu nodes, leader %s%s",
		       s->job, s->step, dc->world, dc->nnodes, reg_step_node(dc, 0),
		       strcmp(reg_step_node(dc, 0), node) == 0 ? " (this node)" : "");
		s->decl = dc;
		dc = NULL;
	}
	t = NULL;
	status = 200;
out:
	reg_step_free(dc);
	task_free(t);
	reg_task_clear(&r);
	return status;
}

/*
 * POST /v1/watch/tasks: one task, or a node's tasks of one step at once,
 * {"tasks": [TASK, ...]} (at most watch_max_tasks: the SPANK plugin sends
 * them so, once its last local task is forked, off the tasks' start).
 * Every task of a batch is registered on its own: one refused keeps none
 * of the others out; the answer is the first refusal's status, naming the
 * task by its place, and says how many were taken.
 */
int
ld_watch_register_many(struct ld_watch *w, const char *body, pl_err_t *err)
{
	long most = w->d->cur->conf.watch_max_tasks;
	json_t *o = json_loads(body, JSON_REJECT_DUPLICATES, NULL), *a, *t;
	size_t i, taken = 0, first = 0;
	int status = 200, st;
	pl_err_t e;

	a = json_is_object(o) ? json_object_get(o, "tasks") : NULL;
	if (!a || json_object_size(o) != 1) {
		json_decref(o);
		return ld_watch_register(w, body, err);	/* one task */
	}
	if (!json_is_array(a) || json_array_size(a) == 0 ||
	    json_array_size(a) > (size_t)most) {
		pl_err_set(err, "POST /v1/watch/tasks: \"tasks\" must be an array of 1 to %ld task "
			   "objects (watch_max_tasks)", most);
		json_decref(o);
		return 422;
	}
	json_array_foreach(a, i, t) {
		char *text = json_dumps(t, JSON_COMPACT);

		pl_err_clear(&e);
		if (!text)
			pl_err_set(&e, "out of memory");
		st = text ? ld_watch_register(w, text, &e) : 500;
		free(text);
		if (st == 200) {
			taken++;
		} else if (status == 200) {
			status = st;
			first = i;
			pl_err_set(err, "%s", e.text);
		}
	}
	if (status != 200) {
		e = *err;
		pl_err_clear(err);
		pl_err_set(err, "task %zu of %zu: %.400s (%zu of %zu registered)", first + 1,
			   json_array_size(a), e.text, taken, json_array_size(a));
	}
	json_decref(o);
	return status;
}

int
ld_watch_exit(struct ld_watch *w, const char *body, pl_err_t *err)
{
	struct reg_exit e;
	struct wstep *s;
	int status;
	long k;

	if ((status = reg_exit_decode(body, &e, err)) != 0)
		return status;
	status = 422;
	s = e.job >= 0 && e.step_id >= 0 ? step_find(w, (long)e.job, (long)e.step_id) : NULL;
	for (k = 0; s && k < s->ntasks; k++)
		if (s->tasks[k]->task == (long)e.task)
			break;
	if (!s || k == s->ntasks) {
		status = 404;
		pl_err_set(err, "POST /v1/watch/exit: job %" PRId64 ".%" PRId64 " task %" PRId64
			   " is not registered (POST /v1/watch/tasks first)",
			   (int64_t)e.job, (int64_t)e.step_id, (int64_t)e.task);
		goto out;
	}
	if (!s->tasks[k]->exited)
		s->tasks[k]->exit_ns = mono_ns();
	if (s->tasks[k]->pidfd >= 0) {
		close(s->tasks[k]->pidfd);	/* ended: no descriptor held for it */
		s->tasks[k]->pidfd = -1;
	}
	s->tasks[k]->exited = true;
	s->tasks[k]->status_known = true;
	s->tasks[k]->status = e.status;
	ld_log(&w->d->log, "watch: job %ld.%ld task %ld rank %ld exited, wait status %d", s->job,
	       s->step, s->tasks[k]->task, s->tasks[k]->rank, e.status);
	status = 200;
out:
	return status;
}

/* ---- sampling --------------------------------------------------------------- */

/* The process tree of a live task (proctree.h): the rates since the last
 * sample, progress, D state.  A tree that cannot be read is unknown. */
static void
sample_tree(struct wtask *t)
{
	static long ticks;
	struct proctree_sample cur;
	uint64_t now = mono_ns();
	pl_err_t err;

	if (!ticks)
		ticks = sysconf(_SC_CLK_TCK);
	pl_err_clear(&err);
	if (proctree_sample(t->pid, &cur, &err) < 0) {
		memset(&t->proc, 0, sizeof(t->proc));
		t->tree_ns = 0;
		return;
	}
	proctree_update(&t->proc, t->tree_ns ? &t->tree : NULL, &cur,
			t->tree_ns ? now - t->tree_ns : 0, now, ticks);
	t->tree = cur;
	t->tree_ns = now;
}

/*
 * A record that is not there: when the filesystem of its directory has no
 * room for one, that is why (the hook turns itself off when it cannot
 * reserve its record's blocks, and says so only on the rank's stderr), and
 * the refusal says so.
 */
static void
no_room(struct wtask *t)
{
	char dir[sizeof(t->refusal)];
	struct statvfs v;
	unsigned long long room;
	char *slash;
	size_t n;

	if (access(t->record, F_OK) == 0 || errno != ENOENT)
		return;
	snprintf(dir, sizeof(dir), "%s", t->record);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	if (statvfs(dir, &v) != 0)
		return;
	room = (unsigned long long)v.f_bavail * v.f_frsize;
	if (room >= sizeof(struct plw_record))
		return;
	n = strlen(t->refusal);
	snprintf(t->refusal + n, sizeof(t->refusal) - n, "; its filesystem has %llu bytes free, "
		 "less than a record's %zu: full, so the rank's NCCL hook turned itself off "
		 "(unwatched; the job runs)", room, sizeof(struct plw_record));
}

static void
sample_task(struct ld_watch *w, const struct wstep *s, struct wtask *t)
{
	struct reader_snap *snap;
	struct reader_expect x;
	struct buf eb = BUF_INIT;
	pl_err_t err;
	int rv;

	if (!t->exited && t->pidfd >= 0) {
		if (pidfd_alive(t->pidfd))
			goto read;
		close(t->pidfd);
		t->pidfd = -1;
		/* Ended; when the pid answers all the same, a later process
		 * has it (told below by its start time). */
	}
	if (!t->exited && kill((pid_t)t->pid, 0) < 0 && errno == ESRCH) {
		t->exited = true;
		t->exit_ns = mono_ns();
		ld_log(&w->d->log, "watch: job %ld.%ld task %ld rank %ld pid %ld is gone (exit status unknown)",
		       s->job, s->step, t->task, t->rank, t->pid);
	}
	if (!t->exited && t->start_known) {
		enum procstat_same same;

		pl_err_clear(&err);
		same = procstat_same_process(t->pid, t->start, &err);
		if (same != PROCSTAT_SAME) {
			t->exited = true;
			t->exit_ns = mono_ns();
			if (same == PROCSTAT_REUSED)
				w->reused++;
			ld_log(&w->d->log, "watch: job %ld.%ld task %ld rank %ld pid %ld is gone, %s: %s "
			       "(exit status unknown)", s->job, s->step, t->task, t->rank, t->pid,
			       same == PROCSTAT_REUSED ? "the pid was reused" : "no stat line for it",
			       err.text);
		}
	}
	if (t->exited)
		return;
read:
	sample_tree(t);
	snap = malloc(sizeof(*snap));
	if (!snap)
		return;
	reader_expect_uid(&x, (uid_t)s->uid);
	x.job_id = s->job;
	x.step_id = s->step;
	x.rank = t->rank;
	x.pid = t->pid;
	/* Its times against this clock: an age made of the record must not
	 * outlive the process (reader.h). */
	x.now_ns = mono_ns();
	x.born_ns = t->start_known ? start_mono_ns(t->start, sysconf(_SC_CLK_TCK)) : 0;
	pl_err_clear(&err);
	rv = guarded_read(w, t->record, &x, snap, &err);
	if (rv < 0) {
		t->rs = REC_REFUSED;
		snprintf(t->refusal, sizeof(t->refusal), "%s", err.text);
		no_room(t);
		if (!t->refusal_logged)
			ld_log(&w->d->log, "watch: job %ld.%ld task %ld rank %ld: record refused: %s",
			       s->job, s->step, t->task, t->rank,
			       ld_escape(&eb, err.text, PL_ERR_TEXT));
		t->refusal_logged = true;
	} else {
		if (t->rs == REC_REFUSED)
			ld_log(&w->d->log, "watch: job %ld.%ld task %ld rank %ld: record accepted again",
			       s->job, s->step, t->task, t->rank);
		t->rs = rv == 0 ? REC_OK : REC_BUSY;
		t->refusal[0] = '\0';
		t->refusal_logged = false;
		detect_summarize(snap, &t->sum);
	}
	buf_free(&eb);
	free(snap);
}

static bool
same_verdict(const struct detect_verdict *a, const struct detect_verdict *b)
{
	return a->kind == b->kind && a->job_id == b->job_id && a->step_id == b->step_id &&
	       a->rank == b->rank && a->comm_hash == b->comm_hash;
}

static void
log_verdict(struct ld_watch *w, const struct detect_verdict *v, const char *what)
{
	char n[PL_CLIP_BUF];

	if (v->kind == DETECT_EXITED)
		ld_log(&w->d->log, "watch: %s: job %" PRIu64 ".%" PRIu64 " rank %" PRId64
		       " pid %" PRId64 " exited (wait status %d)", what, v->job_id, v->step_id,
		       v->rank, v->pid, v->exit_status);
	else
		ld_log(&w->d->log, "watch: %s: job %" PRIu64 ".%" PRIu64 " rank %" PRId64
		       " pid %" PRId64 " %s (%s) in communicator %s (%016" PRIx64 ") at %s seq %"
		       PRIu64 " for %.1f s", what, v->job_id, v->step_id, v->rank, v->pid,
		       detect_kind_name(v->kind), detect_evidence_name(v->evidence),
		       pl_clip(v->comm_name, n, sizeof(n)), v->comm_hash,
		       pl_clip(v->func, n, sizeof(n)), v->seq, (double)v->for_ns / 1e9);
}

static void
log_changes(struct ld_watch *w)
{
	size_t i, j;

	for (i = 0; i < w->nverd; i++) {
		for (j = 0; j < w->nprev && !same_verdict(&w->verd[i], &w->prev[j]); j++)
			;
		if (j == w->nprev)
			log_verdict(w, &w->verd[i], "verdict");
	}
	for (j = 0; j < w->nprev; j++) {
		for (i = 0; i < w->nverd && !same_verdict(&w->verd[i], &w->prev[j]); i++)
			;
		if (i == w->nverd)
			log_verdict(w, &w->prev[j], "cleared");
	}
	memcpy(w->prev, w->verd, w->nverd * sizeof(w->verd[0]));
	w->nprev = w->nverd;
}

/* What detection and the summary take of task t of step s: its last
 * accepted record summary (nothing while none was) and its exit. */
static void
task_rank(const struct wstep *s, const struct wtask *t, struct detect_rank *r)
{
	if (t->rs == REC_OK || t->rs == REC_BUSY)
		*r = t->sum;
	else
		memset(r, 0, offsetof(struct detect_rank, comm));	/* ncomm 0 */
	r->job_id = (uint64_t)s->job;
	r->step_id = (uint64_t)s->step;
	r->rank = t->rank;
	r->pid = t->pid;
	r->exited = t->exited;
	r->exit_known = t->status_known;
	r->exit_status = t->status_known ? t->status : 0;
	r->exit_ns = t->exit_ns;
	r->proc = t->proc;
	if (t->exited)
		memset(&r->proc, 0, sizeof(r->proc));
}

void
ld_watch_sample(struct ld_watch *w)
{
	const struct ld_conf *c = &w->d->cur->conf;
	size_t n = 0, total = 0;
	uint64_t hang_ns;
	long i, k;

	w->samples++;
	for (i = 0; i < w->nsteps; i++)
		total += (size_t)w->steps[i]->ntasks;
	if (total > w->cap_ranks) {
		struct detect_rank *p = realloc(w->ranks, total * sizeof(*p));

		if (!p) {
			ld_log(&w->d->log, "watch: out of memory: no detection this sample");
			return;
		}
		w->ranks = p;
		w->cap_ranks = total;
	}
	for (i = 0; i < w->nsteps; i++) {
		struct wstep *s = w->steps[i];

		for (k = 0; k < s->ntasks; k++)
			sample_task(w, s, s->tasks[k]);
		if (step_ended(s))
			continue;	/* detection is for steps that run */
		for (k = 0; k < s->ntasks; k++)
			task_rank(s, s->tasks[k], &w->ranks[n++]);
	}
	w->now_ns = mono_ns();
	ld_conf_watch_params(c, NULL, &hang_ns);
	w->verd_total = detect_run_busy(w->ranks, n, w->now_ns, hang_ns,
					(uint64_t)c->busy_threshold_s * NS, w->verd, LD_MAX_VERDICTS);
	w->nverd = w->verd_total < LD_MAX_VERDICTS ? w->verd_total : LD_MAX_VERDICTS;
	log_changes(w);
	if (w->sampled)
		w->sampled(w->sampled_arg);
}

void
ld_watch_on_sample(struct ld_watch *w, ld_watch_sampled_cb cb, void *arg)
{
	w->sampled = cb;
	w->sampled_arg = arg;
}

/* ---- what the peers take of the watch --------------------------------------- */

size_t
ld_watch_nsteps(const struct ld_watch *w)
{
	return (size_t)w->nsteps;
}

void
ld_watch_step_at(const struct ld_watch *w, size_t i, struct ld_watch_step *out)
{
	const struct wstep *s = w->steps[i];
	long k;

	memset(out, 0, sizeof(*out));
	out->job_id = (uint64_t)s->job;
	out->step_id = (uint64_t)s->step;
	out->uid = (uint32_t)s->uid;
	out->node = s->node;
	out->ended = step_ended(s);
	out->ntasks = (size_t)s->ntasks;
	for (k = 0; k < s->ntasks; k++)
		out->nknown += s->tasks[k]->status_known;
	if (s->decl) {
		out->known = true;
		out->world = s->decl->world;
		memcpy(out->size, s->decl->size, sizeof(out->size));
		out->nnodes = s->decl->nnodes;
		out->watch = s->decl->watch;
	} else {
		watchopt_clear(&out->watch);
	}
}

const char *
ld_watch_step_node(const struct ld_watch *w, size_t i, size_t k)
{
	const struct reg_step *dc = w->steps[i]->decl;

	return dc && k < dc->nnodes ? reg_step_node(dc, k) : NULL;
}

long
ld_watch_step_find(const struct ld_watch *w, uint64_t job, uint64_t step)
{
	long i;

	for (i = 0; i < w->nsteps; i++)
		if ((uint64_t)w->steps[i]->job == job && (uint64_t)w->steps[i]->step == step)
			return i;
	return -1;
}

size_t
ld_watch_step_ranks(const struct ld_watch *w, size_t i, struct detect_rank *ranks,
		    struct sum_rank_info *info, size_t max)
{
	const struct wstep *s = w->steps[i];
	size_t n = 0;
	long k, j;
	int a;

	for (k = 0; k < s->ntasks && n < max; k++) {
		const struct wtask *t = s->tasks[k];

		/* A rank registered twice (by two tasks, without a "step"
		 * to refuse it) goes once. */
		for (j = 0; j < k && s->tasks[j]->rank != t->rank; j++)
			;
		if (j < k)
			continue;
		task_rank(s, t, &ranks[n]);
		info[n].gpu = t->gpu;
		snprintf(info[n].nic, sizeof(info[n].nic), "%s", t->nic);
		for (a = 0; a < NAXES; a++)
			info[n].co[a] = (uint32_t)t->coords[a];
		n++;
	}
	return n;
}

/* ---- the sweep of leftover step directories --------------------------------- */

/* Seconds since the last task of s exited. */
static double
ended_s(const struct wstep *s, uint64_t now)
{
	uint64_t last = 0;
	long i;

	for (i = 0; i < s->ntasks; i++)
		if (s->tasks[i]->exit_ns > last)
			last = s->tasks[i]->exit_ns;
	return age_s(now, last);
}

/* What the sweep asks of a step directory's name (watch/sweep.h). */
static enum ld_sweep_step
sweep_step(void *arg, long job, long step, uint64_t now, double *ended)
{
	const struct wstep *s = step_find(arg, job, step);

	if (!s)
		return LD_SWEEP_UNKNOWN;
	if (!step_ended(s))
		return LD_SWEEP_RUNNING;
	*ended = ended_s(s, now);
	return LD_SWEEP_ENDED;
}

void
ld_watch_sweep(struct ld_watch *w)
{
	ld_sweep_run(w->sweep);
}

/* ---- GET /v1/watch ----------------------------------------------------------- */

static const char *
rec_state_name(enum rec_state s)
{
	switch (s) {
	case REC_OK: return "ok";
	case REC_BUSY: return "busy";
	case REC_REFUSED: return "refused";
	default: return "unread";
	}
}

/* ---- the watch's numbers ---------------------------------------------------- */

static const char *const wrec_names[LD_WREC_N] = { "ok", "busy", "refused", "unread" };
static const char *const wverd_names[LD_WVERD_N] = { "exited", "not-entered", "gpu-stuck",
						     "busy" };

const char *
ld_watch_rec_name(enum ld_watch_rec r)
{
	return r < LD_WREC_N ? wrec_names[r] : "?";
}

const char *
ld_watch_verd_name(enum ld_watch_verd v)
{
	return v < LD_WVERD_N ? wverd_names[v] : "?";
}

void
ld_watch_stats(const struct ld_watch *w, struct ld_watch_stats *st)
{
	struct ld_sweep_stats sst;
	size_t j, k;
	long i, t;

	memset(st, 0, sizeof(*st));
	st->samples = w->samples;
	st->records_shrunk = w->sigbus;
	st->pids_reused = w->reused;
	ld_sweep_stats(w->sweep, &sst);
	st->sweeps = sst.sweeps;
	st->leftovers_removed = sst.leftovers;
	for (i = 0; i < w->nsteps; i++) {
		const struct wstep *s = w->steps[i];

		if (step_ended(s))
			st->steps_ended++;
		else
			st->steps_running++;
		for (t = 0; t < s->ntasks; t++) {
			const char *r = rec_state_name(s->tasks[t]->rs);

			for (k = 0; k < LD_WREC_N; k++)
				if (strcmp(r, wrec_names[k]) == 0)
					st->records[k]++;
		}
		for (j = 0; j < w->nverd; j++) {
			const char *kind = detect_kind_name(w->verd[j].kind);

			if (w->verd[j].job_id != (uint64_t)s->job ||
			    w->verd[j].step_id != (uint64_t)s->step)
				continue;
			for (k = 0; k < LD_WVERD_N; k++)
				if (strcmp(kind, wverd_names[k]) == 0)
					st->verdicts[k]++;
		}
	}
}

void
ld_watch_task_at(const struct ld_watch *w, size_t i, size_t k, struct ld_watch_task *out)
{
	const struct wtask *t = w->steps[i]->tasks[k];
	uint32_t c;

	memset(out, 0, sizeof(*out));
	out->rank = t->rank;
	out->pid = t->pid;
	out->start = t->start;
	out->exited = t->exited;
	out->lag_s = -1;
	if (t->rs != REC_OK && t->rs != REC_BUSY)
		return;
	out->ncomms = t->sum.ncomm;
	out->comms = t->sum.comm;
	for (c = 0; c < t->sum.ncomm; c++) {
		const struct detect_comm *m = &t->sum.comm[c];
		double age = age_s(w->now_ns, m->enter_ns);

		if ((int64_t)m->colls > 0 && (out->lag_s < 0 || age < out->lag_s))
			out->lag_s = age;
	}
}

json_t *
ld_watch_comm_json(const struct detect_comm *m, uint64_t now)
{
	char n[PL_CLIP_BUF], f[PL_CLIP_BUF], h[24];
	bool gpu = m->flags & DETECT_GPU;
	bool inflight = gpu ? m->done < m->colls : false;

	snprintf(h, sizeof(h), "%016" PRIx64, m->hash);
	return json_pack("{s:s, s:s, s:i, s:i, s:b, s:b, s:b, s:I, s:{s:s, s:I, s:f}, s:o, s:b, s:o, s:I, "
			 "s:{s:i, s:f, s:f}}",
			 "name", pl_clip(m->name, n, sizeof(n)), "hash", h, "rank", (int)m->rank,
			 "nranks", (int)m->nranks, "gpu_recorded", gpu,
			 "busy", (m->flags & DETECT_BUSY) != 0, "finalized", (m->flags & DETECT_FINAL) != 0,
			 "entered", (json_int_t)m->colls,
			 "last_entered", "func", pl_clip(m->func, f, sizeof(f)), "seq", (json_int_t)m->seq,
			 "age_s", age_s(now, m->enter_ns),
			 "completed", gpu ? json_integer((json_int_t)m->done) : json_null(),
			 "in_flight", inflight,
			 "in_flight_s", inflight ? json_real(age_s(now, m->progress_ns)) : json_null(),
			 "channels_in_flight", (json_int_t)m->ch_inflight,
			 "window", "completions", (int)m->nwait, "wait_s", (double)m->wait_sum_ns / 1e9,
			 "gap_s", (double)m->gap_sum_ns / 1e9);
}

json_t *
ld_watch_proc_json(const struct detect_proc *p, uint64_t now)
{
	char st[2] = { p->state, '\0' }, wc[PL_CLIP_BUF];

	if (!p->known && !p->state)
		return json_null();
	return json_pack("{s:b, s:s, s:s, s:I, s:I, s:f, s:I, s:I, s:o, s:o}",
			 "known", p->known != 0, "state", st,
			 "wchan", pl_clipn(p->wchan, strnlen(p->wchan, sizeof(p->wchan)), wc,
					   sizeof(wc)),
			 "processes", (json_int_t)p->nprocs, "threads", (json_int_t)p->threads,
			 "cores", (double)p->cpu_milli / 1000.0,
			 "read_bps", (json_int_t)p->read_bps, "write_bps", (json_int_t)p->write_bps,
			 "progress_age_s", p->progress_ns ? json_real(age_s(now, p->progress_ns)) :
			 json_null(),
			 "dstate_s", p->dstate_ns ? json_real(age_s(now, p->dstate_ns)) : json_null());
}

static json_t *
task_json(const struct wtask *t, uint64_t now)
{
	char cl[PL_CLIP_BUF], rec[PL_CLIP_BUF];	/* one buffer each: both are in one json_pack */
	json_t *o, *comms = json_array(), *co = json_object();
	uint32_t i;
	int a;

	for (a = 0; co && a < NAXES; a++)
		json_object_set_new(co, reg_axes[a], json_integer(t->coords[a]));
	for (i = 0; comms && (t->rs == REC_OK || t->rs == REC_BUSY) && i < t->sum.ncomm; i++)
		json_array_append_new(comms, ld_watch_comm_json(&t->sum.comm[i], now));
	o = json_pack("{s:I, s:I, s:I, s:s, s:o, s:s, s:b, s:o, s:s, s:o, s:o, s:i, s:s}",
		      "task", (json_int_t)t->task, "rank", (json_int_t)t->rank,
		      "pid", (json_int_t)t->pid, "node", pl_clip(t->node, cl, sizeof(cl)),
		      "coords", co, "record", pl_clip_path(t->record, rec, sizeof(rec)),
		      "exited", t->exited,
		      "exit_status", t->status_known ? json_integer(t->status) : json_null(),
		      "record_state", rec_state_name(t->rs),
		      "refused", t->refusal[0] ? json_string(t->refusal) : json_null(),
		      "comms", comms, "gpu", t->gpu, "nic", t->nic);
	if (o)
		json_object_set_new(o, "proc", ld_watch_proc_json(&t->proc, now));
	return o;
}

static json_t *
verdict_json(const struct detect_verdict *v)
{
	char n[PL_CLIP_BUF], f[PL_CLIP_BUF], h[24];
	json_t *o;

	if (v->kind == DETECT_EXITED)
		return json_pack("{s:s, s:s, s:I, s:I, s:o}", "kind", detect_kind_name(v->kind),
				 "evidence", detect_evidence_name(v->evidence),
				 "rank", (json_int_t)v->rank, "pid", (json_int_t)v->pid,
				 "exit_status", v->exit_status < 0 ? json_null() :
				 json_integer(v->exit_status));
	snprintf(h, sizeof(h), "%016" PRIx64, v->comm_hash);
	o = json_pack("{s:s, s:s, s:I, s:I, s:s, s:s, s:s, s:I, s:I, s:o, s:f}",
		      "kind", detect_kind_name(v->kind),
		      "evidence", detect_evidence_name(v->evidence), "rank", (json_int_t)v->rank,
		      "pid", (json_int_t)v->pid, "comm", pl_clip(v->comm_name, n, sizeof(n)),
		      "comm_hash", h, "func", pl_clip(v->func, f, sizeof(f)),
		      "seq", (json_int_t)v->seq, "colls", (json_int_t)v->colls,
		      "peer_rank", v->peer_rank >= 0 ? json_integer(v->peer_rank) : json_null(),
		      "for_s", (double)v->for_ns / 1e9);
	/* what the rank called, and its peers there (from the records: the
	 * users' texts, clipped) */
	if (o && v->kind == DETECT_MISMATCH) {
		json_object_set_new(o, "count", json_integer((json_int_t)v->sig.count));
		json_object_set_new(o, "datatype", json_string(pl_clip(v->sig.dtype, n, sizeof(n))));
		json_object_set_new(o, "peers_signature",
				    json_pack("{s:s, s:I, s:s}", "func",
					      pl_clip(v->want.func, f, sizeof(f)), "count",
					      (json_int_t)v->want.count, "datatype",
					      pl_clip(v->want.dtype, n, sizeof(n))));
	}
	return o;
}

/* What the node's first task said of the step: layout, node count and
 * leader (null when nothing was said). */
static json_t *
decl_json(const struct reg_step *dc)
{
	json_t *lay;
	int a;

	if (!dc)
		return json_null();
	lay = json_object();
	for (a = 0; lay && a < NAXES; a++)
		json_object_set_new(lay, reg_axes[a], json_integer(dc->size[a]));
	return json_pack("{s:I, s:o, s:I, s:s}", "world", (json_int_t)dc->world, "layout", lay,
			 "nodes", (json_int_t)dc->nnodes, "leader", reg_step_node(dc, 0));
}

json_t *
ld_watch_json(const struct ld_watch *w, bool all, long uid)
{
	struct ld_sweep_stats sst;
	const struct ld_conf *c = &w->d->cur->conf;
	json_t *steps = json_array();
	size_t j;
	long i, k;

	for (i = 0; steps && i < w->nsteps; i++) {
		const struct wstep *s = w->steps[i];
		json_t *tasks = json_array(), *verd = json_array();

		if (!all && s->uid != uid) {
			json_decref(tasks);
			json_decref(verd);
			continue;
		}
		for (k = 0; tasks && k < s->ntasks; k++)
			json_array_append_new(tasks, task_json(s->tasks[k], w->now_ns));
		for (j = 0; verd && j < w->nverd; j++)
			if (w->verd[j].job_id == (uint64_t)s->job &&
			    w->verd[j].step_id == (uint64_t)s->step)
				json_array_append_new(verd, verdict_json(&w->verd[j]));
		json_array_append_new(steps, json_pack("{s:I, s:I, s:I, s:s, s:o, s:o, s:o}",
						       "job_id", (json_int_t)s->job,
						       "step_id", (json_int_t)s->step,
						       "uid", (json_int_t)s->uid,
						       "state", step_ended(s) ? "ended" : "running",
						       "tasks", tasks, "verdicts", verd,
						       "step", decl_json(s->decl)));
	}
	ld_sweep_stats(w->sweep, &sst);
	return steps ? json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:I, s:I, s:I, s:o}",
				 "interval_ms", (json_int_t)c->watch_interval_ms,
				 "hang_threshold_s", (json_int_t)c->hang_threshold_s,
				 "samples", (json_int_t)w->samples,
				 "verdicts_dropped", (json_int_t)(w->verd_total - w->nverd),
				 "records_shrunk", (json_int_t)w->sigbus,
				 "pids_reused", (json_int_t)w->reused,
				 "watch_dir", c->watch_dir,
				 "leftover_s", (json_int_t)c->watch_leftover_s,
				 "sweeps", (json_int_t)sst.sweeps,
				 "leftovers_removed", (json_int_t)sst.leftovers,
				 "steps", steps) : NULL;
}
