/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The watch registration's codec (register.h): what the plugin encodes
 * layoutd decodes to the same values, and every field out of its range,
 * a wrong shape and another version are refused, naming the field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "register.h"
#include "tap.h"

#define TASK(extra) "{\"job_id\": 7, \"step_id\": 1, \"task\": 3, \"rank\": 11, \"pid\": 4242, " \
	"\"uid\": 1000, \"node\": \"gpu001\", \"coords\": {\"tp\": 3, \"cp\": 0, \"ep\": 0, " \
	"\"dp\": 1, \"pp\": 0}, \"record\": \"/dev/shm/parallel-layout/7.1/r\"" extra "}"

static void
round_trip(void)
{
	static const char *const names[] = { "gpu001", "gpu002" };
	const uint32_t size[REG_NAXES] = { 8, 1, 1, 2, 1 };
	struct reg_task t = { 0 }, d;
	pl_err_t err;
	char *text;

	t.job = 77;
	t.step_id = 3;
	t.task = 5;
	t.rank = 13;
	t.pid = 999;
	t.uid = 1001;
	t.node = "gpu002";
	t.coords[0] = 5;
	t.coords[3] = 1;
	t.record = "/dev/shm/parallel-layout/77.3/plw-77.3.13.999";
	t.gpu = 5;
	t.nic = "mlx5_1";
	t.step = reg_step_new(16, size, names, 2);
	ok(t.step != NULL, "a step made");
	text = reg_task_encode(&t);
	ok(text != NULL, "a task encoded");
	ok(text && !strstr(text, "version"), "version 1 writes no version key (older layoutd read it)");
	pl_err_clear(&err);
	is_int(reg_task_decode(text, 256, &d, &err), 0, "and decoded (%s)", err.text);
	is_int(d.job, 77, "job");
	is_int(d.step_id, 3, "step");
	is_int(d.task, 5, "task");
	is_int(d.rank, 13, "rank");
	is_int(d.pid, 999, "pid");
	is_int(d.uid, 1001, "uid");
	is_str(d.node, "gpu002", "node");
	is_int(d.coords[0], 5, "coords.tp");
	is_int(d.coords[3], 1, "coords.dp");
	is_str(d.record, t.record, "record");
	is_int(d.gpu, 5, "gpu");
	is_str(d.nic, "mlx5_1", "nic");
	ok(d.step && d.step->world == 16 && d.step->size[0] == 8 && d.step->size[3] == 2,
	   "the step's world and layout");
	ok(d.step && d.step->nnodes == 2 && strcmp(reg_step_node(d.step, 0), "gpu001") == 0 &&
	   strcmp(reg_step_node(d.step, 1), "gpu002") == 0, "its nodes, in order");
	ok(d.step && !watchopt_any(&d.step->watch) && text && !strstr(text, "watch"),
	   "no settings of its own: no \"watch\" key (a layoutd of before reads it)");
	reg_task_clear(&d);
	free(text);
	/* The user's settings travel with the step. */
	t.step->watch.hang_s = 600;
	t.step->watch.slow = 0;
	text = reg_task_encode(&t);
	pl_err_clear(&err);
	ok(text && reg_task_decode(text, 256, &d, &err) == 0 && d.step &&
	   d.step->watch.hang_s == 600 && d.step->watch.busy_s == 0 && d.step->watch.slow == 0,
	   "hang=10m,slow=off with the step: hang_s 600, busy_s unset, slow off (%s)", err.text);
	if (text && d.step)
		reg_task_clear(&d);
	free(text);
	reg_step_free(t.step);

	pl_err_clear(&err);
	is_int(reg_task_decode(TASK(""), 256, &d, &err), 0, "a task without gpu, nic or step");
	is_int(d.gpu, -1, "gpu unknown");
	is_str(d.nic, "", "no nic");
	ok(d.step == NULL, "no step");
	reg_task_clear(&d);
	is_int(reg_task_decode(TASK(", \"version\": 1"), 256, &d, &err), 0, "\"version\": 1 taken");
	reg_task_clear(&d);
}

struct bad {
	const char *body;
	int status;
	const char *says;
};

static const struct bad bads[] = {
	{ "[1]", 400, "POST /v1/watch/tasks" },
	{ "{", 400, "not JSON" },
	{ TASK(", \"extra\": 1"), 400, "want {\"job_id\"" },
	{ TASK(", \"version\": 2"), 422, "version 2: want 1" },
	{ TASK(", \"gpu\": 1024"), 422, "gpu = 1024: want the node's GPU index, 0 to 1023" },
	{ TASK(", \"gpu\": -2"), 422, "gpu = -2" },
	{ TASK(", \"nic\": \"a\\nb\""), 422, "nic a\\x0ab: want a NIC name" },
	{ TASK(", \"nic\": \"0123456789012345678901234567890123\""), 422, "printable ASCII" },
	{ TASK(", \"step\": {\"world\": 16}"), 400, "step: " },
	{ TASK(", \"step\": {\"world\": 15, \"layout\": {\"tp\": 8, \"cp\": 1, \"ep\": 1, \"dp\": 2, "
	       "\"pp\": 1}, \"nodes\": [\"a\"]}"), 422, "step.world = 15: want tp * cp * dp * pp = 16" },
	{ TASK(", \"step\": {\"world\": 16, \"layout\": {\"tp\": 0, \"cp\": 1, \"ep\": 1, \"dp\": 2, "
	       "\"pp\": 1}, \"nodes\": [\"a\"]}"), 422, "step.layout.tp = 0: want 1 to" },
	{ TASK(", \"step\": {\"world\": 2, \"layout\": {\"tp\": 2, \"cp\": 1, \"ep\": 4, \"dp\": 1, "
	       "\"pp\": 1}, \"nodes\": [\"a\"]}"), 422, "step.layout.ep = 4: want at most the world" },
	{ TASK(", \"step\": {\"world\": 2, \"layout\": {\"tp\": 2, \"cp\": 1, \"ep\": 1, \"dp\": 1, "
	       "\"pp\": 1}, \"nodes\": []}"), 422, "step.nodes: want an array of 1 to 65536" },
	{ TASK(", \"step\": {\"world\": 2, \"layout\": {\"tp\": 2, \"cp\": 1, \"ep\": 1, \"dp\": 1, "
	       "\"pp\": 1}, \"nodes\": [\"a b\"]}"), 422, "step.nodes[0] = a b: want a node name" },
	{ TASK(", \"step\": {\"world\": 2, \"layout\": {\"tp\": 2, \"cp\": 1, \"ep\": 1, \"dp\": 1, "
	       "\"pp\": 1}, \"nodes\": [\"a\", 3]}"), 422, "step.nodes[1] = (not a string)" },
	{ TASK(", \"step\": {\"world\": 2, \"layout\": {\"tp\": 2, \"cp\": 1, \"ep\": 1, \"dp\": 1, "
	       "\"pp\": 1}, \"nodes\": [\"a\", \"b\", \"a\"]}"), 422, "a is there twice" },
	{ TASK(", \"step\": {\"world\": 2, \"layout\": {\"tp\": 2, \"cp\": 1, \"ep\": 1, \"dp\": 1, "
	       "\"pp\": 1}, \"nodes\": [\"a\"], \"watch\": {\"hang_s\": 0}}"), 422,
	  "step.watch.hang_s = 0: want 1 to 2592000" },
	{ TASK(", \"step\": {\"world\": 2, \"layout\": {\"tp\": 2, \"cp\": 1, \"ep\": 1, \"dp\": 1, "
	       "\"pp\": 1}, \"nodes\": [\"a\"], \"watch\": {\"busy_s\": 9999999999}}"), 422,
	  "step.watch.busy_s = 9999999999: want 1 to 2592000" },
	{ TASK(", \"step\": {\"world\": 2, \"layout\": {\"tp\": 2, \"cp\": 1, \"ep\": 1, \"dp\": 1, "
	       "\"pp\": 1}, \"nodes\": [\"a\"], \"watch\": {\"stall_s\": 5}}"), 400,
	  "step.watch: " },
	{ "{\"job_id\": -1, \"step_id\": 1, \"task\": 3, \"rank\": 1, \"pid\": 1, \"uid\": 0, "
	  "\"node\": \"n\", \"coords\": {\"tp\": 0, \"cp\": 0, \"ep\": 0, \"dp\": 0, \"pp\": 0}, "
	  "\"record\": \"/r\"}", 422, "job_id, step_id, rank and uid want >= 0" },
	{ "{\"job_id\": 1, \"step_id\": 1, \"task\": 300, \"rank\": 1, \"pid\": 1, \"uid\": 0, "
	  "\"node\": \"n\", \"coords\": {\"tp\": 0, \"cp\": 0, \"ep\": 0, \"dp\": 0, \"pp\": 0}, "
	  "\"record\": \"/r\"}", 422, "task in [0, watch_max_tasks = 256)" },
	{ "{\"job_id\": 1, \"step_id\": 1, \"task\": 3, \"rank\": 1, \"pid\": 0, \"uid\": 0, "
	  "\"node\": \"n\", \"coords\": {\"tp\": 0, \"cp\": 0, \"ep\": 0, \"dp\": 0, \"pp\": 0}, "
	  "\"record\": \"/r\"}", 422, "pid > 0" },
	{ "{\"job_id\": 1, \"step_id\": 1, \"task\": 3, \"rank\": 1, \"pid\": 1, \"uid\": 0, "
	  "\"node\": \"n\", \"coords\": {\"tp\": -1, \"cp\": 0, \"ep\": 0, \"dp\": 0, \"pp\": 0}, "
	  "\"record\": \"/r\"}", 422, "coords.tp = -1: want 0 to" },
	{ "{\"job_id\": 1, \"step_id\": 1, \"task\": 3, \"rank\": 1, \"pid\": 1, \"uid\": 0, "
	  "\"node\": \"n\", \"coords\": {\"tp\": 0, \"cp\": 0, \"ep\": 0, \"dp\": 0, \"pp\": 0}, "
	  "\"record\": \"r\"}", 422, "record r: want an absolute path" },
	{ "{\"job_id\": 1, \"step_id\": 1, \"task\": 3, \"rank\": 1, \"pid\": 1, \"uid\": 0, "
	  "\"node\": \"0123456789012345678901234567890123456789012345678901234567890123456789\", "
	  "\"coords\": {\"tp\": 0, \"cp\": 0, \"ep\": 0, \"dp\": 0, \"pp\": 0}, \"record\": \"/r\"}",
	  422, "want at most 63 bytes" },
};

static void
refusals(void)
{
	size_t i;

	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct reg_task t;
		pl_err_t err;
		int st;

		pl_err_clear(&err);
		st = reg_task_decode(bads[i].body, 256, &t, &err);
		is_int(st, bads[i].status, "refused %zu with %d", i, bads[i].status);
		like(err.text, bads[i].says, "saying why (%zu)", i);
		ok(t.body_ == NULL && t.step == NULL, "and nothing kept (%zu)", i);
	}
}

static void
exits(void)
{
	struct reg_exit e = { 77, 3, 5, 7 << 8 }, d;
	pl_err_t err;
	char *text = reg_exit_encode(&e);

	pl_err_clear(&err);
	is_int(reg_exit_decode(text, &d, &err), 0, "an exit round trip (%s)", err.text);
	ok(d.job == 77 && d.step_id == 3 && d.task == 5 && d.status == 7 << 8, "the same exit");
	free(text);
	pl_err_clear(&err);
	is_int(reg_exit_decode("{\"job_id\": 1, \"step_id\": 1, \"task\": 1, \"status\": 65536}",
			       &d, &err), 422, "a status past a wait status");
	like(err.text, "status 65536: want a wait status, 0 to 65535", "saying so");
	pl_err_clear(&err);
	is_int(reg_exit_decode("{\"job_id\": 1, \"step_id\": 1, \"task\": 1, \"status\": 0, "
			       "\"version\": 9}", &d, &err), 422, "another version");
	like(err.text, "exit: version 9: want 1", "named");
	pl_err_clear(&err);
	is_int(reg_exit_decode("{\"job_id\": 1}", &d, &err), 400, "a wrong shape");
	like(err.text, "POST /v1/watch/exit", "named");
	is_int(reg_exit_decode("x", &d, &err), 400, "not JSON");
}

int
main(void)
{
	plan(25 + 3 * (int)(sizeof(bads) / sizeof(bads[0])) + 9);
	round_trip();
	refusals();
	exits();
	return done_testing();
}
