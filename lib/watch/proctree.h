/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the OS shows of a rank's process tree, for telling a rank busy
 * outside NCCL (a checkpoint, a compile, data loading) from a hung one.
 * layoutd samples it as root each watch interval: the rank's own record is
 * the user's to write, this is not.
 *
 * The tree is the rank's process and, recursively, the children of each
 * process's main thread (/proc/PID/task/PID/children: the workers a
 * training script forks, data loaders and compile workers, come from its
 * main thread), at most PROCTREE_MAX processes.  Its CPU is utime + stime
 * of each process (all its threads) and the rank's cutime + cstime (its
 * children already reaped, so a compile's short-lived workers count); its
 * I/O is read_bytes + write_bytes of /proc/PID/io (storage, page cache
 * included: a checkpoint's writes count as they are made, a socket's do
 * not).
 */
#ifndef PL_WATCH_PROCTREE_H
#define PL_WATCH_PROCTREE_H

#include <stddef.h>
#include <stdint.h>

#include "detect.h"
#include "pl_err.h"

#define PROCTREE_MAX 64

/* The CPU of a tree that makes progress, at least: thousandths of a core
 * over the window (a process blocked in a futex or a sleep uses none). */
#define PROCTREE_CPU_FLOOR_MILLI 20
/* And its storage I/O, at least: bytes a second over the window.  A
 * checkpoint or a data loader moves megabytes a second; a hung rank's
 * logger writing a line (a page, 4 KiB, to the page cache) is none. */
#define PROCTREE_IO_FLOOR_BPS	262144

struct proctree_sample {
	char state;			/* the rank's main thread: R, S, D, ... */
	char wchan[DETECT_WCHAN_LEN];	/* where it sleeps in the kernel, "" */
	uint64_t cpu_ticks;		/* the tree's CPU, clock ticks */
	uint64_t io_bytes;		/* its read_bytes + write_bytes */
	uint64_t read_bytes, write_bytes;
	uint32_t nprocs, threads;
};

/*
 * Parse len bytes of a /proc/PID/io text ("rchar: N\n...read_bytes: N\n
 * write_bytes: N\n..."): 0 with *rd and *wr, or -1 with err saying which
 * line is missing or not a number.
 */
int proctree_io_parse(const char *text, size_t len, uint64_t *rd, uint64_t *wr, pl_err_t *err);

/*
 * Sample pid's tree now.  0, or -1 with err when the rank's own process
 * cannot be read (gone); a child that cannot be read is left out.
 */
int proctree_sample(long pid, struct proctree_sample *s, pl_err_t *err);

/*
 * The rank's detect_proc from the sample before (prev, dt_ns ago; NULL:
 * none yet) and this one, at now_ns (the clock of the rank's detect
 * times): the window's CPU and I/O rates, when the tree last made progress
 * (CPU at least PROCTREE_CPU_FLOOR_MILLI or I/O at least
 * PROCTREE_IO_FLOOR_BPS: now, else as it was),
 * since when its main thread is in D state.  ticks_per_s is
 * sysconf(_SC_CLK_TCK).  A counter that went back (a child gone with its
 * time not yet reaped) counts as no change.
 */
void proctree_update(struct detect_proc *p, const struct proctree_sample *prev,
		     const struct proctree_sample *cur, uint64_t dt_ns, uint64_t now_ns,
		     long ticks_per_s);

#endif
