/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The peer wire's rules (peerwire.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "peerwire.h"
#include "topo.h"

static const char *const refusal_names[PEERWIRE_NREFUSE] = {
	"request", "unauthenticated", "replayed", "expired", "credential", "uid", "checksum",
	"summary", "step", "stale", "busy", "origin", "munged",
};

const char *
peerwire_refusal_name(enum peerwire_refusal r)
{
	return (unsigned)r < PEERWIRE_NREFUSE ? refusal_names[r] : "?";
}

void
peerwire_url(struct buf *out, const struct topo_map *map, const char *name, int port,
	     const char *path)
{
	const char *host = name, *addr = NULL;
	int pp = 0;
	long i = map ? topo_find_node(map, name) : -1;

	if (i >= 0 && topo_node_peer(map, i, &addr, &pp) == 0) {
		if (addr && *addr)
			host = addr;
		if (pp > 0)
			port = pp;
	}
	if (strchr(host, ':'))
		buf_printf(out, PEERWIRE_SCHEME "[%s]:%d%s", host, port, path ? path : "");
	else
		buf_printf(out, PEERWIRE_SCHEME "%s:%d%s", host, port, path ? path : "");
}

const char *
peerwire_post_payload(const void *body, size_t len, char hex[SHA256_HEX_LEN])
{
	return sha256_hex_of(body, len, hex);
}

const char *
peerwire_reply_payload(const char *req_hex, const void *body, size_t len,
		       char out[PEERWIRE_REPLY_LEN])
{
	char hex[SHA256_HEX_LEN];

	snprintf(out, PEERWIRE_REPLY_LEN, "REPLY %.64s %s", req_hex,
		 sha256_hex_of(body, len, hex));
	return out;
}

bool
peerwire_cred_shape(const char *v)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
	size_t n, body;

	if (!v || strncmp(v, "MUNGE:", 6) != 0)
		return false;
	n = strnlen(v, PEERWIRE_CRED_MAX + 1);
	if (n > PEERWIRE_CRED_MAX || n < 8 || v[n - 1] != ':')
		return false;
	body = strspn(v + 6, b64);
	return body > 0 && 6 + body == n - 1;
}

void
peerwire_get_payload(struct buf *out, const char *uri)
{
	buf_printf(out, "GET %s", uri);
}

json_t *
peerwire_misdirected(uint64_t job, uint64_t step, const char *self, const char *target,
		     bool relay, bool acting, pl_err_t *err)
{
	pl_err_t mine;

	if (!err) {
		pl_err_clear(&mine);
		err = &mine;
	}
	pl_err_status(err, 421, "job %" PRIu64 ".%" PRIu64 ": not led here (%s): ask its %s, %s",
		      job, step, self, relay ? "relay" : acting ? "acting leader" : "leader",
		      target);
	return json_pack("{s:s, s:s, s:b}", "error", err->text, "leader", target, "acting",
			 acting);
}

int
peerwire_misdirected_parse(const json_t *body, char *leader, size_t n, bool *acting)
{
	const char *ld = json_string_value(json_object_get(body, "leader"));
	const json_t *a = json_object_get(body, "acting");

	if (!ld || !*ld || strlen(ld) >= n || !json_is_boolean(a))
		return -1;
	memcpy(leader, ld, strlen(ld) + 1);
	*acting = json_is_true(a);
	return 0;
}
