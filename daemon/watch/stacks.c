/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The culprit's stacks (watch/stacks.h).  A capture runs its tools one
 * after the other (the native stacks, then a Python rank's py-bt), each a
 * child (watch/child.h) whose output goes into the capture's capped
 * buffer; the file is written once, when the last tool ended or was
 * killed, so a reader never sees half of one.
 */
#define _GNU_SOURCE		/* WCOREDUMP (watch/text.h) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/event.h>

#include "child.h"
#include "clock.h"
#include "judge.h"
#include "layoutd.h"
#include "lead.h"
#include "procstat.h"
#include "stackfile.h"
#include "stacks.h"
#include "text.h"
#include "util.h"
#include "view.h"

#define STACKS_RUNNING_MAX 4		/* captures at once */
#define STACKS_STEP_MAX 16		/* captures of one step */
#define STACKS_QUEUE_MAX 64		/* captures waiting for a slot */
#define STACKS_OUTBOX_MAX 256		/* the leader's requests not yet answered */
#define STACKS_KEYS 1024		/* ranks remembered as captured (asked) */
#define STACKS_POLL_MS 50
#define STACKS_GDB_AUTOLOAD "/usr/share/gdb/auto-load"

/* A (job, step, rank) captured or asked already. */
struct skey {
	uint64_t job, step;
	int64_t rank;
	bool used;
};

struct keyring {
	struct skey k[STACKS_KEYS];
	size_t next;
};

enum stage { ST_NATIVE, ST_PYTHON, ST_DONE };

struct cap {
	struct cap *next;
	struct ld_stacks *st;
	struct stackfile_req r;
	long pid;
	uint64_t start;			/* the registered start time */
	bool was_stopped;		/* stopped (T) before we came */
	bool python;
	char py_note[160];		/* why there is no Python stack; "" none */
	char gdb[PATH_MAX];		/* gdb's path, "" none */
	enum stage stage;
	pid_t child;
	bool reaped;			/* the tool's status is in */
	int wst;
	int fd;
	struct event *ev_out, *ev_wait;
	bool eof, killed;
	uint64_t started_ns;		/* the capture's */
	uint64_t when_real_ns;
	struct stackfile_out out;
	char tool[PATH_MAX + 80];	/* the native tool's command line */
	char status[PL_ERR_TEXT + 160];	/* how it ended */
};

/* A request the leader holds for a node's next summary. */
struct ask {
	struct ask *next;
	char node[LD_PEER_NODE_LEN];
	struct stackfile_req r;
};

struct ld_stacks {
	struct ld *d;
	struct cap *running, *queue;
	size_t nrunning, nqueue;
	struct keyring captured, asked;
	struct ask *outbox;
	size_t nout;
	struct ld_stacks_stats st;
};

/* ---- the rings of keys ---------------------------------------------------- */

static bool
key_has(const struct keyring *kr, uint64_t job, uint64_t step, int64_t rank)
{
	size_t i;

	for (i = 0; i < STACKS_KEYS; i++)
		if (kr->k[i].used && kr->k[i].job == job && kr->k[i].step == step &&
		    kr->k[i].rank == rank)
			return true;
	return false;
}

static size_t
key_count_step(const struct keyring *kr, uint64_t job, uint64_t step)
{
	size_t i, n = 0;

	for (i = 0; i < STACKS_KEYS; i++)
		if (kr->k[i].used && kr->k[i].job == job && kr->k[i].step == step)
			n++;
	return n;
}

/* The oldest is forgotten: a step with more than STACKS_KEYS culprits
 * long ago may be captured again, still bounded per step and at once. */
static void
key_add(struct keyring *kr, uint64_t job, uint64_t step, int64_t rank)
{
	struct skey *k = &kr->k[kr->next];

	k->job = job;
	k->step = step;
	k->rank = rank;
	k->used = true;
	kr->next = (kr->next + 1) % STACKS_KEYS;
}

/* ---- the tools --------------------------------------------------------------- */

/* name found in $PATH (else the usual directories) into out; false none. */
static bool
find_tool(const char *name, char *out, size_t n)
{
	const char *path = getenv("PATH"), *p, *e;
	bool found = false;

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; !found && *p; p = *e ? e + 1 : e) {
		e = strchr(p, ':');
		if (!e)
			e = p + strlen(p);
		if (e == p || *p != '/')
			continue;
		if ((size_t)snprintf(out, n, "%.*s/%s", (int)(e - p), p, name) < n &&
		    access(out, X_OK) == 0)
			found = true;
	}
	return found;
}

/* The first line of a small /proc file of pid into out, "" when none. */
static void
proc_line(long pid, const char *what, char *out, size_t n)
{
	char path[64];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/%s", pid, what);
	f = fopen(path, "re");
	if (!f)
		return;
	if (!fgets(out, (int)n, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
}

static bool
names_python(const char *s)
{
	const char *b = strrchr(s, '/');

	return strncmp(b ? b + 1 : s, "python", 6) == 0;
}

/* gdb's Python support for the interpreter at path: the script gdb
 * auto-loads for it (Debian: python3-dbg, libpython3-dbg). */
static bool
autoload_script(const char *path)
{
	char s[PATH_MAX + 64];

	return path[0] == '/' &&
	       (size_t)snprintf(s, sizeof(s), STACKS_GDB_AUTOLOAD "%s-gdb.py", path) < sizeof(s) &&
	       access(s, R_OK) == 0;
}

/* The interpreter's gdb support, for the executable or a libpython it
 * maps (the first 4096 lines of /proc/PID/maps). */
static bool
python_support(long pid, const char *exe)
{
	char path[64], line[PATH_MAX + 256], *lib;
	bool found = autoload_script(exe);
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	f = found ? NULL : fopen(path, "re");
	while (f && !found && n++ < 4096 && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		lib = strchr(line, '/');
		if (lib && strstr(lib, "/libpython"))
			found = autoload_script(lib);
	}
	if (f)
		fclose(f);
	return found;
}

/* What the capture of c is: a Python rank or not, and gdb's path. */
static void
cap_inspect(struct cap *c)
{
	char exe[PATH_MAX], link[64], comm[64];
	ssize_t k;

	snprintf(link, sizeof(link), "/proc/%ld/exe", c->pid);
	k = readlink(link, exe, sizeof(exe) - 1);
	exe[k > 0 ? k : 0] = '\0';
	proc_line(c->pid, "comm", comm, sizeof(comm));
	c->python = names_python(exe) || names_python(comm);
	if (!find_tool("gdb", c->gdb, sizeof(c->gdb)))
		c->gdb[0] = '\0';
	if (!c->python)
		return;
	if (!c->gdb[0])
		snprintf(c->py_note, sizeof(c->py_note), "Python stack: gdb not installed");
	else if (!python_support(c->pid, exe))
		snprintf(c->py_note, sizeof(c->py_note), "Python stack: gdb's python support not "
			 "installed (python3-dbg)");
}

/* ---- one capture ------------------------------------------------------------- */

static void cap_next_stage(struct cap *c);
static void start_queued(struct ld_stacks *st);

static void
cap_free(struct cap *c)
{
	if (c->ev_out)
		event_free(c->ev_out);
	if (c->ev_wait)
		event_free(c->ev_wait);
	if (c->fd >= 0)
		close(c->fd);
	stackfile_out_free(&c->out);
	free(c);
}

static void
unlink_running(struct ld_stacks *st, struct cap *c)
{
	struct cap **p;

	for (p = &st->running; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			st->nrunning--;
			return;
		}
}

/* mkdir -p of dir's missing parts, mode 0750. */
static int
make_dirs(const char *dir)
{
	char p[LD_PATH];
	size_t i;

	snprintf(p, sizeof(p), "%s", dir);
	for (i = 1; p[i]; i++) {
		if (p[i] != '/')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0750) < 0 && errno != EEXIST)
			return -1;
		p[i] = '/';
	}
	return mkdir(p, 0750) < 0 && errno != EEXIST ? -1 : 0;
}

/* The header and the output into path, whole: a temporary file renamed. */
static int
write_file(const char *path, const struct buf *head, const struct buf *body, pl_err_t *err)
{
	char tmp[LD_PATH + 16], dir[LD_PATH];
	char *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (make_dirs(dir) < 0)
		return pl_err_set(err, "%s: %s", dir, strerror(errno));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0)
		return pl_err_set(err, "%s: %s", tmp, strerror(errno));
	if (fchmod(fd, 0640) < 0 ||
	    write(fd, head->s, head->len) != (ssize_t)head->len ||
	    (body->len && write(fd, body->s, body->len) != (ssize_t)body->len)) {
		pl_err_set(err, "%s: %s", tmp, strerror(errno ? errno : EIO));
		close(fd);
		unlink(tmp);
		return -1;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		pl_err_set(err, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The capture is over: its file, its log line, the next one queued. */
static void
cap_finish(struct cap *c)
{
	struct ld_stacks *st = c->st;
	const struct ld_conf *conf = &st->d->cur->conf;
	struct stackfile_head h;
	struct buf head = BUF_INIT;
	char path[LD_PATH];
	pl_err_t err;

	pl_err_clear(&err);
	stackfile_out_end(&c->out);
	memset(&h, 0, sizeof(h));
	h.node = conf->node_name;
	h.job = c->r.job;
	h.step = c->r.step;
	h.rank = c->r.rank;
	h.pid = c->pid;
	h.kind = c->r.kind;
	h.text = c->r.text;
	h.when_real_ns = c->when_real_ns;
	h.tool = c->tool[0] ? c->tool : "none";
	h.status = c->status;
	stackfile_header(&head, &h);
	if (stackfile_path(path, sizeof(path), conf->state_dir, conf->node_name, c->r.job,
			   c->r.step, c->r.rank, &err) == 0 &&
	    !head.bad && !c->out.b.bad && write_file(path, &head, &c->out.b, &err) == 0) {
		st->st.written++;
		ld_log(&st->d->log, "stacks: job %" PRIu64 ".%" PRIu64 " rank %" PRId64 " pid %ld: "
		       "%s (%s, %.1f s): %s", c->r.job, c->r.step, c->r.rank, c->pid, h.tool,
		       c->status, (double)(mono_ns() - c->started_ns) / 1e9, path);
	} else {
		ld_log(&st->d->log, "stacks: job %" PRIu64 ".%" PRIu64 " rank %" PRId64 ": no stack "
		       "file: %s", c->r.job, c->r.step, c->r.rank,
		       err.text[0] ? err.text : "out of memory");
	}
	buf_free(&head);
	unlink_running(st, c);
	cap_free(c);
	start_queued(st);
}

static void
poll_later(struct cap *c, long ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(c->ev_wait, &tv);
}

/* A tool killed while attached detaches from the rank, which may be left
 * stopped: let it go on, unless it was stopped before we came or the pid
 * is another process's now. */
static void
release_rank(struct cap *c)
{
	struct procstat ps;
	pl_err_t err;

	pl_err_clear(&err);
	if (c->was_stopped || procstat_read(c->pid, &ps, &err) < 0 || ps.start != c->start)
		return;
	if (ps.state == 'T' || ps.state == 't')
		kill((pid_t)c->pid, SIGCONT);
}

/* How one tool ended, as the file says it. */
static void
tool_status(const struct cap *c, int wst, char *out, size_t n)
{
	const struct ld_conf *conf = &c->st->d->cur->conf;
	char es[64];

	if (c->killed) {
		snprintf(out, n, "killed after %ld s (stack_timeout_s): the stacks below are "
			 "what it printed before", conf->stack_timeout_s);
		return;
	}
	exit_text(wst, es, sizeof(es));
	snprintf(out, n, "%s", es);
}

/* The capture ran past stack_timeout_s: its tool's group is killed (once). */
static void
cap_timeout(struct cap *c)
{
	const struct ld_conf *conf = &c->st->d->cur->conf;

	if (c->killed || mono_ns() - c->started_ns <= (uint64_t)conf->stack_timeout_s * NS)
		return;
	kill(-c->child, SIGKILL);
	if (!c->reaped)
		kill(c->child, SIGKILL);
	c->killed = true;
	c->st->st.timed_out++;
}

/* Reap the tool when it has ended and its output is all in; kill its
 * group when the capture runs past stack_timeout_s. */
static void
on_cap_wait(evutil_socket_t fd, short what, void *arg)
{
	struct cap *c = arg;
	char s[200], line[260];
	pid_t r;

	if (!c->reaped) {
		r = waitpid(c->child, &c->wst, WNOHANG);
		if (r != 0) {
			c->reaped = true;
			if (r != c->child)
				c->wst = -1;
		}
	}
	if (!c->reaped || !c->eof) {
		/* a process the tool left may hold the pipe: the timeout ends it too */
		cap_timeout(c);
		poll_later(c, STACKS_POLL_MS);
		return;
	}
	tool_status(c, c->wst, s, sizeof(s));
	if (c->killed)
		release_rank(c);
	if (c->stage == ST_NATIVE) {
		snprintf(c->status, sizeof(c->status), "%s", s);
	} else {
		snprintf(line, sizeof(line), "--- the Python stack's gdb: %s ---\n", s);
		stackfile_out_add(&c->out, line, strlen(line));
	}
	c->child = 0;
	c->reaped = false;
	event_free(c->ev_out);
	c->ev_out = NULL;
	c->stage = c->stage == ST_NATIVE && c->python && !c->py_note[0] && !c->killed ?
		   ST_PYTHON : ST_DONE;
	if (c->stage == ST_DONE && c->python && c->killed && !c->py_note[0])
		snprintf(c->py_note, sizeof(c->py_note), "Python stack: not tried, the capture "
			 "ran out of time");
	cap_next_stage(c);
}

static void
on_cap_out(evutil_socket_t fd, short what, void *arg)
{
	struct cap *c = arg;
	char buf[4096];
	ssize_t n = read(c->fd, buf, sizeof(buf));

	if (n > 0) {
		stackfile_out_add(&c->out, buf, (size_t)n);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	event_del(c->ev_out);
	close(c->fd);
	c->fd = -1;
	c->eof = true;
	poll_later(c, 0);
}

/* Start one tool; false (with c->status) when it cannot be. */
static bool
cap_run(struct cap *c, char *const argv[])
{
	struct ld_stacks *st = c->st;

	c->eof = false;
	c->child = ld_child_start(argv[0], argv, true, &c->fd);
	if (c->child < 0) {
		c->child = 0;
		snprintf(c->status, sizeof(c->status), "cannot start %s: %s", argv[0],
			 strerror(errno));
		return false;
	}
	c->ev_out = event_new(st->d->base, c->fd, EV_READ | EV_PERSIST, on_cap_out, c);
	if (!c->ev_out || event_add(c->ev_out, NULL) < 0) {
		kill(-c->child, SIGKILL);
		kill(c->child, SIGKILL);
		waitpid(c->child, NULL, 0);	/* killed: at once */
		c->child = 0;
		snprintf(c->status, sizeof(c->status), "cannot watch the tool's output: out of "
			 "memory");
		return false;
	}
	poll_later(c, STACKS_POLL_MS);
	return true;
}

/* The native tool's command line for c into argv (strings in c and p). */
static bool
native_argv(struct cap *c, char *argv[], char *path, size_t n, char *pidarg)
{
	const struct ld_conf *conf = &c->st->d->cur->conf;
	bool eu = conf->stack_tool != LD_STACK_GDB && find_tool("eu-stack", path, n);

	if (!eu && (conf->stack_tool == LD_STACK_EU || !c->gdb[0])) {
		snprintf(c->status, sizeof(c->status), "not captured: %s installed (elfutils, gdb)",
			 conf->stack_tool == LD_STACK_EU ? "eu-stack is not" :
			 conf->stack_tool == LD_STACK_GDB ? "gdb is not" : "neither eu-stack nor gdb is");
		return false;
	}
	if (eu) {
		/* -i: the inlined frames too, which an optimised build has many of */
		argv[0] = path;
		argv[1] = (char *)"-i";
		argv[2] = (char *)"-p";
		argv[3] = pidarg;
		argv[4] = NULL;
		snprintf(c->tool, sizeof(c->tool), "%s -i -p %s", path, pidarg);
	} else {
		argv[0] = c->gdb;
		argv[1] = (char *)"-batch";
		argv[2] = (char *)"-nx";
		argv[3] = (char *)"-p";
		argv[4] = pidarg;
		argv[5] = (char *)"-ex";
		argv[6] = (char *)"thread apply all bt";
		argv[7] = NULL;
		snprintf(c->tool, sizeof(c->tool), "%s -batch -nx -p %s -ex 'thread apply all bt'",
			 c->gdb, pidarg);
	}
	return true;
}

static void
cap_next_stage(struct cap *c)
{
	char path[PATH_MAX], pidarg[24], *argv[8];
	char note[PATH_MAX + 120];

	snprintf(pidarg, sizeof(pidarg), "%ld", c->pid);
	if (c->stage == ST_NATIVE) {
		if (native_argv(c, argv, path, sizeof(path), pidarg) && cap_run(c, argv))
			return;
		c->stage = ST_DONE;
	}
	if (c->stage == ST_PYTHON) {
		argv[0] = c->gdb;
		argv[1] = (char *)"-batch";
		argv[2] = (char *)"-nx";
		argv[3] = (char *)"-p";
		argv[4] = pidarg;
		argv[5] = (char *)"-ex";
		argv[6] = (char *)"thread apply all py-bt";
		argv[7] = NULL;
		snprintf(note, sizeof(note), "\n--- Python stack: %s -batch -nx -p %s -ex "
			 "'thread apply all py-bt' ---\n", c->gdb, pidarg);
		stackfile_out_add(&c->out, note, strlen(note));
		if (cap_run(c, argv))
			return;
		c->stage = ST_DONE;
	}
	if (c->py_note[0]) {
		snprintf(note, sizeof(note), "\n%s\n", c->py_note);
		stackfile_out_add(&c->out, note, strlen(note));
	}
	cap_finish(c);
}

/* Begin c: the pid still the registered process, then its tools. */
static void
cap_begin(struct cap *c)
{
	struct ld_stacks *st = c->st;
	struct procstat ps;
	pl_err_t err;

	c->next = st->running;
	st->running = c;
	st->nrunning++;
	st->st.started++;
	c->started_ns = mono_ns();
	c->when_real_ns = real_ns();
	pl_err_clear(&err);
	if (procstat_same_process(c->pid, c->start, &err) != PROCSTAT_SAME) {
		st->st.refused++;
		snprintf(c->status, sizeof(c->status), "not attached: pid %ld is not the registered "
			 "process now: %s", c->pid, err.text);
		c->stage = ST_DONE;
		cap_finish(c);
		return;
	}
	pl_err_clear(&err);
	c->was_stopped = procstat_read(c->pid, &ps, &err) == 0 && (ps.state == 'T' || ps.state == 't');
	cap_inspect(c);
	c->stage = ST_NATIVE;
	cap_next_stage(c);
}

static void
start_queued(struct ld_stacks *st)
{
	struct cap *c, **p;

	while (st->queue && st->nrunning < STACKS_RUNNING_MAX) {
		/* the oldest first: the queue is pushed at its head */
		for (p = &st->queue; (*p)->next; p = &(*p)->next)
			;
		c = *p;
		*p = NULL;
		st->nqueue--;
		cap_begin(c);
	}
}

/* The registered task of r's rank here: its pid and start time. */
static int
find_task(struct ld_stacks *st, const struct stackfile_req *r, long *pid, uint64_t *start,
	  pl_err_t *err)
{
	struct ld_watch *w = st->d->watch;
	struct ld_watch_step ws;
	struct ld_watch_task t;
	long wi = w ? ld_watch_step_find(w, r->job, r->step) : -1;
	size_t k;

	if (wi < 0)
		return pl_err_set(err, "job %" PRIu64 ".%" PRIu64 " is not registered on this node",
				  r->job, r->step);
	ld_watch_step_at(w, (size_t)wi, &ws);
	for (k = 0; k < ws.ntasks; k++) {
		ld_watch_task_at(w, (size_t)wi, k, &t);
		if (t.rank != r->rank)
			continue;
		if (t.exited)
			return pl_err_set(err, "job %" PRIu64 ".%" PRIu64 " rank %" PRId64 " has "
					  "exited: nothing to attach to", r->job, r->step, r->rank);
		*pid = t.pid;
		*start = t.start;
		return 0;
	}
	return pl_err_set(err, "job %" PRIu64 ".%" PRIu64 " has no rank %" PRId64 " registered "
			  "on this node", r->job, r->step, r->rank);
}

int
ld_stacks_capture(struct ld_stacks *st, const struct stackfile_req *r, pl_err_t *err)
{
	struct cap *c;
	uint64_t start = 0;
	long pid = 0;

	if (!st->d->cur->conf.stacks)
		return pl_err_set(err, "stacks = no");
	if (key_has(&st->captured, r->job, r->step, r->rank))
		return 0;
	if (find_task(st, r, &pid, &start, err) < 0)
		goto refused;
	if (key_count_step(&st->captured, r->job, r->step) >= STACKS_STEP_MAX) {
		pl_err_set(err, "job %" PRIu64 ".%" PRIu64 ": %d ranks captured already, a step's most",
			   r->job, r->step, STACKS_STEP_MAX);
		goto refused;
	}
	if (st->nqueue >= STACKS_QUEUE_MAX) {
		pl_err_set(err, "%d captures wait already", STACKS_QUEUE_MAX);
		goto refused;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->ev_wait = evtimer_new(st->d->base, on_cap_wait, c))) {
		free(c);
		pl_err_set(err, "out of memory");
		goto refused;
	}
	key_add(&st->captured, r->job, r->step, r->rank);
	c->st = st;
	c->r = *r;
	c->pid = pid;
	c->start = start;
	c->fd = -1;
	stackfile_out_init(&c->out, STACKFILE_OUT_MAX);
	c->next = st->queue;
	st->queue = c;
	st->nqueue++;
	start_queued(st);
	return 0;
refused:
	st->st.refused++;
	return -1;
}

/* ---- the leader's side -------------------------------------------------------- */

/* Ask node for r (this node: capture now). */
static void
ask_node(struct ld_stacks *st, const char *node, const char *self, const struct stackfile_req *r)
{
	struct ask *a, **p;
	pl_err_t err;

	if (key_has(&st->asked, r->job, r->step, r->rank))
		return;
	if (key_count_step(&st->asked, r->job, r->step) >= STACKS_STEP_MAX)
		return;
	key_add(&st->asked, r->job, r->step, r->rank);
	if (strcmp(node, self) == 0) {
		pl_err_clear(&err);
		if (ld_stacks_capture(st, r, &err) < 0)
			ld_log(&st->d->log, "stacks: job %" PRIu64 ".%" PRIu64 " rank %" PRId64 ": not "
			       "captured: %s", r->job, r->step, r->rank, err.text);
		return;
	}
	if (st->nout >= STACKS_OUTBOX_MAX) {
		/* the oldest request is dropped: its node never came back */
		for (p = &st->outbox; (*p)->next; p = &(*p)->next)
			;
		free(*p);
		*p = NULL;
		st->nout--;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return;
	copy_str(a->node, sizeof(a->node), node);
	a->r = *r;
	a->next = st->outbox;
	st->outbox = a;
	st->nout++;
	st->st.asked++;
}

static void
drop_step(struct ld_stacks *st, uint64_t job, uint64_t step)
{
	struct ask **p = &st->outbox, *a;

	while (*p) {
		a = *p;
		if (a->r.job == job && a->r.step == step) {
			*p = a->next;
			free(a);
			st->nout--;
		} else {
			p = &a->next;
		}
	}
}

/* The node of rank in v, "" unknown; from the view's fields, as the
 * alerts read them, since the lookups in watch/lead.c sit a layer up. */
static const char *
culprit_node(const struct ld_step_view *v, int64_t rank)
{
	const struct judge_rank *jr = NULL;
	size_t i;

	if (rank >= 0 && (size_t)rank < v->nranks && v->ranks[rank].st.rank == rank)
		jr = &v->ranks[rank];
	for (i = 0; !jr && i < v->nranks; i++)
		if (v->ranks[i].st.rank == rank)
			jr = &v->ranks[i];
	if (!jr || !v->step || jr->node >= v->step->nnodes || !v->step->nodes[jr->node].name)
		return "";
	return v->step->nodes[jr->node].name;
}

void
ld_stacks_findings(struct ld *d, const struct ld_step_view *v, const struct judge_finding *f,
		   size_t n, uint64_t now_ns)
{
	struct ld_stacks *st = d->stacks;
	struct stackfile_req r;
	const char *node;
	size_t i, k;

	if (!st || !v)
		return;
	if (v->final) {
		drop_step(st, v->job_id, v->step_id);
		return;
	}
	if (!d->cur->conf.stacks)
		return;
	for (i = 0; i < n; i++) {
		if (!stackfile_wanted(&f[i]))
			continue;
		for (k = 0; k < f[i].nculprits; k++) {
			node = culprit_node(v, f[i].culprits[k]);
			if (!node[0])
				continue;
			memset(&r, 0, sizeof(r));
			r.job = v->job_id;
			r.step = v->step_id;
			r.rank = f[i].culprits[k];
			r.kind = f[i].kind;
			copy_str(r.text, sizeof(r.text), f[i].text);
			ask_node(st, node, v->self ? v->self : "", &r);
		}
	}
}

json_t *
ld_stacks_asked(struct ld_stacks *st, uint64_t job, uint64_t step, const char *node)
{
	struct stackfile_req r[STACKFILE_REQ_MAX];
	struct ask **p = &st->outbox, *a;
	size_t n = 0;

	if (!st)
		return NULL;
	while (*p && n < STACKFILE_REQ_MAX) {
		a = *p;
		if (a->r.job == job && a->r.step == step && strcmp(a->node, node) == 0) {
			r[n++] = a->r;
			*p = a->next;
			free(a);
			st->nout--;
		} else {
			p = &a->next;
		}
	}
	return n ? stackfile_req_json(r, n) : NULL;
}

void
ld_stacks_requested(struct ld_stacks *st, uint64_t job, uint64_t step, const char *leader,
		    const json_t *capture)
{
	struct stackfile_req r[STACKFILE_REQ_MAX];
	size_t i, n = 0;
	pl_err_t err;

	if (!st || !capture)
		return;
	pl_err_clear(&err);
	if (stackfile_req_parse(capture, r, STACKFILE_REQ_MAX, &n, &err) < 0) {
		st->st.refused++;
		ld_log(&st->d->log, "stacks: job %" PRIu64 ".%" PRIu64 ": the capture node %s asks "
		       "for is refused: %s", job, step, leader, err.text);
		return;
	}
	for (i = 0; i < n; i++) {
		pl_err_clear(&err);
		if (r[i].job != job || r[i].step != step) {
			st->st.refused++;
			ld_log(&st->d->log, "stacks: job %" PRIu64 ".%" PRIu64 ": node %s asks for a "
			       "capture of job %" PRIu64 ".%" PRIu64 " in its answer: refused (only "
			       "the step of the summary it answers)", job, step, leader, r[i].job,
			       r[i].step);
			continue;
		}
		if (ld_stacks_capture(st, &r[i], &err) < 0)
			ld_log(&st->d->log, "stacks: job %" PRIu64 ".%" PRIu64 " rank %" PRId64 ", asked "
			       "by node %s: not captured: %s", job, step, r[i].rank, leader, err.text);
	}
}

int
ld_stacks_name(const struct ld *d, const char *node, uint64_t job, uint64_t step, int64_t rank,
	       char *out, size_t n)
{
	char path[LD_PATH];
	pl_err_t err;

	pl_err_clear(&err);
	if (!d->cur->conf.stacks || stackfile_path(path, sizeof(path), d->cur->conf.state_dir,
						   node, job, step, rank, &err) < 0)
		return -1;
	return (size_t)snprintf(out, n, "%s:%s", node, path) < n ? 0 : -1;
}

void
ld_stacks_stats(const struct ld_stacks *st, struct ld_stacks_stats *out)
{
	*out = st->st;
	out->running = st->nrunning;
}

struct ld_stacks *
ld_stacks_new(struct ld *d)
{
	struct ld_stacks *st = calloc(1, sizeof(*st));

	if (st)
		st->d = d;
	return st;
}

void
ld_stacks_free(struct ld_stacks *st)
{
	struct cap *c;
	struct ask *a;

	if (!st)
		return;
	while ((c = st->running)) {
		st->running = c->next;
		if (c->child > 0) {
			kill(-c->child, SIGKILL);
			kill(c->child, SIGKILL);
			waitpid(c->child, NULL, 0);	/* killed: at once */
			release_rank(c);
		}
		cap_free(c);
	}
	while ((c = st->queue)) {
		st->queue = c->next;
		cap_free(c);
	}
	while ((a = st->outbox)) {
		st->outbox = a->next;
		free(a);
	}
	free(st);
}
