/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

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

char *
proto_error_json(const char *msg)
{
	json_t *o = json_pack("{s:s}", "error", msg ? msg : "unknown error");
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return text;
}

/* The request JSON of a step; uid < 0 is left out. */
static json_t *
request_obj(const struct proto_request *req)
{
	json_t *arr = json_array(), *root = NULL;
	long i, j;

	if (!arr)
		return NULL;
	for (i = 0; i < req->nnodes; i++) {
		const struct place_node *pn = &req->nodes[i];
		json_t *n = json_pack("{s:s, s:I}", "name", pn->name, "ntasks",
				      (json_int_t)pn->ntasks);

		if (n && pn->tids) {
			json_t *t = json_array();

			for (j = 0; t && j < pn->ntasks; j++)
				if (json_array_append_new(t, json_integer(pn->tids[j])) < 0) {
					json_decref(t);
					t = NULL;
				}
			if (!t || json_object_set_new(n, "tids", t) < 0) {
				json_decref(n);
				n = NULL;
			}
		}
		if (!n || json_array_append_new(arr, n) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	root = json_pack("{s:s, s:o, s:I, s:I, s:s}", "spec", req->spec, "nodes", arr,
			 "job_id", (json_int_t)req->job_id, "step_id", (json_int_t)req->step_id,
			 "view", req->view);
	if (root && req->uid >= 0 &&
	    json_object_set_new(root, "uid", json_integer((json_int_t)req->uid)) < 0) {
		json_decref(root);
		root = NULL;
	}
	return root;
}

char *
proto_request_to_json(const struct proto_request *req)
{
	json_t *root = request_obj(req);
	char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;

	json_decref(root);
	return text;
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
	return 0;
}

int
proto_answer(const struct topo_map *m, const struct proto_request *req,
	     struct proto_placement *out, int *status, pl_err_t *err)
{
	struct svc_options opt = { NULL, 0, true };
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

static json_t *
cost_json(const struct place_cost *c)
{
	return json_pack("{s:f, s:f}", "cross_node_bytes_per_step", c->cross_node_bytes,
			 "cross_switch_bytes_per_step", c->cross_switch_bytes);
}

static json_t *
task_json(const struct proto_task *t)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:s}",
			 "procid", (json_int_t)t->procid, "rank", (json_int_t)t->rank,
			 "node", (json_int_t)t->node, "local_id", (json_int_t)t->local_id,
			 "local_rank", t->local_rank, "tp", (json_int_t)t->co[PL_TP],
			 "cp", (json_int_t)t->co[PL_CP], "ep", (json_int_t)t->co[PL_EP],
			 "dp", (json_int_t)t->co[PL_DP], "pp", (json_int_t)t->co[PL_PP],
			 "nic", t->nic);
}

/* Append to arr; a NULL item (out of memory) makes arr's owner fail. */
static int
append(json_t *arr, json_t *item)
{
	return item ? json_array_append_new(arr, item) : -1;
}

static json_t *
placement_obj(const struct proto_placement *p)
{
	const struct pl_layout *l = &p->layout;
	json_t *nodes = json_array(), *tasks = json_array(), *warn = json_array(), *root = NULL;
	long i;
	int w, bad = !nodes || !tasks || !warn;

	for (i = 0; !bad && i < p->nnodes; i++)
		bad = append(nodes, json_pack("{s:s, s:I, s:I, s:s}", "name", p->nodes[i].name,
					      "ntasks", (json_int_t)p->nodes[i].ntasks, "min_rank",
					      (json_int_t)p->nodes[i].min_rank, "nccl_topo_file",
					      p->nodes[i].nccl_topo_file)) < 0;
	for (i = 0; !bad && i < p->ntasks; i++)
		bad = append(tasks, task_json(&p->tasks[i])) < 0;
	for (w = 0; !bad && w < p->nwarnings; w++)
		bad = append(warn, json_string(p->warnings[w])) < 0;
	if (bad) {
		json_decref(nodes);
		json_decref(tasks);
		json_decref(warn);
		return NULL;
	}
	/* json_pack steals the o references, also when it fails. */
	root = json_pack("{s:s, s:I, s:{s:I, s:I, s:I, s:I, s:I, s:s}, s:s, s:o, s:I, s:o, "
			 "s:o, s:o, s:s, s:o}",
			 "spec", p->spec, "world", (json_int_t)p->world, "layout",
			 "tp", (json_int_t)l->size[PL_TP], "pp", (json_int_t)l->size[PL_PP],
			 "cp", (json_int_t)l->size[PL_CP], "ep", (json_int_t)l->size[PL_EP],
			 "dp", (json_int_t)l->size[PL_DP], "order", l->order_name,
			 "map", p->map, "nodes", nodes, "master_node", (json_int_t)p->master_node,
			 "tasks", tasks, "cost", cost_json(&p->cost), "baseline_cost",
			 cost_json(&p->baseline), "strategy", p->strategy, "warnings", warn);
	if (root && p->rank_nodes) {
		json_t *rn = json_array();

		for (i = 0; rn && i < p->world; i++)
			if (append(rn, json_integer(p->rank_nodes[i])) < 0) {
				json_decref(rn);
				rn = NULL;
			}
		if (!rn || json_object_set_new(root, "rank_nodes", rn) < 0) {
			json_decref(root);
			root = NULL;
		}
	}
	return root;
}

char *
proto_placement_json(const struct proto_placement *p)
{
	json_t *root = placement_obj(p);
	char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;

	json_decref(root);
	return text;
}

char *
proto_place(const struct topo_map *m, const char *request_text, int *status)
{
	struct proto_request req;
	struct proto_placement p;
	pl_err_t err;
	char *text;

	pl_err_clear(&err);
	if (proto_request_parse(request_text, &req, &err) < 0) {
		*status = 400;
		return proto_error_json(err.text);
	}
	if (proto_answer(m, &req, &p, status, &err) < 0) {
		proto_placement_free(&p);
		proto_request_free(&req);
		return proto_error_json(err.text);
	}
	text = proto_placement_json(&p);
	proto_placement_free(&p);
	proto_request_free(&req);
	if (!text)
		*status = 500;
	return text ? text : proto_error_json("out of memory");
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

int
proto_placement_parse(const char *text, struct proto_placement *p, pl_err_t *err)
{
	json_t *root, *layout, *nodes, *tasks, *cost, *base, *warn, *rn = NULL, *v;
	const char *spec, *strategy, *map;
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
		pl_err_set(err, "%s", json_string_value(json_object_get(root, "error")));
		goto out;
	}
	if (json_unpack_ex(root, &je, JSON_STRICT,
			   "{s:s, s:I, s:o, s:s, s:o, s:I, s?:o, s:o, s:o, s:o, s:s, s:o}",
			   "spec", &spec, "world", &world, "layout", &layout, "map", &map,
			   "nodes", &nodes, "master_node", &master, "rank_nodes", &rn,
			   "tasks", &tasks, "cost", &cost, "baseline_cost", &base,
			   "strategy", &strategy, "warnings", &warn) < 0) {
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
