/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "buf.h"
#include "proto.h"
#include "service.h"

#define MAX_NODES 1000000L
#define MAX_TASKS_PER_NODE 4096L
/* uid_t is 32 bits and (uid_t)-1 means "no uid". */
#define PROTO_UID_MAX 4294967294LL

/* view is one of all, hostfile, node:NAME. */
static int
check_view_name(const char *view, pl_err_t *err)
{
	char clip[PL_CLIP_BUF];

	if (strcmp(view, "all") && strcmp(view, "hostfile") && strncmp(view, "node:", 5))
		return pl_err_set(err, "request: view '%s' (accepted: all, hostfile, node:NAME)",
				  pl_clip(view, clip, sizeof(clip)));
	return 0;
}

/* ---- JSON text, written straight into a struct buf ----
 *
 * The answer to 100k tasks is ~14 MB of JSON; building it as jansson
 * objects first cost ten times the placement.  These write what
 * json_dumps(JSON_COMPACT) writes for the same values, byte for byte
 * (proto_test checks it), and fail the same way: a string that is not
 * UTF-8 or a number that is not finite makes the whole text NULL.
 */

/* Length of the UTF-8 sequence at s (1-4), 0 when it is not valid UTF-8. */
static int
utf8_len(const unsigned char *s)
{
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong forms, UTF-16 surrogates, beyond U+10FFFF. */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return n;
}

/* The escape of a byte that JSON strings cannot hold as it is; NULL for
 * the others. */
static const char *
escape_of(unsigned char c)
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	default:
		return NULL;
	}
}

/* A JSON string: quotes, backslashes and control bytes escaped; not UTF-8
 * makes b bad. */
static void
put_str(struct buf *b, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	buf_add(b, "\"", 1);
	while (*s) {
		const unsigned char *run = s;
		const char *esc;
		int n;

		while (*s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
			s++;
		buf_add(b, run, (size_t)(s - run));
		if (!*s)
			break;
		esc = escape_of(*s);
		if (esc) {
			buf_adds(b, esc);
			s++;
		} else if (*s < 0x20) {
			buf_printf(b, "\\u%04X", *s);
			s++;
		} else if ((n = utf8_len(s)) > 0) {
			buf_add(b, s, (size_t)n);
			s += n;
		} else {
			b->bad = true;
			return;
		}
	}
	buf_add(b, "\"", 1);
}

/* A JSON real as jansson writes it: %.17g, always with a '.' or an 'e',
 * the exponent without '+' or leading zeros. */
static void
put_real(struct buf *b, double v)
{
	char t[64], *e, *p;
	size_t len;

	if (v != v || v > 1.79769313486231570815e308 || v < -1.79769313486231570815e308) {
		b->bad = true;
		return;
	}
	snprintf(t, sizeof(t), "%.17g", v);
	for (p = t; *p; p++)
		if (*p == ',')
			*p = '.';	/* a locale's decimal comma */
	if (!strchr(t, '.') && !strchr(t, 'e'))
		strcat(t, ".0");
	e = strchr(t, 'e');
	if (e) {
		char *from = e + 1, *to = e + 1;

		if (*from == '+')
			from++;
		else if (*from == '-')
			from++, to++;
		while (*from == '0' && from[1])
			from++;
		memmove(to, from, strlen(from) + 1);
	}
	len = strlen(t);
	buf_add(b, t, len);
}

char *
proto_error_json(const char *msg)
{
	json_t *o = json_pack("{s:s}", "error", msg ? msg : "unknown error");
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return text;
}

char *
proto_request_to_json(const struct proto_request *req)
{
	struct buf b = BUF_INIT;
	long i, j;

	buf_adds(&b, "{\"spec\":");
	put_str(&b, req->spec);
	buf_adds(&b, ",\"nodes\":[");
	for (i = 0; i < req->nnodes; i++) {
		const struct place_node *n = &req->nodes[i];

		buf_adds(&b, i ? ",{\"name\":" : "{\"name\":");
		put_str(&b, n->name);
		buf_printf(&b, ",\"ntasks\":%ld", n->ntasks);
		if (n->tids) {
			buf_adds(&b, ",\"tids\":[");
			for (j = 0; j < n->ntasks; j++)
				buf_printf(&b, j ? ",%ld" : "%ld", n->tids[j]);
			buf_adds(&b, "]");
		}
		buf_adds(&b, "}");
	}
	buf_printf(&b, "],\"job_id\":%ld,\"step_id\":%ld,\"view\":", req->job_id, req->step_id);
	put_str(&b, req->view);
	if (req->uid >= 0)
		buf_printf(&b, ",\"uid\":%ld", req->uid);
	buf_adds(&b, "}");
	return buf_take(&b);
}

char *
proto_request_json(const char *spec, const struct place_node *nodes, long nnodes,
		   long job_id, long step_id, const char *view)
{
	struct proto_request req;
	char *text;

	if (proto_request_init(&req, spec, nodes, nnodes, job_id, step_id, view, NULL) < 0)
		return NULL;
	text = proto_request_to_json(&req);
	proto_request_free(&req);
	return text;
}

int
proto_request_init(struct proto_request *req, const char *spec,
		   const struct place_node *nodes, long nnodes, long job_id,
		   long step_id, const char *view, pl_err_t *err)
{
	char clip[PL_CLIP_BUF];
	long i;

	memset(req, 0, sizeof(*req));
	req->uid = -1;
	if (!view)
		view = "all";
	if (!spec || strlen(spec) >= sizeof(req->spec))
		return pl_err_set(err, "request: spec '%s' is longer than %d bytes",
				  pl_clip(spec, clip, sizeof(clip)), PROTO_SPEC_MAX - 1);
	if (strlen(view) >= sizeof(req->view))
		return pl_err_set(err, "request: view '%s' is longer than %d bytes",
				  pl_clip(view, clip, sizeof(clip)), PROTO_VIEW_MAX - 1);
	if (nnodes < 0 || nnodes > MAX_NODES)
		return pl_err_set(err, "request: %ld nodes (accepted: 0 to %ld)", nnodes, MAX_NODES);
	snprintf(req->spec, sizeof(req->spec), "%s", spec);
	snprintf(req->view, sizeof(req->view), "%s", view);
	req->job_id = job_id;
	req->step_id = step_id;
	req->nodes = calloc((size_t)nnodes + 1, sizeof(*req->nodes));
	if (!req->nodes)
		return pl_err_set(err, "out of memory");
	for (i = 0; i < nnodes; i++) {
		const struct place_node *src = &nodes[i];
		struct place_node *dst = &req->nodes[req->nnodes];
		long *ids = NULL;

		if (!src->name || !*src->name || strlen(src->name) >= TOPO_NAME) {
			pl_err_set(err, "request: node name '%s' must be 1 to %d characters",
				   pl_clip(src->name, clip, sizeof(clip)), TOPO_NAME - 1);
			goto fail;
		}
		if (src->tids && src->ntasks > 0) {
			ids = malloc((size_t)src->ntasks * sizeof(*ids));
			if (!ids) {
				pl_err_set(err, "out of memory");
				goto fail;
			}
			memcpy(ids, src->tids, (size_t)src->ntasks * sizeof(*ids));
		}
		dst->name = strdup(src->name);
		if (!dst->name) {
			free(ids);
			pl_err_set(err, "out of memory");
			goto fail;
		}
		dst->ntasks = src->ntasks;
		dst->tids = ids;
		req->nnodes++;
	}
	return 0;
fail:
	proto_request_free(req);
	return -1;
}

void
proto_request_free(struct proto_request *req)
{
	long i;

	if (!req)
		return;
	for (i = 0; i < req->nnodes; i++) {
		free((char *)req->nodes[i].name);
		free((long *)req->nodes[i].tids);
	}
	free(req->nodes);
	req->nodes = NULL;
	req->nnodes = 0;
}

static int
parse_node(json_t *v, size_t i, struct place_node *n, pl_err_t *err)
{
	const char *name = NULL;
	json_int_t ntasks = 0;
	json_t *tids = NULL, *t;
	json_error_t je;
	long *ids = NULL;
	char clip[PL_CLIP_BUF];
	size_t k;

	if (json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s:I, s?:o}", "name", &name, "ntasks",
			   &ntasks, "tids", &tids) < 0)
		return pl_err_set(err, "nodes[%zu]: %s (accepted: name, ntasks, tids)", i, je.text);
	if (!*name || strlen(name) >= TOPO_NAME)
		return pl_err_set(err, "nodes[%zu]: name must be 1 to %d characters", i, TOPO_NAME - 1);
	/* The name as messages may echo it. */
	pl_clip(name, clip, sizeof(clip));
	if (ntasks <= 0 || ntasks > MAX_TASKS_PER_NODE)
		return pl_err_set(err, "nodes[%zu] (%s): ntasks=%lld must be 1..%ld", i, clip,
				  (long long)ntasks, MAX_TASKS_PER_NODE);
	if (tids) {
		if (!json_is_array(tids) || (json_int_t)json_array_size(tids) != ntasks)
			return pl_err_set(err, "nodes[%zu] (%s): tids must be an array of ntasks=%lld ids",
					  i, clip, (long long)ntasks);
		ids = calloc((size_t)ntasks, sizeof(*ids));
		if (!ids)
			return pl_err_set(err, "out of memory");
		json_array_foreach(tids, k, t) {
			if (!json_is_integer(t)) {
				free(ids);
				return pl_err_set(err, "nodes[%zu] (%s): tids[%zu] is not an integer",
						  i, clip, k);
			}
			ids[k] = (long)json_integer_value(t);
		}
	}
	n->name = strdup(name);
	if (!n->name) {
		free(ids);
		return pl_err_set(err, "out of memory");
	}
	n->ntasks = (long)ntasks;
	n->tids = ids;
	return 0;
}

int
proto_request_parse(const char *text, struct proto_request *req, pl_err_t *err)
{
	const char *spec = NULL, *view = "all";
	json_int_t job = -1, step = -1, uid = -1;
	json_t *root, *nodes = NULL, *v, *juid = NULL;
	json_error_t je;
	size_t i;
	int rv = -1;

	memset(req, 0, sizeof(*req));
	req->uid = -1;
	root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return pl_err_set(err, "request is not JSON: line %d: %s", je.line, je.text);
	if (json_unpack_ex(root, &je, JSON_STRICT, "{s:s, s:o, s?:I, s?:I, s?:s, s?:o}", "spec",
			   &spec, "nodes", &nodes, "job_id", &job, "step_id", &step, "view", &view,
			   "uid", &juid) < 0) {
		pl_err_set(err, "request: %s (accepted: spec, nodes, job_id, step_id, view, uid)",
			   je.text);
		goto out;
	}
	if (juid) {
		uid = json_is_integer(juid) ? json_integer_value(juid) : -1;
		if (uid < 0 || uid > PROTO_UID_MAX) {
			pl_err_set(err, "request: uid must be an integer 0..%ld (the job owner's uid)",
				   (long)PROTO_UID_MAX);
			goto out;
		}
	}
	if (strlen(spec) >= sizeof(req->spec) || strlen(view) >= sizeof(req->view)) {
		pl_err_set(err, "request: spec or view is too long");
		goto out;
	}
	if (check_view_name(view, err) < 0)
		goto out;
	if (!json_is_array(nodes) || json_array_size(nodes) == 0 ||
	    (long)json_array_size(nodes) > MAX_NODES) {
		pl_err_set(err, "request: nodes must be a non-empty array of at most %ld nodes",
			   MAX_NODES);
		goto out;
	}
	strcpy(req->spec, spec);
	strcpy(req->view, view);
	req->job_id = (long)job;
	req->step_id = (long)step;
	req->uid = (long)uid;
	req->nodes = calloc(json_array_size(nodes), sizeof(*req->nodes));
	if (!req->nodes) {
		pl_err_set(err, "out of memory");
		goto out;
	}
	json_array_foreach(nodes, i, v) {
		if (parse_node(v, i, &req->nodes[i], err) < 0)
			goto out;
		req->nnodes++;
	}
	rv = 0;
out:
	if (rv < 0)
		proto_request_free(req);
	json_decref(root);
	return rv;
}

/* ---- answering ---- */

/* The step node a view names: -1 for all and hostfile, else its index. */
static int
view_node(const struct proto_request *req, long *node, pl_err_t *err)
{
	char clip[PL_CLIP_BUF];
	long i;

	*node = -1;
	if (check_view_name(req->view, err) < 0)
		return -1;
	if (strncmp(req->view, "node:", 5) != 0)
		return 0;
	for (i = 0; i < req->nnodes; i++)
		if (strcmp(req->nodes[i].name, req->view + 5) == 0) {
			*node = i;
			return 0;
		}
	return pl_err_set(err, "view '%s' names a node that is not in the step (accepted: node: and one of the step's %ld nodes)",
			  pl_clip(req->view, clip, sizeof(clip)), req->nnodes);
}

static void
copy_task(const struct place_task *t, struct proto_task *o)
{
	int a;

	o->procid = t->procid;
	o->rank = t->rank;
	o->node = t->node;
	o->local_id = t->local_id;
	o->local_rank = t->local_rank;
	for (a = 0; a < PL_NAXES; a++)
		o->co[a] = t->co.c[a];
	snprintf(o->nic, sizeof(o->nic), "%s", t->nic_name ? t->nic_name : "");
}

/* The placement struct of a placed request: the view's tasks by procid;
 * rank_nodes unless the view is one node's.  Linear in the tasks. */
static int
fill_placement(const struct topo_map *m, const struct proto_request *req,
	       const struct svc_result *r, long only, struct proto_placement *out, pl_err_t *err)
{
	const struct place_result *p = &r->place;
	long i, n = 0;
	int w;

	layout_format(&r->layout, out->spec, sizeof(out->spec));
	out->layout = r->layout;
	out->world = r->world;
	snprintf(out->map, sizeof(out->map), "%s", m->name);
	out->nodes = calloc((size_t)req->nnodes + 1, sizeof(*out->nodes));
	if (strcmp(req->view, "hostfile") != 0)
		n = only >= 0 ? req->nodes[only].ntasks : p->ntasks;
	out->tasks = calloc((size_t)n + 1, sizeof(*out->tasks));
	if (only < 0)
		out->rank_nodes = malloc((size_t)r->world * sizeof(*out->rank_nodes));
	if (!out->nodes || !out->tasks || (only < 0 && !out->rank_nodes))
		return pl_err_set(err, "out of memory");
	for (i = 0; i < req->nnodes; i++) {
		const struct topo_nodetype *t = topo_node_type(m, topo_find_node(m, req->nodes[i].name));
		struct proto_node *o = &out->nodes[i];

		snprintf(o->name, sizeof(o->name), "%s", req->nodes[i].name);
		o->ntasks = req->nodes[i].ntasks;
		o->min_rank = r->world;
		snprintf(o->nccl_topo_file, sizeof(o->nccl_topo_file), "%s",
			 t ? t->nccl_topo_file : "");
	}
	out->nnodes = req->nnodes;
	for (i = 0; i < p->ntasks; i++) {
		const struct place_task *t = &p->tasks[i];

		if (t->rank < out->nodes[t->node].min_rank)
			out->nodes[t->node].min_rank = t->rank;
		if (out->ntasks < n && (only < 0 || t->node == only))
			copy_task(t, &out->tasks[out->ntasks++]);
	}
	out->master_node = p->tasks[p->rank_procid[0]].node;
	for (i = 0; out->rank_nodes && i < r->world; i++)
		out->rank_nodes[i] = p->tasks[p->rank_procid[i]].node;
	out->cost = p->cost;
	out->baseline = p->baseline;
	snprintf(out->strategy, sizeof(out->strategy), "%s", p->strategy);
	for (w = 0; r->plan_ok && w < r->plan.nwarnings && w < PLAN_MAX_WARNINGS; w++)
		snprintf(out->warnings[out->nwarnings++], PLAN_WARNING_LEN, "%s",
			 r->plan.warnings[w]);
	svc_choice_text(r, out->choice, sizeof(out->choice));
	return 0;
}

int
proto_answer(const struct topo_map *m, const struct proto_request *req,
	     struct proto_placement *out, int *status, pl_err_t *err)
{
	struct svc_options opt = { .need_place = true };
	struct svc_result r;
	long only;
	int rv;

	memset(out, 0, sizeof(*out));
	*status = 400;
	if (view_node(req, &only, err) < 0 || place_check_nodes(req->nodes, req->nnodes, err) < 0)
		return -1;
	if (svc_run(m, req->spec, req->nodes, req->nnodes, &opt, &r, err) < 0) {
		*status = 422;
		return -1;
	}
	rv = fill_placement(m, req, &r, only, out, err);
	svc_result_free(&r);
	*status = rv == 0 ? 200 : 500;
	return rv;
}

/* ---- the answer's JSON ---- */

static void
put_cost(struct buf *b, const char *key, const struct place_cost *c)
{
	buf_printf(b, ",\"%s\":{\"cross_node_bytes_per_step\":", key);
	put_real(b, c->cross_node_bytes);
	buf_adds(b, ",\"cross_switch_bytes_per_step\":");
	put_real(b, c->cross_switch_bytes);
	buf_adds(b, "}");
}

static void
put_task(struct buf *b, const struct proto_task *t, int first)
{
	buf_printf(b, "%s{\"procid\":%ld,\"rank\":%ld,\"node\":%ld,\"local_id\":%ld,"
		   "\"local_rank\":%d,\"tp\":%ld,\"cp\":%ld,\"ep\":%ld,\"dp\":%ld,\"pp\":%ld,"
		   "\"nic\":", first ? "" : ",", t->procid, t->rank, t->node, t->local_id,
		   t->local_rank, t->co[PL_TP], t->co[PL_CP], t->co[PL_EP], t->co[PL_DP],
		   t->co[PL_PP]);
	put_str(b, t->nic);
	buf_adds(b, "}");
}

char *
proto_placement_json(const struct proto_placement *p)
{
	const struct pl_layout *l = &p->layout;
	struct buf b = BUF_INIT;
	long i;
	int w;

	buf_adds(&b, "{\"spec\":");
	put_str(&b, p->spec);
	buf_printf(&b, ",\"world\":%ld,\"layout\":{\"tp\":%ld,\"pp\":%ld,\"cp\":%ld,\"ep\":%ld,"
		   "\"dp\":%ld,\"order\":", p->world, l->size[PL_TP], l->size[PL_PP],
		   l->size[PL_CP], l->size[PL_EP], l->size[PL_DP]);
	put_str(&b, l->order_name);
	buf_adds(&b, "},\"map\":");
	put_str(&b, p->map);
	buf_adds(&b, ",\"nodes\":[");
	for (i = 0; i < p->nnodes; i++) {
		buf_adds(&b, i ? ",{\"name\":" : "{\"name\":");
		put_str(&b, p->nodes[i].name);
		buf_printf(&b, ",\"ntasks\":%ld,\"min_rank\":%ld,\"nccl_topo_file\":",
			   p->nodes[i].ntasks, p->nodes[i].min_rank);
		put_str(&b, p->nodes[i].nccl_topo_file);
		buf_adds(&b, "}");
	}
	buf_printf(&b, "],\"master_node\":%ld,\"tasks\":[", p->master_node);
	for (i = 0; i < p->ntasks; i++)
		put_task(&b, &p->tasks[i], i == 0);
	buf_adds(&b, "]");
	put_cost(&b, "cost", &p->cost);
	put_cost(&b, "baseline_cost", &p->baseline);
	buf_adds(&b, ",\"strategy\":");
	put_str(&b, p->strategy);
	buf_adds(&b, ",\"warnings\":[");
	for (w = 0; w < p->nwarnings; w++) {
		if (w)
			buf_adds(&b, ",");
		put_str(&b, p->warnings[w]);
	}
	buf_adds(&b, "]");
	if (p->rank_nodes) {
		buf_adds(&b, ",\"rank_nodes\":[");
		for (i = 0; i < p->world; i++)
			buf_printf(&b, i ? ",%ld" : "%ld", p->rank_nodes[i]);
		buf_adds(&b, "]");
	}
	if (p->choice[0]) {
		buf_adds(&b, ",\"auto\":");
		put_str(&b, p->choice);
	}
	buf_adds(&b, "}");
	return buf_take(&b);
}

void
proto_placement_free(struct proto_placement *p)
{
	if (!p)
		return;
	free(p->nodes);
	free(p->rank_nodes);
	free(p->tasks);
	p->nodes = NULL;
	p->rank_nodes = NULL;
	p->tasks = NULL;
}

static int
parse_tasks(json_t *tasks, struct proto_placement *p, pl_err_t *err)
{
	json_t *v;
	size_t i;

	p->tasks = calloc(json_array_size(tasks) + 1, sizeof(*p->tasks));
	if (!p->tasks)
		return pl_err_set(err, "out of memory");
	json_array_foreach(tasks, i, v) {
		struct proto_task *t = &p->tasks[i];
		const char *nic = "";
		json_int_t procid, rank, node, lid, co[PL_NAXES];
		int lr;
		json_error_t je;
		int a;

		if (json_unpack_ex(v, &je, JSON_STRICT,
				   "{s:I, s:I, s:I, s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:s}",
				   "procid", &procid, "rank", &rank, "node", &node, "local_id", &lid,
				   "local_rank", &lr, "tp", &co[PL_TP], "cp", &co[PL_CP], "ep",
				   &co[PL_EP], "dp", &co[PL_DP], "pp", &co[PL_PP], "nic", &nic) < 0)
			return pl_err_set(err, "placement tasks[%zu]: %s", i, je.text);
		if (node < 0 || node >= p->nnodes || rank < 0 || rank >= p->world || procid < 0 ||
		    procid >= p->world || strlen(nic) >= sizeof(t->nic))
			return pl_err_set(err, "placement tasks[%zu]: out of range", i);
		t->procid = (long)procid;
		t->rank = (long)rank;
		t->node = (long)node;
		t->local_id = (long)lid;
		t->local_rank = lr;
		for (a = 0; a < PL_NAXES; a++)
			t->co[a] = (long)co[a];
		strcpy(t->nic, nic);
		p->ntasks++;
	}
	return 0;
}

static int
parse_nodes(json_t *nodes, struct proto_placement *p, pl_err_t *err)
{
	json_t *v;
	size_t i;

	p->nodes = calloc(json_array_size(nodes) + 1, sizeof(*p->nodes));
	if (!p->nodes)
		return pl_err_set(err, "out of memory");
	json_array_foreach(nodes, i, v) {
		const char *name, *tf;
		json_int_t nt, mr;
		json_error_t je;

		if (json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s:I, s:I, s:s}", "name", &name,
				   "ntasks", &nt, "min_rank", &mr, "nccl_topo_file", &tf) < 0)
			return pl_err_set(err, "placement nodes[%zu]: %s", i, je.text);
		if (strlen(name) >= sizeof(p->nodes[i].name) ||
		    strlen(tf) >= sizeof(p->nodes[i].nccl_topo_file))
			return pl_err_set(err, "placement nodes[%zu]: name too long", i);
		strcpy(p->nodes[i].name, name);
		strcpy(p->nodes[i].nccl_topo_file, tf);
		p->nodes[i].ntasks = (long)nt;
		p->nodes[i].min_rank = (long)mr;
		p->nnodes++;
	}
	return 0;
}

static int
parse_cost(json_t *o, struct place_cost *c, const char *what, pl_err_t *err)
{
	json_error_t je;

	if (json_unpack_ex(o, &je, JSON_STRICT, "{s:F, s:F}", "cross_node_bytes_per_step",
			   &c->cross_node_bytes, "cross_switch_bytes_per_step",
			   &c->cross_switch_bytes) < 0)
		return pl_err_set(err, "placement %s: %s", what, je.text);
	return 0;
}

/* No control characters: the text reaches a user's terminal. */
static int
printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

int
proto_placement_parse(const char *text, struct proto_placement *p, pl_err_t *err)
{
	json_t *root, *layout, *nodes, *tasks, *cost, *base, *warn, *rn = NULL, *v;
	const char *spec, *strategy, *map, *choice = NULL;
	json_int_t world, master;
	json_error_t je;
	pl_err_t inner;
	size_t i;
	int rv = -1;

	memset(p, 0, sizeof(*p));
	root = json_loads(text, 0, &je);
	if (!root)
		return pl_err_set(err, "placement is not JSON: line %d: %s", je.line, je.text);
	if (json_is_string(json_object_get(root, "error"))) {
		const char *msg = json_string_value(json_object_get(root, "error"));

		/* The caller reports err: it must not be empty. */
		pl_err_set(err, "%s", *msg ? msg : "placement: an error answer without a message");
		goto out;
	}
	if (json_unpack_ex(root, &je, JSON_STRICT,
			   "{s:s, s:I, s:o, s:s, s:o, s:I, s?:o, s:o, s:o, s:o, s:s, s:o, s?:s}",
			   "spec", &spec, "world", &world, "layout", &layout, "map", &map,
			   "nodes", &nodes, "master_node", &master, "rank_nodes", &rn,
			   "tasks", &tasks, "cost", &cost, "baseline_cost", &base,
			   "strategy", &strategy, "warnings", &warn, "auto", &choice) < 0) {
		pl_err_set(err, "placement: %s", je.text);
		goto out;
	}
	if (strlen(spec) >= sizeof(p->spec) || !json_is_array(nodes) || !json_is_array(tasks) ||
	    !json_is_array(warn) || world <= 0) {
		pl_err_set(err, "placement: malformed spec, world, nodes, tasks or warnings");
		goto out;
	}
	if (strlen(map) >= sizeof(p->map)) {
		pl_err_set(err, "placement: map name is longer than %d bytes", TOPO_NAME - 1);
		goto out;
	}
	strcpy(p->spec, spec);
	strcpy(p->map, map);
	p->world = (long)world;
	pl_err_clear(&inner);
	if (layout_parse(spec, &p->layout, &inner) < 0 ||
	    layout_resolve(&p->layout, p->world, &inner) < 0) {
		pl_err_set(err, "placement: spec '%s': %s", spec, inner.text);
		goto out;
	}
	if (parse_nodes(nodes, p, err) < 0 || parse_tasks(tasks, p, err) < 0 ||
	    parse_cost(cost, &p->cost, "cost", err) < 0 ||
	    parse_cost(base, &p->baseline, "baseline_cost", err) < 0)
		goto out;
	if (master < 0 || master >= p->nnodes) {
		pl_err_set(err, "placement: master_node %lld out of range", (long long)master);
		goto out;
	}
	p->master_node = (long)master;
	snprintf(p->strategy, sizeof(p->strategy), "%s", strategy);
	if (choice && (strlen(choice) >= sizeof(p->choice) || !printable(choice))) {
		pl_err_set(err, "placement: \"auto\" must be printable text of at most %zu bytes",
			   sizeof(p->choice) - 1);
		goto out;
	}
	snprintf(p->choice, sizeof(p->choice), "%s", choice ? choice : "");
	json_array_foreach(warn, i, v)
		if (p->nwarnings < PLAN_MAX_WARNINGS && json_is_string(v))
			snprintf(p->warnings[p->nwarnings++], PLAN_WARNING_LEN, "%s",
				 json_string_value(v));
	if (rn) {
		if (!json_is_array(rn) || (json_int_t)json_array_size(rn) != world) {
			pl_err_set(err, "placement: rank_nodes must list world=%lld nodes",
				   (long long)world);
			goto out;
		}
		p->rank_nodes = calloc((size_t)world, sizeof(*p->rank_nodes));
		if (!p->rank_nodes) {
			pl_err_set(err, "out of memory");
			goto out;
		}
		json_array_foreach(rn, i, v) {
			json_int_t n = json_integer_value(v);

			if (!json_is_integer(v) || n < 0 || n >= p->nnodes) {
				pl_err_set(err, "placement: rank_nodes[%zu] out of range", i);
				goto out;
			}
			p->rank_nodes[i] = (long)n;
		}
	}
	rv = 0;
out:
	if (rv < 0)
		proto_placement_free(p);
	json_decref(root);
	return rv;
}
