/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The judge: a whole step's ranks, as the step's leader sees them, in;
 * findings out.  Pure functions over plain structs like detect.h (no clock,
 * no I/O, no allocation per round): the caller gives `now` (the leader's
 * CLOCK_MONOTONIC ns; every time in the input rebased to it), the node
 * liveness and the thresholds, and keeps one struct judge_state per step
 * for what needs more than one round (the slow-rank rule).
 *
 * Findings, in this order (exits and slow ranks by rank, lost nodes by
 * index, the others by communicator hash, then collective):
 *   JUDGE_EXITED       a rank that exited, by the step's-end rule below:
 *                      a failure at once, an end by a termination signal
 *                      after end_grace_ns, exit 0 only when the step ran
 *                      on past the hang threshold; the first cause only.
 *   JUDGE_NODE_LOST    a node the caller marks lost (its summaries
 *                      stopped): its ranks are unknown and blamed for
 *                      nothing.
 *   JUDGE_MISMATCH     a communicator whose live members, at the position
 *                      (collective ordinal) a member has waited in past the
 *                      hang threshold, called different collectives:
 *                      another func, or the same func with another count,
 *                      datatype or (Broadcast, Reduce) root (rules.h's
 *                      rules_sig_same, on the signature each member's
 *                      record keeps of its last collective).  The code took
 *                      another path on some rank: the commonest way code
 *                      hangs a job.  One finding per communicator naming
 *                      the ranks whose signature is not the majority's
 *                      (every member there on a tie), both signatures
 *                      (sig, sig_peers) and the position; observed (each
 *                      culprit's own record shows its call), never a
 *                      drain (software).  Not judged while members are
 *                      missing (a node lost, late or not yet heard: the majority
 *                      is not known).  The group's stuck kernels, and the
 *                      waits of the culprits' and their peers' other
 *                      groups, are its effect and not named.
 *   JUDGE_NOT_ENTERED  a collective that members of a communicator (same
 *                      comm hash, on any node) have waited in for longer
 *                      than the hang threshold while others never entered
 *                      it: one finding per (communicator, collective)
 *                      naming every missing rank and counting the peers
 *                      waiting.  The rules are detect.h's, applied to the
 *                      whole step at once (detect_run itself compares every
 *                      pair of ranks: fine on a node, not on 16,384 ranks),
 *                      the cascade rule included: a rank held by its own
 *                      wait in another communicator (stuck on the GPU
 *                      there, or waiting there on a rank that lags) is not
 *                      named for the lag it causes, unless every lagger is
 *                      held so (a cycle).
 *   JUDGE_GPU_STUCK    a collective whose kernels made no progress for
 *                      longer than the threshold: one finding per
 *                      communicator, for its earliest such collective
 *                      (members stuck in a later one wait on it), naming
 *                      the ranks whose kernels still run there; observed
 *                      when a live member completed it, else inferred (and
 *                      always inferred for a p2p transfer and from the
 *                      never-silent rule).  A lagger whose own kernel in
 *                      the communicator is stuck is named here, not as
 *                      not-entered.  Left out where a member exited or
 *                      lags, or is named by the lag rule (the effect, not
 *                      the cause), or has members missing
 *                      while a node is lost or late; when that leaves no
 *                      finding at all, no rank exited (an exit explains the
 *                      waits even while its finding waits out its grace,
 *                      or the step is being ended) and no node is lost,
 *                      late or unheard (the waits may be on its ranks),
 *                      every stuck kernel is named (a hang is never
 *                      silent).  The p2p rule: a kernel stuck in a
 *                      p2p operation (DETECT_P2P: the summary carries its
 *                      peer) whose peer is in flight with another peer
 *                      (itself waiting) or in no p2p operation of the
 *                      communicator (it never posted its part: the data
 *                      never came) is the effect of a cause elsewhere and
 *                      not named; a peer stuck in the same transfer (its
 *                      peer is this rank) is its other end, and both
 *                      ends are named (the kernels do not tell which one
 *                      holds it); one in flight there for less than the
 *                      threshold moves (two summaries read apart, or it
 *                      posts only now), and neither is named that round.  A pipeline stage waiting on a stage
 *                      that waits upstream is so never named, even in the
 *                      round its wait crosses the threshold before the
 *                      cause's does.  Without the p2p part (KernelCh
 *                      off) every stuck kernel of the group is named.  The
 *                      unposted rule (rules.h) tells a peer that never
 *                      posted its part from data lost on the way: the
 *                      records count each rank's p2p operations to its
 *                      previous and next member (communicators of 2 to
 *                      16), and a neighbour that posted fewer of the
 *                      matching operations than the waiting rank, in no
 *                      NCCL operation itself, is named (a not-entered
 *                      finding, "never posted the Send that rank R waits
 *                      for", observed; busy when its process tree makes
 *                      progress), not the transfer that waits on it.  A
 *                      receive stuck after its sender's send was posted
 *                      (the data lost on the way) is still named only by
 *                      the never-silent rule.
 *   JUDGE_BUSY         a rank the not-entered rule would name whose process
 *                      tree makes progress (detect_proc: CPU above the
 *                      floor or I/O above its floor within the last hang threshold) while
 *                      its peers have waited less than busy_threshold: busy
 *                      outside NCCL (a checkpoint, a compile, data
 *                      loading), a warning saying what it does; one finding
 *                      per rank.  Past busy_threshold it is a not-entered
 *                      again, its line saying it was busy; a tree that made
 *                      no progress for the hang threshold is a hang, in D
 *                      state "stuck in the kernel" with its wchan.  A rank
 *                      not sampled is judged as before.
 *   JUDGE_STALLED      every present rank idle outside NCCL (nothing
 *                      entered and not completed, no kernel in flight) for
 *                      longer than stall_threshold: a checkpoint, a stuck
 *                      file system.  One finding for the step, no culprit.
 *                      Only judged where every communicator records its
 *                      GPU part (without KernelCh "idle" and "waiting"
 *                      look the same), after at least one collective, and
 *                      never while any rank is in a collective.
 *   JUDGE_SLOW         a rank that persistently arrives last in one of its
 *                      groups by a margin (below).
 * Then the advice (judge_kind_advice), which no rule above sees:
 *   JUDGE_TP_NETWORK   a TP group (its communicator's name says tp, or
 *                      its members' coordinates differ in tp and cp
 *                      only) whose present members are on more than one
 *                      node, or that NCCL counted more than one node for
 *                      at init (detect_comm.nnodes), the same count from
 *                      every member of the whole group (never one record's
 *                      alone: it may be another communicator's):
 *                      its collectives cross the network.  Placement never
 *                      puts a TP group across nodes, so the script built
 *                      it (a wrong rank order, its own new_group).  One
 *                      finding per communicator, every round while it
 *                      lives, naming its members (culprits), the nodes
 *                      (nspan) and the likely fix.  Not seen: a
 *                      nameless communicator whose members' planned
 *                      coordinates differ in dp (a TP group built from
 *                      the wrong ranks looks like a DP group then).
 *   JUDGE_FSDP_ROOT    FSDP wrapped only at its root module: in a group
 *                      spanning dp, expert dp or the world, the member
 *                      with the largest AllGather of its AllGather run
 *                      with the most bytes (record.h: a forward pass's
 *                      gathers, one run from the first AllGather to the
 *                      next other collective) has that one carry at
 *                      least 90 % of the run, and it gathers at least
 *                      512 MiB (its per-rank bytes times the group's
 *                      ranks).  Per-block wrapping splits a forward pass
 *                      into one AllGather per block (each 1/blocks of
 *                      the run).  One finding per step (the group that
 *                      gathers most); bytes and cost_frac (the share)
 *                      say how much.  A model under 512 MiB of gathered
 *                      parameters is left alone: its root-only wrap
 *                      costs little.
 *   JUDGE_PP_BUBBLE    the pipeline idles more than planned: each present
 *                      rank's PP group (a group spanning pp alone) gives
 *                      its p2p time (detect_comm: wait, span; KernelCh
 *                      on); once the span has grown
 *                      by bubble_window_ns since the rank's window began,
 *                      the window's idle share is wait / span added over
 *                      it, and a new window begins.  A stage's idle is its
 *                      ranks' mean; when the worst stage's is above the
 *                      plan by more than bubble_margin,
 *                      one finding for the step names it (cost_frac, and
 *                      plan_frac the plan).  m, the micro-batches per
 *                      step, is bubble_microbatches; the layout does not
 *                      say it, so by default 4 * pp is assumed (the
 *                      pipeline a layout is planned for: a bubble near
 *                      1/4).  The idle share counts every p2p wait, the
 *                      bubble and the waits on a slower neighbour alike;
 *                      the plan is the ideal 1F1B or GPipe bubble, (pp -
 *                      1) / m of the compute, as a share of the step's
 *                      time: (pp - 1) / (m + pp - 1).
 *
 * The step's-end rule.  scancel, the end of a job's time limit and Slurm
 * ending a step after a task failed (--kill-on-bad-exit) signal every
 * task; slurmstepd gives the SPANK task_exit callback only the task's wait
 * status, nothing about why it was signalled, so the rule reads the exits'
 * shape.  An exit is
 *   - an end by a termination signal: killed by SIGTERM, SIGKILL, SIGINT
 *     or SIGHUP, or exit code 128 + one of them (what a shell between
 *     Slurm and the program reports), or its status not known yet;
 *   - exit 0;
 *   - a failure: any other (an exit code other than 0, SIGSEGV, SIGABRT,
 *     SIGBUS, ...).
 * When more than half of the step's ranks (world) have ended by a
 * termination signal and no failure came before the first of them, the
 * step is being ended: no exit is named (a failure after that included:
 * a rank dying as its peers go) and judge_state_end() says so ("step
 * cancelled/ended by signal"), for the log and GET /v1/watch/step.
 * Otherwise each exit is a cause once it is due: a failure at once, an end
 * by a termination signal once end_grace_ns (at least
 * DETECT_EXIT_GRACE_NS) has passed since it (a lone rank killed, by the
 * OOM killer say), exit 0 once the hang threshold has passed while some
 * rank still runs.  Named are the first cause (by exit time) and the
 * causes within end_grace_ns after it (ends at the same moment cannot be
 * told apart); not the exits that come later (the peers' own timeouts
 * aborting them), nor any kill or exit 0 after a failure (Slurm killing
 * the others after it).  end_grace_ns must cover the summaries'
 * travel: the daemon gives at least 2 s and two intervals.  An exit seen
 * while a hang is named (a not-entered, GPU-stuck, mismatch or busy
 * finding in a round since its first, until end_grace_ns after its last)
 * is no cause either: the peers' own timeouts (NCCL's watchdog) aborting
 * them behind it, a busy rank's pause included.
 *
 * The slow-rank rule.  Each communicator's summary carries its window
 * (detect.h: the last min(done, 32) completions of its wait ring, the sum
 * of their waits and of the gaps before them, each gap less the p2p time
 * the record counted in it: a stage's waits on its neighbours are not its
 * compute, and left in the cycle they diluted the lead by the pipeline's
 * idle share).  Every round, in each
 * group (communicator) whose present members are all live, record the GPU
 * part and have at least slow_window completions in the window, each
 * member's mean wait w and mean cycle c = mean wait + mean gap are taken,
 * and for each member i
 *     lead(i)   = (median of the others' w  -  w(i)) / median of the others' c
 *     excess(i) = (w(i)  -  the others' smallest w) / median of the others' c
 * The rank that arrives last waits least and its peers wait for it: its
 * lead is the share of their time its peers spend waiting on it beyond
 * what it waits itself.  Durations only, each on its own rank's clock: no
 * clock across nodes is compared.  Both are smoothed per rank and
 * communicator over the rounds with new completions (weight slow_smooth
 * for the new round).  A rank qualifies in a round when
 *   - its largest lead is at least slow_margin (slow_margin_off once
 *     named): it costs its peers that share of their time;
 *   - so is its lead in its busiest communicator (the most completions:
 *     the finest steps of its compute, TP in Megatron): a slow GPU is
 *     late after every stretch of compute;
 *   - its excess is below slow_margin everywhere: it waits on nobody (the
 *     TP peer of a slow rank reaches its DP collective as late as the slow
 *     rank and leads there, but it waits in TP);
 *   - no rank of its pipeline (the ranks with its tp, cp, ep and dp
 *     coordinates) is held so by at least its own largest lead, or leads
 *     more (its positive leads added): a slow rank delays the other
 *     stages of its pipeline through the p2p transfers, and they then
 *     lead in DP, but the slow rank leads in its TP group too; a pipeline
 *     peer held by less (a healthy TP pair's jitter) explains no larger
 *     lead.
 * It is named once it has qualified in slow_rounds rounds with new
 * completions in a row (no round in between that does not qualify) and for
 * at least slow_persist_ns since it first did (since_ns).  The finding is
 * about the group where its lead was largest when it was named, and stays
 * so while that group is judged (an alert keeps its fingerprint);
 * cost_frac is its lead there.  Nothing is
 * judged slow in a round with a finding of another kind but NODE_LOST (the
 * streaks and smoothing start again): a hang or an exit explains any wait.
 * Not named: a whole TP group slow together (a slow node holding a TP
 * group) leads only in DP, as the stages it delays do, and no member leads
 * in TP.  Not told apart: with tp = 1 a slow rank and the stages it
 * delays lead only in DP, and the one of the pipeline that leads most is
 * named, which may be a stage it delays.
 *
 * The numbers, measured with bench/slowrank_measure (the real hook under
 * tests/nccl_driver, 8 ranks tp2 pp2 dp2 on one 2-core machine, rounds of
 * 1 s, records read with reader_read and detect_summarize, each run its
 * own seed; steps of about 20 ms, or 1.7 s with --layers 16 --compute-us
 * 30000):
 *   - a 10 % slower rank (--fault slow:5:10, +-2 % jitter) leads its TP
 *     peer by 0.04-0.05 a round (median; 0.012-0.09 in single rounds) and
 *     its DP group by 0.026-0.043; the ranks it delays lead by up to 0.06
 *     in DP and never qualified.  Named alone in 8 of 8 runs (5 with short
 *     steps, 3 with long), after 20-22 s (target: 30 s), cost 4.0-4.9 %.
 *     A 5 % slower rank leads by about 0.02, at the margin (named in some
 *     runs: it does cost its peers 2 % of their time).
 *   - healthy, +-2 % jitter: single rounds lead by up to 0.034; 20 runs of
 *     60 s, nothing named, no rank qualifying more than 4 rounds in a row.
 *   - with 20 % one-step spikes (--spike 20:10: each rank one step in 10),
 *     30 runs: nothing named, at most 2 rounds in a row.  With 1.7 s steps
 *     a spike fills a TP window (a round's lead up to 0.18); --spike 20:20,
 *     20 runs: nothing named, at most 8 rounds in a row (a spike every 5th
 *     step, 2 runs replayed from their windows: at most 12).
 *   - a pipeline diluted the lead while the gaps held the stage's p2p
 *     waits: at tp8 pp4 (--compute-us 20000) a 10 % slower rank led its
 *     TP group by only 0.025-0.031, and with one micro-batch a step at
 *     tp2 pp4 (stages idle about 75 %) by at most 0.034, never 20 rounds
 *     in a row: not named.  With the gaps less their p2p time (record
 *     version 2) it leads by 0.09-0.12 in every schedule, and was named
 *     alone at 21 s (1 run each, --compute-us 2000, --fault slow:5:10):
 *     GPipe with one micro-batch at tp2 pp4; 1F1B with 8 at tp2 pp4;
 *     interleaved 1F1B (--vpp 2, 8 micro-batches) at tp2 pp4; dp8 alone;
 *     tp2 cp2 dp2.  Healthy with --spike 20:10, 2 runs of 45 s each:
 *     nothing named; the longest streaks 13 rounds (GPipe, one
 *     micro-batch, tp2 pp4, 3 runs), 10 (interleaved), 5 (1F1B), 5 (tp2
 *     cp2 dp2), 5 (tp2 pp2 dp2); the undiluted leads of a healthy pair
 *     reach 0.09 in single rounds, as without a pipeline.
 *   Hence window 16 completions (half the ring: TP fills it in a second,
 *   DP in 16 steps), margin 0.02 (off 0.01), smoothing 0.3, and 20
 *   rounds over 20 s: well above the longest healthy streak seen (12 at
 *   margin 0.025, replayed; 11 at 0.02), inside the 30 s target.  Spikes
 *   are told from a slow rank by time: a
 *   slow step keeps its rank qualifying for about its own length plus the
 *   smoothing's few rounds, so steps longer than about 15 s need a longer
 *   slow_persist_ns (the numbers hold at other intervals: 20 s is what
 *   counts, with at least 20 rounds of new completions).
 *
 * Group names (judge_finding.group) come from the members' coordinates
 * (co[], indexed by enum judge_axis) and the layout sizes.  The axes a
 * communicator spans are taken from its name when the name is made of the
 * words tp, cp, ep, dp, pp, edp (expert data parallel) or world, joined by
 * '-' or '_' (any case); else from the coordinates that differ among its
 * members (a member's expert dp coordinate is (cp + CP * dp) / EP, as in
 * Megatron-Core's expert rank generator).  A group that spans every axis
 * larger than 1 is "world"; one that spans none (a nameless communicator
 * with one member present) "group of 1 rank"; otherwise "<AXES> group
 * <index>", followed by " of PP stage <pp>" when pp > 1 and the group does
 * not span pp.  The index is the lowest member's coordinates on the axes
 * the group does not span, pp aside, as a mixed-radix number with tp
 * fastest, then cp, dp (dense groups) or tp, ep, edp (groups spanning ep
 * or edp): with Megatron-Core's default order (tp-cp-ep-dp-pp) exactly the
 * group's position among the groups of its kind in its stage, as Megatron
 * builds them.  Examples with tp2 pp2 dp2, rank 5 (tp 1, dp 0, pp 1): its
 * TP group {4,5} is "TP group 0 of PP stage 1", its DP group {5,7} "DP
 * group 1 of PP stage 1", its PP group {1,5} "PP group 1".
 */
#ifndef PL_WATCH_JUDGE_H
#define PL_WATCH_JUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "detect.h"
#include "pl_err.h"

#define JUDGE_MAX_CULPRITS	16
#define JUDGE_GROUP_LEN		64
#define JUDGE_TEXT_LEN		256
#define JUDGE_NIC_LEN		32

/* The coordinate and layout-size index (the summary's order). */
enum judge_axis {
	JUDGE_TP = 0,
	JUDGE_CP,
	JUDGE_EP,
	JUDGE_DP,
	JUDGE_PP,
	JUDGE_NAXES
};

/* A node of the step, as the leader knows it. */
struct judge_node {
	const char *name;	/* the node's name (NULL: unknown) */
	int lost;		/* 1: its summaries stopped (peer_lost_s) */
	int leader;		/* the step's leader, judged by a node acting
				 * for it (its lost finding says so) */
	int unheard;		/* lost to an acting leader that never heard
				 * from it (it may send to the leader still):
				 * its ranks unknown, no finding of its own */
	int late;		/* not lost, but its last summary is older
				 * than the caller's freshness bound: its
				 * ranks are missing (not present), judged
				 * as a lost node's (nothing rests on them,
				 * no rule names a group missing them), no
				 * finding of its own */
	uint64_t last_ns;	/* when its last summary came, 0 never */
};

/* The step: identity, layout, nodes (ranks refer to them by index). */
struct judge_step {
	uint64_t job_id;
	uint64_t step_id;
	uint32_t uid;
	uint32_t world;
	uint32_t size[JUDGE_NAXES];	/* tp, cp, ep, dp, pp */
	const struct judge_node *nodes;
	size_t nnodes;
};

/* One rank as the leader sees it. */
struct judge_rank {
	struct detect_rank st;	/* rebased to the leader's clock */
	uint32_t node;		/* index into judge_step.nodes */
	int32_t gpu;		/* the local GPU index, -1 unknown */
	char nic[JUDGE_NIC_LEN];
	uint32_t co[JUDGE_NAXES]; /* coordinates tp, cp, ep, dp, pp */
	int present;		/* 0: no summary from its node (st unused) */
};

struct judge_params {
	uint64_t hang_threshold_ns;
	uint64_t busy_threshold_ns;	/* a rank busy outside NCCL is a hang
					 * past it (JUDGE_BUSY) */
	int slow_off;			/* 1: no slow-rank finding (a step's
					 * user asked so) */
	uint64_t stall_threshold_ns;
	uint32_t slow_window;	/* completions a member's window needs */
	uint32_t slow_rounds;	/* qualifying rounds with new completions */
	uint64_t slow_persist_ns; /* and for at least this long */
	double slow_margin;	/* the lead that qualifies */
	double slow_margin_off;	/* the lead that keeps a named rank named */
	double slow_smooth;	/* weight of a new round in the smoothed
				 * leads (0 < w <= 1; 1: no smoothing) */
	uint64_t end_grace_ns;	/* the step's-end rule's grace (above) */
	uint64_t bubble_window_ns; /* p2p span a rank's bubble window adds */
	double bubble_margin;	/* idle share above the plan that warns */
	uint32_t bubble_microbatches; /* m, 0: not known (4 * pp assumed) */
};

/* The step's end, as the last round saw it (the step's-end rule). */
struct judge_end {
	int ending;		/* 1: the step is being ended by signal */
	uint32_t nsignaled;	/* its ranks ended by a termination signal
				 * (or with no status yet) */
	uint32_t nexited;	/* its ranks exited, all of them */
	int sig;		/* the first one's signal, 0 unknown */
	uint64_t since_ns;	/* when the first one ended (leader clock) */
	char text[JUDGE_TEXT_LEN]; /* one line for people */
};

enum judge_kind {
	JUDGE_EXITED = 1,
	JUDGE_NODE_LOST = 2,
	JUDGE_NOT_ENTERED = 3,
	JUDGE_GPU_STUCK = 4,
	JUDGE_STALLED = 5,
	JUDGE_SLOW = 6,
	JUDGE_TP_NETWORK = 7,
	JUDGE_FSDP_ROOT = 8,
	JUDGE_PP_BUBBLE = 9,
	JUDGE_BUSY = 10,
	JUDGE_MISMATCH = 11
};
#define JUDGE_KIND_MAX	JUDGE_MISMATCH	/* the largest kind */

struct judge_finding {
	enum judge_kind kind;
	int evidence;			/* DETECT_OBSERVED: the culprit's own
					 * record shows the fault (it exited,
					 * lost its node, entered nothing while
					 * its peers wait, its kernel runs where
					 * a peer's completed, it runs slow);
					 * DETECT_INFERRED: by elimination (a
					 * cycle of waits, kernels stuck with
					 * none completed, a p2p transfer, the
					 * never-silent rule); the advice:
					 * observed */
	char group[JUDGE_GROUP_LEN];	/* "TP group 3 of PP stage 1", "world" */
	uint64_t comm_hash;		/* 0 for EXITED, NODE_LOST, STALLED */
	char comm[DETECT_NAME_LEN];	/* the communicator's name */
	char func[DETECT_TEXT_LEN];	/* the collective ("" unknown) */
	uint64_t seq;			/* its NCCL seq number */
	uint64_t colls;			/* its ordinal in the communicator */
	int64_t culprits[JUDGE_MAX_CULPRITS]; /* global ranks, ascending */
	size_t nculprits;		/* written (<= JUDGE_MAX_CULPRITS) */
	size_t ncul_total;		/* all of them */
	int32_t node;			/* NODE_LOST: the node; else the
					 * first culprit's; -1 none */
	size_t npeers_waiting;		/* NOT_ENTERED: peers in the
					 * collective; GPU_STUCK: the other
					 * members; SLOW: its group's others */
	uint64_t for_ns;		/* how long (wait, quiet, gone, idle,
					 * slow) */
	uint64_t since_ns;		/* since when (leader clock); 0 for the
					 * advice (not known) */
	int exit_status;		/* EXITED: wait status, -1 unknown */
	double cost_frac;		/* SLOW: its lead in the group (above):
					 * its peers' excess wait over their
					 * cycle; FSDP_ROOT: the AllGather's
					 * share of its run */
	uint64_t bytes;			/* FSDP_ROOT: the bytes it gathers */
	uint32_t nspan;			/* TP_NETWORK: the nodes the group
					 * spans (at least) */
	double plan_frac;		/* PP_BUBBLE: the planned idle share,
					 * (pp - 1) / (m + pp - 1); cost_frac the
					 * worst stage's measured one */
	/* MISMATCH: what the culprits called at collective colls (sig), and
	 * what the others there called (sig_peers: the majority's; on a tie
	 * one that differs, and nalike 0) */
	struct detect_sig sig, sig_peers;
	size_t nalike;			/* MISMATCH: the members that called
					 * sig_peers */
	char text[JUDGE_TEXT_LEN];	/* one line for people */
};

struct judge_state;

/* The default hang threshold and pipeline-bubble window, in seconds
 * (layoutd's hang_threshold_s and bubble_window_s default to them). */
#define JUDGE_HANG_THRESHOLD_S 60
#define JUDGE_BUSY_THRESHOLD_S 1800
#define JUDGE_BUBBLE_WINDOW_S 60

/* The defaults: the hang threshold and bubble window above, stall 300 s,
 * the slow-rank rule's values measured above, an end grace of 2 s. */
void judge_params_default(struct judge_params *p);

/*
 * A state for a step of `world` ranks (1 to 16,777,216), holding all the
 * judge needs for a round (no allocation per round): about 3.6 KB of
 * address space per rank (PLW_MAX_COMMS entries each), of which a round
 * touches what the ranks' communicators use (a 16,384-rank step with 6
 * communicators per rank: about 25 MB, 22 ms of CPU per round).  Caller
 * frees with judge_state_free().  NULL with err set when out of memory or
 * world is out of range.
 */
struct judge_state *judge_state_new(uint32_t world, pl_err_t *err);
void judge_state_free(struct judge_state *s);

/* The lead global rank `rank` had in the last round (its slowness score:
 * 0 when not judged or not leading). */
double judge_state_lead(const struct judge_state *s, int64_t rank);

/* The last round's note on the step's end into out (all 0 when the step
 * is not being ended by signal). */
void judge_state_end(const struct judge_state *s, struct judge_end *out);

/*
 * Judge one round: n ranks (at most the state's world; ranks beyond are
 * ignored, as are ranks outside [0, world) for the slow-rank rule), the
 * step's nodes in step->nodes, now.  Writes up to max findings into out
 * (in the order above) and returns how many there are (possibly more than
 * max, as snprintf does).  Updates s (the slow-rank streaks); otherwise
 * pure.
 */
size_t judge_run(const struct judge_step *step, const struct judge_rank *ranks, size_t n,
		 uint64_t now_ns, const struct judge_params *p, struct judge_state *s,
		 struct judge_finding *out, size_t max);

/* "exited", "node-lost", "not-entered", "gpu-stuck", "stalled", "slow",
 * "tp-over-network", "fsdp-root-only", "pipeline-bubble". */
const char *judge_kind_name(enum judge_kind k);

/* 1 for the kinds that advise on the layout or the script (TP_NETWORK,
 * FSDP_ROOT, PP_BUBBLE) rather than name a fault: they hold no other rule
 * off. */
int judge_kind_advice(enum judge_kind k);

/* "world", or the group's name (rules above) for members' coordinates:
 * co[i] the coordinates of member i, lowest rank first, name the
 * communicator's name (may be NULL).  Writes a NUL-terminated name into
 * out (size bytes, cut with "..." when longer); "" when n is 0. */
void judge_group_name(const struct judge_step *step, const uint32_t (*co)[JUDGE_NAXES],
		      size_t n, const char *name, char *out, size_t size);

#endif
