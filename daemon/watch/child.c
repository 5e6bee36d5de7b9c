/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A child program with its output on a pipe (watch/child.h).
 */
#define _GNU_SOURCE		/* syscall(): close_range in the child */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"

/* The child: the program with the pipe as its output, nothing else open. */
static void __attribute__((noreturn))
child_exec(const char *path, char *const argv[], bool own_group, int out, int devnull)
{
	long fd, max = sysconf(_SC_OPEN_MAX);
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (own_group && setpgid(0, 0) < 0)
		_exit(126);
	if (dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
		_exit(126);
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
#endif
		for (fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
			close((int)fd);
	execv(path, argv);
	_exit(127);
}

pid_t
ld_child_start(const char *path, char *const argv[], bool own_group, int *fd)
{
	int p[2] = { -1, -1 }, devnull, e;
	pid_t pid;

	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0)
		return -1;
	if (pipe(p) < 0) {
		e = errno;
		close(devnull);
		errno = e;
		return -1;
	}
	pid = fork();
	if (pid == 0)
		child_exec(path, argv, own_group, p[1], devnull);
	e = errno;
	close(p[1]);
	close(devnull);
	if (pid < 0) {
		close(p[0]);
		errno = e;
		return -1;
	}
	/* the parent too, so kill(-pid) finds the group at once */
	if (own_group)
		setpgid(pid, pid);
	fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	*fd = p[0];
	return pid;
}
