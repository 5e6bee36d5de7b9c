/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/PID/stat, read for the start time (procstat.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procstat.h"

/* Field 22 is the 20th field after the name's ')' (field 3 is the first). */
#define START_AFTER_NAME 20

/* A decimal number of [p, e): 1 to 20 digits, no sign, no overflow. */
static int
number(const char *p, const char *e, uint64_t *out)
{
	uint64_t v = 0;

	if (p == e || e - p > 20)
		return -1;
	for (; p < e; p++) {
		if (*p < '0' || *p > '9' || v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return 0;
}

int
procstat_parse(const char *text, size_t len, struct procstat *ps, pl_err_t *err)
{
	const char *p = text, *end = text + len, *lp, *rp = NULL, *f;
	char c[PL_CLIP_BUF];
	uint64_t v;
	int field;

	memset(ps, 0, sizeof(*ps));
	for (lp = p; lp < end && *lp != ' '; lp++)
		;
	if (number(p, lp, &v) < 0 || v == 0 || v > 0x7fffffff)
		return pl_err_set(err, "no pid before the name: want 'PID (NAME) STATE ...'");
	ps->pid = (long)v;
	if (end - lp < 2 || lp[1] != '(')
		return pl_err_set(err, "no '(' after pid %ld: want 'PID (NAME) STATE ...'", ps->pid);
	lp += 2;
	/* The name may hold ')' itself: it ends at the line's last one. */
	for (f = lp; f < end; f++)
		if (*f == ')')
			rp = f;
	if (!rp)
		return pl_err_set(err, "no ')' after the name of pid %ld", ps->pid);
	if ((size_t)(rp - lp) >= sizeof(ps->comm))
		return pl_err_set(err, "the name of pid %ld is %td bytes long, want at most %zu",
				  ps->pid, rp - lp, sizeof(ps->comm) - 1);
	memcpy(ps->comm, lp, (size_t)(rp - lp));
	ps->comm[rp - lp] = '\0';
	/* Then " STATE F4 F5 ...", one blank between fields. */
	p = rp + 1;
	for (field = 3; field <= 22; field++) {
		if (p >= end || *p != ' ')
			return pl_err_set(err, "pid %ld: %d fields after the name, want at least %d",
					  ps->pid, field - 3, START_AFTER_NAME);
		f = ++p;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		if (p == f)
			return pl_err_set(err, "pid %ld: field %d is empty", ps->pid, field);
		if (field == 3) {
			if (p - f != 1)
				return pl_err_set(err, "pid %ld: state '%s' is not one letter", ps->pid,
						  pl_clipn(f, (size_t)(p - f), c, sizeof(c)));
			ps->state = *f;
		} else if (field == 4 || (field >= 14 && field <= 17) || field == 20) {
			if (number(f, p, &v) < 0 || (field == 4 && v > 0x7fffffff))
				return pl_err_set(err, "pid %ld: field %d '%s' is not a number", ps->pid,
						  field, pl_clipn(f, (size_t)(p - f), c, sizeof(c)));
			if (field == 4)
				ps->ppid = (long)v;
			else if (field == 14)
				ps->utime = v;
			else if (field == 15)
				ps->stime = v;
			else if (field == 16)
				ps->cutime = v;
			else if (field == 17)
				ps->cstime = v;
			else
				ps->threads = v;
		}
	}
	if (number(f, p, &ps->start) < 0)
		return pl_err_set(err, "pid %ld: field 22 (start time) '%s' is not a number of clock ticks",
				  ps->pid, pl_clipn(f, (size_t)(p - f), c, sizeof(c)));
	return 0;
}

/* The text of /proc/PID/stat into buf (PROCSTAT_MAX_LINE + 1 bytes); its
 * length, or -1 with err naming the file. */
static long
read_text(long pid, char *buf, pl_err_t *err)
{
	const size_t cap = PROCSTAT_MAX_LINE + 1;
	char path[64];
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pl_err_set(err, "%s: %s", path, strerror(errno));
	while (len < cap && (n = read(fd, buf + len, cap - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			pl_err_set(err, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		len += (size_t)n;
	}
	close(fd);
	if (len > PROCSTAT_MAX_LINE)
		return pl_err_set(err, "%s: longer than %d bytes: not a stat line", path,
				  PROCSTAT_MAX_LINE);
	return (long)len;
}

int
procstat_read(long pid, struct procstat *ps, pl_err_t *err)
{
	char buf[PROCSTAT_MAX_LINE + 1];
	pl_err_t perr;
	long len;

	memset(ps, 0, sizeof(*ps));
	len = read_text(pid, buf, err);
	if (len < 0)
		return -1;
	pl_err_clear(&perr);
	if (procstat_parse(buf, (size_t)len, ps, &perr) < 0)
		return pl_err_set(err, "/proc/%ld/stat: %s", pid, perr.text);
	if (ps->pid != pid)
		return pl_err_set(err, "/proc/%ld/stat: the line is pid %ld's", pid, ps->pid);
	return 0;
}

enum procstat_same
procstat_compare(long pid, uint64_t start, const char *text, size_t len, uint64_t *now)
{
	struct procstat ps;

	if (!text || procstat_parse(text, len, &ps, NULL) < 0 || ps.pid != pid)
		return PROCSTAT_UNREADABLE;
	if (now)
		*now = ps.start;
	return ps.start == start ? PROCSTAT_SAME : PROCSTAT_REUSED;
}

enum procstat_same
procstat_same_process(long pid, uint64_t start, pl_err_t *err)
{
	char buf[PROCSTAT_MAX_LINE + 1];
	enum procstat_same same;
	uint64_t now = 0;
	long len;

	len = read_text(pid, buf, err);
	if (len < 0)
		return PROCSTAT_UNREADABLE;
	same = procstat_compare(pid, start, buf, (size_t)len, &now);
	if (same == PROCSTAT_UNREADABLE)
		pl_err_set(err, "/proc/%ld/stat: not a stat line of pid %ld", pid, pid);
	else if (same == PROCSTAT_REUSED)
		pl_err_set(err, "pid %ld started at clock tick %llu, not at %llu as registered", pid,
			   (unsigned long long)now, (unsigned long long)start);
	return same;
}
