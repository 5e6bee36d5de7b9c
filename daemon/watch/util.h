/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small things the peers (watch/peer.c) and the leader (watch/lead.c)
 * both use: the clocks, peer_lost_s, the error-and-status idiom.
 */
#ifndef PL_LAYOUTD_WATCH_UTIL_H
#define PL_LAYOUTD_WATCH_UTIL_H

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "layoutd.h"
#include "pl_err.h"
#include "summary.h"

#define NAXES SUM_NAXES
#define WHY_LEN 200

static inline double
age_s(uint64_t now, uint64_t t)
{
	return t && now > t ? (double)(now - t) / 1e9 : 0.0;
}

/* peer_lost_s, or auto: three watch intervals, at least 5 s. */
static inline uint64_t
lost_ns(const struct ld_conf *c)
{
	uint64_t ms = (uint64_t)c->watch_interval_ms * 3;

	if (c->peer_lost_s > 0)
		return (uint64_t)c->peer_lost_s * NS;
	return (ms < 5000 ? 5000 : ms) * UINT64_C(1000000);
}

/* Fill err and return the HTTP status. */
#define fail(err, status, ...) pl_err_status(err, status, __VA_ARGS__)

/* src into dst of n bytes, cut to fit (no printf on the per-summary path). */
static inline void
copy_str(char *dst, size_t n, const char *src)
{
	size_t len = strnlen(src, n - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

#endif
