/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE		/* memmem */
#include "config.h"

#include <string.h>

#include "drainlist.h"

/* Where the token key (e.g. "State=") starts a word of line[0, len): at
 * the start or after a blank.  NULL when there is none. */
static const char *
token(const char *line, size_t len, const char *key)
{
	size_t k = strlen(key), i;

	for (i = 0; i + k <= len; i++)
		if ((i == 0 || line[i - 1] == ' ') && memcmp(line + i, key, k) == 0)
			return line + i + k;
	return NULL;
}

bool
drainlist_ours(const char *line, size_t len)
{
	const char *end = line + len, *st, *rs;
	size_t n;

	st = token(line, len, "State=");
	rs = token(line, len, "Reason=");
	if (!st || !rs)
		return false;
	/* the state is one word: "IDLE+DRAIN", "DRAINED", "MIXED+DRAIN+..." */
	for (n = 0; st + n < end && st[n] != ' '; n++)
		;
	if (n < 5 || !memmem(st, n, "DRAIN", 5))
		return false;
	n = strlen(DRAINLIST_REASON);
	return (size_t)(end - rs) >= n && memcmp(rs, DRAINLIST_REASON, n) == 0;
}
