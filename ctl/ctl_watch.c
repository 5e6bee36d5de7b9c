/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `layoutctl watch JOBID[.STEP]`: the whole step as its leader sees it,
 * from any node or a login host; with --local, this node's view of the
 * job (its layoutd's GET /v1/watch).
 *
 * Finding the leader.  --leader HOST:PORT is asked directly.  Otherwise
 * this host's layoutd is asked first (its unix socket: no credential, the
 * socket tells it who asks): it answers the view when it leads the step,
 * and 421 naming the node it sends its summaries to when it only takes
 * part.  When it is not in the step (or there is none: a login host), the
 * step's nodes come from --nodes or from Slurm (`scontrol -o show step`)
 * and are asked in that order over their peer listeners; a node that takes
 * part answers 421 with the leader, which is followed (at most MAX_HOPS
 * hops).  A node's address and peer port come from the cluster map
 * (--topology, else the local layoutd's map), as the daemons find each
 * other; a node the map lacks is its name and port 6830.
 *
 * Over TCP each request carries a munge credential made here as the
 * calling user, its payload the request line, living CRED_TTL_S; the
 * leader shows root and the Slurm user every step, others their own.  A
 * step larger than one page (STEP_PAGE ranks) is fetched page by page and
 * merged; every answer is checked to be a view of the step asked before
 * anything of it is shown.
 */
#define _GNU_SOURCE		/* strndup, kill */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <munge.h>

#include "buf.h"
#include "client.h"
#include "ctl.h"
#include "ctl_daemon.h"
#include "hosts.h"
#include "peerwire.h"
#include "stackfile.h"
#include "topo.h"

#define STEP_PAGE 1024		/* the leader's page of ranks, at most */
#define MAX_PAGES 80		/* 65,536 ranks (peer_max_ranks) and then some */
#define MAX_HOPS 2		/* redirects followed from one node */
#define MAX_ASKED 16		/* nodes of the step asked, at most */
#define CRED_TTL_S 10		/* the credential's life, as layoutd's munge_ttl_s */
#define CONDENSE_AT 64		/* more ranks than this: the condensed view */
#define GROUP_ROWS 256		/* ranks shown in full in the condensed view */
#define SCONTROL_OUT_MAX (1 << 20)
#define FINDING_TEXT_MAX 1000	/* bytes of a finding's text shown */
#define CLEAR_SCREEN "\033[H\033[2J"	/* cursor home, erase the screen */

extern char **environ;

/* What the step view is asked for (the command line). */
struct watch_args {
	long job, step;			/* step -1: the job's only step */
	const char *socket;		/* this host's layoutd; NULL: none */
	const char *leader;		/* --leader HOST:PORT */
	const char *nodes;		/* --nodes HOSTLIST */
	const char *topology;		/* --topology MAP */
	const char *munge_socket;	/* --munge-socket PATH */
	const char *scontrol;		/* --scontrol PATH; NULL: scontrol */
	long timeout_ms, interval_ms;
	bool once, json, all_ranks;
};

/* What was tried, for the message when nothing answered. */
struct tried {
	struct buf b;
	unsigned n;
};

static void __attribute__((format(printf, 2, 3)))
tried_add(struct tried *t, const char *fmt, ...)
{
	char line[PL_ERR_TEXT + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	buf_printf(&t->b, "\n  %s", line);
	t->n++;
}

/* ---- asking: one page, over the unix socket or TCP with a credential ---- */

static int
munge_header(const struct watch_args *a, const char *line, char **out, pl_err_t *err)
{
	munge_ctx_t ctx = munge_ctx_create();
	munge_err_t e;
	char *cred = NULL;
	struct buf h = BUF_INIT;

	*out = NULL;
	if (!ctx)
		return pl_err_set(err, "munge: out of memory");
	if (a->munge_socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, a->munge_socket) != EMUNGE_SUCCESS) {
		pl_err_set(err, "--munge-socket %s: %s", ctl_clip_path(a->munge_socket),
			   munge_ctx_strerror(ctx));
		munge_ctx_destroy(ctx);
		return -1;
	}
	munge_ctx_set(ctx, MUNGE_OPT_TTL, CRED_TTL_S);
	e = munge_encode(&cred, ctx, line, (int)strlen(line));
	if (e != EMUNGE_SUCCESS) {
		pl_err_set(err, "munge: no credential (%s)%s", munge_ctx_strerror(ctx) ?
			   munge_ctx_strerror(ctx) : munge_strerror(e),
			   a->munge_socket ? "" : " (munged's socket elsewhere? give --munge-socket)");
		munge_ctx_destroy(ctx);
		free(cred);
		return -1;
	}
	munge_ctx_destroy(ctx);
	buf_printf(&h, PEERWIRE_HEADER ": %s", cred);
	free(cred);
	*out = buf_take(&h);
	return *out ? 0 : pl_err_set(err, "out of memory");
}

/*
 * One page of the step at where (a unix socket path or http://HOST:PORT).
 * 0 with *reply (any status), or -1 with err when no answer came (-2: no
 * credential could be made).
 */
static int
ask_page(const struct watch_args *a, const char *where, uint64_t from,
	 struct client_reply *reply, pl_err_t *err)
{
	char path[160], *hdr = NULL, *line = NULL;
	int rv;

	snprintf(path, sizeof(path), "/v1/watch/step?job=%ld&step=%ld&from=%" PRIu64 "&count=%d",
		 a->job, a->step, from, STEP_PAGE);
	if (strncmp(where, PEERWIRE_SCHEME, strlen(PEERWIRE_SCHEME)) == 0) {
		if (asprintf(&line, "GET %s", path) < 0)
			return pl_err_set(err, "out of memory");
		rv = munge_header(a, line, &hdr, err);
		free(line);
		if (rv < 0)
			return -2;	/* no credential here: no node will do */
	}
	rv = client_request_hdr(where, "GET", path, hdr, NULL, a->timeout_ms, reply, err);
	free(hdr);
	return rv;
}

/* ---- checking an answer -------------------------------------------------- */

static int
want_int(json_t *o, const char *key, json_int_t *v, char *why, size_t n)
{
	json_t *x = json_object_get(o, key);

	if (!json_is_integer(x)) {
		snprintf(why, n, "'%s' is not an integer", key);
		return -1;
	}
	*v = json_integer_value(x);
	return 0;
}

/*
 * Is page a view of job.step holding ranks from `from` on, in order?  The
 * leader could be anything that answers on its port: every part used
 * later is checked here.  0, or -1 with why.
 */
static int
check_page(json_t *page, long job, long step, uint64_t from, char *why, size_t n)
{
	json_t *ranks = json_object_get(page, "ranks"), *nodes = json_object_get(page, "nodes");
	json_t *find = json_object_get(page, "findings"), *next = json_object_get(page, "ranks_next");
	json_t *x;
	json_int_t j, s, total, last = -1;
	size_t i, k;

	if (!json_is_object(page))
		return snprintf(why, n, "not a JSON object"), -1;
	if (want_int(page, "job_id", &j, why, n) < 0 || want_int(page, "step_id", &s, why, n) < 0)
		return -1;
	if (j != job || s != step) {
		snprintf(why, n, "it is the view of step %lld.%lld", (long long)j, (long long)s);
		return -1;
	}
	if (want_int(page, "ranks_total", &total, why, n) < 0)
		return -1;
	if (!json_is_string(json_object_get(page, "role")) || !json_is_array(ranks) ||
	    !json_is_array(nodes) || !json_is_array(find) || !(json_is_null(next) ||
							       json_is_integer(next))) {
		snprintf(why, n, "it lacks role, nodes, ranks, findings or ranks_next");
		return -1;
	}
	json_array_foreach(nodes, i, x) {
		if (!json_is_string(json_object_get(x, "name")) ||
		    !json_is_string(json_object_get(x, "state"))) {
			snprintf(why, n, "node %zu has no name or state", i);
			return -1;
		}
	}
	json_array_foreach(ranks, i, x) {
		json_int_t r;

		if (want_int(x, "rank", &r, why, n) < 0 ||
		    !json_is_string(json_object_get(x, "node")) ||
		    !json_is_array(json_object_get(x, "comms"))) {
			snprintf(why, n, "rank entry %zu lacks rank, node or comms", i);
			return -1;
		}
		if (r < (json_int_t)from || r <= last) {
			snprintf(why, n, "rank %lld is out of order (the page from rank %" PRIu64 ")",
				 (long long)r, from);
			return -1;
		}
		last = r;
	}
	if (json_is_integer(next) && (json_integer_value(next) <= last ||
				      json_array_size(ranks) == 0)) {
		snprintf(why, n, "its next page (rank %lld) does not move on", (long long)
			 json_integer_value(next));
		return -1;
	}
	if (json_array_size(ranks) > (size_t)total) {
		snprintf(why, n, "it holds more ranks than its ranks_total %lld", (long long)total);
		return -1;
	}
	json_array_foreach(find, i, x) {
		json_t *c = json_object_get(x, "culprits"), *y;

		if (!json_is_string(json_object_get(x, "kind")) || !json_is_array(c)) {
			snprintf(why, n, "finding %zu lacks kind or culprits", i);
			return -1;
		}
		json_array_foreach(c, k, y) {
			if (!json_is_integer(y)) {
				snprintf(why, n, "finding %zu names a culprit that is not a rank", i);
				return -1;
			}
		}
	}
	return 0;
}

/* ---- fetching the whole step from one place ------------------------------ */

enum got { GOT_VIEW, GOT_REDIRECT, GOT_REFUSED, GOT_NONE, GOT_NO_CRED };

/*
 * Every page of the step at where, merged into *view (caller decrefs); or
 * the leader a 421 names, into leader and *acting; or why neither.
 */
static enum got
fetch_at(const struct watch_args *a, const char *where, json_t **view, char *leader,
	 size_t leader_n, bool *acting, char *why, size_t n)
{
	json_t *all = NULL, *page = NULL;
	uint64_t from = 0;
	enum got g = GOT_NONE;
	int pages;

	*view = NULL;
	for (pages = 0;; pages++) {
		struct client_reply r;
		json_error_t je;
		pl_err_t err;
		json_t *next;
		bool more;
		int k;

		if (pages == MAX_PAGES) {
			snprintf(why, n, "answered more than %d pages of ranks", MAX_PAGES);
			g = GOT_REFUSED;
			goto out;
		}
		pl_err_clear(&err);
		k = ask_page(a, where, from, &r, &err);
		if (k == -1 && pages > 0) {
			/* a later page lost on the way (a busy leader closes what it
			 * cannot finish in its request_timeout_ms): once more */
			pl_err_clear(&err);
			k = ask_page(a, where, from, &r, &err);
		}
		if (k < 0) {
			snprintf(why, n, "%s", err.text);
			g = k == -2 ? GOT_NO_CRED : GOT_NONE;
			goto out;
		}
		page = r.body ? json_loads(r.body, 0, &je) : NULL;
		free(r.body);
		if (r.status != 200) {
			const char *msg = json_string_value(json_object_get(page, "error"));

			if (r.status == 421 && pages == 0 &&
			    peerwire_misdirected_parse(page, leader, leader_n, acting) == 0) {
				snprintf(why, n, "%s", msg ? msg : "not led here");
				g = GOT_REDIRECT;
			} else {
				snprintf(why, n, "answered %ld: %s", r.status, msg ? msg :
					 "(no error message)");
				g = GOT_REFUSED;
			}
			goto out;
		}
		if (!page) {
			snprintf(why, n, "answered 200 with what is not JSON (%s)", je.text);
			g = GOT_REFUSED;
			goto out;
		}
		if (check_page(page, a->job, a->step, from, why, n) < 0) {
			char tmp[400];

			snprintf(tmp, sizeof(tmp), "%s", why);
			snprintf(why, n, "answered what is not a view of step %ld.%ld: %.400s", a->job,
				 a->step, tmp);
			g = GOT_REFUSED;
			goto out;
		}
		next = json_object_get(page, "ranks_next");
		more = json_is_integer(next);
		if (more)
			from = (uint64_t)json_integer_value(next);
		if (!all) {
			all = page;
		} else {
			json_array_extend(json_object_get(all, "ranks"), json_object_get(page, "ranks"));
			json_decref(page);
		}
		page = NULL;
		if (!more)
			break;
	}
	/* one view now: no page follows */
	json_object_set_new(all, "ranks_next", json_null());
	g = GOT_VIEW;
out:
	json_decref(page);
	if (g == GOT_VIEW)
		*view = all;
	else
		json_decref(all);
	return g;
}

/* ---- where the nodes are: the map ----------------------------------------- */

struct wctx {
	struct watch_args *a;
	struct topo_map *map;
	bool map_tried;
	char map_why[PL_ERR_TEXT];
	char where[300];		/* the leader found: its socket or URL */
	bool no_cred;			/* munge made no credential: stop asking */
	char name[128];			/* and its node name, or "" */
	struct tried t;
	bool tty;			/* stdout is a terminal: colours */
};

static void
load_map(struct wctx *c)
{
	struct client_reply r;
	pl_err_t err;

	c->map_tried = true;
	pl_err_clear(&err);
	if (c->a->topology) {
		c->map = topo_load(c->a->topology, &err);
		if (!c->map)
			snprintf(c->map_why, sizeof(c->map_why), "--topology %.400s", err.text);
		return;
	}
	if (!c->a->socket) {
		snprintf(c->map_why, sizeof(c->map_why), "no cluster map: no layoutd on this host "
			 "to ask for it, and no --topology MAP");
		return;
	}
	if (client_request(c->a->socket, "GET", "/v1/topology", NULL, c->a->timeout_ms, &r,
			   &err) < 0 || r.status != 200) {
		snprintf(c->map_why, sizeof(c->map_why), "no cluster map: this host's layoutd %s, "
			 "and no --topology MAP", r.status ? "did not give its map" :
			 "does not answer");
		free(r.body);
		return;
	}
	c->map = topo_from_json_text(r.body, &err);
	free(r.body);
	if (!c->map)
		snprintf(c->map_why, sizeof(c->map_why), "the local layoutd's map: %.400s", err.text);
}

/* The peer listener of node name: as the map says, else NAME and the
 * default peer port (the peer wire's rule, as layoutd's). */
static void
resolve(struct wctx *c, const char *name, char *url, size_t n)
{
	struct buf b = BUF_INIT;

	if (!c->map_tried)
		load_map(c);
	peerwire_url(&b, c->map, name, PEERWIRE_PORT, "");
	snprintf(url, n, "%s", buf_str(&b));
	buf_free(&b);
}

/* ---- the step's nodes from Slurm ------------------------------------------ */

/*
 * `scontrol -o show step ID`'s output (one line per step) parsed
 * strictly: every line "StepId=JOB.STEP ... NodeList=HOSTLIST ...".  Steps
 * not numbered (extern, batch, interactive) are left out.  With step >= 0
 * that step's node list, else the job's only numbered step's (*step set);
 * caller frees *nodelist.  0, or -1 with err.
 */
static int
watch_parse_steps(const char *text, long job, long *step, char **nodelist, pl_err_t *err)
{
	const char *line = text, *eol;
	char found[256] = "";
	long lineno = 0, nfound = 0;

	*nodelist = NULL;
	for (; line && *line; line = eol ? eol + 1 : NULL) {
		const char *nl, *sp, *id;
		char *end = NULL;
		long j, st;

		eol = strchr(line, '\n');
		lineno++;
		if (line == eol || (!eol && !*line))
			continue;
		if (strncmp(line, "StepId=", 7) != 0)
			return pl_err_set(err, "line %ld is not a step (want StepId=JOB.STEP ...): %.60s",
					  lineno, line);
		id = line + 7;
		errno = 0;
		j = strtol(id, &end, 10);
		if (errno || end == id || *end != '.' || j != job)
			return pl_err_set(err, "line %ld: StepId=%.30s is not a step of job %ld", lineno,
					  id, job);
		id = end + 1;
		if (*id < '0' || *id > '9')
			continue;	/* extern, batch, interactive */
		st = strtol(id, &end, 10);
		if (errno || (*end != ' ' && *end != '\n' && *end))
			return pl_err_set(err, "line %ld: StepId=%ld.%.20s: the step is not a number",
					  lineno, job, id);
		for (nl = end; nl && (!eol || nl < eol); nl = strchr(nl + 1, ' '))
			if (strncmp(nl, " NodeList=", 10) == 0)
				break;
		if (!nl || (eol && nl >= eol))
			return pl_err_set(err, "line %ld: step %ld.%ld has no NodeList=", lineno, job, st);
		nl += 10;
		for (sp = nl; *sp && *sp != ' ' && *sp != '\n'; sp++)
			;
		if (sp == nl || (sp - nl == 6 && strncmp(nl, "(null)", 6) == 0))
			return pl_err_set(err, "line %ld: step %ld.%ld has no nodes", lineno, job, st);
		if (*step >= 0 && st != *step)
			continue;
		nfound++;
		if (strlen(found) + 24 < sizeof(found))
			snprintf(found + strlen(found), sizeof(found) - strlen(found), "%s%ld.%ld",
				 found[0] ? ", " : "", job, st);
		free(*nodelist);
		*nodelist = strndup(nl, (size_t)(sp - nl));
		if (!*nodelist)
			return pl_err_set(err, "out of memory");
		if (*step < 0)
			*step = st;
	}
	if (nfound == 1)
		return 0;
	free(*nodelist);
	*nodelist = NULL;
	if (nfound == 0 && *step >= 0)
		return pl_err_set(err, "Slurm lists no step %ld.%ld", job, *step);
	if (nfound == 0)
		return pl_err_set(err, "Slurm lists no numbered step of job %ld", job);
	*step = -1;
	return pl_err_set(err, "job %ld has several steps (%s): give JOBID.STEP", job, found);
}

/* Run scontrol -o show step ID; its stdout (caller frees), or NULL with err. */
static char *
run_scontrol(const struct watch_args *a, const char *id, pl_err_t *err)
{
	const char *prog = a->scontrol ? a->scontrol : "scontrol";
	char *argv[] = { (char *)prog, (char *)"-o", (char *)"show", (char *)"step", (char *)id,
			 NULL };
	posix_spawn_file_actions_t fa;
	struct buf out = BUF_INIT, errb = BUF_INIT;
	struct timespec t0, t;
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, status = 0, e;
	pid_t pid = -1;
	bool open_o = true, open_e = true, late = false;

	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
		pl_err_set(err, "pipe: %s", strerror(errno));
		goto fail;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	e = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	if (e) {
		pid = -1;
		pl_err_set(err, "%s: %s", ctl_clip_path(prog), strerror(e));
		goto fail;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (open_o || open_e) {
		struct pollfd pf[2] = { { open_o ? po[0] : -1, POLLIN, 0 },
					{ open_e ? pe[0] : -1, POLLIN, 0 } };
		long left;
		int k;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = a->timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0) {
			late = true;
			break;
		}
		if (poll(pf, 2, (int)left) < 0 && errno != EINTR)
			break;
		for (k = 0; k < 2; k++) {
			char chunk[4096];
			ssize_t r;

			if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(pf[k].fd, chunk, sizeof(chunk));
			if (r <= 0) {
				if (k == 0)
					open_o = false;
				else
					open_e = false;
				continue;
			}
			if ((k ? &errb : &out)->len < SCONTROL_OUT_MAX)
				buf_add(k ? &errb : &out, chunk, (size_t)r);
		}
	}
	if (late)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	pid = -1;
	if (late) {
		pl_err_set(err, "%s -o show step %s: no answer in %ld ms", ctl_clip_path(prog), id,
			   a->timeout_ms);
		goto fail;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		while (errb.len && (errb.s[errb.len - 1] == '\n'))
			errb.s[--errb.len] = '\0';
		pl_err_set(err, "%s -o show step %s failed: %s", ctl_clip_path(prog), id,
			   errb.len ? ctl_clip(errb.s) : "(nothing said)");
		goto fail;
	}
	buf_free(&errb);
	close(po[0]);
	close(pe[0]);
	if (out.bad) {
		buf_free(&out);
		pl_err_set(err, "out of memory");
		return NULL;
	}
	if (!out.s)
		buf_adds(&out, "");
	return buf_take(&out);
fail:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	for (e = 0; e < 2; e++) {
		if (po[e] >= 0)
			close(po[e]);
		if (pe[e] >= 0)
			close(pe[e]);
	}
	buf_free(&out);
	buf_free(&errb);
	return NULL;
}

/* ---- finding the leader ---------------------------------------------------- */

/* Ask where (desc names it), following redirects.  true with *view. */
static bool
ask_chain(struct wctx *c, const char *where, const char *desc, json_t **view)
{
	char cur[300], curdesc[512], leader[128], why[PL_ERR_TEXT], url[300];
	bool acting = false;
	int hop;

	snprintf(cur, sizeof(cur), "%s", where);
	snprintf(curdesc, sizeof(curdesc), "%s", desc);
	for (hop = 0;; hop++) {
		enum got g = fetch_at(c->a, cur, view, leader, sizeof(leader), &acting, why,
				      sizeof(why));

		if (g == GOT_VIEW) {
			snprintf(c->where, sizeof(c->where), "%s", cur);
			return true;
		}
		if (g != GOT_REDIRECT) {
			tried_add(&c->t, "%s: %s", curdesc, why);
			c->no_cred = g == GOT_NO_CRED;
			return false;
		}
		if (hop == MAX_HOPS) {
			tried_add(&c->t, "%s: sends to %s too (%d hops followed; not further)", curdesc,
				  ctl_clip(leader), MAX_HOPS);
			return false;
		}
		resolve(c, leader, url, sizeof(url));
		if (strcmp(url, cur) == 0) {
			tried_add(&c->t, "%s: names itself (%s) as the %s, yet leads it not", curdesc,
				  ctl_clip(leader), acting ? "acting leader" : "leader");
			return false;
		}
		snprintf(c->name, sizeof(c->name), "%s", leader);
		snprintf(curdesc, sizeof(curdesc), "%.100s (%s of %s, at %.200s)", leader,
			 acting ? "the acting leader" : "the leader", "the step", url);
		snprintf(cur, sizeof(cur), "%s", url);
	}
}

/* The local layoutd's steps of the job (GET /v1/watch): its only step, or -1. */
static long
local_step(struct wctx *c, char *why, size_t n)
{
	struct client_reply r;
	json_t *root, *steps, *s;
	long found = -1;
	size_t i, k = 0;
	pl_err_t err;

	pl_err_clear(&err);
	why[0] = '\0';
	if (!c->a->socket)
		return -1;
	if (client_request(c->a->socket, "GET", "/v1/watch", NULL, c->a->timeout_ms, &r,
			   &err) < 0) {
		tried_add(&c->t, "this node's layoutd (%s): %s", ctl_clip_path(c->a->socket),
			  err.text);
		return -1;
	}
	root = r.status == 200 && r.body ? json_loads(r.body, 0, NULL) : NULL;
	free(r.body);
	steps = json_object_get(root, "steps");
	json_array_foreach(steps, i, s) {
		if (json_integer_value(json_object_get(s, "job_id")) != c->a->job)
			continue;
		if (k++ == 0)
			found = (long)json_integer_value(json_object_get(s, "step_id"));
	}
	json_decref(root);
	if (k == 0)
		tried_add(&c->t, "this node's layoutd (%s): no step of job %ld runs here (or it is "
			  "not yours)", ctl_clip_path(c->a->socket), c->a->job);
	if (k > 1) {
		snprintf(why, n, "this node runs %zu steps of job %ld: give JOBID.STEP", k, c->a->job);
		return -2;
	}
	return found;
}

/*
 * This host's layoutd: its view when it leads, else the leader it names.
 * 1 with *view, 0 to go on with the step's nodes, -1 when the leader it
 * named did not answer (nothing else to ask).
 */
static int
ask_local(struct wctx *c, json_t **view)
{
	struct watch_args *a = c->a;
	char leader[128], why[PL_ERR_TEXT], url[300], desc[512];
	bool acting = false;
	enum got g = fetch_at(a, a->socket, view, leader, sizeof(leader), &acting, why, sizeof(why));

	if (g == GOT_VIEW) {
		snprintf(c->where, sizeof(c->where), "%s", a->socket);
		return 1;
	}
	tried_add(&c->t, "this node's layoutd (%s): %s", ctl_clip_path(a->socket), why);
	if (g != GOT_REDIRECT)
		return 0;
	resolve(c, leader, url, sizeof(url));
	snprintf(c->name, sizeof(c->name), "%s", leader);
	snprintf(desc, sizeof(desc), "%.100s (the %s named by this node, at %.200s)", leader,
		 acting ? "acting leader" : "leader", url);
	return ask_chain(c, url, desc, view) ? 1 : -1;
}

/*
 * The step's nodes into names: --nodes, or Slurm's (a->step set when it
 * was not given).  0, 1 when there are none (why in c->t), 2 after a usage
 * error.
 */
static int
step_nodes(struct wctx *c, struct hosts *names, bool *slurm)
{
	struct watch_args *a = c->a;
	char *nodelist = NULL, *out = NULL, id[48];
	pl_err_t err;
	int rv = 1;

	pl_err_clear(&err);
	*slurm = false;
	if (a->nodes) {
		if (hosts_expand(names, a->nodes, 100000, &err) < 0) {
			ctl_error("watch: --nodes=%s: %s", ctl_clip(a->nodes), err.text);
			return 2;
		}
		if (a->step < 0) {
			ctl_error("watch: with --nodes, give JOBID.STEP");
			return 2;
		}
		return 0;
	}
	if (a->step >= 0)
		snprintf(id, sizeof(id), "%ld.%ld", a->job, a->step);
	else
		snprintf(id, sizeof(id), "%ld", a->job);
	out = run_scontrol(a, id, &err);
	if (!out || watch_parse_steps(out, a->job, &a->step, &nodelist, &err) < 0)
		tried_add(&c->t, "Slurm: %s", err.text);
	else if (hosts_expand(names, nodelist, 100000, &err) < 0)
		tried_add(&c->t, "Slurm: step %s: NodeList=%s: %s", id, ctl_clip(nodelist), err.text);
	else
		rv = 0;
	*slurm = rv == 0;
	free(out);
	free(nodelist);
	return rv;
}

/*
 * Find the step's leader and fetch its view (*view, caller decrefs).
 * 0, or 1 after printing why there is none (2 after a usage error).
 */
static int
discover(struct wctx *c, json_t **view)
{
	struct watch_args *a = c->a;
	struct hosts names = { 0, NULL };
	char why[PL_ERR_TEXT], url[300], desc[512];
	bool slurm = false;
	long i;
	int rv = 1, k;

	*view = NULL;
	c->t.b.len = 0;
	if (c->t.b.s)
		c->t.b.s[0] = '\0';
	c->t.n = 0;
	c->name[0] = '\0';
	if (a->step < 0) {
		long st = local_step(c, why, sizeof(why));

		if (st == -2) {
			ctl_error("watch: %s", why);
			return 1;
		}
		a->step = st;
	}
	if (a->leader) {
		snprintf(url, sizeof(url), "http://%s", a->leader);
		snprintf(desc, sizeof(desc), "--leader %s", ctl_clip(a->leader));
		if (a->step < 0) {
			ctl_error("watch: with --leader, give JOBID.STEP");
			return 2;
		}
		if (ask_chain(c, url, desc, view))
			return 0;
		goto none;
	}
	if (a->socket && a->step >= 0) {
		k = ask_local(c, view);
		if (k > 0)
			return 0;
		if (k < 0)
			goto none;
	}
	rv = step_nodes(c, &names, &slurm);
	if (rv == 2)
		goto out;
	for (i = 0; rv == 0 && i < names.n && i < MAX_ASKED; i++) {
		resolve(c, names.names[i], url, sizeof(url));
		snprintf(c->name, sizeof(c->name), "%s", names.names[i]);
		snprintf(desc, sizeof(desc), "%.100s (node %ld of the step%s, at %.200s)", names.names[i],
			 i + 1, slurm ? " as Slurm lists it" : "", url);
		if (ask_chain(c, url, desc, view))
			goto out;
		if (c->no_cred)
			break;
	}
	if (names.n > MAX_ASKED)
		tried_add(&c->t, "(the step's other %ld nodes not asked: give --leader HOST:PORT)",
			  names.n - MAX_ASKED);
none:
	if (!c->map && c->map_tried)
		tried_add(&c->t, "(%s: the nodes were asked at NAME:%d)", c->map_why, PEERWIRE_PORT);
	if (a->step >= 0)
		ctl_error("watch: step %ld.%ld: no leader answered with its view; asked:%s", a->job,
			  a->step, c->t.b.s ? c->t.b.s : " nothing");
	else
		ctl_error("watch: job %ld: which step? asked:%s", a->job,
			  c->t.b.s ? c->t.b.s : " nothing");
	rv = 1;
out:
	hosts_free(&names);
	return rv;
}

/* ---- showing it ------------------------------------------------------------- */

struct marks {
	json_int_t *cul;		/* culprit ranks, sorted */
	size_t ncul;
	const char **hash;		/* their communicators' hashes */
	size_t nhash;
};

static int
cmp_int(const void *x, const void *y)
{
	json_int_t a = *(const json_int_t *)x, b = *(const json_int_t *)y;

	return a < b ? -1 : a > b;
}

static void
marks_of(json_t *view, struct marks *m)
{
	json_t *find = json_object_get(view, "findings"), *f, *r;
	size_t i, k, n = 0;

	memset(m, 0, sizeof(*m));
	json_array_foreach(find, i, f)
		n += json_array_size(json_object_get(f, "culprits"));
	m->cul = n ? calloc(n, sizeof(*m->cul)) : NULL;
	m->hash = json_array_size(find) ? calloc(json_array_size(find), sizeof(*m->hash)) : NULL;
	json_array_foreach(find, i, f) {
		const char *h = json_string_value(json_object_get(f, "comm_hash"));

		if (m->hash && h && *h)
			m->hash[m->nhash++] = h;
		json_array_foreach(json_object_get(f, "culprits"), k, r)
			if (m->cul)
				m->cul[m->ncul++] = json_integer_value(r);
	}
	if (m->ncul)
		qsort(m->cul, m->ncul, sizeof(*m->cul), cmp_int);
}

static bool
is_culprit(const struct marks *m, json_int_t rank)
{
	return m->ncul && bsearch(&rank, m->cul, m->ncul, sizeof(*m->cul), cmp_int);
}

/* Does rank r hold a communicator of a finding? */
static bool
in_group(const struct marks *m, json_t *r)
{
	json_t *cm;
	size_t i, k;

	json_array_foreach(json_object_get(r, "comms"), i, cm) {
		const char *h = json_string_value(json_object_get(cm, "hash"));

		for (k = 0; h && k < m->nhash; k++)
			if (strcmp(h, m->hash[k]) == 0)
				return true;
	}
	return false;
}

static const char *
vstr(json_t *o, const char *key, char *buf, size_t size)
{
	const char *v = json_string_value(json_object_get(o, key));

	return pl_clip(v && *v ? v : "-", buf, size);
}

static void
rank_rows(FILE *f, json_t *r, bool culprit, bool tty)
{
	char node[PL_CLIP_BUF], nic[PL_CLIP_BUF], name[PL_CLIP_BUF], func[PL_CLIP_BUF];
	char state[48], age[32], gpu[24] = "-";
	json_t *co = json_object_get(r, "coords"), *comms = json_object_get(r, "comms"), *st;
	bool exited = json_is_true(json_object_get(r, "exited"));
	size_t i, n = json_array_size(comms);

	st = json_object_get(r, "exit_status");
	if (exited && json_is_integer(st) && (json_integer_value(st) & 0x7f) == 0)
		snprintf(state, sizeof(state), "exited(%lld)",
			 (long long)(json_integer_value(st) >> 8 & 0xff));
	else if (exited && json_is_integer(st))
		snprintf(state, sizeof(state), "signal(%lld)",
			 (long long)(json_integer_value(st) & 0x7f));
	else if (exited)
		snprintf(state, sizeof(state), "exited");
	else if (json_is_false(json_object_get(r, "present")))
		snprintf(state, sizeof(state), "absent");
	else
		snprintf(state, sizeof(state), "idle");
	if (json_integer_value(json_object_get(r, "gpu")) >= 0)
		snprintf(gpu, sizeof(gpu), "%lld", (long long)json_integer_value(json_object_get(r, "gpu")));
	for (i = 0; i < (n ? n : 1); i++) {
		json_t *m = json_array_get(comms, i), *le = json_object_get(m, "last_entered");
		char what[48];

		snprintf(what, sizeof(what), "%s", state);
		snprintf(age, sizeof(age), "-");
		if (m && !exited && json_is_true(json_object_get(m, "in_flight"))) {
			snprintf(what, sizeof(what), "in-flight");
			snprintf(age, sizeof(age), "%.1fs",
				 json_number_value(json_object_get(m, "in_flight_s")));
		} else if (m && !exited) {
			if (json_is_true(json_object_get(m, "finalized")))
				snprintf(what, sizeof(what), "finalized");
			if (json_integer_value(json_object_get(m, "entered")) > 0)
				snprintf(age, sizeof(age), "%.1fs",
					 json_number_value(json_object_get(le, "age_s")));
		}
		if (culprit && tty)
			fputs("\033[1;31m", f);
		fprintf(f, "%-2s %6lld %-12.12s %3s %-8.8s %3lld %3lld %3lld %3lld %3lld  "
			"%-10.10s %-14.14s %8lld  %-11s %s", culprit ? ">>" : "",
			(long long)json_integer_value(json_object_get(r, "rank")),
			vstr(r, "node", node, sizeof(node)), gpu,
			vstr(r, "nic", nic, sizeof(nic)),
			(long long)json_integer_value(json_object_get(co, "tp")),
			(long long)json_integer_value(json_object_get(co, "cp")),
			(long long)json_integer_value(json_object_get(co, "ep")),
			(long long)json_integer_value(json_object_get(co, "dp")),
			(long long)json_integer_value(json_object_get(co, "pp")),
			m ? vstr(m, "name", name, sizeof(name)) : "-",
			m ? vstr(le, "func", func, sizeof(func)) : "-",
			(long long)json_integer_value(json_object_get(le, "seq")), what, age);
		if (culprit && tty)
			fputs("\033[0m", f);
		fputc('\n', f);
	}
}

/* A finding's text whole (pl_clip would cut it at 64): control bytes as
 * '?', at most max bytes. */
static void
put_text(FILE *f, const char *t, size_t max)
{
	size_t i;

	for (i = 0; t[i] && i < max; i++)
		fputc((unsigned char)t[i] < 0x20 || t[i] == 0x7f ? '?' : t[i], f);
	if (t[i])
		fputs("...", f);
}

/* A line per node; marked when it holds a culprit or is lost. */
static void
print_nodes(FILE *f, json_t *v, const struct marks *mk, bool tty)
{
	char b1[PL_CLIP_BUF], b2[PL_CLIP_BUF], b3[PL_CLIP_BUF];
	json_t *nodes = json_object_get(v, "nodes"), *ranks = json_object_get(v, "ranks");
	json_t *find = json_object_get(v, "findings"), *x;
	const char **held = mk->ncul ? calloc(mk->ncul, sizeof(*held)) : NULL;
	size_t i, nheld = 0;

	/* the culprits' nodes, in one pass over the ranks */
	json_array_foreach(ranks, i, x)
		if (held && nheld < mk->ncul &&
		    is_culprit(mk, json_integer_value(json_object_get(x, "rank"))))
			held[nheld++] = json_string_value(json_object_get(x, "node"));
	fprintf(f, "%-2s %-16s %-8s %6s %8s\n", "", "NODE", "STATE", "RANKS", "LAST");
	json_array_foreach(nodes, i, x) {
		const char *name = json_string_value(json_object_get(x, "name"));
		json_t *last = json_object_get(x, "last_s"), *r;
		bool hit = false;
		size_t k;

		for (k = 0; k < nheld && !hit; k++)
			hit = strcmp(held[k], name) == 0;
		json_array_foreach(find, k, r) {
			const char *fn = json_string_value(json_object_get(r, "node"));

			if (fn && strcmp(fn, name) == 0 &&
			    strcmp(json_string_value(json_object_get(r, "kind")), "node-lost") == 0)
				hit = true;
		}
		if (hit && tty)
			fputs("\033[1;31m", f);
		if (json_is_number(last))
			snprintf(b3, sizeof(b3), "%.1fs", json_number_value(last));
		else
			snprintf(b3, sizeof(b3), "-");
		fprintf(f, "%-2s %-16.16s %-8.8s %6lld %8s", hit ? ">>" : "",
			vstr(x, "name", b1, sizeof(b1)), vstr(x, "state", b2, sizeof(b2)),
			(long long)json_integer_value(json_object_get(x, "ranks")), b3);
		if (hit && tty)
			fputs("\033[0m", f);
		fputc('\n', f);
	}
	free(held);
}

/* A finding's stack files (NODE:PATH), each with how to read it. */
static void
print_stack_files(FILE *f, json_t *finding)
{
	json_t *files = json_object_get(finding, "stack_files"), *x;
	char b[PL_CLIP_BUF];
	size_t i;

	json_array_foreach(files, i, x)
		if (json_is_string(x))
			fprintf(f, "   stacks: %s\n", pl_clip(json_string_value(x), b, sizeof(b)));
}

static void
print_view(FILE *f, json_t *v, const struct wctx *c, bool tty)
{
	char b1[PL_CLIP_BUF], b2[PL_CLIP_BUF], b3[PL_CLIP_BUF];
	json_t *nodes = json_object_get(v, "nodes"), *ranks = json_object_get(v, "ranks");
	json_t *find = json_object_get(v, "findings"), *lay = json_object_get(v, "layout"), *x;
	const char *role = json_string_value(json_object_get(v, "role"));
	size_t i, nr = json_array_size(ranks), shown = 0, left = 0;
	bool condensed = nr > CONDENSE_AT && !c->a->all_ranks;
	struct marks m;

	marks_of(v, &m);
	fprintf(f, "step %ld.%ld  world %lld  tp%lld cp%lld ep%lld dp%lld pp%lld  %zu nodes, %zu ranks\n",
		c->a->job, c->a->step, (long long)json_integer_value(json_object_get(v, "world")),
		(long long)json_integer_value(json_object_get(lay, "tp")),
		(long long)json_integer_value(json_object_get(lay, "cp")),
		(long long)json_integer_value(json_object_get(lay, "ep")),
		(long long)json_integer_value(json_object_get(lay, "dp")),
		(long long)json_integer_value(json_object_get(lay, "pp")), json_array_size(nodes), nr);
	fprintf(f, "leader %s%s%s%s (%s)\n", vstr(v, "self", b1, sizeof(b1)),
		role && strcmp(role, "acting") == 0 ? ", acting for " : "",
		role && strcmp(role, "acting") == 0 ? vstr(v, "leader", b2, sizeof(b2)) : "",
		role && strcmp(role, "unordered") == 0 ? ", the step's node order unknown to it" : "",
		pl_clip(c->where, b3, sizeof(b3)));
	print_nodes(f, v, &m, tty);
	fprintf(f, "%-2s %6s %-12s %3s %-8s %3s %3s %3s %3s %3s  %-10s %-14s %8s  %-11s %s\n", "",
		"RANK", "NODE", "GPU", "NIC", "TP", "CP", "EP", "DP", "PP", "COMM", "COLLECTIVE",
		"SEQ", "STATE", "FOR");
	json_array_foreach(ranks, i, x) {
		bool cul = is_culprit(&m, json_integer_value(json_object_get(x, "rank")));

		if (condensed && ((!cul && !in_group(&m, x)) || shown >= GROUP_ROWS)) {
			left++;
			continue;
		}
		rank_rows(f, x, cul, tty);
		shown++;
	}
	if (left && json_array_size(find))
		fprintf(f, "   (%zu ranks more: the culprits and their groups are shown; --all-ranks or "
			"--json for every rank)\n", left);
	else if (left)
		fprintf(f, "   (%zu ranks, nothing found: --all-ranks or --json for every rank)\n",
			left);
	if (json_array_size(find) == 0)
		fprintf(f, "findings: none\n");
	else
		fprintf(f, "findings:\n");
	json_array_foreach(find, i, x) {
		const char *t = json_string_value(json_object_get(x, "text"));

		const char *k = vstr(x, "kind", b1, sizeof(b1));
		const char *sev = json_string_value(json_object_get(x, "severity"));
		/* the leader's warnings (advice, a busy or slow rank, a culprit
		 * only inferred) in yellow, the rest in red */
		bool warning = sev && strcmp(sev, "warning") == 0;

		if (tty)
			fputs(warning ? "\033[1;33m" : "\033[1;31m", f);
		fprintf(f, ">> %s: ", k);
		put_text(f, t && *t ? t : "-", FINDING_TEXT_MAX);
		if (tty)
			fputs("\033[0m", f);
		fputc('\n', f);
		print_stack_files(f, x);
	}
	free(m.cul);
	free(m.hash);
}

/* ---- this node's view (--local) ------------------------------------------- */

/* One task's rows: a row per communicator (or one row when it has none). */
static void
local_task_rows(FILE *f, json_t *t)
{
	char node[PL_CLIP_BUF], name[PL_CLIP_BUF], func[PL_CLIP_BUF], state[64];
	json_t *co = json_object_get(t, "coords"), *comms = json_object_get(t, "comms"), *m;
	bool exited = json_is_true(json_object_get(t, "exited"));
	json_t *st = json_object_get(t, "exit_status");
	size_t i, n = json_array_size(comms);

	if (exited && json_is_integer(st))
		snprintf(state, sizeof(state), "exited(%lld)", (long long)json_integer_value(st));
	else if (exited)
		snprintf(state, sizeof(state), "exited");
	else {
		const char *rs = json_string_value(json_object_get(t, "record_state"));

		/* A record read well: the rank is between collectives. */
		snprintf(state, sizeof(state), "%s", !rs ? "-" : strcmp(rs, "ok") == 0 ? "idle" : rs);
	}
	for (i = 0; i < (n ? n : 1); i++) {
		char what[64] = "-", age[32] = "-";

		m = json_array_get(comms, i);
		fprintf(f, "%5lld %-10.10s %7lld %3lld %3lld %3lld %3lld %3lld  ",
			(long long)json_integer_value(json_object_get(t, "rank")),
			vstr(t, "node", node, sizeof(node)),
			(long long)json_integer_value(json_object_get(t, "pid")),
			(long long)json_integer_value(json_object_get(co, "tp")),
			(long long)json_integer_value(json_object_get(co, "cp")),
			(long long)json_integer_value(json_object_get(co, "ep")),
			(long long)json_integer_value(json_object_get(co, "dp")),
			(long long)json_integer_value(json_object_get(co, "pp")));
		if (!m) {
			fprintf(f, "%-14s %-13s %8s  %-12s %s\n", "-", "-", "-", state, "-");
			continue;
		}
		{
			json_t *le = json_object_get(m, "last_entered");

			if (!exited && json_is_true(json_object_get(m, "in_flight"))) {
				snprintf(what, sizeof(what), "in-flight");
				snprintf(age, sizeof(age), "%.1fs",
					 json_number_value(json_object_get(m, "in_flight_s")));
			} else if (!exited) {
				snprintf(what, sizeof(what), "%s",
					 json_is_true(json_object_get(m, "finalized")) ? "finalized" : state);
				if (json_integer_value(json_object_get(m, "entered")) > 0)
					snprintf(age, sizeof(age), "%.1fs",
						 json_number_value(json_object_get(le, "age_s")));
			} else {
				snprintf(what, sizeof(what), "%s", state);
			}
			fprintf(f, "%-14.14s %-13.13s %8lld  %-12s %s\n", vstr(m, "name", name, sizeof(name)),
				vstr(le, "func", func, sizeof(func)),
				(long long)json_integer_value(json_object_get(le, "seq")), what, age);
		}
	}
}

static void
local_verdicts(FILE *f, json_t *verd)
{
	char comm[PL_CLIP_BUF], func[PL_CLIP_BUF], kind[PL_CLIP_BUF];
	size_t i;

	if (json_array_size(verd) == 0) {
		fprintf(f, "verdicts: none\n");
		return;
	}
	fprintf(f, "verdicts:\n");
	for (i = 0; i < json_array_size(verd); i++) {
		json_t *v = json_array_get(verd, i), *st = json_object_get(v, "exit_status");

		vstr(v, "kind", kind, sizeof(kind));
		if (strcmp(kind, "exited") == 0) {
			if (json_is_integer(st))
				fprintf(f, "  rank %lld (pid %lld) exited with wait status %lld\n",
					(long long)json_integer_value(json_object_get(v, "rank")),
					(long long)json_integer_value(json_object_get(v, "pid")),
					(long long)json_integer_value(st));
			else
				fprintf(f, "  rank %lld (pid %lld) exited\n",
					(long long)json_integer_value(json_object_get(v, "rank")),
					(long long)json_integer_value(json_object_get(v, "pid")));
			continue;
		}
		fprintf(f, "  %s: rank %lld (pid %lld) in %s: %s seq %lld for %.1f s\n", kind,
			(long long)json_integer_value(json_object_get(v, "rank")),
			(long long)json_integer_value(json_object_get(v, "pid")),
			vstr(v, "comm", comm, sizeof(comm)), vstr(v, "func", func, sizeof(func)),
			(long long)json_integer_value(json_object_get(v, "seq")),
			json_number_value(json_object_get(v, "for_s")));
	}
}

/* The job's steps of the daemon's answer (an array; caller decrefs), NULL
 * when the answer is not a watch report. */
static json_t *
local_select(json_t *root, long job, long step)
{
	json_t *steps = json_object_get(root, "steps"), *out, *s;
	size_t i;

	if (!json_is_array(steps) || !(out = json_array()))
		return NULL;
	json_array_foreach(steps, i, s) {
		if (json_integer_value(json_object_get(s, "job_id")) == job &&
		    (step < 0 || json_integer_value(json_object_get(s, "step_id")) == step))
			json_array_append(out, s);
	}
	return out;
}

static void
local_print(FILE *f, json_t *root, json_t *sel)
{
	json_t *s, *t;
	size_t i, k;

	json_array_foreach(sel, i, s) {
		fprintf(f, "step %lld.%lld  %s  (sample every %lld ms, hang threshold %lld s)\n",
			(long long)json_integer_value(json_object_get(s, "job_id")),
			(long long)json_integer_value(json_object_get(s, "step_id")),
			json_string_value(json_object_get(s, "state")) ?
			json_string_value(json_object_get(s, "state")) : "?",
			(long long)json_integer_value(json_object_get(root, "interval_ms")),
			(long long)json_integer_value(json_object_get(root, "hang_threshold_s")));
		fprintf(f, "%5s %-10s %7s %3s %3s %3s %3s %3s  %-14s %-13s %8s  %-12s %s\n", "RANK",
			"NODE", "PID", "TP", "CP", "EP", "DP", "PP", "COMM", "COLLECTIVE", "SEQ",
			"STATE", "FOR");
		json_array_foreach(json_object_get(s, "tasks"), k, t)
			local_task_rows(f, t);
		local_verdicts(f, json_object_get(s, "verdicts"));
	}
}

/* What one frame of this node's view needs. */
struct local_view {
	const struct ctl_dargs *a;
	long job, step;
	const char *jobarg;	/* as given, for the message */
};

/* One frame of this node's view of the job (GET /v1/watch). */
static int
local_frame(void *ctx, bool clear)
{
	struct local_view *lv = ctx;
	long status;
	char *body = ctl_ask(lv->a, "watch", "GET", "/v1/watch", NULL, &status);
	json_t *root = body ? json_loads(body, 0, NULL) : NULL, *sel;

	free(body);
	sel = root ? local_select(root, lv->job, lv->step) : NULL;
	if (!sel) {
		if (root)
			ctl_error("watch: the answer is not a layoutd watch report");
		json_decref(root);
		return 1;
	}
	if (json_array_size(sel) == 0) {
		ctl_error("watch: no step of job %s is watched on this node (or it is not yours)",
			  lv->jobarg);
		json_decref(sel);
		json_decref(root);
		return 1;
	}
	if (lv->a->json) {
		char *text = json_dumps(sel, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

		if (text)
			puts(text);
		free(text);
	} else {
		if (clear)
			fputs(CLEAR_SCREEN, stdout);
		local_print(stdout, root, sel);
	}
	json_decref(sel);
	json_decref(root);
	return 0;
}

/* ---- the command --------------------------------------------------------------- */

static int watch_exec(int argc, char **argv);

const struct ctl_cmd ctl_cmd_watch = {
	"watch",
	"JOBID[.STEP] [--once] [--json] [--interval MS] [--all-ranks]\n"
	"[--leader HOST:PORT] [--nodes HOSTLIST] [--topology MAP]\n"
	"[--munge-socket PATH] [--scontrol PATH] [--local]\n"
	"[--socket PATH|http://HOST:PORT] [--timeout MS]\n"
	"JOBID[.STEP] --stack RANK [--state-dir PATH]",
	"show a job step's ranks in NCCL as its leader sees them, live",
	"Show the whole step as its leader sees it (GET /v1/watch/step), from any node\n"
	"of the step or a login host: its nodes and their state, one row per rank and\n"
	"communicator with the rank's node, GPU, NIC, tp/cp/ep/dp/pp coordinates, the\n"
	"collective it last entered, its sequence number, its state and for how long,\n"
	"then the leader's findings.  The culprits (and nodes holding them) are marked\n"
	">> (bold red on a terminal).  Beyond 64 ranks only the culprits and the ranks\n"
	"of their communicators are shown in full (--all-ranks: every rank).\n"
	"The leader is found so: --leader HOST:PORT (a peer listener) is asked; else\n"
	"this host's layoutd (--socket), which answers when it leads the step and\n"
	"names the leader when it takes part; else the step's nodes, --nodes HOSTLIST\n"
	"or Slurm's (scontrol -o show step; --scontrol PATH), in order, over their\n"
	"peer listeners, following a node's answer naming the leader (two hops at\n"
	"most).  Nodes are reached at the address and peer port the cluster map gives\n"
	"(--topology MAP, else this host's layoutd's map; NAME:6830 without one).\n"
	"Over TCP each request carries a munge credential made as the calling user\n"
	"(payload: the request line, 10 s to live; --munge-socket for another munged).\n"
	"Root and the Slurm user see every step, others only their own.\n"
	"--timeout bounds each request (default 5000 ms).  The view is refreshed in\n"
	"place every --interval ms (default 1000) until interrupted; --once prints it\n"
	"once, --json prints the leader's JSON, every page of ranks merged.\n"
	"--local shows this node's view instead (GET /v1/watch on --socket).\n"
	"--stack RANK prints the stacks this node's layoutd captured of RANK, a culprit\n"
	"of a critical finding (a hang, a collective stuck on the GPU), as the alert's\n"
	"stack_file and the findings name it: STATE_DIR/JOBID.STEP/stack-rankRANK.txt\n"
	"(step 0 when not given; --state-dir: layoutd's state_dir, default\n"
	"/var/lib/parallel-layout, %n this node's name, $SLURMD_NODENAME or hostname -s;\n"
	"root's to read).  Run it on the culprit's node.\n"
	"Exit status: 0 shown, 1 no view (why, and each node asked, on stderr), 2 usage.\n",
	watch_exec,
	NULL
};

static void
watch_help(void)
{
	ctl_cmd_help(&ctl_cmd_watch, NULL);
}

static volatile sig_atomic_t stop_now;

static void
on_stop(int sig)
{
	(void)sig;
	stop_now = 1;
}

/*
 * The view shown once, or live: frame(ctx, clear) fetched and printed
 * again every interval_ms until SIGINT or SIGTERM, on a terminal in place
 * (clear: the frame wipes the screen before it prints).  A frame returns
 * 0, or the exit status that ends the view; the last one is returned.
 */
static int
live(bool once, long interval_ms, int (*frame)(void *ctx, bool clear), void *ctx)
{
	bool clear = !once && isatty(STDOUT_FILENO);
	int rv;

	if (!once) {
		signal(SIGINT, on_stop);
		signal(SIGTERM, on_stop);
	}
	for (;;) {
		rv = frame(ctx, clear);
		fflush(stdout);
		if (rv || once || stop_now)
			break;
		{
			struct timespec ts = { interval_ms / 1000, (interval_ms % 1000) * 1000000L };

			while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop_now)
				;
		}
		if (stop_now)
			break;
	}
	return rv;
}

/* One frame of the step's view: from the leader found before, or a new
 * search when it fails. */
static int
step_frame(void *ctx, bool clear)
{
	struct wctx *c = ctx;
	struct watch_args *a = c->a;
	json_t *view = NULL;
	char leader[128], why[PL_ERR_TEXT];
	bool acting;
	int rv = 0;

	if (!c->where[0] || fetch_at(a, c->where, &view, leader, sizeof(leader), &acting, why,
				     sizeof(why)) != GOT_VIEW) {
		c->where[0] = '\0';
		rv = discover(c, &view);
		if (rv)
			return rv;
	}
	if (a->json) {
		if (json_dumpf(view, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
			       JSON_REAL_PRECISION(12)) < 0)
			rv = 1;
		fputc('\n', stdout);
	} else {
		if (clear)
			fputs(CLEAR_SCREEN, stdout);
		print_view(stdout, view, c, c->tty);
	}
	json_decref(view);
	return rv;
}

/* Show the step (live unless once; json only once); the exit status: 0
 * shown, 1 no view, 2 usage. */
static int
watch_step(struct watch_args *a)
{
	struct wctx c;
	int rv;

	memset(&c, 0, sizeof(c));
	c.a = a;
	c.tty = isatty(STDOUT_FILENO);
	rv = live(a->once, a->interval_ms, step_frame, &c);
	topo_free(c.map);
	buf_free(&c.t.b);
	return rv;
}

/* JOBID or JOBID.STEP; *step -1 when not given.  -1 when malformed. */
static int
parse_jobstep(const char *s, long *job, long *step)
{
	char *end = NULL;

	errno = 0;
	*job = strtol(s, &end, 10);
	if (errno || end == s || *job < 0)
		return -1;
	*step = -1;
	if (*end == '.') {
		const char *p = end + 1;

		*step = strtol(p, &end, 10);
		if (errno || end == p || *step < 0)
			return -1;
	}
	return *end ? -1 : 0;
}

/* HOST:PORT, [V6]:PORT; the port 1 to 65535. */
static bool
leader_ok(const char *s)
{
	const char *colon = strrchr(s, ':');
	char *end = NULL;
	long port;

	if (!colon || colon == s || strpbrk(s, "/?#@ \t"))
		return false;
	if (s[0] == '[' ? colon[-1] != ']' || colon - s < 3 : memchr(s, ':', (size_t)(colon - s)) != NULL)
		return false;
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	return !errno && end != colon + 1 && !*end && port >= 1 && port <= 65535;
}

#define STACK_SHOW_MAX (2L << 20)	/* a stack file shown, at most */

/* This node's name: $SLURMD_NODENAME, else the short host name. */
static void
this_node(char *out, size_t n)
{
	const char *env = getenv("SLURMD_NODENAME");

	if (env && *env) {
		snprintf(out, n, "%s", env);
		return;
	}
	if (gethostname(out, n) < 0)
		snprintf(out, n, "localhost");
	out[n - 1] = '\0';
	out[strcspn(out, ".")] = '\0';
}

/* --stack RANK: the culprit's stack file of job.step (step 0 when not
 * given) as this node's layoutd wrote it, printed as it is. */
static int
watch_stack(long job, long step, const char *rank_text, const char *state_dir)
{
	char node[256], path[PATH_MAX], buf[8192], *end = NULL;
	long rank, total = 0;
	pl_err_t err;
	size_t n;
	FILE *f;

	errno = 0;
	rank = strtol(rank_text, &end, 10);
	if (errno || end == rank_text || *end || rank < 0 || rank > 2147483647L) {
		ctl_error("watch: --stack %s: expected a rank, a whole number from 0 to 2147483647",
			  ctl_clip(rank_text));
		return 2;
	}
	this_node(node, sizeof(node));
	pl_err_clear(&err);
	if (stackfile_path(path, sizeof(path), state_dir ? state_dir : STACKFILE_STATE_DIR, node,
			   (uint64_t)job, (uint64_t)(step < 0 ? 0 : step), rank, &err) < 0) {
		ctl_error("watch --stack: %s (--state-dir: layoutd's state_dir)", err.text);
		return 2;
	}
	f = fopen(path, "re");
	if (!f) {
		ctl_error("watch --stack %ld: %s: %s (a culprit of a critical finding is captured "
			  "on its own node; see the alert's stack_file)", rank, ctl_clip(path),
			  strerror(errno));
		return 1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && total < STACK_SHOW_MAX) {
		fwrite(buf, 1, n, stdout);
		total += (long)n;
	}
	fclose(f);
	return 0;
}

/* watch's options, from the table of the commands that ask a layoutd
 * (ctl_daemon.c); those of WATCH_VALUES are refused without a value. */
#define WATCH_OPTS (D_COMMON | D_BIT(D_JSON) | D_BIT(D_ONCE) | D_BIT(D_LOCAL) | \
		    D_BIT(D_ALL_RANKS) | D_BIT(D_INTERVAL) | WATCH_VALUES | D_ARG)
#define WATCH_VALUES (D_BIT(D_LEADER) | D_BIT(D_NODES) | D_BIT(D_TOPOLOGY) | \
		      D_BIT(D_MUNGE_SOCKET) | D_BIT(D_SCONTROL) | D_BIT(D_STACK) | \
		      D_BIT(D_STATE_DIR))

static int
watch_exec(int argc, char **argv)
{
	char jobbuf[PL_CLIP_BUF];
	long job, step;
	struct ctl_dargs a;
	int rv;

	rv = ctl_dparse(argc, argv, WATCH_OPTS, WATCH_VALUES, &a, watch_help);
	if (rv)
		return rv < 0 ? 0 : rv;
	if (!a.arg) {
		ctl_error("watch: which job? give JOBID or JOBID.STEP (see '" CTL_PROG " watch --help')");
		return 2;
	}
	if (parse_jobstep(a.arg, &job, &step) < 0) {
		ctl_error("watch: '%s': expected JOBID or JOBID.STEP (whole numbers, e.g. 1234 or 1234.0)",
			  pl_clip(a.arg, jobbuf, sizeof(jobbuf)));
		return 2;
	}
	if (a.leader && !leader_ok(a.leader)) {
		ctl_error("watch: --leader %s: expected HOST:PORT, a layoutd's peer listener (e.g. "
			  "gpu001:6830 or [fd00::1]:6830)", ctl_clip(a.leader));
		return 2;
	}
	if (a.stack)
		return watch_stack(job, step, a.stack, a.state_dir);
	if (a.state_dir) {
		ctl_error("watch: --state-dir goes with --stack RANK");
		return 2;
	}
	if (a.json)
		a.once = true;
	if (!a.local) {
		struct watch_args sa = {
			.job = job, .step = step, .socket = a.socket, .leader = a.leader,
			.nodes = a.nodes, .topology = a.topology, .munge_socket = a.munge_socket,
			.scontrol = a.scontrol, .timeout_ms = a.timeout_ms,
			.interval_ms = a.interval_ms, .once = a.once, .json = a.json,
			.all_ranks = a.all_ranks,
		};

		return watch_step(&sa);
	}
	if (a.leader || a.nodes || a.topology || a.munge_socket || a.scontrol || a.all_ranks) {
		ctl_error("watch: --local shows this node's view: --leader, --nodes, --topology, "
			  "--munge-socket, --scontrol and --all-ranks do not apply");
		return 2;
	}
	{
		struct local_view lv = { &a, job, step, a.arg };

		return live(a.once, a.interval_ms, local_frame, &lv);
	}
}
