/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Non-blocking HTTP POSTs from layoutd's event loop: one libcurl multi
 * handle driven by libevent (an event per socket libcurl uses and one
 * timer, curl_multi_socket_action on each), shared by everything in the
 * daemon that sends (alert delivery, peer summaries).  Nothing here ever
 * waits: a request is queued and its done callback runs later, from the
 * loop, exactly once (unless it is cancelled, or the whole thing freed).
 *
 * Only http:// and https:// are spoken, redirects are not followed, and
 * libcurl's own signal use is off (CURLOPT_NOSIGNAL; name resolution runs
 * in libcurl's resolver thread, so a slow DNS does not hold the loop).
 */
#ifndef PL_LAYOUTD_CURL_H
#define PL_LAYOUTD_CURL_H

#include <stddef.h>
#include <stdint.h>

#include "pl_err.h"

struct event_base;
struct ld_curl;

/* At most this much of an answer's body is kept (the rest is counted in
 * ld_http_result.len but not stored). */
#define LD_HTTP_BODY_MAX (64 * 1024)

/* How a request ended. */
struct ld_http_result {
	long status;		/* the HTTP status; 0 when no answer came */
	const char *error;	/* why no answer came ("" when status != 0) */
	const char *body;	/* the answer's first LD_HTTP_BODY_MAX bytes, NUL-terminated */
	size_t len;		/* the answer's whole length */
	double seconds;		/* from the call to the end */
	const char *header;	/* the value of the request's want_header in the
				 * answer (the first, at most LD_HTTP_HEADER_MAX
				 * bytes, blanks around it cut), NULL none */
};

/* The longest answer header value kept (want_header). */
#define LD_HTTP_HEADER_MAX 4096

/* Called once when a request ends; r and what it points to live only
 * during the call.  It may start new requests. */
typedef void (*ld_http_done)(void *arg, const struct ld_http_result *r);

struct ld_http_req {
	const char *url;		/* http:// or https:// */
	const char *content_type;	/* NULL: application/json */
	const void *body;		/* copied */
	size_t len;
	const char *const *headers;	/* "Name: value", NULL-terminated; NULL none; copied */
	const char *want_header;	/* an answer header to keep (its name, any
					 * case); NULL none; copied */
	long connect_ms;		/* connect timeout; 0: timeout_ms */
	long timeout_ms;		/* the whole request (> 0) */
	ld_http_done done;
	void *arg;
};

/*
 * The multi handle on base (calls curl_global_init the first time: make it
 * from main before any thread starts).  NULL with err when libcurl or
 * libevent cannot be set up.  Free with ld_curl_free() before the base.
 */
struct ld_curl *ld_curl_new(struct event_base *base, pl_err_t *err);

/* Abort whatever is in flight (no callback is called) and free.  Free it
 * before the owners of the callbacks' arguments.  NULL is fine. */
void ld_curl_free(struct ld_curl *c);

/*
 * Start a POST.  Returns its id (> 0), or 0 with err when it cannot start
 * (bad URL scheme, out of memory); done is never called from inside this
 * call.
 */
uint64_t ld_http_post(struct ld_curl *c, const struct ld_http_req *rq, pl_err_t *err);

/* Abort request id (its callback is not called); an id that has ended
 * already is ignored. */
void ld_http_cancel(struct ld_curl *c, uint64_t id);

#endif
