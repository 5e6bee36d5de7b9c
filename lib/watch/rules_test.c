/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shared rules (rules.h) as tables: each rule at and around its
 * boundaries.  Wait statuses are written as Linux encodes them: a code c
 * as c << 8, a signal s as s (with 0x80 for a core dump).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "detect.h"
#include "rules.h"
#include "tap.h"

#define S	1000000000ULL
#define NOW	(1000 * S)
#define T	(60 * S)

static void
age_test(void)
{
	is_int(rules_age(NOW, NOW - 5 * S), 5 * S, "age: 5 s");
	is_int(rules_age(NOW, NOW), 0, "age: now is 0");
	is_int(rules_age(NOW, NOW + S), 0, "age: a time in the future is 0, never a wrap");
	ok(rules_age(UINT64_MAX, 0) == UINT64_MAX, "age: the whole range");
}

static void
usable_test(void)
{
	ok(rules_usable(0) && rules_usable(DETECT_GPU | DETECT_P2P | DETECT_SEND),
	   "usable: a plain communicator, whatever else it records");
	ok(!rules_usable(DETECT_BUSY), "usable: not a busy slot");
	ok(!rules_usable(DETECT_FINAL | DETECT_GPU), "usable: not a finalized communicator");
}

struct wait_case {
	const char *name;
	uint32_t flags;
	uint64_t colls, done, enter_ns;
	int want;
};

static const struct wait_case waits[] = {
	{ "entered 70 s ago, not completed", DETECT_GPU, 10, 9, NOW - 70 * S, 1 },
	{ "entered exactly the threshold ago", DETECT_GPU, 10, 9, NOW - T, 0 },
	{ "the threshold and 1 ns", DETECT_GPU, 10, 9, NOW - T - 1, 1 },
	{ "completed on the GPU", DETECT_GPU, 10, 10, NOW - 70 * S, 0 },
	{ "more completions than entries (input)", DETECT_GPU, 10, 11, NOW - 70 * S, 0 },
	{ "no GPU part: entry time alone", 0, 10, 10, NOW - 70 * S, 1 },
	{ "nothing entered yet", DETECT_GPU, 0, 0, 0, 0 },
	{ "entered in the future", DETECT_GPU, 10, 9, NOW + S, 0 },
};

struct stuck_case {
	const char *name;
	uint32_t flags;
	uint64_t inflight, progress_ns;
	int want;
};

static const struct stuck_case stucks[] = {
	{ "channels in flight, quiet 62 s", DETECT_GPU, 4, NOW - 62 * S, 1 },
	{ "quiet exactly the threshold", DETECT_GPU, 4, NOW - T, 0 },
	{ "the threshold and 1 ns", DETECT_GPU, 4, NOW - T - 1, 1 },
	{ "no channel in flight", DETECT_GPU, 0, NOW - 62 * S, 0 },
	{ "no GPU part", 0, 4, NOW - 62 * S, 0 },
	{ "a busy slot", DETECT_GPU | DETECT_BUSY, 4, NOW - 62 * S, 0 },
	{ "a finalized communicator", DETECT_GPU | DETECT_FINAL, 4, NOW - 62 * S, 0 },
	{ "progress in the future", DETECT_GPU, 4, NOW + S, 0 },
};

static void
comm_rules_test(void)
{
	size_t i;

	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		const struct wait_case *c = &waits[i];

		is_int(rules_waiting(c->flags, c->colls, c->done, c->enter_ns, NOW, T), c->want,
		       "waiting: %s", c->name);
	}
	for (i = 0; i < sizeof(stucks) / sizeof(stucks[0]); i++) {
		const struct stuck_case *c = &stucks[i];

		is_int(rules_gpu_stuck(c->flags, c->inflight, c->progress_ns, NOW, T), c->want,
		       "gpu stuck: %s", c->name);
	}
}

static void
text_copy_test(void)
{
	char out[8];
	const char unterminated[4] = { 'a', 'b', 'c', 'd' };

	memset(out, 'x', sizeof(out));
	rules_text_copy(out, sizeof(out), "tp", 16);
	is_str(out, "tp", "text copy: a short text");
	rules_text_copy(out, sizeof(out), "allreduce-long", 16);
	is_str(out, "allredu", "text copy: cut to fit, NUL-terminated");
	rules_text_copy(out, sizeof(out), unterminated, sizeof(unterminated));
	is_str(out, "abcd", "text copy: a source without NUL is read to its size only");
	rules_text_copy(out, 1, "tp", 16);
	is_str(out, "", "text copy: room for the NUL alone");
}

struct exit_case {
	const char *name;
	int status;
	enum rules_exit want;
	int sig;
};

static const struct exit_case exits[] = {
	{ "exit 0", 0, RULES_EXIT_ZERO, 0 },
	{ "exit 1", 1 << 8, RULES_EXIT_FAILED, 0 },
	{ "exit 7", 7 << 8, RULES_EXIT_FAILED, 0 },
	{ "killed by SIGTERM (scancel)", SIGTERM, RULES_EXIT_ENDED, SIGTERM },
	{ "killed by SIGKILL (after KillWait)", SIGKILL, RULES_EXIT_ENDED, SIGKILL },
	{ "killed by SIGINT", SIGINT, RULES_EXIT_ENDED, SIGINT },
	{ "killed by SIGHUP", SIGHUP, RULES_EXIT_ENDED, SIGHUP },
	{ "exit 143: a shell's SIGTERM", (128 + SIGTERM) << 8, RULES_EXIT_ENDED, SIGTERM },
	{ "exit 137: a shell's SIGKILL", (128 + SIGKILL) << 8, RULES_EXIT_ENDED, SIGKILL },
	{ "exit 128: no signal", 128 << 8, RULES_EXIT_FAILED, 0 },
	{ "exit 139: a shell's SIGSEGV", (128 + SIGSEGV) << 8, RULES_EXIT_FAILED, 0 },
	{ "killed by SIGSEGV", SIGSEGV, RULES_EXIT_FAILED, 0 },
	{ "killed by SIGSEGV, core dumped", SIGSEGV | 0x80, RULES_EXIT_FAILED, 0 },
	{ "killed by SIGABRT", SIGABRT, RULES_EXIT_FAILED, 0 },
	{ "killed by SIGBUS", SIGBUS, RULES_EXIT_FAILED, 0 },
};

static void
exit_test(void)
{
	size_t i;

	for (i = 0; i < sizeof(exits) / sizeof(exits[0]); i++) {
		const struct exit_case *c = &exits[i];

		ok(rules_exit_class(c->status) == c->want &&
		   rules_exit_signal(c->status) == c->sig, "exit rule: %s", c->name);
	}
}

/* The exit rule for an exit 0: a culprit only while a live peer waits
 * for it where it never reached. */
static void
exit0_test(void)
{
	ok(rules_exit0_awaited(9, DETECT_GPU, 10, 9, NOW - 70 * S, NOW, T),
	   "exit 0: awaited by a peer waiting 70 s in the 10th, it left after 9");
	ok(!rules_exit0_awaited(10, DETECT_GPU, 10, 9, NOW - 70 * S, NOW, T),
	   "exit 0: not when it reached the collective the peer waits in");
	ok(!rules_exit0_awaited(9, DETECT_GPU, 10, 9, NOW - 30 * S, NOW, T),
	   "exit 0: not while the peer waits less than the threshold");
	ok(!rules_exit0_awaited(9, DETECT_GPU, 10, 10, NOW - 70 * S, NOW, T),
	   "exit 0: not when the peer completed it (a normal end: nobody waits)");
}

/* The busy rule: progress within the threshold, a wait below busy_thr. */
static void
busy_test(void)
{
	struct detect_proc p;

	memset(&p, 0, sizeof(p));
	ok(!rules_busy(&p, NOW - 70 * S, NOW, T, 1800 * S), "busy: not without a sample");
	p.known = 1;
	p.progress_ns = NOW - S;
	ok(rules_busy(&p, NOW - 70 * S, NOW, T, 1800 * S),
	   "busy: progress a second ago, peers waiting 70 s");
	ok(!rules_busy(&p, NOW - 600 * S, NOW, T, 600 * S),
	   "busy: not once its peers have waited busy_threshold");
	p.progress_ns = NOW - T - 1;
	ok(!rules_busy(&p, NOW - 70 * S, NOW, T, 1800 * S) && !rules_progress(&p, NOW, T),
	   "busy: not when its last progress is past the threshold");
	p.progress_ns = NOW + S;
	ok(rules_progress(&p, NOW, T), "busy: a progress time after now (input) is now");
}

static struct detect_sig
mk(const char *func, uint64_t count, const char *dtype, int32_t root)
{
	struct detect_sig g;

	memset(&g, 0, sizeof(g));
	snprintf(g.func, sizeof(g.func), "%s", func);
	snprintf(g.dtype, sizeof(g.dtype), "%s", dtype);
	g.count = count;
	g.root = root;
	return g;
}

static void
sig_test(void)
{
	struct detect_sig a = mk("AllReduce", 1024, "ncclBfloat16", 0);
	struct detect_sig b = a, g[12];
	const struct detect_sig *p[12];
	size_t major, i;

	ok(rules_sig_same(&a, &b), "sig: alike");
	b.root = 3;
	ok(rules_sig_same(&a, &b), "sig: an AllReduce's root is no part of it");
	b = a;
	b.count = 2048;
	ok(!rules_sig_same(&a, &b), "sig: another count");
	b = a;
	snprintf(b.dtype, sizeof(b.dtype), "ncclFloat32");
	ok(!rules_sig_same(&a, &b), "sig: another datatype");
	b = a;
	snprintf(b.func, sizeof(b.func), "AllGather");
	ok(!rules_sig_same(&a, &b), "sig: another func");
	a = mk("Broadcast", 8, "ncclInt8", 0);
	b = mk("Broadcast", 8, "ncclInt8", 1);
	ok(!rules_sig_same(&a, &b), "sig: a Broadcast from another root");
	a = mk("Reduce", 8, "ncclInt8", 2);
	b = mk("Reduce", 8, "ncclInt8", 2);
	ok(rules_sig_same(&a, &b), "sig: a Reduce to the same root");
	for (i = 0; i < 12; i++) {
		g[i] = mk("AllReduce", 1024, "ncclBfloat16", -1);
		p[i] = &g[i];
	}
	ok(rules_sig_split(p, 8, &major) == 1 && major == 0, "split: 8 alike, one kind");
	g[5] = mk("AllGather", 1024, "ncclBfloat16", -1);
	ok(rules_sig_split(p, 8, &major) == 2 && major == 0, "split: 7 against 1, the 7 the majority");
	g[0] = mk("AllGather", 1024, "ncclBfloat16", -1);
	ok(rules_sig_split(p, 8, &major) == 2 && major == 1,
	   "split: 6 against 2, the first of the 6 the majority");
	ok(rules_sig_split(p + 5, 2, &major) == 2 && major == SIZE_MAX, "split: 1 against 1, a tie");
	g[1] = mk("AllGather", 1024, "ncclBfloat16", -1);
	ok(rules_sig_split(p, 6, &major) == 2 && major == SIZE_MAX, "split: 3 against 3, a tie");
	for (i = 0; i < 12; i++)
		g[i] = mk("AllReduce", 1000 + i, "ncclBfloat16", -1);
	ok(rules_sig_split(p, 12, &major) == RULES_SIG_KINDS + 1 && major == SIZE_MAX,
	   "split: 12 kinds counted as more than %d, no majority", RULES_SIG_KINDS);
	for (i = 0; i < 12; i++)
		g[i] = mk("AllReduce", i < 9 ? 7 : 1000 + i, "ncclBfloat16", -1);
	ok(rules_sig_split(p, 12, &major) == 4 && major == 0, "split: 9 alike among 12, the majority");
	ok(rules_sig_split(p, 0, &major) == 0 && major == SIZE_MAX, "split: nobody");
}

static void
quiet_test(void)
{
	ok(rules_quiet(DETECT_GPU, 10, NOW - 70 * S, NOW - 70 * S, NOW, T),
	   "quiet: entered and moved 70 s ago");
	ok(!rules_quiet(DETECT_GPU, 10, NOW - 70 * S, NOW - S / 2, NOW, T),
	   "quiet: not when its kernel stopped half a second ago (a collective just completed)");
	ok(!rules_quiet(DETECT_GPU, 10, NOW - S, NOW - 70 * S, NOW, T),
	   "quiet: not when it entered a collective a second ago");
	ok(rules_quiet(DETECT_GPU, 0, NOW - S, NOW - T, NOW, T),
	   "quiet: no collective entered (a p2p-only communicator): its entry time unused; "
	   "moved exactly the threshold ago");
	ok(rules_quiet(0, 10, NOW - 70 * S, NOW, NOW, T),
	   "quiet: no GPU part: the entry time alone");
	ok(!rules_quiet(DETECT_GPU, 10, NOW - 70 * S, NOW + S, NOW, T),
	   "quiet: a progress time in the future is not quiet");
}

int
main(void)
{
	plan(4 + 3 + (int)(sizeof(waits) / sizeof(waits[0]) + sizeof(stucks) / sizeof(stucks[0])) +
	     4 + (int)(sizeof(exits) / sizeof(exits[0])) + 4 + 5 + 15 + 6);
	age_test();
	usable_test();
	comm_rules_test();
	text_copy_test();
	exit_test();
	exit0_test();
	busy_test();
	sig_test();
	quiet_test();
	return done_testing();
}
