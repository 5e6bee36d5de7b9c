/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The culprit's stacks (stacks = yes): what the person paged for a
 * critical finding sees of what the culprit was doing.
 *
 * The leader (ld_stacks_findings, beside the alerts on the findings
 * callback) asks the node of each culprit of a critical finding that
 * names a live rank (lib/watch/stackfile.h: not-entered, gpu-stuck) to
 * capture it, once per rank: its own node directly, another in its 200
 * answer to that node's next POST /v1/peer/summary (ld_stacks_asked;
 * lib/watch/peerwire.h).  The node checks what it is asked
 * (ld_stacks_requested: a rank of that step registered here, still the
 * registered process) and runs eu-stack -i -p PID, else gdb's "thread apply
 * all bt", and for a Python rank gdb's py-bt when the interpreter's gdb
 * support is installed, in children the loop never waits for (their
 * output through a pipe event, reaped on a timer, the process group
 * killed after stack_timeout_s), at most 4 at once and 16 a step, 256 KiB
 * of output; then writes STATE_DIR/JOB.STEP/stack-rankR.txt whole (a
 * temporary file renamed, mode 0640).  ptrace stops the rank for a
 * moment: worth it for a critical finding's culprit, so never for a
 * warning or advice.
 */
#ifndef PL_LAYOUTD_STACKS_H
#define PL_LAYOUTD_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "pl_err.h"

struct ld;
struct ld_stacks;
struct ld_step_view;
struct judge_finding;
struct stackfile_req;

/* The captures of d (its settings from d->cur->conf, the children's
 * events on d->base).  NULL when out of memory.  ld_stacks_free() kills a
 * capture under way (the rank is let go: a tool killed detaches). */
struct ld_stacks *ld_stacks_new(struct ld *d);
void ld_stacks_free(struct ld_stacks *st);

/* The leader's part of a judge round (watch/lead.h's ld_findings_cb):
 * captures asked for the culprits of the round's wanted findings.  Uses
 * d->stacks. */
void ld_stacks_findings(struct ld *d, const struct ld_step_view *v, const struct judge_finding *f,
			size_t n, uint64_t now_ns);

/* The captures asked of node for job.step, taken out of the leader's
 * outbox as the "capture" array of its answer (caller frees); NULL when
 * none. */
json_t *ld_stacks_asked(struct ld_stacks *st, uint64_t job, uint64_t step, const char *node);

/* The "capture" array of leader's answer to this node's summary of
 * job.step: each item checked (stackfile_req_parse, the same job.step) and
 * captured; what is refused is logged. */
void ld_stacks_requested(struct ld_stacks *st, uint64_t job, uint64_t step, const char *leader,
			 const json_t *capture);

/* Capture r's rank here: a task of r's step registered on this node that
 * has not exited.  0 when started or queued (or captured before), -1 with
 * err. */
int ld_stacks_capture(struct ld_stacks *st, const struct stackfile_req *r, pl_err_t *err);

/* "NODE:PATH" of rank's stack file in job.step on node into out (n
 * bytes), as the alert and the step's view name it.  0, or -1 when stacks
 * are off or the path cannot be made. */
int ld_stacks_name(const struct ld *d, const char *node, uint64_t job, uint64_t step, int64_t rank,
		   char *out, size_t n);

struct ld_stacks_stats {
	unsigned long asked;		/* captures asked of other nodes (leader) */
	unsigned long started;		/* captures started here */
	unsigned long written;		/* stack files written */
	unsigned long timed_out;	/* a tool killed after stack_timeout_s */
	unsigned long refused;		/* requests refused, bounds reached, pids reused */
	size_t running;
};

void ld_stacks_stats(const struct ld_stacks *st, struct ld_stacks_stats *out);

#endif
