/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text for labels and log lines that the alerts (watch/alert.c) and the
 * drain (watch/drain.c) both write.  WCOREDUMP wants _GNU_SOURCE (or
 * _DEFAULT_SOURCE) before the first include.
 */
#ifndef PL_LAYOUTD_WATCH_TEXT_H
#define PL_LAYOUTD_WATCH_TEXT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/wait.h>

/* src as printable ASCII (others as \xHH), cut to fit dst: safe for a
 * label, a JSON string and a log line. */
static inline const char *
ascii(char *dst, size_t size, const char *src)
{
	size_t o = 0;

	for (; src && *src && o + 5 < size; src++) {
		unsigned char ch = (unsigned char)*src;

		if (ch < 0x20 || ch >= 0x7f) {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = "0123456789abcdef"[ch >> 4];
			dst[o++] = "0123456789abcdef"[ch & 15];
		} else {
			dst[o++] = (char)ch;
		}
	}
	dst[o] = '\0';
	return dst;
}

/* "exit code 7", "signal 9 (core dumped)", "status unknown". */
static inline void
exit_text(int st, char *buf, size_t size)
{
	if (st < 0)
		snprintf(buf, size, "status unknown");
	else if (WIFEXITED(st))
		snprintf(buf, size, "exit code %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, size, "signal %d%s", WTERMSIG(st), WCOREDUMP(st) ? " (core dumped)" : "");
	else
		snprintf(buf, size, "wait status 0x%x", (unsigned)st);
}

#endif
