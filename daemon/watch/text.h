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

#include "alerttext.h"

/* src as printable ASCII without <, > and & (others as \xHH), cut to fit
 * dst: safe for a label, a JSON string, a log line and a chat message
 * (lib/watch/alerttext.h).  dst and src must not overlap. */
static inline const char *
ascii(char *dst, size_t size, const char *src)
{
	return alerttext_clean(dst, size, src);
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
