/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd's listeners: the unix socket (created under a tight umask, a
 * stale one replaced, a served one refused, removed at exit only while it
 * is still ours) and the optional TCP listener with its port file.  Both
 * are handed to the connection table (layoutd_conn.c), which pauses them
 * at the cap and on accept() failures.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <netinet/in.h>

#include <event2/http.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <jansson.h>

#include "client.h"
#include "layoutd.h"
#include "layoutd_conn.h"

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

int
ld_unix_addr(const char *path, struct sockaddr_un *sa, pl_err_t *err)
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
	if (ld_unix_addr(path, &sa, err) < 0)
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
		ld_log(&d->log, "removed stale socket %s (nothing answered on it)", path);
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

int
ld_listen_unix(struct ld *d, struct ld_listen *ls, pl_err_t *err)
{
	const struct ld_conf *c = &d->cur->conf;
	struct evhttp_bound_socket *bs;
	struct sockaddr_un sa;
	char path[LD_PATH];
	struct stat st;
	mode_t old;
	int fd = -1, rc, rv = -1;

	if (client_socket_path(c->socket, c->node_name, path, sizeof(path)) < 0)
		return pl_err_set(err, "socket %s: cannot expand it for node %s", c->socket,
				  c->node_name);
	if (ld_unix_addr(path, &sa, err) < 0 || make_parent(path, err) < 0 ||
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
	bs = evhttp_accept_socket_with_handle(d->http, fd);
	if (!bs) {
		pl_err_set(err, "socket %s: libevent cannot accept on it", path);
		goto out;
	}
	fd = -1;	/* the listener owns it now */
	if (ld_conns_watch(d->conns, evhttp_bound_socket_get_listener(bs)) < 0) {
		pl_err_set(err, "socket %s: cannot watch its listener", path);
		goto out;
	}
	ld_log(&d->log, "listening on %s (mode %04o%s%s)", path, c->socket_mode,
	       c->socket_group[0] ? ", group " : "", c->socket_group);
	rv = 0;
out:
	if (fd >= 0)
		close(fd);
	return rv;
}

/* Write the file whole or not at all: a reader polling it sees a port. */
int
ld_write_small_file(const char *path, const char *text, pl_err_t *err)
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

int
ld_listen_tcp(struct ld *d, struct ld_listen *ls, pl_err_t *err)
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
	if (ld_conns_watch(d->conns, evhttp_bound_socket_get_listener(bs)) < 0)
		return pl_err_set(err, "tcp %s:%d: cannot watch its listener", c->tcp_host,
				  c->tcp_port);
	if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	ld_log(&d->log, "listening on http://%s%s%s:%d", strchr(c->tcp_host, ':') ? "[" : "",
	       c->tcp_host, strchr(c->tcp_host, ':') ? "]" : "", port);
	if (c->port_file[0]) {
		snprintf(text, sizeof(text), "%d\n", port);
		if (ld_write_small_file(c->port_file, text, err) < 0)
			return -1;
		snprintf(ls->port_file, sizeof(ls->port_file), "%s", c->port_file);
	}
	return 0;
}

/* Remove the socket only while it is still the one we bound. */
void
ld_unlisten(struct ld_listen *ls)
{
	struct stat st;

	if (ls->path[0] && stat(ls->path, &st) == 0 && st.st_dev == ls->dev &&
	    st.st_ino == ls->ino)
		unlink(ls->path);
	if (ls->port_file[0])
		unlink(ls->port_file);
}
