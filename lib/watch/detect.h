/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Detection on one node, as pure functions: the state of the node's ranks
 * in, verdicts out.  No clock, no I/O: the caller gives `now` (CLOCK_MONOTONIC
 * ns, the clock of the records) and the threshold.
 *
 * The state is a compact summary per rank and communicator (struct
 * detect_comm, 272 bytes; at most PLW_MAX_COMMS per rank), made from a
 * reader snapshot by detect_summarize().  It is what the next step sends
 * across nodes: fixed size, no pointers, times as the node's monotonic ns
 * (a receiver converts them to ages against the sender's `now`).
 *
 * Verdicts (detect_run), in this order:
 *   DETECT_EXITED       a rank whose process exited while its step runs:
 *                       the failures first, then the others.  The caller
 *                       passes only ranks of steps that still run.  A
 *                       failure (rules.h's exit rule: a non-zero exit or a
 *                       signal other than Slurm's step-ending ones) is
 *                       named at once.  An exit whose status is not known
 *                       yet (the process is gone, the exit callback has not
 *                       come) is named once it has been gone
 *                       DETECT_EXIT_GRACE_NS.  Exit 0 and an end by
 *                       SIGTERM, SIGKILL, SIGINT or SIGHUP (or exit 128 +
 *                       one) are named only when the step has run on for
 *                       longer than the threshold since: at the end of a
 *                       healthy step the ranks finish a little apart, and
 *                       scancel kills every rank; neither is a fault.
 *   DETECT_MISMATCH     a rank that called another collective than its
 *                       peers at the same position of a communicator all of
 *                       whose members are on the node (another func; the
 *                       same func with another count, datatype or, for
 *                       Broadcast and Reduce, root), while one of them has
 *                       waited there past the threshold: the code took
 *                       another path on that rank.  Named are the ranks
 *                       whose signature is not the majority's (every rank
 *                       there on a tie); the communicator's stuck kernels
 *                       are its effect.  A communicator with members
 *                       elsewhere is the step's leader's to judge.
 *   DETECT_NOT_ENTERED  a rank that has not entered a collective that its
 *                       local peers of the same communicator (same job, step
 *                       and comm hash) have waited in longer than the
 *                       threshold: its count of collectives entered is below
 *                       theirs, and the peer that entered the next one
 *                       (counted by the peer's own last entry) has waited
 *                       more than threshold since, with nothing entered
 *                       after it, and not completed it on the GPU when its
 *                       GPU completions are recorded.  The verdict names that
 *                       collective (func, seq of the peer that waited
 *                       longest) and how long it waited.  A lagger held by
 *                       its own wait in another communicator is left out:
 *                       stuck there on the GPU (that verdict names the
 *                       cause), or ahead of a lagger there (held in TP by a
 *                       stopped peer, it cannot reach the DP collective its
 *                       DP peers wait in) unless every lagger is held so
 *                       (a cycle): then those are named.
 *   DETECT_GPU_STUCK    a collective in flight on the GPU (kernel channels
 *                       started, not all stopped) with no channel progress
 *                       for longer than the threshold.  Not reported for a
 *                       communicator in which a local rank exited or was
 *                       found not entering: its peers' stuck kernels are the
 *                       effect, not the cause.  A node names only what
 *                       it can tell: a kernel still running where a local
 *                       peer's kernel completed the same collective
 *                       (observed), or, in a communicator all of whose
 *                       members are on the node, every stuck kernel
 *                       (inferred).  Never a p2p transfer (its other end,
 *                       waiting for data, looks the same) nor a collective
 *                       with members elsewhere all stuck here: a rank that
 *                       only waits is no culprit, and the step's leader
 *                       sees every member.  When that leaves no
 *                       verdict of any kind (a cycle of
 *                       waits, each stuck on the GPU), every such stuck
 *                       kernel is named, inferred: a hang is never silent.
 * Every verdict says what it rests on (evidence): observed, its rank's own
 * record or process shows it (an exit, a collective never entered while
 * its peers wait, a kernel running where its peers' completed), or
 * inferred (a cycle of laggers, a stuck group of the node's own).
 * "Longer than" is strict: a wait of exactly the threshold is no verdict.
 * A rank that never initialised a communicator (no slot) takes part in no
 * communicator and so yields no verdict but its exit.  Busy slots (a writer
 * inside) and finalized communicators are left out.
 */
#ifndef PL_WATCH_DETECT_H
#define PL_WATCH_DETECT_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"

#define DETECT_NAME_LEN	48	/* the communicator's name (PLW_NAME_LEN) */
#define DETECT_TEXT_LEN	16	/* func (PLW_TEXT_LEN) */
/* How long an exit with no status yet waits for its status (the exit
 * callback comes within milliseconds of the process's end). */
#define DETECT_EXIT_GRACE_NS	1000000000ULL

/* detect_comm.flags */
#define DETECT_GPU	0x1u	/* the GPU part is recorded (KernelCh on) */
#define DETECT_BUSY	0x2u	/* the slot was busy: no launch/gpu state */
#define DETECT_FINAL	0x4u	/* the communicator was finalized */
#define DETECT_P2P	0x8u	/* with DETECT_GPU: a p2p operation is in
				 * flight (entered, not all completed on the
				 * GPU); p2p_peer is the last one's peer */
#define DETECT_SEND	0x10u	/* with DETECT_P2P: that one is a send */

/*
 * One rank's state in one communicator (272 bytes, no pointers).
 *
 * The window: the collectives whose completion the record's wait ring
 * still holds, the most recent min(done, PLW_RING) of them.  nwait counts
 * them; wait_sum_ns adds their waits (enqueue to the last kernel channel
 * seen stopped: a rank that arrives last waits least, its peers most) and
 * gap_sum_ns the gaps before them (the previous completion to this
 * enqueue, less the process's p2p time in it, record.h's ring_p2p: the
 * rank's own compute, not its waits on the pipeline's stages; 0 for the
 * first collective ever and for one enqueued before the previous one
 * completed).  Sums of
 * durations, not times: they need no rebasing.  All 0 without the GPU
 * part (DETECT_GPU clear) or when the slot was busy.
 */
struct detect_comm {
	uint64_t hash;		/* NCCL commHash: the same on every rank */
	char name[DETECT_NAME_LEN];
	int32_t rank;		/* in the communicator */
	int32_t nranks;
	uint32_t flags;		/* DETECT_* */
	uint32_t nwait;		/* completions in the window, <= PLW_RING */
	uint64_t colls;		/* collectives entered */
	uint64_t seq;		/* the last one's NCCL seq number */
	char func[DETECT_TEXT_LEN]; /* and its func */
	uint64_t enter_ns;	/* when it was entered */
	uint64_t done;		/* collectives completed on the GPU */
	uint64_t ch_inflight;	/* kernel channels started, not stopped */
	uint64_t progress_ns;	/* last kernel channel start or stop */
	uint64_t wait_sum_ns;	/* the window's waits, added */
	uint64_t gap_sum_ns;	/* the window's gaps less their p2p time */
	int32_t p2p_peer;	/* DETECT_P2P: the last p2p operation's peer
				 * (its rank in the communicator), else -1 */
	int32_t nnodes;		/* nodes in its init (NCCL's count), 0
				 * unknown */
	/* The AllGather run with the most bytes (record.h), all 0 when not
	 * recorded or not consistent (detect_ag_ok). */
	uint64_t ag_peak_bytes;
	uint64_t ag_peak_calls;
	uint64_t ag_peak_top;
	/* The p2p time (record.h), durations: 0 when not recorded or the
	 * wait is above the span. */
	uint64_t p2p_wait_ns;
	uint64_t p2p_span_ns;
	/* The rest of the last collective's signature (func is above): what
	 * every member must call alike at each position (detect_sig_same). */
	uint64_t count;		/* its count (AllGather, Broadcast: bytes) */
	char dtype[DETECT_TEXT_LEN]; /* its datatype, "ncclFloat32", ... */
	int32_t root;		/* its root, -1 none */
	/* The p2p operations it posted to ([0]) its previous member (rank - 1
	 * modulo nranks) and ([1]) its next (rank + 1): sends and receives,
	 * from the record's per-peer counts; all 0 when those do not tell one
	 * peer from another (nranks above PLW_PEER_BUCKETS, or below 2).  A
	 * pipeline stage's neighbours: whether the peer a stuck transfer waits
	 * on ever posted its part (rules_p2p_unposted). */
	uint64_t p2p_tx[2], p2p_rx[2];
	/* Its bursts (record.h): on a data-parallel group, the training
	 * steps; 0 when not recorded. */
	uint64_t bursts;
};

/* 1 when an AllGather run's counts could be true: none, or calls whose
 * largest carries at most the run's bytes and at least their mean. */
static inline int
detect_ag_ok(uint64_t bytes, uint64_t calls, uint64_t top)
{
	if (!calls)
		return !bytes && !top;
	return top <= bytes && bytes / calls <= top;
}

/*
 * What the OS shows of the rank's process tree (proctree.h: layoutd
 * samples it as root; the record, which the rank writes, cannot claim
 * it).  All 0 when not sampled.  progress_ns and dstate_ns are times on
 * the clock of enter_ns (ages on the wire).
 */
#define DETECT_WCHAN_LEN 32
struct detect_proc {
	uint32_t known;		/* 1: two samples taken, the rates below hold */
	char state;		/* its main thread's state (R, S, D, ...), 0 unknown */
	char wchan[DETECT_WCHAN_LEN]; /* where it sleeps in the kernel, "" */
	uint32_t nprocs;	/* processes in its tree, it included */
	uint32_t threads;	/* their threads */
	uint64_t cpu_milli;	/* the tree's CPU over the last interval,
				 * thousandths of a core */
	uint64_t read_bps;	/* its storage reads, bytes a second */
	uint64_t write_bps;	/* and writes */
	uint64_t progress_ns;	/* when the tree last made progress (CPU
				 * above the floor, or I/O), 0 never */
	uint64_t dstate_ns;	/* since when its main thread is in D, 0 not */
};

/* One local rank (of a running step) and its communicators. */
struct detect_rank {
	uint64_t job_id;
	uint64_t step_id;
	int64_t rank;		/* global rank */
	int64_t pid;
	int exited;		/* 1: the process ended */
	int exit_known;		/* 1: exit_status is known */
	int exit_status;	/* wait status (WIFEXITED/WIFSIGNALED) */
	uint64_t exit_ns;	/* when the end was seen (0: unknown, long ago) */
	struct detect_proc proc;
	uint32_t ncomm;
	struct detect_comm comm[PLW_MAX_COMMS];
};

enum detect_kind {
	DETECT_EXITED = 1,
	DETECT_NOT_ENTERED = 2,
	DETECT_GPU_STUCK = 3,
	DETECT_RANK_BUSY = 4,	/* a lagger busy outside NCCL (rules_busy) */
	DETECT_MISMATCH = 5	/* called another collective than its peers
				 * at the same position (rules_sig_split) */
};

/* A collective's signature: what every member of a communicator must
 * call alike at each position (detect_sig_of; rules_sig_same). */
struct detect_sig {
	char func[DETECT_TEXT_LEN];
	char dtype[DETECT_TEXT_LEN];
	uint64_t count;
	int32_t root;		/* -1 none */
};

/* The signature of c's last collective entered. */
void detect_sig_of(const struct detect_comm *c, struct detect_sig *out);

/* detect_run's busy threshold (the judge's default too). */
#define DETECT_BUSY_THRESHOLD_NS (UINT64_C(1800) * UINT64_C(1000000000))

struct detect_verdict {
	enum detect_kind kind;
	uint64_t job_id;
	uint64_t step_id;
	int64_t rank;		/* the rank the verdict names */
	int64_t pid;
	int exit_status;	/* DETECT_EXITED: the wait status, -1 unknown */
	uint64_t comm_hash;	/* the others: the communicator */
	char comm_name[DETECT_NAME_LEN];
	char func[DETECT_TEXT_LEN]; /* the collective */
	uint64_t seq;
	uint64_t colls;		/* its ordinal among the comm's collectives */
	int64_t peer_rank;	/* DETECT_NOT_ENTERED: the peer that waited
				 * longest (global rank), else -1 */
	uint64_t for_ns;	/* how long (0 for DETECT_EXITED) */
	int evidence;		/* DETECT_OBSERVED or DETECT_INFERRED */
	/* DETECT_MISMATCH: what the rank called at position colls, and what
	 * its peers there called (the majority's; func "" on a tie) */
	struct detect_sig sig, want;
};

/* What a verdict rests on: its rank's own record and process show the
 * fault, or it is the one left by elimination. */
#define DETECT_OBSERVED	1
#define DETECT_INFERRED	2

/*
 * The summary of one rank from its record's snapshot: header identity and
 * every used slot in slot order (busy slots flagged DETECT_BUSY).  exited,
 * exit_known, exit_status and exit_ns start at 0; the caller fills them.
 */
void detect_summarize(const struct reader_snap *snap, struct detect_rank *out);

/*
 * The verdicts for n ranks of one node at `now`: writes up to max of them
 * into out (in the order above, then by rank) and returns how many there
 * are (possibly more than max, as snprintf does).  threshold_ns is the hang
 * threshold.  Pure: reads only its arguments.  A lagger busy outside NCCL
 * (rules_busy: its process tree makes progress, its peers have waited less
 * than busy_ns) is DETECT_RANK_BUSY, not DETECT_NOT_ENTERED; detect_run takes
 * DETECT_BUSY_THRESHOLD_NS for it.
 */
size_t detect_run_busy(const struct detect_rank *ranks, size_t n, uint64_t now_ns,
		       uint64_t threshold_ns, uint64_t busy_ns, struct detect_verdict *out,
		       size_t max);
size_t detect_run(const struct detect_rank *ranks, size_t n, uint64_t now_ns,
		  uint64_t threshold_ns, struct detect_verdict *out, size_t max);

/* "observed", "inferred". */
const char *detect_evidence_name(int ev);

/* "exited", "not-entered", "gpu-stuck", "busy", "mismatch". */
const char *detect_kind_name(enum detect_kind k);

#endif
