/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The culprit's stacks: what a critical finding's page points to.  The
 * node that runs a culprit rank of a critical finding (not-entered,
 * gpu-stuck) attaches to it once, as root, with eu-stack (else gdb) and
 * writes what it saw to STATE_DIR/JOB.STEP/stack-rankR.txt; the leader
 * names that file in the alert before it exists, since the path follows
 * from the node, the step and the rank alone.  This module holds the pure
 * parts, shared by the daemon (daemon/watch/stacks.c), the leader's alert
 * and layoutctl:
 *
 *   - which findings are worth a capture (stackfile_wanted);
 *   - the file's path (stackfile_path);
 *   - the leader's request to the culprit's node (stackfile_req_*): in its
 *     200 answer to that node's POST /v1/peer/summary, a "capture" array of
 *     {"job", "step", "rank", "kind", "text"} (peerwire.h);
 *   - the file's header (stackfile_header) and the output cap
 *     (stackfile_out_*).
 */
#ifndef PL_WATCH_STACKFILE_H
#define PL_WATCH_STACKFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "buf.h"
#include "judge.h"
#include "pl_err.h"

#define STACKFILE_OUT_MAX (256 * 1024)	/* a file's tool output, at most */
#define STACKFILE_REQ_MAX 16		/* captures asked in one answer, at most */
#define STACKFILE_NAME "stack-rank"	/* stack-rankR.txt */
#define STACKFILE_STATE_DIR "/var/lib/parallel-layout"	/* state_dir's default */

/* The kinds a capture can be for: the critical ones that name a live rank
 * (not-entered, gpu-stuck); never advice, warnings, an exit (nothing left
 * to attach to) or a lost node (its ranks are unknown). */
bool stackfile_kind(enum judge_kind k);

/* Whether finding f's culprits are captured: a kind above, critical (its
 * culprit observed, not inferred). */
bool stackfile_wanted(const struct judge_finding *f);

/*
 * The file of rank's stacks in job.step on node into out (n bytes):
 * pattern (the state_dir key: an absolute path, %n the node's name, %%
 * a '%'), then "/JOB.STEP/stack-rankR.txt".  0, or -1 with err when the
 * pattern holds another '%' sequence, the node is not a plain name or
 * the path does not fit.  With rank < 0, the step's directory alone.
 */
int stackfile_path(char *out, size_t n, const char *pattern, const char *node, uint64_t job,
		   uint64_t step, int64_t rank, pl_err_t *err);

/* One capture the leader asks of a culprit's node. */
struct stackfile_req {
	uint64_t job, step;
	int64_t rank;
	enum judge_kind kind;		/* one stackfile_kind() takes */
	char text[JUDGE_TEXT_LEN];	/* the finding's line, printable ASCII */
};

/* The "capture" array of n requests; NULL when out of memory. */
json_t *stackfile_req_json(const struct stackfile_req *r, size_t n);

/*
 * A received "capture" array into out (at most max): each item an object
 * with "job", "step" (integers >= 0), "rank" (0 to 2^31 - 1), "kind" (the
 * judge's name of a kind stackfile_kind takes) and "text" (a string of
 * less than JUDGE_TEXT_LEN bytes, kept as printable ASCII); other keys are
 * ignored, so a later leader may add some.  0 with *n, or -1 with err
 * naming the first bad item and what is wanted (nothing is taken then).
 */
int stackfile_req_parse(const json_t *a, struct stackfile_req *out, size_t max, size_t *n,
			pl_err_t *err);

/* What the file's header says. */
struct stackfile_head {
	const char *node;
	uint64_t job, step;
	int64_t rank;
	long pid;
	enum judge_kind kind;
	const char *text;		/* the finding's line */
	uint64_t when_real_ns;		/* when the capture started (CLOCK_REALTIME) */
	const char *tool;		/* the command run, or "none" */
	const char *status;		/* how it ended: "exited 0", "killed after 10 s ..." */
};

/* The header's "key: value" lines and a blank line, appended to b; text
 * made printable ASCII. */
void stackfile_header(struct buf *b, const struct stackfile_head *h);

/* A tool's output as it comes, kept up to max bytes (the rest counted). */
struct stackfile_out {
	struct buf b;
	size_t max;
	size_t cut;			/* bytes not kept */
};

/* Start o, keeping at most max bytes (0: STACKFILE_OUT_MAX). */
void stackfile_out_init(struct stackfile_out *o, size_t max);

/* n bytes of output: a control byte other than newline and tab becomes
 * '?' (the file is shown on terminals); past the cap only counted. */
void stackfile_out_add(struct stackfile_out *o, const void *p, size_t n);

/* The end: when some was cut, back to the last whole line and a line
 * saying how many bytes were cut and why. */
void stackfile_out_end(struct stackfile_out *o);

void stackfile_out_free(struct stackfile_out *o);

#endif
