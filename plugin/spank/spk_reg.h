/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A node's registrations of its tasks with layoutd, gathered into one
 * message, {"tasks": [TASK, ...]}, and sent at once: slurmstepd runs
 * task_post_fork for every local task before any of them may exec, so the
 * plugin gathers them there and sends them from a thread of its own once
 * the last is counted (spk_remote.c).  No spank.h here: the gathering, the
 * cut back into single tasks and the sending are tested on their own.
 */
#ifndef SPK_REG_H
#define SPK_REG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "pl_err.h"

struct spk_reg {
	char *body;		/* {"tasks":[TASK,TASK,... then "]}" */
	size_t len, cap;
	size_t *at;		/* where each task's object starts in body */
	size_t tasks_end;	/* where the last one ends (once complete) */
	uint32_t want;		/* the node's local tasks */
	uint32_t seen;		/* counted so far */
	uint32_t n;		/* of them, with a registration */
};

/* Start gathering want tasks (> 0).  -1 when out of memory. */
int spk_reg_init(struct spk_reg *r, uint32_t want);

/*
 * Count one task, and add its registration task (a JSON object's text;
 * NULL: a task not registered, counted all the same).  1 when it was the
 * last of want (the batch is complete: spk_reg_body), 0 while more are
 * due, -1 when out of memory (what was gathered stays, as it was).
 */
int spk_reg_add(struct spk_reg *r, const char *task);

/* The whole batch, once complete. */
const char *spk_reg_body(const struct spk_reg *r);

/* Task i's registration alone (i < n), cut out of the batch in place:
 * after it, the batch is no longer whole (spk_reg_body is not valid).
 * Cut in order, 0 first. */
const char *spk_reg_cut(struct spk_reg *r, uint32_t i);

/*
 * Send the complete batch to socket sock (POST /v1/watch/tasks, each
 * request bounded by timeout_ms).  A layoutd older than the batch answers
 * it 400 (one task with a key it does not know): then each task goes
 * alone, as that one takes them, and a request that gets no answer stops
 * the rest.  The last request's answer in *rep (caller frees its body)
 * and client_request's result: 0, or -1 with err.  *alone says whether the
 * tasks went one by one.
 */
int spk_reg_send(struct spk_reg *r, const char *sock, long timeout_ms, struct client_reply *rep,
		 bool *alone, pl_err_t *err);

void spk_reg_free(struct spk_reg *r);

#endif
