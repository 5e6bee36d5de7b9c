/* SPDX-License-Identifier: GPL-2.0-or-later */
/* proctree: /proc/PID/io parsing, and real process trees sampled: a child
 * that spins, one that writes, one that sleeps, a grandchild. */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proctree.h"
#include "tap.h"

#define MS UINT64_C(1000000)

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* A child: spin (cpu), write (bytes into path, a little at a time), or
 * sleep; with a grandchild that spins when kid. */
static pid_t
child(int spin, const char *path, int kid)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (kid && fork() == 0)
		spin = 1, path = NULL;
	for (;;) {
		if (spin) {
			volatile unsigned long x = 0;

			while (x < 100000000UL)
				x++;
		} else if (path) {
			static char buf[65536];
			int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

			if (fd >= 0) {
				if (write(fd, buf, sizeof(buf)) < 0)
					_exit(1);
				close(fd);
			}
			sleep_ms(5);
		} else {
			sleep_ms(1000);
		}
	}
}

static void
reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Two samples of pid ms apart, into p. */
static int
two_samples(pid_t pid, long ms, struct detect_proc *p, struct proctree_sample *last)
{
	struct proctree_sample a, b;
	pl_err_t err;

	memset(p, 0, sizeof(*p));
	if (proctree_sample(pid, &a, &err) < 0)
		return -1;
	proctree_update(p, NULL, &a, 0, 1000 * MS, sysconf(_SC_CLK_TCK));
	sleep_ms(ms);
	if (proctree_sample(pid, &b, &err) < 0)
		return -1;
	proctree_update(p, &a, &b, (uint64_t)ms * MS, 1000 * MS + (uint64_t)ms * MS,
			sysconf(_SC_CLK_TCK));
	*last = b;
	return 0;
}

static void
io_parse(void)
{
	const char good[] = "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\n"
			    "write_bytes: 8192\ncancelled_write_bytes: 0\n";
	uint64_t rd = 0, wr = 0;
	pl_err_t err;

	pl_err_clear(&err);
	ok(proctree_io_parse(good, strlen(good), &rd, &wr, &err) == 0 && rd == 4096 && wr == 8192,
	   "io: read_bytes and write_bytes (not rchar, not cancelled_write_bytes)");
	pl_err_clear(&err);
	ok(proctree_io_parse("rchar: 1\n", 9, &rd, &wr, &err) < 0 &&
	   strstr(err.text, "read_bytes"), "io: no read_bytes line: %s", err.text);
	pl_err_clear(&err);
	ok(proctree_io_parse("read_bytes: 1\nwrite_bytes: x\n", 29, &rd, &wr, &err) < 0 &&
	   strstr(err.text, "write_bytes"), "io: write_bytes not a number: %s", err.text);
	ok(proctree_io_parse("read_bytes: 99999999999999999999999\nwrite_bytes: 1\n", 52, &rd,
			     &wr, &err) < 0, "io: a number past 64 bits refused");
	ok(proctree_io_parse("xread_bytes: 1\nwrite_bytes: 1\n", 30, &rd, &wr, &err) < 0,
	   "io: a key only at the start of a line");
}

static void
update_rules(void)
{
	struct proctree_sample a, b;
	struct detect_proc p;

	memset(&a, 0, sizeof(a));
	memset(&p, 0, sizeof(p));
	a.state = 'D';
	a.cpu_ticks = 100;
	a.io_bytes = 10;
	proctree_update(&p, NULL, &a, 0, 50 * MS, 100);
	ok(!p.known && p.state == 'D' && p.dstate_ns == 50 * MS && !p.progress_ns,
	   "update: a first sample knows the state, no rates, D since now");
	b = a;
	proctree_update(&p, &a, &b, 1000 * MS, 1050 * MS, 100);
	ok(p.known && p.dstate_ns == 50 * MS && !p.cpu_milli && !p.progress_ns,
	   "update: still in D, no CPU nor I/O: D since the first time, no progress");
	b.state = 'S';
	b.cpu_ticks = 150;		/* 0.5 s of CPU in 1 s */
	proctree_update(&p, &a, &b, 1000 * MS, 2050 * MS, 100);
	ok(p.cpu_milli == 500 && !p.dstate_ns && p.progress_ns == 2050 * MS,
	   "update: out of D, 0.5 cores: progress now (%llu)", (unsigned long long)p.cpu_milli);
	a = b;
	b.cpu_ticks = 151;		/* 0.01 core: below the floor */
	proctree_update(&p, &a, &b, 1000 * MS, 3050 * MS, 100);
	ok(p.cpu_milli == 10 && p.progress_ns == 2050 * MS,
	   "update: 0.01 core is below the floor: the progress time stays");
	a = b;
	b.cpu_ticks = 20;		/* went back: a child gone, not reaped */
	b.io_bytes = 4;
	proctree_update(&p, &a, &b, 1000 * MS, 4050 * MS, 100);
	ok(p.cpu_milli == 0 && p.progress_ns == 2050 * MS,
	   "update: counters that went back count as no change");
	a = b;
	b.write_bytes = b.io_bytes = 2000004;
	proctree_update(&p, &a, &b, 2000 * MS, 6050 * MS, 100);
	ok(p.write_bps == 1000002 && p.progress_ns == 6050 * MS,
	   "update: I/O alone is progress (1 MB/s written)");
	a = b;
	b.write_bytes = b.io_bytes = 2000004 + 4096;
	proctree_update(&p, &a, &b, 1000 * MS, 7050 * MS, 100);
	ok(p.write_bps == 4096 && p.progress_ns == 6050 * MS,
	   "update: a page written in a second (a log line) is below the I/O floor: no progress");
}

int
main(void)
{
	struct proctree_sample s;
	struct detect_proc p;
	char path[] = "proctree_test.out.XXXXXX";
	pid_t pid;
	pl_err_t err;
	int fd, rv;

	plan(5 + 6 + 2 + 4 + 1);
	io_parse();
	update_rules();

	pl_err_clear(&err);
	ok(proctree_sample(getpid(), &s, &err) == 0 && s.state == 'R' && s.nprocs == 1 &&
	   s.threads >= 1, "self: running, one process, its threads");
	pl_err_clear(&err);
	ok(proctree_sample(999999999, &s, &err) < 0 && strstr(err.text, "/proc/999999999"),
	   "a pid that is no process: refused, naming it");

	pid = child(1, NULL, 0);
	rv = two_samples(pid, 300, &p, &s);
	ok(rv == 0 && p.known && p.cpu_milli >= 100 && p.progress_ns && s.state == 'R',
	   "a spinning child: known, %.2f cores, progress", (double)p.cpu_milli / 1000.0);
	reap(pid);
	pid = child(0, NULL, 0);
	sleep_ms(50);
	rv = two_samples(pid, 300, &p, &s);
	ok(rv == 0 && p.known && p.cpu_milli < PROCTREE_CPU_FLOOR_MILLI && !p.progress_ns &&
	   s.state == 'S', "a sleeping child: no progress, state S (%c)", s.state);
	reap(pid);

	fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	pid = child(0, path, 0);
	rv = fd >= 0 ? two_samples(pid, 400, &p, &s) : -1;
	ok(rv == 0 && p.known && p.progress_ns &&
	   (p.write_bps > 0 || p.cpu_milli >= PROCTREE_CPU_FLOOR_MILLI),
	   "a writing child: progress (%llu bytes/s written, %.2f cores)",
	   (unsigned long long)p.write_bps, (double)p.cpu_milli / 1000.0);
	reap(pid);
	unlink(path);
	if (p.write_bps == 0)
		diag("this file system does not account written bytes to the process");

	/* A sleeping child whose own child spins: the tree's CPU. */
	pid = child(0, NULL, 1);
	sleep_ms(100);
	rv = two_samples(pid, 300, &p, &s);
	ok(rv == 0 && s.nprocs == 2 && p.cpu_milli >= 100 && p.progress_ns,
	   "a sleeping child with a spinning grandchild: 2 processes, %.2f cores",
	   (double)p.cpu_milli / 1000.0);
	{
		FILE *f;
		char cpath[64], line[64];
		long g = 0;

		snprintf(cpath, sizeof(cpath), "/proc/%ld/task/%ld/children", (long)pid, (long)pid);
		if ((f = fopen(cpath, "r")) != NULL) {
			if (fgets(line, sizeof(line), f))
				g = strtol(line, NULL, 10);
			fclose(f);
		}
		if (g > 0)
			kill((pid_t)g, SIGKILL);
	}
	reap(pid);
	return done_testing();
}
