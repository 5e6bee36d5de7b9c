/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The watch's clocks, for every room of daemon/watch/: the monotonic
 * clock that times samples, summaries, alerts and drains, and the wall
 * clock that alerts and summaries report, both in nanoseconds.
 */
#ifndef PL_LAYOUTD_WATCH_CLOCK_H
#define PL_LAYOUTD_WATCH_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NS UINT64_C(1000000000)

static inline uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/*
 * A process's start time (clock ticks after boot, /proc/PID/stat field 22)
 * on the monotonic clock: the boot clock's ticks less what the boot clock
 * runs ahead of the monotonic one (the time suspended).  0 when not known.
 */
static inline uint64_t
start_mono_ns(uint64_t start_ticks, long ticks_per_s)
{
	struct timespec b, m;
	uint64_t boot, ahead;

	/* The monotonic clock first: the boot clock read after it is never
	 * behind it. */
	if (ticks_per_s <= 0 || clock_gettime(CLOCK_MONOTONIC, &m) < 0 ||
	    clock_gettime(CLOCK_BOOTTIME, &b) < 0)
		return 0;
	boot = start_ticks / (uint64_t)ticks_per_s * NS +
	       start_ticks % (uint64_t)ticks_per_s * NS / (uint64_t)ticks_per_s;
	ahead = (uint64_t)b.tv_sec * NS + (uint64_t)b.tv_nsec;
	ahead = ahead > (uint64_t)m.tv_sec * NS + (uint64_t)m.tv_nsec ?
		ahead - ((uint64_t)m.tv_sec * NS + (uint64_t)m.tv_nsec) : 0;
	return boot > ahead ? boot - ahead : 0;
}

#endif
