/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwloc_child.h"

/*
 * Read an hwloc XML in a child process.  libhwloc can crash on a damaged
 * export (a mangled cpuset attribute is enough); the child dies instead of
 * layoutctl, and the node type comes back as map JSON through a pipe.
 */
#define UNNAMED "(unnamed)"

int
hwloc_read_isolated(struct topo_nodetype *t, const char *path, char *why, size_t whylen)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fds[2], status, rv = -1;
	pid_t pid;

	if (pipe(fds) < 0) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		struct topo_nodetype ct;
		struct topo_map *m = topo_new();
		pl_err_t err;
		char *text = NULL;
		const char *msg;
		size_t off, n;

		close(fds[0]);
		pl_err_clear(&err);
		memset(&ct, 0, sizeof(ct));
		/* A map type needs a name; UNNAMED travels for "none". */
		if (m && topo_read_hwloc(&ct, path, &err) == 0 && !ct.name[0])
			snprintf(ct.name, sizeof(ct.name), UNNAMED);
		if (!m || err.text[0] || topo_add_type(m, &ct, &err) < 0 ||
		    !(text = topo_to_json_text(m))) {
			msg = err.text[0] ? err.text : "out of memory";
			if (write(fds[1], "E", 1) != 1 || write(fds[1], msg, strlen(msg)) < 0)
				_exit(2);
			_exit(1);
		}
		if (write(fds[1], "J", 1) != 1)
			_exit(2);
		for (off = 0, n = strlen(text); off < n;) {
			ssize_t w = write(fds[1], text + off, n - off);

			if (w <= 0)
				_exit(2);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(fds[1]);
	for (;;) {
		ssize_t r;

		if (len + 4096 + 1 > cap) {
			char *p = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!p)
				break;
			buf = p;
		}
		r = read(fds[0], buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status)) {
		snprintf(why, whylen, "hwloc crashed reading this file (signal %d): is it a complete, unmodified 'lstopo --of xml' export?",
			 WTERMSIG(status));
		goto out;
	}
	if (!buf || len == 0) {
		snprintf(why, whylen, "reading it failed (out of memory?)");
		goto out;
	}
	buf[len] = '\0';
	if (buf[0] == 'E') {
		snprintf(why, whylen, "%s", buf + 1);
		goto out;
	} else {
		pl_err_t err;
		struct topo_map *m;

		pl_err_clear(&err);
		m = topo_from_json_text(buf + 1, &err);
		if (!m || m->ntypes != 1 || topo_nodetype_copy(t, &m->types[0], &err) < 0) {
			snprintf(why, whylen, "%s", err.text[0] ? err.text : "bad reply from the reader");
			topo_free(m);
			goto out;
		}
		topo_free(m);
		if (strcmp(t->name, UNNAMED) == 0)
			t->name[0] = '\0';
	}
	rv = 0;
out:
	free(buf);
	return rv;
}

