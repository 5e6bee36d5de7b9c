/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd's config file: `key = value` lines, `#` comments, parsed strictly
 * with a key table.  A misspelt key is an error, not a silent default,
 * because a daemon that quietly ignores `sokcet = ...` listens where
 * nobody looks.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "layoutd.h"
#include "register.h"

#define CONF_MAX_FILE (1L << 20)
#define CONF_MAX_LINES 10000
/* The SPANK plugin's default watch_dir: layoutd sweeps where it writes. */
#define DEFAULT_WATCH_DIR REG_WATCH_DIR
#define DEFAULT_WATCH_LEFTOVER_S 300L

enum kind {
	K_PATH, K_SOCKET, K_MODE, K_GROUP, K_TCP, K_TCP_ACCESS, K_NODE, K_LOG, K_HWLOC, K_USER,
	K_MS, K_SIZE, K_HEADER, K_COUNT, K_WATCH_MS, K_HANG, K_BUBBLE, K_WSTEPS, K_WTASKS, K_WDIR, K_LEFTOVER,
	K_PEER_PORT, K_PEER_LISTEN, K_MUNGE_SOCKET, K_MUNGE_TTL, K_PEER_FAIL, K_PEER_LOST,
	K_PEER_TIMEOUT, K_PEER_CONNS, K_PEER_RANKS, K_PEER_FANIN,
	K_URLS, K_RESEND, K_RETRIES, K_AQUEUE, K_ATIMEOUT, K_DRAIN, K_DRAIN_MAX, K_SCONTROL
};

struct key {
	const char *name;
	enum kind kind;
	size_t off;		/* of the field in struct ld_conf */
	size_t size;		/* of a string field */
};

#define STR(field) offsetof(struct ld_conf, field), sizeof(((struct ld_conf *)0)->field)

static const struct key keys[] = {
	{ "map", K_PATH, STR(map) },
	{ "socket", K_SOCKET, STR(socket) },
	{ "socket_mode", K_MODE, offsetof(struct ld_conf, socket_mode), 0 },
	{ "socket_group", K_GROUP, STR(socket_group) },
	{ "tcp", K_TCP, 0, 0 },
	{ "tcp_access", K_TCP_ACCESS, 0, 0 },
	{ "port_file", K_PATH, STR(port_file) },
	{ "node_name", K_NODE, STR(node_name) },
	{ "log", K_LOG, STR(log) },
	{ "pidfile", K_PATH, STR(pidfile) },
	{ "hwloc_check", K_HWLOC, STR(hwloc_check) },
	{ "slurm_user", K_USER, STR(slurm_user) },
	{ "request_timeout_ms", K_MS, offsetof(struct ld_conf, request_timeout_ms), 0 },
	{ "max_body", K_SIZE, offsetof(struct ld_conf, max_body), 0 },
	{ "max_header", K_HEADER, offsetof(struct ld_conf, max_header), 0 },
	{ "max_connections", K_COUNT, offsetof(struct ld_conf, max_connections), 0 },
	{ "watch_interval_ms", K_WATCH_MS, 0, 0 },
	{ "hang_threshold_s", K_HANG, 0, 0 },
	{ "bubble_window_s", K_BUBBLE, 0, 0 },
	{ "watch_max_steps", K_WSTEPS, 0, 0 },
	{ "watch_max_tasks", K_WTASKS, 0, 0 },
	{ "watch_dir", K_WDIR, STR(watch_dir) },
	{ "watch_leftover_s", K_LEFTOVER, 0, 0 },
	{ "peer_port", K_PEER_PORT, 0, 0 },
	{ "peer_listen", K_PEER_LISTEN, 0, 0 },
	{ "munge_socket", K_MUNGE_SOCKET, STR(munge_socket) },
	{ "munge_ttl_s", K_MUNGE_TTL, 0, 0 },
	{ "peer_fail_intervals", K_PEER_FAIL, 0, 0 },
	{ "peer_lost_s", K_PEER_LOST, 0, 0 },
	{ "peer_timeout_ms", K_PEER_TIMEOUT, 0, 0 },
	{ "peer_max_connections", K_PEER_CONNS, 0, 0 },
	{ "peer_max_ranks", K_PEER_RANKS, 0, 0 },
	{ "peer_fanin", K_PEER_FANIN, 0, 0 },
	{ "alertmanager_url", K_URLS, STR(alertmanager_url) },
	{ "webhook_url", K_URLS, STR(webhook_url) },
	{ "alert_resend_s", K_RESEND, 0, 0 },
	{ "alert_retries", K_RETRIES, 0, 0 },
	{ "alert_queue_max", K_AQUEUE, 0, 0 },
	{ "alert_timeout_ms", K_ATIMEOUT, 0, 0 },
	{ "drain", K_DRAIN, 0, 0 },
	{ "drain_max_per_hour", K_DRAIN_MAX, 0, 0 },
	{ "scontrol", K_SCONTROL, STR(scontrol) },
};

static const char *const tcp_access_names[] = { "read-only", "query", "trusted" };

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

const char *
ld_conf_keys(void)
{
	return "map, socket, socket_mode, socket_group, tcp, tcp_access, port_file, node_name, "
	       "log, pidfile, hwloc_check, slurm_user, request_timeout_ms, max_body, max_header, "
	       "max_connections, watch_interval_ms, hang_threshold_s, bubble_window_s, watch_max_steps, "
	       "watch_max_tasks, "
	       "watch_dir, watch_leftover_s, peer_port, peer_listen, munge_socket, munge_ttl_s, "
	       "peer_fail_intervals, peer_lost_s, peer_timeout_ms, peer_max_connections, peer_max_ranks, "
	       "peer_fanin, "
	       "alertmanager_url, webhook_url, alert_resend_s, alert_retries, alert_queue_max, "
	       "alert_timeout_ms, drain, drain_max_per_hour, scontrol";
}

const char *
ld_tcp_access_name(enum ld_tcp_access a)
{
	return (size_t)a < sizeof(tcp_access_names) / sizeof(tcp_access_names[0]) ?
	       tcp_access_names[a] : "?";
}

void
ld_conf_defaults(struct ld_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->socket, sizeof(c->socket), "%s", LD_DEFAULT_SOCKET);
	c->socket_mode = LD_DEFAULT_SOCKET_MODE;
	snprintf(c->hwloc_check, sizeof(c->hwloc_check), "live");
	c->request_timeout_ms = LD_DEFAULT_TIMEOUT_MS;
	c->max_body = LD_DEFAULT_MAX_BODY;
	c->max_header = LD_DEFAULT_MAX_HEADER;
	c->max_connections = LD_DEFAULT_MAX_CONNECTIONS;
	c->watch_interval_ms = LD_DEFAULT_WATCH_INTERVAL_MS;
	c->hang_threshold_s = LD_DEFAULT_HANG_THRESHOLD_S;
	c->bubble_window_s = LD_DEFAULT_BUBBLE_WINDOW_S;
	c->watch_max_steps = LD_DEFAULT_WATCH_MAX_STEPS;
	c->watch_max_tasks = LD_DEFAULT_WATCH_MAX_TASKS;
	snprintf(c->watch_dir, sizeof(c->watch_dir), "%s", DEFAULT_WATCH_DIR);
	c->watch_leftover_s = DEFAULT_WATCH_LEFTOVER_S;
	c->peer_port = LD_DEFAULT_PEER_PORT;
	c->peer_listen = LD_PEER_LISTEN_NO;
	c->munge_ttl_s = LD_DEFAULT_MUNGE_TTL_S;
	c->peer_fail_intervals = LD_DEFAULT_PEER_FAIL_INTERVALS;
	c->peer_lost_s = 0;
	c->peer_timeout_ms = LD_DEFAULT_PEER_TIMEOUT_MS;
	c->peer_max_connections = LD_DEFAULT_PEER_MAX_CONNECTIONS;
	c->peer_max_ranks = LD_DEFAULT_PEER_MAX_RANKS;
	c->peer_fanin = LD_PEER_FANIN_AUTO;
	c->alert_resend_s = LD_DEFAULT_ALERT_RESEND_S;
	c->alert_retries = LD_DEFAULT_ALERT_RETRIES;
	c->alert_queue_max = LD_DEFAULT_ALERT_QUEUE_MAX;
	c->alert_timeout_ms = LD_DEFAULT_ALERT_TIMEOUT_MS;
	c->drain_max_per_hour = LD_DEFAULT_DRAIN_MAX_PER_HOUR;
	snprintf(c->scontrol, sizeof(c->scontrol), "%s", LD_DEFAULT_SCONTROL);
	c->tcp_access = LD_TCP_READ_ONLY;
	c->slurm_uid = -1;
}

/* Names that go into paths and logs: letters, digits, '.', '_', '-'. */
static bool
plain_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' && *s != '-')
			return false;
	return true;
}

static int
set_string(char *dst, size_t size, const char *value, pl_err_t *err)
{
	if (strlen(value) >= size)
		return pl_err_set(err, "longer than %zu bytes", size - 1);
	memcpy(dst, value, strlen(value) + 1);
	return 0;
}

/* "PORT", "HOST:PORT" or "[V6ADDR]:PORT"; HOST defaults to loopback. */
static int
set_tcp(struct ld_conf *c, const char *value, pl_err_t *err)
{
	const char *colon = strrchr(value, ':'), *port = colon ? colon + 1 : value;
	size_t hlen = colon ? (size_t)(colon - value) : 0;
	char *end = NULL;
	long p;

	errno = 0;
	p = strtol(port, &end, 10);
	if (!*port || !isdigit((unsigned char)*port) || errno || *end || p < 0 || p > 65535)
		return pl_err_set(err, "expected [HOST:]PORT with PORT 0-65535 (0 = any free port)");
	if (colon && hlen == 0)
		return pl_err_set(err, "empty HOST before ':' (give PORT alone for loopback)");
	if (hlen >= 2 && value[0] == '[' && value[hlen - 1] == ']') {
		value++;
		hlen -= 2;
	}
	if (hlen >= sizeof(c->tcp_host))
		return pl_err_set(err, "HOST is too long");
	if (memchr(value, '[', hlen) || memchr(value, ']', hlen))
		return pl_err_set(err, "expected [V6ADDR]:PORT for an IPv6 address");
	if (colon) {
		memcpy(c->tcp_host, value, hlen);
		c->tcp_host[hlen] = '\0';
	} else {
		snprintf(c->tcp_host, sizeof(c->tcp_host), "127.0.0.1");
	}
	c->tcp_port = (int)p;
	return 0;
}

/* peer_listen: "no", "auto", or [HOST:]PORT with HOST defaulting to every
 * address (the peers are other hosts), PORT 0 any free one. */
static int
set_peer_listen(struct ld_conf *c, const char *value, pl_err_t *err)
{
	struct ld_conf t;
	pl_err_t terr;

	if (strcmp(value, "no") == 0 || strcmp(value, "auto") == 0) {
		c->peer_listen = value[0] == 'n' ? LD_PEER_LISTEN_NO : LD_PEER_LISTEN_AUTO;
		c->peer_host[0] = '\0';
		return 0;
	}
	memset(&t, 0, sizeof(t));
	pl_err_clear(&terr);
	if (set_tcp(&t, value, &terr) < 0)
		return pl_err_set(err, "expected no, auto (the map's address and peer port of this "
				  "node, else 0.0.0.0:peer_port) or [HOST:]PORT (HOST default 0.0.0.0, "
				  "PORT 0-65535)");
	if (!strchr(value, ':'))
		snprintf(t.tcp_host, sizeof(t.tcp_host), "0.0.0.0");
	snprintf(c->peer_host, sizeof(c->peer_host), "%s", t.tcp_host);
	c->peer_listen = t.tcp_port;
	return 0;
}

/* An absolute path without '.', '..' or empty parts and not / itself: the
 * sweep removes step directories inside it, so it must say plainly which
 * directory that is. */
static bool
plain_dir(const char *s)
{
	const char *p = s, *e;

	if (s[0] != '/' || !s[1])
		return false;
	while (*p == '/') {
		e = strchr(p + 1, '/');
		if (!e)
			e = p + strlen(p);
		if (e == p + 1 || (e == p + 2 && p[1] == '.') ||
		    (e == p + 3 && p[1] == '.' && p[2] == '.'))
			return false;
		p = e;
	}
	return true;
}

/* Up to 8 comma-separated http:// or https:// URLs, without blanks or
 * quotes inside one. */
static int
set_urls(char *dst, size_t size, const char *value, pl_err_t *err)
{
	const char *p = value;
	int n = 0;

	while (*p) {
		size_t len, lead;

		lead = strspn(p, " \t");
		p += lead;
		len = strcspn(p, ",");
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (!len)
			return pl_err_set(err, "an empty URL in the list (expected URLs separated by ',')");
		if ((len < 8 || strncmp(p, "http://", 7) != 0 || !p[7] || p[7] == '/') &&
		    (len < 9 || strncmp(p, "https://", 8) != 0 || !p[8] || p[8] == '/'))
			return pl_err_set(err, "'%.*s' is not an http:// or https:// URL with a host, "
					  "e.g. http://127.0.0.1:9093", len > 80 ? 80 : (int)len, p);
		if (strcspn(p, " \t\"'\\") < len)
			return pl_err_set(err, "'%.*s': a blank, quote or backslash in a URL",
					  len > 80 ? 80 : (int)len, p);
		if (++n > 8)
			return pl_err_set(err, "more than 8 URLs");
		p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
	return set_string(dst, size, value, err);
}

static int
set_number(long *dst, const char *value, bool size_suffix, long min, long max,
	   pl_err_t *err)
{
	char *end = NULL;
	long long v, mul = 1;

	errno = 0;
	v = strtoll(value, &end, 10);
	if (end == value || !isdigit((unsigned char)*value) || errno)
		goto bad;
	if (size_suffix && *end) {
		switch (*end) {
		case 'k': case 'K': mul = 1LL << 10; break;
		case 'm': case 'M': mul = 1LL << 20; break;
		case 'g': case 'G': mul = 1LL << 30; break;
		default: goto bad;
		}
		end++;
	}
	if (*end || v > max / mul || v * mul < min)
		goto bad;
	*dst = (long)(v * mul);
	return 0;
bad:
	if (size_suffix)
		return pl_err_set(err, "expected bytes from %ld to %ld, optionally with K, M or G (KiB, MiB, GiB)",
				  min, max);
	return pl_err_set(err, "expected a whole number from %ld to %ld", min, max);
}

int
ld_conf_set(struct ld_conf *c, const char *key, const char *value, pl_err_t *err)
{
	const struct key *k = NULL;
	char check[LD_PATH];
	const char *p;
	pl_err_t verr;
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].name, key) == 0)
			k = &keys[i];
	if (!k)
		return pl_err_set(err, "unknown key '%.64s' (accepted: %s)", key, ld_conf_keys());
	pl_err_clear(&verr);
	if (!*value)
		return pl_err_set(err, "empty value");
	for (p = value; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return pl_err_set(err, "control byte 0x%02x at position %td",
					  (unsigned char)*p, p - value + 1);
	switch (k->kind) {
	case K_PATH:
		return set_string((char *)c + k->off, k->size, value, err);
	case K_SOCKET:
		if (value[0] != '/')
			return pl_err_set(err, "expected an absolute path (%%n = node name)");
		if (client_socket_path(value, "n", check, sizeof(check)) < 0)
			return pl_err_set(err, "bad %% sequence or too long (accepted: %%n node name, %%%% a %%)");
		return set_string(c->socket, sizeof(c->socket), value, err);
	case K_MODE: {
		char *end = NULL;
		unsigned long m;

		errno = 0;
		m = strtoul(value, &end, 8);
		if (!isdigit((unsigned char)*value) || errno || *end || m > 0777 ||
		    strlen(value) > 4)
			return pl_err_set(err, "expected an octal mode from 0 to 0777, e.g. 0660");
		c->socket_mode = (unsigned)m;
		return 0;
	}
	case K_GROUP:
		if (!plain_name(value))
			return pl_err_set(err, "expected a group name (letters, digits, '.', '_', '-')");
		return set_string(c->socket_group, sizeof(c->socket_group), value, err);
	case K_TCP:
		return set_tcp(c, value, err);
	case K_TCP_ACCESS:
		for (i = 0; i < sizeof(tcp_access_names) / sizeof(tcp_access_names[0]); i++)
			if (strcmp(value, tcp_access_names[i]) == 0) {
				c->tcp_access = (enum ld_tcp_access)i;
				return 0;
			}
		return pl_err_set(err, "expected read-only (health and topology only), query (placements too, nothing recorded) or trusted (everything, as root)");
	case K_USER:
		if (!plain_name(value))
			return pl_err_set(err, "expected a user name or uid (letters, digits, '.', '_', '-')");
		return set_string(c->slurm_user, sizeof(c->slurm_user), value, err);
	case K_NODE:
		if (!plain_name(value))
			return pl_err_set(err, "expected a node name (letters, digits, '.', '_', '-')");
		return set_string(c->node_name, sizeof(c->node_name), value, err);
	case K_LOG:
		if (strcmp(value, "stderr") == 0) {
			c->log[0] = '\0';
			return 0;
		}
		return set_string(c->log, sizeof(c->log), value, err);
	case K_HWLOC:
		return set_string(c->hwloc_check, sizeof(c->hwloc_check), value, err);
	case K_MS:
		return set_number(&c->request_timeout_ms, value, false, 1, 3600000, err);
	case K_SIZE:
		return set_number(&c->max_body, value, true, 1024, 1L << 30, err);
	case K_HEADER:
		return set_number(&c->max_header, value, true, 1024, 1L << 20, err);
	case K_COUNT:
		return set_number(&c->max_connections, value, false, 1, 1000000, err);
	case K_WATCH_MS:
		return set_number(&c->watch_interval_ms, value, false, 100, 3600000, err);
	case K_HANG:
		return set_number(&c->hang_threshold_s, value, false, 5, 86400, err);
	case K_BUBBLE:
		return set_number(&c->bubble_window_s, value, false, 1, 86400, err);
	case K_WSTEPS:
		return set_number(&c->watch_max_steps, value, false, 1, 4096, err);
	case K_WTASKS:
		return set_number(&c->watch_max_tasks, value, false, 1, 4096, err);
	case K_WDIR:
		if (!plain_dir(value))
			return pl_err_set(err, "expected an absolute directory path other than /, "
					  "without '.', '..' or empty parts, e.g. %s", DEFAULT_WATCH_DIR);
		return set_string(c->watch_dir, sizeof(c->watch_dir), value, err);
	case K_LEFTOVER:
		return set_number(&c->watch_leftover_s, value, false, 10, 604800, err);
	case K_PEER_PORT: {
		long port;

		if (set_number(&port, value, false, 1, 65535, err) < 0)
			return -1;
		c->peer_port = (int)port;
		return 0;
	}
	case K_PEER_LISTEN:
		return set_peer_listen(c, value, err);
	case K_MUNGE_SOCKET:
		if (value[0] != '/')
			return pl_err_set(err, "expected the absolute path of munged's socket, e.g. "
					  "/run/munge/munge.socket.2");
		return set_string(c->munge_socket, sizeof(c->munge_socket), value, err);
	case K_MUNGE_TTL:
		return set_number(&c->munge_ttl_s, value, false, 1, 3600, err);
	case K_PEER_FAIL:
		return set_number(&c->peer_fail_intervals, value, false, 1, 100, err);
	case K_PEER_LOST:
		if (strcmp(value, "auto") == 0) {
			c->peer_lost_s = 0;
			return 0;
		}
		if (set_number(&c->peer_lost_s, value, false, 1, 86400, &verr) < 0)
			return pl_err_set(err, "expected auto (3 watch intervals, at least 5 s) or "
					  "seconds from 1 to 86400");
		return 0;
	case K_PEER_TIMEOUT:
		return set_number(&c->peer_timeout_ms, value, false, 100, 60000, err);
	case K_PEER_CONNS:
		return set_number(&c->peer_max_connections, value, false, 1, 1000000, err);
	case K_PEER_RANKS:
		return set_number(&c->peer_max_ranks, value, false, 1, 16777216, err);
	case K_PEER_FANIN:
		if (strcmp(value, "auto") == 0) {
			c->peer_fanin = LD_PEER_FANIN_AUTO;
			return 0;
		}
		if (set_number(&c->peer_fanin, value, false, 0, LD_PEER_FANIN_MAX, &verr) < 0 ||
		    c->peer_fanin == 1)
			return pl_err_set(err, "expected auto (none up to 64 nodes, else the square "
					  "root of the step's nodes), 0 (none: every node sends to "
					  "the leader) or a relay width from 2 to %ld", LD_PEER_FANIN_MAX);
		return 0;
	case K_URLS:
		if (strcmp(value, "no") == 0) {
			((char *)c + k->off)[0] = '\0';
			return 0;
		}
		return set_urls((char *)c + k->off, k->size, value, err);
	case K_RESEND:
		return set_number(&c->alert_resend_s, value, false, 1, 86400, err);
	case K_RETRIES:
		return set_number(&c->alert_retries, value, false, 0, 100, err);
	case K_AQUEUE:
		return set_number(&c->alert_queue_max, value, false, 1, 65536, err);
	case K_ATIMEOUT:
		return set_number(&c->alert_timeout_ms, value, false, 100, 600000, err);
	case K_DRAIN:
		if (strcmp(value, "yes") == 0 || strcmp(value, "no") == 0) {
			c->drain = value[0] == 'y';
			return 0;
		}
		return pl_err_set(err, "expected yes (drain the node of a hung, stuck or exited rank) or no");
	case K_DRAIN_MAX:
		return set_number(&c->drain_max_per_hour, value, false, 0, 1000, err);
	case K_SCONTROL:
		if (value[0] != '/')
			return pl_err_set(err, "expected the absolute path of scontrol, e.g. %s",
					  LD_DEFAULT_SCONTROL);
		return set_string(c->scontrol, sizeof(c->scontrol), value, err);
	}
	return pl_err_set(err, "unhandled key '%s'", key);
}

static char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* One line (NUL-terminated, no newline).  seen[] holds the line each key
 * was first set on, to refuse duplicates. */
static int
parse_line(struct ld_conf *c, char *line, const char *path, long lineno, long *seen,
	   pl_err_t *err)
{
	char *hash, *eq, *key, *value;
	pl_err_t verr;
	size_t i;

	/* '#' starts a comment at the start of a line or after a blank, so a
	 * path may still contain one. */
	for (hash = line; (hash = strchr(hash, '#')) != NULL; hash++)
		if (hash == line || hash[-1] == ' ' || hash[-1] == '\t') {
			*hash = '\0';
			break;
		}
	line = trim(line);
	if (!*line)
		return 0;
	eq = strchr(line, '=');
	if (!eq)
		return pl_err_set(err, "%s:%ld: expected 'key = value', got '%.80s'", path, lineno,
				  line);
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	pl_err_clear(&verr);
	for (i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].name, key) == 0)
			break;
	if (i == NKEYS)
		return pl_err_set(err, "%s:%ld: unknown key '%.64s' (accepted: %s)", path, lineno,
				  key, ld_conf_keys());
	if (seen[i])
		return pl_err_set(err, "%s:%ld: '%s' is already set at line %ld", path, lineno, key,
				  seen[i]);
	seen[i] = lineno;
	if (ld_conf_set(c, key, value, &verr) < 0)
		return pl_err_set(err, "%s:%ld: %s = %.200s: %s", path, lineno, key, value,
				  verr.text);
	return 0;
}

int
ld_conf_read(struct ld_conf *c, const char *path, bool must_exist, pl_err_t *err)
{
	long seen[NKEYS] = { 0 }, lineno = 0;
	char *buf = NULL, *line, *next;
	size_t len = 0, n;
	FILE *f;
	int rv = -1;

	f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		return pl_err_set(err, "%s: %s", path, strerror(errno));
	}
	buf = malloc((size_t)CONF_MAX_FILE + 1);
	if (!buf) {
		pl_err_set(err, "%s: out of memory", path);
		goto out;
	}
	while ((n = fread(buf + len, 1, (size_t)CONF_MAX_FILE + 1 - len, f)) > 0)
		len += n;
	if (ferror(f)) {
		pl_err_set(err, "%s: read error", path);
		goto out;
	}
	if (len > (size_t)CONF_MAX_FILE) {
		pl_err_set(err, "%s: larger than %ld bytes: not a layoutd config file", path,
			   CONF_MAX_FILE);
		goto out;
	}
	buf[len] = '\0';
	if (strlen(buf) != len) {
		pl_err_set(err, "%s: contains a NUL byte: not a text file", path);
		goto out;
	}
	for (line = buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (++lineno > CONF_MAX_LINES) {
			pl_err_set(err, "%s: more than %d lines", path, CONF_MAX_LINES);
			goto out;
		}
		if (parse_line(c, line, path, lineno, seen, err) < 0)
			goto out;
	}
	rv = 0;
out:
	free(buf);
	fclose(f);
	return rv;
}

/* slurm_user as a uid: a user name, or a number. */
static int
resolve_user(struct ld_conf *c, pl_err_t *err)
{
	struct passwd *pw;
	char *end = NULL;
	long v;

	c->slurm_uid = -1;
	if (!c->slurm_user[0])
		return 0;
	errno = 0;
	pw = getpwnam(c->slurm_user);
	if (pw) {
		c->slurm_uid = (long)pw->pw_uid;
		return 0;
	}
	v = strtol(c->slurm_user, &end, 10);
	if (isdigit((unsigned char)c->slurm_user[0]) && !*end && v >= 0 && v < INT_MAX) {
		c->slurm_uid = v;
		return 0;
	}
	return pl_err_set(err, "slurm_user %s: no such user (give the user slurmctld and slurmd run as, e.g. SlurmUser from slurm.conf, or a uid)",
			  c->slurm_user);
}

int
ld_conf_finish(struct ld_conf *c, pl_err_t *err)
{
	const char *env = getenv("SLURMD_NODENAME");
	char host[256], *dot;

	if (!c->map[0])
		return pl_err_set(err, "no cluster map: set 'map = FILE' in the config file or give --map FILE");
	if (resolve_user(c, err) < 0)
		return -1;
	if (c->node_name[0])
		return 0;
	if (env && *env) {
		if (!plain_name(env) || strlen(env) >= sizeof(c->node_name))
			return pl_err_set(err, "SLURMD_NODENAME=%.80s: not a node name; set node_name", env);
		snprintf(c->node_name, sizeof(c->node_name), "%s", env);
		return 0;
	}
	if (gethostname(host, sizeof(host)) < 0)
		return pl_err_set(err, "gethostname: %s; set node_name", strerror(errno));
	host[sizeof(host) - 1] = '\0';
	dot = strchr(host, '.');
	if (dot)
		*dot = '\0';
	if (!plain_name(host) || strlen(host) >= sizeof(c->node_name))
		return pl_err_set(err, "host name '%.80s' is not a node name; set node_name", host);
	snprintf(c->node_name, sizeof(c->node_name), "%s", host);
	return 0;
}
