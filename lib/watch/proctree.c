/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procstat.h"
#include "proctree.h"

/* A small /proc file into buf (size bytes, NUL-terminated): its length, or
 * -1 with errno. */
static long
read_small(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (long)len;
}

/* The number after "key: " on a line of text[0, len), or -1. */
static int
io_field(const char *text, size_t len, const char *key, uint64_t *out)
{
	size_t k = strlen(key), i;

	for (i = 0; i + k < len; i++) {
		uint64_t v = 0;
		size_t j;

		if ((i && text[i - 1] != '\n') || memcmp(text + i, key, k) != 0)
			continue;
		for (j = i + k; j < len && text[j] == ' '; j++)
			;
		if (j == len || text[j] < '0' || text[j] > '9')
			return -1;
		for (; j < len && text[j] >= '0' && text[j] <= '9'; j++) {
			if (v > (UINT64_MAX - (uint64_t)(text[j] - '0')) / 10)
				return -1;
			v = v * 10 + (uint64_t)(text[j] - '0');
		}
		if (j < len && text[j] != '\n')
			return -1;
		*out = v;
		return 0;
	}
	return -1;
}

int
proctree_io_parse(const char *text, size_t len, uint64_t *rd, uint64_t *wr, pl_err_t *err)
{
	if (io_field(text, len, "read_bytes:", rd) < 0)
		return pl_err_set(err, "no 'read_bytes: N' line");
	if (io_field(text, len, "write_bytes:", wr) < 0)
		return pl_err_set(err, "no 'write_bytes: N' line");
	return 0;
}

/* Add process pid (one of the tree) to s; its children's pids into kids
 * (at most room).  Returns how many it put there, or -1 when pid cannot
 * be read. */
static int
add_process(long pid, int root, struct proctree_sample *s, long *kids, size_t room)
{
	char path[64], buf[4096], *p, *end;
	struct procstat ps;
	uint64_t rd, wr;
	pl_err_t err;
	long len;
	int n = 0;

	pl_err_clear(&err);
	if (procstat_read(pid, &ps, &err) < 0)
		return -1;
	s->nprocs++;
	s->threads += ps.threads > UINT32_MAX ? UINT32_MAX : (uint32_t)ps.threads;
	s->cpu_ticks += ps.utime + ps.stime + (root ? ps.cutime + ps.cstime : 0);
	if (root) {
		s->state = ps.state;
		snprintf(path, sizeof(path), "/proc/%ld/wchan", pid);
		len = read_small(path, buf, sizeof(buf));
		if (len > 0 && strcmp(buf, "0") != 0)
			snprintf(s->wchan, sizeof(s->wchan), "%.*s", (int)sizeof(s->wchan) - 1, buf);
	}
	snprintf(path, sizeof(path), "/proc/%ld/io", pid);
	len = read_small(path, buf, sizeof(buf));
	pl_err_clear(&err);
	if (len > 0 && proctree_io_parse(buf, (size_t)len, &rd, &wr, &err) == 0) {
		s->read_bytes += rd;
		s->write_bytes += wr;
	}
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", pid, pid);
	len = read_small(path, buf, sizeof(buf));
	for (p = buf; len > 0 && *p && (size_t)n < room; p = end) {
		long kid = strtol(p, &end, 10);

		if (end == p)
			break;
		if (kid > 0)
			kids[n++] = kid;
	}
	return n;
}

int
proctree_sample(long pid, struct proctree_sample *s, pl_err_t *err)
{
	long queue[PROCTREE_MAX];
	size_t head = 0, tail = 0;
	int n;

	memset(s, 0, sizeof(*s));
	queue[tail++] = pid;
	while (head < tail) {
		long p = queue[head++];

		n = add_process(p, p == pid, s, queue + tail, PROCTREE_MAX - tail);
		if (n < 0) {
			if (p == pid)
				return pl_err_set(err, "/proc/%ld: %s", pid, strerror(errno));
			continue;
		}
		tail += (size_t)n;
	}
	s->io_bytes = s->read_bytes + s->write_bytes;
	return 0;
}

/* b - a, 0 when b is below a. */
static uint64_t
grew(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

void
proctree_update(struct detect_proc *p, const struct proctree_sample *prev,
		const struct proctree_sample *cur, uint64_t dt_ns, uint64_t now_ns,
		long ticks_per_s)
{
	uint64_t cpu, io;
	double secs = (double)dt_ns / 1e9;

	p->state = cur->state;
	memcpy(p->wchan, cur->wchan, sizeof(p->wchan));
	p->nprocs = cur->nprocs;
	p->threads = cur->threads;
	if (cur->state == 'D') {
		if (!p->dstate_ns)
			p->dstate_ns = now_ns;
	} else {
		p->dstate_ns = 0;
	}
	if (!prev || dt_ns == 0 || ticks_per_s <= 0)
		return;
	cpu = grew(prev->cpu_ticks, cur->cpu_ticks);
	io = grew(prev->io_bytes, cur->io_bytes);
	p->known = 1;
	p->cpu_milli = (uint64_t)((double)cpu * 1000.0 / (double)ticks_per_s / secs + 0.5);
	p->read_bps = (uint64_t)((double)grew(prev->read_bytes, cur->read_bytes) / secs);
	p->write_bps = (uint64_t)((double)grew(prev->write_bytes, cur->write_bytes) / secs);
	if (p->cpu_milli >= PROCTREE_CPU_FLOOR_MILLI ||
	    (double)io / secs >= (double)PROCTREE_IO_FLOOR_BPS)
		p->progress_ns = now_ns;
}
