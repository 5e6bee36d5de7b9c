/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd's config parser on its own: the defaults, the values each key
 * accepts (and what they set), the bounds of every number, and a refusal
 * for each kind of value naming file, line, key and what is accepted; the
 * watch's parameters from it; and that layoutd(8) and etc/layoutd.conf
 * describe the same keys.
 */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "judge.h"
#include "layoutd.h"
#include "tap.h"

static char tmpdir[] = "/tmp/layoutd_conf_test.XXXXXX";
static char conf_path[64];

/* The defaults as layoutd has always had them. */
static void
want_defaults(struct ld_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->socket, sizeof(c->socket), "/run/parallel-layout/layoutd-%%n.sock");
	c->socket_mode = 0660;
	snprintf(c->hwloc_check, sizeof(c->hwloc_check), "live");
	c->request_timeout_ms = 5000;
	c->max_body = 64L << 20;
	c->max_header = 16L << 10;
	c->max_connections = 512;
	c->watch_interval_ms = 1000;
	c->hang_threshold_s = 60;
	c->busy_threshold_s = 1800;
	c->user_hang_min_s = 10;
	c->user_hang_max_s = 86400;
	c->user_busy_max_s = 604800;
	c->user_slow_off = true;
	c->bubble_window_s = 60;
	c->watch_max_steps = 64;
	c->watch_max_tasks = 256;
	snprintf(c->watch_dir, sizeof(c->watch_dir), "/dev/shm/parallel-layout");
	c->watch_leftover_s = 300;
	c->peer_port = 6830;
	c->peer_listen = LD_PEER_LISTEN_NO;
	c->munge_ttl_s = 10;
	c->peer_fail_intervals = 3;
	c->peer_lost_s = 0;
	c->peer_timeout_ms = 2000;
	c->peer_max_connections = 4096;
	c->peer_max_queued_bytes = 64L << 20;
	c->peer_source_max_queued_bytes = 16L << 20;
	c->peer_max_ranks = 65536;
	c->peer_fanin = LD_PEER_FANIN_AUTO;
	c->alert_resend_s = 60;
	c->alert_retries = 10;
	c->alert_queue_max = 1024;
	c->alert_step_max_open = 32;
	c->alert_step_fires_per_hour = 120;
	c->alert_timeout_ms = 5000;
	c->drain_max_per_hour = 1;
	c->drain_max_nodes = 2;
	snprintf(c->scontrol, sizeof(c->scontrol), "/usr/bin/scontrol");
	c->stacks = true;
	c->stack_timeout_s = 10;
	c->stack_tool = LD_STACK_AUTO;
	snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/parallel-layout");
	c->tcp_access = LD_TCP_READ_ONLY;
	c->slurm_uid = -1;
}

/* The first field where a and b differ, for a failure's diagnosis. */
static void
diag_diff(const struct ld_conf *a, const struct ld_conf *b)
{
	const unsigned char *x = (const void *)a, *y = (const void *)b;
	size_t i;

	for (i = 0; i < sizeof(*a); i++)
		if (x[i] != y[i]) {
			diag("  first difference at byte %zu of struct ld_conf", i);
			return;
		}
}

static void
is_conf(const struct ld_conf *got, const struct ld_conf *want, const char *what)
{
	if (!ok(memcmp(got, want, sizeof(*got)) == 0, "%s", what))
		diag_diff(got, want);
}

/* Set key = value over the defaults; 0 or -1 with the error in err. */
static int
set1(struct ld_conf *c, const char *key, const char *value, pl_err_t *err)
{
	ld_conf_defaults(c);
	pl_err_clear(err);
	return ld_conf_set(c, key, value, err);
}

static void
test_defaults(void)
{
	struct ld_conf got, want;

	ld_conf_defaults(&got);
	want_defaults(&want);
	is_conf(&got, &want, "the defaults");
}

/* Accepted values and what they set. */
static void
test_accepted(void)
{
	struct ld_conf got, want;
	pl_err_t err;

#define ACCEPT(key, value, assign, what) do { \
	int rc_ = set1(&got, key, value, &err); \
	want_defaults(&want); \
	assign; \
	if (!ok(rc_ == 0, "%s = %s is accepted", key, value)) \
		diag("  %s", err.text); \
	is_conf(&got, &want, what); \
} while (0)

	ACCEPT("map", "/etc/parallel-layout/cluster.json",
	       snprintf(want.map, sizeof(want.map), "/etc/parallel-layout/cluster.json"),
	       "map: the path");
	ACCEPT("map", "relative/x.json", snprintf(want.map, sizeof(want.map), "relative/x.json"),
	       "map: a relative path too");
	ACCEPT("socket", "/run/l-%n-%%.sock",
	       snprintf(want.socket, sizeof(want.socket), "/run/l-%%n-%%%%.sock"),
	       "socket: a pattern with %n and %%");
	ACCEPT("socket_mode", "0666", want.socket_mode = 0666, "socket_mode 0666");
	ACCEPT("socket_mode", "0", want.socket_mode = 0, "socket_mode 0");
	ACCEPT("socket_mode", "777", want.socket_mode = 0777, "socket_mode 777 (octal)");
	ACCEPT("socket_group", "slurm-users.2",
	       snprintf(want.socket_group, sizeof(want.socket_group), "slurm-users.2"),
	       "socket_group: a plain name");
	ACCEPT("tcp", "7461", (snprintf(want.tcp_host, sizeof(want.tcp_host), "127.0.0.1"),
				want.tcp_port = 7461), "tcp PORT: loopback");
	ACCEPT("tcp", "0.0.0.0:0", (snprintf(want.tcp_host, sizeof(want.tcp_host), "0.0.0.0"),
				     want.tcp_port = 0), "tcp HOST:0");
	ACCEPT("tcp", "[::1]:65535", (snprintf(want.tcp_host, sizeof(want.tcp_host), "::1"),
				       want.tcp_port = 65535), "tcp [V6]:PORT");
	ACCEPT("tcp", "::1:80", (snprintf(want.tcp_host, sizeof(want.tcp_host), "::1"),
				  want.tcp_port = 80), "tcp HOST:PORT: HOST up to the last ':'");
	ACCEPT("tcp_access", "read-only", want.tcp_access = LD_TCP_READ_ONLY, "tcp_access read-only");
	ACCEPT("tcp_access", "query", want.tcp_access = LD_TCP_QUERY, "tcp_access query");
	ACCEPT("tcp_access", "trusted", want.tcp_access = LD_TCP_TRUSTED, "tcp_access trusted");
	ACCEPT("port_file", "/run/p", snprintf(want.port_file, sizeof(want.port_file), "/run/p"),
	       "port_file");
	ACCEPT("node_name", "gpu-001.a_b",
	       snprintf(want.node_name, sizeof(want.node_name), "gpu-001.a_b"), "node_name");
	ACCEPT("log", "/var/log/l.log", snprintf(want.log, sizeof(want.log), "/var/log/l.log"),
	       "log: a file");
	ACCEPT("log", "stderr", (void)0, "log stderr: the default, \"\"");
	ACCEPT("pidfile", "/run/l.pid", snprintf(want.pidfile, sizeof(want.pidfile), "/run/l.pid"),
	       "pidfile");
	ACCEPT("hwloc_check", "no", snprintf(want.hwloc_check, sizeof(want.hwloc_check), "no"),
	       "hwloc_check no");
	ACCEPT("hwloc_check", "/x.xml",
	       snprintf(want.hwloc_check, sizeof(want.hwloc_check), "/x.xml"), "hwloc_check FILE");
	ACCEPT("slurm_user", "450", snprintf(want.slurm_user, sizeof(want.slurm_user), "450"),
	       "slurm_user: a uid (resolved later)");
	ACCEPT("max_body", "1k", want.max_body = 1024, "max_body 1k");
	ACCEPT("max_body", "2M", want.max_body = 2L << 20, "max_body 2M");
	ACCEPT("max_body", "1G", want.max_body = 1L << 30, "max_body 1G");
	ACCEPT("max_body", "4096", want.max_body = 4096, "max_body in bytes");
	ACCEPT("max_header", "1m", want.max_header = 1L << 20, "max_header 1m");
	ACCEPT("watch_dir", "/dev/shm/x.y",
	       snprintf(want.watch_dir, sizeof(want.watch_dir), "/dev/shm/x.y"), "watch_dir");
	ACCEPT("peer_listen", "no", (void)0, "peer_listen no");
	ACCEPT("peer_listen", "auto", want.peer_listen = LD_PEER_LISTEN_AUTO, "peer_listen auto");
	ACCEPT("peer_listen", "6830", (want.peer_listen = 6830,
					snprintf(want.peer_host, sizeof(want.peer_host), "0.0.0.0")),
	       "peer_listen PORT: every address");
	ACCEPT("peer_listen", "10.0.0.1:0", (want.peer_listen = 0,
					      snprintf(want.peer_host, sizeof(want.peer_host),
						       "10.0.0.1")),
	       "peer_listen HOST:0");
	ACCEPT("munge_socket", "/run/m.sock",
	       snprintf(want.munge_socket, sizeof(want.munge_socket), "/run/m.sock"),
	       "munge_socket");
	ACCEPT("peer_lost_s", "auto", (void)0, "peer_lost_s auto: 0");
	ACCEPT("peer_lost_s", "7", want.peer_lost_s = 7, "peer_lost_s 7");
	ACCEPT("peer_fanin", "auto", (void)0, "peer_fanin auto");
	ACCEPT("peer_fanin", "0", want.peer_fanin = 0, "peer_fanin 0: none");
	ACCEPT("peer_fanin", "2", want.peer_fanin = 2, "peer_fanin 2");
	ACCEPT("peer_fanin", "1024", want.peer_fanin = 1024, "peer_fanin 1024");
	ACCEPT("alertmanager_url", "http://a:9093, https://b/x",
	       snprintf(want.alertmanager_url, sizeof(want.alertmanager_url),
			"http://a:9093, https://b/x"), "alertmanager_url: two URLs kept as given");
	ACCEPT("alertmanager_url", "no", (void)0, "alertmanager_url no: none");
	ACCEPT("webhook_url", "https://hooks/x",
	       snprintf(want.webhook_url, sizeof(want.webhook_url), "https://hooks/x"),
	       "webhook_url");
	ACCEPT("drain", "yes", want.drain = true, "drain yes");
	ACCEPT("drain", "no", (void)0, "drain no");
	ACCEPT("scontrol", "/opt/slurm/bin/scontrol",
	       snprintf(want.scontrol, sizeof(want.scontrol), "/opt/slurm/bin/scontrol"),
	       "scontrol");
	ACCEPT("drain_verify", "/usr/sbin/nhc-node",
	       snprintf(want.drain_verify, sizeof(want.drain_verify), "/usr/sbin/nhc-node"),
	       "drain_verify a path");
	ACCEPT("drain_verify", "no", (void)0, "drain_verify no: none");
	ACCEPT("stacks", "no", want.stacks = false, "stacks no");
	ACCEPT("stack_tool", "gdb", want.stack_tool = LD_STACK_GDB, "stack_tool gdb");
	ACCEPT("stack_tool", "eu-stack", want.stack_tool = LD_STACK_EU, "stack_tool eu-stack");
	ACCEPT("metrics_jobs", "none", want.metrics_jobs = LD_METRICS_JOBS_NONE, "metrics_jobs none");
	ACCEPT("metrics_jobs", "all", want.metrics_jobs = LD_METRICS_JOBS_ALL, "metrics_jobs all");
	ACCEPT("state_dir", "/lab/%n/state",
	       snprintf(want.state_dir, sizeof(want.state_dir), "/lab/%%n/state"),
	       "state_dir with the node's name");
#undef ACCEPT
}

/* Every number's bounds: both ends accepted, one past either refused
 * saying the range. */
static void
test_bounds(void)
{
	static const struct {
		const char *key;
		size_t off;
		long lo, hi;
		bool is_int;
	} nums[] = {
#define L(f, lo, hi) { #f, offsetof(struct ld_conf, f), lo, hi, false }
		L(request_timeout_ms, 1, 3600000),
		L(max_connections, 1, 1000000),
		L(watch_interval_ms, 100, 3600000),
		L(hang_threshold_s, 5, 86400),
		L(bubble_window_s, 1, 86400),
		L(busy_threshold_s, 5, 604800),
		L(user_hang_min_s, 5, 2592000),
		L(user_hang_max_s, 5, 2592000),
		L(user_busy_max_s, 5, 2592000),
		L(watch_max_steps, 1, 4096),
		L(watch_max_tasks, 1, 4096),
		L(watch_leftover_s, 10, 604800),
		{ "peer_port", offsetof(struct ld_conf, peer_port), 1, 65535, true },
		L(munge_ttl_s, 1, 3600),
		L(peer_fail_intervals, 1, 100),
		L(peer_lost_s, 1, 86400),
		L(peer_timeout_ms, 100, 60000),
		L(peer_max_connections, 1, 1000000),
		L(peer_max_queued_bytes, 1L << 20, 1L << 32),
		L(peer_source_max_queued_bytes, 1L << 20, 1L << 32),
		L(peer_max_ranks, 1, 16777216),
		L(alert_resend_s, 1, 86400),
		L(alert_retries, 0, 100),
		L(alert_queue_max, 1, 65536),
		L(alert_step_max_open, 1, 4096),
		L(alert_step_fires_per_hour, 1, 1000000),
		L(alert_timeout_ms, 100, 600000),
		L(drain_max_per_hour, 0, 1000),
		L(drain_max_nodes, 0, 1000000),
		L(stack_timeout_s, 1, 120),
		L(max_body, 1024, 1L << 30),
		L(max_header, 1024, 1L << 20),
#undef L
	};
	struct ld_conf c;
	char v[32], range[64];
	pl_err_t err;
	size_t i;

	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		long ends[2] = { nums[i].lo, nums[i].hi };
		int j;

		for (j = 0; j < 2; j++) {
			long got;

			snprintf(v, sizeof(v), "%ld", ends[j]);
			if (!ok(set1(&c, nums[i].key, v, &err) == 0, "%s = %s is accepted",
				nums[i].key, v))
				diag("  %s", err.text);
			if (nums[i].is_int)
				got = *(int *)(void *)((char *)&c + nums[i].off);
			else
				got = *(long *)(void *)((char *)&c + nums[i].off);
			is_int(got, ends[j], "%s = %s sets it", nums[i].key, v);
		}
		snprintf(range, sizeof(range), "from %ld to %ld", nums[i].lo, nums[i].hi);
		for (j = 0; j < 2; j++) {
			snprintf(v, sizeof(v), "%ld", j ? nums[i].hi + 1 : nums[i].lo - 1);
			if (nums[i].lo == 0 && !j)
				snprintf(v, sizeof(v), "-1");
			if (!ok(set1(&c, nums[i].key, v, &err) < 0 && strstr(err.text, range),
				"%s = %s is refused, saying '%s'", nums[i].key, v, range))
				diag("  %s", err.text);
		}
	}
}

/* A config file of one line; the message ld_conf_read gives for it. */
static int
read_one(const char *line, struct ld_conf *c, pl_err_t *err)
{
	FILE *f = fopen(conf_path, "w");

	if (!f)
		return -2;
	fprintf(f, "%s\n", line);
	fclose(f);
	ld_conf_defaults(c);
	pl_err_clear(err);
	return ld_conf_read(c, conf_path, true, err);
}

/* One refusal of each kind of value, through a file: the message names
 * the file and line, the key and value, and what is accepted. */
static void
test_refused(void)
{
	static const struct {
		const char *line, *want;
	} cases[] = {
		{ "map = ", "map = : empty value" },
		{ "map = a\tb", "map = a\tb: control byte 0x09 at position 2" },
		{ "socket = x.sock", "socket = x.sock: expected an absolute path (%n = node name)" },
		{ "socket = /run/%x", "socket = /run/%x: bad % sequence or too long (accepted: %n "
		  "node name, %% a %)" },
		{ "socket_mode = 0999", "socket_mode = 0999: expected an octal mode from 0 to 0777" },
		{ "socket_mode = 01777", "socket_mode = 01777: expected an octal mode from 0 to 0777" },
		{ "socket_mode = 00660", "socket_mode = 00660: expected an octal mode" },
		{ "socket_group = a b", "socket_group = a b: expected a group name (letters, digits, "
		  "'.', '_', '-')" },
		{ "tcp = 70000", "tcp = 70000: expected [HOST:]PORT with PORT 0-65535" },
		{ "tcp = :80", "tcp = :80: empty HOST before ':'" },
		{ "tcp = [::1:80", "tcp = [::1:80: expected [V6ADDR]:PORT for an IPv6 address" },
		{ "tcp_access = open", "tcp_access = open: expected read-only (health and topology "
		  "only), query (placements too, nothing recorded) or trusted (everything, as root)" },
		{ "node_name = a/b", "node_name = a/b: expected a node name (letters, digits" },
		{ "slurm_user = a:b", "slurm_user = a:b: expected a user name or uid (letters" },
		{ "request_timeout_ms = 5s", "request_timeout_ms = 5s: expected a whole number from 1 "
		  "to 3600000" },
		{ "request_timeout_ms = +5", "request_timeout_ms = +5: expected a whole number" },
		{ "request_timeout_ms = 99999999999999999999", "request_timeout_ms = "
		  "99999999999999999999: expected a whole number" },
		{ "max_body = 12Q", "max_body = 12Q: expected bytes from 1024 to 1073741824, "
		  "optionally with K, M or G (KiB, MiB, GiB)" },
		{ "max_body = 2G", "max_body = 2G: expected bytes from 1024 to 1073741824" },
		{ "max_body = 1KB", "max_body = 1KB: expected bytes" },
		{ "max_header = 2M", "max_header = 2M: expected bytes from 1024 to 1048576" },
		{ "watch_dir = dev/shm", "watch_dir = dev/shm: expected an absolute directory path "
		  "other than /, without '.', '..' or empty parts, e.g. /dev/shm/parallel-layout" },
		{ "watch_dir = /a//b", "watch_dir = /a//b: expected an absolute directory path" },
		{ "watch_dir = /a/", "watch_dir = /a/: expected an absolute directory path" },
		{ "watch_dir = /a/./b", "watch_dir = /a/./b: expected an absolute directory path" },
		{ "peer_port = 0", "peer_port = 0: expected a whole number from 1 to 65535" },
		{ "peer_listen = yes", "peer_listen = yes: expected no, auto (the map's address and "
		  "peer port of this node, else 0.0.0.0:peer_port) or [HOST:]PORT" },
		{ "munge_socket = m.sock", "munge_socket = m.sock: expected the absolute path of "
		  "munged's socket, e.g. /run/munge/munge.socket.2" },
		{ "peer_lost_s = soon", "peer_lost_s = soon: expected auto (3 watch intervals, at "
		  "least 5 s) or seconds from 1 to 86400" },
		{ "peer_lost_s = 0", "peer_lost_s = 0: expected auto (3 watch intervals" },
		{ "peer_fanin = 1", "peer_fanin = 1: expected auto (none up to 64 nodes, else the "
		  "square root of the step's nodes), 0 (none: every node sends to the leader) or a "
		  "relay width from 2 to 1024" },
		{ "peer_fanin = 1025", "peer_fanin = 1025: expected auto" },
		{ "peer_fanin = -1", "peer_fanin = -1: expected auto" },
		{ "alertmanager_url = a:9093", "alertmanager_url = a:9093: 'a:9093' is not an "
		  "http:// or https:// URL with a host, e.g. http://127.0.0.1:9093" },
		{ "alertmanager_url = http:///x", "~is not an http:// or https:// URL with a host" },
		{ "webhook_url = http://a,,http://b", "webhook_url = http://a,,http://b: an empty URL "
		  "in the list (expected URLs separated by ',')" },
		{ "webhook_url = http://a\"b", "webhook_url = http://a\"b: 'http://a\"b': a blank, "
		  "quote or backslash in a URL" },
		{ "webhook_url = http://1,http://2,http://3,http://4,http://5,http://6,http://7,"
		  "http://8,http://9", "~: more than 8 URLs" },
		{ "drain = maybe", "drain = maybe: expected yes (drain the node of a rank whose "
		  "kernel is seen stuck on the GPU) or no" },
		{ "drain = 1", "drain = 1: expected yes" },
		{ "drain_verify = nhc", "drain_verify = nhc: expected the absolute path of the "
		  "site's node health check, or no, e.g. /usr/sbin/nhc" },
		{ "scontrol = scontrol", "scontrol = scontrol: expected the absolute path of scontrol, "
		  "e.g. /usr/bin/scontrol" },
		{ "stack_tool = pstack", "stack_tool = pstack: expected auto (eu-stack when "
		  "installed, else gdb), eu-stack (elfutils' eu-stack only) or gdb (gdb only)" },
		{ "state_dir = var/lib", "state_dir = var/lib: expected an absolute path" },
		{ "metrics_jobs = mine", "metrics_jobs = mine: expected all (every job's series) or "
		  "none (the node's own series only)" },
		{ "state_dir = /s/%j", "state_dir = /s/%j: bad % sequence" },
		{ "sokcet = /x", ":1: unknown key 'sokcet' (accepted: map, socket, socket_mode," },
	};
	char want[1024];
	struct ld_conf c;
	pl_err_t err;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = read_one(cases[i].line, &c, &err);

		/* ':' starts what follows the file's name; '~' a part of the
		 * message; else it follows "FILE:1: ". */
		if (cases[i].want[0] == ':')
			snprintf(want, sizeof(want), "%s%s", conf_path, cases[i].want);
		else if (cases[i].want[0] == '~')
			snprintf(want, sizeof(want), "%s", cases[i].want + 1);
		else
			snprintf(want, sizeof(want), "%s:1: %s", conf_path, cases[i].want);
		if (!ok(rc == -1 && (cases[i].want[0] == '~' ? strstr(err.text, want) != NULL :
				     strncmp(err.text, want, strlen(want)) == 0),
			"'%s' is refused: '%s'", cases[i].line, cases[i].want))
			diag("  got: %s", err.text);
	}
}

/* A string one byte too long for its field is refused; one that just fits
 * is accepted. */
static void
test_lengths(void)
{
	static const struct {
		const char *key, *prefix;
		size_t size;
	} strs[] = {
		{ "map", "/", sizeof(((struct ld_conf *)0)->map) },
		{ "socket_group", "g", sizeof(((struct ld_conf *)0)->socket_group) },
		{ "scontrol", "/", sizeof(((struct ld_conf *)0)->scontrol) },
		{ "webhook_url", "http://", sizeof(((struct ld_conf *)0)->webhook_url) },
	};
	char v[LD_PATH + 2];
	struct ld_conf c;
	pl_err_t err;
	size_t i;

	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		size_t n = strs[i].size - 1, p = strlen(strs[i].prefix);

		memcpy(v, strs[i].prefix, p);
		memset(v + p, 'a', n - p);
		v[n] = '\0';
		if (!ok(set1(&c, strs[i].key, v, &err) == 0, "%s of %zu bytes is accepted",
			strs[i].key, n))
			diag("  %s", err.text);
		v[n] = 'a';
		v[n + 1] = '\0';
		if (!ok(set1(&c, strs[i].key, v, &err) < 0 && strstr(err.text, "longer than"),
			"%s of %zu bytes is refused", strs[i].key, n + 1))
			diag("  %s", err.text);
	}
}

/* A whole file: comments, blanks, a '#' inside a path, a repeated key. */
static void
test_file(void)
{
	struct ld_conf c, want;
	pl_err_t err;
	FILE *f;

	f = fopen(conf_path, "w");
	if (!f) {
		ok(0, "cannot write %s", conf_path);
		return;
	}
	fprintf(f, "# layoutd\n\n  map = /etc/a#b.json   # the map\n\tsocket_mode=0600\r\n"
		"drain = yes\n");
	fclose(f);
	ld_conf_defaults(&c);
	pl_err_clear(&err);
	if (!ok(ld_conf_read(&c, conf_path, true, &err) == 0, "a file with comments is read"))
		diag("  %s", err.text);
	want_defaults(&want);
	snprintf(want.map, sizeof(want.map), "/etc/a#b.json");
	want.socket_mode = 0600;
	want.drain = true;
	is_conf(&c, &want, "and sets what it says");
	f = fopen(conf_path, "w");
	if (f) {
		fprintf(f, "drain = yes\n\ndrain = no\n");
		fclose(f);
	}
	ld_conf_defaults(&c);
	pl_err_clear(&err);
	ok(ld_conf_read(&c, conf_path, true, &err) < 0 && strstr(err.text, ":3: 'drain' is "
	   "already set at line 1"), "a key set twice is refused naming both lines");
}

/* Whether key is in the comma-separated list of keys. */
static bool
in_keys(const char *keys, const char *key)
{
	size_t n = strlen(key);
	const char *p;

	for (p = keys; (p = strstr(p, key)) != NULL; p += n)
		if ((p == keys || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* Into out, " key" for each key of the list from that the list in lacks. */
static void
list_missing(const char *from, const char *in, char *out, size_t size)
{
	const char *p;

	out[0] = '\0';
	for (p = from; *p; ) {
		char key[64];
		size_t len = strcspn(p, ",");

		snprintf(key, sizeof(key), "%.*s", (int)len, p);
		if (!in_keys(in, key) && strlen(out) + strlen(key) + 2 < size)
			snprintf(out + strlen(out), size - strlen(out), " %s", key);
		p += len;
		p += strspn(p, ", ");
	}
}

/* The file at PL_TOP_SRCDIR/rel, opened for reading; NULL when absent. */
static FILE *
open_src(const char *rel, char *path, size_t size)
{
	const char *top = getenv("PL_TOP_SRCDIR");

	snprintf(path, size, "%s/%s", top && *top ? top : "..", rel);
	return fopen(path, "r");
}

/* Every key layoutd(8) describes under CONFIGURATION (a .TP whose next
 * line is ".BI key" or ".BR key") is a row, and every row is described. */
static void
test_man_page(void)
{
	char path[LD_PATH], line[512], seen[2048] = "", bad[512] = "";
	const char *keys = ld_conf_keys();
	bool in_section = false, after_tp = false;
	FILE *f = open_src("daemon/layoutd.8", path, sizeof(path));
	int n = 0;

	if (!ok(f != NULL, "layoutd(8) is at %s", path)) {
		ok(0, "its keys are rows");
		ok(0, "every row is in it");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char key[64];

		if (strncmp(line, ".SH", 3) == 0) {
			in_section = strncmp(line, ".SH CONFIGURATION", 17) == 0;
			continue;
		}
		if (!in_section)
			continue;
		if (after_tp && (sscanf(line, ".BI %63[a-z_]", key) == 1 ||
				 sscanf(line, ".BR %63[a-z_]", key) == 1)) {
			n++;
			if (strlen(seen) + strlen(key) + 3 < sizeof(seen))
				snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s%s",
					 seen[0] ? ", " : "", key);
			if (!in_keys(keys, key) && strlen(bad) + strlen(key) + 2 < sizeof(bad))
				snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), " %s", key);
		}
		after_tp = strncmp(line, ".TP", 3) == 0;
	}
	fclose(f);
	if (!ok(n > 0 && !bad[0], "the %d keys layoutd(8) describes are rows", n))
		diag("  not rows:%s", bad);
	list_missing(keys, seen, bad, sizeof(bad));
	if (!ok(!bad[0], "every row is described in layoutd(8)"))
		diag("  missing:%s", bad);
}

/*
 * etc/layoutd.conf: every `key = value` line, commented out or not, is a
 * row and is accepted; every row has one; and a commented-out line shows
 * the default, but for the keys whose line is an example.
 */
static void
test_example_conf(void)
{
	static const char *const examples =
		"socket_group, slurm_user, tcp, port_file, node_name, log, pidfile, "
		"peer_listen, munge_socket, alertmanager_url, webhook_url";
	char path[LD_PATH], line[512], seen[2048] = "", bad[1024] = "", notdef[512] = "";
	const char *keys = ld_conf_keys();
	struct ld_conf c, dflt;
	FILE *f = open_src("etc/layoutd.conf", path, sizeof(path));
	pl_err_t err;
	int n = 0;

	if (!ok(f != NULL, "the example config is at %s", path)) {
		ok(0, "its lines are accepted");
		ok(0, "its commented-out lines show the defaults");
		ok(0, "every row has a line");
		return;
	}
	ld_conf_defaults(&dflt);
	while (fgets(line, sizeof(line), f)) {
		char key[64], value[LD_PATH];
		bool commented = line[0] == '#';

		if (sscanf(line + commented, "%63[a-z_] = %1023[^\n]", key, value) != 2)
			continue;
		n++;
		if (strlen(seen) + strlen(key) + 3 < sizeof(seen))
			snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s%s",
				 seen[0] ? ", " : "", key);
		if (set1(&c, key, value, &err) < 0) {
			if (strlen(bad) + strlen(key) + strlen(err.text) + 8 < sizeof(bad))
				snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), " %s (%s)",
					 key, err.text);
			continue;
		}
		if (commented && !in_keys(examples, key) && memcmp(&c, &dflt, sizeof(c)) != 0 &&
		    strlen(notdef) + strlen(key) + 2 < sizeof(notdef))
			snprintf(notdef + strlen(notdef), sizeof(notdef) - strlen(notdef), " %s", key);
	}
	fclose(f);
	if (!ok(n > 0 && !bad[0], "the example config's %d key lines are accepted", n))
		diag("  refused:%s", bad);
	if (!ok(!notdef[0], "its commented-out lines show the defaults"))
		diag("  not the default:%s", notdef);
	list_missing(keys, seen, bad, sizeof(bad));
	if (!ok(!bad[0], "every row has a line in the example config"))
		diag("  missing:%s", bad);
}

/* The judge's and the detector's parameters from the config: the lib's
 * defaults from the config's defaults, the two thresholds from the keys,
 * converted to ns in one place. */
static void
test_watch_params(void)
{
	struct judge_params got, want;
	struct ld_conf c;
	uint64_t det = 0;
	pl_err_t err;

	ld_conf_defaults(&c);
	memset(&got, 0xa5, sizeof(got));
	ld_conf_watch_params(&c, &got, &det);
	judge_params_default(&want);
	ok(memcmp(&got, &want, sizeof(got)) == 0, "the config's defaults give the judge's own");
	is_int(det, want.hang_threshold_ns, "and the detector the same hang threshold");
	is_int(det, (uint64_t)JUDGE_HANG_THRESHOLD_S * 1000000000u, "of %d s",
	       JUDGE_HANG_THRESHOLD_S);
	pl_err_clear(&err);
	ld_conf_set(&c, "hang_threshold_s", "17", &err);
	ld_conf_set(&c, "bubble_window_s", "5", &err);
	ld_conf_set(&c, "busy_threshold_s", "600", &err);
	ok(!err.text[0], "hang_threshold_s = 17, bubble_window_s = 5, busy_threshold_s = 600");
	ld_conf_watch_params(&c, &got, &det);
	want.hang_threshold_ns = UINT64_C(17000000000);
	want.busy_threshold_ns = UINT64_C(600000000000);
	want.bubble_window_ns = UINT64_C(5000000000);
	ok(memcmp(&got, &want, sizeof(got)) == 0, "the judge takes all three, the rest its defaults");
	is_int(det, UINT64_C(17000000000), "the detector takes the hang threshold");
	c.hang_threshold_s = 86400;
	ld_conf_watch_params(&c, NULL, &det);
	is_int(det, UINT64_C(86400000000000), "86400 s, without overflow (judge_params NULL)");
}

int
main(void)
{
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp: cannot make a directory\n");
		return 1;
	}
	snprintf(conf_path, sizeof(conf_path), "%s/layoutd.conf", tmpdir);
	test_defaults();
	test_accepted();
	test_bounds();
	test_refused();
	test_lengths();
	test_file();
	test_watch_params();
	test_man_page();
	test_example_conf();
	unlink(conf_path);
	rmdir(tmpdir);
	return done_testing();
}
