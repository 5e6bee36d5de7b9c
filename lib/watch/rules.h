/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rules the node view (detect.c) and the step's leader (judge*.c) both
 * apply, written once so that the two cannot drift: how old a time is, which
 * communicators count, what "waiting" and "stuck on the GPU" are, and which
 * exits are failures.  Pure functions over plain values.
 *
 * The communicator rules take the fields they read rather than a struct:
 * detect.c reads them from struct detect_comm, the judge from its compact
 * copy of them (judge_int.h), and both must give the same answer.
 */
#ifndef PL_WATCH_RULES_H
#define PL_WATCH_RULES_H

#include <stddef.h>
#include <stdint.h>

/* now - t, or 0 when t is later (a rank's clock is input too). */
uint64_t rules_age(uint64_t now, uint64_t t);

/* 1 when a communicator's state can be judged: its slot was not busy (a
 * writer inside: no launch or GPU state) and it is not finalized.  flags
 * are detect_comm.flags (DETECT_*). */
int rules_usable(uint32_t flags);

/*
 * 1 when a rank waits in the last collective it entered for longer than
 * thr: it entered one (colls > 0) more than thr before now, nothing since,
 * and, when its GPU part is recorded (DETECT_GPU in flags), has not
 * completed it (done < colls).
 */
int rules_waiting(uint32_t flags, uint64_t colls, uint64_t done, uint64_t enter_ns,
		  uint64_t now, uint64_t thr);

/*
 * 1 when a usable communicator with its GPU part recorded has a collective
 * in flight on the GPU (ch_inflight kernel channels started, not stopped)
 * with no channel progress for longer than thr since progress_ns.
 */
int rules_gpu_stuck(uint32_t flags, uint64_t ch_inflight, uint64_t progress_ns, uint64_t now,
		    uint64_t thr);

/*
 * 1 when a member that completed the collective another member's kernel
 * still runs (its done count above that member's) did so within margin
 * of now (progress_ns its last progress): the two may have been read on
 * either side of that completion (a node reads its records one after the
 * other; the leader holds each node's summary of another moment), so a
 * kernel that ends a moment later shows as stuck for one round.  Nothing
 * is named stuck while this holds; the next round tells.  margin: the
 * node view's DETECT_EXIT_GRACE_NS, the judge's end grace (at least two
 * watch intervals).
 */
int rules_just_completed(uint32_t flags, uint64_t done, uint64_t stuck_done, uint64_t progress_ns,
			 uint64_t now, uint64_t margin);

/* The text src (at most srclen bytes, NUL-terminated or not) into dst of
 * size bytes (size > 0), cut to fit, always NUL-terminated. */
void rules_text_copy(char *dst, size_t size, const char *src, size_t srclen);

/*
 * The exit rule: what a rank's known wait status says of its end.
 *   RULES_EXIT_ZERO    exit 0;
 *   RULES_EXIT_ENDED   ended as Slurm ends a step (scancel, the time limit,
 *                      --kill-on-bad-exit): killed by SIGTERM, SIGKILL,
 *                      SIGINT or SIGHUP, or exit code 128 + one of them (what
 *                      a shell between Slurm and the program reports);
 *   RULES_EXIT_FAILED  any other: an exit code other than 0, SIGSEGV,
 *                      SIGABRT, SIGBUS, ...
 * An exit whose status is not known yet is each caller's to weigh (the
 * judge counts it as ended, the node view names it after its grace).
 */
enum rules_exit {
	RULES_EXIT_ZERO,
	RULES_EXIT_ENDED,
	RULES_EXIT_FAILED
};

enum rules_exit rules_exit_class(int status);

/* The signal that ended a RULES_EXIT_ENDED status (killed by it, or exit
 * code 128 + it); 0 for the other classes. */
int rules_exit_signal(int status);

/*
 * The exit rule for an exit 0: a culprit only when a live peer waits for
 * it.  1 when a peer's state in a communicator the exited rank belonged
 * to (flags, colls, done, enter_ns) waits past thr (rules_waiting) in a
 * collective the exited rank never reached (more than its exited_colls).
 * A normal end with skew (the others gone, one rank writing its last
 * checkpoint) has nobody waiting and names nobody.
 */
int rules_exit0_awaited(uint64_t exited_colls, uint32_t flags, uint64_t colls, uint64_t done,
			uint64_t enter_ns, uint64_t now, uint64_t thr);

struct detect_sig;

/*
 * 1 when two members called the same collective at one position: the same
 * func and datatype and count and, for Broadcast and Reduce, root (the
 * other collectives have none).  Strict: a caller leaves out a member whose
 * func is not known ("").
 */
int rules_sig_same(const struct detect_sig *a, const struct detect_sig *b);

/*
 * The mismatch rule over the n signatures s[0..n) of the members of one
 * communicator at one position: how many kinds of signature there are (1:
 * all alike; counted up to RULES_SIG_KINDS + 1, which means more), and in
 * *major the index of a member whose kind has more members than any other
 * (SIZE_MAX on a tie: then no kind is the odd one).
 */
#define RULES_SIG_KINDS 8
size_t rules_sig_split(const struct detect_sig *const *s, size_t n, size_t *major);

struct detect_comm;

/*
 * The unposted rule, for a rank whose p2p operation is in flight in c
 * (DETECT_P2P: to its member p2p_peer, a send with DETECT_SEND) and that
 * peer's state in the same communicator: 1 when the peer posted fewer of
 * the matching operations than the rank did of its own (a send meets the
 * peer's receives from it, a receive the peer's sends to it; both counted
 * as entered, detect.h's p2p_tx and p2p_rx): the one waited for never
 * came.  0 when it did, when the peer is no neighbour of the rank (rank
 * +- 1 modulo nranks) or the counts are not known.
 */
int rules_p2p_unposted(const struct detect_comm *c, const struct detect_comm *peer);

/*
 * Whether one communicator of a rank has been quiet for thr: it entered
 * no collective (enter_ns, the last of its colls entered; none when colls
 * is 0) and, with the GPU part (DETECT_GPU), no kernel of it started or
 * stopped (progress_ns: p2p transfers too) within thr of now.  The unposted rule
 * names a neighbour idle outside NCCL only when all its communicators are
 * quiet for the hang threshold: one that completed a collective a moment
 * ago (a stage whose busy TP member just came back, read at the instant
 * between its collective and its send) is moving, not hung.
 */
int rules_quiet(uint32_t flags, uint64_t colls, uint64_t enter_ns, uint64_t progress_ns,
		uint64_t now, uint64_t thr);

struct detect_proc;

/*
 * The busy rule, for a rank its peers have waited for since wait_ns: 1
 * when it is busy outside NCCL (a checkpoint, a compile, data loading):
 * its process tree (detect.h's detect_proc, sampled by layoutd) made
 * progress within thr of now, and the wait is shorter than busy_thr.
 * rules_progress() is the first half alone.
 */
int rules_busy(const struct detect_proc *p, uint64_t wait_ns, uint64_t now, uint64_t thr,
	       uint64_t busy_thr);
int rules_progress(const struct detect_proc *p, uint64_t now, uint64_t thr);

#endif
