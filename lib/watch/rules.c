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

int
rules_just_completed(uint32_t flags, uint64_t done, uint64_t stuck_done, uint64_t progress_ns,
		     uint64_t now, uint64_t margin)
{
	return (flags & DETECT_GPU) && done > stuck_done && rules_age(now, progress_ns) < margin;
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

int
rules_sig_same(const struct detect_sig *a, const struct detect_sig *b)
{
	if (strncmp(a->func, b->func, sizeof(a->func)) != 0 ||
	    strncmp(a->dtype, b->dtype, sizeof(a->dtype)) != 0 || a->count != b->count)
		return 0;
	if (strncmp(a->func, "Broadcast", sizeof(a->func)) == 0 ||
	    strncmp(a->func, "Reduce", sizeof(a->func)) == 0)
		return a->root == b->root;
	return 1;
}

size_t
rules_sig_split(const struct detect_sig *const *s, size_t n, size_t *major)
{
	size_t rep[RULES_SIG_KINDS], cnt[RULES_SIG_KINDS], nk = 0, i, k, best = 0;
	int more = 0, tie = 0;

	*major = SIZE_MAX;
	for (i = 0; i < n; i++) {
		for (k = 0; k < nk && !rules_sig_same(s[rep[k]], s[i]); k++)
			;
		if (k < nk) {
			cnt[k]++;
		} else if (nk < RULES_SIG_KINDS) {
			rep[nk] = i;
			cnt[nk++] = 1;
		} else {
			more = 1;
		}
	}
	if (!nk)
		return 0;
	for (k = 1; k < nk; k++)
		if (cnt[k] > cnt[best]) {
			best = k;
			tie = 0;
		} else if (cnt[k] == cnt[best]) {
			tie = 1;
		}
	/* a kind beyond the table may hold as many: no majority then unless
	 * the best holds more than half */
	if (more && 2 * cnt[best] <= n)
		tie = 1;
	if (!tie)
		*major = rep[best];
	return nk + (size_t)more;
}

/* Which side of c the member m is: 0 its previous, 1 its next, -1
 * neither (with two members the one peer is both: 0). */
static int
side_of(const struct detect_comm *c, int32_t m)
{
	int32_t n = c->nranks;

	if (n < 2 || n > PLW_PEER_BUCKETS || c->rank < 0 || c->rank >= n || m < 0 || m >= n)
		return -1;
	if (m == (c->rank + n - 1) % n)
		return 0;
	if (m == (c->rank + 1) % n)
		return 1;
	return -1;
}

int
rules_p2p_unposted(const struct detect_comm *c, const struct detect_comm *peer)
{
	int send = (c->flags & DETECT_SEND) != 0, a, b;
	uint64_t mine, theirs;

	if (!(c->flags & DETECT_P2P) || peer->nranks != c->nranks || peer->rank != c->p2p_peer)
		return 0;
	a = side_of(c, c->p2p_peer);
	b = side_of(peer, c->rank);
	if (a < 0 || b < 0)
		return 0;
	mine = send ? c->p2p_tx[a] : c->p2p_rx[a];
	theirs = send ? peer->p2p_rx[b] : peer->p2p_tx[b];
	return mine > 0 && theirs < mine;
}

int
rules_quiet(uint32_t flags, uint64_t colls, uint64_t enter_ns, uint64_t progress_ns,
	    uint64_t now, uint64_t thr)
{
	if (colls && rules_age(now, enter_ns) < thr)
		return 0;
	return !(flags & DETECT_GPU) || rules_age(now, progress_ns) >= thr;
}
