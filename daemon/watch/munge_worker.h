/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The munge worker: munge_encode() and munge_decode() on a thread of their
 * own, off the event loop (watch/munge_worker.c says why).  The loop submits
 * jobs; each answer comes back on the loop through the callback given.
 */
#ifndef PL_LAYOUTD_MUNGE_WORKER_H
#define PL_LAYOUTD_MUNGE_WORKER_H

#include <stddef.h>

#include "layoutd.h"		/* LD_PATH */

struct event_base;
struct ld_munge;

#define LD_MUNGE_QUEUE_MAX 4096		/* jobs waiting for the worker */
#define LD_MUNGE_WHY_LEN 200

enum ld_munge_kind { LD_MUNGE_ENCODE, LD_MUNGE_DECODE };

/* One job.  The caller fills kind, socket ("" libmunge's default), ttl
 * (ENCODE) and in (heap: the payload to encode, or the credential to
 * decode); the worker fills merr (a munge_err_t), why (its text, when not
 * EMUNGE_SUCCESS), out (heap: the credential, or the payload, NUL ended,
 * outlen bytes) and uid (DECODE).  A caller's own record may start with
 * one (next belongs to the worker while it holds the job).  prep, when
 * set, runs on the worker first, with the job: the caller's own work that
 * must not hold the loop (the peers copy and hash a body there). */
struct ld_munge_job {
	struct ld_munge_job *next;
	void (*prep)(struct ld_munge_job *j);
	enum ld_munge_kind kind;
	char socket[LD_PATH];
	int ttl;
	char *in;
	int merr;
	char why[LD_MUNGE_WHY_LEN];
	char *out;
	size_t outlen;
	long uid;
	char origin[48];	/* DECODE: the credential's origin address, "" unknown */
};

/* Called on the loop with each job done; the job is the caller's again. */
typedef void (*ld_munge_done_cb)(void *arg, struct ld_munge_job *j);

/* The worker, its wake-up on base.  NULL when out of memory or the thread
 * cannot start. */
struct ld_munge *ld_munge_new(struct event_base *base, ld_munge_done_cb cb, void *arg);

/* Queue j for the worker (which holds it then).  -1 when the queue is full
 * or the worker is gone: j stays the caller's. */
int ld_munge_submit(struct ld_munge *m, struct ld_munge_job *j);

/* Stop the worker (waiting for the job it runs): the jobs it still held,
 * queued ones first, linked by next, are the caller's again. */
struct ld_munge_job *ld_munge_stop(struct ld_munge *m);

/* Stop (what was held is dropped: call ld_munge_stop first to keep it)
 * and free. */
void ld_munge_free(struct ld_munge *m);

#endif
