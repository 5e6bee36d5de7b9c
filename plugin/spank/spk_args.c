/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugstack.conf arguments, e.g.
 *   required parallel_layout.so map=/etc/parallel-layout/cluster.json fallback=local
 * Parsed with a key table (name, kind, field, limits).  Strict: an unknown
 * key, a key given twice or a bad value is an error naming it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "spk_plugin.h"

enum kind { K_TEXT, K_PATH, K_LONG, K_YESNO, K_FALLBACK, K_EXPORT };

struct key {
	const char *name;
	enum kind kind;
	size_t off;		/* of the field in struct spk_conf */
	size_t size;		/* of a text field */
	long lo, hi;		/* of a number */
};

#define TEXT(f) K_TEXT, offsetof(struct spk_conf, f), sizeof(((struct spk_conf *)0)->f), 0, 0
#define PATH(f) K_PATH, offsetof(struct spk_conf, f), sizeof(((struct spk_conf *)0)->f), 0, 0
#define LONG(f, lo, hi) K_LONG, offsetof(struct spk_conf, f), 0, lo, hi
#define FIELD(k, f) k, offsetof(struct spk_conf, f), 0, 0, 0

static const struct key keys[] = {
	{ "map", TEXT(map) },
	{ "socket", TEXT(socket) },
	{ "fallback", FIELD(K_FALLBACK, fallback) },
	{ "timeout_ms", LONG(timeout_ms, 1, 60000) },
	{ "export", FIELD(K_EXPORT, export_mask) },
	{ "reorder", FIELD(K_YESNO, reorder) },
	{ "master_addr", TEXT(master_addr) },
	{ "master_port_base", LONG(master_port_base, 1024, 65535) },
	{ "master_port_span", LONG(master_port_span, 1, 64511) },
	{ "socket_ifname", TEXT(socket_ifname) },
	{ "ras_port_base", LONG(ras_port_base, 1024, 65535) },
	{ "ras_port_span", LONG(ras_port_span, 0, 64511) },
	{ "force", TEXT(force) },
	{ "watch", FIELD(K_YESNO, watch) },
	{ "hook", PATH(hook) },
	{ "watch_dir", PATH(watch_dir) },
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const char *
key_list(char *out, size_t size)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < NKEYS && o < size; i++)
		o += (size_t)snprintf(out + o, size - o, "%s%s", i ? ", " : "", keys[i].name);
	return out;
}

static int
set_long(const struct key *k, const char *v, long *out, pl_err_t *err)
{
	char *end = NULL;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < k->lo || x > k->hi)
		return pl_err_set(err, "expected a whole number from %ld to %ld", k->lo, k->hi);
	*out = x;
	return 0;
}

static int
set_export(const char *v, unsigned *mask, pl_err_t *err)
{
	const char *p = v;

	*mask = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		char tok[PL_CLIP_BUF];

		if (n == 9 && strncmp(p, "framework", n) == 0)
			*mask |= EXPORT_FRAMEWORK;
		else if (n == 4 && strncmp(p, "nccl", n) == 0)
			*mask |= EXPORT_NCCL;
		else if (n == 5 && strncmp(p, "slurm", n) == 0)
			*mask |= EXPORT_SLURM;
		else if (n == 4 && strncmp(p, "none", n) == 0)
			*mask = 0;
		else
			return pl_err_set(err, "unknown family '%s' (accepted: framework, nccl, slurm, none)",
					  pl_clipn(p, n, tok, sizeof(tok)));
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

static int
set_value(const struct key *k, const char *v, struct spk_conf *c, pl_err_t *err)
{
	char *field = (char *)c + k->off;

	switch (k->kind) {
	case K_TEXT:
		if (strlen(v) >= k->size)
			return pl_err_set(err, "longer than %zu characters", k->size - 1);
		memcpy(field, v, strlen(v) + 1);
		return 0;
	case K_PATH:
		/* Read by slurmstepd and NCCL in other working directories. */
		if (v[0] != '/' || strcmp(v, "/") == 0)
			return pl_err_set(err, "expected an absolute path (not /)");
		if (strlen(v) >= k->size)
			return pl_err_set(err, "longer than %zu characters", k->size - 1);
		memcpy(field, v, strlen(v) + 1);
		return 0;
	case K_LONG:
		return set_long(k, v, (long *)(void *)field, err);
	case K_YESNO:
		if (strcmp(v, "yes") == 0 || strcmp(v, "1") == 0)
			*(bool *)(void *)field = true;
		else if (strcmp(v, "no") == 0 || strcmp(v, "0") == 0)
			*(bool *)(void *)field = false;
		else
			return pl_err_set(err, "expected yes or no");
		return 0;
	case K_FALLBACK:
		if (strcmp(v, "local") == 0)
			c->fallback = FALLBACK_LOCAL;
		else if (strcmp(v, "fail") == 0)
			c->fallback = FALLBACK_FAIL;
		else
			return pl_err_set(err, "expected local or fail");
		return 0;
	case K_EXPORT:
		return set_export(v, &c->export_mask, err);
	}
	return pl_err_set(err, "internal: key kind %d", (int)k->kind);
}

static void
defaults(struct spk_conf *c)
{
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
	c->watch = true;
	snprintf(c->hook, sizeof(c->hook), "%s", PL_NCCL_HOOK);
	snprintf(c->watch_dir, sizeof(c->watch_dir), "%s", PL_WATCH_DIR);
}

int
spk_args_parse(int ac, char **av, struct spk_conf *c, pl_err_t *err)
{
	bool seen[NKEYS] = { false };
	char list[512], arg[PL_CLIP_BUF];
	int i;

	defaults(c);
	for (i = 0; i < ac; i++) {
		const char *eq = av[i] ? strchr(av[i], '=') : NULL;
		pl_err_t why;
		size_t k, len;

		if (!eq || eq == av[i])
			return pl_err_set(err, "plugstack argument '%s': expected key=value (keys: %s)",
					  pl_clip(av[i], arg, sizeof(arg)), key_list(list, sizeof(list)));
		len = (size_t)(eq - av[i]);
		for (k = 0; k < NKEYS; k++)
			if (strlen(keys[k].name) == len && strncmp(keys[k].name, av[i], len) == 0)
				break;
		if (k == NKEYS) {
			char key[PL_CLIP_BUF];

			return pl_err_set(err, "plugstack argument '%s': unknown key '%s' (accepted: %s)",
					  pl_clip(av[i], arg, sizeof(arg)),
					  pl_clipn(av[i], len, key, sizeof(key)),
					  key_list(list, sizeof(list)));
		}
		if (seen[k])
			return pl_err_set(err, "plugstack argument '%s': %s is given twice",
					  pl_clip(av[i], arg, sizeof(arg)), keys[k].name);
		seen[k] = true;
		pl_err_clear(&why);
		if (set_value(&keys[k], eq + 1, c, &why) < 0)
			return pl_err_set(err, "%s=%s: %s", keys[k].name,
					  pl_clip(eq + 1, arg, sizeof(arg)), why.text);
	}
	if (c->master_port_base + c->master_port_span > 65536)
		return pl_err_set(err, "master_port_base=%ld + master_port_span=%ld passes port 65535",
				  c->master_port_base, c->master_port_span);
	if (c->ras_port_base + c->ras_port_span > 65536)
		return pl_err_set(err, "ras_port_base=%ld + ras_port_span=%ld passes port 65535",
				  c->ras_port_base, c->ras_port_span);
	return 0;
}
