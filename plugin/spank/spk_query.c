/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a placement comes from: layoutd on this node (JSON on its socket),
 * or the same computation in-process from the map file when the daemon
 * cannot be reached and the admin allows it (structs only: no JSON inside
 * one process).  A daemon that answers "no" (4xx) is believed: the request
 * itself is wrong, and asking again locally would only say the same thing
 * later.  Paths from plugstack.conf are named whole (they are the admin's,
 * bounded by PATH_MAX); what came from elsewhere is echoed cut.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "spk_plugin.h"

static int
local_place(const struct spk_conf *c, const struct proto_request *req,
	    struct proto_placement *out, pl_err_t *err)
{
	struct topo_map *m;
	pl_err_t why;
	int status = 0, rv;

	pl_err_clear(&why);
	m = topo_load(c->map, &why);
	if (!m)
		return pl_err_set(err, "map %s", why.text);	/* names the file */
	rv = proto_answer(m, req, out, &status, err);
	topo_free(m);
	return rv;
}

int
spk_query(const struct spk_conf *c, const char *node, const struct proto_request *req,
	 struct proto_placement *out, char *from, size_t fromlen, pl_err_t *err)
{
	struct client_reply r = { 0, NULL, 0 };
	char sock[PATH_MAX], why[PL_ERR_TEXT], clip[PL_CLIP_BUF];
	char *json = NULL;
	pl_err_t e;
	int rv = -1;

	memset(out, 0, sizeof(*out));
	pl_err_clear(&e);
	if (client_socket_path(c->socket, node, sock, sizeof(sock)) < 0)
		return pl_err_set(err, "socket=%s: bad pattern (only %%n and %%%% are expanded)",
				  pl_clip_path(c->socket, clip, sizeof(clip)));
	json = proto_request_to_json(req);
	if (!json)
		return pl_err_set(err, "out of memory for the request");
	if (client_request(sock, "POST", "/v1/placement", json, c->timeout_ms, &r, &e) == 0) {
		if (r.status == 200) {
			if (proto_placement_parse(r.body ? r.body : "", out, &e) == 0) {
				snprintf(from, fromlen, "layoutd at %s", sock);
				rv = 0;
			} else {
				pl_err_set(err, "layoutd at %s: %s", sock, e.text);
			}
			goto out;
		}
		if (r.status >= 400 && r.status < 500) {
			struct proto_placement none;

			/* The parser turns an {"error"} body into its message. */
			proto_placement_parse(r.body ? r.body : "{}", &none, &e);
			proto_placement_free(&none);
			pl_err_set(err, "%s", e.text[0] ? e.text : "layoutd refused the request");
			goto out;
		}
		snprintf(why, sizeof(why), "HTTP status %ld", r.status);
	} else {
		snprintf(why, sizeof(why), "%s", e.text);
	}
	if (c->fallback == FALLBACK_FAIL) {
		pl_err_set(err, "layoutd did not answer (%s) and fallback=fail", why);
		goto out;
	}
	if (!c->map[0]) {
		pl_err_set(err, "layoutd did not answer (%s) and no map= is configured to place in-process",
			   why);
		goto out;
	}
	if (local_place(c, req, out, err) == 0) {
		snprintf(from, fromlen, "in-process from %s (layoutd: %s)", c->map, why);
		rv = 0;
	}
out:
	free(json);
	free(r.body);
	return rv;
}
