/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one way layoutd answers a request, on every listener (the local
 * socket and TCP one of layoutd_http.c, the peer listener of watch/peer.c):
 * a status with its reason phrase, a content type, Cache-Control: no-store
 * and the body; out of memory is answered as a JSON 500.
 */
#ifndef PL_LAYOUTD_REPLY_H
#define PL_LAYOUTD_REPLY_H

#include <stddef.h>

#include <jansson.h>

struct evhttp_request;

#define LD_CT_JSON "application/json"
#define LD_CT_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"

/*
 * The one reply of a request: len bytes of body with its content type
 * (LD_CT_JSON, LD_CT_PROMETHEUS, ...).  body NULL means out of memory and
 * is answered as a JSON 500.
 */
void ld_reply(struct evhttp_request *req, int status, const char *content_type,
	      const char *body, size_t len);

/* A JSON text, newline-terminated (NULL = out of memory). */
void ld_reply_text(struct evhttp_request *req, int status, const char *json);

/* root as compact JSON, newline-terminated; takes root (NULL = out of
 * memory). */
void ld_reply_json(struct evhttp_request *req, int status, json_t *root);

/* {"error": msg}. */
void ld_reply_error(struct evhttp_request *req, int status, const char *msg);

#endif
