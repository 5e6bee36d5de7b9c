/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "watchopt.h"

void
watchopt_clear(struct watchopt *o)
{
	memset(o, 0, sizeof(*o));
	o->slow = -1;
}

bool
watchopt_any(const struct watchopt *o)
{
	return o->hang_s || o->busy_s || o->slow >= 0;
}

/* A duration of n bytes at p: seconds, or with s, m, h or d after it. */
static int
duration(const char *p, size_t n, uint32_t *out)
{
	uint64_t v = 0, unit = 1;
	size_t i;

	if (n && (p[n - 1] == 's' || p[n - 1] == 'm' || p[n - 1] == 'h' || p[n - 1] == 'd')) {
		unit = p[n - 1] == 's' ? 1 : p[n - 1] == 'm' ? 60 : p[n - 1] == 'h' ? 3600 : 86400;
		n--;
	}
	if (!n || n > 9)
		return -1;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	v *= unit;
	if (v < 1 || v > WATCHOPT_MAX_S)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int
watchopt_parse(const char *s, struct watchopt *o, pl_err_t *err)
{
	char cl[PL_CLIP_BUF], cl2[PL_CLIP_BUF];
	const char *p = s;

	watchopt_clear(o);
	if (strcmp(s, "yes") == 0)
		return 0;
	if (strcmp(s, "no") == 0) {
		o->off = true;
		return 0;
	}
	if (!*s)
		return pl_err_set(err, "--parallel-layout-watch: empty: want yes, no or "
				  "hang=DURATION,busy=DURATION,slow=on|off");
	while (*p) {
		const char *end = strchr(p, ','), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p), k;

		eq = memchr(p, '=', len);
		k = eq ? (size_t)(eq - p) : len;
		if (!eq)
			return pl_err_set(err, "--parallel-layout-watch=%s: '%s' has no value: want "
					  "yes, no or hang=DURATION,busy=DURATION,slow=on|off",
					  pl_clip(s, cl, sizeof(cl)), pl_clipn(p, len, cl2, sizeof(cl2)));
		if (k == 4 && memcmp(p, "hang", 4) == 0) {
			if (duration(eq + 1, len - k - 1, &o->hang_s) < 0)
				goto bad_duration;
		} else if (k == 4 && memcmp(p, "busy", 4) == 0) {
			if (duration(eq + 1, len - k - 1, &o->busy_s) < 0)
				goto bad_duration;
		} else if (k == 4 && memcmp(p, "slow", 4) == 0) {
			if (len - k - 1 == 2 && memcmp(eq + 1, "on", 2) == 0)
				o->slow = 1;
			else if (len - k - 1 == 3 && memcmp(eq + 1, "off", 3) == 0)
				o->slow = 0;
			else
				return pl_err_set(err, "--parallel-layout-watch: %s: want slow=on or "
						  "slow=off", pl_clipn(p, len, cl, sizeof(cl)));
		} else {
			return pl_err_set(err, "--parallel-layout-watch: unknown key '%s' (accepted: "
					  "hang, busy, slow; or yes, no)", pl_clipn(p, k, cl, sizeof(cl)));
		}
		p += len;
		if (*p == ',' && !*++p)
			return pl_err_set(err, "--parallel-layout-watch=%s: a ',' with nothing after "
					  "it", pl_clip(s, cl, sizeof(cl)));
		continue;
bad_duration:
		return pl_err_set(err, "--parallel-layout-watch: %s: want a duration of 1 s to 30 "
				  "days: seconds, or a number with s, m, h or d (90, 90s, 10m, 2h)",
				  pl_clipn(p, len, cl, sizeof(cl)));
	}
	return 0;
}
