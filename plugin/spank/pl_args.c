/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugstack.conf arguments, e.g.
 *   required parallel_layout.so map=/etc/parallel-layout/cluster.json fallback=local
 * Strict: an unknown key or a bad value is an error naming it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "pl_plugin.h"

static const char *const keys =
	"map, socket, fallback, timeout_ms, export, reorder, master_addr, master_port_base, "
	"master_port_span, socket_ifname, ras_port_base, ras_port_span, force";

static int
num(const char *key, const char *v, long lo, long hi, long *out, char *msg, size_t len)
{
	char *end = NULL;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi) {
		snprintf(msg, len, "%s=%s: expected a whole number from %ld to %ld", key, v, lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

static int
text(const char *key, const char *v, char *dst, size_t size, char *msg, size_t len)
{
	if (strlen(v) >= size) {
		snprintf(msg, len, "%s=%.40s...: longer than %zu characters", key, v, size - 1);
		return -1;
	}
	strcpy(dst, v);
	return 0;
}

static int
export_list(const char *v, unsigned *mask, char *msg, size_t len)
{
	char buf[256], *save = NULL, *tok;

	if (text("export", v, buf, sizeof(buf), msg, len) < 0)
		return -1;
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "framework") == 0)
			*mask |= EXPORT_FRAMEWORK;
		else if (strcmp(tok, "nccl") == 0)
			*mask |= EXPORT_NCCL;
		else if (strcmp(tok, "slurm") == 0)
			*mask |= EXPORT_SLURM;
		else if (strcmp(tok, "none") == 0)
			*mask = 0;
		else {
			snprintf(msg, len, "export=%s: unknown family '%s' (accepted: framework, nccl, slurm, none)",
				 v, tok);
			return -1;
		}
	}
	return 0;
}

static int
yesno(const char *key, const char *v, bool *out, char *msg, size_t len)
{
	if (strcmp(v, "yes") == 0 || strcmp(v, "1") == 0)
		*out = true;
	else if (strcmp(v, "no") == 0 || strcmp(v, "0") == 0)
		*out = false;
	else {
		snprintf(msg, len, "%s=%s: expected yes or no", key, v);
		return -1;
	}
	return 0;
}

int
pl_args_parse(int ac, char **av, struct pl_conf *c, char *msg, size_t len)
{
	int i;

	memset(c, 0, sizeof(*c));
	snprintf(c->socket, sizeof(c->socket), "%s", CLIENT_DEFAULT_SOCKET);
	c->fallback = FALLBACK_LOCAL;
	c->timeout_ms = 2000;
	c->export_mask = EXPORT_FRAMEWORK | EXPORT_NCCL;
	c->reorder = true;
	c->master_port_base = 20000;
	c->master_port_span = 20000;
	c->ras_port_base = 28100;
	c->ras_port_span = 1000;
	for (i = 0; i < ac; i++) {
		const char *eq = strchr(av[i], '='), *v;
		char key[32];
		int rc;

		if (!eq || eq == av[i] || (size_t)(eq - av[i]) >= sizeof(key)) {
			snprintf(msg, len, "plugstack argument '%s': expected key=value (keys: %s)", av[i],
				 keys);
			return -1;
		}
		memcpy(key, av[i], (size_t)(eq - av[i]));
		key[eq - av[i]] = '\0';
		v = eq + 1;
		if (strcmp(key, "map") == 0)
			rc = text(key, v, c->map, sizeof(c->map), msg, len);
		else if (strcmp(key, "socket") == 0)
			rc = text(key, v, c->socket, sizeof(c->socket), msg, len);
		else if (strcmp(key, "fallback") == 0) {
			rc = 0;
			if (strcmp(v, "local") == 0)
				c->fallback = FALLBACK_LOCAL;
			else if (strcmp(v, "fail") == 0)
				c->fallback = FALLBACK_FAIL;
			else {
				snprintf(msg, len, "fallback=%s: expected local or fail", v);
				rc = -1;
			}
		} else if (strcmp(key, "timeout_ms") == 0)
			rc = num(key, v, 1, 60000, &c->timeout_ms, msg, len);
		else if (strcmp(key, "export") == 0)
			rc = export_list(v, &c->export_mask, msg, len);
		else if (strcmp(key, "reorder") == 0)
			rc = yesno(key, v, &c->reorder, msg, len);
		else if (strcmp(key, "master_addr") == 0)
			rc = text(key, v, c->master_addr, sizeof(c->master_addr), msg, len);
		else if (strcmp(key, "master_port_base") == 0)
			rc = num(key, v, 1024, 65535, &c->master_port_base, msg, len);
		else if (strcmp(key, "master_port_span") == 0)
			rc = num(key, v, 1, 64511, &c->master_port_span, msg, len);
		else if (strcmp(key, "socket_ifname") == 0)
			rc = text(key, v, c->socket_ifname, sizeof(c->socket_ifname), msg, len);
		else if (strcmp(key, "ras_port_base") == 0)
			rc = num(key, v, 1024, 65535, &c->ras_port_base, msg, len);
		else if (strcmp(key, "ras_port_span") == 0)
			rc = num(key, v, 0, 64511, &c->ras_port_span, msg, len);
		else if (strcmp(key, "force") == 0)
			rc = text(key, v, c->force, sizeof(c->force), msg, len);
		else {
			snprintf(msg, len, "plugstack argument '%s': unknown key '%s' (accepted: %s)", av[i],
				 key, keys);
			rc = -1;
		}
		if (rc < 0)
			return -1;
	}
	if (c->master_port_base + c->master_port_span > 65536) {
		snprintf(msg, len, "master_port_base=%ld + master_port_span=%ld passes port 65535",
			 c->master_port_base, c->master_port_span);
		return -1;
	}
	if (c->ras_port_base + c->ras_port_span > 65536) {
		snprintf(msg, len, "ras_port_base=%ld + ras_port_span=%ld passes port 65535",
			 c->ras_port_base, c->ras_port_span);
		return -1;
	}
	return 0;
}
