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

#endif
