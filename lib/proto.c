/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "proto.h"
#include "service.h"

#define MAX_NODES 1000000L
#define MAX_TASKS_PER_NODE 4096L

char *
proto_error_json(const char *msg)
{
	json_t *o = json_pack("{s:s}", "error", msg ? msg : "unknown error");
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return text;
}

char *
proto_request_json(const char *spec, const struct place_node *nodes, long nnodes,
		   long job_id, long step_id, const char *view)
{
	json_t *arr = json_array(), *root = NULL;
	char *text = NULL;
	long i, j;

	if (!arr)
		return NULL;
	for (i = 0; i < nnodes; i++) {
		json_t *n = json_pack("{s:s, s:I}", "name", nodes[i].name, "ntasks",
				      (json_int_t)nodes[i].ntasks);

		if (n && nodes[i].tids) {
			json_t *t = json_array();

			for (j = 0; j < nodes[i].ntasks; j++)
				json_array_append_new(t, json_integer(nodes[i].tids[j]));
			json_object_set_new(n, "tids", t);
		}
		if (!n || json_array_append_new(arr, n) < 0)
			goto out;
	}
	root = json_pack("{s:s, s:o, s:I, s:I, s:s}", "spec", spec, "nodes", arr,
			 "job_id", (json_int_t)job_id, "step_id", (json_int_t)step_id,
			 "view", view ? view : "all");
	arr = NULL;
	if (root)
		text = json_dumps(root, JSON_COMPACT);
out:
	json_decref(arr);
	json_decref(root);
	return text;
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
	size_t k;

	if (json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s:I, s?:o}", "name", &name, "ntasks",
			   &ntasks, "tids", &tids) < 0)
		return pl_err_set(err, "nodes[%zu]: %s (accepted: name, ntasks, tids)", i, je.text);
	if (!*name || strlen(name) >= TOPO_NAME)
		return pl_err_set(err, "nodes[%zu]: name must be 1 to %d characters", i, TOPO_NAME - 1);
	if (ntasks <= 0 || ntasks > MAX_TASKS_PER_NODE)
		return pl_err_set(err, "nodes[%zu] (%s): ntasks=%lld must be 1..%ld", i, name,
				  (long long)ntasks, MAX_TASKS_PER_NODE);
	if (tids) {
		if (!json_is_array(tids) || (json_int_t)json_array_size(tids) != ntasks)
			return pl_err_set(err, "nodes[%zu] (%s): tids must be an array of ntasks=%lld ids",
					  i, name, (long long)ntasks);
		ids = calloc((size_t)ntasks, sizeof(*ids));
		if (!ids)
			return pl_err_set(err, "out of memory");
		json_array_foreach(tids, k, t) {
			if (!json_is_integer(t)) {
				free(ids);
				return pl_err_set(err, "nodes[%zu] (%s): tids[%zu] is not an integer",
						  i, name, k);
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
	json_int_t job = -1, step = -1;
	json_t *root, *nodes = NULL, *v;
	json_error_t je;
	size_t i;
	int rv = -1;

	memset(req, 0, sizeof(*req));
	root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return pl_err_set(err, "request is not JSON: line %d: %s", je.line, je.text);
	if (json_unpack_ex(root, &je, JSON_STRICT, "{s:s, s:o, s?:I, s?:I, s?:s}", "spec", &spec,
			   "nodes", &nodes, "job_id", &job, "step_id", &step, "view", &view) < 0) {
		pl_err_set(err, "request: %s (accepted: spec, nodes, job_id, step_id, view)", je.text);
		goto out;
	}
	if (strlen(spec) >= sizeof(req->spec) || strlen(view) >= sizeof(req->view)) {
		pl_err_set(err, "request: spec or view is too long");
		goto out;
	}
	if (strcmp(view, "all") && strcmp(view, "hostfile") && strncmp(view, "node:", 5)) {
		pl_err_set(err, "request: view '%s' (accepted: all, hostfile, node:NAME)", view);
		goto out;
	}
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

static json_t *
cost_json(const struct place_cost *c)
{
	return json_pack("{s:f, s:f}", "cross_node_bytes_per_step", c->cross_node_bytes,
			 "cross_switch_bytes_per_step", c->cross_switch_bytes);
}

static json_t *
task_json(const struct place_task *t)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:s}",
			 "procid", (json_int_t)t->procid, "rank", (json_int_t)t->rank,
			 "node", (json_int_t)t->node, "local_id", (json_int_t)t->local_id,
			 "local_rank", t->local_rank, "tp", (json_int_t)t->co.c[PL_TP],
			 "cp", (json_int_t)t->co.c[PL_CP], "ep", (json_int_t)t->co.c[PL_EP],
			 "dp", (json_int_t)t->co.c[PL_DP], "pp", (json_int_t)t->co.c[PL_PP],
			 "nic", t->nic_name ? t->nic_name : "");
}

/* The 200 body for a placed request. */
static json_t *
placement_json(const struct topo_map *m, const struct proto_request *req,
	       const struct svc_result *r)
{
	const struct place_result *p = &r->place;
	const struct pl_layout *l = &r->layout;
	json_t *nodes = json_array(), *tasks = json_array(), *warn = json_array(), *root;
	const char *only = strncmp(req->view, "node:", 5) == 0 ? req->view + 5 : NULL;
	char spec[PROTO_SPEC_MAX];
	long i;
	int w;

	layout_format(l, spec, sizeof(spec));
	for (i = 0; i < req->nnodes; i++) {
		long mi = topo_find_node(m, req->nodes[i].name), k, min_rank = r->world;
		const struct topo_nodetype *t = mi >= 0 ? topo_node_type(m, mi) : NULL;

		for (k = 0; k < p->ntasks; k++)
			if (p->tasks[k].node == i && p->tasks[k].rank < min_rank)
				min_rank = p->tasks[k].rank;
		json_array_append_new(nodes, json_pack("{s:s, s:I, s:I, s:s}", "name",
						       req->nodes[i].name, "ntasks",
						       (json_int_t)req->nodes[i].ntasks, "min_rank",
						       (json_int_t)min_rank,
						       "nccl_topo_file", t ? t->nccl_topo_file : ""));
	}
	if (strcmp(req->view, "hostfile") != 0)
		for (i = 0; i < p->ntasks; i++)
			if (!only || strcmp(req->nodes[p->tasks[i].node].name, only) == 0)
				json_array_append_new(tasks, task_json(&p->tasks[i]));
	for (w = 0; r->plan_ok && w < r->plan.nwarnings; w++)
		json_array_append_new(warn, json_string(r->plan.warnings[w]));
	root = json_pack("{s:s, s:I, s:{s:I, s:I, s:I, s:I, s:I, s:s}, s:s, s:o, s:I, s:o, "
			 "s:o, s:o, s:s, s:o}",
			 "spec", spec, "world", (json_int_t)r->world, "layout",
			 "tp", (json_int_t)l->size[PL_TP], "pp", (json_int_t)l->size[PL_PP],
			 "cp", (json_int_t)l->size[PL_CP], "ep", (json_int_t)l->size[PL_EP],
			 "dp", (json_int_t)l->size[PL_DP], "order", l->order_name,
			 "map", m->name, "nodes", nodes, "master_node",
			 (json_int_t)p->tasks[p->rank_procid[0]].node, "tasks", tasks,
			 "cost", cost_json(&p->cost), "baseline_cost", cost_json(&p->baseline),
			 "strategy", p->strategy, "warnings", warn);
	if (root && !only) {
		json_t *rn = json_array();

		for (i = 0; i < r->world; i++)
			json_array_append_new(rn, json_integer(p->tasks[p->rank_procid[i]].node));
		json_object_set_new(root, "rank_nodes", rn);
	}
	return root;
}

char *
proto_place(const struct topo_map *m, const char *request_text, int *status)
{
	struct proto_request req;
	struct svc_options opt = { NULL, 0, true };
	struct svc_result r;
	pl_err_t err;
	json_t *root;
	char *text;

	pl_err_clear(&err);
	if (proto_request_parse(request_text, &req, &err) < 0) {
		*status = 400;
		return proto_error_json(err.text);
	}
	if (strncmp(req.view, "node:", 5) == 0) {
		long i, found = 0;

		for (i = 0; i < req.nnodes; i++)
			found |= strcmp(req.nodes[i].name, req.view + 5) == 0;
		if (!found) {
			proto_request_free(&req);
			*status = 400;
			return proto_error_json("view node:NAME names a node that is not in the step");
		}
	}
	if (svc_run(m, req.spec, req.nodes, req.nnodes, &opt, &r, &err) < 0) {
		proto_request_free(&req);
		*status = 422;
		return proto_error_json(err.text);
	}
	root = placement_json(m, &req, &r);
	text = root ? json_dumps(root, JSON_COMPACT) : NULL;
	json_decref(root);
	svc_result_free(&r);
	proto_request_free(&req);
	*status = text ? 200 : 500;
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
	strcpy(p->spec, spec);
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
