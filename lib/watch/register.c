/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The watch registration's codec (register.h): encoded by the SPANK
 * plugin, decoded by layoutd, refused here field by field.
 */
#include "config.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "register.h"
#include "summary.h"

const char *const reg_axes[REG_NAXES] = { "tp", "cp", "ep", "dp", "pp" };

/* Fill err and return the HTTP status. */
#define refuse(err, status, ...) pl_err_status(err, status, __VA_ARGS__)

static int
shape_error(const json_error_t *je, const char *what, pl_err_t *err)
{
	char c[PL_CLIP_BUF];

	pl_err_set(err, "%s: %s (want {\"job_id\", \"step_id\", \"task\", \"rank\", \"pid\", "
		   "\"uid\", \"node\", \"coords\": {\"tp\", \"cp\", \"ep\", \"dp\", \"pp\"}, "
		   "\"record\"} and optionally \"gpu\", \"nic\", \"step\": {\"world\", \"layout\": "
		   "{\"tp\", \"cp\", \"ep\", \"dp\", \"pp\"}, \"nodes\": [...]} for a task, "
		   "{\"job_id\", \"step_id\", \"task\", \"status\"} for an exit)",
		   what, pl_clip(je->text, c, sizeof(c)));
	return 400;
}

/* A "version" that is there must be REG_VERSION. */
static int
version_ok(const char *what, json_int_t v, pl_err_t *err)
{
	if (v == REG_VERSION)
		return 0;
	return refuse(err, 422, "%s: version %" PRId64 ": want %d, the only registration this "
		      "release reads", what, (int64_t)v, REG_VERSION);
}

/* A node name as Slurm and the config give it: 1 to 63 letters, digits,
 * '.', '_', '-'. */
static bool
node_name_ok(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
		      (s[n] >= '0' && s[n] <= '9') || s[n] == '.' || s[n] == '_' || s[n] == '-'))
			return false;
	return n > 0 && n < REG_NODE_LEN;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct reg_step *
reg_step_new(uint32_t world, const uint32_t size[REG_NAXES], const char *const *names,
	     size_t nnodes)
{
	struct reg_step *s = calloc(1, sizeof(*s));
	size_t k, total = 0;

	for (k = 0; k < nnodes; k++)
		total += strlen(names[k]) + 1;
	if (s) {
		s->pool = malloc(total ? total : 1);
		s->off = malloc((nnodes ? nnodes : 1) * sizeof(*s->off));
	}
	if (!s || !s->pool || !s->off) {
		reg_step_free(s);
		return NULL;
	}
	s->world = world;
	memcpy(s->size, size, sizeof(s->size));
	watchopt_clear(&s->watch);
	s->nnodes = nnodes;
	for (k = 0, total = 0; k < nnodes; k++) {
		s->off[k] = (uint32_t)total;
		memcpy(s->pool + total, names[k], strlen(names[k]) + 1);
		total += strlen(names[k]) + 1;
	}
	return s;
}

const char *
reg_step_node(const struct reg_step *s, size_t k)
{
	return s->pool + s->off[k];
}

void
reg_step_free(struct reg_step *s)
{
	if (s) {
		free(s->pool);
		free(s->off);
		free(s);
	}
}

/* ---- encoding ------------------------------------------------------------- */

static json_t *
step_pack(const struct reg_step *s)
{
	json_t *nodes = json_array(), *o = NULL;
	size_t k;

	if (!nodes)
		return NULL;
	for (k = 0; k < s->nnodes; k++)
		if (json_array_append_new(nodes, json_string(reg_step_node(s, k))) < 0)
			goto out;
	o = json_pack("{s:I, s:{s:I, s:I, s:I, s:I, s:I}, s:O}", "world", (json_int_t)s->world,
		      "layout", "tp", (json_int_t)s->size[0], "cp", (json_int_t)s->size[1],
		      "ep", (json_int_t)s->size[2], "dp", (json_int_t)s->size[3],
		      "pp", (json_int_t)s->size[4], "nodes", nodes);
	/* only when asked: a daemon of before reads a step without it */
	if (o && watchopt_any(&s->watch)) {
		json_t *w = json_object();

		if (s->watch.hang_s)
			json_object_set_new(w, "hang_s", json_integer(s->watch.hang_s));
		if (s->watch.busy_s)
			json_object_set_new(w, "busy_s", json_integer(s->watch.busy_s));
		if (s->watch.slow >= 0)
			json_object_set_new(w, "slow", json_boolean(s->watch.slow));
		if (!w || json_object_set_new(o, "watch", w) < 0) {
			json_decref(o);
			o = NULL;
		}
	}
out:
	json_decref(nodes);
	return o;
}

static char *
dump(json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return text;
}

char *
reg_task_encode(const struct reg_task *t)
{
	const json_int_t *co = t->coords;
	json_t *o, *step = NULL;

	if (t->step && !(step = step_pack(t->step)))
		return NULL;
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:{s:I, s:I, s:I, s:I, s:I}, s:s, s:I, s:s}",
		      "job_id", (json_int_t)t->job, "step_id", (json_int_t)t->step_id,
		      "task", (json_int_t)t->task, "rank", (json_int_t)t->rank,
		      "pid", (json_int_t)t->pid, "uid", (json_int_t)t->uid, "node", t->node,
		      "coords", "tp", (json_int_t)co[0], "cp", (json_int_t)co[1],
		      "ep", (json_int_t)co[2], "dp", (json_int_t)co[3], "pp", (json_int_t)co[4],
		      "record", t->record, "gpu", (json_int_t)t->gpu, "nic", t->nic ? t->nic : "");
	/* json_object_set_new takes step, also when it fails. */
	if (step && !o)
		json_decref(step);
	else if (step && json_object_set_new(o, "step", step) < 0) {
		json_decref(o);
		o = NULL;
	}
	return dump(o);
}

char *
reg_exit_encode(const struct reg_exit *e)
{
	return dump(json_pack("{s:I, s:I, s:I, s:I}", "job_id", (json_int_t)e->job,
			      "step_id", (json_int_t)e->step_id, "task", (json_int_t)e->task,
			      "status", (json_int_t)e->status));
}

/* ---- decoding ------------------------------------------------------------- */

/* The world is tp * cp * dp * pp (ep is carried inside cp * dp, as the
 * summary and Megatron-Core have it). */
static int
step_sizes(json_int_t world, const json_int_t *sz, const char *what, pl_err_t *err)
{
	int64_t prod = 1;
	int a;

	for (a = 0; a < REG_NAXES; a++) {
		if (sz[a] < 1 || sz[a] > SUM_MAX_WORLD)
			return refuse(err, 422, "%s.layout.%s = %" PRId64 ": want 1 to %d", what,
				      reg_axes[a], (int64_t)sz[a], SUM_MAX_WORLD);
		if (a != 2 && (prod *= sz[a]) > SUM_MAX_WORLD)
			prod = (int64_t)SUM_MAX_WORLD + 1;
	}
	if (world < 1 || world > SUM_MAX_WORLD || world != prod)
		return refuse(err, 422, "%s.world = %" PRId64 ": want tp * cp * dp * pp = %" PRId64
			      " (ep is carried inside cp * dp), 1 to %d", what, (int64_t)world, prod,
			      SUM_MAX_WORLD);
	if (sz[2] > world)
		return refuse(err, 422, "%s.layout.ep = %" PRId64 ": want at most the world, %" PRId64,
			      what, (int64_t)sz[2], (int64_t)world);
	return 0;
}

/* Node names that are each a name, and each once. */
static int
step_names(json_t *nodes, const char **names, size_t n, const char *what, pl_err_t *err)
{
	const char **sorted;
	char cl[PL_CLIP_BUF];
	size_t k;
	int status = 0;

	for (k = 0; k < n; k++) {
		names[k] = json_string_value(json_array_get(nodes, k));
		if (!names[k] || !node_name_ok(names[k]))
			return refuse(err, 422, "%s.nodes[%zu] = %s: want a node name of 1 to %d letters, "
				      "digits, '.', '_', '-'", what, k,
				      names[k] ? pl_clip(names[k], cl, sizeof(cl)) : "(not a string)",
				      REG_NODE_LEN - 1);
	}
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return refuse(err, 500, "out of memory");
	memcpy(sorted, names, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), name_cmp);
	for (k = 1; k < n && !status; k++)
		if (strcmp(sorted[k - 1], sorted[k]) == 0)
			status = refuse(err, 422, "%s.nodes: %s is there twice: want each node once",
					what, sorted[k]);
	free(sorted);
	return status;
}

/* The user's settings of a step ("watch": {"hang_s", "busy_s", "slow"},
 * each optional) into *wo; 0 or the status. */
static int
watch_parse(json_t *o, struct watchopt *wo, pl_err_t *err)
{
	json_int_t hang = 0, busy = 0;
	json_error_t je;
	char cl[PL_CLIP_BUF];
	int slow = -1;

	watchopt_clear(wo);
	if (json_unpack_ex(o, &je, 0, "{s?I, s?I, s?b !}", "hang_s", &hang, "busy_s", &busy, "slow",
			   &slow) < 0)
		return refuse(err, 400, "POST /v1/watch/tasks: step.watch: %s (want {\"hang_s\": N, "
			      "\"busy_s\": N, \"slow\": true|false}, each optional)",
			      pl_clip(je.text, cl, sizeof(cl)));
	if (json_object_get(o, "hang_s") && (hang < 1 || hang > WATCHOPT_MAX_S))
		return refuse(err, 422, "POST /v1/watch/tasks: step.watch.hang_s = %" PRId64 ": want "
			      "1 to %u", (int64_t)hang, WATCHOPT_MAX_S);
	if (json_object_get(o, "busy_s") && (busy < 1 || busy > WATCHOPT_MAX_S))
		return refuse(err, 422, "POST /v1/watch/tasks: step.watch.busy_s = %" PRId64 ": want "
			      "1 to %u", (int64_t)busy, WATCHOPT_MAX_S);
	wo->hang_s = (uint32_t)hang;
	wo->busy_s = (uint32_t)busy;
	wo->slow = json_object_get(o, "slow") ? (slow ? 1 : 0) : -1;
	return 0;
}

/* The "step" of a registration into *out (caller frees); 0 or the status. */
static int
step_parse(json_t *o, struct reg_step **out, pl_err_t *err)
{
	static const char *const what = "POST /v1/watch/tasks: step";
	json_int_t world, sz[REG_NAXES];
	uint32_t size[REG_NAXES];
	const char **names;
	char cl[PL_CLIP_BUF];
	json_error_t je;
	json_t *nodes, *watch = NULL;
	struct watchopt wo;
	size_t n;
	int a, status;

	*out = NULL;
	if (json_unpack_ex(o, &je, 0, "{s:I, s:{s:I, s:I, s:I, s:I, s:I !}, s:o, s?o !}", "world",
			   &world, "layout", "tp", &sz[0], "cp", &sz[1], "ep", &sz[2], "dp", &sz[3],
			   "pp", &sz[4], "nodes", &nodes, "watch", &watch) < 0)
		return refuse(err, 400, "%s: %s (want {\"world\": N, \"layout\": {\"tp\", \"cp\", \"ep\", "
			      "\"dp\", \"pp\"}, \"nodes\": [NAME, ...], optionally \"watch\": {...}})",
			      what, pl_clip(je.text, cl, sizeof(cl)));
	if (watch && (status = watch_parse(watch, &wo, err)) != 0)
		return status;
	if ((status = step_sizes(world, sz, what, err)) != 0)
		return status;
	n = json_is_array(nodes) ? json_array_size(nodes) : 0;
	if (n < 1 || n > REG_MAX_NODES)
		return refuse(err, 422, "%s.nodes: want an array of 1 to %d node names, nodes[0] the "
			      "node of rank 0", what, REG_MAX_NODES);
	names = malloc(n * sizeof(*names));
	if (!names)
		return refuse(err, 500, "out of memory");
	status = step_names(nodes, names, n, what, err);
	for (a = 0; a < REG_NAXES; a++)
		size[a] = (uint32_t)sz[a];
	if (!status && !(*out = reg_step_new((uint32_t)world, size, names, n)))
		status = refuse(err, 500, "out of memory");
	if (!status && watch)
		(*out)->watch = wo;
	free(names);
	return status;
}

/* The task's own fields, in range. */
static int
task_check(const struct reg_task *t, long max_tasks, pl_err_t *err)
{
	char cl[PL_CLIP_BUF];
	size_t j;
	int i;

	if (t->job < 0 || t->step_id < 0 || t->task < 0 || t->rank < 0 || t->pid <= 0 ||
	    t->uid < 0 || t->job > INT64_MAX / 2 || t->step_id > INT64_MAX / 2 ||
	    t->rank > READER_MAX_RANKS || t->pid > INT32_MAX || t->uid > UINT32_MAX - 1 ||
	    t->task >= max_tasks)
		return refuse(err, 422, "POST /v1/watch/tasks: job_id, step_id, rank and uid want >= 0, "
			      "pid > 0, task in [0, watch_max_tasks = %ld)", max_tasks);
	for (i = 0; i < REG_NAXES; i++)
		if (t->coords[i] < 0 || t->coords[i] > READER_MAX_RANKS)
			return refuse(err, 422, "POST /v1/watch/tasks: coords.%s = %" PRId64 ": want 0 to %d",
				      reg_axes[i], (int64_t)t->coords[i], READER_MAX_RANKS);
	if (t->record[0] != '/' || strlen(t->record) >= REG_PATH_LEN)
		return refuse(err, 422, "POST /v1/watch/tasks: record %s: want an absolute path shorter "
			      "than %d bytes", pl_clip_path(t->record, cl, sizeof(cl)), REG_PATH_LEN);
	if (strlen(t->node) >= REG_NODE_LEN)
		return refuse(err, 422, "POST /v1/watch/tasks: node %s: want at most %d bytes",
			      pl_clip(t->node, cl, sizeof(cl)), REG_NODE_LEN - 1);
	if (t->gpu < -1 || t->gpu >= SUM_MAX_GPU)
		return refuse(err, 422, "POST /v1/watch/tasks: gpu = %" PRId64 ": want the node's GPU index, "
			      "0 to %d, or -1 for unknown", (int64_t)t->gpu, SUM_MAX_GPU - 1);
	for (j = 0; t->nic[j] && t->nic[j] >= 0x20 && t->nic[j] < 0x7f; j++)
		;
	if (t->nic[j] || j >= SUM_NIC_LEN)
		return refuse(err, 422, "POST /v1/watch/tasks: nic %s: want a NIC name of at most %d "
			      "printable ASCII bytes (\"\" for none)", pl_clip(t->nic, cl, sizeof(cl)),
			      SUM_NIC_LEN - 1);
	return 0;
}

int
reg_task_decode(const char *body, long max_tasks, struct reg_task *t, pl_err_t *err)
{
	json_int_t version = REG_VERSION;
	json_t *jstep = NULL;
	json_error_t je;
	int status;

	memset(t, 0, sizeof(*t));
	t->gpu = -1;
	t->nic = "";
	t->body_ = json_loads(body, JSON_REJECT_DUPLICATES, &je);
	if (!t->body_)
		return shape_error(&je, "POST /v1/watch/tasks: not JSON", err);
	if (json_unpack_ex(t->body_, &je, 0,
			   "{s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:{s:I, s:I, s:I, s:I, s:I !}, s:s, "
			   "s?:I, s?:s, s?:o, s?:I !}",
			   "job_id", &t->job, "step_id", &t->step_id, "task", &t->task,
			   "rank", &t->rank, "pid", &t->pid, "uid", &t->uid, "node", &t->node,
			   "coords", "tp", &t->coords[0], "cp", &t->coords[1], "ep", &t->coords[2],
			   "dp", &t->coords[3], "pp", &t->coords[4], "record", &t->record,
			   "gpu", &t->gpu, "nic", &t->nic, "step", &jstep, "version", &version) < 0) {
		status = shape_error(&je, "POST /v1/watch/tasks", err);
		goto fail;
	}
	if ((status = version_ok("POST /v1/watch/tasks", version, err)) != 0)
		goto fail;
	if ((status = task_check(t, max_tasks, err)) != 0)
		goto fail;
	if (jstep && (status = step_parse(jstep, &t->step, err)) != 0)
		goto fail;
	return 0;
fail:
	reg_task_clear(t);
	return status;
}

void
reg_task_clear(struct reg_task *t)
{
	json_decref(t->body_);
	reg_step_free(t->step);
	memset(t, 0, sizeof(*t));
}

int
reg_exit_decode(const char *body, struct reg_exit *e, pl_err_t *err)
{
	json_int_t job, stepid, task, st, version = REG_VERSION;
	json_error_t je;
	json_t *root;
	int status = 0;

	memset(e, 0, sizeof(*e));
	root = json_loads(body, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return shape_error(&je, "POST /v1/watch/exit: not JSON", err);
	if (json_unpack_ex(root, &je, 0, "{s:I, s:I, s:I, s:I, s?:I !}", "job_id", &job, "step_id",
			   &stepid, "task", &task, "status", &st, "version", &version) < 0)
		status = shape_error(&je, "POST /v1/watch/exit", err);
	else if ((status = version_ok("POST /v1/watch/exit", version, err)) != 0)
		;
	else if (st < 0 || st > 0xffff)
		status = refuse(err, 422, "POST /v1/watch/exit: status %" PRId64 ": want a wait status, "
				"0 to 65535", (int64_t)st);
	else {
		e->job = job;
		e->step_id = stepid;
		e->task = task;
		e->status = (int)st;
	}
	json_decref(root);
	return status;
}
