/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * /proc/PID/stat lines written by hand, hostile names first: a name may
 * hold blanks, parentheses and newlines, so a parser that splits from the
 * start, or stops at the first ')', finds another start time and calls a
 * live process reused.  Then this very process, renamed to such a name
 * through /proc/self/comm, and a child that has been reaped.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procstat.h"
#include "tap.h"

static char line[8192];
static struct procstat ps;
static pl_err_t err;

/* A stat line as Linux 6 writes it (52 fields), with pid, name and start
 * time given; field 8 (tpgid) is -1 as for a process without a terminal. */
static const char *
stat_line(long pid, const char *comm, unsigned long long start)
{
	snprintf(line, sizeof(line),
		 "%ld (%s) S 1 %ld %ld 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 %llu "
		 "8478720 259 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0 "
		 "0 0 0 0 0 0 0 0\n", pid, comm, pid, pid, start);
	return line;
}

static int
parse(const char *text)
{
	pl_err_clear(&err);
	return procstat_parse(text, strlen(text), &ps, &err);
}

/* A name the parser must take whole, and the start time behind it. */
static void
good_name(const char *comm, const char *what)
{
	int rv = parse(stat_line(4321, comm, 777000ULL));

	ok(rv == 0 && ps.pid == 4321 && strcmp(ps.comm, comm) == 0 && ps.state == 'S' &&
	   ps.start == 777000ULL, "%s: pid, the whole name, state S, start 777000 (%s)", what,
	   rv == 0 ? "parsed" : err.text);
}

static void
bad_line(const char *text, const char *needle, const char *what)
{
	int rv = parse(text);

	ok(rv == -1 && strstr(err.text, needle) != NULL, "%s: refused, saying '%s' (%s)", what,
	   needle, err.text);
}

static int
write_comm(const char *name)
{
	FILE *f = fopen("/proc/self/comm", "w");
	int rv;

	if (!f)
		return -1;
	rv = fputs(name, f) < 0 ? -1 : 0;
	return fclose(f) == 0 ? rv : -1;
}

int
main(void)
{
	struct procstat self, again, kid;
	uint64_t now = 0;
	pid_t pid;
	int st, i;

	plan(36);

	/* ---- names ---- */
	good_name("sleep", "a plain name");
	good_name("python3 train", "a name with a blank");
	good_name("a) S 1 2 3 (b", "a name with ')' and fields in it");
	good_name(") 1 2 3 4 5 6 (", "15 bytes made of field-like text");
	good_name(")", "a name that is one ')'");
	good_name("((", "a name of two '('");
	good_name("", "an empty name");
	good_name("a\nb) c", "a name with a newline and ')'");
	/* What a first-')' parser would read: the name's fake fields. */
	parse(stat_line(9, "x) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 (", 123456ULL));
	is_int(ps.start, 123456, "a name holding a whole fake line: the start after the last ')'");
	is_str(ps.comm, "x) R 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 (", "and the whole name kept");

	/* ---- malformed lines ---- */
	bad_line("", "no pid", "an empty text");
	bad_line("(sleep) S 1", "no pid", "no pid");
	bad_line("12a (sleep) S 1", "no pid", "a pid with a letter");
	bad_line("0 (sleep) S 1", "no pid", "pid 0");
	bad_line("99999999999 (sleep) S 1", "no pid", "a pid past 2^31");
	bad_line("123 sleep) S 1 2 3", "no '(' after pid 123", "no '(' before the name");
	bad_line("123 (sleep S 1 2 3", "no ')' after the name", "no ')' after the name");
	bad_line("123 (sleep) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0\n",
		 "19 fields after the name, want at least 20", "a line cut before field 22");
	bad_line("123 (sleep) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0\n",
		 "field 22 (start time) '-5'", "a negative start time");
	bad_line("123 (sleep) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99999999999999999999 0\n",
		 "is not a number", "a start time past 2^64");
	bad_line("123 (sleep) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12x 0\n",
		 "'12x' is not a number", "a start time with a letter");
	bad_line("123 (sleep) S  1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0\n",
		 "field 4 is empty", "two blanks between fields");
	bad_line("123 (sleep) SR 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0\n",
		 "state 'SR' is not one letter", "a state of two letters");
	bad_line(stat_line(5, "0123456789012345678901234567890123456789012345678901234567890123", 1),
		 "64 bytes long, want at most 63", "a name longer than any kernel gives");
	/* A text is taken by its length, not up to a NUL. */
	stat_line(77, "aXb", 5);
	*strchr(line, 'X') = '\0';
	ok(procstat_parse(line, strlen(line + 6) + 6, &ps, NULL) == 0 && ps.start == 5 &&
	   memcmp(ps.comm, "a\0b", 4) == 0, "a NUL inside the name: the line read to its length");

	/* ---- the reuse judgement ---- */
	stat_line(4321, ") 1 2 3 4 5 6 (", 5000);
	is_int(procstat_compare(4321, 5000, line, strlen(line), &now), PROCSTAT_SAME,
	       "same pid and start behind a field-like name: the same process");
	stat_line(4321, "sleep", 5001);
	i = procstat_compare(4321, 5000, line, strlen(line), &now);
	ok(i == PROCSTAT_REUSED && now == 5001, "a later start time: reused, and the start found "
	   "given (%llu)", (unsigned long long)now);
	is_int(procstat_compare(4321, 5000, NULL, 0, NULL), PROCSTAT_UNREADABLE,
	       "no text: unreadable");
	stat_line(4322, "sleep", 5000);
	is_int(procstat_compare(4321, 5000, line, strlen(line), NULL), PROCSTAT_UNREADABLE,
	       "another pid's line: unreadable");
	is_int(procstat_compare(4321, 5000, "4321 (sleep S", 13, NULL), PROCSTAT_UNREADABLE,
	       "a broken line: unreadable");

	/* ---- this process, renamed ---- */
	pl_err_clear(&err);
	ok(procstat_read((long)getpid(), &self, &err) == 0 && self.pid == (long)getpid() &&
	   self.state == 'R' && self.start > 0, "this process: its pid, running, a start time (%s)",
	   err.text);
	if (write_comm(") 1 2 (x y) z") < 0)
		diag("cannot write /proc/self/comm: %s", strerror(errno));
	pl_err_clear(&err);
	ok(procstat_read((long)getpid(), &again, &err) == 0 && strcmp(again.comm, ") 1 2 (x y) z") == 0 &&
	   again.start == self.start, "renamed to ') 1 2 (x y) z': that name, the same start (%s, %s)",
	   again.comm, err.text);
	pl_err_clear(&err);
	is_int(procstat_same_process((long)getpid(), self.start, &err), PROCSTAT_SAME,
	       "renamed: still the same process");
	pl_err_clear(&err);
	i = procstat_same_process((long)getpid(), self.start + 1, &err);
	ok(i == PROCSTAT_REUSED && strstr(err.text, "not at") != NULL,
	   "with another start time registered: reused, saying both (%s)", err.text);

	/* ---- a child, then the same pid once reaped ---- */
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	pl_err_clear(&err);
	ok(pid > 0 && procstat_read((long)pid, &kid, &err) == 0 && kid.start >= self.start,
	   "a child started no earlier than its parent (%s)", err.text);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	pl_err_clear(&err);
	ok(procstat_read((long)pid, &kid, &err) == -1 && strstr(err.text, "No such file") != NULL,
	   "the child reaped: no stat line, saying so (%s)", err.text);
	return done_testing();
}
