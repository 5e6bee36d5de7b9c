/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Detection as a table of cases: the node's ranks as detect_rank values
 * written by hand, and the verdicts each must give (kind, rank, comm, func,
 * seq, peer, how long), derived by hand from the rules in detect.h.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "detect.h"
#include "tap.h"

#define S	1000000000ULL		/* one second in ns */
#define NOW	(1000 * S)
#define T	(60 * S)		/* the hang threshold */
#define TP	0x7701ULL
#define DP	0x7702ULL
#define PP	0x7703ULL

static struct detect_rank rk[8];
static size_t nrk;

/* A rank of job 9 step 0 with no communicator. */
static struct detect_rank *
rank_add(int64_t rank)
{
	struct detect_rank *r = &rk[nrk++];

	memset(r, 0, sizeof(*r));
	r->job_id = 9;
	r->rank = rank;
	r->pid = 100 + rank;
	return r;
}

/* Its state in a communicator: colls entered (the last at enter, seq
 * colls - 1, AllReduce), done completed, inflight channels with the last
 * channel progress at prog; GPU part recorded. */
static struct detect_comm *
comm_add(struct detect_rank *r, uint64_t hash, uint64_t colls, uint64_t enter, uint64_t done,
	 uint64_t inflight, uint64_t prog)
{
	struct detect_comm *c = &r->comm[r->ncomm++];

	memset(c, 0, sizeof(*c));
	c->hash = hash;
	snprintf(c->name, sizeof(c->name), "%s", hash == TP ? "tp" : "dp");
	c->rank = (int32_t)r->rank;
	c->nranks = 4;
	c->flags = DETECT_GPU;
	c->colls = colls;
	c->seq = colls ? colls - 1 : 0;
	snprintf(c->func, sizeof(c->func), "%s", colls ? "AllReduce" : "");
	c->enter_ns = enter;
	c->done = done;
	c->ch_inflight = inflight;
	c->progress_ns = prog;
	return c;
}

/* Every communicator of the node's ranks has n members. */
static void
members(int32_t n)
{
	size_t i, k;

	for (i = 0; i < nrk; i++)
		for (k = 0; k < rk[i].ncomm; k++)
			rk[i].comm[k].nranks = n;
}

/* Four ranks in TP, all through collective 10 a second ago: healthy. */
static void
healthy4(void)
{
	int i;

	nrk = 0;
	for (i = 0; i < 4; i++)
		comm_add(rank_add(i), TP, 10, NOW - S, 10, 0, NOW - S);
}

/* Rank 3 still at 9 collectives; ranks 0-2 entered the 10th `wait` ago
 * (rank 0 five seconds earlier still), kernels started and stuck. */
static void
lag(uint64_t wait)
{
	int i;

	nrk = 0;
	for (i = 0; i < 3; i++)
		comm_add(rank_add(i), TP, 10, NOW - wait - (i == 0 ? 5 * S : 0), 9, 4,
			 NOW - wait);
	comm_add(rank_add(3), TP, 9, NOW - wait - 10 * S, 9, 0, NOW - wait - 9 * S);
}

static void c_healthy(void) { healthy4(); }
static void c_behind_recent(void) { lag(5 * S); }
static void c_lag(void) { lag(T + 10 * S); }
static void c_lag_boundary(void) { lag(T); rk[0].comm[0].enter_ns = NOW - T; }
static void c_lag_boundary1(void) { lag(T); rk[0].comm[0].enter_ns = NOW - T - 1; }

/* Peers' last collective completed on the GPU: they are not waiting in it. */
static void
c_lag_done(void)
{
	int i;

	lag(T + 10 * S);
	for (i = 0; i < 3; i++) {
		rk[i].comm[0].done = 10;
		rk[i].comm[0].ch_inflight = 0;
	}
}

/* Without kernel-channel events: entry times alone. */
static void
c_lag_nogpu(void)
{
	size_t i;

	lag(T + 10 * S);
	for (i = 0; i < nrk; i++)
		rk[i].comm[0].flags = 0;
}

/* The lagger's slot was busy: it is left out, and the three stuck kernels
 * wait for a member this node cannot read: no verdict until it can. */
static void c_lag_busy(void) { lag(T + 10 * S); rk[3].comm[0].flags |= DETECT_BUSY; }

/* The lagger belongs to another step: not a peer, so the three wait for a
 * member elsewhere and are not named here. */
static void c_lag_other_step(void) { lag(T + 10 * S); rk[3].step_id = 1; }

/* The peers' clock values lie in the future: no verdict, no wrap. */
static void
c_future(void)
{
	int i;

	lag(T + 10 * S);
	for (i = 0; i < 3; i++) {
		rk[i].comm[0].enter_ns = NOW + 100 * S;
		rk[i].comm[0].progress_ns = NOW + 100 * S;
	}
}

/* Rank 3 lags in TP only; DP (ranks 1 and 3) is healthy. */
static void
c_two_comms(void)
{
	lag(T + 10 * S);
	comm_add(&rk[1], DP, 4, NOW - S, 4, 0, NOW - S);
	comm_add(&rk[3], DP, 4, NOW - S, 4, 0, NOW - S);
}

/* Exits: rank 2 exit 0 before it entered the 10th collective, rank 1
 * killed by SIGSEGV, rank 3 exit 1; rank 0 waits in the 10th. */
static void
c_exits(void)
{
	lag(T + 10 * S);
	rk[2].comm[0].colls = 9;
	rk[1].exited = 1;
	rk[1].exit_status = SIGSEGV;		/* a wait status: signalled */
	rk[2].exited = 1;
	rk[2].exit_status = 0;
	rk[3].exited = 1;
	rk[3].exit_status = 1 << 8;		/* exited with 1 */
	rk[1].exit_known = rk[2].exit_known = rk[3].exit_known = 1;
}

/* Rank 3 gone `ago`, with the status known (status) or not (-1). */
static void
c_exit_at(int status, uint64_t ago)
{
	healthy4();
	rk[3].exited = 1;
	rk[3].exit_known = status >= 0;
	rk[3].exit_status = status >= 0 ? status : 0;
	rk[3].exit_ns = NOW - ago;
}

static void c_exit0_recent(void) { c_exit_at(0, 2 * S); }
static void c_exit0_threshold(void) { c_exit_at(0, T); }
static void c_exit0_late(void) { c_exit_at(0, T + 1); }

/* The same while ranks 0-2 wait in the 11th collective, which rank 3
 * never reached: its exit 0 holds live peers. */
static void
c_exit0_awaited(void)
{
	int i;

	c_exit0_late();
	for (i = 0; i < 3; i++) {
		rk[i].comm[0].colls = 11;
		rk[i].comm[0].enter_ns = NOW - T - 2 * S;
	}
}
static void c_exit1_at_once(void) { c_exit_at(1 << 8, S / 10); }
static void c_exit_unknown_recent(void) { c_exit_at(-1, S / 2); }
static void c_exit_unknown_grace(void) { c_exit_at(-1, DETECT_EXIT_GRACE_NS); }
static void c_exit_unknown_late(void) { c_exit_at(-1, 2 * S); }
static void c_exit_unknown_when(void) { c_exit_at(-1, 0); rk[3].exit_ns = 0; }
static void c_term_recent(void) { c_exit_at(SIGTERM, 2 * S); }
static void c_kill_recent(void) { c_exit_at(SIGKILL, 2 * S); }
static void c_shell_term_recent(void) { c_exit_at((128 + SIGTERM) << 8, 2 * S); }
static void c_term_late(void) { c_exit_at(SIGTERM, T + 1); }
static void c_segv_at_once(void) { c_exit_at(SIGSEGV, S / 10); }

/* scancel on a node whose ranks were waiting on each other: 0 and 2
 * killed by SIGTERM half a second ago, 1 and 3 by SIGKILL (the end of
 * KillWait): the step ending, no rank to blame. */
static void
c_scancel(void)
{
	int i;

	lag(T + 10 * S);
	for (i = 0; i < 4; i++) {
		rk[i].exited = 1;
		rk[i].exit_known = 1;
		rk[i].exit_status = i % 2 ? SIGKILL : SIGTERM;
		rk[i].exit_ns = NOW - S / 2;
	}
}

/* Rank 3 stopped and its TP peers wait in kernels stuck on it; then rank
 * 3 is gone, its status not in yet (within the grace) or killed by srun's
 * SIGTERM: the peers only wait on a member that is gone, and are never
 * named for it (the cluster test's stop:13:3 ended like this). */
static void
c_lagger_gone(int status, uint64_t ago)
{
	lag(T + 10 * S);
	rk[3].exited = 1;
	rk[3].exit_known = status >= 0;
	rk[3].exit_status = status >= 0 ? status : 0;
	rk[3].exit_ns = NOW - ago;
}

static void c_lagger_gone_unknown(void) { c_lagger_gone(-1, S / 2); }
static void c_lagger_gone_term(void) { c_lagger_gone(SIGTERM, 2 * S); }

/* The same with rank 2 crashed (SIGSEGV) a second before: only it. */
static void
c_scancel_after_segv(void)
{
	c_scancel();
	rk[2].exit_status = SIGSEGV;
	rk[2].exit_ns = NOW - 3 * S / 2;
}

/* Rank 2's kernel stuck with all collectives entered: a GPU verdict. */
static void
c_gpu(uint64_t quiet)
{
	healthy4();
	rk[2].comm[0].done = 9;
	rk[2].comm[0].ch_inflight = 3;
	rk[2].comm[0].progress_ns = NOW - quiet;
}

static void c_gpu_stuck(void) { c_gpu(T + 2 * S); }
static void c_gpu_boundary(void) { c_gpu(T); }

/* The same without the GPU part recorded: nothing to judge by. */
static void c_gpu_nogpu(void) { c_gpu(T + 2 * S); rk[2].comm[0].flags = 0; }

/* Several collectives queued after the stuck one: func and seq unknown. */
static void c_gpu_queued(void) { c_gpu(T + 2 * S); rk[2].comm[0].done = 7; }

/* A finalized communicator is not judged. */
static void c_gpu_final(void) { c_gpu(T + 2 * S); rk[2].comm[0].flags |= DETECT_FINAL; }

/* The four in TP collective 10, entered 65 s ago and stuck; rank 2 called
 * AllGather where the others called AllReduce. */
static void
c_mismatch(void)
{
	int i;

	nrk = 0;
	for (i = 0; i < 4; i++)
		comm_add(rank_add(i), TP, 10, NOW - T - 5 * S + (uint64_t)i * S, 9, 4,
			 NOW - T - 5 * S);
	snprintf(rk[2].comm[0].func, sizeof(rk[2].comm[0].func), "AllGather");
}

/* The same in a communicator of 8, 4 of them elsewhere: the leader's. */
static void c_mismatch_elsewhere(void) { c_mismatch(); members(8); }

/* Rank 3 never initialised: the others healthy. */
static void
c_uninit_healthy(void)
{
	healthy4();
	memset(rk[3].comm, 0, sizeof(rk[3].comm));
	rk[3].ncomm = 0;
}

/* Rank 3 never initialised while the others are stuck in TP: it cannot be
 * named (no slot says it belongs), and the three only wait for a fourth
 * member this node cannot see: nothing is named here (the step's leader
 * sees the whole communicator). */
static void
c_uninit_stuck(void)
{
	lag(T + 10 * S);
	memset(rk[3].comm, 0, sizeof(rk[3].comm));
	rk[3].ncomm = 0;
}

/* Rank 1 stopped: TP pairs {0,1} {2,3}, DP pairs {0,2} {1,3}.  Rank 0,
 * held in TP, never reaches the DP collective rank 2 waits in: only rank 1
 * is named (as the NCCL driver showed with --fault stop:1:3). */
#define TP1	0x7711ULL
#define DP1	0x7712ULL
static void
c_cascade(void)
{
	nrk = 0;
	comm_add(rank_add(0), TP, 13, NOW - 70 * S, 12, 2, NOW - 70 * S);
	comm_add(&rk[0], DP, 3, NOW - 80 * S, 3, 0, NOW - 80 * S);
	comm_add(rank_add(1), TP, 12, NOW - 71 * S, 12, 0, NOW - 71 * S);
	comm_add(&rk[1], DP1, 3, NOW - 80 * S, 3, 0, NOW - 80 * S);
	comm_add(rank_add(2), TP1, 16, NOW - 72 * S, 16, 0, NOW - 72 * S);
	comm_add(&rk[2], DP, 4, NOW - 70 * S, 3, 2, NOW - 70 * S);
	comm_add(rank_add(3), TP1, 16, NOW - 72 * S, 16, 0, NOW - 72 * S);
	comm_add(&rk[3], DP1, 4, NOW - 70 * S, 3, 2, NOW - 70 * S);
	members(2);
}

/* A cycle: rank 0 waits on rank 1 in TP, rank 1 on rank 0 in DP. */
static void
c_cycle(void)
{
	nrk = 0;
	comm_add(rank_add(0), TP, 5, NOW - 70 * S, 4, 2, NOW - 70 * S);
	comm_add(&rk[0], DP, 2, NOW - 100 * S, 2, 0, NOW - 100 * S);
	comm_add(rank_add(1), TP, 4, NOW - 100 * S, 4, 0, NOW - 100 * S);
	comm_add(&rk[1], DP, 3, NOW - 70 * S, 2, 2, NOW - 70 * S);
	members(2);
}

/* Rank 2's kernel never completes in TP {2,3}: ranks 2 and 3, stuck on
 * the GPU there, never reach DP, where ranks 0 and 1 wait for them.  The
 * stuck TP kernels are named, not the DP lag they cause (as the NCCL driver
 * showed with --fault stuck:2:3). */
static void
c_stuck_holds(void)
{
	nrk = 0;
	comm_add(rank_add(0), TP, 13, NOW - 75 * S, 13, 0, NOW - 75 * S);
	comm_add(&rk[0], DP, 4, NOW - 70 * S, 3, 2, NOW - 70 * S);
	comm_add(rank_add(1), TP, 13, NOW - 75 * S, 13, 0, NOW - 75 * S);
	comm_add(&rk[1], DP1, 4, NOW - 70 * S, 3, 2, NOW - 70 * S);
	comm_add(rank_add(2), TP1, 16, NOW - 71 * S, 15, 2, NOW - 71 * S);
	comm_add(&rk[2], DP, 3, NOW - 80 * S, 3, 0, NOW - 80 * S);
	comm_add(rank_add(3), TP1, 16, NOW - 71 * S, 15, 2, NOW - 71 * S);
	comm_add(&rk[3], DP1, 3, NOW - 80 * S, 3, 0, NOW - 80 * S);
	members(2);
}

static void
c_cycle_nogpu(void)
{
	size_t i;

	c_cycle();
	for (i = 0; i < nrk; i++) {
		rk[i].comm[0].flags = 0;
		rk[i].comm[1].flags = 0;
	}
}

/* Every rank's kernel stuck in the 10th collective, none completed it:
 * with all 4 members here the node infers every one; with 8 members (four
 * elsewhere) it names none, for the step's leader to judge. */
static void
c_all_stuck(int32_t n)
{
	int i;

	nrk = 0;
	for (i = 0; i < 4; i++)
		comm_add(rank_add(i), TP, 10, NOW - T - 5 * S, 9, 2, NOW - T - 5 * S);
	members(n);
}

static void c_all_stuck_here(void) { c_all_stuck(4); }
static void c_all_stuck_elsewhere(void) { c_all_stuck(8); }

/* Rank 2 stuck in a p2p transfer while its peers completed theirs: its
 * other end, waiting for data, would look the same; never named here. */
static void c_gpu_p2p(void) { c_gpu(T + 2 * S); rk[2].comm[0].flags |= DETECT_P2P; }

/* Rank 2's kernel of the 10th collective quiet 6 s past the threshold
 * while its three peers completed it and wait in the 11th (their kernels
 * quiet too, waiting on it): rank 2, observed; not a lagger, they only
 * wait. */
static void
c_gpu_peers_on(void)
{
	int i;

	nrk = 0;
	for (i = 0; i < 4; i++)
		if (i == 2)
			comm_add(rank_add(i), TP, 10, NOW - T - 7 * S, 9, 3, NOW - T - 6 * S);
		else
			comm_add(rank_add(i), TP, 11, NOW - T - 5 * S, 10, 2, NOW - T - 5 * S);
}

/* Rank 2's p2p transfer on the pipeline (its other end elsewhere) stuck
 * while its three TP peers wait for it in the 10th TP collective: it holds
 * them, so the node names it, inferred (the other end may be the cause);
 * they only wait. */
static void
c_gpu_p2p_holds(void)
{
	struct detect_comm *c;
	int i;

	nrk = 0;
	for (i = 0; i < 4; i++)
		comm_add(rank_add(i), TP, i == 2 ? 9 : 10, NOW - T - 5 * S, 9, i == 2 ? 0 : 2,
			 NOW - T - 5 * S);
	c = comm_add(&rk[2], PP, 3, NOW - T - 4 * S, 2, 2, NOW - T - 2 * S);
	c->flags |= DETECT_P2P;
	c->p2p_peer = 6;
}

/* pp2 on one node: rank 0's receive from rank 1 stuck 2 s past the
 * threshold; rank 1 posted 4 sends to it where rank 0 entered its 5th
 * receive, and it has been in no NCCL operation since before that (a rank
 * that hangs outside NCCL): rank 1, the sender that never posted. */
static void
c_unposted(void)
{
	struct detect_comm *c;

	nrk = 0;
	c = comm_add(rank_add(0), PP, 0, NOW - T - 3 * S, 0, 2, NOW - T - 2 * S);
	c->flags |= DETECT_P2P;
	c->p2p_peer = 1;
	c->p2p_rx[0] = c->p2p_rx[1] = c->p2p_tx[0] = c->p2p_tx[1] = 5;
	c = comm_add(rank_add(1), PP, 0, NOW - T - 3 * S, 0, 0, NOW - T - 3 * S);
	c->p2p_tx[0] = c->p2p_tx[1] = 4;
	c->p2p_rx[0] = c->p2p_rx[1] = 5;
	members(2);
}

/* The same, rank 1's TP collective (its other members elsewhere) completed
 * half a second ago: read at the moment between that collective and its
 * send (a stage whose busy TP member just came back), it moves; nothing
 * named. */
static void
c_unposted_just_moved(void)
{
	c_unposted();
	comm_add(&rk[1], TP, 40, NOW - T - 9 * S, 40, 0, NOW - S / 2)->nranks = 8;
}

/* Rank 2 stuck where its local peers completed, in a communicator of 8:
 * its own record shows it (observed), whatever the other four do. */
static void c_gpu_wide(void) { c_gpu(T + 2 * S); members(8); }

struct want {
	enum detect_kind kind;
	int64_t rank;
	uint64_t hash;
	const char *func;
	uint64_t seq;
	int64_t peer;
	uint64_t for_ns;
	int status;
	int ev;			/* 0: DETECT_OBSERVED, else DETECT_INFERRED */
};

struct tcase {
	const char *name;
	void (*setup)(void);
	size_t n;
	struct want v[4];
};

static const struct tcase cases[] = {
	{ "healthy", c_healthy, 0, { { 0 } } },
	{ "one behind, peers waiting 5 s", c_behind_recent, 0, { { 0 } } },
	{ "rank 3 not entering, peers waiting 70 s", c_lag, 1,
	  { { DETECT_NOT_ENTERED, 3, TP, "AllReduce", 9, 0, T + 15 * S, 0, 0 } } },
	{ "peers waiting exactly the threshold", c_lag_boundary, 0, { { 0 } } },
	{ "peers waiting the threshold and 1 ns", c_lag_boundary1, 1,
	  { { DETECT_NOT_ENTERED, 3, TP, "AllReduce", 9, 0, T + 1, 0, 0 } } },
	{ "peers completed their collective", c_lag_done, 0, { { 0 } } },
	{ "no kernel-channel events", c_lag_nogpu, 1,
	  { { DETECT_NOT_ENTERED, 3, TP, "AllReduce", 9, 0, T + 15 * S, 0, 0 } } },
	{ "the lagger's slot busy: its waiting peers are not named", c_lag_busy, 0,
	  { { 0 } } },
	{ "the lagger in another step: its waiting peers are not named", c_lag_other_step, 0,
	  { { 0 } } },
	{ "times in the future", c_future, 0, { { 0 } } },
	{ "lagging in TP, healthy in DP", c_two_comms, 1,
	  { { DETECT_NOT_ENTERED, 3, TP, "AllReduce", 9, 0, T + 15 * S, 0, 0 } } },
	{ "a stopped rank held its TP peer out of DP: only it is named", c_cascade, 2,
	  { { DETECT_NOT_ENTERED, 1, TP, "AllReduce", 12, 0, 70 * S, 0, 0 },
	    { DETECT_NOT_ENTERED, 1, DP1, "AllReduce", 3, 3, 70 * S, 0, 0 } } },
	{ "a cycle of waits, both stuck on the GPU: both named", c_cycle, 2,
	  { { DETECT_GPU_STUCK, 0, TP, "AllReduce", 4, -1, 70 * S, 0, DETECT_INFERRED },
	    { DETECT_GPU_STUCK, 1, DP, "AllReduce", 2, -1, 70 * S, 0, DETECT_INFERRED } } },
	{ "a cycle of waits, no GPU part: both named", c_cycle_nogpu, 2,
	  { { DETECT_NOT_ENTERED, 0, DP, "AllReduce", 2, 1, 70 * S, 0, DETECT_INFERRED },
	    { DETECT_NOT_ENTERED, 1, TP, "AllReduce", 4, 0, 70 * S, 0, DETECT_INFERRED } } },
	{ "a stuck TP kernel held its ranks out of DP: the kernels are named",
	  c_stuck_holds, 2,
	  { { DETECT_GPU_STUCK, 2, TP1, "AllReduce", 15, -1, 71 * S, 0, DETECT_INFERRED },
	    { DETECT_GPU_STUCK, 3, TP1, "AllReduce", 15, -1, 71 * S, 0, DETECT_INFERRED } } },
	{ "exits: SIGSEGV and 1 before 0", c_exits, 3,
	  { { DETECT_EXITED, 1, 0, "", 0, -1, 0, SIGSEGV, 0 },
	    { DETECT_EXITED, 3, 0, "", 0, -1, 0, 1 << 8, 0 },
	    { DETECT_EXITED, 2, 0, "", 0, -1, 0, 0, 0 } } },
	{ "exit 0 two seconds ago: the end of a step, no verdict", c_exit0_recent, 0, { { 0 } } },
	{ "exit 0 exactly the threshold ago", c_exit0_threshold, 0, { { 0 } } },
	{ "exit 0 the threshold and 1 ns ago, nobody waiting for it: a normal end", c_exit0_late,
	  0, { { 0 } } },
	{ "exit 0 with a live peer waiting where it never reached", c_exit0_awaited, 1,
	  { { DETECT_EXITED, 3, 0, "", 0, -1, 0, 0, 0 } } },
	{ "exit 1 a tenth of a second ago: at once", c_exit1_at_once, 1,
	  { { DETECT_EXITED, 3, 0, "", 0, -1, 0, 1 << 8, 0 } } },
	{ "gone half a second, status not yet known", c_exit_unknown_recent, 0, { { 0 } } },
	{ "gone exactly the grace, status not known", c_exit_unknown_grace, 0, { { 0 } } },
	{ "gone two seconds, status never came: named, status -1", c_exit_unknown_late, 1,
	  { { DETECT_EXITED, 3, 0, "", 0, -1, 0, -1, 0 } } },
	{ "gone at an unknown time, status not known", c_exit_unknown_when, 1,
	  { { DETECT_EXITED, 3, 0, "", 0, -1, 0, -1, 0 } } },
	{ "killed by SIGTERM two seconds ago (scancel): no verdict", c_term_recent, 0,
	  { { 0 } } },
	{ "killed by SIGKILL two seconds ago (scancel's KillWait): no verdict", c_kill_recent, 0,
	  { { 0 } } },
	{ "exit 143 two seconds ago (a shell's SIGTERM): no verdict", c_shell_term_recent, 0,
	  { { 0 } } },
	{ "killed by SIGTERM the threshold and 1 ns ago, the step runs on: named",
	  c_term_late, 1, { { DETECT_EXITED, 3, 0, "", 0, -1, 0, SIGTERM, 0 } } },
	{ "killed by SIGSEGV a tenth of a second ago: at once", c_segv_at_once, 1,
	  { { DETECT_EXITED, 3, 0, "", 0, -1, 0, SIGSEGV, 0 } } },
	{ "scancel: every rank killed by SIGTERM or SIGKILL: no verdict", c_scancel, 0,
	  { { 0 } } },
	{ "the lagger gone, its status not in yet: its waiting peers are not named",
	  c_lagger_gone_unknown, 0, { { 0 } } },
	{ "the lagger killed by SIGTERM 2 s ago: its waiting peers are not named",
	  c_lagger_gone_term, 0, { { 0 } } },
	{ "scancel after a SIGSEGV: only the crash", c_scancel_after_segv, 1,
	  { { DETECT_EXITED, 2, 0, "", 0, -1, 0, SIGSEGV, 0 } } },
	{ "rank 2 calls AllGather where 3 peers call AllReduce: the mismatch alone", c_mismatch,
	  1, { { DETECT_MISMATCH, 2, TP, "AllGather", 9, -1, T + 5 * S, 0, 0 } } },
	{ "the same with members elsewhere: the leader's to judge", c_mismatch_elsewhere, 0,
	  { { 0 } } },
	{ "a kernel stuck 62 s", c_gpu_stuck, 1,
	  { { DETECT_GPU_STUCK, 2, TP, "AllReduce", 9, -1, T + 2 * S, 0, 0 } } },
	{ "a kernel quiet exactly the threshold", c_gpu_boundary, 0, { { 0 } } },
	{ "a stuck kernel, GPU part not recorded", c_gpu_nogpu, 0, { { 0 } } },
	{ "a stuck kernel with more queued", c_gpu_queued, 1,
	  { { DETECT_GPU_STUCK, 2, TP, "", 0, -1, T + 2 * S, 0, 0 } } },
	{ "a stuck kernel in a finalized comm", c_gpu_final, 0, { { 0 } } },
	{ "a rank never initialised, the rest healthy", c_uninit_healthy, 0, { { 0 } } },
	{ "a rank never initialised, the rest stuck: nothing named here", c_uninit_stuck, 0,
	  { { 0 } } },
	{ "every kernel stuck, every member here: all four inferred", c_all_stuck_here, 4,
	  { { DETECT_GPU_STUCK, 0, TP, "AllReduce", 9, -1, T + 5 * S, 0, DETECT_INFERRED },
	    { DETECT_GPU_STUCK, 1, TP, "AllReduce", 9, -1, T + 5 * S, 0, DETECT_INFERRED },
	    { DETECT_GPU_STUCK, 2, TP, "AllReduce", 9, -1, T + 5 * S, 0, DETECT_INFERRED },
	    { DETECT_GPU_STUCK, 3, TP, "AllReduce", 9, -1, T + 5 * S, 0, DETECT_INFERRED } } },
	{ "every kernel stuck, four members elsewhere: none named here",
	  c_all_stuck_elsewhere, 0, { { 0 } } },
	{ "a p2p transfer stuck: never named on its own node", c_gpu_p2p, 0, { { 0 } } },
	{ "stuck where its peers completed and went on: it, observed", c_gpu_peers_on, 1,
	  { { DETECT_GPU_STUCK, 2, TP, "AllReduce", 9, -1, T + 6 * S, 0, 0 } } },
	{ "a p2p transfer stuck that holds its TP peers: it, inferred", c_gpu_p2p_holds, 1,
	  { { DETECT_GPU_STUCK, 2, PP, "AllReduce", 2, -1, T + 2 * S, 0, DETECT_INFERRED } } },
	{ "a receive stuck on a neighbour that never posted its send and is idle: it",
	  c_unposted, 1, { { DETECT_NOT_ENTERED, 1, PP, "Send", 0, 0, T + 2 * S, 0, 0 } } },
	{ "the same neighbour completed a TP collective half a second ago: nothing",
	  c_unposted_just_moved, 0, { { 0 } } },
	{ "stuck where local peers completed, members elsewhere: observed", c_gpu_wide, 1,
	  { { DETECT_GPU_STUCK, 2, TP, "AllReduce", 9, -1, T + 2 * S, 0, 0 } } },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* Whether verdict v is w; says what differs. */
static int
same(const struct detect_verdict *v, const struct want *w, char *why, size_t size)
{
	if (v->kind != w->kind)
		snprintf(why, size, "kind %s, want %s", detect_kind_name(v->kind),
			 detect_kind_name(w->kind));
	else if (v->rank != w->rank)
		snprintf(why, size, "rank %lld, want %lld", (long long)v->rank, (long long)w->rank);
	else if (v->comm_hash != w->hash)
		snprintf(why, size, "comm %llx, want %llx", (unsigned long long)v->comm_hash,
			 (unsigned long long)w->hash);
	else if (strcmp(v->func, w->func) != 0)
		snprintf(why, size, "func '%s', want '%s'", v->func, w->func);
	else if (v->seq != w->seq)
		snprintf(why, size, "seq %llu, want %llu", (unsigned long long)v->seq,
			 (unsigned long long)w->seq);
	else if (v->peer_rank != w->peer)
		snprintf(why, size, "peer %lld, want %lld", (long long)v->peer_rank,
			 (long long)w->peer);
	else if (v->for_ns != w->for_ns)
		snprintf(why, size, "for %llu ns, want %llu", (unsigned long long)v->for_ns,
			 (unsigned long long)w->for_ns);
	else if (v->exit_status != w->status)
		snprintf(why, size, "status %d, want %d", v->exit_status, w->status);
	else if (v->evidence != (w->ev ? w->ev : DETECT_OBSERVED))
		snprintf(why, size, "evidence %s, want %s", detect_evidence_name(v->evidence),
			 detect_evidence_name(w->ev ? w->ev : DETECT_OBSERVED));
	else if (v->pid != 100 + w->rank || v->job_id != 9)
		snprintf(why, size, "pid %lld job %llu", (long long)v->pid,
			 (unsigned long long)v->job_id);
	else
		return 1;
	return 0;
}

static void
run_cases(void)
{
	size_t i, k, n;

	for (i = 0; i < NCASES; i++) {
		struct detect_verdict out[8];
		char why[160] = "";
		int good;

		cases[i].setup();
		memset(out, 0, sizeof(out));
		n = detect_run(rk, nrk, NOW, T, out, 8);
		good = n == cases[i].n;
		if (!good)
			snprintf(why, sizeof(why), "%zu verdicts, want %zu", n, cases[i].n);
		for (k = 0; good && k < n; k++)
			good = same(&out[k], &cases[i].v[k], why, sizeof(why));
		if (!ok(good, "%s", cases[i].name))
			diag("  verdict %zu: %s", k ? k - 1 : 0, why);
	}
}

/* The summary of a snapshot: slots in order, busy flagged, the GPU flag
 * from the event mask, channels in flight. */
static void
summarize_test(void)
{
	static struct reader_snap snap;
	static struct detect_rank r;

	memset(&snap, 0, sizeof(snap));
	snap.hdr.job_id = 9;
	snap.hdr.step_id = 2;
	snap.hdr.rank = 6;
	snap.hdr.pid = 77;
	snap.hdr.event_mask = (1u << 1) | (1u << 6);
	snap.slot[1].state = READER_SLOT_OK;
	snap.slot[1].ident.comm_hash = TP;
	snap.slot[1].ident.rank = 2;
	snap.slot[1].ident.nranks = 8;
	snap.slot[1].ident.state = PLW_SLOT_ACTIVE;
	snprintf(snap.slot[1].ident.name.c, PLW_NAME_LEN, "tp-group");
	snap.slot[1].launch.colls = 12;
	snap.slot[1].launch.seq_number = 11;
	snprintf(snap.slot[1].launch.func.c, PLW_TEXT_LEN, "AllGather");
	snap.slot[1].launch.enqueue_ns = 555;
	snap.slot[1].gpu.ch_started = 40;
	snap.slot[1].gpu.ch_stopped = 36;
	snap.slot[1].gpu.done = 11;
	snap.slot[1].gpu.progress_ns = 600;
	snap.slot[4].state = READER_SLOT_BUSY;
	snap.slot[4].ident.comm_hash = DP;
	detect_summarize(&snap, &r);
	is_int(r.ncomm, 2, "summary: two communicators (slot 1, busy slot 4)");
	ok(r.job_id == 9 && r.step_id == 2 && r.rank == 6 && r.pid == 77,
	   "summary: job, step, rank, pid");
	ok(r.comm[0].hash == TP && r.comm[0].rank == 2 && r.comm[0].nranks == 8 &&
	   strcmp(r.comm[0].name, "tp-group") == 0, "summary: the communicator's identity");
	ok(r.comm[0].colls == 12 && r.comm[0].seq == 11 && strcmp(r.comm[0].func, "AllGather") == 0 &&
	   r.comm[0].enter_ns == 555, "summary: the last collective entered");
	ok(r.comm[0].done == 11 && r.comm[0].ch_inflight == 4 && r.comm[0].progress_ns == 600,
	   "summary: the GPU state");
	is_int(r.comm[0].flags, DETECT_GPU, "summary: the GPU part is recorded (KernelCh)");
	is_int(r.comm[1].flags, DETECT_BUSY, "summary: the busy slot is flagged");
	snap.hdr.event_mask = 1u << 1;
	detect_summarize(&snap, &r);
	is_int(r.comm[0].flags, 0, "summary: without KernelCh no GPU flag");
	ok(r.comm[0].nwait == 0 && r.comm[0].wait_sum_ns == 0 && r.comm[0].gap_sum_ns == 0,
	   "summary: without KernelCh no window");
}

/*
 * The window from the wait ring.  Entry i holds wait 1000 + i and gap
 * 10 + i; with 11 completions only entries 0-10 are valid (the rest hold
 * another lap's values that must not count): waits 11 * 1000 + 55, gaps
 * 11 * 10 + 55.  With 40 completions every entry is valid (9-40 by
 * number): waits 32 * 1000 + 496, gaps 32 * 10 + 496.
 */
static void
window_test(void)
{
	static struct reader_snap snap;
	static struct detect_rank r;
	struct plw_gpu *g = &snap.slot[0].gpu;
	int i;

	memset(&snap, 0, sizeof(snap));
	snap.hdr.event_mask = (1u << 1) | (1u << 6);
	snap.slot[0].state = READER_SLOT_OK;
	snap.slot[0].ident.comm_hash = TP;
	snap.slot[0].ident.state = PLW_SLOT_ACTIVE;
	for (i = 0; i < PLW_RING; i++) {
		g->ring[i].wait_ns = 1000 + (uint64_t)i;
		g->ring[i].gap_ns = 10 + (uint64_t)i;
	}
	g->done = 11;
	detect_summarize(&snap, &r);
	ok(r.comm[0].nwait == 11 && r.comm[0].wait_sum_ns == 11 * 1000 + 55 &&
	   r.comm[0].gap_sum_ns == 11 * 10 + 55,
	   "window: 11 completions, only the 11 entries written count");
	if (r.comm[0].nwait != 11)
		diag("  nwait %u wait %llu gap %llu", r.comm[0].nwait,
		     (unsigned long long)r.comm[0].wait_sum_ns,
		     (unsigned long long)r.comm[0].gap_sum_ns);
	g->done = 40;
	detect_summarize(&snap, &r);
	ok(r.comm[0].nwait == PLW_RING && r.comm[0].wait_sum_ns == 32 * 1000 + 496 &&
	   r.comm[0].gap_sum_ns == 32 * 10 + 496, "window: 40 completions, the whole ring");
	g->done = 0;
	detect_summarize(&snap, &r);
	ok(r.comm[0].nwait == 0 && r.comm[0].wait_sum_ns == 0 && r.comm[0].gap_sum_ns == 0,
	   "window: nothing completed, an empty window");
	/* A record is input: sums saturate instead of wrapping. */
	g->done = 3;
	g->ring[1].wait_ns = UINT64_MAX - 5;
	g->ring[2].gap_ns = UINT64_MAX;
	detect_summarize(&snap, &r);
	ok(r.comm[0].nwait == 3 && r.comm[0].wait_sum_ns == UINT64_MAX &&
	   r.comm[0].gap_sum_ns == UINT64_MAX, "window: huge values saturate, never wrap");
	/* The gaps less the p2p time in them (ring_p2p); a record claiming
	 * more p2p than gap counts the gap as 0, never below. */
	for (i = 0; i < PLW_RING; i++) {
		g->ring[i].gap_ns = 100;
		g->ring_p2p[i] = i % 2 ? 60 : 0;
	}
	g->ring_p2p[0] = UINT64_MAX;
	g->done = 4;
	detect_summarize(&snap, &r);
	ok(r.comm[0].nwait == 4 && r.comm[0].gap_sum_ns == 0 + 40 + 100 + 40,
	   "window: each gap less its p2p time, none below 0 (%llu)",
	   (unsigned long long)r.comm[0].gap_sum_ns);
}

int
main(void)
{
	struct detect_verdict one;
	size_t n;

	plan((int)NCASES + 9 + 4 + 3 + 1);
	run_cases();
	summarize_test();
	window_test();

	/* More verdicts than room: counted, the first written. */
	c_exits();
	memset(&one, 0, sizeof(one));
	n = detect_run(rk, nrk, NOW, T, &one, 1);
	is_int(n, 3, "max 1: all three verdicts counted");
	ok(one.kind == DETECT_EXITED && one.rank == 1, "max 1: the first is written");
	is_int(detect_run(rk, 0, NOW, T, NULL, 0), 0, "no ranks: no verdict");
	return done_testing();
}
