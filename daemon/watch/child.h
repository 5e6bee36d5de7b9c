/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A child program whose output comes back through a pipe, for the rooms
 * that run one without waiting for it (watch/drain.c: scontrol,
 * watch/stacks.c: eu-stack or gdb).  The caller watches the pipe and reaps
 * the child with WNOHANG on its own timer: no signal handler is involved.
 */
#ifndef PL_LAYOUTD_CHILD_H
#define PL_LAYOUTD_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Start path with argv (argv[0] included), its standard input /dev/null,
 * its standard output and error one pipe, every other descriptor closed,
 * SIGPIPE and SIGHUP at their defaults; in a process group of its own when
 * own_group (kill(-pid, ...) then ends what it started too).  Returns the
 * pid with *fd the pipe's reading end (non-blocking, close-on-exec), or -1
 * with errno.  A program that cannot be run exits 127.
 */
pid_t ld_child_start(const char *path, char *const argv[], bool own_group, int *fd);

#endif
