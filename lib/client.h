/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The client side of the daemon protocol: one HTTP request to layoutd over
 * its unix socket (plain sockets) or an http:// URL (libcurl), with a hard
 * overall timeout.  Used by the plugin inside srun and slurmstepd, where
 * nothing may block past its timeout, and by layoutctl.
 */
#ifndef PL_CLIENT_H
#define PL_CLIENT_H

#include "pl_err.h"

/* Where layoutd listens unless configured otherwise (%n = node name): the
 * one definition the daemon, the plugin and layoutctl share. */
#define CLIENT_DEFAULT_SOCKET "/run/parallel-layout/layoutd-%n.sock"

struct client_reply {
	long status;		/* HTTP status; 0 when no answer came */
	char *body;		/* NUL-terminated; caller frees; NULL when none */
	size_t len;
};

/*
 * Send method (GET or POST) to path ("/v1/health") at socket_path (a unix
 * socket) or, when socket_path starts with "http://", that TCP URL.  body may
 * be NULL.  timeout_ms bounds the whole exchange, connecting included.
 * Returns 0 when an HTTP answer arrived (any status: check reply->status),
 * -1 with err saying why there was none (no daemon, timeout, ...).
 * Caller frees reply->body.
 */
int client_request(const char *socket_path, const char *method, const char *path,
		   const char *body, long timeout_ms, struct client_reply *reply,
		   pl_err_t *err);

/* The longest extra header client_request_hdr takes (a munge credential
 * fits). */
#define CLIENT_HEADER_MAX 4096

/*
 * client_request with one more header line, "Name: value" (no CR or LF,
 * shorter than CLIENT_HEADER_MAX), or NULL for none.
 */
int client_request_hdr(const char *socket_path, const char *method, const char *path,
		       const char *header, const char *body, long timeout_ms,
		       struct client_reply *reply, pl_err_t *err);

/* Expand %n (node name) and %% in a socket pattern into buf.  -1 if it does
 * not fit or has another % sequence. */
int client_socket_path(const char *pattern, const char *node, char *buf, size_t size);

#endif
