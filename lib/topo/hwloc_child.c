/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "hwloc_child.h"

/*
 * Read an hwloc XML in a child process.  libhwloc can crash on a damaged
 * export (a mangled cpuset attribute is enough); the child dies instead of
 * layoutctl, and the node type comes back as map JSON through a pipe.
 */
#define UNNAMED "(unnamed)"

int
hwloc_read_isolated(struct topo_nodetype *t, const char *path, pl_err_t *why)
{
	struct buf b = BUF_INIT;
	int fds[2], status, rv = -1;
	pid_t pid;

	memset(t, 0, sizeof(*t));
	if (pipe(fds) < 0)
		return pl_err_set(why, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		pl_err_set(why, "fork: %s", strerror(errno));
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
		/* Everything goes back through the pipe; what libhwloc (or a
		 * sanitizer, when it crashes) would print is not the program's. */
		if (!freopen("/dev/null", "w", stderr))
			_exit(2);
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
		char chunk[16384];
		ssize_t r = read(fds[0], chunk, sizeof(chunk));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || buf_add(&b, chunk, (size_t)r) < 0)
			break;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status)) {
		pl_err_set(why, "hwloc crashed reading this file (signal %d): is it a complete, unmodified 'lstopo --of xml' export?",
			   WTERMSIG(status));
		goto out;
	}
	if (!b.bad && b.len == 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		pl_err_set(why, "the hwloc reader died (exit status %d): is it a complete, unmodified 'lstopo --of xml' export?",
			   WEXITSTATUS(status));
		goto out;
	}
	if (b.bad || b.len == 0) {
		pl_err_set(why, "reading it failed (out of memory?)");
		goto out;
	}
	if (b.s[0] == 'E') {
		pl_err_set(why, "%s", b.s + 1);
		goto out;
	} else {
		pl_err_t err;
		struct topo_map *m;

		pl_err_clear(&err);
		m = topo_from_json_text(b.s + 1, &err);
		if (!m || m->ntypes != 1 || topo_nodetype_copy(t, &m->types[0], &err) < 0) {
			pl_err_set(why, "%s", err.text[0] ? err.text : "bad reply from the reader");
			topo_free(m);
			goto out;
		}
		topo_free(m);
		if (strcmp(t->name, UNNAMED) == 0)
			t->name[0] = '\0';
	}
	rv = 0;
out:
	buf_free(&b);
	return rv;
}

