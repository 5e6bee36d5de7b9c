/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd: serves placements computed from the cluster map to the SPANK
 * plugin (and layoutctl) over a unix socket, one per node.  Shaped like
 * libevent's sample/http-server.c: main builds config, base, http,
 * listeners and signals, dispatches, then frees in reverse under one label.
 *
 * It never daemonizes (the only children it forks are scontrol for a drain,
 * eu-stack or gdb for a culprit's stacks, and the hwloc check): systemd (Type=simple) or a shell supervises it,
 * and a daemon that stays in the foreground cannot lose its log or its pid
 * file in a double fork.
 */
#include "config.h"

#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/http.h>

#include "client.h"
#include "layoutd.h"
#include "watch/alert.h"
#include "layoutd_conn.h"
#include "layoutd_curl.h"
#include "watch/peer.h"
#include "watch/stacks.h"
#include "layoutd_steps.h"
#include "watch/view.h"

#define LD_MAX_OVERRIDES 32

/* ---- signals ---- */

/* SIGHUP: a libevent signal event, so the reload runs between requests
 * and none is dropped. */
static void
on_hup(evutil_socket_t sig, short what, void *arg)
{
	ld_reload(arg);
}

static void
on_term(evutil_socket_t sig, short what, void *arg)
{
	struct ld *d = arg;

	ld_log(&d->log, "signal %d: exiting", (int)sig);
	event_base_loopexit(d->base, NULL);
}

/* ---- command line ---- */

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: " LD_PROG " [-f CONFIG] [-F|--foreground] [--check-config] [--map FILE]\n"
		"               [--socket PATTERN] [--tcp [HOST:]PORT] [--node NAME] [--pidfile FILE]\n"
		"               [--log FILE] [--hwloc-check no|live|FILE] [--help] [--version]\n"
		"\n"
		"Serve rank placements for this node's Slurm steps from a cluster map, over a\n"
		"unix socket (default %s, where %%n = node name)\n"
		"and optionally TCP.  Options override the config file (default\n"
		"%s, read when present; -f makes it required).\n"
		"\n"
		"  -f CONFIG            config file: key = value lines; keys:\n"
		"                       %s\n"
		"  -F, --foreground     accepted for clarity: layoutd always stays in the foreground\n"
		"  --check-config       load config and map, check this node, print the verdict, exit\n"
		"  --map FILE           the cluster map (layoutctl topo build)\n"
		"  --socket PATTERN     unix socket path; %%n = node name\n"
		"  --tcp [HOST:]PORT    also listen on TCP (HOST defaults to 127.0.0.1; PORT 0 = any)\n"
		"  --node NAME          this node's name in the map (default $SLURMD_NODENAME, else hostname -s)\n"
		"  --pidfile FILE       write the pid there, remove it at exit\n"
		"  --log FILE           log there instead of stderr (reopened on SIGHUP)\n"
		"  --hwloc-check WHAT   compare this node with the map: live, no, or an hwloc XML\n"
		"\n"
		"Endpoints: GET /v1/health, GET /v1/topology, POST /v1/placement, GET /v1/steps,\n"
		"GET /v1/watch, POST /v1/watch/tasks, POST /v1/watch/exit, GET /v1/alerts,\n"
		"GET /metrics (Prometheus text format).\n"
		"With peer_listen: GET /v1/watch/step on a step's leader, and POST /v1/peer/summary\n"
		"and GET /v1/watch/step on the peer listener (munge credentials).\n"
		"SIGHUP reloads config and map (the old ones stay when the new ones fail);\n"
		"SIGTERM and SIGINT exit cleanly.\n",
		LD_DEFAULT_SOCKET, ld_default_conf(), ld_conf_keys());
}

enum { O_CHECK = 1000, O_MAP, O_SOCKET, O_TCP, O_NODE, O_PIDFILE, O_LOG, O_HWLOC };

static const struct option long_opts[] = {
	{ "foreground", no_argument, NULL, 'F' },
	{ "check-config", no_argument, NULL, O_CHECK },
	{ "map", required_argument, NULL, O_MAP },
	{ "socket", required_argument, NULL, O_SOCKET },
	{ "tcp", required_argument, NULL, O_TCP },
	{ "node", required_argument, NULL, O_NODE },
	{ "pidfile", required_argument, NULL, O_PIDFILE },
	{ "log", required_argument, NULL, O_LOG },
	{ "hwloc-check", required_argument, NULL, O_HWLOC },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/* Config key behind each overriding option. */
static const struct {
	int opt;
	const char *key, *name;
} opt_keys[] = {
	{ O_MAP, "map", "--map" },
	{ O_SOCKET, "socket", "--socket" },
	{ O_TCP, "tcp", "--tcp" },
	{ O_NODE, "node_name", "--node" },
	{ O_PIDFILE, "pidfile", "--pidfile" },
	{ O_LOG, "log", "--log" },
	{ O_HWLOC, "hwloc_check", "--hwloc-check" },
};

/* Returns -1 to go on, else the exit status. */
static int
parse_args(int argc, char **argv, struct ld_loader *d, struct ld_override *ov, bool *check)
{
	int c;
	size_t i;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "f:FhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			d->conf_path = optarg;
			d->conf_must_exist = true;
			break;
		case 'F':
			break;
		case O_CHECK:
			*check = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf(LD_PROG " " PL_BUILD "\n");
			return 0;
		default:
			for (i = 0; i < sizeof(opt_keys) / sizeof(opt_keys[0]); i++)
				if (opt_keys[i].opt == c)
					break;
			if (i == sizeof(opt_keys) / sizeof(opt_keys[0])) {
				fprintf(stderr, LD_PROG ": unknown or incomplete option '%s' (see '" LD_PROG " --help')\n",
					argv[optind - 1]);
				return 2;
			}
			if (d->nov >= LD_MAX_OVERRIDES) {
				fprintf(stderr, LD_PROG ": more than %d overriding options\n",
					LD_MAX_OVERRIDES);
				return 2;
			}
			ov[d->nov].key = opt_keys[i].key;
			ov[d->nov].opt = opt_keys[i].name;
			ov[d->nov].value = optarg;
			d->nov++;
			break;
		}
	}
	if (optind < argc) {
		fprintf(stderr, LD_PROG ": unexpected argument '%s' (see '" LD_PROG " --help')\n",
			argv[optind]);
		return 2;
	}
	return -1;
}

/* --check-config: everything start-up reads, without listening. */
static int
check_config(struct ld *d, pl_err_t *err)
{
	const struct ld_conf *c = &d->cur->conf;
	struct sockaddr_un sa;
	char path[LD_PATH];
	int i;

	if (client_socket_path(c->socket, c->node_name, path, sizeof(path)) < 0 ||
	    ld_unix_addr(path, &sa, err) < 0) {
		pl_err_set(err, "socket %s: cannot be expanded for node %s into a socket path",
			   c->socket, c->node_name);
		return 1;
	}
	if (c->socket_group[0] && !getgrnam(c->socket_group)) {
		pl_err_set(err, "socket_group %s: no such group", c->socket_group);
		return 1;
	}
	for (i = 0; i < d->cur->ndisc; i++)
		printf(LD_PROG ": warning: %s\n", d->cur->disc[i]);
	printf(LD_PROG ": configuration OK (map %s: %ld nodes)\n", d->cur->map->name,
	       d->cur->map->nnodes);
	return 0;
}

/* Descriptors besides connections: listeners, log, epoll, signals, a map
 * or config being read on reload, the hwloc child's pipe. */
#define LD_FD_RESERVE 32

/* Raise the soft descriptor limit to the hard one; warn when the
 * connection cap cannot fit under it. */
static void
check_fd_limit(struct ld *d)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t want = rl.rlim_max;

		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)d->cur->conf.max_connections + LD_FD_RESERVE > rl.rlim_cur)
		ld_log(&d->log, "warning: max_connections %ld does not fit under the descriptor limit %llu (%d kept for other files): accept() will fail first, and then the oldest idle connection is closed; raise LimitNOFILE or lower max_connections",
		       d->cur->conf.max_connections, (unsigned long long)rl.rlim_cur, LD_FD_RESERVE);
}

/* After each watch sample: the peers send this node's summaries and judge
 * the steps led here. */
static void
peer_tick(void *arg)
{
	ld_peer_tick(arg);
}

/* A judge round's findings: the culprits' stacks are asked for first, so
 * a capture starts before the alert goes out, then the alerts. */
static void
on_findings(struct ld *d, const struct ld_step_view *v, const struct judge_finding *f, size_t n,
	    uint64_t now_ns)
{
	ld_stacks_findings(d, v, f, n, now_ns);
	ld_alert_findings(d, v, f, n, now_ns);
}

int
main(int argc, char **argv)
{
	struct ld_override ov[LD_MAX_OVERRIDES];
	struct ld_listen ls;
	struct event *ev_hup = NULL, *ev_term = NULL, *ev_int = NULL;
	struct ld d;
	bool check = false, pid_written = false, served = false;
	char pidtext[32];
	pl_err_t err;
	int rv;

	memset(&d, 0, sizeof(d));
	memset(&ls, 0, sizeof(ls));
	pl_err_clear(&err);
	d.log.f = stderr;
	d.loader.ov = ov;
	rv = parse_args(argc, argv, &d.loader, ov, &check);
	if (rv >= 0)
		return rv;
	rv = 1;
	clock_gettime(CLOCK_MONOTONIC, &d.start);
	/* A client that hangs up mid-answer must not kill the daemon, nor an
	 * early reload request before the loop watches SIGHUP. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);

	d.cur = ld_load_build(&d.loader, &err);
	if (!d.cur)
		goto out;
	if (check) {
		rv = check_config(&d, &err);
		goto out;
	}
	d.log.f = ld_log_open(d.cur->conf.log, &err);
	if (!d.log.f)
		goto out;
	ld_log_libevent(&d.log);
	check_fd_limit(&d);

	d.steps = ld_steps_new();
	d.base = event_base_new();
	if (!d.steps || !d.base) {
		pl_err_set(&err, "libevent: cannot create an event base");
		goto out;
	}
	d.http = evhttp_new(d.base);
	if (!d.http) {
		pl_err_set(&err, "libevent: cannot create the HTTP server");
		goto out;
	}
	d.conns = ld_conns_new(d.base, d.http, &d.log);
	if (!d.conns) {
		pl_err_set(&err, "out of memory");
		goto out;
	}
	d.watch = ld_watch_new(&d);
	if (!d.watch) {
		pl_err_set(&err, "out of memory");
		goto out;
	}
	d.curl = ld_curl_new(d.base, &err);
	if (!d.curl)
		goto out;
	d.peers = ld_peer_new(&d);
	if (!d.peers) {
		pl_err_set(&err, "out of memory, or the munge worker thread cannot start");
		goto out;
	}
	d.alerts = ld_alert_new(&d);
	if (!d.alerts) {
		pl_err_set(&err, "out of memory");
		goto out;
	}
	d.stacks = ld_stacks_new(&d);
	if (!d.stacks) {
		pl_err_set(&err, "out of memory");
		goto out;
	}
	ld_peer_set_findings_cb(d.peers, on_findings);
	ld_watch_on_sample(d.watch, peer_tick, d.peers);
	ld_http_apply(&d);
	ld_http_setup(&d, d.http);
	if (ld_listen_unix(&d, &ls, &err) < 0 || ld_listen_tcp(&d, &ls, &err) < 0 ||
	    ld_peer_listen(d.peers, &err) < 0)
		goto out;

	if (d.cur->conf.pidfile[0]) {
		snprintf(pidtext, sizeof(pidtext), "%ld\n", (long)getpid());
		if (ld_write_small_file(d.cur->conf.pidfile, pidtext, &err) < 0)
			goto out;
		pid_written = true;
	}

	ev_hup = evsignal_new(d.base, SIGHUP, on_hup, &d);
	ev_term = evsignal_new(d.base, SIGTERM, on_term, &d);
	ev_int = evsignal_new(d.base, SIGINT, on_term, &d);
	if (!ev_hup || !ev_term || !ev_int || event_add(ev_hup, NULL) < 0 ||
	    event_add(ev_term, NULL) < 0 || event_add(ev_int, NULL) < 0) {
		pl_err_set(&err, "libevent: cannot watch signals");
		goto out;
	}

	ld_log_state(&d, LD_PROG " " PACKAGE_VERSION " started");
	served = true;
	if (event_base_dispatch(d.base) < 0) {
		pl_err_set(&err, "libevent: the event loop failed");
		goto out;
	}
	rv = 0;
out:
	if (err.text[0]) {
		/* Start-up failures go to stderr too: a supervisor shows it. */
		fprintf(stderr, LD_PROG ": %s\n", err.text);
		if (d.log.f && d.log.f != stderr)
			ld_log(&d.log, "%s", err.text);
	}
	if (pid_written)
		unlink(d.cur->conf.pidfile);
	ld_unlisten(&ls);
	if (ev_int)
		event_free(ev_int);
	if (ev_term)
		event_free(ev_term);
	if (ev_hup)
		event_free(ev_hup);
	ld_conns_shutdown(d.conns);
	if (d.http)
		evhttp_free(d.http);
	ld_conns_free(d.conns);
	/* Before the HTTP client: it cancels its deliveries there. */
	if (d.watch)
		ld_watch_on_sample(d.watch, NULL, NULL);
	ld_peer_free(d.peers);
	d.peers = NULL;
	/* The HTTP client first: no delivery callback runs after it. */
	ld_curl_free(d.curl);
	d.curl = NULL;
	ld_alert_free(d.alerts);
	ld_stacks_free(d.stacks);
	ld_watch_free(d.watch);
	if (d.base)
		event_base_free(d.base);
	ld_steps_free(d.steps);
	if (served)
		ld_log(&d.log, "stopped after %lu requests", d.requests);
	ld_log_libevent(NULL);
	ld_log_close(d.log.f);
	ld_load_free(d.cur);
	libevent_global_shutdown();
	return rv;
}
