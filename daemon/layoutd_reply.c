/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The one reply helper of every listener (layoutd_reply.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "layoutd_reply.h"
#include "proto.h"

#define OOM_BODY "{\"error\":\"out of memory\"}\n"

static const char *
reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 421: return "Misdirected Request";
	case 422: return "Unprocessable Entity";
	case 500: return "Internal Server Error";
	case 507: return "Insufficient Storage";
	default: return "Error";
	}
}

/* The reply: a then b (b may be NULL) as the body.  a NULL means out of
 * memory, answered as a JSON 500. */
static void
send_body(struct evhttp_request *req, int status, const char *content_type, const char *a,
	  size_t alen, const char *b, size_t blen)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *out = evbuffer_new();

	if (!a) {
		content_type = LD_CT_JSON;
		a = OOM_BODY;
		alen = strlen(OOM_BODY);
		b = NULL;
		status = 500;
	}
	evhttp_add_header(h, "Content-Type", content_type);
	evhttp_add_header(h, "Cache-Control", "no-store");
	if (out && evbuffer_add(out, a, alen) == 0 && (!b || evbuffer_add(out, b, blen) == 0))
		evhttp_send_reply(req, status, reason(status), out);
	else
		evhttp_send_error(req, 500, "out of memory");
	if (out)
		evbuffer_free(out);
}

void
ld_reply(struct evhttp_request *req, int status, const char *content_type, const char *body,
	 size_t len)
{
	send_body(req, status, content_type, body, len, NULL, 0);
}

void
ld_reply_text(struct evhttp_request *req, int status, const char *json)
{
	send_body(req, status, LD_CT_JSON, json, json ? strlen(json) : 0, "\n", 1);
}

void
ld_reply_json(struct evhttp_request *req, int status, json_t *root)
{
	char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;

	ld_reply_text(req, status, text);
	free(text);
	json_decref(root);
}

void
ld_reply_error(struct evhttp_request *req, int status, const char *msg)
{
	char *text = proto_error_json(msg);

	ld_reply_text(req, status, text);
	free(text);
}
