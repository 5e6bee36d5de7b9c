/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd's connections, beside what evhttp does for them: a cap on how
 * many are open (the oldest idle one is shed for a new one), a deadline
 * for the whole request (evhttp's timeout only bounds silence, so a client
 * sending a byte a second would stay forever), a back-off when accept()
 * fails for want of file descriptors (instead of spinning on a listener
 * that stays readable), and the caller's credentials.
 */
#ifndef PL_LAYOUTD_CONN_H
#define PL_LAYOUTD_CONN_H

#include <stdbool.h>

struct event_base;
struct evhttp;
struct evhttp_request;
struct evconnlistener;
struct ld_log;
struct ld_conns;

/* Who is asking.  Over TCP nothing is known. */
struct ld_peer {
	bool local;		/* a unix socket: the kernel gave its credentials */
	long uid, gid, pid;	/* -1 unknown */
};

struct ld_conn_stats {
	long open;
	long max;
	unsigned long accepted;
	unsigned long shed;		/* idle ones closed for a new one */
	unsigned long timed_out;	/* request not complete within the deadline */
	unsigned long accept_errors;	/* accept() failures (EMFILE, ...) */
};

/*
 * Track every connection of http (it installs http's bufferevent
 * callback); lg is where drops and accept failures are reported.  NULL
 * when out of memory.  Free with ld_conns_free() after evhttp_free().
 */
struct ld_conns *ld_conns_new(struct event_base *base, struct evhttp *http, struct ld_log *lg);

/* The cap and the whole-request deadline; applied to open connections too. */
void ld_conns_set_limits(struct ld_conns *c, long max_connections, long request_timeout_ms);

/* Pause this listener when the cap is reached or accept() fails, resume
 * it later.  Returns 0, or -1 when it cannot be watched. */
int ld_conns_watch(struct ld_conns *c, struct evconnlistener *lev);

/*
 * A complete request reached the handlers: its connection's deadline stops
 * while it is answered (the handlers run to the end; they cannot be cut
 * short).  ld_conns_request_end() once the reply is queued: reading it
 * gets a fresh request_timeout_ms.
 */
void ld_conns_request_begin(struct ld_conns *c, struct evhttp_request *req);
void ld_conns_request_end(struct ld_conns *c);

/*
 * The handler of the current request answers it later, from the loop
 * (the peers' munge credentials are checked on a worker thread): between
 * request_begin and request_end.  Its connection then keeps no deadline
 * until the answer is written; what bounds the wait is the owner's (a
 * bounded queue, munge's own retries).  A connection closed meanwhile
 * leaves the request to evhttp_send_reply(), which frees it.
 */
void ld_conns_request_defer(struct ld_conns *c);

/* The caller of req: a unix socket's SO_PEERCRED, or nothing over TCP. */
void ld_conns_peer(struct evhttp_request *req, struct ld_peer *peer);

void ld_conns_stats(const struct ld_conns *c, struct ld_conn_stats *st);

/* Before evhttp_free(): stop touching the listeners and timers. */
void ld_conns_shutdown(struct ld_conns *c);

/* After evhttp_free() (which closes every connection), before the base goes. */
void ld_conns_free(struct ld_conns *c);

#endif
