/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd's log: one line per event, to stderr (the journal stamps it) or
 * to a file with a time stamp.  Messages that a client or the kernel can
 * make repeat thousands of times a second (accept failures, libevent's own
 * warnings) go through a rate limit, so a flood of connections cannot turn
 * into a flood of log.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "buf.h"
#include "layoutd.h"

#define LD_EVENT_LOG_INTERVAL_MS 10000.0

double
ld_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
vlog(struct ld_log *lg, const char *fmt, va_list ap)
{
	FILE *f = lg && lg->f ? lg->f : stderr;

	/* journald stamps stderr itself; a log file needs its own time. */
	if (f != stderr) {
		char stamp[32];
		time_t now = time(NULL);
		struct tm tm;

		if (localtime_r(&now, &tm) && strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S%z", &tm))
			fprintf(f, "%s ", stamp);
	}
	fprintf(f, LD_PROG "[%ld]: ", (long)getpid());
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
}

void
ld_log(struct ld_log *lg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(lg, fmt, ap);
	va_end(ap);
}

FILE *
ld_log_open(const char *path, pl_err_t *err)
{
	FILE *f;

	if (!path[0])
		return stderr;
	f = fopen(path, "a");
	if (!f) {
		pl_err_set(err, "log %s: %s", path, strerror(errno));
		return NULL;
	}
	return f;
}

void
ld_log_close(FILE *f)
{
	if (f && f != stderr)
		fclose(f);
}

void
ld_ratelog(struct ld_log *lg, struct ld_ratelog *r, const char *fmt, ...)
{
	double now = ld_now_ms();
	struct buf b = BUF_INIT;
	va_list ap;

	r->count++;
	if (r->last_ms > 0 && now - r->last_ms < r->interval_ms) {
		r->quiet++;
		return;
	}
	va_start(ap, fmt);
	if (buf_reserve(&b, 512) == 0) {
		int n = vsnprintf(b.s, b.cap, fmt, ap);

		if (n >= 0)
			b.len = (size_t)n < b.cap ? (size_t)n : b.cap - 1;
	}
	va_end(ap);
	if (r->quiet)
		ld_log(lg, "%s (%lu more like it in the last %.0f s, %lu in all)", buf_str(&b),
		       r->quiet, (now - r->last_ms) / 1e3, r->count);
	else
		ld_log(lg, "%s", buf_str(&b));
	buf_free(&b);
	r->quiet = 0;
	r->last_ms = now;
}

/* libevent's warnings, one struct for the whole process: its log callback
 * takes no argument. */
static struct ld_log *event_log_target;
static struct ld_ratelog event_log_rate = { LD_EVENT_LOG_INTERVAL_MS, 0, 0, 0 };

static void
on_event_log(int severity, const char *msg)
{
	char clip[PL_CLIP_BUF * 2];

	if (severity < EVENT_LOG_WARN || !event_log_target)
		return;
	ld_ratelog(event_log_target, &event_log_rate, "libevent: %s",
		   pl_clip(msg, clip, sizeof(clip)));
}

void
ld_log_libevent(struct ld_log *lg)
{
	event_log_target = lg;
	event_set_log_callback(lg ? on_event_log : NULL);
}

const char *
ld_escape(struct buf *b, const char *s, size_t max)
{
	size_t i;

	buf_free(b);
	for (i = 0; s && s[i] && i < max; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '\\')
			buf_adds(b, "\\\\");
		else if (ch < 0x20 || ch >= 0x7f)
			buf_printf(b, "\\x%02x", ch);
		else
			buf_add(b, &s[i], 1);
	}
	if (s && s[i])
		buf_printf(b, "...(%zu bytes)", i + strlen(s + i));	/* as pl_clip() */
	return b->bad ? "(out of memory)" : buf_str(b);
}
