/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The judge as a table of cases: a whole step's ranks written by hand, and
 * the findings each must give (kind, group, culprits, peers, how long,
 * node, and for some the whole line), derived by hand from the rules in
 * judge.h.  Then the slow-rank rule over rounds, bounded output, and the
 * group names for every axis.
 *
 * The step: tp2 dp4 pp2, 16 ranks, rank = tp + 2 dp + 8 pp (Megatron
 * order), on 4 nodes of 4 GPUs (node k holds ranks 4k to 4k+3, GPU r % 4).
 *   TP groups {2m, 2m+1}: "TP group dp of PP stage pp"
 *   DP groups {tp + 8 pp + 2 d}: "DP group tp of PP stage pp"
 *   PP groups {r, r + 8}: "PP group tp + 2 dp"
 * Every rank has the four communicators tp, dp, pp, world, in that order.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "tap.h"

#define S	1000000000ULL		/* one second in ns */
#define US	1000ULL
#define NOW	(1000 * S)
#define T	(60 * S)		/* the hang threshold */
#define STALL	(300 * S)
#define NR	16

enum { C_TP, C_DP, C_PP, C_WORLD };

static struct judge_rank rk[NR];
static struct judge_node nodes[4] = {
	{ .name = "node0", .last_ns = NOW }, { .name = "node1", .last_ns = NOW },
	{ .name = "node2", .last_ns = NOW }, { .name = "node3", .last_ns = NOW },
};
static struct judge_step step = {
	.job_id = 77, .step_id = 0, .uid = 1000, .world = NR,
	.size = { 2, 1, 1, 4, 2 }, .nodes = nodes, .nnodes = 4,
};
static struct judge_params par;

static uint32_t co_tp(int r) { return (uint32_t)(r % 2); }
static uint32_t co_dp(int r) { return (uint32_t)((r / 2) % 4); }
static uint32_t co_pp(int r) { return (uint32_t)(r / 8); }

/* The communicator hashes: one per group, by kind. */
static uint64_t
hash_of(int r, int kind)
{
	switch (kind) {
	case C_TP:
		return 0x1000 + co_dp(r) + 4 * co_pp(r);
	case C_DP:
		return 0x2000 + co_tp(r) + 2 * co_pp(r);
	case C_PP:
		return 0x3000 + co_tp(r) + 2 * co_dp(r);
	}
	return 0x4000;
}

static struct detect_comm *
cm(int r, int kind)
{
	return &rk[r].st.comm[kind];
}

/* A healthy step: every rank through its collectives a second ago,
 * completed, equal windows (wait 100 us, gap 9.9 ms). */
static void
healthy(void)
{
	static const char *const names[4] = { "tp", "dp", "pp", "world" };
	static const int sizes[4] = { 2, 4, 2, NR };
	int r, k;

	memset(rk, 0, sizeof(rk));
	for (k = 0; k < 4; k++) {
		nodes[k].lost = nodes[k].leader = nodes[k].unheard = nodes[k].late = 0;
		nodes[k].last_ns = NOW;
	}
	for (r = 0; r < NR; r++) {
		struct judge_rank *j = &rk[r];

		j->st.job_id = 77;
		j->st.rank = r;
		j->st.pid = 100 + r;
		j->node = (uint32_t)(r / 4);
		j->gpu = r % 4;
		snprintf(j->nic, sizeof(j->nic), "mlx5_%d", r % 4);
		j->co[JUDGE_TP] = co_tp(r);
		j->co[JUDGE_DP] = co_dp(r);
		j->co[JUDGE_PP] = co_pp(r);
		j->present = 1;
		j->st.ncomm = 4;
		for (k = 0; k < 4; k++) {
			struct detect_comm *c = cm(r, k);

			c->hash = hash_of(r, k);
			snprintf(c->name, sizeof(c->name), "%s", names[k]);
			c->nranks = sizes[k];
			c->flags = DETECT_GPU;
			c->colls = k == C_TP ? 200 : k == C_DP ? 50 : 10;
			c->seq = c->colls - 1;
			snprintf(c->func, sizeof(c->func), "AllReduce");
			c->enter_ns = NOW - S;
			c->done = c->colls;
			c->progress_ns = NOW - S;
			c->nwait = k == C_WORLD ? 10 : 32;
			c->wait_sum_ns = c->nwait * 100 * US;
			c->gap_sum_ns = c->nwait * 9900 * US;
		}
	}
}

/* Rank r has entered collective colls of comm kind at `at`, and it has
 * not completed (channels in flight, quiet since). */
static void
in_coll(int r, int kind, uint64_t colls, uint64_t at)
{
	struct detect_comm *c = cm(r, kind);

	c->colls = colls;
	c->seq = colls - 1;
	c->enter_ns = at;
	c->done = colls - 1;
	c->ch_inflight = 2;
	c->progress_ns = at;
}

/* Rank r has entered and completed `colls` collectives of kind. */
static void
done_at(int r, int kind, uint64_t colls, uint64_t at)
{
	struct detect_comm *c = cm(r, kind);

	c->colls = colls;
	c->seq = colls - 1;
	c->enter_ns = at;
	c->done = colls;
	c->ch_inflight = 0;
	c->progress_ns = at;
}

static void c_healthy(void) { healthy(); }

/* DP group {9,11,13,15} (nodes 2 and 3): 9, 11, 15 entered DP #50 (seq
 * 50), 70, 68, 66 s ago; 13 never did. */
static void
c_not_entered(void)
{
	healthy();
	in_coll(9, C_DP, 51, NOW - 70 * S);
	in_coll(11, C_DP, 51, NOW - 68 * S);
	in_coll(15, C_DP, 51, NOW - 66 * S);
}

/* Rank r's process tree: made progress `ago` (0: never), cpu in
 * thousandths of a core, writes in bytes a second. */
static void
tree(int r, uint64_t ago, uint64_t cpu, uint64_t wbps)
{
	struct detect_proc *p = &rk[r].st.proc;

	memset(p, 0, sizeof(*p));
	p->known = 1;
	p->state = 'R';
	p->nprocs = 3;
	p->threads = 40;
	p->cpu_milli = cpu;
	p->write_bps = wbps;
	p->progress_ns = ago ? NOW - ago : 0;
}

/* c_not_entered, 13 busy outside NCCL: 1.9 cores, writing 310 MB/s a
 * second ago (a checkpoint): a warning, not a hang. */
static void
c_busy(void)
{
	c_not_entered();
	tree(13, S, 1900, 310000000);
}

/* The same, its peers waiting past busy_threshold (600 s here): a hang,
 * saying it was busy. */
static void
c_busy_long(void)
{
	c_busy();
	in_coll(9, C_DP, 51, NOW - 700 * S);
}

/* 13's tree last made progress 70 s ago (past the threshold): a hang. */
static void
c_busy_no_more(void)
{
	c_not_entered();
	tree(13, 70 * S, 0, 0);
}

/* 13 in D state 65 s, no progress: a hang, stuck in the kernel. */
static void
c_dstate(void)
{
	c_not_entered();
	tree(13, 0, 0, 0);
	rk[13].st.proc.state = 'D';
	rk[13].st.proc.dstate_ns = NOW - 65 * S;
	snprintf(rk[13].st.proc.wchan, sizeof(rk[13].st.proc.wchan), "nfs_wait_bit_killable");
}

/* The same with 11 missing too: one finding naming 11 and 13. */
static void
c_two_missing(void)
{
	healthy();
	in_coll(9, C_DP, 51, NOW - 70 * S);
	in_coll(15, C_DP, 51, NOW - 66 * S);
}

/* Rank 13's record refused by its node (no communicator: unwatched),
 * its DP peers 9, 11, 15 in DP #51 70, 68, 66 s: 13 is named, inferred,
 * not their stuck kernels. */
static void
c_unwatched(void)
{
	c_not_entered();
	rk[13].st.ncomm = 0;
}

/* 12 unwatched as well: the DP group misses one rank (tp 1, pp 1), and
 * only 13 has its coordinates; 12's groups wait on nothing. */
static void
c_unwatched_other(void)
{
	c_unwatched();
	rk[12].st.ncomm = 0;
}

/* Peers waiting only 50 s: no finding yet. */
static void
c_not_yet(void)
{
	healthy();
	in_coll(9, C_DP, 51, NOW - 50 * S);
	in_coll(11, C_DP, 51, NOW - 50 * S);
	in_coll(15, C_DP, 51, NOW - 50 * S);
}

/*
 * Rank 12 stopped after DP #50, before TP #201.  Its TP peer 13 waits in
 * TP (70 s) and never reaches DP #51, where 9, 11, 15 wait for it (65 s);
 * 12's own DP peers 8, 10, 14 wait for 12 (65 s).  Only 12 is named (in
 * TP and in its DP group), not 13.
 */
static void
c_cascade(void)
{
	int r;

	healthy();
	in_coll(13, C_TP, 201, NOW - 70 * S);
	for (r = 8; r < 16; r++)
		if (r != 12 && r != 13)
			in_coll(r, C_DP, 51, NOW - 65 * S);
}

/* The same without the GPU part: 13 is held by its wait in TP alone. */
static void
c_cascade_nogpu(void)
{
	int r, k;

	c_cascade();
	for (r = 0; r < NR; r++)
		for (k = 0; k < 4; k++)
			cm(r, k)->flags = 0;
}

/*
 * The kernel of TP #201 never completes in TP {2,3}: 2 and 3, stuck on the
 * GPU there, never reach DP #51, where 0, 4, 6 and 1, 5, 7 wait for them.
 * The stuck kernels are named, not the DP lag they cause.
 */
static void
c_stuck_holds(void)
{
	int r;

	healthy();
	in_coll(2, C_TP, 201, NOW - 71 * S);
	in_coll(3, C_TP, 201, NOW - 71 * S);
	for (r = 0; r < 8; r++)
		if (r != 2 && r != 3)
			in_coll(r, C_DP, 51, NOW - 65 * S);
}

/*
 * A cycle of waits, no GPU part: ranks 0 and 1 also share a communicator
 * "pair"; 0 waits on 1 in TP (#201), 1 on 0 in pair (#3).  Each lagger is
 * held by its own wait in the other communicator, so both are named.
 */
static void
c_cycle(void)
{
	int r, k;

	healthy();
	for (r = 0; r < 2; r++) {
		struct detect_comm *c = cm(r, 4);

		*c = *cm(r, C_TP);
		c->hash = 0x5000;
		snprintf(c->name, sizeof(c->name), "pair");
		done_at(r, 4, 2, NOW - 80 * S);
		rk[r].st.ncomm = 5;
	}
	in_coll(0, C_TP, 201, NOW - 70 * S);
	in_coll(1, 4, 3, NOW - 70 * S);
	for (r = 0; r < 2; r++)
		for (k = 0; k < 5; k++)
			cm(r, k)->flags = 0;
}

/* TP group {4,5}: both entered TP #201, kernels quiet for 70 s. */
static void
c_gpu_stuck(void)
{
	healthy();
	in_coll(4, C_TP, 201, NOW - 70 * S);
	in_coll(5, C_TP, 201, NOW - 71 * S);
}

/* Only 5's kernel still runs; 4 completed TP #201 (and waits in nothing). */
static void
c_gpu_stuck_one(void)
{
	healthy();
	in_coll(5, C_TP, 201, NOW - 71 * S);
	done_at(4, C_TP, 201, NOW - 71 * S);
}

/* 5's kernel of TP #201 has run 71 s, and 4 completed #201 half a second
 * ago: the records read on either side of the completion (at the end of
 * a peer's long pause, say), 5's ending a moment later.  Seen on a loaded
 * machine as a GpuStuck critical for one round.  Nothing yet. */
static void
c_gpu_stuck_skew(void)
{
	healthy();
	in_coll(5, C_TP, 201, NOW - 71 * S);
	done_at(4, C_TP, 201, NOW - S / 2);
}

/* The same, and 4 went on into TP #202, where it waits 70 s (its kernel
 * quiet, waiting on 5): 5 is not a rank that never entered #202 but one
 * whose kernel of #201 still runs where its peer's completed; 4 waits. */
static void
c_gpu_stuck_peer_on(void)
{
	c_gpu_stuck_one();
	in_coll(4, C_TP, 202, NOW - 70 * S);
}

/* Rank r's last collective in comm kind was func on count dtype. */
static void
sig(int r, int kind, const char *func, uint64_t count, const char *dtype, int32_t root)
{
	struct detect_comm *c = cm(r, kind);

	snprintf(c->func, sizeof(c->func), "%s", func);
	snprintf(c->dtype, sizeof(c->dtype), "%s", dtype);
	c->count = count;
	c->root = root;
}

/* DP group {9,11,13,15}: all entered DP #51 65-70 s ago, kernels quiet;
 * 9, 11, 15 called AllReduce of 1048576 bf16, 13 AllGather: a divergent
 * code path on 13 (the group hangs). */
static void
c_mismatch(void)
{
	int r;

	healthy();
	for (r = 9; r < 16; r += 2) {
		in_coll(r, C_DP, 51, NOW - (uint64_t)(65 + r % 5) * S);
		sig(r, C_DP, r == 13 ? "AllGather" : "AllReduce", 1048576, "ncclBfloat16", -1);
	}
}

/* The same, 13 calling AllReduce of twice the count. */
static void
c_mismatch_count(void)
{
	c_mismatch();
	sig(13, C_DP, "AllReduce", 2097152, "ncclBfloat16", -1);
}

/* A Broadcast from another root: 13 says root 1, the others root 0. */
static void
c_mismatch_root(void)
{
	int r;

	c_mismatch();
	for (r = 9; r < 16; r += 2)
		sig(r, C_DP, "Broadcast", 4096, "ncclInt8", r == 13 ? 1 : 0);
}

/* TP {4,5}: 4 calls AllReduce of 1048576, 5 of 2097152, both waiting in
 * TP #201: no majority, both named. */
static void
c_mismatch_tie(void)
{
	healthy();
	in_coll(4, C_TP, 201, NOW - 70 * S);
	in_coll(5, C_TP, 201, NOW - 71 * S);
	sig(4, C_TP, "AllReduce", 1048576, "ncclBfloat16", -1);
	sig(5, C_TP, "AllReduce", 2097152, "ncclBfloat16", -1);
}

/* c_mismatch 50 s into the wait: below the threshold, nothing yet. */
static void
c_mismatch_young(void)
{
	int r;

	c_mismatch();
	for (r = 9; r < 16; r += 2)
		in_coll(r, C_DP, 51, NOW - 50 * S);
}

/* The same calls alike at DP #51 (the counts of AllGather as bytes and
 * datatype ncclInt8 on every rank): no mismatch, the stuck kernels. */
static void
c_mismatch_none(void)
{
	int r;

	c_mismatch();
	for (r = 9; r < 16; r += 2)
		sig(r, C_DP, "AllGather", 2097152, "ncclInt8", -1);
}

/* Rank 6 (node 1, GPU 2) exited with 1 a tenth of a second ago. */
static void
c_exit1(void)
{
	healthy();
	rk[6].st.exited = 1;
	rk[6].st.exit_known = 1;
	rk[6].st.exit_status = 1 << 8;
	rk[6].st.exit_ns = NOW - S / 10;
}

/* Rank 6 exited with 0 two seconds ago: the end of a step. */
static void
c_exit0_recent(void)
{
	c_exit1();
	rk[6].st.exit_status = 0;
	rk[6].st.exit_ns = NOW - 2 * S;
}

/* ... and the threshold and a second ago, nobody waiting for it: a normal
 * end with skew (the others still finishing), nobody named. */
static void
c_exit0_late(void)
{
	c_exit0_recent();
	rk[6].st.exit_ns = NOW - T - S;
}

/* The same while its TP peer 7 waits 70 s in TP #201, which rank 6 never
 * reached: named. */
static void
c_exit0_awaited(void)
{
	c_exit0_late();
	in_coll(7, C_TP, 201, NOW - 70 * S);
}

/* Rank 3 killed by SIGKILL, its TP peer 2 waiting 70 s in TP: the exit is
 * named, the stuck kernel of 2 (its effect) is not. */
static void
c_exit_holds(void)
{
	healthy();
	rk[3].st.exited = 1;
	rk[3].st.exit_known = 1;
	rk[3].st.exit_status = SIGKILL;
	rk[3].st.exit_ns = NOW - 70 * S;
	in_coll(2, C_TP, 201, NOW - 70 * S);
}

/* Rank r exited with wait status st, `ago` before NOW. */
static void
exit_at(int r, int st, uint64_t ago)
{
	rk[r].st.exited = 1;
	rk[r].st.exit_known = 1;
	rk[r].st.exit_status = st;
	rk[r].st.exit_ns = NOW - ago;
}

/* scancel: every rank killed by SIGTERM 3 s ago, 10 ms apart, one of
 * them (rank 9) with no status yet: the step ended, nobody named. */
static void
c_cancel(void)
{
	int r;

	healthy();
	for (r = 0; r < NR; r++)
		exit_at(r, SIGTERM, 3 * S - (uint64_t)r * 10000000ULL);
	rk[9].st.exit_known = 0;
	rk[9].st.exit_status = 0;
}

/* The same half a second after: the step is seen ending already. */
static void
c_cancel_early(void)
{
	int r;

	healthy();
	for (r = 0; r < NR; r++)
		exit_at(r, r % 2 ? SIGKILL : SIGTERM, S / 2);
}

/* A cancel during which two ranks fail as their peers go (an NCCL error,
 * exit 1; a shell's 143): still the step ending. */
static void
c_cancel_fails(void)
{
	c_cancel();
	exit_at(4, 1 << 8, 3 * S - 50000000ULL);
	exit_at(5, 143 << 8, 3 * S - 60000000ULL);
}

/* Half of the ranks killed (not more): no step end.  Rank 0 was killed
 * 6 s ago, 1 to 7 3 s ago, after its grace: only rank 0 is named. */
static void
c_half_killed(void)
{
	int r;

	healthy();
	for (r = 1; r < NR / 2; r++)
		exit_at(r, SIGTERM, 3 * S - (uint64_t)r * 10000000ULL);
	exit_at(0, SIGTERM, 6 * S);
}

/* A lone rank (6) killed by SIGKILL 3 s ago (the OOM killer): named. */
static void
c_lone_kill(void)
{
	healthy();
	exit_at(6, SIGKILL, 3 * S);
}

/* ... 1 s ago: within the grace, not yet. */
static void
c_lone_kill_soon(void)
{
	healthy();
	exit_at(6, SIGKILL, S);
}

/* Rank 13 exits with 7, then Slurm kills the others (SIGKILL 0.1 s
 * later): only rank 13 is named. */
static void
c_fail_then_kills(void)
{
	int r;

	healthy();
	for (r = 0; r < NR; r++)
		exit_at(r, SIGKILL, 3 * S - S / 10);
	exit_at(13, 7 << 8, 3 * S);
}

/* Rank 13 exits with 7; 20 s later its peers time out waiting on it and
 * abort (exit 3, SIGABRT): only rank 13. */
static void
c_fail_then_timeouts(void)
{
	int r;

	healthy();
	for (r = 0; r < NR; r++)
		exit_at(r, r % 2 ? 3 << 8 : SIGABRT, 10 * S);
	exit_at(13, 7 << 8, 30 * S);
}

/* Ranks 6 and 9 fail at the same moment (SIGSEGV, exit 1): both named. */
static void
c_two_fail(void)
{
	healthy();
	exit_at(6, 1 << 8, S / 10);
	exit_at(9, SIGSEGV, S / 5);
}

/* Rank 6 killed 30 s ago, its peers timing out 10 s ago: only 6. */
static void
c_kill_then_timeouts(void)
{
	int r;

	healthy();
	for (r = 0; r < NR; r++)
		exit_at(r, 3 << 8, 10 * S);
	exit_at(6, SIGKILL, 30 * S);
}

/* Every rank exited 0, the last the threshold and a second ago: the end
 * of a healthy step, nobody named. */
static void
c_exit0_all(void)
{
	int r;

	healthy();
	for (r = 0; r < NR; r++)
		exit_at(r, 0, T + S + (uint64_t)r * S);
}

/* Everyone idle outside NCCL for 400 s: a checkpoint. */
static void
c_stalled(void)
{
	int r, k;

	healthy();
	for (r = 0; r < NR; r++)
		for (k = 0; k < 4; k++) {
			cm(r, k)->enter_ns = NOW - 400 * S - (uint64_t)r * S;
			cm(r, k)->progress_ns = NOW - 400 * S - (uint64_t)r * S;
		}
}

/* Idle 200 s only: below the stall threshold. */
static void
c_stalled_short(void)
{
	int r, k;

	healthy();
	for (r = 0; r < NR; r++)
		for (k = 0; k < 4; k++) {
			cm(r, k)->enter_ns = NOW - 200 * S;
			cm(r, k)->progress_ns = NOW - 200 * S;
		}
}

/* Idle 400 s but rank 2 entered TP #201 that 3 never did: a hang, not a
 * stall. */
static void
c_stall_vs_hang(void)
{
	c_stalled();
	in_coll(2, C_TP, 201, NOW - 400 * S);
}

/* Idle 400 s without the GPU part: "idle" cannot be told from "waiting". */
static void
c_stall_nogpu(void)
{
	int r, k;

	c_stalled();
	for (r = 0; r < NR; r++)
		for (k = 0; k < 4; k++)
			cm(r, k)->flags = 0;
}

/* Node 2 (ranks 8-11) lost 12 s ago; the rest healthy. */
static void
c_node_lost(void)
{
	int r;

	healthy();
	nodes[2].lost = 1;
	nodes[2].last_ns = NOW - 12 * S;
	for (r = 8; r < 12; r++)
		rk[r].present = 0;
}

/* Node 1 acts for the leader, node 0, gone before it was ever heard here;
 * node 2 failed over to it, node 3 never did (it may still reach the
 * leader): one finding, the leader unreachable, node 3 not judged. */
static void
c_acting(void)
{
	int r;

	healthy();
	nodes[0].lost = nodes[0].leader = 1;
	nodes[0].last_ns = 0;
	nodes[3].lost = nodes[3].unheard = 1;
	nodes[3].last_ns = 0;
	for (r = 0; r < NR; r++)
		if (rk[r].node == 0 || rk[r].node == 3)
			rk[r].present = 0;
}

/* Node 2 lost while 13 and 15 are stuck in DP #51 waiting for 9 and 11
 * (on node 2): the node is named, not the kernels it holds. */
static void
c_node_lost_holds(void)
{
	c_node_lost();
	in_coll(13, C_DP, 51, NOW - 70 * S);
	in_coll(15, C_DP, 51, NOW - 70 * S);
}

/*
 * Pipelines of p2p transfers (PP communicators count no collectives): the
 * transfer of PP group {3, 11} never completes (both kernels in flight 71
 * s), so 3 never enters TP #201, where its TP peer 2 waits; 2 is then
 * absent from its own PP transfer with 10, whose kernel waits 69 s.  Only
 * the transfer that holds the others is named: PP group {2, 10} waits on a
 * member held in TP.
 */
static void
c_pp_held(void)
{
	int r;

	healthy();
	for (r = 0; r < NR; r++)
		done_at(r, C_PP, 0, NOW - S);
	in_coll(3, C_PP, 1, NOW - 71 * S);
	in_coll(11, C_PP, 1, NOW - 71 * S);
	in_coll(10, C_PP, 1, NOW - 69 * S);
	in_coll(2, C_TP, 201, NOW - 70 * S);
	for (r = 0; r < NR; r++)
		cm(r, C_PP)->colls = 0;
}

/* Rank r is in a p2p operation with peer (its rank in comm kind), a send
 * or not, entered `at` and quiet since. */
static void
in_p2p(int r, int kind, int32_t peer, int send, uint64_t at)
{
	struct detect_comm *c = cm(r, kind);

	c->flags |= DETECT_P2P | (send ? DETECT_SEND : 0);
	c->p2p_peer = peer;
	c->ch_inflight = 2;
	c->progress_ns = at;
}

/*
 * The transfer of PP group {3, 11} is stuck: 3's send to 11 and 11's
 * receive from 3 in flight (71 and 70 s).  11's TP peer 10 waits for it
 * in TP #201 59 s (not yet past the threshold), and 10's stage-0 peer 2
 * waits 61 s in its receive from 10, which never posted the send: an
 * effect, not named; the stuck transfer is, both ends.
 */
static void
c_p2p_downstream(void)
{
	int r;

	healthy();
	for (r = 0; r < NR; r++) {
		done_at(r, C_PP, 0, NOW - S);
		cm(r, C_PP)->colls = 0;
		cm(r, C_PP)->rank = (int32_t)co_pp(r);
	}
	in_p2p(3, C_PP, 1, 1, NOW - 71 * S);
	in_p2p(11, C_PP, 0, 0, NOW - 70 * S);
	in_p2p(2, C_PP, 1, 0, NOW - 61 * S);
	in_coll(10, C_TP, 201, NOW - 59 * S);
}

/*
 * A chain of p2p transfers in a communicator "chain" of ranks 1, 3 and 5
 * (ranks 0, 1, 2 in it): 1 sends to 3, which receives (both stuck 70 s);
 * 5 receives from 3 (stuck 69 s), which is in flight with 1: 5 is the
 * effect, the transfer between 1 and 3 is named.
 */
static void
c_p2p_chain(void)
{
	static const int mem[3] = { 1, 3, 5 };
	int i;

	healthy();
	for (i = 0; i < 3; i++) {
		struct detect_comm *c = cm(mem[i], 4);

		*c = *cm(mem[i], C_TP);
		c->hash = 0x6000;
		snprintf(c->name, sizeof(c->name), "chain");
		c->rank = i;
		c->nranks = 3;
		done_at(mem[i], 4, 0, NOW - 80 * S);
		c->colls = 0;
		rk[mem[i]].st.ncomm = 5;
	}
	in_p2p(1, 4, 1, 1, NOW - 70 * S);
	in_p2p(3, 4, 0, 0, NOW - 70 * S);
	in_p2p(5, 4, 1, 0, NOW - 69 * S);
}

/* 11's receive from 3 stuck 70 s, 3's send done (it posted no other): no
 * cause is seen, and a hang is never silent: 11 is named. */
static void
c_p2p_alone(void)
{
	int r;

	healthy();
	for (r = 0; r < NR; r++) {
		done_at(r, C_PP, 0, NOW - S);
		cm(r, C_PP)->colls = 0;
		cm(r, C_PP)->rank = (int32_t)co_pp(r);
	}
	in_p2p(11, C_PP, 0, 0, NOW - 70 * S);
}

/* c_p2p_alone with the records' per-peer counts: 11 entered its 5th
 * receive from 3, and 3 posted only 4 sends to it and has been in no NCCL
 * operation since a second before (a rank that hangs outside NCCL at
 * pp2): 3 is named, observed, not the receive that waits on it. */
static void
c_p2p_unposted(void)
{
	int k;

	c_p2p_alone();
	cm(11, C_PP)->p2p_rx[0] = cm(11, C_PP)->p2p_rx[1] = 5;
	cm(11, C_PP)->p2p_tx[0] = cm(11, C_PP)->p2p_tx[1] = 5;
	cm(3, C_PP)->p2p_tx[0] = cm(3, C_PP)->p2p_tx[1] = 4;
	cm(3, C_PP)->p2p_rx[0] = cm(3, C_PP)->p2p_rx[1] = 5;
	for (k = 0; k < 4; k++)
		done_at(3, k, cm(3, k)->colls, NOW - 71 * S);
}

/* The same receive stuck 61 s, but 3 completed TP #200 half a second ago
 * (its TP peer 2 back from a pause outside NCCL, the stage read at the
 * moment between that collective and its send): 3 moves, not named (the
 * receive within the never-silent rule's grace; pause_end_test follows
 * such a round past it). */
static void
c_p2p_unposted_just_moved(void)
{
	c_p2p_unposted();
	in_p2p(11, C_PP, 0, 0, NOW - 61 * S);
	done_at(3, C_TP, 200, NOW - S / 2);
	cm(3, C_TP)->enter_ns = NOW - 62 * S;
}

/* The same stuck 61 s while 3's TP peer 2 has waited 59 s for it in TP
 * #201 (not yet past the threshold): left to the lag rule, which names 3
 * in its TP group a round on; nothing named this round. */
static void
c_p2p_unposted_awaited(void)
{
	c_p2p_unposted();
	in_p2p(11, C_PP, 0, 0, NOW - 61 * S);
	in_coll(2, C_TP, 201, NOW - 59 * S);
}

/* The same stuck 61 s while 3 itself waits 59 s in TP #201 on its peer 2
 * (a stage whose TP group waits on a busy or stopped member: its
 * downstream stage's receive crossed the threshold first): 3 is in NCCL,
 * not idle, and is not named; the lag rule names 2 a round on. */
static void
c_p2p_unposted_in_tp(void)
{
	c_p2p_unposted();
	in_p2p(11, C_PP, 0, 0, NOW - 61 * S);
	in_coll(3, C_TP, 201, NOW - 59 * S);
}

/* The same, 3 busy outside NCCL (1.9 cores, writing): busy, a warning. */
static void
c_p2p_unposted_busy(void)
{
	c_p2p_unposted();
	tree(3, S, 1900, 310000000);
}

/* The same counts with 3's fifth send posted: the data lost on the way,
 * as before (never silent: 11's receive named, inferred). */
static void
c_p2p_posted(void)
{
	c_p2p_unposted();
	cm(3, C_PP)->p2p_tx[0] = cm(3, C_PP)->p2p_tx[1] = 5;
}

/* The same receive stuck only 61 s, a second past the threshold: within
 * the grace the never-silent rule leaves for a cause to cross it (the
 * stages a stopped rank holds cross it a round before its peers do). */
static void
c_p2p_alone_young(void)
{
	c_p2p_alone();
	in_p2p(11, C_PP, 0, 0, NOW - 61 * S);
}

/*
 * A follower's layoutd stopped: node 2's last summary came 31 s ago (late,
 * not yet lost), so the caller leaves its ranks out.  It had 11 in a
 * receive from 3; 3's send to 11 has been in flight 71 s and nothing else
 * is seen.  The wait may be on 11, whose state is not known: nothing named
 * (not even by the never-silent rule) until node 2 is heard or lost.
 */
static void
c_p2p_late_node(void)
{
	int r;

	c_p2p_alone();
	in_p2p(11, C_PP, 0, 0, NOW - S);
	in_p2p(3, C_PP, 1, 1, NOW - 71 * S);
	nodes[2].late = 1;
	nodes[2].last_ns = NOW - 31 * S;
	for (r = 8; r < 12; r++)
		rk[r].present = 0;
}

/*
 * 11's receive from 3 stuck 71 s while 3 is in flight with 11 for a
 * second only (the two nodes' summaries read apart, or 3 posting at last):
 * not both ends of one stuck transfer; 3 moves, and nothing is named this
 * round (the never-silent rule's grace covers the read skew).
 */
static void
c_p2p_fresh_mate(void)
{
	c_p2p_alone();
	in_p2p(11, C_PP, 0, 0, NOW - 61 * S);
	in_p2p(3, C_PP, 1, 1, NOW - S);
}

/* The stuck transfer of c_p2p_downstream, its sender 3 gone half a second
 * ago with no status yet (its timeout aborted it): nothing named yet (the
 * exit waits out its grace), and no stuck kernel named in its place. */
static void
c_p2p_exit_pending(void)
{
	c_p2p_downstream();
	rk[3].st.exited = 1;
	rk[3].st.exit_ns = NOW - S / 2;
}

/*
 * The chain's 1 and 3 in flight with each other (as 1F1B's grouped send
 * and receive leave them, each record holding one peer), while 5, the
 * chain's third member, stopped: it never entered TP #201, where its peer
 * 4 waits 70 s.  5 is named; the transfer waiting in a communicator of
 * the named rank is its effect, not named.
 */
static void
c_p2p_peers_of_lagger(void)
{
	c_p2p_chain();
	done_at(5, 4, 0, NOW - 80 * S);
	in_coll(4, C_TP, 201, NOW - 70 * S);
}

/* Whether case setup is about lost nodes (detect.c knows no nodes). */
static int c_lost(void (*setup)(void));
/* Whether case setup is about the step's end (detect.c names each exit
 * alone) or the p2p rule (detect.c has none). */
static int c_end(void (*setup)(void));

struct want {
	enum judge_kind kind;
	const char *group;
	int64_t cul[4];
	size_t ncul;
	size_t peers;
	uint64_t for_ns;
	int32_t node;
	const char *text;	/* NULL: not checked */
	int ev;			/* 0: DETECT_OBSERVED, else DETECT_INFERRED */
};

struct tcase {
	const char *name;
	void (*setup)(void);
	size_t n;
	struct want f[3];
};

static const struct tcase cases[] = {
	{ "healthy", c_healthy, 0, { { 0 } } },
	{ "rank 13 on node3 never entered DP #51, peers on nodes 2 and 3", c_not_entered, 1,
	  { { JUDGE_NOT_ENTERED, "DP group 1 of PP stage 1", { 13 }, 1, 3, 70 * S, 3,
	      "DP group 1 of PP stage 1: rank 13 on node3 GPU 1 never entered AllReduce #50; "
	      "3 peers waiting 70 s", 0 } } },
	{ "rank 13 busy outside NCCL (1.9 cores, writing 310 MB/s): a warning, not a hang",
	  c_busy, 1,
	  { { JUDGE_BUSY, "TP group 2 of PP stage 1", { 13 }, 1, 0, 70 * S, 3,
	      "TP group 2 of PP stage 1: rank 13 on node3 GPU 1 busy outside NCCL for 70 s: "
	      "1.9 cores, writing 310.0 MB/s; its peers wait in dp AllReduce #50 (a checkpoint, "
	      "a compile, data loading?)", 0 } } },
	{ "busy past busy_threshold: a hang, saying it was busy", c_busy_long, 1,
	  { { JUDGE_NOT_ENTERED, "DP group 1 of PP stage 1", { 13 }, 1, 3, 700 * S, 3,
	      "DP group 1 of PP stage 1: rank 13 on node3 GPU 1 never entered AllReduce #50; "
	      "3 peers waiting 700 s; busy outside NCCL past busy_threshold: 1.9 cores, "
	      "writing 310.0 MB/s", 0 } } },
	{ "its tree made no progress for the threshold: a hang", c_busy_no_more, 1,
	  { { JUDGE_NOT_ENTERED, "DP group 1 of PP stage 1", { 13 }, 1, 3, 70 * S, 3,
	      "DP group 1 of PP stage 1: rank 13 on node3 GPU 1 never entered AllReduce #50; "
	      "3 peers waiting 70 s", 0 } } },
	{ "in D state past the threshold: a hang, stuck in the kernel with its wchan", c_dstate, 1,
	  { { JUDGE_NOT_ENTERED, "DP group 1 of PP stage 1", { 13 }, 1, 3, 70 * S, 3,
	      "DP group 1 of PP stage 1: rank 13 on node3 GPU 1 never entered AllReduce #50; "
	      "3 peers waiting 70 s; stuck in the kernel: D state for 65 s in "
	      "nfs_wait_bit_killable", 0 } } },
	{ "two missing in one group: one finding naming both", c_two_missing, 1,
	  { { JUDGE_NOT_ENTERED, "DP group 1 of PP stage 1", { 11, 13 }, 2, 2, 70 * S, 2,
	      "DP group 1 of PP stage 1: ranks 11 on node2 GPU 3 and 13 on node3 GPU 1 never "
	      "entered AllReduce #50; 2 peers waiting 70 s", 0 } } },
	{ "13 unwatched (record refused), its DP peers wait: 13 named, inferred", c_unwatched, 1,
	  { { JUDGE_NOT_ENTERED, "DP group 1 of PP stage 1", { 13 }, 1, 3, 70 * S, 3,
	      "DP group 1 of PP stage 1: rank 13 on node3 GPU 1 unwatched (its node has no usable "
	      "record of it) while 3 peers have waited 70 s in AllReduce #50; inferred: the only "
	      "member not seen waiting", DETECT_INFERRED } } },
	{ "12 and 13 unwatched, the DP group misses 13: only 13", c_unwatched_other, 1,
	  { { JUDGE_NOT_ENTERED, "DP group 1 of PP stage 1", { 13 }, 1, 3, 70 * S, 3, NULL, DETECT_INFERRED } } },
	{ "peers waiting 50 s: below the threshold", c_not_yet, 0, { { 0 } } },
	{ "TP stall holding DP peers: only the root (12) is named", c_cascade, 2,
	  { { JUDGE_NOT_ENTERED, "TP group 2 of PP stage 1", { 12 }, 1, 1, 70 * S, 3,
	      "TP group 2 of PP stage 1: rank 12 on node3 GPU 0 never entered AllReduce #200; "
	      "1 peer waiting 70 s", 0 },
	    { JUDGE_NOT_ENTERED, "DP group 0 of PP stage 1", { 12 }, 1, 3, 65 * S, 3, NULL, 0 } } },
	{ "the same without kernel events: 13 is held by its TP wait", c_cascade_nogpu, 2,
	  { { JUDGE_NOT_ENTERED, "TP group 2 of PP stage 1", { 12 }, 1, 1, 70 * S, 3, NULL, 0 },
	    { JUDGE_NOT_ENTERED, "DP group 0 of PP stage 1", { 12 }, 1, 3, 65 * S, 3, NULL, 0 } } },
	{ "a stuck TP kernel holds its ranks out of DP: the kernels are named", c_stuck_holds, 1,
	  { { JUDGE_GPU_STUCK, "TP group 1 of PP stage 0", { 2, 3 }, 2, 0, 71 * S, 0, NULL, DETECT_INFERRED } } },
	{ "a cycle of waits: both named", c_cycle, 2,
	  { { JUDGE_NOT_ENTERED, "TP group 0 of PP stage 0", { 1 }, 1, 1, 70 * S, 0, NULL, DETECT_INFERRED },
	    { JUDGE_NOT_ENTERED, "TP group 0 of PP stage 0", { 0 }, 1, 1, 70 * S, 0, NULL, DETECT_INFERRED } } },
	{ "a stuck p2p transfer holds a TP group, whose pipeline partner waits: only it is named",
	  c_pp_held, 1,
	  { { JUDGE_GPU_STUCK, "PP group 3", { 3, 11 }, 2, 0, 71 * S, 0, NULL, DETECT_INFERRED } } },
	{ "a stuck p2p transfer: both ends named, not a stage waiting on a peer that never sent",
	  c_p2p_downstream, 1,
	  { { JUDGE_GPU_STUCK, "PP group 3", { 3, 11 }, 2, 0, 71 * S, 0,
	      "PP group 3: collective 1 stuck on the GPU 71 s, kernels still running on ranks 3 "
	      "on node0 GPU 3 and 11 on node2 GPU 3; inferred: a p2p transfer, whose other end "
	      "waits as it does", DETECT_INFERRED } } },
	{ "a chain of p2p transfers: the stuck one named, not the receive waiting on it",
	  c_p2p_chain, 1,
	  { { JUDGE_GPU_STUCK, "DP group 1 of PP stage 0", { 1, 3 }, 2, 1, 70 * S, 0, NULL, DETECT_INFERRED } } },
	{ "a transfer stuck in the communicator of a rank that stopped: only that rank",
	  c_p2p_peers_of_lagger, 1,
	  { { JUDGE_NOT_ENTERED, "TP group 2 of PP stage 0", { 5 }, 1, 1, 70 * S, 1, NULL, 0 } } },
	{ "a stuck transfer whose sender exited, its status not known yet: nothing named yet",
	  c_p2p_exit_pending, 0, { { 0 } } },
	{ "a node late (its layoutd stopped): a transfer waiting on its rank, nothing named",
	  c_p2p_late_node, 0, { { 0 } } },
	{ "a receive stuck while its sender is in flight with it a second only: not named",
	  c_p2p_fresh_mate, 0, { { 0 } } },
	{ "a stuck receive whose sender is done: named (never silent)", c_p2p_alone, 1,
	  { { JUDGE_GPU_STUCK, "PP group 3", { 11 }, 1, 1, 70 * S, 2, NULL, DETECT_INFERRED } } },
	{ "a stuck receive whose sender never posted it and is idle: the sender named",
	  c_p2p_unposted, 1,
	  { { JUDGE_NOT_ENTERED, "PP group 3", { 3 }, 1, 1, 70 * S, 0,
	      "PP group 3: rank 3 on node0 GPU 3 never posted the Send that rank 11 waits for in "
	      "its Recv, 70 s; it is in no NCCL operation", 0 } } },
	{ "the same sender completed a TP collective half a second ago (read skew): not named",
	  c_p2p_unposted_just_moved, 0, { { 0 } } },
	{ "the same sender awaited in TP too, not yet past the threshold: left to the lag rule",
	  c_p2p_unposted_awaited, 0, { { 0 } } },
	{ "the same sender itself in a TP collective, not yet past the threshold: not named",
	  c_p2p_unposted_in_tp, 0, { { 0 } } },
	{ "the same sender busy outside NCCL: busy, a warning", c_p2p_unposted_busy, 1,
	  { { JUDGE_BUSY, "PP group 3", { 3 }, 1, 1, 70 * S, 0,
	      "PP group 3: rank 3 on node0 GPU 3 never posted the Send that rank 11 waits for in "
	      "its Recv, 70 s; busy outside NCCL: 1.9 cores, writing 310.0 MB/s", 0 } } },
	{ "the sender posted it (lost on the way): the receive, never silent", c_p2p_posted, 1,
	  { { JUDGE_GPU_STUCK, "PP group 3", { 11 }, 1, 1, 70 * S, 2, NULL, DETECT_INFERRED } } },
	{ "the same stuck 61 s: within the grace past the threshold, not named yet",
	  c_p2p_alone_young, 0, { { 0 } } },
	{ "GPU stuck in TP group 2 of PP stage 0", c_gpu_stuck, 1,
	  { { JUDGE_GPU_STUCK, "TP group 2 of PP stage 0", { 4, 5 }, 2, 0, 71 * S, 1,
	      "TP group 2 of PP stage 0: AllReduce #200 stuck on the GPU 71 s, kernels still "
	      "running on ranks 4 on node1 GPU 0 and 5 on node1 GPU 1; inferred: no member "
	      "completed it, any of them may hold the rest", DETECT_INFERRED } } },
	{ "GPU stuck on one member: only it is named", c_gpu_stuck_one, 1,
	  { { JUDGE_GPU_STUCK, "TP group 2 of PP stage 0", { 5 }, 1, 1, 71 * S, 1,
	      "TP group 2 of PP stage 0: AllReduce #200 stuck on the GPU 71 s, kernels still "
	      "running on rank 5 on node1 GPU 1 where 1 of its peers completed it", 0 } } },
	{ "a peer completed it half a second ago (read skew): nothing named yet",
	  c_gpu_stuck_skew, 0, { { 0 } } },
	{ "GPU stuck on one member, its peer waiting in the next: only it, observed",
	  c_gpu_stuck_peer_on, 1,
	  { { JUDGE_GPU_STUCK, "TP group 2 of PP stage 0", { 5 }, 1, 1, 71 * S, 1,
	      "TP group 2 of PP stage 0: AllReduce #200 stuck on the GPU 71 s, kernels still "
	      "running on rank 5 on node1 GPU 1 where 1 of its peers completed it", 0 } } },
	{ "rank 13 calls AllGather where its DP peers call AllReduce: the mismatch, 13 alone",
	  c_mismatch, 1,
	  { { JUDGE_MISMATCH, "DP group 1 of PP stage 1", { 13 }, 1, 0, 69 * S, 3,
	      "DP group 1 of PP stage 1: collective mismatch at collective 51: rank 13 on node3 "
	      "GPU 1 called AllGather (1048576 x ncclBfloat16) where 3 peers called AllReduce "
	      "(1048576 x ncclBfloat16); waiting 69 s", 0 } } },
	{ "the same collective with another count: the mismatch", c_mismatch_count, 1,
	  { { JUDGE_MISMATCH, "DP group 1 of PP stage 1", { 13 }, 1, 0, 69 * S, 3,
	      "DP group 1 of PP stage 1: collective mismatch at collective 51: rank 13 on node3 "
	      "GPU 1 called AllReduce (2097152 x ncclBfloat16) where 3 peers called AllReduce "
	      "(1048576 x ncclBfloat16); waiting 69 s", 0 } } },
	{ "a Broadcast from another root: the mismatch", c_mismatch_root, 1,
	  { { JUDGE_MISMATCH, "DP group 1 of PP stage 1", { 13 }, 1, 0, 69 * S, 3,
	      "DP group 1 of PP stage 1: collective mismatch at collective 51: rank 13 on node3 "
	      "GPU 1 called Broadcast (4096 x ncclInt8, root 1) where 3 peers called Broadcast "
	      "(4096 x ncclInt8, root 0); waiting 69 s", 0 } } },
	{ "two ranks disagree, no majority: both named, said so", c_mismatch_tie, 1,
	  { { JUDGE_MISMATCH, "TP group 2 of PP stage 0", { 4, 5 }, 2, 0, 71 * S, 1,
	      "TP group 2 of PP stage 0: collective mismatch at collective 201: ranks 4 on node1 "
	      "GPU 0 and 5 on node1 GPU 1 disagree: AllReduce (1048576 x ncclBfloat16) vs "
	      "AllReduce (2097152 x ncclBfloat16) (no majority); waiting 71 s", 0 } } },
	{ "a mismatch waited in 50 s: below the threshold", c_mismatch_young, 0, { { 0 } } },
	{ "the same calls on every member: no mismatch, the stuck kernels", c_mismatch_none, 1,
	  { { JUDGE_GPU_STUCK, "DP group 1 of PP stage 1", { 9, 11, 13, 15 }, 4, 0, 69 * S, 2,
	      NULL, DETECT_INFERRED } } },
	{ "exit 1 a tenth of a second ago: at once", c_exit1, 1,
	  { { JUDGE_EXITED, "TP group 3 of PP stage 0", { 6 }, 1, 0, S / 10, 1,
	      "TP group 3 of PP stage 0: rank 6 on node1 GPU 2 exited with status 1; its peers "
	      "will wait on it", 0 } } },
	{ "exit 0 two seconds ago: no finding", c_exit0_recent, 0, { { 0 } } },
	{ "exit 0 past the threshold, nobody waiting for it: no finding", c_exit0_late, 0,
	  { { 0 } } },
	{ "exit 0 with its TP peer waiting where it never reached: named", c_exit0_awaited, 1,
	  { { JUDGE_EXITED, "TP group 3 of PP stage 0", { 6 }, 1, 0, T + S, 1,
	      "TP group 3 of PP stage 0: rank 6 on node1 GPU 2 exited with status 0; a live "
	      "peer waits on it at a collective it never reached", 0 } } },
	{ "a killed rank: named, not its peer's stuck kernel", c_exit_holds, 1,
	  { { JUDGE_EXITED, "TP group 1 of PP stage 0", { 3 }, 1, 0, 70 * S, 0,
	      "TP group 1 of PP stage 0: rank 3 on node0 GPU 3 was killed by signal 9; its "
	      "peers will wait on it", 0 } } },
	{ "scancel: every rank killed by SIGTERM 3 s ago: the step ended, nobody named", c_cancel,
	  0, { { 0 } } },
	{ "every rank killed half a second ago: the step ending", c_cancel_early, 0, { { 0 } } },
	{ "a cancel in which two ranks fail as their peers go: still the step ending",
	  c_cancel_fails, 0, { { 0 } } },
	{ "half of the ranks killed: only the first kill is named", c_half_killed, 1,
	  { { JUDGE_EXITED, "TP group 0 of PP stage 0", { 0 }, 1, 0, 6 * S, 0,
	      "TP group 0 of PP stage 0: rank 0 on node0 GPU 0 was killed by signal 15; its "
	      "peers will wait on it", 0 } } },
	{ "a lone rank killed by SIGKILL 3 s ago: named after the grace", c_lone_kill, 1,
	  { { JUDGE_EXITED, "TP group 3 of PP stage 0", { 6 }, 1, 0, 3 * S, 1,
	      "TP group 3 of PP stage 0: rank 6 on node1 GPU 2 was killed by signal 9; its "
	      "peers will wait on it", 0 } } },
	{ "a lone rank killed 1 s ago: within the grace", c_lone_kill_soon, 0, { { 0 } } },
	{ "exit 7, then Slurm kills the others: only the failure", c_fail_then_kills, 1,
	  { { JUDGE_EXITED, "TP group 2 of PP stage 1", { 13 }, 1, 0, 3 * S, 3,
	      "TP group 2 of PP stage 1: rank 13 on node3 GPU 1 exited with status 7; its "
	      "peers will wait on it", 0 } } },
	{ "exit 7, then the peers time out and abort: only the failure", c_fail_then_timeouts, 1,
	  { { JUDGE_EXITED, "TP group 2 of PP stage 1", { 13 }, 1, 0, 30 * S, 3, NULL, 0 } } },
	{ "two failures at one moment: both named", c_two_fail, 2,
	  { { JUDGE_EXITED, "TP group 3 of PP stage 0", { 6 }, 1, 0, S / 10, 1, NULL, 0 },
	    { JUDGE_EXITED, "TP group 0 of PP stage 1", { 9 }, 1, 0, S / 5, 2,
	      "TP group 0 of PP stage 1: rank 9 on node2 GPU 1 was killed by signal 11; its "
	      "peers will wait on it", 0 } } },
	{ "a kill, then the peers time out: only the kill", c_kill_then_timeouts, 1,
	  { { JUDGE_EXITED, "TP group 3 of PP stage 0", { 6 }, 1, 0, 30 * S, 1, NULL, 0 } } },
	{ "every rank exited 0, past the threshold: the step's end, nobody named", c_exit0_all, 0,
	  { { 0 } } },
	{ "every rank idle 400 s: stalled, nobody blamed", c_stalled, 1,
	  { { JUDGE_STALLED, "world", { 0 }, 0, 0, 400 * S, -1,
	      "world: all 16 ranks idle outside NCCL for 400 s, none in a collective (a "
	      "checkpoint, a stuck file system?)", 0 } } },
	{ "idle 200 s: below the stall threshold", c_stalled_short, 0, { { 0 } } },
	{ "idle, but one rank waits in a collective: a hang, not a stall", c_stall_vs_hang, 1,
	  { { JUDGE_NOT_ENTERED, "TP group 1 of PP stage 0", { 3 }, 1, 1, 400 * S, 0, NULL, 0 } } },
	{ "idle without the GPU part: not judged a stall", c_stall_nogpu, 0, { { 0 } } },
	{ "node 2 lost", c_node_lost, 1,
	  { { JUDGE_NODE_LOST, "world", { 0 }, 0, 0, 12 * S, 2,
	      "world: node node2 lost: no summary for 12 s; its 4 ranks unknown", 0 } } },
	{ "node 2 lost, its DP peers stuck: only the node", c_node_lost_holds, 1,
	  { { JUDGE_NODE_LOST, "world", { 0 }, 0, 0, 12 * S, 2, NULL, 0 } } },
	{ "an acting leader: the leader unreachable, once; a node never heard not lost",
	  c_acting, 1,
	  { { JUDGE_NODE_LOST, "world", { 0 }, 0, 0, 0, 0,
	      "world: the step's leader node0 unreachable; acting for it, summaries come here "
	      "from 2 nodes (node1, node2); 1 not heard from, not judged", 0 } } },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))
#define NLOST	4	/* cases with a lost node */

static int
c_lost(void (*setup)(void))
{
	return setup == c_node_lost || setup == c_node_lost_holds || setup == c_acting ||
	       setup == c_p2p_late_node;
}

#define NEND	20	/* cases about the step's end, the p2p rule or the unwatched
			 * rule (detect.c has neither of the last two) */

/* Whether judge_state_end must say the step is ending in case setup. */
static int
c_ended(void (*setup)(void))
{
	return setup == c_cancel || setup == c_cancel_early || setup == c_cancel_fails;
}

static int
c_end(void (*setup)(void))
{
	return setup == c_cancel || setup == c_cancel_early || setup == c_cancel_fails ||
	       setup == c_half_killed || setup == c_lone_kill || setup == c_lone_kill_soon ||
	       setup == c_fail_then_kills || setup == c_fail_then_timeouts || setup == c_two_fail ||
	       setup == c_kill_then_timeouts || setup == c_exit0_all || setup == c_p2p_downstream ||
	       setup == c_p2p_chain || setup == c_p2p_alone || setup == c_p2p_exit_pending ||
	       setup == c_p2p_alone_young || setup == c_p2p_posted || setup == c_unwatched ||
	       setup == c_unwatched_other || setup == c_p2p_fresh_mate;
}

/* Whether finding f is w; says what differs. */
static int
same(const struct judge_finding *f, const struct want *w, char *why, size_t size)
{
	size_t i;

	if (f->kind != w->kind) {
		snprintf(why, size, "kind %s, want %s", judge_kind_name(f->kind),
			 judge_kind_name(w->kind));
		return 0;
	}
	if (strcmp(f->group, w->group) != 0) {
		snprintf(why, size, "group '%s', want '%s'", f->group, w->group);
		return 0;
	}
	if (f->nculprits != w->ncul || f->ncul_total != w->ncul) {
		snprintf(why, size, "%zu culprits (%zu in all), want %zu", f->nculprits,
			 f->ncul_total, w->ncul);
		return 0;
	}
	for (i = 0; i < w->ncul; i++)
		if (f->culprits[i] != w->cul[i]) {
			snprintf(why, size, "culprit %zu is %lld, want %lld", i,
				 (long long)f->culprits[i], (long long)w->cul[i]);
			return 0;
		}
	if (f->npeers_waiting != w->peers || f->for_ns != w->for_ns || f->node != w->node) {
		snprintf(why, size, "peers %zu for %llu ns node %d, want %zu %llu %d",
			 f->npeers_waiting, (unsigned long long)f->for_ns, (int)f->node, w->peers,
			 (unsigned long long)w->for_ns, (int)w->node);
		return 0;
	}
	if (w->text && strcmp(f->text, w->text) != 0) {
		snprintf(why, size, "text '%s'", f->text);
		return 0;
	}
	if (f->evidence != (w->ev ? w->ev : DETECT_OBSERVED)) {
		snprintf(why, size, "evidence %s, want %s", detect_evidence_name(f->evidence),
			 detect_evidence_name(w->ev ? w->ev : DETECT_OBSERVED));
		return 0;
	}
	/* An inferred finding says so in its text. */
	if ((f->evidence == DETECT_INFERRED) != (strstr(f->text, "inferred") != NULL)) {
		snprintf(why, size, "%s, text '%s'", detect_evidence_name(f->evidence), f->text);
		return 0;
	}
	return 1;
}

/* A verdict as (kind, rank, comm): the judge's and detect_run's agree. */
struct triple {
	int kind;
	int64_t rank;
	uint64_t hash;
	int ev;
};

static int
triple_cmp(const void *a, const void *b)
{
	const struct triple *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind - y->kind;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->ev - y->ev;
}

/* b's n sorted triples without repeats; how many are left. */
static size_t
triple_unique(struct triple *b, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (!k || triple_cmp(&b[k - 1], &b[i]) != 0)
			b[k++] = b[i];
	return k;
}

/*
 * On the whole step given to detect_run as if one node, the hang and exit
 * findings name the same (rank, communicator) pairs as its verdicts: the
 * judge applies detect.c's rules, by groups instead of pairs of ranks.
 */
static int
agrees_with_detect(const struct judge_finding *out, size_t n, char *why, size_t size)
{
	static struct detect_rank dr[NR];
	struct detect_verdict v[32];
	struct triple a[32], b[32];
	size_t na = 0, nb = 0, i, k, nv;

	for (i = 0; i < NR; i++)
		dr[i] = rk[i].st;
	nv = detect_run_busy(dr, NR, NOW, T, par.busy_threshold_ns, v, 32);
	for (i = 0; i < nv && i < 32; i++) {
		b[nb].kind = v[i].kind == DETECT_EXITED ? JUDGE_EXITED :
			     v[i].kind == DETECT_NOT_ENTERED ? JUDGE_NOT_ENTERED :
			     v[i].kind == DETECT_RANK_BUSY ? JUDGE_BUSY :
			     v[i].kind == DETECT_MISMATCH ? JUDGE_MISMATCH : JUDGE_GPU_STUCK;
		b[nb].rank = v[i].rank;
		b[nb].ev = v[i].evidence;
		/* (busy: the judge says it once a rank, the node once a
		 * communicator it lags in) */
		b[nb++].hash = v[i].kind == DETECT_RANK_BUSY ? 0 : v[i].comm_hash;
	}
	for (i = 0; i < n; i++) {
		if (out[i].kind != JUDGE_EXITED && out[i].kind != JUDGE_NOT_ENTERED &&
		    out[i].kind != JUDGE_GPU_STUCK && out[i].kind != JUDGE_BUSY &&
		    out[i].kind != JUDGE_MISMATCH)
			continue;
		for (k = 0; k < out[i].nculprits && na < 32; k++) {
			a[na].kind = (int)out[i].kind;
			a[na].rank = out[i].culprits[k];
			a[na].ev = out[i].evidence;
			a[na++].hash = out[i].kind == JUDGE_BUSY ? 0 : out[i].comm_hash;
		}
	}
	qsort(a, na, sizeof(a[0]), triple_cmp);
	qsort(b, nb, sizeof(b[0]), triple_cmp);
	nb = triple_unique(b, nb);
	for (i = 0; i < na && i < nb && triple_cmp(&a[i], &b[i]) == 0; i++)
		;
	if (na == nb && i == na)
		return 1;
	snprintf(why, size, "judge %zu, detect %zu; first difference at %zu", na, nb, i);
	return 0;
}

static void
run_cases(void)
{
	static struct judge_finding out[8];
	struct judge_end end;
	size_t i, k, n;
	pl_err_t err;

	for (i = 0; i < NCASES; i++) {
		struct judge_state *s = judge_state_new(NR, &err);
		char why[400] = "";
		int good;

		cases[i].setup();
		memset(out, 0, sizeof(out));
		n = s ? judge_run(&step, rk, NR, NOW, &par, s, out, 8) : 0;
		good = s && n == cases[i].n;
		if (!good)
			snprintf(why, sizeof(why), "%zu findings, want %zu%s%s", n, cases[i].n,
				 n ? ": " : "", n ? out[0].text : "");
		for (k = 0; good && k < n; k++)
			good = same(&out[k], &cases[i].f[k], why, sizeof(why));
		if (!ok(good, "%s", cases[i].name))
			diag("  finding %zu: %s", k ? k - 1 : 0, why);
		judge_state_end(s, &end);
		good = end.ending == c_ended(cases[i].setup) &&
		       (!end.ending ||
			(strstr(end.text, "step cancelled/ended by signal: ") == end.text &&
			 strstr(end.text, " of 16 ranks ended by a termination signal")));
		if (!ok(good, "%s: the step %s ending", cases[i].name,
			c_ended(cases[i].setup) ? "is" : "is not"))
			diag("  ending %d: '%s'", end.ending, end.text);
		if (!c_lost(cases[i].setup) && !c_end(cases[i].setup) && !ok(agrees_with_detect(out, n, why, sizeof(why)),
						  "%s: as detect_run names it", cases[i].name))
			diag("  %s", why);
		judge_state_free(s);
	}
}

/* ---- the slow-rank rule over rounds ------------------------------------- */

/* Rank r's window in comm kind: mean wait and gap in us, done advanced. */
static void
window(int r, int kind, uint64_t wait_us, uint64_t gap_us, uint64_t done)
{
	struct detect_comm *c = cm(r, kind);

	c->nwait = 32;
	c->wait_sum_ns = 32 * wait_us * US;
	c->gap_sum_ns = 32 * gap_us * US;
	c->colls = c->done = done;
	c->seq = done - 1;
}

/*
 * Rank 5 (tp 1, dp 2, pp 0; node 1 GPU 1) slow in round `k`, with done
 * advanced by `fresh` each round:
 *   TP {4,5}: 4 waits 700 us (gap 9300), 5 waits 100 (gap 9900):
 *     lead(5) = (700 - 100) / 10000 = 0.06, lead(4) = -0.06;
 *   DP {1,3,5,7}: 1, 3, 7 wait 3400 us (gap 36600), 5 200 (gap 39800):
 *     lead(5) = (3400 - 200) / 40000 = 0.08;
 *   its TP peer 4 arrives at DP {0,2,4,6} as late: lead(4) there 0.08,
 *     but -0.06 in TP: not named;
 *   its PP peer 13 is held by it through the pipeline: DP {9,11,13,15}
 *     the same as 5's, lead 0.08, TP {12,13} equal: one group against
 *     5's two; not named;
 *   4's PP peer 12 likewise in DP {8,10,12,14}: its pipeline peer 4 is
 *     held (it waits in TP); not named.
 * Its smallest lead is 0.06 >= the margin 0.05; it costs most in DP (0.08).
 */
static void
slow_round(int k, int slow)
{
	uint64_t d = 1000 + (uint64_t)k * 40;
	int r;

	healthy();
	for (r = 0; r < NR; r++) {
		window(r, C_TP, 100, 9900, 4 * d);
		window(r, C_DP, 1000, 39000, d);
	}
	if (!slow)
		return;
	window(4, C_TP, 700, 9300, 4 * d);
	window(5, C_TP, 100, 9900, 4 * d);
	for (r = 0; r < 8; r++)
		window(r, C_DP, r == 4 || r == 5 ? 200 : 3400, r == 4 || r == 5 ? 39800 : 36600, d);
	for (r = 8; r < 16; r++)
		window(r, C_DP, r == 12 || r == 13 ? 200 : 3400, r == 12 || r == 13 ? 39800 : 36600,
		       d);
}

static size_t
slow_run(struct judge_state *s, int k, struct judge_finding *out, size_t max)
{
	return judge_run(&step, rk, NR, NOW + (uint64_t)k * S, &par, s, out, max);
}

static void
slow_test(void)
{
	struct judge_finding out[4];
	struct judge_state *s;
	pl_err_t err;
	size_t n;
	int k, r, named_at = -1, others = 0;

	/* Named in round 3 (rounds 0-2 qualify: 3 rounds, 2 s since round
	 * 0), not before. */
	s = judge_state_new(NR, &err);
	for (k = 0; k < 6; k++) {
		slow_round(k, 1);
		n = slow_run(s, k, out, 4);
		if (n && named_at < 0)
			named_at = k;
		others += n > 1 || (n == 1 && (out[0].kind != JUDGE_SLOW || out[0].culprits[0] != 5));
	}
	is_int(named_at, 2, "slow: rank 5 named in the 3rd qualifying round (3 rounds, 2 s), not before");
	is_int(others, 0, "slow: nothing else named (not its TP peer 4, not the PP peers 12, 13)");
	slow_round(6, 1);
	n = slow_run(s, 6, out, 4);
	ok(n == 1 && out[0].kind == JUDGE_SLOW, "slow: still named in round 6");
	is_str(out[0].group, "DP group 1 of PP stage 0", "slow: the group where it costs most");
	ok(out[0].cost_frac > 0.0799 && out[0].cost_frac < 0.0801 && out[0].since_ns == NOW &&
	   out[0].for_ns == 6 * S && out[0].npeers_waiting == 3 && out[0].node == 1,
	   "slow: cost 0.08 (its DP peers' excess wait over their cycle), since round 0");
	is_str(out[0].text, "DP group 1 of PP stage 0: rank 5 on node1 GPU 1 is slow: its 3 "
	       "peers lose 8.0 % of their time waiting on it, for 6.0 s", "slow: the line");
	is_double(judge_state_lead(s, 5), 0.08, 1e-9, "slow: its score is its largest lead (DP)");
	ok(judge_state_lead(s, 4) == 0 && judge_state_lead(s, 12) == 0 &&
	   judge_state_lead(s, 13) == 0, "slow: its TP peer and the PP peers score 0");
	/* Its TP lead grows past the DP one (4 waits 1300 us): the finding
	 * stays about DP (an alert keeps its fingerprint). */
	slow_round(7, 1);
	window(4, C_TP, 1300, 8700, 4 * (1000 + 7 * 40));
	n = slow_run(s, 7, out, 4);
	ok(n == 1 && strcmp(out[0].group, "DP group 1 of PP stage 0") == 0 &&
	   out[0].cost_frac > 0.0799 && out[0].cost_frac < 0.0801 &&
	   judge_state_lead(s, 5) > 0.1199 && judge_state_lead(s, 5) < 0.1201,
	   "slow: TP now leads more (0.12, its score), the finding stays about DP (0.08)");
	/* A healthy round ends it (the finding resolves). */
	slow_round(8, 0);
	is_int(slow_run(s, 8, out, 4), 0, "slow: a healthy round: no finding");
	judge_state_free(s);

	/* A one-round spike, then healthy: never named. */
	s = judge_state_new(NR, &err);
	n = 0;
	for (k = 0; k < 8; k++) {
		slow_round(k, k == 3 || k == 6);
		n += slow_run(s, k, out, 4);
	}
	is_int(n, 0, "slow: one-round spikes are never named");
	judge_state_free(s);

	/* Rounds without new completions do not count: with rounds 1 and 2
	 * the same windows as round 0, rank 5 is named in round 4. */
	s = judge_state_new(NR, &err);
	named_at = -1;
	for (k = 0; k < 6; k++) {
		slow_round(k == 1 || k == 2 ? 0 : k - 2 < 0 ? 0 : k - 2, 1);
		n = slow_run(s, k, out, 4);
		if (n && named_at < 0)
			named_at = k;
	}
	is_int(named_at, 4, "slow: rounds with no new completions do not count");
	judge_state_free(s);

	/* A hang (rank 12 stopped) resets the streaks: the slow rank is not
	 * named in the round of the hang nor right after. */
	s = judge_state_new(NR, &err);
	others = 0;
	for (k = 0; k < 5; k++) {
		slow_round(k, 1);
		if (k == 1)
			in_coll(13, C_TP, 4 * (1000 + 40) + 1, NOW + S - 70 * S);
		n = slow_run(s, k, out, 4);
		if (k == 1)
			others += !(n == 1 && out[0].kind == JUDGE_NOT_ENTERED);
		else if (k < 4)
			others += n != 0;
		else
			others += !(n == 1 && out[0].kind == JUDGE_SLOW);
	}
	is_int(others, 0, "slow: a round with a hang resets the streak (named again in round 4)");
	judge_state_free(s);

	/* 5 slow, and its pipeline peer 13 waiting longer than its DP peers
	 * (3400 us) in DP {9,11,13,15}: by 5400 us an excess of 0.05 (held,
	 * at the margin), less than 5's lead of 0.08: it explains nothing, 5
	 * is named in round 2 as before; by 7400 us (0.10, above 5's lead) it
	 * does, and nothing is named. */
	for (r = 0; r < 2; r++) {
		uint64_t w13 = r ? 7400 : 5400;

		s = judge_state_new(NR, &err);
		named_at = -1;
		for (k = 0; k < 6; k++) {
			slow_round(k, 1);
			window(13, C_DP, w13, 40000 - w13, 1000 + (uint64_t)k * 40);
			n = slow_run(s, k, out, 4);
			if (named_at < 0 && n == 1 && out[0].kind == JUDGE_SLOW &&
			    out[0].culprits[0] == 5)
				named_at = k;
		}
		if (r == 0)
			is_int(named_at, 2, "slow: a pipeline peer held by less than the rank's lead "
			       "(0.05 against 0.08) does not explain it: named in round 2");
		else
			ok(named_at < 0 && n == 0, "slow: one held by more (0.10) does: nothing named");
		judge_state_free(s);
	}

	/* TP group {4,5} slow as a whole: 4 and 5 lead in their DP groups
	 * (0.08), not in TP (equal), their pipeline peers 12, 13 lead
	 * nowhere.  Not a slow rank: nothing named. */
	s = judge_state_new(NR, &err);
	n = 0;
	for (k = 0; k < 6; k++) {
		uint64_t d = 1000 + (uint64_t)k * 40;

		slow_round(k, 0);
		for (r = 0; r < 8; r++)
			window(r, C_DP, r == 4 || r == 5 ? 200 : 3400, r == 4 || r == 5 ? 39800 : 36600,
			       d);
		n += slow_run(s, k, out, 4);
	}
	ok(n == 0 && judge_state_lead(s, 4) == 0 && judge_state_lead(s, 5) == 0,
	   "slow: a TP group slow as a whole leads only in DP: no slow rank named");
	judge_state_free(s);

	/* Smoothed by halves: named in round 2 as before (the leads are the
	 * same every round); after it, healthy rounds halve its lead: 0.04
	 * (still at least 0.025: named), then 0.02 (resolved). */
	par.slow_smooth = 0.5;
	s = judge_state_new(NR, &err);
	for (k = 0; k < 3; k++) {
		slow_round(k, 1);
		n = slow_run(s, k, out, 4);
	}
	slow_round(3, 0);
	n = slow_run(s, 3, out, 4);
	ok(n == 1 && out[0].kind == JUDGE_SLOW && out[0].cost_frac > 0.0399 &&
	   out[0].cost_frac < 0.0401, "smoothed: one healthy round halves the lead (0.04), still named");
	slow_round(4, 0);
	is_int(slow_run(s, 4, out, 4), 0, "smoothed: the next one (0.02) resolves it");
	judge_state_free(s);
	par.slow_smooth = 1;
}

/* ---- bounded output ------------------------------------------------------- */

/*
 * The stuck transfer of c_p2p_downstream over rounds: named in round 0;
 * at 1 s its sender 3 gave up (no p2p in flight, not exited yet: a rank
 * aborting on its timeout), so no cause is seen, and the stuck kernels
 * left (2 and 11; 10 waits in TP 30 s only) are not named in its place within the grace (2 s); at
 * 3 s, still nothing seen, the never-silent rule names them.
 */
static void
fallback_test(void)
{
	struct judge_finding out[4];
	struct judge_state *s;
	pl_err_t err;
	size_t n0, n1, n3;
	int k;

	s = judge_state_new(NR, &err);
	c_p2p_downstream();
	in_coll(10, C_TP, 201, NOW - 30 * S);	/* far from the threshold */
	for (k = 0; k < 4; k++)		/* 3 in its send all along */
		if (k != C_PP)
			done_at(3, k, cm(3, k)->colls, NOW - 72 * S);
	n0 = s ? judge_run(&step, rk, NR, NOW, &par, s, out, 4) : 0;
	ok(n0 == 1 && out[0].kind == JUDGE_GPU_STUCK && out[0].nculprits == 2,
	   "fallback: round 0, the stuck transfer named (%zu findings)", n0);
	cm(3, C_PP)->flags &= ~(DETECT_P2P | DETECT_SEND);
	cm(3, C_PP)->ch_inflight = 0;
	n1 = s ? judge_run(&step, rk, NR, NOW + S, &par, s, out, 4) : 9;
	is_int((long long)n1, 0, "fallback: 1 s on, its sender gave up: nothing named within the grace");
	n3 = s ? judge_run(&step, rk, NR, NOW + 3 * S, &par, s, out, 4) : 0;
	ok(n3 == 1 && out[0].kind == JUDGE_GPU_STUCK && out[0].culprits[0] == 11,
	   "fallback: 3 s on, past the grace, never silent: the stuck kernel of 11 (%zu); not 2's, "
	   "whose sender 10 entered a collective since (the cause named within the threshold)",
	   n3);
	n3 = s ? judge_run(&step, rk, NR, NOW + 4 * S, &par, s, out, 4) : 0;
	is_int((long long)n3, 1, "fallback: and so the round after (it holds no grace of its own)");
	/* a threshold past the cause named, never silent on every stuck kernel
	 * (10's too, waiting 92 s in TP #201 on 11), each inferred */
	n3 = s ? judge_run(&step, rk, NR, NOW + 62 * S, &par, s, out, 4) : 0;
	ok(n3 == 3 && out[0].culprits[0] == 10 && out[1].culprits[0] == 2 &&
	   out[2].culprits[0] == 11 && out[0].evidence == DETECT_INFERRED &&
	   out[1].evidence == DETECT_INFERRED && out[2].evidence == DETECT_INFERRED,
	   "fallback: 62 s on, a threshold past the cause named: 10, 2 and 11, inferred (%zu)", n3);
	judge_state_free(s);
}

/*
 * A pause outside NCCL ends (busy-pause in bench_verdicts, tp8 pp4: rank
 * 20 busy 15 s, the stage-1 receive from stage 2 waiting all along, read
 * the moment stage 2 completed its TP collective and before it sent):
 * round 0, 2 busy outside NCCL 70 s while its TP peer 3 waits for it in TP
 * #201 and 11's receive from 3 is stuck 68 s: 2 named busy.  Round 1, half
 * a second on, 2 is back and TP #201 done on both; 3 computes before its
 * send (posted 4 where 11 entered its 5th receive): 3 is not named
 * unposted (it moved), and 11 is not named by the never-silent rule.  So
 * 3 s on (past the grace), still computing; and when 3 sends and 11's
 * receive completes, nothing.
 */
static void
pause_end_test(void)
{
	struct judge_finding out[4];
	struct judge_state *s;
	pl_err_t err;
	size_t n;
	int k;

	s = judge_state_new(NR, &err);
	c_p2p_unposted();
	in_p2p(11, C_PP, 0, 0, NOW - 68 * S);
	for (k = 0; k < 4; k++)
		done_at(2, k, cm(2, k)->colls, NOW - 70 * S);
	tree(2, S / 2, 1900, 0);
	in_coll(3, C_TP, 201, NOW - 69 * S);
	n = s ? judge_run(&step, rk, NR, NOW, &par, s, out, 4) : 0;
	ok(n == 1 && out[0].kind == JUDGE_BUSY && out[0].culprits[0] == 2,
	   "pause end: round 0, 2 named busy outside NCCL (%zu: %s)", n, n ? out[0].text : "");
	done_at(2, C_TP, 201, NOW + S / 2);
	done_at(3, C_TP, 201, NOW + S / 2);
	cm(2, C_TP)->enter_ns = NOW + S / 4;
	cm(3, C_TP)->enter_ns = NOW - 69 * S;
	rk[2].st.proc.progress_ns = NOW + S / 2;
	n = s ? judge_run(&step, rk, NR, NOW + S, &par, s, out, 4) : 9;
	is_int((long long)n, 0,
	       "pause end: half a second after 2 came back, 3 computes before its send: nothing");
	n = s ? judge_run(&step, rk, NR, NOW + 4 * S, &par, s, out, 4) : 9;
	is_int((long long)n, 0, "pause end: 3 s on, past the grace, still computing: nothing");
	cm(3, C_PP)->p2p_tx[0] = cm(3, C_PP)->p2p_tx[1] = 5;
	done_at(11, C_PP, 0, NOW + 4 * S);
	cm(11, C_PP)->flags &= ~(DETECT_P2P | DETECT_SEND);
	n = s ? judge_run(&step, rk, NR, NOW + 5 * S, &par, s, out, 4) : 9;
	is_int((long long)n, 0, "pause end: 3 sent, 11's receive done: nothing");
	judge_state_free(s);
}

/* The ranks detect_run names exited on the whole step (as if one node),
 * as text, and how many. */
static size_t
detect_exits(char *buf, size_t size)
{
	static struct detect_rank dr[NR];
	struct detect_verdict v[NR];
	size_t i, n, k = 0, len = 0;

	buf[0] = '\0';
	for (i = 0; i < NR; i++)
		dr[i] = rk[i].st;
	n = detect_run(dr, NR, NOW, T, v, NR);
	for (i = 0; i < n && i < NR; i++) {
		if (v[i].kind != DETECT_EXITED)
			continue;
		k++;
		if (len < size)
			len += (size_t)snprintf(buf + len, size - len, " %lld", (long long)v[i].rank);
	}
	return k;
}

/*
 * The exit rule is one (rules.h): the ranks scancel kills (SIGTERM, then
 * SIGKILL) are no failure in the node view either, so a node's verdicts
 * blame none of them while the leader names nobody; a SIGSEGV and an exit 1
 * are failures to both.
 */
static void
node_view_test(void)
{
	static struct judge_finding out[8];
	struct judge_state *s;
	char who[128];
	size_t n, nd;
	pl_err_t err;

	s = judge_state_new(NR, &err);
	c_cancel_early();
	n = s ? judge_run(&step, rk, NR, NOW, &par, s, out, 8) : 0;
	nd = detect_exits(who, sizeof(who));
	ok(s && n == 0 && nd == 0,
	   "scancel, every rank killed by SIGTERM or SIGKILL: the node view blames none either "
	   "(judge %zu, node view%s)", n, who);
	c_cancel();
	exit_at(9, SIGTERM, 3 * S);
	n = s ? judge_run(&step, rk, NR, NOW, &par, s, out, 8) : 0;
	nd = detect_exits(who, sizeof(who));
	ok(s && n == 0 && nd == 0,
	   "scancel 3 s ago: neither names a rank (judge %zu, node view%s)", n, who);
	c_lone_kill_soon();
	n = s ? judge_run(&step, rk, NR, NOW, &par, s, out, 8) : 0;
	nd = detect_exits(who, sizeof(who));
	ok(s && n == 0 && nd == 0,
	   "a rank killed by SIGKILL 1 s ago: not a failure to either (judge %zu, node view%s)",
	   n, who);
	c_two_fail();
	n = s ? judge_run(&step, rk, NR, NOW, &par, s, out, 8) : 0;
	nd = detect_exits(who, sizeof(who));
	ok(s && n == 2 && out[0].culprits[0] == 6 && out[1].culprits[0] == 9 && nd == 2 &&
	   strcmp(who, " 6 9") == 0,
	   "SIGSEGV and exit 1: failures to both (judge %zu, node view%s)", n, who);
	judge_state_free(s);
}

/* A hang, then every rank aborting on its timeout: the exits are the
 * hang's effect, none named (and no stuck kernel named in their place). */
static void
timeouts_test(void)
{
	struct judge_finding out[4];
	struct judge_state *s;
	pl_err_t err;
	size_t n0, n1, n2;
	int r;

	s = judge_state_new(NR, &err);
	c_gpu_stuck();
	n0 = s ? judge_run(&step, rk, NR, NOW, &par, s, out, 4) : 0;
	ok(n0 == 1 && out[0].kind == JUDGE_GPU_STUCK, "timeouts: round 0, TP group 2 stuck (%zu)",
	   n0);
	for (r = 0; r < NR; r++)
		exit_at(r, r % 2 ? 3 << 8 : SIGABRT, 0);
	for (r = 0; r < NR; r++)
		rk[r].st.exit_ns = NOW + S / 2;
	n1 = s ? judge_run(&step, rk, NR, NOW + S, &par, s, out, 4) : 9;
	n2 = s ? judge_run(&step, rk, NR, NOW + 5 * S, &par, s, out, 4) : 9;
	ok(n1 == 0 && n2 == 0, "timeouts: every rank aborting half a second later is the hang's "
	   "effect: nothing named, 1 s and 5 s on (%zu, %zu)", n1, n2);
	judge_state_free(s);

	/* The same behind a busy rank: 13 busy outside NCCL, its peers'
	 * watchdogs aborting them (exit 3) while it still is: none named. */
	s = judge_state_new(NR, &err);
	c_busy();
	n0 = s ? judge_run(&step, rk, NR, NOW, &par, s, out, 4) : 0;
	ok(n0 == 1 && out[0].kind == JUDGE_BUSY, "timeouts: round 0, rank 13 busy (%zu)", n0);
	for (r = 0; r < NR; r++)
		if (r != 13)
			exit_at(r, 3 << 8, 0);
	for (r = 0; r < NR; r++)
		rk[r].st.exit_ns = NOW + S / 2;
	n1 = s ? judge_run(&step, rk, NR, NOW + S, &par, s, out, 4) : 9;
	ok(n1 == 0, "timeouts: the peers of a busy rank aborting on their timeouts are its "
	   "effect: none named (%zu%s%s)", n1, n1 ? ": " : "", n1 ? out[0].text : "");
	judge_state_free(s);
}

static void
bounded_test(void)
{
	struct judge_finding out[3];
	struct judge_state *s;
	pl_err_t err;
	size_t n;
	int r;

	healthy();
	for (r = 0; r < 8; r++) {
		rk[r].st.exited = 1;
		rk[r].st.exit_known = 1;
		rk[r].st.exit_status = (r + 1) << 8;
		rk[r].st.exit_ns = NOW - S;
	}
	s = judge_state_new(NR, &err);
	n = judge_run(&step, rk, NR, NOW, &par, s, out, 3);
	is_int(n, 8, "max 3: all 8 exits counted");
	ok(out[0].culprits[0] == 0 && out[1].culprits[0] == 1 && out[2].culprits[0] == 2 &&
	   out[2].exit_status == 3 << 8, "max 3: the first three written, by rank");
	is_int(judge_run(&step, rk, NR, NOW, &par, s, NULL, 0), 8, "max 0: counted, none written");
	is_int(judge_run(&step, rk, 0, NOW, &par, s, out, 3), 0, "no ranks: no finding");
	judge_state_free(s);
	pl_err_clear(&err);
	s = judge_state_new(0, &err);
	if (!ok(s == NULL && strstr(err.text, "world 0") != NULL, "a world of 0 is refused, naming it"))
		diag("  %p '%s'", (void *)s, err.text);
	judge_state_free(s);

	/* More ranks than the state's world: those beyond are not judged. */
	healthy();
	rk[12].st.exited = 1;
	rk[12].st.exit_known = 1;
	rk[12].st.exit_status = 1 << 8;
	s = judge_state_new(8, &err);
	is_int(judge_run(&step, rk, NR, NOW, &par, s, out, 3), 0,
	       "16 ranks given to a state of 8: rank 12's exit is beyond it");
	judge_state_free(s);

	/* A lost node without a name, never heard from. */
	healthy();
	nodes[2].lost = 1;
	nodes[2].last_ns = 0;
	nodes[2].name = NULL;
	s = judge_state_new(NR, &err);
	n = judge_run(&step, rk, NR, NOW, &par, s, out, 3);
	is_str(n == 1 ? out[0].text : "", "world: node 2 (name unknown) lost: no summary yet; its 4 "
	       "ranks unknown", "a lost node without a name, never heard from");
	nodes[2].name = "node2";
	judge_state_free(s);
}

/* A DP group of 40 ranks, 20 missing: 16 named, 20 counted. */
static void
many_culprits_test(void)
{
	static struct judge_rank big[40];
	struct judge_step st = step;
	struct judge_finding out[2];
	struct judge_state *s;
	pl_err_t err;
	int r;

	st.world = 40;
	st.nodes = NULL;
	st.nnodes = 0;
	st.size[JUDGE_TP] = 1;
	st.size[JUDGE_DP] = 40;
	st.size[JUDGE_PP] = 1;
	memset(big, 0, sizeof(big));
	for (r = 0; r < 40; r++) {
		struct detect_comm *c = &big[r].st.comm[0];

		big[r].st.job_id = 77;
		big[r].st.rank = r;
		big[r].node = (uint32_t)(r / 10);
		big[r].gpu = r % 10;
		big[r].co[JUDGE_DP] = (uint32_t)r;
		big[r].present = 1;
		big[r].st.ncomm = 1;
		c->hash = 0x2000;
		snprintf(c->name, sizeof(c->name), "dp");
		c->nranks = 40;
		c->flags = DETECT_GPU;
		c->colls = r % 2 ? 7 : 8;
		c->seq = c->colls - 1;
		snprintf(c->func, sizeof(c->func), "AllReduce");
		c->done = 7;
		c->ch_inflight = r % 2 ? 0 : 2;
		c->enter_ns = c->progress_ns = NOW - 80 * S;
	}
	s = judge_state_new(40, &err);
	ok(judge_run(&st, big, 40, NOW, &par, s, out, 2) == 1 && out[0].nculprits == 16 &&
	   out[0].ncul_total == 20 && out[0].culprits[15] == 31 && out[0].npeers_waiting == 20,
	   "20 missing ranks: 16 named, 20 counted, 20 peers waiting");
	is_str(out[0].text, "world: ranks 1 on an unknown node GPU 1, 3 on an unknown node GPU 3, "
	       "5 on an unknown node GPU 5 and 17 more never entered AllReduce #7; 20 peers "
	       "waiting 80 s", "the line names the first three and counts the rest");
	judge_state_free(s);
}

/* ---- group names ---------------------------------------------------------- */

static void
name_is(const struct judge_step *st, const uint32_t (*co)[JUDGE_NAXES], size_t n,
	const char *name, const char *want, const char *what)
{
	char out[JUDGE_GROUP_LEN];

	judge_group_name(st, co, n, name, out, sizeof(out));
	is_str(out, want, "group name: %s", what);
}

static void
names_test(void)
{
	/* tp2 dp4 pp2 (co: tp, cp, ep, dp, pp): rank 5 = tp 1, dp 2, pp 0;
	 * rank 13 = tp 1, dp 2, pp 1. */
	static const uint32_t tp45[2][5] = { { 0, 0, 0, 2, 0 }, { 1, 0, 0, 2, 0 } };
	static const uint32_t dp5[4][5] = {
		{ 1, 0, 0, 0, 0 }, { 1, 0, 0, 1, 0 }, { 1, 0, 0, 2, 0 }, { 1, 0, 0, 3, 0 }
	};
	static const uint32_t pp5[2][5] = { { 1, 0, 0, 2, 0 }, { 1, 0, 0, 2, 1 } };
	static const uint32_t one[1][5] = { { 1, 0, 0, 2, 1 } };
	uint32_t world[16][5];
	/* tp2 cp2 dp2 (rank = tp + 2 cp + 4 dp): rank 5 = tp 1, cp 0, dp 1;
	 * its CP group {5, 7}. */
	struct judge_step cps = step;
	static const uint32_t cp5[2][5] = { { 1, 0, 0, 1, 0 }, { 1, 1, 0, 1, 0 } };
	/* tp2 ep2 dp4 pp2 (expert dp = dp / 2): rank 5 = tp 1, dp 2 (ep 0,
	 * edp 1), pp 0.  Its EP group {5, 7} (dp 2, 3: ep 0, 1), its EDP
	 * group {1, 5} (dp 0, 2: edp 0, 1). */
	struct judge_step eps = step;
	static const uint32_t ep5[2][5] = { { 1, 0, 0, 2, 0 }, { 1, 0, 1, 3, 0 } };
	static const uint32_t edp5[2][5] = { { 1, 0, 0, 0, 0 }, { 1, 0, 0, 2, 0 } };
	char small[12];
	int r;

	for (r = 0; r < 16; r++) {
		memset(world[r], 0, sizeof(world[r]));
		world[r][JUDGE_TP] = co_tp(r);
		world[r][JUDGE_DP] = co_dp(r);
		world[r][JUDGE_PP] = co_pp(r);
	}
	name_is(&step, tp45, 2, "tp", "TP group 2 of PP stage 0", "TP by name");
	name_is(&step, tp45, 2, NULL, "TP group 2 of PP stage 0", "TP from coordinates");
	name_is(&step, dp5, 4, "DP", "DP group 1 of PP stage 0", "DP by name (any case)");
	name_is(&step, dp5, 4, "TENSOR_MODEL_PARALLEL_GROUP", "DP group 1 of PP stage 0",
		"a name of other words: from coordinates");
	name_is(&step, pp5, 2, "pp", "PP group 5", "PP: index tp + 2 dp, no stage");
	name_is(&step, (const uint32_t (*)[5])world, 16, "", "world", "world from coordinates");
	name_is(&step, tp45, 2, "world", "world", "world by name");
	name_is(&step, tp45, 2, "tp-pp", "TP-PP group 2", "a composite name (model parallel)");
	name_is(&step, one, 1, NULL, "group of 1 rank", "one member, no name");
	name_is(&step, one, 1, "tp", "TP group 2 of PP stage 1", "one member present, by name");
	cps.size[JUDGE_CP] = 2;
	cps.size[JUDGE_DP] = 2;
	cps.size[JUDGE_PP] = 1;
	name_is(&cps, cp5, 2, NULL, "CP group 3", "CP: index tp + 2 dp, pp 1 has no stage");
	eps.size[JUDGE_EP] = 2;
	name_is(&eps, ep5, 2, NULL, "EP group 3 of PP stage 0",
		"EP from coordinates: index tp + 2 edp (Megatron's expert groups)");
	name_is(&eps, ep5, 2, "ep", "EP group 3 of PP stage 0", "EP by name");
	name_is(&eps, edp5, 2, "edp", "EDP group 1 of PP stage 0", "expert DP: index tp + 2 ep");
	judge_group_name(&step, tp45, 2, "tp", small, sizeof(small));
	is_str(small, "TP group...", "group name: cut to the buffer, ending in ...");
}

/* Findings a and b say the same (kind, group, culprits, the line). */
static int
same_findings(const struct judge_finding *a, size_t na, const struct judge_finding *b, size_t nb)
{
	size_t i;

	if (na != nb)
		return 0;
	for (i = 0; i < na; i++)
		if (a[i].kind != b[i].kind || strcmp(a[i].group, b[i].group) != 0 ||
		    a[i].nculprits != b[i].nculprits ||
		    memcmp(a[i].culprits, b[i].culprits, a[i].nculprits * sizeof(a[i].culprits[0])) ||
		    strcmp(a[i].text, b[i].text) != 0)
			return 0;
	return 1;
}

/* One round with a judge that has seen the rounds before, and the same
 * round with a new one: the same findings.  *n the count. */
static int
agrees(struct judge_state *kept, size_t *n)
{
	struct judge_finding fa[16], fb[16];
	struct judge_state *fresh;
	size_t na, nb;
	pl_err_t err;

	pl_err_clear(&err);
	fresh = judge_state_new(NR, &err);
	na = judge_run(&step, rk, NR, NOW, &par, kept, fa, 16);
	nb = fresh ? judge_run(&step, rk, NR, NOW, &par, fresh, fb, 16) : 0;
	judge_state_free(fresh);
	*n = na;
	return fresh && same_findings(fa, na, fb, nb);
}

/*
 * The judge keeps the last round's sorted order and takes it again when
 * a round brings the same communicators of the same ranks at the same
 * places: rounds after the first with the same entries, then two ranks
 * at each other's place, then a rank gone, each judged
 * as a new judge judges it.
 */
static void
sorted_again_test(void)
{
	struct judge_state *kept;
	struct judge_rank t;
	size_t n = 0;
	int same;
	pl_err_t err;

	pl_err_clear(&err);
	kept = judge_state_new(NR, &err);
	healthy();
	same = kept && agrees(kept, &n);
	ok(same && n == 0, "sorted again: a healthy round, nothing found");
	c_not_entered();
	same = agrees(kept, &n);
	ok(same && n == 1, "sorted again: the same entries, rank 13 not entered: as "
	   "a new judge finds it (%zu)", n);
	c_cascade();
	same = agrees(kept, &n);
	ok(same && n >= 1, "sorted again: the cascade: as a new judge finds it (%zu)",
	   n);
	/* ranks 4 and 9 trade places (9 waits in DP #51 for 13): the old
	 * order would put 4's entries in 9's groups and split them */
	c_not_entered();
	t = rk[4];
	rk[4] = rk[9];
	rk[9] = t;
	same = agrees(kept, &n);
	ok(same && n == 1, "sorted again: ranks 4 and 9 at each other's place: sorted anew (%zu)",
	   n);
	same = agrees(kept, &n);
	ok(same && n == 1, "sorted again: and that order kept (%zu)", n);
	c_two_missing();
	rk[3].present = 0;
	same = agrees(kept, &n);
	ok(same && n >= 1, "sorted again: rank 3 gone: sorted anew (%zu)", n);
	judge_state_free(kept);
}

/* One round of the step as rk[] has it now, with a fresh state. */
static size_t
advice_round(struct judge_finding *out, size_t max)
{
	struct judge_state *s;
	pl_err_t err;
	size_t n;

	s = judge_state_new(NR, &err);
	if (!s)
		return SIZE_MAX;
	n = judge_run(&step, rk, NR, NOW, &par, s, out, max);
	judge_state_free(s);
	return n;
}

/* Every rank's dp communicator with an AllGather run of `calls` calls
 * adding up to run bytes, the largest top. */
static void
ag_run(uint64_t run, uint64_t calls, uint64_t top)
{
	int r;

	for (r = 0; r < NR; r++) {
		cm(r, C_DP)->ag_peak_bytes = run;
		cm(r, C_DP)->ag_peak_calls = calls;
		cm(r, C_DP)->ag_peak_top = top;
	}
}

#define MIB	(UINT64_C(1) << 20)

/* The advice: a TP group across nodes, FSDP wrapped at its root only. */
static void
advice_test(void)
{
	struct judge_finding out[8];
	size_t n;

	healthy();
	n = advice_round(out, 8);
	ok(n == 0, "advice: a healthy step (TP pairs inside their nodes, DP and PP across) gives "
	   "nothing (%zu)", n);

	/* Rank 3 placed on node1: TP group {2, 3} spans node0 and node1. */
	rk[3].node = 1;
	n = advice_round(out, 8);
	ok(n == 1 && out[0].kind == JUDGE_TP_NETWORK && out[0].comm_hash == 0x1001 &&
	   strcmp(out[0].group, "TP group 1 of PP stage 0") == 0 && out[0].nculprits == 2 &&
	   out[0].culprits[0] == 2 && out[0].culprits[1] == 3 && out[0].nspan == 2 &&
	   out[0].node == 0 && strstr(out[0].text, "span 2 nodes (node0, node1)") &&
	   judge_kind_advice(out[0].kind),
	   "tp-over-network: a TP group on two nodes, its members and nodes named: %s",
	   n ? out[0].text : "");
	/* Nameless: the coordinates say it is TP. */
	memset(cm(2, C_TP)->name, 0, sizeof(cm(2, C_TP)->name));
	memset(cm(3, C_TP)->name, 0, sizeof(cm(3, C_TP)->name));
	n = advice_round(out, 8);
	ok(n == 1 && out[0].kind == JUDGE_TP_NETWORK && out[0].comm_hash == 0x1001,
	   "tp-over-network: a nameless TP communicator, told by its members' coordinates");
	/* And with a hang: both, the hang first. */
	in_coll(0, C_DP, 51, NOW - 2 * T);
	in_coll(4, C_DP, 51, NOW - 2 * T);
	in_coll(6, C_DP, 51, NOW - 2 * T);
	n = advice_round(out, 8);
	ok(n == 2 && out[0].kind == JUDGE_NOT_ENTERED && out[1].kind == JUDGE_TP_NETWORK,
	   "tp-over-network comes after a hang's finding, which it does not hide (%zu)", n);

	/* NCCL counted two nodes for a TP group whose members the leader
	 * sees on one: one member's count alone is not taken (it may be
	 * another communicator's, read as its slot was reused) ... */
	healthy();
	cm(5, C_TP)->nnodes = 2;
	n = advice_round(out, 8);
	ok(n == 0, "tp-over-network: not from one member's node count (%zu)", n);
	cm(4, C_TP)->nnodes = 4;
	n = advice_round(out, 8);
	ok(n == 0, "tp-over-network: nor from counts the members disagree on (%zu)", n);
	/* ... every member's is */
	cm(4, C_TP)->nnodes = 2;
	n = advice_round(out, 8);
	ok(n == 1 && out[0].kind == JUDGE_TP_NETWORK && out[0].comm_hash == 0x1002 &&
	   out[0].nspan == 2 && strstr(out[0].text, "span 2 nodes (NCCL's count)"),
	   "tp-over-network: NCCL's node count at init: %s", n ? out[0].text : "");
	healthy();
	cm(5, C_DP)->nnodes = 4;
	cm(5, C_PP)->nnodes = 2;
	n = advice_round(out, 8);
	ok(n == 0, "DP and PP groups across nodes: nothing (%zu)", n);

	/* FSDP at the root: one AllGather of 256 MiB a rank (1 GiB gathered
	 * by 4) is the whole run. */
	healthy();
	ag_run(256 * MIB, 1, 256 * MIB);
	n = advice_round(out, 8);
	ok(n == 1 && out[0].kind == JUDGE_FSDP_ROOT && out[0].comm_hash == 0x2000 &&
	   strcmp(out[0].group, "DP group 0 of PP stage 0") == 0 &&
	   out[0].bytes == 1024 * MIB && out[0].cost_frac == 1.0 &&
	   strstr(out[0].text, "one AllGather gathers 1.0 GiB of parameters, 100 % of the "
		  "largest run of AllGathers (1 call)") && strstr(out[0].text, "fully_shard"),
	   "fsdp-root-only: one finding for the step, the first group that gathers most: %s",
	   n ? out[0].text : "");
	/* 91 % of a run of 3: still one AllGather for the pass. */
	ag_run(100 * 3 * MIB, 3, 273 * MIB);
	n = advice_round(out, 8);
	ok(n == 1 && out[0].kind == JUDGE_FSDP_ROOT && out[0].cost_frac > 0.9,
	   "fsdp-root-only: 91 %% of its run (%zu)", n);
	/* Per block: 24 AllGathers of 1/24 each. */
	ag_run(24 * 16 * MIB, 24, 16 * MIB);
	n = advice_round(out, 8);
	ok(n == 0, "wrapped per block (24 AllGathers of 16 MiB): nothing (%zu)", n);
	/* 85 %: the rest is more than a root's own few parameters. */
	ag_run(100 * MIB, 2, 85 * MIB);
	n = advice_round(out, 8);
	ok(n == 0, "one AllGather 85 %% of its run: nothing (%zu)", n);
	/* A small model: 100 MiB a rank, 400 MiB gathered. */
	ag_run(100 * MIB, 1, 100 * MIB);
	n = advice_round(out, 8);
	ok(n == 0, "root-only under 512 MiB gathered: nothing (%zu)", n);
	/* A big AllGather in TP (sequence parallel, say) is no FSDP. */
	healthy();
	cm(0, C_TP)->ag_peak_bytes = cm(0, C_TP)->ag_peak_top = 1024 * MIB;
	cm(0, C_TP)->ag_peak_calls = 1;
	n = advice_round(out, 8);
	ok(n == 0, "one large AllGather in a TP group: nothing (%zu)", n);
	/* Only one rank recorded it (the others' nnodes unknown, 0). */
	cm(7, C_DP)->ag_peak_bytes = cm(7, C_DP)->ag_peak_top = 1024 * MIB;
	cm(7, C_DP)->ag_peak_calls = 1;
	n = advice_round(out, 8);
	ok(n == 1 && out[0].kind == JUDGE_FSDP_ROOT && out[0].comm_hash == 0x2001 &&
	   out[0].bytes == 4096 * MIB, "fsdp-root-only from one member's record (%zu)", n);
	ok(strcmp(judge_kind_name(JUDGE_TP_NETWORK), "tp-over-network") == 0 &&
	   strcmp(judge_kind_name(JUDGE_FSDP_ROOT), "fsdp-root-only") == 0 &&
	   !judge_kind_advice(JUDGE_SLOW), "the advice kinds' names");
}

/* Every rank's pp communicator with p2p time: stage 0's ranks waited
 * w0 of span, stage 1's w1 (seconds), since their first p2p. */
static void
p2p_at(double span, double w0, double w1)
{
	int r;

	for (r = 0; r < NR; r++) {
		cm(r, C_PP)->p2p_span_ns = (uint64_t)(span * (double)S);
		cm(r, C_PP)->p2p_wait_ns = (uint64_t)((co_pp(r) ? w1 : w0) * (double)S);
	}
}

/* The pipeline bubble over rounds (pp 2: plan 1 / 9 with m = 8 assumed,
 * margin 0.1, a window of 10 s of p2p span here). */
static void
bubble_test(void)
{
	struct judge_params dflt;
	struct judge_finding out[8];
	struct judge_state *s;
	pl_err_t err;
	size_t n;

	s = judge_state_new(NR, &err);
	if (!s)
		return;
	par.bubble_window_ns = 10 * S;
	healthy();
	p2p_at(1, 0.5, 0.5);
	n = judge_run(&step, rk, NR, NOW, &par, s, out, 8);
	ok(n == 0, "bubble: the first round sets the windows' start (%zu)", n);
	p2p_at(8, 4, 4);
	n = judge_run(&step, rk, NR, NOW, &par, s, out, 8);
	ok(n == 0, "bubble: 7 s of span, short of the window: nothing yet (%zu)", n);
	/* 11 s more: stage 0 waited 5.5 s (50 %), stage 1 3.3 s (30 %). */
	p2p_at(12, 6, 3.8);
	n = judge_run(&step, rk, NR, NOW, &par, s, out, 8);
	ok(n == 1 && out[0].kind == JUDGE_PP_BUBBLE && strcmp(out[0].group, "PP stage 0") == 0 &&
	   out[0].cost_frac > 0.499 && out[0].cost_frac < 0.501 &&
	   out[0].plan_frac > 0.111 && out[0].plan_frac < 0.112 && out[0].comm_hash == 0 &&
	   out[0].nculprits == 0 &&
	   strstr(out[0].text, "PP stage 0 idles 50 % of its time in p2p waits (plan "
		  "(p-1)/(m+p-1) = 11 %, m = 8 assumed: 4 x pp); stages 0: 50 % 1: 30 %"),
	   "bubble: a window closes: stage 0 idles 50 %% against a plan of 11 %%: %s",
	   n ? out[0].text : "");
	p2p_at(13, 6.5, 4.1);
	n = judge_run(&step, rk, NR, NOW, &par, s, out, 8);
	ok(n == 1 && out[0].kind == JUDGE_PP_BUBBLE && out[0].cost_frac > 0.499,
	   "bubble: named on while the next window fills (%zu)", n);
	/* The next window: 10 s, 1.5 s waited on either stage (15 %). */
	p2p_at(22, 8, 5.6);
	n = judge_run(&step, rk, NR, NOW, &par, s, out, 8);
	ok(n == 0, "bubble: a window of 15 %% idle, under 11 %% + 10 %%: nothing (%zu)", n);
	/* The same 50 % with m = 1 told: the plan is 50 %. */
	par.bubble_microbatches = 1;
	p2p_at(32, 13, 10.6);
	n = judge_run(&step, rk, NR, NOW, &par, s, out, 8);
	ok(n == 1 && out[0].plan_frac > 0.499 && out[0].plan_frac < 0.501 &&
	   strstr(out[0].text, "m = 1); stages") &&
	   strstr(out[0].text, "the schedule's own bubble with so few micro-batches (8 of them "
		  "would idle 11 %)"),
	   "bubble: 50 %% idle with m = 1 told: the plan is 50 %%, the schedule's own bubble, "
	   "and what 4 x pp would idle: %s", n ? out[0].text : "");
	par.bubble_microbatches = 0;
	/* A record started again (its span went back): a new window. */
	p2p_at(2, 1, 1);
	n = judge_run(&step, rk, NR, NOW, &par, s, out, 8);
	ok(n == 0, "bubble: a span that went back starts a new window, nothing measured (%zu)",
	   n);
	/* Without p2p time recorded: nothing. */
	healthy();
	n = judge_run(&step, rk, NR, NOW, &par, s, out, 8);
	ok(n == 0 && strcmp(judge_kind_name(JUDGE_PP_BUBBLE), "pipeline-bubble") == 0 &&
	   judge_kind_advice(JUDGE_PP_BUBBLE), "bubble: no p2p time, no finding (%zu)", n);
	judge_state_free(s);
	judge_params_default(&dflt);
	ok(dflt.bubble_window_ns == 60 * S && dflt.bubble_margin == 0.1 &&
	   dflt.bubble_microbatches == 0, "bubble: by default a window of 60 s, margin 0.1, m "
	   "not known");
}

/* Every rank's steps (its dp communicator's bursts) and forward transfers
 * (stage 0's sends to stage 1, stage 1's receives from stage 0), its pp
 * rank its stage. */
static void
steps_at(uint64_t steps, uint64_t fwd)
{
	int r;

	for (r = 0; r < NR; r++) {
		cm(r, C_DP)->bursts = steps;
		cm(r, C_PP)->rank = (int32_t)co_pp(r);
		if (co_pp(r))
			cm(r, C_PP)->p2p_rx[0] = fwd;
		else
			cm(r, C_PP)->p2p_tx[1] = fwd;
	}
}

/*
 * The micro-batches counted: 2 forward transfers a step (the plan with m =
 * 2 at pp 2 is 1 / 3); a window idle 40 % is within it and the margin:
 * the schedule's own bubble, said so; 50 % is more than it.  Without
 * steps counted (no bursts), the same 40 % is against m = 8 assumed.
 */
static void
bubble_counted_test(void)
{
	struct judge_finding out[8];
	struct judge_state *s;
	pl_err_t err;
	size_t n;
	int counted;

	for (counted = 1; counted >= 0; counted--) {
		s = judge_state_new(NR, &err);
		if (!s)
			return;
		par.bubble_window_ns = 10 * S;
		healthy();
		p2p_at(1, 0.5, 0.5);
		steps_at(counted ? 10 : 0, 20);
		n = judge_run(&step, rk, NR, NOW, &par, s, out, 8);
		/* 11 s: 4.4 s waited (40 %), 50 steps, 100 forward transfers */
		p2p_at(12, 4.9, 4.9);
		steps_at(counted ? 60 : 0, 120);
		n += judge_run(&step, rk, NR, NOW, &par, s, out, 8);
		if (counted) {
			ok(n == 1 && out[0].plan_frac > 0.333 && out[0].plan_frac < 0.334 &&
			   strstr(out[0].text, "m = 2 counted: forward transfers a step") &&
			   strstr(out[0].text, "the schedule's own bubble"),
			   "bubble: m = 2 counted (plan 33 %%), 40 %% idle: the schedule's own "
			   "bubble: %s", n ? out[0].text : "");
			/* 11 s more: 5.5 s waited (50 %) */
			p2p_at(23, 10.4, 10.4);
			steps_at(110, 220);
			n = judge_run(&step, rk, NR, NOW, &par, s, out, 8);
			ok(n == 1 && out[0].kind == JUDGE_PP_BUBBLE && out[0].plan_frac > 0.333 &&
			   out[0].plan_frac < 0.334 &&
			   strstr(out[0].text, "(plan (p-1)/(m+p-1) = 33 %, m = 2 counted: forward "
				  "transfers a step)") &&
			   strstr(out[0].text, "more than the schedule's bubble: a stage slower"),
			   "bubble: 50 %% idle against m = 2 counted: %s", n ? out[0].text : "");
		} else {
			ok(n == 1 && out[0].kind == JUDGE_PP_BUBBLE &&
			   strstr(out[0].text, "m = 8 assumed: 4 x pp"),
			   "bubble: the same 40 %% with no steps counted: m assumed, a warning: %s",
			   n ? out[0].text : "");
		}
		judge_state_free(s);
	}
	steps_at(0, 0);
}

int
main(void)
{
	judge_params_default(&par);
	par.busy_threshold_ns = 600 * S;	/* below NOW, for c_busy_long */
	par.stall_threshold_ns = STALL;
	par.slow_rounds = 3;
	par.slow_persist_ns = 2 * S;
	par.slow_margin = 0.05;
	par.slow_margin_off = 0.025;
	par.slow_smooth = 1;
	plan(3 * (int)NCASES - NLOST - NEND + 4 + 2 + 16 + 7 + 2 + 15 + 4 + 1 + 6 + 14 + 9 + 4 + 2 + 2 + 2 + 3);
	run_cases();
	slow_test();
	bounded_test();
	fallback_test();
	pause_end_test();
	node_view_test();
	timeouts_test();
	many_culprits_test();
	names_test();
	sorted_again_test();
	advice_test();
	bubble_test();
	bubble_counted_test();
	return done_testing();
}
