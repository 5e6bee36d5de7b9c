/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd's HTTP side.  One generic callback routes by path through the
 * route table, which is also the only source of the 404 message and of
 * 405's Allow; it checks who is calling (SO_PEERCRED on the unix socket,
 * nothing over TCP) against the route, and each handler ends in exactly
 * one reply.  The placement is lib/'s proto_answer() on the parsed
 * request, serialized once with proto_placement_json(): the plugin's
 * in-process fallback runs the same code on the same map.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "buf.h"
#include "layoutd.h"
#include "watch/alert.h"
#include "layoutd_conn.h"
#include "layoutd_reply.h"
#include "watch/peer.h"
#include "layoutd_steps.h"
#include "watch/view.h"

#define LD_LOG_ERROR_MAX 300

/* Who asks, as far as the route and the steps are concerned. */
struct caller {
	struct ld_peer peer;
	bool trusted;		/* root, slurm_user, or TCP with tcp_access = trusted */
	char who[48];		/* for the log: "uid 1000", "tcp" */
};

static const struct {
	enum evhttp_cmd_type m;
	const char *name;
} methods[] = {
	{ EVHTTP_REQ_GET, "GET" },
	{ EVHTTP_REQ_HEAD, "HEAD" },
	{ EVHTTP_REQ_POST, "POST" },
	{ EVHTTP_REQ_PUT, "PUT" },
	{ EVHTTP_REQ_DELETE, "DELETE" },
	{ EVHTTP_REQ_OPTIONS, "OPTIONS" },
	{ EVHTTP_REQ_TRACE, "TRACE" },
	{ EVHTTP_REQ_CONNECT, "CONNECT" },
	{ EVHTTP_REQ_PATCH, "PATCH" },
};

#define NMETHODS (sizeof(methods) / sizeof(methods[0]))

static const char *
method_name(enum evhttp_cmd_type m)
{
	size_t i;

	for (i = 0; i < NMETHODS; i++)
		if (methods[i].m == m)
			return methods[i].name;
	return "?";
}

/* ---- GET /v1/health ---- */

static void
do_health(struct ld *d, struct evhttp_request *req, const struct caller *who)
{
	const struct ld_load *l = d->cur;
	json_t *disc = json_array(), *root;
	struct ld_conn_stats cs;
	int i;

	ld_conns_stats(d->conns, &cs);
	for (i = 0; disc && i < l->ndisc; i++)
		json_array_append_new(disc, json_string(l->disc[i]));
	root = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:o, s:f, s:I, s:I, s:I, s:I, s:s, "
			 "s:{s:I, s:I, s:I, s:I, s:I, s:I}}",
			 "status", l->ndisc ? "degraded" : "ok", "node", l->conf.node_name,
			 "map", l->map->name, "map_nodes", (json_int_t)l->map->nnodes,
			 "map_file", l->conf.map, "hwloc_check", l->conf.hwloc_check,
			 "discrepancies", disc,
			 "uptime_s", (ld_now_ms() - ((double)d->start.tv_sec * 1e3 +
						     (double)d->start.tv_nsec / 1e6)) / 1e3,
			 "requests", (json_int_t)d->requests, "reloads", (json_int_t)d->reloads,
			 "reload_failures", (json_int_t)d->reload_failures,
			 "slow_answers", (json_int_t)d->slow_answers,
			 "version", PACKAGE_VERSION,
			 "connections", "open", (json_int_t)cs.open, "max", (json_int_t)cs.max,
			 "accepted", (json_int_t)cs.accepted, "shed", (json_int_t)cs.shed,
			 "timed_out", (json_int_t)cs.timed_out,
			 "accept_errors", (json_int_t)cs.accept_errors);
	ld_reply_json(req, 200, root);
}

/* ---- GET /v1/topology ---- */

static void
do_topology(struct ld *d, struct evhttp_request *req, const struct caller *who)
{
	ld_reply_text(req, 200, d->cur->map_json);
}

/* ---- POST /v1/placement ---- */

/*
 * The log line of a placement, and the step it leaves for /v1/steps.
 * Only a trusted caller's steps are recorded: anybody may ask for a
 * placement, but a job id is only believed from slurmstepd or root.
 */
static void
record_step(struct ld *d, const struct caller *who, const struct proto_request *pr,
	    const struct proto_placement *pp, int status, const char *errmsg, double ms)
{
	struct ld_step s;
	char spec[PL_CLIP_BUF];
	struct buf eb = BUF_INIT;
	char job[64] = "";
	long i;

	memset(&s, 0, sizeof(s));
	s.job_id = s.step_id = s.uid = -1;
	if (pr) {
		s.job_id = pr->job_id;
		s.step_id = pr->step_id;
		s.uid = pr->uid;
		s.spec = (char *)pr->spec;
		s.nnodes = pr->nnodes;
		for (i = 0; i < pr->nnodes; i++)
			s.world += pr->nodes[i].ntasks;
	}
	if (pp) {
		s.world = pp->world;
		snprintf(s.strategy, sizeof(s.strategy), "%s", pp->strategy);
	}
	s.time = time(NULL);
	s.status = status;
	s.ms = ms;
	if (status == 200)
		d->placements++;
	else
		d->placement_errors++;
	if (who->trusted && ld_steps_add(d->steps, &s) < 0)
		ld_log(&d->log, "out of memory: a step is not recorded");
	if (who->trusted && s.job_id >= 0)
		snprintf(job, sizeof(job), " job %ld.%ld", s.job_id, s.step_id);
	ld_log(&d->log, "placement%s: %s on %ld nodes, %ld tasks: %d%s%s%s in %.1f ms; caller %s%s",
	       job, pr ? pl_clip(pr->spec, spec, sizeof(spec)) : "-", s.nnodes, s.world, status,
	       errmsg ? " (" : "", errmsg ? ld_escape(&eb, errmsg, LD_LOG_ERROR_MAX) : "",
	       errmsg ? ")" : "", ms, who->who, who->trusted ? "" : " (untrusted: not recorded)");
	buf_free(&eb);
	if (ms > (double)d->cur->conf.request_timeout_ms) {
		d->slow_answers++;
		ld_log(&d->log, "placement%s took %.0f ms, more than request_timeout_ms %ld: the caller has likely given up waiting (the answer is sent all the same; %lu slow answers so far)",
		       job, ms, d->cur->conf.request_timeout_ms, d->slow_answers);
	}
}

/* The request body as text: NULL with *status and msg set when it cannot be. */
static char *
request_body(struct evhttp_request *req, int *status, const char **msg)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	char *body = malloc(len + 1);

	*status = 500;
	*msg = "out of memory";
	if (!body)
		return NULL;
	if (evbuffer_copyout(in, body, len) != (ev_ssize_t)len) {
		free(body);
		*msg = "cannot read the request body";
		return NULL;
	}
	body[len] = '\0';
	if (strlen(body) != len) {
		free(body);
		*status = 400;
		*msg = "request body contains a NUL byte: expected JSON text";
		return NULL;
	}
	return body;
}

static void
do_placement(struct ld *d, struct evhttp_request *req, const struct caller *who)
{
	double t0 = ld_now_ms();
	struct proto_request pr;
	struct proto_placement pp;
	const char *msg = NULL;
	char *body, *text = NULL;
	bool parsed = false, placed = false;
	int status = 500;
	pl_err_t err;

	memset(&pr, 0, sizeof(pr));
	memset(&pp, 0, sizeof(pp));
	pl_err_clear(&err);
	body = request_body(req, &status, &msg);
	if (body) {
		msg = NULL;
		status = 400;
		parsed = proto_request_parse(body, &pr, &err) == 0;
		if (parsed && proto_answer(d->cur->map, &pr, &pp, &status, &err) == 0) {
			text = proto_placement_json(&pp);
			placed = text != NULL;
			status = placed ? 200 : 500;
			if (!placed)
				pl_err_set(&err, "out of memory");
		}
		if (!placed)
			msg = err.text;
	}
	record_step(d, who, parsed ? &pr : NULL, placed ? &pp : NULL, status, msg,
		    ld_now_ms() - t0);
	if (placed)
		ld_reply_text(req, 200, text);
	else
		ld_reply_error(req, status, msg);
	free(text);
	proto_placement_free(&pp);
	if (parsed)
		proto_request_free(&pr);
	free(body);
}

/* ---- GET /v1/steps ---- */

static void
do_steps(struct ld *d, struct evhttp_request *req, const struct caller *who)
{
	json_t *arr = ld_steps_json(d->steps, who->trusted, who->peer.uid);

	ld_reply_json(req, 200, arr ? json_pack("{s:o}", "steps", arr) : NULL);
}

/* ---- the watch: POST /v1/watch/tasks, POST /v1/watch/exit, GET /v1/watch ---- */

static void
watch_post(struct ld *d, struct evhttp_request *req,
	   int (*fn)(struct ld_watch *, const char *, pl_err_t *))
{
	const char *msg = NULL;
	struct buf eb = BUF_INIT;
	char *body;
	int status = 500;
	pl_err_t err;

	pl_err_clear(&err);
	body = request_body(req, &status, &msg);
	if (body) {
		status = fn(d->watch, body, &err);
		msg = status == 200 ? NULL : err.text;
	}
	if (msg) {
		ld_log(&d->log, "watch: refused (%d): %s", status, ld_escape(&eb, msg, LD_LOG_ERROR_MAX));
		ld_reply_error(req, status, msg);
	} else {
		ld_reply_text(req, 200, "{\"status\":\"ok\"}");
	}
	buf_free(&eb);
	free(body);
}

static void
do_watch_tasks(struct ld *d, struct evhttp_request *req, const struct caller *who)
{
	watch_post(d, req, ld_watch_register_many);
}

static void
do_watch_exit(struct ld *d, struct evhttp_request *req, const struct caller *who)
{
	watch_post(d, req, ld_watch_exit);
}

static void
do_watch(struct ld *d, struct evhttp_request *req, const struct caller *who)
{
	json_t *o = ld_watch_json(d->watch, who->trusted, who->peer.uid);

	if (o && json_object_set_new(o, "peer", d->peers ?
				     ld_peer_json(d->peers, who->trusted, who->peer.uid) :
				     json_null()) < 0) {
		json_decref(o);
		o = NULL;
	}
	ld_reply_json(req, 200, o);
}

/* GET /v1/watch/step: the whole step, on its leader (watch/peer.c). */
static void
do_watch_step(struct ld *d, struct evhttp_request *req, const struct caller *who)
{
	ld_peer_step_reply(d->peers, req, who->trusted, who->peer.uid);
}

/* ---- GET /metrics, GET /v1/alerts ---- */

static void
do_metrics(struct ld *d, struct evhttp_request *req, const struct caller *who)
{
	size_t len = 0;
	char *text = ld_metrics_text(d, &len);

	ld_reply(req, 200, LD_CT_PROMETHEUS, text, len);
	free(text);
}

static void
do_alerts(struct ld *d, struct evhttp_request *req, const struct caller *who)
{
	ld_reply_json(req, 200, d->alerts ? ld_alert_json(d->alerts, who->trusted, who->peer.uid) :
		   NULL);
}

/* ---- routing ---- */

/* Who may use a route. */
enum access {
	ACCESS_ANY,		/* health, topology: also over a read-only TCP */
	ACCESS_QUERY,		/* placements: any local user; TCP with query or trusted */
	ACCESS_TRUSTED_TCP,	/* steps: any local user (their own jobs); TCP only trusted */
	ACCESS_ROOT,		/* watch registrations: root on the unix socket only */
};

static const struct route {
	const char *path;
	int methods;		/* EVHTTP_REQ_* */
	enum access access;
	void (*fn)(struct ld *, struct evhttp_request *, const struct caller *);
} routes[] = {
	{ "/v1/health", EVHTTP_REQ_GET | EVHTTP_REQ_HEAD, ACCESS_ANY, do_health },
	{ "/v1/topology", EVHTTP_REQ_GET | EVHTTP_REQ_HEAD, ACCESS_ANY, do_topology },
	{ "/metrics", EVHTTP_REQ_GET | EVHTTP_REQ_HEAD, ACCESS_ANY, do_metrics },
	{ "/v1/placement", EVHTTP_REQ_POST, ACCESS_QUERY, do_placement },
	{ "/v1/steps", EVHTTP_REQ_GET | EVHTTP_REQ_HEAD, ACCESS_TRUSTED_TCP, do_steps },
	{ "/v1/watch", EVHTTP_REQ_GET | EVHTTP_REQ_HEAD, ACCESS_TRUSTED_TCP, do_watch },
	{ "/v1/watch/step", EVHTTP_REQ_GET | EVHTTP_REQ_HEAD, ACCESS_TRUSTED_TCP, do_watch_step },
	{ "/v1/watch/tasks", EVHTTP_REQ_POST, ACCESS_ROOT, do_watch_tasks },
	{ "/v1/watch/exit", EVHTTP_REQ_POST, ACCESS_ROOT, do_watch_exit },
	{ "/v1/alerts", EVHTTP_REQ_GET | EVHTTP_REQ_HEAD, ACCESS_TRUSTED_TCP, do_alerts },
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

/* "/v1/health, /v1/topology, ..." from the table. */
static void
route_list(struct buf *b, bool tcp_only_any)
{
	size_t i;

	for (i = 0; i < NROUTES; i++)
		if (!tcp_only_any || routes[i].access == ACCESS_ANY)
			buf_printf(b, "%s%s", b->len ? ", " : "", routes[i].path);
}

/* "GET, HEAD" from a route's methods. */
static void
allow_list(struct buf *b, int mask)
{
	size_t i;

	for (i = 0; i < NMETHODS; i++)
		if (mask & (int)methods[i].m)
			buf_printf(b, "%s%s", b->len ? ", " : "", methods[i].name);
}

static void
identify(struct ld *d, struct evhttp_request *req, struct caller *who)
{
	const struct ld_conf *c = &d->cur->conf;

	ld_conns_peer(req, &who->peer);
	if (!who->peer.local) {
		who->trusted = c->tcp_access == LD_TCP_TRUSTED;
		snprintf(who->who, sizeof(who->who), "tcp");
		return;
	}
	who->trusted = who->peer.uid == 0 || (c->slurm_uid >= 0 && who->peer.uid == c->slurm_uid);
	snprintf(who->who, sizeof(who->who), "uid %ld", who->peer.uid);
}

/* Whether who may use r; else the 403 message in b. */
static bool
allowed(struct ld *d, const struct route *r, const struct caller *who, enum evhttp_cmd_type m,
	struct buf *b)
{
	enum ld_tcp_access a = d->cur->conf.tcp_access;

	if (r->access == ACCESS_ROOT) {
		if (who->peer.local && who->peer.uid == 0)
			return true;
		buf_printf(b, "%s %s: only root on the unix socket may register watched tasks "
			   "(caller %s)", method_name(m), r->path, who->who);
		return false;
	}
	if (who->peer.local || r->access == ACCESS_ANY || a == LD_TCP_TRUSTED ||
	    (r->access == ACCESS_QUERY && a == LD_TCP_QUERY))
		return true;
	buf_printf(b, "%s %s over TCP: not served with tcp_access = %s (it serves ", method_name(m),
		   r->path, ld_tcp_access_name(a));
	if (a == LD_TCP_QUERY)
		buf_adds(b, "/v1/placement, ");
	route_list(b, true);
	buf_adds(b, "); ask over the unix socket, which knows who is calling");
	return false;
}

static void
on_request(struct evhttp_request *req, void *arg)
{
	struct ld *d = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	enum evhttp_cmd_type m = evhttp_request_get_command(req);
	char clip[PL_CLIP_BUF];
	struct buf b = BUF_INIT;
	struct caller who;
	size_t i;

	d->requests++;
	ld_conns_request_begin(d->conns, req);
	memset(&who, 0, sizeof(who));
	if (!path || !*path)
		path = "/";
	for (i = 0; i < NROUTES; i++)
		if (strcmp(routes[i].path, path) == 0)
			break;
	if (i == NROUTES) {
		buf_printf(&b, "no such endpoint: %s (endpoints: ", pl_clip(path, clip, sizeof(clip)));
		route_list(&b, false);
		buf_adds(&b, ")");
		ld_reply_error(req, 404, b.bad ? "no such endpoint" : buf_str(&b));
	} else if (!(routes[i].methods & (int)m)) {
		allow_list(&b, routes[i].methods);
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", buf_str(&b));
		buf_free(&b);
		buf_printf(&b, "%s %s: method not allowed (allowed: ", method_name(m),
			   routes[i].path);
		allow_list(&b, routes[i].methods);
		buf_adds(&b, ")");
		ld_reply_error(req, 405, b.bad ? "method not allowed" : buf_str(&b));
	} else {
		identify(d, req, &who);
		if (allowed(d, &routes[i], &who, m, &b))
			routes[i].fn(d, req, &who);
		else
			ld_reply_error(req, 403, b.bad ? "forbidden" : buf_str(&b));
	}
	buf_free(&b);
	ld_conns_request_end(d->conns);
}

void
ld_http_setup(struct ld *d, struct evhttp *http)
{
	int all = 0;
	size_t i;

	/* Every method reaches on_request, so a wrong one gets 405 with Allow
	 * rather than libevent's bare 501. */
	for (i = 0; i < NMETHODS; i++)
		if (methods[i].m != EVHTTP_REQ_CONNECT)
			all |= (int)methods[i].m;
	evhttp_set_allowed_methods(http, (ev_uint16_t)all);
	evhttp_set_gencb(http, on_request, d);
}

void
ld_http_apply(struct ld *d)
{
	const struct ld_conf *c = &d->cur->conf;
	struct timeval tv;

	tv.tv_sec = c->request_timeout_ms / 1000;
	tv.tv_usec = (c->request_timeout_ms % 1000) * 1000;
	evhttp_set_timeout_tv(d->http, &tv);
	evhttp_set_max_body_size(d->http, (ev_ssize_t)c->max_body);
	evhttp_set_max_headers_size(d->http, (ev_ssize_t)c->max_header);
	ld_conns_set_limits(d->conns, c->max_connections, c->request_timeout_ms);
}
