/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd: serves placements computed from the cluster map to the SPANK
 * plugin (and layoutctl) over a unix socket, one per node.  Shaped like
 * libevent's sample/http-server.c: main builds config, base, http,
 * listeners and signals, dispatches, then frees in reverse under one label.
 *
 * It never forks into the background: systemd (Type=simple) or a shell
 * supervises it, and a daemon that stays in the foreground cannot lose its
 * log or its pid file in a double fork.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <netinet/in.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/util.h>
#include <jansson.h>

#include "client.h"
#include "hwloc_child.h"
#include "layoutd.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define LD_DEFAULT_CONF SYSCONFDIR "/parallel-layout/layoutd.conf"
#define LD_MAX_OVERRIDES 32

/* ---- logging ---- */

double
ld_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void
ld_log(struct ld *d, const char *fmt, ...)
{
	FILE *f = d && d->log ? d->log : stderr;
	va_list ap;

	/* journald stamps stderr itself; a log file needs its own time. */
	if (f != stderr) {
		char stamp[32];
		time_t now = time(NULL);
		struct tm tm;

		if (localtime_r(&now, &tm) && strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S%z", &tm))
			fprintf(f, "%s ", stamp);
	}
	fprintf(f, LD_PROG "[%ld]: ", (long)getpid());
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
}

static FILE *
open_log(const char *path, pl_err_t *err)
{
	FILE *f;

	if (!path[0])
		return stderr;
	f = fopen(path, "a");
	if (!f) {
		pl_err_set(err, "log %s: %s", path, strerror(errno));
		return NULL;
	}
	return f;
}

static void
close_log(FILE *f)
{
	if (f && f != stderr)
		fclose(f);
}

/* ---- the node check: this node through hwloc against its map entry ---- */

static void add_disc(struct ld_load *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
add_disc(struct ld_load *l, const char *fmt, ...)
{
	va_list ap;

	if (l->ndisc >= LD_MAX_DISCREPANCIES)
		return;
	va_start(ap, fmt);
	vsnprintf(l->disc[l->ndisc++], LD_DISCREPANCY_LEN, fmt, ap);
	va_end(ap);
}

static int
count_islands(const struct topo_nodetype *t)
{
	int i, j, n = 0;

	for (i = 0; i < t->ngpus; i++) {
		if (t->gpus[i].island < 0)
			continue;
		for (j = 0; j < i; j++)
			if (t->gpus[j].island == t->gpus[i].island)
				break;
		n += j == i;
	}
	return n;
}

/* Names of a's NICs that b lacks, comma-separated into buf. */
static void
nics_missing(const struct topo_nodetype *a, const struct topo_nodetype *b, char *buf,
	     size_t size)
{
	size_t o = 0;
	int i, j;

	buf[0] = '\0';
	for (i = 0; i < a->nnics; i++) {
		for (j = 0; j < b->nnics; j++)
			if (strcmp(a->nics[i].name, b->nics[j].name) == 0)
				break;
		if (j < b->nnics || o + strlen(a->nics[i].name) + 2 >= size)
			continue;
		o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? "," : "", a->nics[i].name);
	}
}

static void
compare_types(struct ld_load *l, const struct topo_nodetype *mt, const struct topo_nodetype *ht,
	      const char *src)
{
	int mi = count_islands(mt), hi = count_islands(ht);
	char miss[128], extra[128];

	if (mt->ngpus != ht->ngpus)
		add_disc(l, "GPUs: the map gives node %s (type %s) %d GPUs, %s finds %d%s",
			 l->conf.node_name, mt->name, mt->ngpus, src, ht->ngpus,
			 ht->ngpus < mt->ngpus ? " (a GPU is missing: fallen off the bus or driver not loaded?)" : "");
	else if (mi != hi)
		add_disc(l, "NVLink: the map gives node %s (type %s) %d NVLink islands, %s finds %d",
			 l->conf.node_name, mt->name, mi, src, hi);
	if (mt->nnics > 0 && ht->nnics > 0) {
		nics_missing(mt, ht, miss, sizeof(miss));
		nics_missing(ht, mt, extra, sizeof(extra));
		if (miss[0] || extra[0])
			add_disc(l, "NICs: node %s (type %s): %s%s%s%s%s (map %d, %s %d)",
				 l->conf.node_name, mt->name, miss[0] ? "missing here: " : "", miss,
				 miss[0] && extra[0] ? "; " : "", extra[0] ? "not in the map: " : "",
				 extra, mt->nnics, src, ht->nnics);
	}
}

static void
check_node(struct ld_load *l)
{
	const struct ld_conf *c = &l->conf;
	long i = topo_find_node(l->map, c->node_name);
	const struct topo_nodetype *mt = i >= 0 ? topo_node_type(l->map, i) : NULL;
	bool live = strcmp(c->hwloc_check, "live") == 0;
	struct topo_nodetype ht;
	char src[LD_PATH + 16];
	pl_err_t err;

	if (i < 0)
		add_disc(l, "node %s is not in the map %s (%ld nodes): placements that name it are refused",
			 c->node_name, l->map->name, l->map->nnodes);
	else if (!mt)
		add_disc(l, "node %s has no node type in the map %s", c->node_name, l->map->name);
	if (strcmp(c->hwloc_check, "no") == 0)
		return;
	snprintf(src, sizeof(src), "hwloc %s", live ? "(live)" : c->hwloc_check);
	memset(&ht, 0, sizeof(ht));
	pl_err_clear(&err);
	if (live ? topo_read_hwloc(&ht, NULL, &err) < 0 :
	    hwloc_read_isolated(&ht, c->hwloc_check, &err) < 0) {
		add_disc(l, "hwloc_check: %s", err.text);
		return;
	}
	if (mt)
		compare_types(l, mt, &ht, src);
	topo_nodetype_clear(&ht);
}

/* ---- loading config and map ---- */

static void
load_free(struct ld_load *l)
{
	if (!l)
		return;
	topo_free(l->map);
	free(l->map_json);
	free(l);
}

/* Config file, then the command line over it, then the map and the check. */
static struct ld_load *
load_build(const struct ld *d, pl_err_t *err)
{
	const char *path = d->conf_path ? d->conf_path : LD_DEFAULT_CONF;
	struct ld_load *l = calloc(1, sizeof(*l));
	pl_err_t merr;
	int i;

	if (!l) {
		pl_err_set(err, "out of memory");
		return NULL;
	}
	ld_conf_defaults(&l->conf);
	if (ld_conf_read(&l->conf, path, d->conf_must_exist, err) < 0)
		goto fail;
	for (i = 0; i < d->nov; i++) {
		pl_err_t verr;

		pl_err_clear(&verr);
		if (ld_conf_set(&l->conf, d->ov[i].key, d->ov[i].value, &verr) < 0) {
			pl_err_set(err, "%s %.200s: %s", d->ov[i].opt, d->ov[i].value, verr.text);
			goto fail;
		}
	}
	if (ld_conf_finish(&l->conf, err) < 0)
		goto fail;
	pl_err_clear(&merr);
	l->map = topo_load(l->conf.map, &merr);
	if (!l->map) {
		pl_err_set(err, "map %s", merr.text);
		goto fail;
	}
	l->map_json = topo_to_json_text(l->map);
	if (!l->map_json) {
		pl_err_set(err, "%s: out of memory", l->conf.map);
		goto fail;
	}
	check_node(l);
	return l;
fail:
	load_free(l);
	return NULL;
}

static void
log_state(struct ld *d, const char *what)
{
	const struct ld_load *l = d->cur;
	int i;

	ld_log(d, "%s: node %s, map %s (%ld nodes) from %s, hwloc_check %s: %s", what,
	       l->conf.node_name, l->map->name, l->map->nnodes, l->conf.map, l->conf.hwloc_check,
	       l->ndisc ? "degraded" : "ok");
	for (i = 0; i < l->ndisc; i++)
		ld_log(d, "discrepancy: %s", l->disc[i]);
}

/* ---- listeners ---- */

/* mkdir -p of path's parent directory. */
static int
make_parent(const char *path, pl_err_t *err)
{
	char dir[LD_PATH], *p, save;

	snprintf(dir, sizeof(dir), "%s", path);
	p = strrchr(dir, '/');
	if (!p || p == dir)
		return 0;
	*p = '\0';
	for (p = dir + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		save = *p;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return pl_err_set(err, "socket directory %s: %s", dir, strerror(errno));
		*p = save;
		if (!save)
			break;
	}
	return 0;
}

static int
unix_addr(const char *path, struct sockaddr_un *sa, pl_err_t *err)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return pl_err_set(err, "socket %s: path longer than %zu bytes", path,
				  sizeof(sa->sun_path) - 1);
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/*
 * What answers on an existing socket: nothing (stale: remove it), or a
 * server (refuse to start, naming it when it is a layoutd).
 */
static int
clear_stale(struct ld *d, const char *path, pl_err_t *err)
{
	struct sockaddr_un sa;
	struct client_reply reply;
	struct stat st;
	pl_err_t cerr;
	int fd, rc, e;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : pl_err_set(err, "socket %s: %s", path, strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return pl_err_set(err, "socket %s exists and is not a socket: remove it or choose another 'socket'",
				  path);
	if (unix_addr(path, &sa, err) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return pl_err_set(err, "socket: %s", strerror(errno));
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	e = errno;
	close(fd);
	if (rc < 0 && (e == ECONNREFUSED || e == ENOENT)) {
		if (unlink(path) < 0 && errno != ENOENT)
			return pl_err_set(err, "stale socket %s: %s", path, strerror(errno));
		ld_log(d, "removed stale socket %s (nothing answered on it)", path);
		return 0;
	}
	if (rc < 0)
		return pl_err_set(err, "socket %s: %s", path, strerror(e));
	pl_err_clear(&cerr);
	if (client_request(path, "GET", "/v1/health", NULL, 2000, &reply, &cerr) == 0) {
		json_t *h = reply.body ? json_loads(reply.body, 0, NULL) : NULL;
		const char *node = json_string_value(json_object_get(h, "node"));

		if (node)
			pl_err_set(err, "socket %s: another layoutd (node %.64s) is serving it: stop it or choose another --socket",
				   path, node);
		else
			pl_err_set(err, "socket %s: another HTTP server answers on it: stop it or choose another --socket",
				   path);
		json_decref(h);
		free(reply.body);
		return -1;
	}
	return pl_err_set(err, "socket %s: something is listening on it (%s): stop it or choose another --socket",
			  path, cerr.text);
}

struct listen_state {
	char path[LD_PATH];	/* "" until bound */
	dev_t dev;
	ino_t ino;
	char port_file[LD_PATH];	/* "" until written */
};

static int
listen_unix(struct ld *d, struct listen_state *ls, pl_err_t *err)
{
	const struct ld_conf *c = &d->cur->conf;
	struct sockaddr_un sa;
	char path[LD_PATH];
	struct stat st;
	mode_t old;
	int fd = -1, rc, rv = -1;

	if (client_socket_path(c->socket, c->node_name, path, sizeof(path)) < 0)
		return pl_err_set(err, "socket %s: cannot expand it for node %s", c->socket,
				  c->node_name);
	if (unix_addr(path, &sa, err) < 0 || make_parent(path, err) < 0 ||
	    clear_stale(d, path, err) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0) {
		pl_err_set(err, "socket: %s", strerror(errno));
		goto out;
	}
	/* Never wider than configured, not even between bind and chmod. */
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0) {
		pl_err_set(err, "socket %s: bind: %s", path, strerror(errno));
		goto out;
	}
	snprintf(ls->path, sizeof(ls->path), "%s", path);
	if (stat(path, &st) == 0) {
		ls->dev = st.st_dev;
		ls->ino = st.st_ino;
	}
	if (c->socket_group[0]) {
		struct group *g = getgrnam(c->socket_group);

		if (!g) {
			pl_err_set(err, "socket_group %s: no such group", c->socket_group);
			goto out;
		}
		if (chown(path, (uid_t)-1, g->gr_gid) < 0) {
			pl_err_set(err, "socket %s: chown to group %s: %s", path, c->socket_group,
				   strerror(errno));
			goto out;
		}
	}
	if (chmod(path, (mode_t)c->socket_mode) < 0) {
		pl_err_set(err, "socket %s: chmod %04o: %s", path, c->socket_mode, strerror(errno));
		goto out;
	}
	if (listen(fd, 128) < 0 || evutil_make_socket_nonblocking(fd) < 0 ||
	    evutil_make_socket_closeonexec(fd) < 0) {
		pl_err_set(err, "socket %s: listen: %s", path, strerror(errno));
		goto out;
	}
	if (!evhttp_accept_socket_with_handle(d->http, fd)) {
		pl_err_set(err, "socket %s: libevent cannot accept on it", path);
		goto out;
	}
	fd = -1;	/* the listener owns it now */
	ld_log(d, "listening on %s (mode %04o%s%s)", path, c->socket_mode,
	       c->socket_group[0] ? ", group " : "", c->socket_group);
	rv = 0;
out:
	if (fd >= 0)
		close(fd);
	return rv;
}

/* Write the file whole or not at all: a reader polling it sees a port. */
static int
write_small_file(const char *path, const char *text, pl_err_t *err)
{
	char tmp[LD_PATH + 8];
	FILE *f;
	int rv = -1;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return pl_err_set(err, "%s: path too long", path);
	f = fopen(tmp, "w");
	if (!f)
		return pl_err_set(err, "%s: %s", tmp, strerror(errno));
	if (fputs(text, f) < 0)
		pl_err_set(err, "%s: %s", tmp, strerror(errno));
	else
		rv = 0;
	if (fclose(f) != 0 && rv == 0)
		rv = pl_err_set(err, "%s: %s", tmp, strerror(errno));
	if (rv == 0 && rename(tmp, path) < 0)
		rv = pl_err_set(err, "%s: %s", path, strerror(errno));
	if (rv < 0)
		unlink(tmp);
	return rv;
}

static int
listen_tcp(struct ld *d, struct listen_state *ls, pl_err_t *err)
{
	const struct ld_conf *c = &d->cur->conf;
	struct evhttp_bound_socket *bs;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char text[32];
	int port = c->tcp_port;

	if (!c->tcp_host[0])
		return 0;
	bs = evhttp_bind_socket_with_handle(d->http, c->tcp_host, (ev_uint16_t)c->tcp_port);
	if (!bs)
		return pl_err_set(err, "tcp %s:%d: cannot listen there (%s)", c->tcp_host,
				  c->tcp_port, strerror(errno));
	if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	ld_log(d, "listening on http://%s%s%s:%d", strchr(c->tcp_host, ':') ? "[" : "",
	       c->tcp_host, strchr(c->tcp_host, ':') ? "]" : "", port);
	if (c->port_file[0]) {
		snprintf(text, sizeof(text), "%d\n", port);
		if (write_small_file(c->port_file, text, err) < 0)
			return -1;
		snprintf(ls->port_file, sizeof(ls->port_file), "%s", c->port_file);
	}
	return 0;
}

/* Remove the socket only while it is still the one we bound. */
static void
unlisten(struct listen_state *ls)
{
	struct stat st;

	if (ls->path[0] && stat(ls->path, &st) == 0 && st.st_dev == ls->dev &&
	    st.st_ino == ls->ino)
		unlink(ls->path);
	if (ls->port_file[0])
		unlink(ls->port_file);
}

static void
apply_http(struct ld *d)
{
	struct timeval tv;

	tv.tv_sec = d->cur->conf.request_timeout_ms / 1000;
	tv.tv_usec = (d->cur->conf.request_timeout_ms % 1000) * 1000;
	evhttp_set_timeout_tv(d->http, &tv);
	evhttp_set_max_body_size(d->http, (ev_ssize_t)d->cur->conf.max_body);
}

/* ---- signals ---- */

/* Settings that belong to the listeners and the process: fixed at start. */
static void
note_fixed(struct ld *d, const struct ld_conf *o, const struct ld_conf *n)
{
	char op[LD_PATH], np[LD_PATH];

	if (client_socket_path(o->socket, o->node_name, op, sizeof(op)) == 0 &&
	    client_socket_path(n->socket, n->node_name, np, sizeof(np)) == 0 && strcmp(op, np))
		ld_log(d, "reload: socket %s -> %s is not applied: still listening on %s until restarted",
		       op, np, op);
	if (o->socket_mode != n->socket_mode || strcmp(o->socket_group, n->socket_group))
		ld_log(d, "reload: socket_mode/socket_group changes apply at the next start");
	if (strcmp(o->tcp_host, n->tcp_host) || o->tcp_port != n->tcp_port ||
	    strcmp(o->port_file, n->port_file))
		ld_log(d, "reload: tcp/port_file changes apply at the next start");
	if (strcmp(o->pidfile, n->pidfile))
		ld_log(d, "reload: pidfile change applies at the next start");
}

/*
 * SIGHUP: a libevent signal event, so this runs between requests and none
 * is dropped.  The new config and map replace the old ones only when both
 * load; the log file is reopened (log rotation).
 */
static void
on_hup(evutil_socket_t sig, short what, void *arg)
{
	struct ld *d = arg;
	struct ld_load *n, *old;
	pl_err_t err;
	FILE *f;

	pl_err_clear(&err);
	n = load_build(d, &err);
	if (!n) {
		d->reload_failures++;
		ld_log(d, "reload failed, still serving map %s from %s: %s", d->cur->map->name,
		       d->cur->conf.map, err.text);
		return;
	}
	note_fixed(d, &d->cur->conf, &n->conf);
	/* The listeners and the pid file stay: keep the settings they use. */
	memcpy(n->conf.socket, d->cur->conf.socket, sizeof(n->conf.socket));
	n->conf.socket_mode = d->cur->conf.socket_mode;
	memcpy(n->conf.socket_group, d->cur->conf.socket_group, sizeof(n->conf.socket_group));
	memcpy(n->conf.tcp_host, d->cur->conf.tcp_host, sizeof(n->conf.tcp_host));
	n->conf.tcp_port = d->cur->conf.tcp_port;
	memcpy(n->conf.port_file, d->cur->conf.port_file, sizeof(n->conf.port_file));
	memcpy(n->conf.pidfile, d->cur->conf.pidfile, sizeof(n->conf.pidfile));
	f = open_log(n->conf.log, &err);
	if (f) {
		close_log(d->log);
		d->log = f;
	} else {
		ld_log(d, "reload: %s; logging stays where it was", err.text);
	}
	old = d->cur;
	d->cur = n;
	load_free(old);
	apply_http(d);
	d->reloads++;
	log_state(d, "reloaded");
}

static void
on_term(evutil_socket_t sig, short what, void *arg)
{
	struct ld *d = arg;

	ld_log(d, "signal %d: exiting", (int)sig);
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
		LD_DEFAULT_CONF ", read when present; -f makes it required).\n"
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
		"Endpoints: GET /v1/health, GET /v1/topology, POST /v1/placement, GET /v1/steps.\n"
		"SIGHUP reloads config and map (the old ones stay when the new ones fail);\n"
		"SIGTERM and SIGINT exit cleanly.\n",
		LD_DEFAULT_SOCKET, ld_conf_keys());
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
parse_args(int argc, char **argv, struct ld *d, struct ld_override *ov, bool *check)
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
			printf(LD_PROG " " PACKAGE_VERSION "\n");
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
	    unix_addr(path, &sa, err) < 0) {
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

int
main(int argc, char **argv)
{
	struct ld_override ov[LD_MAX_OVERRIDES];
	struct listen_state ls;
	struct event *ev_hup = NULL, *ev_term = NULL, *ev_int = NULL;
	struct ld d;
	bool check = false, pid_written = false, served = false;
	char pidtext[32];
	pl_err_t err;
	int rv;

	memset(&d, 0, sizeof(d));
	memset(&ls, 0, sizeof(ls));
	pl_err_clear(&err);
	d.log = stderr;
	d.ov = ov;
	rv = parse_args(argc, argv, &d, ov, &check);
	if (rv >= 0)
		return rv;
	rv = 1;
	clock_gettime(CLOCK_MONOTONIC, &d.start);
	/* A client that hangs up mid-answer must not kill the daemon, nor an
	 * early reload request before the loop watches SIGHUP. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);

	d.cur = load_build(&d, &err);
	if (!d.cur)
		goto out;
	if (check) {
		rv = check_config(&d, &err);
		goto out;
	}
	d.log = open_log(d.cur->conf.log, &err);
	if (!d.log)
		goto out;

	d.base = event_base_new();
	if (!d.base) {
		pl_err_set(&err, "libevent: cannot create an event base");
		goto out;
	}
	d.http = evhttp_new(d.base);
	if (!d.http) {
		pl_err_set(&err, "libevent: cannot create the HTTP server");
		goto out;
	}
	apply_http(&d);
	ld_http_setup(&d, d.http);
	if (listen_unix(&d, &ls, &err) < 0 || listen_tcp(&d, &ls, &err) < 0)
		goto out;

	if (d.cur->conf.pidfile[0]) {
		snprintf(pidtext, sizeof(pidtext), "%ld\n", (long)getpid());
		if (write_small_file(d.cur->conf.pidfile, pidtext, &err) < 0)
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

	log_state(&d, LD_PROG " " PACKAGE_VERSION " started");
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
		if (d.log && d.log != stderr)
			ld_log(&d, "%s", err.text);
	}
	if (pid_written)
		unlink(d.cur->conf.pidfile);
	unlisten(&ls);
	if (ev_int)
		event_free(ev_int);
	if (ev_term)
		event_free(ev_term);
	if (ev_hup)
		event_free(ev_hup);
	if (d.http)
		evhttp_free(d.http);
	if (d.base)
		event_base_free(d.base);
	ld_steps_free(&d);
	if (served)
		ld_log(&d, "stopped after %lu requests", d.requests);
	close_log(d.log);
	load_free(d.cur);
	libevent_global_shutdown();
	return rv;
}
