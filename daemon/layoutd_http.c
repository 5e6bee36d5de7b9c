/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd's HTTP handlers.  One generic callback routes by path, answers
 * 404 and 405 itself, and each handler ends in exactly one reply.  The
 * placement itself is lib/'s proto_place(): the plugin's in-process
 * fallback runs the same function on the same map.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "layoutd.h"

#define OOM_BODY "{\"error\":\"out of memory\"}"

static const char *
reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 422: return "Unprocessable Entity";
	case 500: return "Internal Server Error";
	default: return "Error";
	}
}

static const char *
method_name(enum evhttp_cmd_type m)
{
	switch (m) {
	case EVHTTP_REQ_GET: return "GET";
	case EVHTTP_REQ_POST: return "POST";
	case EVHTTP_REQ_HEAD: return "HEAD";
	case EVHTTP_REQ_PUT: return "PUT";
	case EVHTTP_REQ_DELETE: return "DELETE";
	case EVHTTP_REQ_OPTIONS: return "OPTIONS";
	case EVHTTP_REQ_TRACE: return "TRACE";
	case EVHTTP_REQ_CONNECT: return "CONNECT";
	case EVHTTP_REQ_PATCH: return "PATCH";
	}
	return "?";
}

/* The one reply of a request: body is JSON text (NULL = out of memory). */
static void
reply(struct evhttp_request *req, int status, const char *body)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *buf = evbuffer_new();

	if (!body) {
		body = OOM_BODY;
		status = 500;
	}
	evhttp_add_header(h, "Content-Type", "application/json");
	evhttp_add_header(h, "Cache-Control", "no-store");
	if (buf && evbuffer_add(buf, body, strlen(body)) == 0 && evbuffer_add(buf, "\n", 1) == 0)
		evhttp_send_reply(req, status, reason(status), buf);
	else
		evhttp_send_error(req, 500, "out of memory");
	if (buf)
		evbuffer_free(buf);
}

/* A reply whose JSON body we built and free. */
static void
reply_json(struct evhttp_request *req, int status, json_t *root)
{
	char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;

	reply(req, status, text);
	free(text);
	json_decref(root);
}

static void
reply_error(struct evhttp_request *req, int status, const char *msg)
{
	char *text = proto_error_json(msg);

	reply(req, status, text);
	free(text);
}

/* ---- GET /v1/health ---- */

static void
do_health(struct ld *d, struct evhttp_request *req)
{
	const struct ld_load *l = d->cur;
	json_t *disc = json_array(), *root;
	int i;

	for (i = 0; i < l->ndisc; i++)
		json_array_append_new(disc, json_string(l->disc[i]));
	root = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:o, s:f, s:I, s:I, s:I, s:s}",
			 "status", l->ndisc ? "degraded" : "ok", "node", l->conf.node_name,
			 "map", l->map->name, "map_nodes", (json_int_t)l->map->nnodes,
			 "map_file", l->conf.map, "hwloc_check", l->conf.hwloc_check,
			 "discrepancies", disc,
			 "uptime_s", (ld_now_ms() - ((double)d->start.tv_sec * 1e3 +
						     (double)d->start.tv_nsec / 1e6)) / 1e3,
			 "requests", (json_int_t)d->requests, "reloads", (json_int_t)d->reloads,
			 "reload_failures", (json_int_t)d->reload_failures,
			 "version", PACKAGE_VERSION);
	reply_json(req, 200, root);
}

/* ---- GET /v1/topology ---- */

static void
do_topology(struct ld *d, struct evhttp_request *req)
{
	reply(req, 200, d->cur->map_json);
}

/* ---- POST /v1/placement ---- */

/*
 * The "strategy" of a compact 200 body.  Reading it from the text spares
 * parsing a placement of 100k tasks again; a `"` outside a JSON string
 * is always structural, and only the top level has this key.
 */
static void
find_strategy(const char *text, char *buf, size_t size)
{
	const char *p = text ? strstr(text, ",\"strategy\":\"") : NULL;
	size_t n = 0;

	buf[0] = '\0';
	if (!p)
		return;
	for (p += strlen(",\"strategy\":\""); *p && *p != '"' && *p != '\\' && n + 1 < size; p++)
		buf[n++] = *p;
	buf[n] = '\0';
}

static void
record_step(struct ld *d, const char *body, const char *answer, int status, double ms)
{
	struct ld_step *s = &d->steps[d->head];
	struct proto_request pr;
	char errmsg[256] = "";
	pl_err_t err;
	long i;

	free(s->spec);
	memset(s, 0, sizeof(*s));
	s->job_id = s->step_id = -1;
	pl_err_clear(&err);
	if (proto_request_parse(body, &pr, &err) == 0) {
		s->job_id = pr.job_id;
		s->step_id = pr.step_id;
		s->spec = strdup(pr.spec);
		s->nnodes = pr.nnodes;
		for (i = 0; i < pr.nnodes; i++)
			s->world += pr.nodes[i].ntasks;
		proto_request_free(&pr);
	}
	s->time = time(NULL);
	s->status = status;
	s->ms = ms;
	if (status == 200) {
		find_strategy(answer, s->strategy, sizeof(s->strategy));
	} else {
		json_t *e = answer ? json_loads(answer, 0, NULL) : NULL;
		const char *m = json_string_value(json_object_get(e, "error"));

		snprintf(errmsg, sizeof(errmsg), " (%s)", m ? m : "no message");
		json_decref(e);
	}
	d->head = (d->head + 1) % LD_STEPS;
	if (d->nsteps < LD_STEPS)
		d->nsteps++;
	if (s->job_id >= 0)
		ld_log(d, "placement job %ld.%ld: %.200s on %ld nodes, %ld tasks: %d%s in %.1f ms",
		       s->job_id, s->step_id, s->spec ? s->spec : "", s->nnodes, s->world, status,
		       errmsg, ms);
	else
		ld_log(d, "placement: %.200s on %ld nodes, %ld tasks: %d%s in %.1f ms",
		       s->spec ? s->spec : "-", s->nnodes, s->world, status, errmsg, ms);
}

static void
do_placement(struct ld *d, struct evhttp_request *req)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	double t0 = ld_now_ms();
	char *body = malloc(len + 1), *answer = NULL;
	int status = 500;

	if (!body) {
		reply_error(req, 500, "out of memory");
		return;
	}
	if (evbuffer_copyout(in, body, len) != (ev_ssize_t)len) {
		free(body);
		reply_error(req, 500, "cannot read the request body");
		return;
	}
	body[len] = '\0';
	if (strlen(body) != len) {
		status = 400;
		answer = proto_error_json("request body contains a NUL byte: expected JSON text");
	} else {
		answer = proto_place(d->cur->map, body, &status);
	}
	record_step(d, body, answer, status, ld_now_ms() - t0);
	reply(req, status, answer);
	free(answer);
	free(body);
}

/* ---- GET /v1/steps ---- */

static void
do_steps(struct ld *d, struct evhttp_request *req)
{
	json_t *arr = json_array();
	long k;

	for (k = 0; arr && k < d->nsteps; k++) {
		const struct ld_step *s = &d->steps[(d->head - 1 - k + 2 * LD_STEPS) % LD_STEPS];
		char stamp[32] = "";
		struct tm tm;

		if (gmtime_r(&s->time, &tm))
			strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
		json_array_append_new(arr, json_pack("{s:I, s:I, s:s, s:I, s:I, s:s, s:s, s:i, s:f}",
						     "job_id", (json_int_t)s->job_id,
						     "step_id", (json_int_t)s->step_id,
						     "spec", s->spec ? s->spec : "",
						     "world", (json_int_t)s->world,
						     "nnodes", (json_int_t)s->nnodes,
						     "strategy", s->strategy, "time", stamp,
						     "status", s->status, "ms", s->ms));
	}
	reply_json(req, 200, arr ? json_pack("{s:o}", "steps", arr) : NULL);
}

void
ld_steps_free(struct ld *d)
{
	int i;

	for (i = 0; i < LD_STEPS; i++) {
		free(d->steps[i].spec);
		d->steps[i].spec = NULL;
	}
}

/* ---- routing ---- */

static const struct route {
	const char *path;
	int methods;		/* EVHTTP_REQ_* */
	const char *allow;
	void (*fn)(struct ld *, struct evhttp_request *);
} routes[] = {
	{ "/v1/health", EVHTTP_REQ_GET | EVHTTP_REQ_HEAD, "GET, HEAD", do_health },
	{ "/v1/topology", EVHTTP_REQ_GET | EVHTTP_REQ_HEAD, "GET, HEAD", do_topology },
	{ "/v1/placement", EVHTTP_REQ_POST, "POST", do_placement },
	{ "/v1/steps", EVHTTP_REQ_GET | EVHTTP_REQ_HEAD, "GET, HEAD", do_steps },
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

static void
on_request(struct evhttp_request *req, void *arg)
{
	struct ld *d = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	enum evhttp_cmd_type m = evhttp_request_get_command(req);
	char msg[256];
	size_t i;

	d->requests++;
	if (!path || !*path)
		path = "/";
	for (i = 0; i < NROUTES; i++)
		if (strcmp(routes[i].path, path) == 0)
			break;
	if (i == NROUTES) {
		snprintf(msg, sizeof(msg),
			 "no such endpoint: %.100s (endpoints: /v1/health, /v1/topology, /v1/placement, /v1/steps)",
			 path);
		reply_error(req, 404, msg);
		return;
	}
	if (!(routes[i].methods & (int)m)) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", routes[i].allow);
		snprintf(msg, sizeof(msg), "%s %s: method not allowed (allowed: %s)", method_name(m),
			 routes[i].path, routes[i].allow);
		reply_error(req, 405, msg);
		return;
	}
	routes[i].fn(d, req);
}

void
ld_http_setup(struct ld *d, struct evhttp *http)
{
	/* Every method reaches on_request, so a wrong one gets 405 with Allow
	 * rather than libevent's bare 501. */
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
				   EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
				   EVHTTP_REQ_TRACE | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(http, on_request, d);
}
