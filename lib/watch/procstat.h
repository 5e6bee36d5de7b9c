/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A process's identity beyond its pid, from /proc/PID/stat: the start time
 * (field 22, clock ticks after boot) tells a pid that was reused by another
 * process from the process that was registered under it.
 *
 * The line is "PID (COMM) STATE PPID ... STARTTIME ...".  COMM is the
 * process's own name, up to 15 bytes it may set itself (prctl PR_SET_NAME,
 * /proc/self/comm) to anything but NUL: spaces, parentheses, newlines.  So
 * the fields are counted after the LAST ')' of the line, never split on
 * blanks from the start.
 */
#ifndef PL_WATCH_PROCSTAT_H
#define PL_WATCH_PROCSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "pl_err.h"

/* The command name kept; the kernel gives at most 15 bytes. */
#define PROCSTAT_COMM 64
/* The most of a stat line read; longer is not a stat line. */
#define PROCSTAT_MAX_LINE 4096

struct procstat {
	long pid;			/* field 1 */
	char comm[PROCSTAT_COMM];	/* field 2 without its parentheses, NUL-terminated */
	char state;			/* field 3 */
	long ppid;			/* field 4 */
	uint64_t utime, stime;		/* fields 14 and 15: clock ticks of CPU */
	uint64_t cutime, cstime;	/* 16 and 17: its reaped children's */
	uint64_t threads;		/* field 20 */
	uint64_t start;			/* field 22: clock ticks after boot */
};

/*
 * Parse len bytes of a /proc/PID/stat text (they need not end in NUL).
 * Returns 0, or -1 with err saying what is wrong (no pid, no '(' or ')'
 * around the name, fewer than 22 fields, a start time that is not a
 * number).
 */
int procstat_parse(const char *text, size_t len, struct procstat *ps, pl_err_t *err);

/*
 * Read and parse /proc/PID/stat; the pid in the line must be pid.
 * Returns 0, or -1 with err naming the file (a process that is gone gives
 * "No such file or directory").
 */
int procstat_read(long pid, struct procstat *ps, pl_err_t *err);

/* What a pid registered with a start time is now. */
enum procstat_same {
	PROCSTAT_SAME,		/* the registered process */
	PROCSTAT_REUSED,	/* another process holds the pid */
	PROCSTAT_UNREADABLE,	/* no stat line for the pid (gone, or unreadable) */
};

/*
 * Judge a pid registered with start time `start` against len bytes of its
 * stat text now (text NULL: it could not be read).  A line that does not
 * parse, or is another pid's, is UNREADABLE; a different start time is
 * REUSED, with *now (when not NULL) the start time found.  Start times
 * count clock ticks (10 ms on most systems), so a pid reused within the
 * tick its first holder started in is not told apart.
 */
enum procstat_same procstat_compare(long pid, uint64_t start, const char *text, size_t len,
				    uint64_t *now);

/*
 * procstat_compare() on /proc/PID/stat as it is now.  UNREADABLE and
 * REUSED fill err with why (the file's error, or both start times).
 */
enum procstat_same procstat_same_process(long pid, uint64_t start, pl_err_t *err);

#endif
