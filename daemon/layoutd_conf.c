/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd's config file: `key = value` lines, `#` comments, parsed strictly
 * with a table of rows (name, field, kind, bounds, default), as the SPANK
 * plugin parses its arguments.  A misspelt key is an error, not a silent
 * default, because a daemon that quietly ignores `sokcet = ...` listens
 * where nobody looks.  Each default is written once, in its row.
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
#include "judge.h"
#include "layoutd.h"
#include "register.h"

#define CONF_MAX_FILE (1L << 20)
#define CONF_MAX_LINES 10000
#define NS_PER_S UINT64_C(1000000000)

/* How a value is read: one small function per kind (set_* below). */
enum kind {
	K_TEXT,		/* any text that fits; .word sets "" */
	K_NAME,		/* a plain name (.what says of what) */
	K_PATH,		/* an absolute path (.what; .eg, else the default);
			 * .word sets "" */
	K_DIR,		/* the same, a directory written plainly, not / */
	K_SOCKET,	/* an absolute path pattern: %n node name, %% a % */
	K_URLS,		/* up to 8 http(s) URLs, ','-separated; .word sets "" */
	K_MODE,		/* octal permissions */
	K_COUNT,	/* a whole number; .word (.what says it) sets .word_val */
	K_SECONDS,	/* the same, in seconds */
	K_MS,		/* the same, in milliseconds */
	K_BYTES,	/* bytes, with an optional K, M or G */
	K_BOOL,		/* yes (.what says what it does) or no */
	K_ENUM,		/* one of .names */
	K_OWN,		/* its own setter (.set), which also takes the default */
};

/* An enum's values, in the order of its C enum. */
struct choice {
	const char *name;
	const char *means;	/* for messages */
};

struct row {
	const char *name;
	enum kind kind;
	size_t off, size;		/* the field in struct ld_conf */
	long lo, hi;			/* a number's bounds */
	long def;			/* a number's, yes/no's or an enum's default */
	const char *sdef;		/* a text's default, or K_OWN's; NULL none */
	const char *word;		/* accepted besides (see the kind) */
	long word_val;
	const char *what;		/* what is accepted, for messages */
	const char *eg;			/* an example, for messages */
	const struct choice *names;	/* K_ENUM's, up to a NULL name */
	int (*set)(struct ld_conf *c, const char *value, pl_err_t *err);
};

static int set_tcp(struct ld_conf *c, const char *value, pl_err_t *err);
static int set_peer_listen(struct ld_conf *c, const char *value, pl_err_t *err);
static int set_peer_fanin(struct ld_conf *c, const char *value, pl_err_t *err);

static const struct choice stack_tool_names[] = {
	[LD_STACK_AUTO] = { "auto", "eu-stack when installed, else gdb" },
	[LD_STACK_EU] = { "eu-stack", "elfutils' eu-stack only" },
	[LD_STACK_GDB] = { "gdb", "gdb only" },
	{ NULL, NULL }
};

static const struct choice metrics_jobs_names[] = {
	[LD_METRICS_JOBS_ALL] = { "all", "every job's series" },
	[LD_METRICS_JOBS_NONE] = { "none", "the node's own series only" },
	{ NULL, NULL }
};

static const struct choice tcp_access_names[] = {
	[LD_TCP_READ_ONLY] = { "read-only", "health and topology only" },
	[LD_TCP_QUERY] = { "query", "placements too, nothing recorded" },
	[LD_TCP_TRUSTED] = { "trusted", "everything, as root" },
	{ NULL, NULL }
};

#define F(field) .off = offsetof(struct ld_conf, field), \
		 .size = sizeof(((struct ld_conf *)0)->field)
#define NUM(field, l, h, d) F(field), .lo = (l), .hi = (h), .def = (d)

/* The keys, in the order --help and messages list them.  layoutd(8) and
 * etc/layoutd.conf describe each (layoutd_conf_test checks). */
static const struct row rows[] = {
	{ "map", K_TEXT, F(map) },
	{ "socket", K_SOCKET, F(socket), .sdef = LD_DEFAULT_SOCKET },
	{ "socket_mode", K_MODE, NUM(socket_mode, 0, 0777, 0660) },
	{ "socket_group", K_NAME, F(socket_group), .what = "a group name" },
	{ "tcp", K_OWN, .set = set_tcp },
	{ "tcp_access", K_ENUM, F(tcp_access), .def = LD_TCP_READ_ONLY,
	  .names = tcp_access_names },
	{ "port_file", K_TEXT, F(port_file) },
	{ "node_name", K_NAME, F(node_name), .what = "a node name" },
	{ "log", K_TEXT, F(log), .word = "stderr" },
	{ "pidfile", K_TEXT, F(pidfile) },
	{ "hwloc_check", K_TEXT, F(hwloc_check), .sdef = "live" },
	{ "slurm_user", K_NAME, F(slurm_user), .what = "a user name or uid" },
	{ "request_timeout_ms", K_MS, NUM(request_timeout_ms, 1, 3600000, LD_DEFAULT_TIMEOUT_MS) },
	{ "max_body", K_BYTES, NUM(max_body, 1024, 1L << 30, LD_DEFAULT_MAX_BODY) },
	{ "max_header", K_BYTES, NUM(max_header, 1024, 1L << 20, 16L << 10) },
	{ "max_connections", K_COUNT, NUM(max_connections, 1, 1000000, LD_DEFAULT_MAX_CONNECTIONS) },
	{ "watch_interval_ms", K_MS, NUM(watch_interval_ms, 100, 3600000, 1000) },
	{ "hang_threshold_s", K_SECONDS, NUM(hang_threshold_s, 5, 86400, JUDGE_HANG_THRESHOLD_S) },
	{ "busy_threshold_s", K_SECONDS, NUM(busy_threshold_s, 5, 604800, JUDGE_BUSY_THRESHOLD_S) },
	{ "user_hang_min_s", K_SECONDS, NUM(user_hang_min_s, 5, 2592000, 10) },
	{ "user_hang_max_s", K_SECONDS, NUM(user_hang_max_s, 5, 2592000, 86400) },
	{ "user_busy_max_s", K_SECONDS, NUM(user_busy_max_s, 5, 2592000, 604800) },
	{ "user_slow_off", K_BOOL, F(user_slow_off), .def = true,
	  .what = "let a user switch the slow-rank rule off for its step" },
	{ "bubble_window_s", K_SECONDS, NUM(bubble_window_s, 1, 86400, JUDGE_BUBBLE_WINDOW_S) },
	{ "watch_max_steps", K_COUNT, NUM(watch_max_steps, 1, 4096, 64) },
	{ "watch_max_tasks", K_COUNT, NUM(watch_max_tasks, 1, 4096, 256) },
	/* The SPANK plugin's default watch_dir: layoutd sweeps where it writes. */
	{ "watch_dir", K_DIR, F(watch_dir), .sdef = REG_WATCH_DIR,
	  .what = "an absolute directory path other than /, without '.', '..' or empty parts" },
	{ "watch_leftover_s", K_SECONDS, NUM(watch_leftover_s, 10, 604800, 300) },
	{ "peer_port", K_COUNT, NUM(peer_port, 1, 65535, PEERWIRE_PORT) },
	{ "peer_listen", K_OWN, .set = set_peer_listen, .sdef = "no" },
	{ "munge_socket", K_PATH, F(munge_socket), .what = "the absolute path of munged's socket",
	  .eg = "/run/munge/munge.socket.2" },
	{ "munge_ttl_s", K_SECONDS, NUM(munge_ttl_s, 1, 3600, 10) },
	{ "peer_fail_intervals", K_COUNT, NUM(peer_fail_intervals, 1, 100, 3) },
	{ "peer_lost_s", K_SECONDS, NUM(peer_lost_s, 1, 86400, 0), .word = "auto", .word_val = 0,
	  .what = "auto (3 watch intervals, at least 5 s)" },
	{ "peer_timeout_ms", K_MS, NUM(peer_timeout_ms, 100, 60000, 2000) },
	{ "peer_max_connections", K_COUNT, NUM(peer_max_connections, 1, 1000000, 4096) },
	{ "peer_max_queued_bytes", K_BYTES, NUM(peer_max_queued_bytes, 1L << 20, 1L << 32, 64L << 20) },
	{ "peer_source_max_queued_bytes", K_BYTES,
	  NUM(peer_source_max_queued_bytes, 1L << 20, 1L << 32, 16L << 20) },
	{ "peer_max_ranks", K_COUNT, NUM(peer_max_ranks, 1, 16777216, 65536) },
	{ "peer_fanin", K_OWN, .set = set_peer_fanin, .sdef = "auto" },
	{ "peer_check_origin", K_BOOL, F(peer_check_origin), .def = false,
	  .what = "take a summary only from the address the map gives its node" },
	{ "alertmanager_url", K_URLS, F(alertmanager_url), .word = "no" },
	{ "webhook_url", K_URLS, F(webhook_url), .word = "no" },
	{ "alert_resend_s", K_SECONDS, NUM(alert_resend_s, 1, 86400, 60) },
	{ "alert_retries", K_COUNT, NUM(alert_retries, 0, 100, 10) },
	{ "alert_queue_max", K_COUNT, NUM(alert_queue_max, 1, 65536, 1024) },
	{ "alert_step_max_open", K_COUNT, NUM(alert_step_max_open, 1, 4096, 32) },
	{ "alert_step_fires_per_hour", K_COUNT, NUM(alert_step_fires_per_hour, 1, 1000000, 120) },
	{ "alert_timeout_ms", K_MS, NUM(alert_timeout_ms, 100, 600000, 5000) },
	{ "drain", K_BOOL, F(drain), .def = false,
	  .what = "drain the node of a rank whose kernel is seen stuck on the GPU" },
	{ "drain_max_per_hour", K_COUNT, NUM(drain_max_per_hour, 0, 1000, 1) },
	{ "drain_max_nodes", K_COUNT, NUM(drain_max_nodes, 0, 1000000, 2) },
	{ "drain_verify", K_PATH, F(drain_verify), .word = "no",
	  .what = "the absolute path of the site's node health check, or no", .eg = "/usr/sbin/nhc" },
	{ "scontrol", K_PATH, F(scontrol), .sdef = "/usr/bin/scontrol",
	  .what = "the absolute path of scontrol" },
	{ "stacks", K_BOOL, F(stacks), .def = true,
	  .what = "capture the stacks of a critical finding's culprit" },
	{ "stack_timeout_s", K_SECONDS, NUM(stack_timeout_s, 1, 120, 10) },
	{ "stack_tool", K_ENUM, F(stack_tool), .def = LD_STACK_AUTO, .names = stack_tool_names },
	{ "state_dir", K_SOCKET, F(state_dir), .sdef = LD_DEFAULT_STATE_DIR },
	{ "metrics_jobs", K_ENUM, F(metrics_jobs), .def = LD_METRICS_JOBS_ALL,
	  .names = metrics_jobs_names },
};

#undef NUM
#undef F

#define NROWS (sizeof(rows) / sizeof(rows[0]))

const char *
ld_conf_keys(void)
{
	static char list[NROWS * 24];
	size_t i, o = 0;

	if (list[0])
		return list;
	for (i = 0; i < NROWS && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "",
				      rows[i].name);
	return list;
}

const char *
ld_tcp_access_name(enum ld_tcp_access a)
{
	return (size_t)a < sizeof(tcp_access_names) / sizeof(tcp_access_names[0]) - 1 ?
	       tcp_access_names[a].name : "?";
}

/* r's field in c. */
static char *
field_of(struct ld_conf *c, const struct row *r)
{
	return (char *)c + r->off;
}

/* A number into its field, an int or a long (an enum or unsigned one is
 * stored as its int). */
static void
store_number(struct ld_conf *c, const struct row *r, long v)
{
	void *f = (char *)c + r->off;

	if (r->size == sizeof(long))
		*(long *)f = v;
	else
		*(int *)f = (int)v;
}

void
ld_conf_defaults(struct ld_conf *c)
{
	pl_err_t unused;
	size_t i;

	pl_err_clear(&unused);
	memset(c, 0, sizeof(*c));
	for (i = 0; i < NROWS; i++) {
		const struct row *r = &rows[i];

		switch (r->kind) {
		case K_OWN:
			/* A default the row's own setter refuses is a bug the
			 * unit test catches. */
			if (r->sdef)
				r->set(c, r->sdef, &unused);
			break;
		case K_BOOL:
			*(bool *)(void *)field_of(c, r) = r->def != 0;
			break;
		case K_MODE:
		case K_COUNT:
		case K_SECONDS:
		case K_MS:
		case K_BYTES:
		case K_ENUM:
			store_number(c, r, r->def);
			break;
		default:
			if (r->sdef)
				snprintf(field_of(c, r), r->size, "%s", r->sdef);
			break;
		}
	}
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

/* A whole number from min to max, with K, M or G (binary) when
 * size_suffix; no sign, no blank.  false when it is not. */
static bool
parse_number(const char *value, bool size_suffix, long min, long max, long *out)
{
	char *end = NULL;
	long long v, mul = 1;

	errno = 0;
	v = strtoll(value, &end, 10);
	if (end == value || !isdigit((unsigned char)*value) || errno)
		return false;
	if (size_suffix && *end) {
		switch (*end) {
		case 'k': case 'K': mul = 1LL << 10; break;
		case 'm': case 'M': mul = 1LL << 20; break;
		case 'g': case 'G': mul = 1LL << 30; break;
		default: return false;
		}
		end++;
	}
	if (*end || v > max / mul || v * mul < min)
		return false;
	*out = (long)(v * mul);
	return true;
}

/* peer_fanin: auto, 0 (none) or a relay width from 2. */
static int
set_peer_fanin(struct ld_conf *c, const char *value, pl_err_t *err)
{
	long v;

	if (strcmp(value, "auto") == 0) {
		c->peer_fanin = LD_PEER_FANIN_AUTO;
		return 0;
	}
	if (!parse_number(value, false, 0, LD_PEER_FANIN_MAX, &v) || v == 1)
		return pl_err_set(err, "expected auto (none up to 64 nodes, else the square "
				  "root of the step's nodes), 0 (none: every node sends to "
				  "the leader) or a relay width from 2 to %ld", LD_PEER_FANIN_MAX);
	c->peer_fanin = v;
	return 0;
}

/* ---- one function per kind ---- */

static int
set_text(struct ld_conf *c, const struct row *r, const char *value, pl_err_t *err)
{
	if (r->word && strcmp(value, r->word) == 0) {
		field_of(c, r)[0] = '\0';
		return 0;
	}
	return set_string(field_of(c, r), r->size, value, err);
}

static int
set_name(struct ld_conf *c, const struct row *r, const char *value, pl_err_t *err)
{
	if (!plain_name(value))
		return pl_err_set(err, "expected %s (letters, digits, '.', '_', '-')", r->what);
	return set_string(field_of(c, r), r->size, value, err);
}

static int
set_path(struct ld_conf *c, const struct row *r, const char *value, pl_err_t *err)
{
	if (r->word && strcmp(value, r->word) == 0) {
		field_of(c, r)[0] = '\0';
		return 0;
	}
	if (r->kind == K_DIR ? !plain_dir(value) : value[0] != '/')
		return pl_err_set(err, "expected %s, e.g. %s", r->what, r->eg ? r->eg : r->sdef);
	return set_string(field_of(c, r), r->size, value, err);
}

static int
set_socket(struct ld_conf *c, const struct row *r, const char *value, pl_err_t *err)
{
	char check[LD_PATH];

	if (value[0] != '/')
		return pl_err_set(err, "expected an absolute path (%%n = node name)");
	if (client_socket_path(value, "n", check, sizeof(check)) < 0)
		return pl_err_set(err, "bad %% sequence or too long (accepted: %%n node name, %%%% a %%)");
	return set_string(field_of(c, r), r->size, value, err);
}

static int
set_url_list(struct ld_conf *c, const struct row *r, const char *value, pl_err_t *err)
{
	if (strcmp(value, r->word) == 0) {
		field_of(c, r)[0] = '\0';
		return 0;
	}
	return set_urls(field_of(c, r), r->size, value, err);
}

/* Octal, up to 4 digits (0777 or 777). */
static int
set_mode(struct ld_conf *c, const struct row *r, const char *value, pl_err_t *err)
{
	char *end = NULL;
	unsigned long m;

	errno = 0;
	m = strtoul(value, &end, 8);
	if (!isdigit((unsigned char)*value) || errno || *end || m > (unsigned long)r->hi ||
	    strlen(value) > 4)
		return pl_err_set(err, "expected an octal mode from %#lo to %#lo, e.g. %#lo",
				  (unsigned long)r->lo, (unsigned long)r->hi, (unsigned long)r->def);
	store_number(c, r, (long)m);
	return 0;
}

/* K_COUNT, K_SECONDS, K_MS and K_BYTES. */
static int
set_num(struct ld_conf *c, const struct row *r, const char *value, pl_err_t *err)
{
	const char *unit = r->kind == K_SECONDS ? "seconds" :
			   r->kind == K_MS ? "milliseconds" : NULL;
	long v;

	if (r->word && strcmp(value, r->word) == 0) {
		store_number(c, r, r->word_val);
		return 0;
	}
	if (parse_number(value, r->kind == K_BYTES, r->lo, r->hi, &v)) {
		store_number(c, r, v);
		return 0;
	}
	if (r->kind == K_BYTES)
		return pl_err_set(err, "expected bytes from %ld to %ld, optionally with K, M or G "
				  "(KiB, MiB, GiB)", r->lo, r->hi);
	if (r->word)
		return pl_err_set(err, "expected %s or %s from %ld to %ld", r->what,
				  unit ? unit : "a whole number", r->lo, r->hi);
	return pl_err_set(err, "expected a whole number from %ld to %ld%s%s%s", r->lo, r->hi,
			  unit ? " (" : "", unit ? unit : "", unit ? ")" : "");
}

static int
set_bool(struct ld_conf *c, const struct row *r, const char *value, pl_err_t *err)
{
	if (strcmp(value, "yes") == 0 || strcmp(value, "no") == 0) {
		*(bool *)(void *)field_of(c, r) = value[0] == 'y';
		return 0;
	}
	return pl_err_set(err, "expected yes (%s) or no", r->what);
}

/* "expected a (x), b (y) or c (z)", from the choices. */
static int
set_enum(struct ld_conf *c, const struct row *r, const char *value, pl_err_t *err)
{
	char list[PL_ERR_TEXT];
	size_t i, n, o = 0;

	for (n = 0; r->names[n].name; n++)
		if (strcmp(value, r->names[n].name) == 0) {
			store_number(c, r, (long)n);
			return 0;
		}
	list[0] = '\0';
	for (i = 0; i < n && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s (%s)",
				      i == 0 ? "" : i + 1 == n ? " or " : ", ",
				      r->names[i].name, r->names[i].means);
	return pl_err_set(err, "expected %s", list);
}

/* value (not empty, no control byte) into r's field. */
static int
set_row(struct ld_conf *c, const struct row *r, const char *value, pl_err_t *err)
{
	switch (r->kind) {
	case K_TEXT:
		return set_text(c, r, value, err);
	case K_NAME:
		return set_name(c, r, value, err);
	case K_PATH:
	case K_DIR:
		return set_path(c, r, value, err);
	case K_SOCKET:
		return set_socket(c, r, value, err);
	case K_URLS:
		return set_url_list(c, r, value, err);
	case K_MODE:
		return set_mode(c, r, value, err);
	case K_COUNT:
	case K_SECONDS:
	case K_MS:
	case K_BYTES:
		return set_num(c, r, value, err);
	case K_BOOL:
		return set_bool(c, r, value, err);
	case K_ENUM:
		return set_enum(c, r, value, err);
	case K_OWN:
		return r->set(c, value, err);
	}
	return pl_err_set(err, "internal: key %s of kind %d", r->name, (int)r->kind);
}

/* The row of key; NULL when there is none. */
static const struct row *
find_row(const char *key)
{
	size_t i;

	for (i = 0; i < NROWS; i++)
		if (strcmp(rows[i].name, key) == 0)
			return &rows[i];
	return NULL;
}

static int
check_value(const char *value, pl_err_t *err)
{
	const char *p;

	if (!*value)
		return pl_err_set(err, "empty value");
	for (p = value; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return pl_err_set(err, "control byte 0x%02x at position %td",
					  (unsigned char)*p, p - value + 1);
	return 0;
}

int
ld_conf_set(struct ld_conf *c, const char *key, const char *value, pl_err_t *err)
{
	const struct row *r = find_row(key);

	if (!r)
		return pl_err_set(err, "unknown key '%.64s' (accepted: %s)", key, ld_conf_keys());
	if (check_value(value, err) < 0)
		return -1;
	return set_row(c, r, value, err);
}

void
ld_conf_watch_params(const struct ld_conf *c, struct judge_params *jp,
		     uint64_t *detect_threshold_ns)
{
	uint64_t hang_ns = (uint64_t)c->hang_threshold_s * NS_PER_S;

	if (jp) {
		judge_params_default(jp);
		jp->hang_threshold_ns = hang_ns;
		jp->busy_threshold_ns = (uint64_t)c->busy_threshold_s * NS_PER_S;
		jp->bubble_window_ns = (uint64_t)c->bubble_window_s * NS_PER_S;
	}
	if (detect_threshold_ns)
		*detect_threshold_ns = hang_ns;
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
	const struct row *r;
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
	r = find_row(key);
	if (!r)
		return pl_err_set(err, "%s:%ld: unknown key '%.64s' (accepted: %s)", path, lineno,
				  key, ld_conf_keys());
	i = (size_t)(r - rows);
	if (seen[i])
		return pl_err_set(err, "%s:%ld: '%s' is already set at line %ld", path, lineno, key,
				  seen[i]);
	seen[i] = lineno;
	if (check_value(value, &verr) < 0 || set_row(c, r, value, &verr) < 0)
		return pl_err_set(err, "%s:%ld: %s = %.200s: %s", path, lineno, key, value,
				  verr.text);
	return 0;
}

int
ld_conf_read(struct ld_conf *c, const char *path, bool must_exist, pl_err_t *err)
{
	long seen[NROWS] = { 0 }, lineno = 0;
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
