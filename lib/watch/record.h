/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-rank watch record: a fixed-size file the NCCL hook (one writer per
 * part) maps into each rank and layoutd (a reader) maps read-only to see
 * what the rank's communicators are doing.  Header-only: the hook includes
 * it and links nothing of lib/.
 *
 * Layout: struct plw_record = one plw_header, then PLW_MAX_COMMS plw_slot.
 * Fixed size, no pointers, every 64-bit field naturally aligned, every part
 * 64-byte aligned (parts written by different threads never share a cache
 * line).  A reader checks magic, version, header_size, slot_size, nslots and
 * record_size before anything else, and refuses a record that differs.
 *
 * Times: "_ns" fields ending in "mono" or plain "_ns" are CLOCK_MONOTONIC
 * nanoseconds of the rank's node (comparable with layoutd's own
 * CLOCK_MONOTONIC); start_real_ns is the CLOCK_REALTIME taken next to
 * start_mono_ns, so a reader converts t to wall time as
 * start_real_ns + (t - start_mono_ns).  "gpu_" times are the GPU's
 * %globaltimer in ns, only comparable with each other.
 *
 * Tearing: each slot has three parts, each with one writer and its own
 * sequence counter (the Linux seqcount / perf mmap page recipe):
 *   ident   written once by the thread running the communicator's init;
 *   launch  written by the thread that enqueues (Coll/P2p task events);
 *   gpu     written by the communicator's proxy progress thread (KernelCh).
 * The writer makes seq odd, stores the fields, makes seq even again; a
 * reader copies the part and retries while seq was odd or changed.  seq 0
 * means "never written".  Fields are accessed with relaxed atomic word
 * loads and stores (plw_st64, plw_read_part), so neither side is a data
 * race in C11 terms.  Header counters are single 64-bit atomics bumped with
 * fetch-add from any thread (never torn, read one by one).
 */
#ifndef PLW_RECORD_H
#define PLW_RECORD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PLW_MAGIC	0x3144524f4357504cULL	/* "LPWCORD1" little-endian */
#define PLW_VERSION	2u	/* 2: the ring's p2p times (ring_p2p) */
#define PLW_MAX_COMMS	32	/* communicator slots per record */
#define PLW_RING	32	/* collectives kept in each slot's wait ring */
#define PLW_PEER_BUCKETS 16	/* p2p counted per (peer % PLW_PEER_BUCKETS) */
#define PLW_NAME_LEN	48	/* communicator name, NUL-padded */
#define PLW_TEXT_LEN	16	/* func, datatype, algo, proto, NUL-padded */

/* File name inside the watch directory: plw-JOB.STEP.RANK.PID (see the
 * hook's header comment for where each part comes from). */
#define PLW_FILE_PREFIX	"plw-"

/* plw_header.state */
enum plw_state {
	PLW_STATE_INIT = 0,	/* being set up (never seen by a reader that
				 * checks magic: magic is stored last) */
	PLW_STATE_ACTIVE = 1,	/* the hook is recording */
	PLW_STATE_OFF = 2	/* the hook turned itself off; see off_reason */
};

/*
 * plw_header.off_reason (when state is PLW_STATE_OFF).  When the hook
 * cannot record at all it makes no record (it says why in NCCL's log);
 * MASK_ZERO and POOL are kept for writers that do.
 */
enum plw_off_reason {
	PLW_OFF_NONE = 0,
	PLW_OFF_MASK_ZERO = 1,	/* the configured event mask was 0 */
	PLW_OFF_POOL = 2,	/* could not allocate the event pools */
	PLW_OFF_FINALIZED = 3	/* every communicator has finalized (a new
				 * one makes the record active again) */
};

/* plw_ident.state */
enum plw_slot_state {
	PLW_SLOT_FREE = 0,
	PLW_SLOT_ACTIVE = 1,	/* communicator initialised */
	PLW_SLOT_FINALIZED = 2	/* communicator finalized (destroy/abort) */
};

/* A short NUL-padded text, stored as words so it copies atomically. */
union plw_text {
	char c[PLW_TEXT_LEN];
	uint64_t w[PLW_TEXT_LEN / 8];
};

union plw_name {
	char c[PLW_NAME_LEN];
	uint64_t w[PLW_NAME_LEN / 8];
};

/*
 * The record header (256 bytes).  Written once at creation except state,
 * off_reason and the counters.
 */
struct plw_header {
	uint64_t magic;		/* PLW_MAGIC; stored last at creation */
	uint32_t version;	/* PLW_VERSION */
	uint32_t header_size;	/* sizeof(struct plw_header) */
	uint32_t slot_size;	/* sizeof(struct plw_slot) */
	uint32_t nslots;	/* PLW_MAX_COMMS */
	uint64_t record_size;	/* sizeof(struct plw_record): the file size */
	uint64_t job_id;	/* SLURM_JOB_ID, or 0 */
	uint64_t step_id;	/* SLURM_STEP_ID, or 0 */
	int64_t rank;		/* RANK (else SLURM_PROCID), or -1 */
	int64_t pid;		/* the writing process */
	uint64_t start_mono_ns;	/* CLOCK_MONOTONIC at creation */
	uint64_t start_real_ns;	/* CLOCK_REALTIME taken with start_mono_ns */
	uint32_t state;		/* enum plw_state (atomic) */
	uint32_t off_reason;	/* enum plw_off_reason (atomic) */
	uint64_t event_mask;	/* the NCCL activation mask the hook set */
	uint32_t nccl_abi;	/* 5 or 4: the table NCCL called */
	uint32_t pad0;
	/* Counters (atomic fetch-add, any thread). */
	uint64_t slots_taken;	/* communicator inits seen; > nslots means
				 * comms_dropped of them got no slot */
	uint64_t comms_dropped;	/* communicators not recorded (no slot) */
	uint64_t events_dropped; /* events not recorded: pool full */
	uint64_t events_busy;	/* events not recorded: another thread was
				 * writing the same launch part */
	uint64_t foreign_events; /* PXN ProxyOps of another process, ignored */
	uint64_t bad_context;	/* events with a NULL or unknown context */
	uint64_t bad_handle;	/* stop/state on a handle not ours or stale */
	uint64_t reserved[12];
};

/* Part written once by the communicator's init thread (192 bytes). */
struct plw_ident {
	_Atomic uint64_t seq;
	uint64_t comm_hash;	/* NCCL commId/commHash: same on every rank */
	union plw_name name;	/* commName, "" when NCCL gave none */
	int32_t rank;		/* rank in the communicator */
	int32_t nranks;
	int32_t nnodes;
	uint32_t state;		/* enum plw_slot_state */
	uint64_t init_ns;	/* when init ran */
	uint64_t fini_ns;	/* when finalize ran, 0 before */
	uint64_t reserved[12];
};

/* Part written by the enqueuing thread (Coll/P2p task events). */
struct plw_launch {
	_Atomic uint64_t seq;
	uint64_t colls;		/* collectives entered (Coll starts) */
	uint64_t p2ps;		/* p2p operations entered */
	/* The last collective entered. */
	uint64_t seq_number;	/* NCCL's per-comm, per-func counter */
	uint64_t count;		/* elements (AllGather/Broadcast: bytes) */
	uint64_t enqueue_ns;	/* Coll start */
	int32_t root;		/* -1 when the collective has none */
	uint32_t nchannels;
	union plw_text func;	/* "AllReduce", ... */
	union plw_text datatype; /* "ncclFloat32", ... */
	union plw_text algo;	/* "RING", "TREE", ... */
	union plw_text proto;	/* "LL", "LL128", "SIMPLE" */
	/* The last p2p operation entered. */
	uint64_t p2p_ns;	/* P2p start */
	int32_t p2p_peer;
	uint32_t p2p_is_send;	/* 1 Send, 0 Recv */
	uint64_t p2p_count;
	/* p2p operations per peer bucket (peer % PLW_PEER_BUCKETS). */
	uint64_t sends[PLW_PEER_BUCKETS];
	uint64_t recvs[PLW_PEER_BUCKETS];
	/*
	 * AllGather runs: a run is the AllGathers entered one after another
	 * with no other collective of the communicator between them (p2p
	 * operations do not break it); the run with the most bytes so far is
	 * kept.  FSDP gathers a forward pass's parameters in one run: in one
	 * AllGather when only the root module is wrapped, one per block when
	 * each block is.  Bytes are the Coll event's count (AllGather: bytes
	 * each rank sends).  All 0 from a writer that does not keep them.
	 */
	uint64_t ag_peak_bytes;	/* that run's bytes */
	uint64_t ag_peak_calls;	/* its AllGathers */
	uint64_t ag_peak_top;	/* the largest of them, bytes */
	/* Bursts: the reducing collectives (AllReduce, ReduceScatter)
	 * entered with a p2p operation of the process (any communicator's)
	 * since this communicator's reducing collective before.  A
	 * data-parallel group's gradient sync after a pipeline flush is one
	 * burst however many buckets it has (and FSDP's AllGathers of
	 * parameters none): its bursts count the training steps.  0 from a
	 * writer that does not keep it. */
	uint64_t bursts;
	uint64_t reserved[2];
};

/* One completed collective in the wait ring (32 bytes). */
struct plw_wait {
	uint64_t seq_number;
	uint64_t enqueue_ns;	/* Coll start */
	uint64_t wait_ns;	/* enqueue -> last channel seen stopped */
	uint64_t gap_ns;	/* previous completion -> this enqueue; 0 when
				 * they overlap (the compute between them) */
};

/* Part written by the communicator's proxy progress thread (KernelCh). */
struct plw_gpu {
	_Atomic uint64_t seq;
	uint64_t ch_started;	/* KernelCh starts seen (all channels) */
	uint64_t ch_stopped;	/* KernelCh stops seen */
	uint64_t progress_ns;	/* last KernelCh start or stop */
	uint64_t start_seq_number; /* Coll of the last KernelCh start */
	uint64_t done;		/* collectives completed on the GPU */
	uint64_t done_seq_number; /* the last completed collective */
	uint64_t done_enqueue_ns; /* its enqueue time */
	uint64_t done_ns;	/* when its last channel was seen stopped */
	uint64_t gpu_start_ns;	/* its first channel's GPU start */
	uint64_t gpu_stop_ns;	/* its last channel's GPU stop */
	uint64_t p2p_done;	/* p2p operations completed on the GPU */
	union plw_text done_func;
	/* p2p time (0 from a writer that does not keep it): the time some p2p
	 * operation was between its P2p start and its last channel's stop,
	 * overlaps counted once, and the span from the first P2p start to the
	 * last completion.  Durations on this rank's clock.  wait / span is
	 * the share of its p2p span the rank spent in transfers: on a
	 * pipeline stage, its idle time waiting on its neighbours. */
	uint64_t p2p_wait_ns;
	uint64_t p2p_span_ns;
	/* ring[(n - 1) % PLW_RING] is the n-th completion, n = done. */
	struct plw_wait ring[PLW_RING];
	/* ring_p2p[i]: the p2p time of the process (every communicator's
	 * transfers, record.h's p2p time added as they complete) that fell in
	 * ring[i]'s gap, at most that gap: what of the gap the rank spent
	 * waiting on its pipeline rather than computing.  0 from a writer
	 * that does not keep it. */
	uint64_t ring_p2p[PLW_RING];
};

struct plw_slot {
	_Alignas(64) struct plw_ident ident;
	_Alignas(64) struct plw_launch launch;
	_Alignas(64) struct plw_gpu gpu;
};

struct plw_record {
	_Alignas(64) struct plw_header hdr;
	struct plw_slot slot[PLW_MAX_COMMS];
};

_Static_assert(sizeof(struct plw_header) == 256, "plw_header layout");
_Static_assert(sizeof(struct plw_ident) % 64 == 0, "plw_ident padding");
_Static_assert(sizeof(struct plw_launch) % 64 == 0, "plw_launch padding");
_Static_assert(sizeof(struct plw_gpu) % 64 == 0, "plw_gpu padding");
_Static_assert(offsetof(struct plw_record, slot) == 256, "slots follow header");

/* ---- shared field access ---------------------------------------------- */

/* Store one 64-bit (or 32-bit) field inside a part being written. */
#define plw_st64(p, v)	__atomic_store_n((p), (uint64_t)(v), __ATOMIC_RELAXED)
#define plw_st32(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define plw_ld64(p)	__atomic_load_n((p), __ATOMIC_RELAXED)

/* Bump a header counter (any thread). */
static inline void
plw_count(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* Store a NUL-padded copy of s (NULL: empty) into a text field of len bytes
 * (a multiple of 8), word by word.  Longer strings are cut (the last byte
 * stays NUL). */
static inline void
plw_st_text(uint64_t *w, size_t len, const char *s)
{
	size_t i, k = 0;

	for (i = 0; i < len / 8; i++) {
		union {
			char c[8];
			uint64_t w;
		} u = { .w = 0 };
		size_t j;

		for (j = 0; j < 8 && s && k < len - 1 && s[k]; j++)
			u.c[j] = s[k++];
		plw_st64(&w[i], u.w);
	}
}

/* ---- writer side (one writer per part) -------------------------------- */

/*
 * Begin writing a part: seq becomes odd.  The release fence orders the odd
 * seq before the field stores that follow, so a reader that sees any new
 * field also sees seq changed.
 */
static inline void
plw_write_begin(_Atomic uint64_t *seq)
{
	uint64_t s = atomic_load_explicit(seq, memory_order_relaxed);

	atomic_store_explicit(seq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

/*
 * The same for a part that more than one thread might try to write at once
 * (NCCL may run task events on a CUDA host-callback thread): take the part
 * only if it is not being written (seq even) with one compare-and-swap.
 * Returns 0 when taken, -1 when another writer holds it (the caller drops
 * the update and counts it; it never waits).
 */
static inline int
plw_write_try_begin(_Atomic uint64_t *seq)
{
	uint64_t s = atomic_load_explicit(seq, memory_order_relaxed);

	if (s & 1)
		return -1;
	if (!atomic_compare_exchange_strong_explicit(seq, &s, s + 1,
	    memory_order_acquire, memory_order_relaxed))
		return -1;
	atomic_thread_fence(memory_order_release);
	return 0;
}

/* End writing: seq becomes even, after (release) every field store. */
static inline void
plw_write_end(_Atomic uint64_t *seq)
{
	uint64_t s = atomic_load_explicit(seq, memory_order_relaxed);

	atomic_store_explicit(seq, s + 1, memory_order_release);
}

/* ---- reader side ------------------------------------------------------ */

#define PLW_READ_TRIES	1000

/*
 * Copy the part at src (size bytes, a multiple of 8, starting with its seq)
 * into dst, retrying while a writer is inside (seq odd) or wrote meanwhile
 * (seq changed).  Returns the (even) seq of the copy: 0 means the part was
 * never written; -1 (as uint64_t: UINT64_MAX) means the writer stayed busy
 * for PLW_READ_TRIES tries (a torn copy is never returned).
 */
static inline uint64_t
plw_read_part(const void *src, void *dst, size_t size)
{
	const uint64_t *sw = src;
	uint64_t *dw = dst;
	const _Atomic uint64_t *seq = src;
	int t;

	for (t = 0; t < PLW_READ_TRIES; t++) {
		uint64_t s1, s2;
		size_t i;

		s1 = atomic_load_explicit(seq, memory_order_acquire);
		if (s1 & 1)
			continue;
		for (i = 1; i < size / 8; i++)
			dw[i] = __atomic_load_n(&sw[i], __ATOMIC_RELAXED);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(seq, memory_order_relaxed);
		if (s1 == s2) {
			dw[0] = s1;
			return s1;
		}
	}
	return UINT64_MAX;
}

/* Typed readers: 0 and a consistent copy in *out, or -1 when the part was
 * never written or stayed busy. */
static inline int
plw_read_ident(const struct plw_slot *s, struct plw_ident *out)
{
	uint64_t q = plw_read_part(&s->ident, out, sizeof(*out));

	return q == 0 || q == UINT64_MAX ? -1 : 0;
}

static inline int
plw_read_launch(const struct plw_slot *s, struct plw_launch *out)
{
	uint64_t q = plw_read_part(&s->launch, out, sizeof(*out));

	if (q == UINT64_MAX)
		return -1;
	if (q == 0)
		memset(out, 0, sizeof(*out));	/* nothing entered yet */
	return 0;
}

static inline int
plw_read_gpu(const struct plw_slot *s, struct plw_gpu *out)
{
	uint64_t q = plw_read_part(&s->gpu, out, sizeof(*out));

	if (q == UINT64_MAX)
		return -1;
	if (q == 0)
		memset(out, 0, sizeof(*out));	/* nothing completed yet */
	return 0;
}

/* Header counters and state, one 64-bit (or 32-bit) atomic load each. */
#define plw_read_counter(hdr, field)	plw_ld64(&(hdr)->field)

/*
 * 0 when the header describes a record this reader understands and that
 * fits in size bytes; -1 otherwise.  The magic is read with acquire: the
 * writer stores it last (release) at creation.
 */
static inline int
plw_check_header(const struct plw_header *h, uint64_t size)
{
	if (size < sizeof(struct plw_record))
		return -1;
	if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != PLW_MAGIC)
		return -1;
	if (h->version != PLW_VERSION ||
	    h->header_size != sizeof(struct plw_header) ||
	    h->slot_size != sizeof(struct plw_slot) ||
	    h->nslots != PLW_MAX_COMMS ||
	    h->record_size != sizeof(struct plw_record))
		return -1;
	return 0;
}

#endif
