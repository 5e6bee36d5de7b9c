/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd, the per-node placement daemon: what its three files share.
 * layoutd.c owns start-up, signals, reload and the node check;
 * layoutd_http.c the request handlers; layoutd_conf.c the config file.
 */
#ifndef PL_LAYOUTD_H
#define PL_LAYOUTD_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "client.h"
#include "pl_err.h"
#include "proto.h"
#include "topo.h"

#define LD_PROG "layoutd"
#define LD_PATH 1024
#define LD_MAX_DISCREPANCIES 16
#define LD_DISCREPANCY_LEN 400
#define LD_STEPS 256

#define LD_DEFAULT_SOCKET CLIENT_DEFAULT_SOCKET
#define LD_DEFAULT_SOCKET_MODE 0660
#define LD_DEFAULT_TIMEOUT_MS 5000L
#define LD_DEFAULT_MAX_BODY (64L << 20)

/* The settings; strings are "" when unset. */
struct ld_conf {
	char map[LD_PATH];
	char socket[LD_PATH];		/* pattern: %n = node name, %% = % */
	unsigned socket_mode;
	char socket_group[TOPO_NAME];
	char tcp_host[LD_PATH];		/* "" = no TCP listener */
	int tcp_port;			/* 0 = ephemeral */
	char port_file[LD_PATH];
	char node_name[TOPO_NAME];	/* "" until ld_conf_finish() */
	char log[LD_PATH];		/* "" = stderr */
	char pidfile[LD_PATH];
	char hwloc_check[LD_PATH];	/* "live", "no" or an hwloc XML */
	long request_timeout_ms;
	long max_body;
};

/* One setting from the command line: applied after the file, so it wins. */
struct ld_override {
	const char *key;	/* config key */
	const char *opt;	/* the option that gave it, for messages */
	const char *value;
};

/* Built defaults (socket pattern, mode, timeouts, hwloc_check live). */
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
 * hostname) and check what needs every key (a map is given). */
int ld_conf_finish(struct ld_conf *c, pl_err_t *err);

/* Comma-separated accepted keys, for messages and --help. */
const char *ld_conf_keys(void);

/* What a load of config + map gives; swapped whole on reload. */
struct ld_load {
	struct ld_conf conf;
	struct topo_map *map;
	char *map_json;		/* the map as /v1/topology serves it */
	int ndisc;
	char disc[LD_MAX_DISCREPANCIES][LD_DISCREPANCY_LEN];
};

/* One answered placement, for /v1/steps. */
struct ld_step {
	long job_id, step_id;	/* -1 unknown */
	char *spec;		/* as requested; "" when the request did not parse */
	long world, nnodes;
	char strategy[96];
	time_t time;
	int status;
	double ms;
};

struct event_base;
struct evhttp;

struct ld {
	struct ld_load *cur;
	const char *conf_path;		/* NULL = the built-in default */
	bool conf_must_exist;
	const struct ld_override *ov;
	int nov;
	FILE *log;			/* stderr or the log file */
	struct event_base *base;
	struct evhttp *http;
	struct timespec start;		/* CLOCK_MONOTONIC */
	unsigned long requests;
	unsigned long reloads;
	unsigned long reload_failures;
	struct ld_step steps[LD_STEPS];	/* ring: steps[(head - 1) % LD_STEPS] newest */
	long nsteps, head;
};

/* A timestamped line to the log. */
void ld_log(struct ld *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Milliseconds of CLOCK_MONOTONIC. */
double ld_now_ms(void);

/* Route every request of http to the handlers; d outlives http. */
void ld_http_setup(struct ld *d, struct evhttp *http);

/* Free the recorded steps. */
void ld_steps_free(struct ld *d);

#endif
