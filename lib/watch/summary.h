/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The node summary: what one node's layoutd tells a step's leader every
 * watch interval about its ranks of the step (the detect_rank state of
 * detect.h, with each rank's naming info).  Binary, versioned, bounded, no
 * pointers; full state, not a delta, so a leader that restarts has the
 * whole view again from the next summaries.
 *
 * Byte order and encoding: every integer of the header is little-endian,
 * written and read byte by byte at its offset (never a struct copied), so
 * the format is the same on every host.  The header's node is a fixed
 * array, NUL-terminated within it, printable ASCII (0x20-0x7e) before the
 * NUL and zeros after it.  Offsets below are in bytes.
 *
 *   header, SUM_HEADER_BYTES (168):
 *     0 magic u64 SUM_MAGIC (the bytes "PLWSUM01")   8 version u32
 *    12 total_size u32 (the whole summary)          16 node char[64]
 *    80 job_id u64     88 step_id u64               96 sender_now_ns u64
 *   104 sender_real_ns u64   112 msg_seq u64        120 boot_id u64
 *   128 uid u32       132 interval_ms u32          136 world u32
 *   140 size u32[5] (tp, cp, ep, dp, pp)           160 nranks u32
 *   164 reserved u32 (0)
 *   then nranks times a rank, each followed by its ncomm communicators,
 *   packed: each integer an unsigned LEB128 varint (7 bits a byte, least
 *   significant first, the high bit saying another byte follows; at most
 *   10 bytes, in its shortest form, so a value has one encoding), each
 *   text counted (a length byte below the field's array size, then that
 *   many printable ASCII bytes, no NUL), the communicator's hash the 8
 *   little-endian bytes it is:
 *   a rank: rank, pid, exit_age_ns, exit_status, gpu + 1 (0: unknown),
 *     co[5] (tp, cp, ep, dp, pp), one byte of exit bits (0x1 exited, 0x2
 *     exit_known, no other), nic (text, 32 bytes with its NUL), ncomm;
 *   a communicator, the fields of struct detect_comm: hash (8 bytes),
 *     name (text, 48), rank, nranks, flags, nwait, p2p_peer, colls, seq,
 *     func (text, 16), enter_age_ns, done, ch_inflight, progress_age_ns,
 *     wait_sum_ns, gap_sum_ns, nnodes, ag_peak_bytes, ag_peak_calls,
 *     ag_peak_top, p2p_wait_ns, p2p_span_ns.
 *   then, after the last rank entry, each rank's process tree in the
 *   order of the rank entries (detect_proc): one byte state (0 or a
 *   letter), known, nprocs, threads, cpu_milli, read_bps, write_bps,
 *   progress_age_ns, dstate_age_ns, wchan (text, 32 bytes with its NUL).
 *   then, after the last process tree, the rest of each communicator, in
 *   the order of the rank entries and their communicators: its last
 *   collective's count, datatype (text, 16) and root + 1 (0: none; at
 *   most 2^31), what the mismatch rule compares; then the p2p operations
 *   it posted to its previous and next member, p2p_tx_prev, p2p_rx_prev,
 *   p2p_tx_next, p2p_rx_next (detect.h; all 0 unless nranks is 2 to
 *   PLW_PEER_BUCKETS).
 *   p2p_peer is the peer of the p2p operation in flight with the flag
 *   DETECT_P2P (the one a stuck p2p kernel waits on: judge.h), 0 without.
 *   nnodes is the nodes NCCL counted at its init (0 unknown; at most
 *   nranks); ag_peak_* its AllGather run with the most bytes (record.h;
 *   all 0, or calls >= 1 with bytes / calls <= top <= bytes); p2p_wait_ns
 *   and p2p_span_ns its p2p time (record.h; durations, the wait at most
 *   the span, the span at most ten years).
 * A varint's bound is its field's (u32 fields at most 2^32 - 1, rank,
 * nranks, exit_status, nnodes at most 2^31 - 1, p2p_peer below
 * SUM_MAX_WORLD), then the checks below apply to the values.  A healthy
 * rank with six communicators takes about 350 bytes: a leader reads,
 * hashes and parses few bytes (libevent reads 4 KB a syscall; see
 * docs/ARCHITECTURE.md, the leader's cost).
 *
 * Times: the sender's clocks mean nothing to the receiver, so each time of
 * detect_rank (exit_ns) and detect_comm (enter_ns, progress_ns) travels as
 * an AGE against the sender's now (sender_now_ns, CLOCK_MONOTONIC): age 0
 * means the time was 0 (never); a time at or after now is sent as age 1.
 * sum_decode rebases: t = recv_now_ns - age on the receiver's own clock
 * (so no clock synchronisation is needed; what is lost is the transit
 * time), and t = 1 when the age is recv_now_ns or more.  wait_sum_ns and
 * gap_sum_ns are durations and travel as they are.  sender_real_ns
 * (CLOCK_REALTIME) only dates the summary for people.
 *
 * Versioning: the layout above is SUM_VERSION (7: version 5 and, after
 * its process trees, each communicator's signature rest, its p2p counts
 * to its neighbours and its bursts, as version 5 put the process trees
 * after version 4's rank entries: every earlier offset stays), the only
 * one on the wire (versions 1 to 3 came before the first release and
 * were never sent by one).  Any change takes a new version; the receiver
 * reads its own and refuses any other, naming the version found and the one it
 * reads, so a leader never misreads a summary: upgrade the layoutds of a
 * cluster together.  The reserved header field is 0 and checked.
 *
 * What the receiver checks (sum_decode), before any field is used:
 *   - the length: at least the header, at most SUM_MAX_BYTES, equal to
 *     total_size, and exactly the header plus every rank and communicator
 *     the counts say (every varint and text checked against what is left
 *     before it is read, with room kept for the smallest rank entries
 *     still to come);
 *   - magic and version (SUM_VERSION only); nranks <= SUM_MAX_RANKS,
 *     ncomm <= PLW_MAX_COMMS;
 *   - texts as above; the node name not empty;
 *   - world in [1, SUM_MAX_WORLD], every layout size >= 1 and
 *     tp * cp * dp * pp == world (ep folds into cp * dp: 1 <= ep <= world);
 *     interval_ms in [1, SUM_MAX_INTERVAL_MS]; msg_seq >= 1; uid not
 *     (uint32_t)-1;
 *   - per rank: 0 <= rank < world, no rank twice; pid in [1, INT32_MAX];
 *     exited and exit_known 0 or 1, exit_known only when exited;
 *     exit_status a wait status (0-65535), 0 while not known; exit_age_ns 0
 *     while not exited; coordinate co[a] < size[a]; gpu -1 (unknown) or in
 *     [0, SUM_MAX_GPU);
 *   - per communicator: nnodes in [0, nranks]; the AllGather run and the
 *     p2p time as above; bursts <= colls;
 *     flags only DETECT_GPU, DETECT_BUSY, DETECT_FINAL,
 *     DETECT_P2P and DETECT_SEND (with DETECT_P2P); p2p_peer in
 *     [0, nranks) with DETECT_P2P, 0 without;
 *     0 <= rank < nranks <= SUM_MAX_WORLD (nranks 0 only in a busy slot,
 *     whose identity was not readable); nwait <= PLW_RING; the sums 0 when
 *     nwait is 0 and at most nwait * SUM_MAX_AGE_NS;
 *   - per process tree: known 0 or 1, the rates and the progress age 0
 *     while not known; state 0 or a letter, a D-state age only in D;
 *     nprocs, threads, cpu_milli and the I/O rates within SUM_MAX_*;
 *   - every age at most SUM_MAX_AGE_NS (ten years).
 * A summary that fails one check is refused whole, with a pl_err_t naming
 * the rank entry, the field, its value and what is accepted.
 *
 * Not checked here (the leader's business, it knows the step): that the
 * node, job, step and uid are the step's and the ranks the node's; the
 * munge credential; msg_seq and boot_id against the last summary.
 */
#ifndef PL_WATCH_SUMMARY_H
#define PL_WATCH_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "detect.h"
#include "pl_err.h"

#define SUM_MAGIC	0x31304d5553574c50ULL	/* "PLWSUM01" little-endian */
#define SUM_VERSION	7u
#define SUM_MAX_RANKS	1024		/* ranks in one summary */
#define SUM_MAX_BYTES	(1u << 20)	/* a whole summary */
#define SUM_MAX_WORLD	(1 << 24)	/* ranks in a step or communicator */
#define SUM_MAX_GPU	1024		/* a node's GPU index is below */
#define SUM_MAX_INTERVAL_MS 3600000u	/* one hour */
/* Ten years of 365.25 days, in ns: an age beyond is refused. */
#define SUM_MAX_AGE_NS	(UINT64_C(315576000) * UINT64_C(1000000000))
/* A rank's process tree (detect_proc): the bounds a sample can reach. */
#define SUM_MAX_PROCS		65536u
#define SUM_MAX_THREADS		(1u << 24)
#define SUM_MAX_CPU_MILLI	10000000u	/* 10,000 cores */
#define SUM_MAX_BPS		(UINT64_C(1) << 44)	/* 16 TiB/s */

#define SUM_NODE_LEN	64		/* node name and NUL */
#define SUM_NIC_LEN	32		/* NIC name and NUL */
#define SUM_NAXES	5		/* tp, cp, ep, dp, pp: enum pl_axis order */

#define SUM_HEADER_BYTES 168u

/* What a node knows of a rank beside its detect_rank: how to name it. */
struct sum_rank_info {
	int32_t gpu;			/* the node's GPU index, -1 unknown */
	char nic[SUM_NIC_LEN];		/* the NIC the plugin gave it, "" none */
	uint32_t co[SUM_NAXES];		/* its coordinates, tp cp ep dp pp */
};

/* The summary's header, decoded (nranks and total_size are not here: the
 * rank count is sum_decode's *n and the size the input's length). */
struct sum_header {
	char node[SUM_NODE_LEN];	/* the sending node's name */
	uint64_t job_id;
	uint64_t step_id;
	uint32_t uid;			/* the job's user */
	uint32_t interval_ms;		/* the sender's watch interval */
	uint64_t sender_now_ns;		/* the sender's CLOCK_MONOTONIC now,
					 * the ages' origin */
	uint64_t sender_real_ns;	/* its CLOCK_REALTIME then */
	uint64_t msg_seq;		/* 1, 2, ... per step, from 1 again
					 * when the sender restarts */
	uint64_t boot_id;		/* random per sender start */
	uint32_t world;			/* ranks in the step */
	uint32_t size[SUM_NAXES];	/* the step's layout, tp cp ep dp pp */
};

/*
 * Append the summary of n ranks (ranks[i] named by info[i]) under header h
 * to out.  The ages are taken against h->sender_now_ns.  The ranks' job_id
 * and step_id must be h's (they are not sent per rank).
 *
 * What comes from a rank's record (the user's) never makes the summary
 * fail: a byte of a communicator's name or func, or of a NIC, that is not
 * printable ASCII is sent as '?'; an age beyond SUM_MAX_AGE_NS and a wait
 * or gap sum beyond nwait * SUM_MAX_AGE_NS are sent as that bound.  What
 * the caller chose does: more than SUM_MAX_RANKS ranks or PLW_MAX_COMMS
 * communicators, a summary over SUM_MAX_BYTES, a header field or a rank
 * field sum_decode would refuse.  Returns 0, or -1 with err set and out
 * as it was (or bad, when out of memory).
 */
int sum_encode(struct buf *out, const struct sum_header *h, const struct detect_rank *ranks,
	       const struct sum_rank_info *info, size_t n, pl_err_t *err);

/*
 * Decode and check a summary of len bytes (every check of this file's
 * header comment), with its times rebased to recv_now_ns, the receiver's
 * CLOCK_MONOTONIC when it came.  On success fills *h, sets *n and returns 0
 * with *ranks and *info arrays of *n entries (NULL when *n is 0; caller
 * frees both); each rank's job_id and step_id are the header's.  On a
 * refusal returns -1 with err naming the field, the value and what is
 * accepted; *ranks and *info are NULL and *n 0.  Nothing is allocated
 * before the length is known to hold the ranks the header counts.
 */
int sum_decode(const void *data, size_t len, uint64_t recv_now_ns, struct sum_header *h,
	       struct detect_rank **ranks, struct sum_rank_info **info, size_t *n,
	       pl_err_t *err);

/*
 * The same into arrays kept from one call to the next, for a receiver that
 * decodes many summaries (a leader: no allocation per summary).  On
 * success sp->ranks and sp->info hold the *n ranks until the next call;
 * they grow to the largest rank count seen and are freed by
 * sum_space_free.  On a refusal *n is 0 and their contents are undefined.
 */
struct sum_space {
	struct detect_rank *ranks;
	struct sum_rank_info *info;
	size_t cap;		/* ranks both arrays hold */
};

int sum_decode_in(const void *data, size_t len, uint64_t recv_now_ns, struct sum_header *h,
		  struct sum_space *sp, size_t *n, pl_err_t *err);
void sum_space_free(struct sum_space *sp);

/*
 * What a receiver at recv_now_ns would decode from sum_encode's summary of
 * the same arguments, into sp (as sum_decode_in), without the bytes: the
 * same texts made printable, sums and ages bounded, times rebased, and the
 * same refusals (by the same checks).  For a leader's own node, whose
 * summary need not go through the wire to reach its judge.  0, or -1 with
 * err and *n 0.
 */
int sum_carry(const struct sum_header *h, const struct detect_rank *ranks,
	      const struct sum_rank_info *info, size_t n, uint64_t recv_now_ns,
	      struct sum_space *sp, size_t *nout, pl_err_t *err);

/*
 * A batch: the summaries a relay forwards to the leader in one message
 * (the fan-in of daemon/watch/peer.c), each with how long it waited at the
 * relay so that the leader rebases its ages right.
 *
 *   header, SUM_BATCH_HEADER_BYTES (24):
 *     0 magic u64 SUM_BATCH_MAGIC (the bytes "PLWBAT01")   8 version u32
 *    12 count u32 (items)    16 total_size u64 (the whole batch)
 *   then count items, each SUM_BATCH_ITEM_BYTES (16) and its bytes:
 *     0 hold_ns u64 (at most SUM_MAX_AGE_NS)   8 len u32   12 reserved u32 (0)
 *    16 the summary, len bytes (1 to SUM_MAX_BYTES; not checked here)
 *
 * The walk (sum_batch_next) checks the framing before handing out an
 * item: the header, count 1 to SUM_BATCH_MAX_ITEMS, total_size equal to
 * the length and at most SUM_BATCH_MAX_BYTES, each item's header and
 * length inside the batch, nothing after the last.  Each summary is then
 * the receiver's to decode (sum_decode) and refuse on its own.
 */
#define SUM_BATCH_MAGIC		0x3130544142574c50ULL	/* "PLWBAT01" little-endian */
#define SUM_BATCH_VERSION	1u
#define SUM_BATCH_HEADER_BYTES	24u
#define SUM_BATCH_ITEM_BYTES	16u
#define SUM_BATCH_MAX_ITEMS	1024u
#define SUM_BATCH_MAX_BYTES	(16u << 20)

/* Start a batch in out (emptied first).  0, or -1 (out of memory). */
int sum_batch_begin(struct buf *out, pl_err_t *err);

/* Add a summary of len bytes that has waited hold_ns.  0, or -1 with err
 * when the batch would be full (items or bytes) or out of memory; out is
 * then as it was. */
int sum_batch_add(struct buf *out, const void *sum, size_t len, uint64_t hold_ns,
		  pl_err_t *err);

/* The number of items in a batch built with sum_batch_add. */
size_t sum_batch_count(const struct buf *b);

/*
 * Walk a received batch of len bytes: *off 0 to start.  Returns 1 with the
 * next item (*sum, *sumlen, *hold_ns) and *off moved past it, 0 at the
 * end, -1 with err when the batch is malformed (where and what).  Call
 * sum_batch_check first to refuse a malformed batch before taking any of
 * its items.
 */
int sum_batch_next(const void *data, size_t len, size_t *off, const void **sum,
		   size_t *sumlen, uint64_t *hold_ns, pl_err_t *err);

/* The whole framing of a batch checked: its item count, or -1 with err. */
long sum_batch_check(const void *data, size_t len, pl_err_t *err);

#endif
