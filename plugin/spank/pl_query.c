/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a placement comes from: layoutd on this node, or the same
 * computation in-process from the map file when the daemon cannot be
 * reached and the admin allows it.  A daemon that answers "no" (4xx) is
 * believed: the request itself is wrong, and asking again locally would only
 * say the same thing later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "pl_plugin.h"

static int
local_place(const struct pl_conf *c, const char *request_json, struct proto_placement *out,
	    char *msg, size_t len)
{
	struct topo_map *m;
	pl_err_t err;
	char *answer;
	int status = 0, rv = -1;

	pl_err_clear(&err);
	m = topo_load(c->map, &err);
	if (!m) {
		snprintf(msg, len, "map %s", err.text);
		return -1;
	}
	answer = proto_place(m, request_json, &status);
	if (!answer)
		snprintf(msg, len, "out of memory");
	else if (proto_placement_parse(answer, out, &err) < 0)
		snprintf(msg, len, "%s", err.text);
	else
		rv = 0;
	free(answer);
	topo_free(m);
	return rv;
}

int
pl_query(const struct pl_conf *c, const char *node, const char *request_json,
	 struct proto_placement *out, char *from, size_t fromlen, char *msg, size_t len)
{
	struct client_reply r = { 0, NULL, 0 };
	char sock[PATH_MAX], why[PL_ERR_TEXT];
	pl_err_t err;
	int rv = -1;

	pl_err_clear(&err);
	if (client_socket_path(c->socket, node, sock, sizeof(sock)) < 0) {
		snprintf(msg, len, "socket=%s: bad pattern (only %%n and %%%% are expanded)", c->socket);
		return -1;
	}
	if (client_request(sock, "POST", "/v1/placement", request_json, c->timeout_ms, &r,
			   &err) == 0) {
		if (r.status == 200) {
			if (proto_placement_parse(r.body, out, &err) == 0) {
				snprintf(from, fromlen, "layoutd at %s", sock);
				rv = 0;
			} else {
				snprintf(msg, len, "layoutd at %s: %s", sock, err.text);
			}
			goto out;
		}
		if (r.status >= 400 && r.status < 500) {
			struct proto_placement none;

			/* The parser turns an {"error"} body into its message. */
			proto_placement_parse(r.body ? r.body : "{}", &none, &err);
			snprintf(msg, len, "%s", err.text[0] ? err.text : "layoutd refused the request");
			goto out;
		}
		snprintf(why, sizeof(why), "HTTP status %ld", r.status);
	} else {
		snprintf(why, sizeof(why), "%s", err.text);
	}
	if (c->fallback == FALLBACK_FAIL) {
		snprintf(msg, len, "layoutd did not answer (%s) and fallback=fail", why);
		goto out;
	}
	if (!c->map[0]) {
		snprintf(msg, len, "layoutd did not answer (%s) and no map= is configured to place in-process",
			 why);
		goto out;
	}
	if (local_place(c, request_json, out, msg, len) == 0) {
		snprintf(from, fromlen, "in-process from %s (layoutd: %s)", c->map, why);
		rv = 0;
	}
out:
	free(r.body);
	return rv;
}
