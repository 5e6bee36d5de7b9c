/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rules the node view and the judge share (see rules.h). */
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "detect.h"
#include "rules.h"

uint64_t
rules_age(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

int
rules_usable(uint32_t flags)
{
	return !(flags & (DETECT_BUSY | DETECT_FINAL));
}

int
rules_waiting(uint32_t flags, uint64_t colls, uint64_t done, uint64_t enter_ns, uint64_t now,
	      uint64_t thr)
{
	if (!colls || rules_age(now, enter_ns) <= thr)
		return 0;
	return !((flags & DETECT_GPU) && done >= colls);
}

int
rules_gpu_stuck(uint32_t flags, uint64_t ch_inflight, uint64_t progress_ns, uint64_t now,
		uint64_t thr)
{
	return rules_usable(flags) && (flags & DETECT_GPU) && ch_inflight &&
	       rules_age(now, progress_ns) > thr;
}

void
rules_text_copy(char *dst, size_t size, const char *src, size_t srclen)
{
	size_t n = strnlen(src, srclen);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The signals Slurm ends a step's tasks with. */
static int
step_end_signal(int sig)
{
	return sig == SIGTERM || sig == SIGKILL || sig == SIGINT || sig == SIGHUP;
}

int
rules_exit_signal(int status)
{
	if (WIFSIGNALED(status))
		return step_end_signal(WTERMSIG(status)) ? WTERMSIG(status) : 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) > 128 &&
	    step_end_signal(WEXITSTATUS(status) - 128))
		return WEXITSTATUS(status) - 128;
	return 0;
}

enum rules_exit
rules_exit_class(int status)
{
	if (rules_exit_signal(status))
		return RULES_EXIT_ENDED;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return RULES_EXIT_ZERO;
	return RULES_EXIT_FAILED;
}

int
rules_exit0_awaited(uint64_t exited_colls, uint32_t flags, uint64_t colls, uint64_t done,
		    uint64_t enter_ns, uint64_t now, uint64_t thr)
{
	return colls > exited_colls && rules_waiting(flags, colls, done, enter_ns, now, thr);
}

int
rules_progress(const struct detect_proc *p, uint64_t now, uint64_t thr)
{
	return p->known && p->progress_ns && rules_age(now, p->progress_ns) <= thr;
}

int
rules_busy(const struct detect_proc *p, uint64_t wait_ns, uint64_t now, uint64_t thr,
	   uint64_t busy_thr)
{
	return rules_progress(p, now, thr) && rules_age(now, wait_ns) < busy_thr;
}
