/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd, the per-node placement daemon: what its files share.
 *
 *   layoutd.c         main: command line, signals, the event loop
 *   layoutd_conf.c    the config file (key table)
 *   layoutd_load.c    one load of config + map, and SIGHUP's reload
 *   layoutd_node.c    this node through hwloc against its map entry
 *   layoutd_log.c     the log (escaped, rate-limited where it can flood)
 *   layoutd_listen.c  the unix socket and the TCP listener
 *   layoutd_conn.c    connections: cap, whole-request deadline, EMFILE
 *                     back-off, the caller's credentials (layoutd_conn.h)
 *   layoutd_steps.c   the ring of recorded steps (layoutd_steps.h)
 *   layoutd_curl.c    non-blocking HTTP POSTs on the loop (layoutd_curl.h)
 *   layoutd_reply.c   the one reply of every listener (layoutd_reply.h)
 *   watch/            the watch's room:
 *     view.c          the node's watched ranks: records, detection (view.h)
 *     sweep.c         the step directories left in watch_dir (sweep.h)
 *     peer.c          the job-wide view: node summaries to each step's
 *                     leader over TCP with munge, relays, failover, the
 *                     peer listener (peer.h)
 *     munge_worker.c  munge off the loop, on a thread (munge_worker.h)
 *     lead.c          the steps led here: their ranks, the judge (lead.h)
 *     alert.c         alerts out of the judge's findings (alert.h)
 *     drain.c         draining a node through scontrol (drain.h)
 *     stacks.c        the stacks of a critical finding's culprit (stacks.h)
 *     child.c         a child program on a pipe, for drain and stacks (child.h)
 *   layoutd_metrics.c GET /metrics (Prometheus text format), from the
 *                     rooms' *_stats()
 *   layoutd_http.c    routing and the handlers
 *
 * Calls run down only (scripts/daemon-layers checks a build): layoutd.c
 * and the reload, then the listeners and routes (layoutd_http.c,
 * layoutd_listen.c, layoutd_metrics.c), then the rooms (watch/, the steps),
 * then config and node check, then reply, connections, curl and the log.
 * A room that must tell one above it something takes a callback.
 *
 * Each subsystem keeps its state in its own struct; struct ld only holds
 * them together.
 */
#ifndef PL_LAYOUTD_H
#define PL_LAYOUTD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "client.h"
#include "peerwire.h"
#include "pl_err.h"
#include "proto.h"
#include "stackfile.h"
#include "topo.h"

#define LD_PROG "layoutd"
#define LD_PATH 1024
#define LD_MAX_DISCREPANCIES 16
#define LD_DISCREPANCY_LEN 400

/* The defaults are in the config's rows (layoutd_conf.c); these few are
 * named elsewhere too (--help, the connections before a config applies,
 * the plugin's test of its request size). */
#define LD_DEFAULT_SOCKET CLIENT_DEFAULT_SOCKET
#define LD_DEFAULT_TIMEOUT_MS 5000L
#define LD_DEFAULT_MAX_BODY (64L << 20)
#define LD_DEFAULT_MAX_CONNECTIONS 512L
#define LD_PEER_FANIN_AUTO (-1L)	/* peer_fanin = auto */
#define LD_PEER_FANIN_MAX 1024L

/* peer_listen besides a port. */
#define LD_PEER_LISTEN_NO (-1)		/* no peer listener, no summaries sent */
#define LD_PEER_LISTEN_AUTO (-2)	/* the map's addr/peer_port, else 0.0.0.0:peer_port */

/* The daemon's own files (the culprits' stacks): systemd's StateDirectory. */
#define LD_DEFAULT_STATE_DIR STACKFILE_STATE_DIR

/* The tool that captures a culprit's stacks (stack_tool). */
enum ld_stack_tool {
	LD_STACK_AUTO,		/* eu-stack when installed, else gdb */
	LD_STACK_EU,		/* eu-stack only */
	LD_STACK_GDB,		/* gdb only */
};

/* Which jobs GET /metrics shows series of (metrics_jobs). */
enum ld_metrics_jobs {
	LD_METRICS_JOBS_ALL,	/* every job's, to whoever reads /metrics */
	LD_METRICS_JOBS_NONE,	/* none: the node's own series only */
};

/* What a TCP caller, which has no credentials, may do. */
enum ld_tcp_access {
	LD_TCP_READ_ONLY,	/* /v1/health and /v1/topology only (default) */
	LD_TCP_QUERY,		/* also placements, answered as for an untrusted user */
	LD_TCP_TRUSTED,		/* everything, as root */
};

/* The settings; strings are "" when unset. */
struct ld_conf {
	char map[LD_PATH];
	char socket[LD_PATH];		/* pattern: %n = node name, %% = % */
	unsigned socket_mode;
	char socket_group[TOPO_NAME];
	char tcp_host[LD_PATH];		/* "" = no TCP listener */
	int tcp_port;			/* 0 = ephemeral */
	enum ld_tcp_access tcp_access;
	char port_file[LD_PATH];
	char node_name[TOPO_NAME];	/* "" until ld_conf_finish() */
	char log[LD_PATH];		/* "" = stderr */
	char pidfile[LD_PATH];
	char hwloc_check[LD_PATH];	/* "live", "no" or an hwloc XML */
	char slurm_user[TOPO_NAME];	/* "" = only root is trusted */
	long slurm_uid;			/* -1 = none; set by ld_conf_finish() */
	long request_timeout_ms;
	long max_body;
	long max_header;
	long max_connections;
	long watch_interval_ms;		/* sampling of the watch records */
	long hang_threshold_s;		/* detection's threshold */
	long busy_threshold_s;		/* a rank busy outside NCCL a hang past it */
	long user_hang_min_s, user_hang_max_s; /* what a user may ask for its step */
	long user_busy_max_s;
	bool user_slow_off;		/* a user may switch the slow rule off */
	long bubble_window_s;		/* the pipeline-bubble rule's window */
	long watch_max_steps;		/* registered steps at once */
	long watch_max_tasks;		/* registered tasks per step */
	char watch_dir[LD_PATH];	/* the step directories (the plugin's watch_dir) */
	long watch_leftover_s;		/* idle this long, a step directory is left over */
	/* the peers (watch/peer.c) */
	int peer_port;			/* other nodes' layoutd, when the map has no port */
	int peer_listen;		/* LD_PEER_LISTEN_* or a port (0 = any free one) */
	char peer_host[LD_PATH];	/* its address when a port is given */
	char munge_socket[LD_PATH];	/* "" = libmunge's default */
	long munge_ttl_s;		/* what a credential made here lives */
	long peer_fail_intervals;	/* failed deliveries in a row before a failover */
	long peer_lost_s;		/* silent this long, a node is lost; 0 = auto */
	long peer_timeout_ms;		/* one delivery, whole */
	long peer_max_connections;	/* on the peer listener */
	long peer_max_queued_bytes;	/* POST bodies waiting for the munge worker */
	long peer_source_max_queued_bytes; /* of them, from one address */
	long peer_max_ranks;		/* ranks in one step this node leads */
	long peer_fanin;		/* relay width; 0 none (direct), LD_PEER_FANIN_AUTO */
	bool peer_check_origin;		/* a summary's node is its credential's origin */
	char alertmanager_url[LD_PATH];	/* comma-separated Alertmanager URLs; "" none */
	char webhook_url[LD_PATH];	/* comma-separated webhook URLs; "" none */
	long alert_resend_s;		/* a firing alert is sent again this often */
	long alert_retries;		/* tries after the first, with back-off */
	long alert_queue_max;		/* alert messages queued at most */
	long alert_step_max_open;	/* one step's open alerts at most */
	long alert_step_fires_per_hour;	/* one step's new alerts an hour at most */
	long alert_timeout_ms;		/* one delivery, connection included */
	bool drain;			/* drain the culprit's node in Slurm */
	long drain_max_per_hour;	/* drains at most in any hour */
	long drain_max_nodes;		/* nodes drained with our reason at most,
					 * cluster-wide (scontrol's count) */
	char drain_verify[LD_PATH];	/* the site's health check, "" none */
	char scontrol[LD_PATH];		/* the scontrol the drain runs */
	bool stacks;			/* capture a critical finding's culprit's stacks */
	long stack_timeout_s;		/* one capture, whole */
	enum ld_stack_tool stack_tool;
	char state_dir[LD_PATH];	/* pattern: %n node name, %% a % */
	enum ld_metrics_jobs metrics_jobs;
};

/* One setting from the command line: applied after the file, so it wins. */
struct ld_override {
	const char *key;	/* config key */
	const char *opt;	/* the option that gave it, for messages */
	const char *value;
};

/* Every key's default, from its row (socket pattern, mode, timeouts,
 * limits, hwloc_check live, ...). */
void ld_conf_defaults(struct ld_conf *c);

/*
 * Set key to value.  Returns 0, or -1 with err saying what the value should
 * look like (the caller adds where the value came from).  An unknown key
 * gives "unknown key 'K' (accepted: ...)".
 */
int ld_conf_set(struct ld_conf *c, const char *key, const char *value, pl_err_t *err);

/*
 * Read a config file over *c: `key = value` lines, `#` comments.  A missing
 * file is an error only with must_exist.  Errors name file:line.
 */
int ld_conf_read(struct ld_conf *c, const char *path, bool must_exist, pl_err_t *err);

/* Fill what is derived (node_name from $SLURMD_NODENAME or the short
 * hostname, slurm_uid from slurm_user) and check what needs every key (a
 * map is given). */
int ld_conf_finish(struct ld_conf *c, pl_err_t *err);

/* Comma-separated accepted keys, for messages and --help. */
const char *ld_conf_keys(void);

/* The name of a tcp_access value, as the config file spells it. */
const char *ld_tcp_access_name(enum ld_tcp_access a);

struct judge_params;

/*
 * The watch's parameters from the config: the judge's (its defaults, with
 * the hang threshold and the bubble window from c) and the node
 * detector's hang threshold, in ns.  Either pointer may be NULL.
 */
void ld_conf_watch_params(const struct ld_conf *c, struct judge_params *jp,
			  uint64_t *detect_threshold_ns);

/* What a load of config + map gives; swapped whole on reload. */
struct ld_load {
	struct ld_conf conf;
	struct topo_map *map;
	char *map_json;		/* the map as /v1/topology serves it */
	int ndisc;
	char disc[LD_MAX_DISCREPANCIES][LD_DISCREPANCY_LEN];
};

/* ---- the log (layoutd_log.c) ---- */

struct ld_log {
	FILE *f;		/* stderr or the log file */
};

/* A timestamped line to the log.  Whatever came from a client goes
 * through pl_clip() first: a newline in it must not forge a line. */
void ld_log(struct ld_log *lg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Open the log file ("" = stderr).  NULL with err on failure. */
FILE *ld_log_open(const char *path, pl_err_t *err);

/* Close what ld_log_open() gave (stderr stays open). */
void ld_log_close(FILE *f);

/*
 * A message that may repeat fast (accept failures, libevent's warnings):
 * at most one line per interval, with how many were not written since.
 */
struct ld_ratelog {
	double interval_ms;
	double last_ms;		/* when the last line was written; 0 never */
	unsigned long count;	/* every occurrence */
	unsigned long quiet;	/* occurrences not written since the last line */
};

/* Count one occurrence and log it unless one was written within the
 * interval (then the next line says how many were not). */
void ld_ratelog(struct ld_log *lg, struct ld_ratelog *r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Route libevent's own messages into lg, rate-limited (NULL = restore). */
void ld_log_libevent(struct ld_log *lg);

struct buf;

/* s made fit for one log line, escaped like pl_clip() (a newline cannot
 * forge a line) but cut at max bytes, for messages longer than an echoed
 * input.  The text lives in b (free it with buf_free). */
const char *ld_escape(struct buf *b, const char *s, size_t max);

/* Milliseconds of CLOCK_MONOTONIC. */
double ld_now_ms(void);

/* ---- the node check (layoutd_node.c) ---- */

/* Compare this node (through hwloc as conf.hwloc_check says) with its map
 * entry; differences go into l->disc. */
void ld_node_check(struct ld_load *l);

/* ---- loading and reloading (layoutd_load.c) ---- */

struct ld_loader {
	const char *conf_path;		/* NULL = the built-in default */
	bool conf_must_exist;
	const struct ld_override *ov;
	int nov;
};

/* Config file, then the command line over it, then the map and the node
 * check.  NULL with err when any of them fails.  Free with ld_load_free(). */
struct ld_load *ld_load_build(const struct ld_loader *ldr, pl_err_t *err);
void ld_load_free(struct ld_load *l);

/* The path of the default config file. */
const char *ld_default_conf(void);

struct ld;

/* Log the state of the current load (what, node, map, verdict, each
 * discrepancy). */
void ld_log_state(struct ld *d, const char *what);

/* SIGHUP: load again and swap when it all loaded.  Returns 0 when swapped. */
int ld_reload(struct ld *d);

/* ---- the listeners (layoutd_listen.c) ---- */

/* What the listeners leave behind, to remove at exit. */
struct ld_listen {
	char path[LD_PATH];		/* "" until bound */
	dev_t dev;
	ino_t ino;
	char port_file[LD_PATH];	/* "" until written */
};

struct sockaddr_un;

/* path as a unix socket address; -1 with err when it is too long. */
int ld_unix_addr(const char *path, struct sockaddr_un *sa, pl_err_t *err);

/* Bind, chmod/chown and listen on the configured unix socket, and hand it
 * to d->http and d->conns. */
int ld_listen_unix(struct ld *d, struct ld_listen *ls, pl_err_t *err);

/* The optional TCP listener, and its port file. */
int ld_listen_tcp(struct ld *d, struct ld_listen *ls, pl_err_t *err);

/* Remove the socket (only while it is still the one we bound) and the port
 * file. */
void ld_unlisten(struct ld_listen *ls);

/* Write a small file whole (a temporary file renamed into place). */
int ld_write_small_file(const char *path, const char *text, pl_err_t *err);

/* ---- the daemon ---- */

struct event_base;
struct evhttp;
struct ld_alerts;
struct ld_conns;
struct ld_curl;
struct ld_steps;
struct ld_watch;
struct ld_peers;
struct ld_stacks;

struct ld {
	struct ld_load *cur;
	struct ld_loader loader;
	struct ld_log log;
	struct event_base *base;
	struct evhttp *http;
	struct ld_conns *conns;		/* layoutd_conn.c */
	struct ld_steps *steps;		/* layoutd_steps.c */
	struct ld_watch *watch;		/* watch/view.c */
	struct ld_peers *peers;		/* watch/peer.c */
	struct ld_curl *curl;		/* layoutd_curl.c: the loop's HTTP client */
	struct ld_alerts *alerts;	/* watch/alert.c */
	struct ld_stacks *stacks;	/* watch/stacks.c */
	struct timespec start;		/* CLOCK_MONOTONIC */
	unsigned long requests;
	unsigned long reloads;
	unsigned long reload_failures;
	unsigned long slow_answers;	/* computed in more than request_timeout_ms */
	unsigned long placements;	/* placement requests answered 200 */
	unsigned long placement_errors;	/* placement requests refused */
};

/* Route every request of http to the handlers; d outlives http. */
void ld_http_setup(struct ld *d, struct evhttp *http);

/* Apply the current load's HTTP settings (timeouts, sizes, limits). */
void ld_http_apply(struct ld *d);

/* ---- GET /metrics (layoutd_metrics.c) ---- */

/* A metric family's "# HELP" and "# TYPE" lines (type: counter, gauge). */
void ld_metric_family(struct buf *b, const char *name, const char *type, const char *help);

/* One sample, "name{k="v",...} value": the labels as key, value pairs
 * ending in NULL, values escaped as the text format wants. */
void ld_metric(struct buf *b, const char *name, double value, ...) __attribute__((sentinel));

/* The whole page (text format 0.0.4); caller frees.  NULL when out of
 * memory. */
char *ld_metrics_text(struct ld *d, size_t *len);

#endif
