/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The node summary: encoding and the hostile-input decoder (see summary.h). */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "summary.h"

_Static_assert(SUM_NAXES == PL_NAXES, "coordinates in enum pl_axis order");
_Static_assert(SUM_NODE_LEN >= 2 && SUM_NIC_LEN >= 2, "room for a text and its NUL");
_Static_assert(DETECT_NAME_LEN == 48 && DETECT_TEXT_LEN == 16, "the comm texts' wire sizes");

/* Offsets in the header (summary.h). */
enum {
	H_MAGIC = 0, H_VERSION = 8, H_TOTAL = 12, H_NODE = 16, H_JOB = 80, H_STEP = 88,
	H_NOW = 96, H_REAL = 104, H_SEQ = 112, H_BOOT = 120, H_UID = 128, H_INTERVAL = 132,
	H_WORLD = 136, H_SIZE = 140, H_NRANKS = 160, H_RESERVED = 164
};
_Static_assert(H_RESERVED + 4 == SUM_HEADER_BYTES, "header layout");
_Static_assert(H_NODE + SUM_NODE_LEN == H_JOB, "the node's text fills its array");

#define KNOWN_FLAGS	(DETECT_GPU | DETECT_BUSY | DETECT_FINAL | DETECT_P2P | DETECT_SEND)

/* The largest rank and communicator (every varint at its longest, every
 * text full), and the smallest (every varint one byte, every text empty). */
#define RANK_MAX	(4 * 10 + 10 + SUM_NAXES * 5 + 1 + SUM_NIC_LEN + 5)
#define COMM_MAX	(8 + DETECT_NAME_LEN + 5 * 5 + 8 * 10 + DETECT_TEXT_LEN + 6 * 10)
#define RANK_MIN	(5 + SUM_NAXES + 1 + 1 + 1)
/* A rank's process tree (version 5, after the rank entries), at its
 * longest and shortest; a rank takes at least RANK_MIN + PROC_MIN. */
#define PROC_MAX	(1 + 1 + 2 * 5 + 5 * 10 + DETECT_WCHAN_LEN)
#define PROC_MIN	(1 + 8 + 1)
#define COMM_MIN	(8 + 1 + 5 + 2 + 1 + 6 + 6)
/* A communicator's rest (version 7, after the process trees): count,
 * datatype, root + 1, the p2p operations to and from its neighbours, its
 * bursts. */
#define SIG_MAX		(10 + DETECT_TEXT_LEN + 5 + 5 * 10)
#define SIG_MIN		8
_Static_assert((uint64_t)SUM_HEADER_BYTES + (uint64_t)SUM_MAX_RANKS * (RANK_MAX + PROC_MAX) <=
	       SUM_MAX_BYTES, "the most ranks, with no communicator, fit the size bound");

static const char *const axis[SUM_NAXES] = { "tp", "cp", "ep", "dp", "pp" };

/* Little-endian stores and loads, a byte at a time. */
static void
put32(uint8_t *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
put64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* ---- checks shared by the encoder (on its input) and the decoder ---- */

static int
printable(unsigned char c)
{
	return c >= 0x20 && c <= 0x7e;
}

/* A text in a struct array: NUL within it, printable before. */
static int
text_check(const char *s, size_t size, const char *where, const char *what, pl_err_t *err)
{
	char c[PL_CLIP_BUF];
	size_t i, n = strnlen(s, size);

	if (n == size)
		return pl_err_set(err, "%s: %s %s: no NUL within its %zu bytes", where, what,
				  pl_clipn(s, size, c, sizeof(c)), size);
	for (i = 0; i < n; i++)
		if (!printable((unsigned char)s[i]))
			return pl_err_set(err, "%s: %s %s: byte %zu is 0x%02x, want printable "
					  "ASCII (0x20-0x7e)", where, what,
					  pl_clipn(s, n, c, sizeof(c)), i, (unsigned char)s[i]);
	return 0;
}

/* The header's values (the node's text included); where is "node summary
 * ...". */
static int
header_check(const struct sum_header *h, const char *where, pl_err_t *err)
{
	uint64_t prod = 1;
	int a;

	if (text_check(h->node, sizeof(h->node), where, "node", err) < 0)
		return -1;
	if (!h->node[0])
		return pl_err_set(err, "%s: node: empty, want the sending node's name", where);
	if (h->world < 1 || h->world > SUM_MAX_WORLD)
		return pl_err_set(err, "%s: world %" PRIu32 ": want 1 to %d", where, h->world,
				  SUM_MAX_WORLD);
	for (a = 0; a < SUM_NAXES; a++)
		if (h->size[a] < 1 || h->size[a] > h->world)
			return pl_err_set(err, "%s: layout %s = %" PRIu32 ": want 1 to the world, %"
					  PRIu32, where, axis[a], h->size[a], h->world);
	/* ep is no dense digit: tp * cp * dp * pp is the world (layout.h). */
	for (a = 0; a < SUM_NAXES; a++)
		if (a != PL_EP && (prod *= h->size[a]) > h->world)
			break;
	if (prod > h->world)
		return pl_err_set(err, "%s: layout tp%" PRIu32 " cp%" PRIu32 " dp%" PRIu32 " pp%"
				  PRIu32 ": tp*cp*dp*pp exceeds the world, %" PRIu32 ": want it equal",
				  where, h->size[PL_TP], h->size[PL_CP], h->size[PL_DP],
				  h->size[PL_PP], h->world);
	if (prod < h->world)
		return pl_err_set(err, "%s: layout tp%" PRIu32 " cp%" PRIu32 " dp%" PRIu32 " pp%"
				  PRIu32 ": tp*cp*dp*pp = %" PRIu64 ", want the world, %" PRIu32,
				  where, h->size[PL_TP], h->size[PL_CP], h->size[PL_DP],
				  h->size[PL_PP], prod, h->world);
	if (h->interval_ms < 1 || h->interval_ms > SUM_MAX_INTERVAL_MS)
		return pl_err_set(err, "%s: interval_ms %" PRIu32 ": want 1 to %u", where,
				  h->interval_ms, SUM_MAX_INTERVAL_MS);
	if (h->msg_seq < 1)
		return pl_err_set(err, "%s: msg_seq 0: want 1 or more (a step's first summary "
				  "is 1)", where);
	if (h->uid == UINT32_MAX)
		return pl_err_set(err, "%s: uid %" PRIu32 ": want a uid below it (it means none)",
				  where, h->uid);
	return 0;
}

/* One rank's values against the header (where names the rank entry). */
static int
rank_check(const struct sum_header *h, const struct detect_rank *r, uint64_t exit_age,
	   const struct sum_rank_info *in, const char *where, pl_err_t *err)
{
	int a;

	if (r->rank < 0 || r->rank >= (int64_t)h->world)
		return pl_err_set(err, "%s: rank %" PRId64 ": want 0 to %" PRIu32 " (world %" PRIu32
				  ")", where, r->rank, h->world - 1, h->world);
	if (r->pid < 1 || r->pid > INT32_MAX)
		return pl_err_set(err, "%s: pid %" PRId64 ": want 1 to %d", where, r->pid,
				  INT32_MAX);
	if (r->exited != 0 && r->exited != 1)
		return pl_err_set(err, "%s: exited %d: want 0 or 1", where, r->exited);
	if (r->exit_known != 0 && r->exit_known != 1)
		return pl_err_set(err, "%s: exit_known %d: want 0 or 1", where, r->exit_known);
	if (r->exit_known && !r->exited)
		return pl_err_set(err, "%s: exit_known 1 while exited 0: want an exit status "
				  "only for a rank that exited", where);
	if (r->exit_status < 0 || r->exit_status > 0xffff)
		return pl_err_set(err, "%s: exit_status %d: want a wait status, 0 to 65535",
				  where, r->exit_status);
	if (!r->exit_known && r->exit_status != 0)
		return pl_err_set(err, "%s: exit_status %d while exit_known 0: want 0", where,
				  r->exit_status);
	if (!r->exited && exit_age != 0)
		return pl_err_set(err, "%s: exit_age_ns %" PRIu64 " while exited 0: want 0", where,
				  exit_age);
	if (exit_age > SUM_MAX_AGE_NS)
		return pl_err_set(err, "%s: exit_age_ns %" PRIu64 ": want at most %" PRIu64
				  " (ten years)", where, exit_age, SUM_MAX_AGE_NS);
	for (a = 0; a < SUM_NAXES; a++)
		if (in->co[a] >= h->size[a])
			return pl_err_set(err, "%s: coordinate %s = %" PRIu32 ": want 0 to %" PRIu32
					  " (layout %s%" PRIu32 ")", where, axis[a], in->co[a],
					  h->size[a] - 1, axis[a], h->size[a]);
	if (in->gpu < -1 || in->gpu >= SUM_MAX_GPU)
		return pl_err_set(err, "%s: gpu %" PRId32 ": want -1 (unknown) or 0 to %d", where,
				  in->gpu, SUM_MAX_GPU - 1);
	/* (the NIC's text: checked where it is read, text_get and tget, and
	 * made printable where it is written, text_put and tput) */
	if (r->ncomm > PLW_MAX_COMMS)
		return pl_err_set(err, "%s: ncomm %" PRIu32 ": want at most %d", where, r->ncomm,
				  PLW_MAX_COMMS);
	return 0;
}

/* A rank's process tree (detect.h's detect_proc), with its two ages. */
static int
proc_check(const struct detect_proc *p, uint64_t prog_age, uint64_t dstate_age,
	   const char *where, pl_err_t *err)
{
	if (p->known > 1)
		return pl_err_set(err, "%s: proc known %" PRIu32 ": want 0 or 1", where, p->known);
	if (p->state && !((p->state >= 'A' && p->state <= 'Z') ||
			  (p->state >= 'a' && p->state <= 'z')))
		return pl_err_set(err, "%s: proc state 0x%02x: want 0 (unknown) or a letter", where,
				  (unsigned char)p->state);
	if (p->nprocs > SUM_MAX_PROCS || p->threads > SUM_MAX_THREADS)
		return pl_err_set(err, "%s: proc %" PRIu32 " processes, %" PRIu32 " threads: want at "
				  "most %u and %u", where, p->nprocs, p->threads, SUM_MAX_PROCS,
				  SUM_MAX_THREADS);
	if (p->cpu_milli > SUM_MAX_CPU_MILLI)
		return pl_err_set(err, "%s: proc cpu_milli %" PRIu64 ": want at most %u (cores x "
				  "1000)", where, p->cpu_milli, SUM_MAX_CPU_MILLI);
	if (p->read_bps > SUM_MAX_BPS || p->write_bps > SUM_MAX_BPS)
		return pl_err_set(err, "%s: proc I/O %" PRIu64 " and %" PRIu64 " bytes/s: want at "
				  "most %" PRIu64, where, p->read_bps, p->write_bps, SUM_MAX_BPS);
	if (!p->known && (p->cpu_milli || p->read_bps || p->write_bps || prog_age))
		return pl_err_set(err, "%s: proc rates or progress while known 0: want 0", where);
	if (prog_age > SUM_MAX_AGE_NS || dstate_age > SUM_MAX_AGE_NS)
		return pl_err_set(err, "%s: proc ages %" PRIu64 " and %" PRIu64 " ns: want at most %"
				  PRIu64 " (ten years)", where, prog_age, dstate_age, SUM_MAX_AGE_NS);
	if (dstate_age && p->state != 'D')
		return pl_err_set(err, "%s: proc in D state for a time while its state is 0x%02x: "
				  "want D", where, (unsigned char)p->state);
	return 0;
}

/* One communicator's values, with its ages (where names it). */
static int
comm_check(const struct detect_comm *c, uint64_t enter_age, uint64_t progress_age,
	   const char *where, pl_err_t *err)
{
	if (c->flags & ~KNOWN_FLAGS)
		return pl_err_set(err, "%s: flags 0x%" PRIx32 ": want only 0x%x (gpu), 0x%x (busy), "
				  "0x%x (finalized), 0x%x (p2p) and 0x%x (send)", where, c->flags,
				  DETECT_GPU, DETECT_BUSY, DETECT_FINAL, DETECT_P2P, DETECT_SEND);
	if ((c->flags & DETECT_SEND) && !(c->flags & DETECT_P2P))
		return pl_err_set(err, "%s: flags 0x%" PRIx32 ": 0x%x (send) only with 0x%x (p2p)",
				  where, c->flags, DETECT_SEND, DETECT_P2P);
	if ((c->flags & DETECT_P2P) && (c->p2p_peer < 0 || c->p2p_peer >= c->nranks))
		return pl_err_set(err, "%s: p2p_peer %" PRId32 ": want 0 to %" PRId32 " (nranks %"
				  PRId32 ")", where, c->p2p_peer, c->nranks - 1, c->nranks);
	if (c->nranks == 0 && c->rank == 0 && (c->flags & DETECT_BUSY)) {
		/* A busy slot whose identity could not be read. */
	} else if (c->nranks < 1 || c->nranks > SUM_MAX_WORLD) {
		return pl_err_set(err, "%s: nranks %" PRId32 ": want 1 to %d (0 only in a busy "
				  "slot)", where, c->nranks, SUM_MAX_WORLD);
	} else if (c->rank < 0 || c->rank >= c->nranks) {
		return pl_err_set(err, "%s: rank %" PRId32 ": want 0 to %" PRId32 " (nranks %"
				  PRId32 ")", where, c->rank, c->nranks - 1, c->nranks);
	}
	/* (the texts: as rank_check's NIC) */
	if (c->nnodes < 0 || c->nnodes > c->nranks)
		return pl_err_set(err, "%s: nnodes %" PRId32 ": want 0 (unknown) to %" PRId32
				  " (nranks)", where, c->nnodes, c->nranks);
	if (!detect_ag_ok(c->ag_peak_bytes, c->ag_peak_calls, c->ag_peak_top))
		return pl_err_set(err, "%s: AllGather run of %" PRIu64 " bytes in %" PRIu64
				  " calls, the largest %" PRIu64 ": want all 0, or the largest at "
				  "most the run and at least its mean", where, c->ag_peak_bytes,
				  c->ag_peak_calls, c->ag_peak_top);
	if (c->p2p_wait_ns > c->p2p_span_ns || c->p2p_span_ns > SUM_MAX_AGE_NS)
		return pl_err_set(err, "%s: p2p_wait_ns %" PRIu64 " in p2p_span_ns %" PRIu64 ": want "
				  "the wait at most the span, at most ten years", where,
				  c->p2p_wait_ns, c->p2p_span_ns);
	if (c->nwait > PLW_RING)
		return pl_err_set(err, "%s: nwait %" PRIu32 ": want at most %d (the wait ring)",
				  where, c->nwait, PLW_RING);
	if (c->wait_sum_ns > c->nwait * SUM_MAX_AGE_NS)
		return pl_err_set(err, "%s: wait_sum_ns %" PRIu64 ": want at most %" PRIu64
				  " (nwait %" PRIu32 " times ten years)", where, c->wait_sum_ns,
				  c->nwait * SUM_MAX_AGE_NS, c->nwait);
	if (c->gap_sum_ns > c->nwait * SUM_MAX_AGE_NS)
		return pl_err_set(err, "%s: gap_sum_ns %" PRIu64 ": want at most %" PRIu64
				  " (nwait %" PRIu32 " times ten years)", where, c->gap_sum_ns,
				  c->nwait * SUM_MAX_AGE_NS, c->nwait);
	if (enter_age > SUM_MAX_AGE_NS)
		return pl_err_set(err, "%s: enter_age_ns %" PRIu64 ": want at most %" PRIu64
				  " (ten years)", where, enter_age, SUM_MAX_AGE_NS);
	if (progress_age > SUM_MAX_AGE_NS)
		return pl_err_set(err, "%s: progress_age_ns %" PRIu64 ": want at most %" PRIu64
				  " (ten years)", where, progress_age, SUM_MAX_AGE_NS);
	return 0;
}

struct rank_ix {
	int64_t rank;
	size_t ix;
};

static int
rank_ix_cmp(const void *a, const void *b)
{
	const struct rank_ix *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->ix < y->ix ? -1 : x->ix > y->ix;
}

/* No rank twice among n. */
static int
unique_check(const struct detect_rank *r, size_t n, const char *where, pl_err_t *err)
{
	struct rank_ix *v;
	size_t i;
	int rv = 0;

	if (n < 2)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return pl_err_set(err, "%s: out of memory", where);
	for (i = 0; i < n; i++) {
		v[i].rank = r[i].rank;
		v[i].ix = i;
	}
	qsort(v, n, sizeof(*v), rank_ix_cmp);
	for (i = 1; i < n; i++)
		if (v[i].rank == v[i - 1].rank) {
			rv = pl_err_set(err, "%s: rank entries %zu and %zu both hold rank %" PRId64
					": want each rank once", where, v[i - 1].ix, v[i].ix,
					v[i].rank);
			break;
		}
	free(v);
	return rv;
}

/* ---- encoding ---- */

/* "node summary from NODE" (or without a node) into where, for messages. */
static void
sender_where(const struct sum_header *h, char *where, size_t size)
{
	char cn[PL_CLIP_BUF];

	if (h->node[0])
		snprintf(where, size, "node summary from %s",
			 pl_clipn(h->node, strnlen(h->node, sizeof(h->node)), cn, sizeof(cn)));
	else
		snprintf(where, size, "node summary");
}

/* sp grown to hold n ranks; 0, or -1 with err (where names the summary). */
static int
space_grow(struct sum_space *sp, size_t n, const char *where, pl_err_t *err)
{
	struct detect_rank *r;
	struct sum_rank_info *in;

	if (n <= sp->cap)
		return 0;
	/* each rank entry zeroed up to its last communicator as it is filled:
	 * a rank's 32 slots are 6.4 KB, most of them unused */
	r = realloc(sp->ranks, n * sizeof(*r));
	if (r)
		sp->ranks = r;
	in = r ? realloc(sp->info, n * sizeof(*in)) : NULL;
	if (in)
		sp->info = in;
	if (!r || !in)
		return pl_err_set(err, "%s: out of memory for %zu ranks", where, n);
	sp->cap = n;
	return 0;
}


/* A time as an age against now: 0 stays 0 (never); at or after now is 1;
 * capped at SUM_MAX_AGE_NS. */
static uint64_t
age_of(uint64_t now, uint64_t t)
{
	if (t == 0)
		return 0;
	if (t >= now)
		return 1;
	return now - t > SUM_MAX_AGE_NS ? SUM_MAX_AGE_NS : now - t;
}

/* A text into its wire array: printable ASCII kept, any other byte '?',
 * cut to size - 1, zeros after. */
static void
text_put(uint8_t *p, size_t size, const char *s, size_t srcsize)
{
	size_t i, n = strnlen(s, srcsize);

	if (n > size - 1)
		n = size - 1;
	for (i = 0; i < n; i++)
		p[i] = printable((unsigned char)s[i]) ? (uint8_t)s[i] : (uint8_t)'?';
	memset(p + n, 0, size - n);
}

static void
header_put(uint8_t *p, const struct sum_header *h, uint32_t total, uint32_t nranks)
{
	int a;

	memset(p, 0, SUM_HEADER_BYTES);
	put64(p + H_MAGIC, SUM_MAGIC);
	put32(p + H_VERSION, SUM_VERSION);
	put32(p + H_TOTAL, total);
	text_put(p + H_NODE, SUM_NODE_LEN, h->node, sizeof(h->node));
	put64(p + H_JOB, h->job_id);
	put64(p + H_STEP, h->step_id);
	put64(p + H_NOW, h->sender_now_ns);
	put64(p + H_REAL, h->sender_real_ns);
	put64(p + H_SEQ, h->msg_seq);
	put64(p + H_BOOT, h->boot_id);
	put32(p + H_UID, h->uid);
	put32(p + H_INTERVAL, h->interval_ms);
	put32(p + H_WORLD, h->world);
	for (a = 0; a < SUM_NAXES; a++)
		put32(p + H_SIZE + 4 * a, h->size[a]);
	put32(p + H_NRANKS, nranks);
}

/* c as it goes on the wire (texts made printable, sums capped) and its
 * ages. */
static void
comm_wire(const struct detect_comm *c, uint64_t now, struct detect_comm *w, uint64_t *enter_age,
	  uint64_t *progress_age)
{
	uint8_t t[DETECT_NAME_LEN];
	uint64_t cap;

	*w = *c;
	text_put(t, sizeof(w->name), c->name, sizeof(c->name));
	memcpy(w->name, t, sizeof(w->name));
	text_put(t, sizeof(w->func), c->func, sizeof(c->func));
	memcpy(w->func, t, sizeof(w->func));
	text_put(t, sizeof(w->dtype), c->dtype, sizeof(c->dtype));
	memcpy(w->dtype, t, sizeof(w->dtype));
	if (w->root < -1)
		w->root = -1;
	if (w->nranks < 2 || w->nranks > PLW_PEER_BUCKETS)
		w->p2p_tx[0] = w->p2p_rx[0] = w->p2p_tx[1] = w->p2p_rx[1] = 0;
	cap = (c->nwait <= PLW_RING ? c->nwait : PLW_RING) * SUM_MAX_AGE_NS;
	if (w->wait_sum_ns > cap)
		w->wait_sum_ns = cap;
	if (w->gap_sum_ns > cap)
		w->gap_sum_ns = cap;
	if (w->nnodes < 0 || w->nnodes > w->nranks)
		w->nnodes = 0;
	if (!detect_ag_ok(w->ag_peak_bytes, w->ag_peak_calls, w->ag_peak_top))
		w->ag_peak_bytes = w->ag_peak_calls = w->ag_peak_top = 0;
	if (w->p2p_wait_ns > w->p2p_span_ns || w->p2p_span_ns > SUM_MAX_AGE_NS)
		w->p2p_wait_ns = w->p2p_span_ns = 0;
	*enter_age = age_of(now, c->enter_ns);
	*progress_age = age_of(now, c->progress_ns);
}

/* v as an unsigned LEB128 varint at p (room for 10 bytes); its length. */
static size_t
vput(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* A counted text: its length (below size), then its bytes, printable
 * ASCII kept and any other byte '?' (text_put's rule); its length. */
static size_t
tput(uint8_t *p, size_t size, const char *s, size_t srcsize)
{
	size_t i, n = strnlen(s, srcsize);

	if (n > size - 1)
		n = size - 1;
	p[0] = (uint8_t)n;
	for (i = 0; i < n; i++)
		p[1 + i] = printable((unsigned char)s[i]) ? (uint8_t)s[i] : (uint8_t)'?';
	return 1 + n;
}

static size_t
rank_put(uint8_t *p, const struct detect_rank *r, uint64_t exit_age,
	 const struct sum_rank_info *in)
{
	size_t n = 0;
	int a;

	n += vput(p + n, (uint64_t)r->rank);
	n += vput(p + n, (uint64_t)r->pid);
	n += vput(p + n, exit_age);
	n += vput(p + n, (uint32_t)r->exit_status);
	n += vput(p + n, (uint64_t)((int64_t)in->gpu + 1));
	for (a = 0; a < SUM_NAXES; a++)
		n += vput(p + n, in->co[a]);
	p[n++] = (uint8_t)((r->exited ? 1 : 0) | (r->exit_known ? 2 : 0));
	n += tput(p + n, SUM_NIC_LEN, in->nic, sizeof(in->nic));
	n += vput(p + n, r->ncomm);
	return n;
}

static size_t
proc_put(uint8_t *p, const struct detect_proc *pr, uint64_t prog_age, uint64_t dstate_age)
{
	size_t n = 0;

	p[n++] = (uint8_t)pr->state;
	n += vput(p + n, pr->known);
	n += vput(p + n, pr->nprocs);
	n += vput(p + n, pr->threads);
	n += vput(p + n, pr->cpu_milli);
	n += vput(p + n, pr->read_bps);
	n += vput(p + n, pr->write_bps);
	n += vput(p + n, prog_age);
	n += vput(p + n, dstate_age);
	n += tput(p + n, DETECT_WCHAN_LEN, pr->wchan, sizeof(pr->wchan));
	return n;
}

static size_t
comm_put(uint8_t *p, const struct detect_comm *w, uint64_t enter_age, uint64_t progress_age)
{
	size_t n = 8;

	put64(p, w->hash);
	n += tput(p + n, DETECT_NAME_LEN, w->name, sizeof(w->name));
	n += vput(p + n, (uint32_t)w->rank);
	n += vput(p + n, (uint32_t)w->nranks);
	n += vput(p + n, w->flags);
	n += vput(p + n, w->nwait);
	n += vput(p + n, (w->flags & DETECT_P2P) ? (uint32_t)w->p2p_peer : 0);
	n += vput(p + n, w->colls);
	n += vput(p + n, w->seq);
	n += tput(p + n, DETECT_TEXT_LEN, w->func, sizeof(w->func));
	n += vput(p + n, enter_age);
	n += vput(p + n, w->done);
	n += vput(p + n, w->ch_inflight);
	n += vput(p + n, progress_age);
	n += vput(p + n, w->wait_sum_ns);
	n += vput(p + n, w->gap_sum_ns);
	n += vput(p + n, (uint32_t)w->nnodes);
	n += vput(p + n, w->ag_peak_bytes);
	n += vput(p + n, w->ag_peak_calls);
	n += vput(p + n, w->ag_peak_top);
	n += vput(p + n, w->p2p_wait_ns);
	n += vput(p + n, w->p2p_span_ns);
	return n;
}

/* The rest of w's signature (version 7): count, datatype, root + 1, the
 * p2p counts to and from its neighbours, its bursts. */
static size_t
sig_put(uint8_t *p, const struct detect_comm *w)
{
	size_t n = 0;

	n += vput(p + n, w->count);
	n += tput(p + n, DETECT_TEXT_LEN, w->dtype, sizeof(w->dtype));
	n += vput(p + n, (uint64_t)((int64_t)w->root + 1));
	n += vput(p + n, w->p2p_tx[0]);
	n += vput(p + n, w->p2p_rx[0]);
	n += vput(p + n, w->p2p_tx[1]);
	n += vput(p + n, w->p2p_rx[1]);
	n += vput(p + n, w->bursts);
	return n;
}

/* The encoder's own checks: counts, size, job and step, the header. */
static int
encode_check(const struct sum_header *h, const struct detect_rank *ranks, size_t n,
	     size_t *total, const char *where, pl_err_t *err)
{
	size_t i, ncomm = 0;

	if (n > SUM_MAX_RANKS)
		return pl_err_set(err, "%s: %zu ranks: want at most %d", where, n, SUM_MAX_RANKS);
	if (header_check(h, where, err) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (ranks[i].ncomm > PLW_MAX_COMMS)
			return pl_err_set(err, "%s: rank entry %zu (rank %" PRId64 "): ncomm %" PRIu32
					  ": want at most %d", where, i, ranks[i].rank,
					  ranks[i].ncomm, PLW_MAX_COMMS);
		if (ranks[i].job_id != h->job_id || ranks[i].step_id != h->step_id)
			return pl_err_set(err, "%s: rank entry %zu (rank %" PRId64 ") is of job %"
					  PRIu64 ".%" PRIu64 ", want the summary's %" PRIu64 ".%"
					  PRIu64, where, i, ranks[i].rank, ranks[i].job_id,
					  ranks[i].step_id, h->job_id, h->step_id);
		ncomm += ranks[i].ncomm;
	}
	/* n and ncomm are bounded above, so this cannot overflow.  The total
	 * is known once written: here its bound. */
	*total = SUM_HEADER_BYTES + n * (RANK_MAX + PROC_MAX) + ncomm * (COMM_MAX + SIG_MAX);
	return unique_check(ranks, n, where, err);
}

int
sum_encode(struct buf *out, const struct sum_header *h, const struct detect_rank *ranks,
	   const struct sum_rank_info *info, size_t n, pl_err_t *err)
{
	uint8_t hb[SUM_HEADER_BYTES], rb[RANK_MAX], cb[COMM_MAX], sb[SIG_MAX];
	char where[96], rwhere[192], cwhere[256];
	const size_t start = out->len;
	const uint64_t now = h->sender_now_ns;
	size_t total = 0, i;
	uint32_t k;

	sender_where(h, where, sizeof(where));
	if (out->bad)
		return pl_err_set(err, "%s: the output buffer is already bad (out of memory)", where);
	if (encode_check(h, ranks, n, &total, where, err) < 0)
		return -1;
	if (buf_reserve(out, total) < 0)
		return pl_err_set(err, "%s: out of memory for %zu bytes", where, total);
	header_put(hb, h, (uint32_t)total, (uint32_t)n);
	buf_add(out, hb, sizeof(hb));
	for (i = 0; i < n; i++) {
		const struct detect_rank *r = &ranks[i];
		struct sum_rank_info in = info[i];
		uint64_t exit_age = age_of(now, r->exit_ns);

		/* The NIC as it goes out (a '?' for a byte not printable). */
		text_put((uint8_t *)in.nic, sizeof(in.nic), info[i].nic, sizeof(info[i].nic));
		snprintf(rwhere, sizeof(rwhere), "%s: rank entry %zu (rank %" PRId64 ")", where, i,
			 r->rank);
		if (rank_check(h, r, exit_age, &in, rwhere, err) < 0)
			goto fail;
		buf_add(out, rb, rank_put(rb, r, exit_age, &in));
		for (k = 0; k < r->ncomm; k++) {
			struct detect_comm w;
			uint64_t ea, pa;

			comm_wire(&r->comm[k], now, &w, &ea, &pa);
			snprintf(cwhere, sizeof(cwhere), "%s: communicator %" PRIu32, rwhere, k);
			if (comm_check(&w, ea, pa, cwhere, err) < 0)
				goto fail;
			buf_add(out, cb, comm_put(cb, &w, ea, pa));
		}
	}
	for (i = 0; i < n; i++) {
		uint8_t pb[PROC_MAX];
		uint64_t prog_age = age_of(now, ranks[i].proc.progress_ns);
		uint64_t dstate_age = age_of(now, ranks[i].proc.dstate_ns);

		snprintf(rwhere, sizeof(rwhere), "%s: rank entry %zu (rank %" PRId64 ")", where, i,
			 ranks[i].rank);
		if (proc_check(&ranks[i].proc, prog_age, dstate_age, rwhere, err) < 0)
			goto fail;
		buf_add(out, pb, proc_put(pb, &ranks[i].proc, prog_age, dstate_age));
	}
	for (i = 0; i < n; i++)
		for (k = 0; k < ranks[i].ncomm; k++) {
			struct detect_comm w;
			uint64_t ea, pa;

			comm_wire(&ranks[i].comm[k], now, &w, &ea, &pa);
			buf_add(out, sb, sig_put(sb, &w));
		}
	if (out->bad)
		return pl_err_set(err, "%s: out of memory", where);
	if (out->len - start > SUM_MAX_BYTES) {
		pl_err_set(err, "%s: %zu ranks take %zu bytes: want at most %u", where, n,
			   out->len - start, SUM_MAX_BYTES);
		goto fail;
	}
	put32((uint8_t *)out->s + start + H_TOTAL, (uint32_t)(out->len - start));
	return 0;
fail:
	out->len = start;
	if (out->s)
		out->s[start] = '\0';
	return -1;
}

/* ---- the ranks as a summary carries them, without the bytes ---- */

/* A rebased time: age 0 is 0; else recv - age, at least 1. */
static uint64_t
rebase(uint64_t recv, uint64_t age)
{
	if (age == 0)
		return 0;
	return age >= recv ? 1 : recv - age;
}

/* Communicator c as a receiver decodes it from the wire at recv (where
 * names it for comm_check); *bytes grows by its length on the wire. */
static int
comm_carry(const struct detect_comm *c, uint64_t now, uint64_t recv, struct detect_comm *out,
	   size_t *bytes, const char *where, pl_err_t *err)
{
	uint8_t cb[COMM_MAX], sb[SIG_MAX];
	struct detect_comm w;
	uint64_t ea, pa;

	comm_wire(c, now, &w, &ea, &pa);
	if (comm_check(&w, ea, pa, where, err) < 0)
		return -1;
	*bytes += comm_put(cb, &w, ea, pa) + sig_put(sb, &w);
	memcpy(out, &w, sizeof(*out));
	out->enter_ns = rebase(recv, ea);
	out->progress_ns = rebase(recv, pa);
	if (!(out->flags & DETECT_P2P))
		out->p2p_peer = -1;	/* the wire carries 0, read back as none */
	return 0;
}

int
sum_carry(const struct sum_header *h, const struct detect_rank *ranks,
	  const struct sum_rank_info *info, size_t n, uint64_t recv_now_ns, struct sum_space *sp,
	  size_t *nout, pl_err_t *err)
{
	char where[96], rwhere[192], cwhere[256];
	const uint64_t now = h->sender_now_ns;
	uint8_t rb[RANK_MAX];
	size_t total, bytes = SUM_HEADER_BYTES, i;
	uint32_t k;

	*nout = 0;
	sender_where(h, where, sizeof(where));
	if (encode_check(h, ranks, n, &total, where, err) < 0)
		return -1;
	if (space_grow(sp, n, where, err) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		const struct detect_rank *r = &ranks[i];
		struct detect_rank *o = &sp->ranks[i];
		struct sum_rank_info *in = &sp->info[i];
		uint64_t exit_age = age_of(now, r->exit_ns);

		memset(in, 0, sizeof(*in));
		in->gpu = info[i].gpu;
		memcpy(in->co, info[i].co, sizeof(in->co));
		text_put((uint8_t *)in->nic, sizeof(in->nic), info[i].nic, sizeof(info[i].nic));
		snprintf(rwhere, sizeof(rwhere), "%s: rank entry %zu (rank %" PRId64 ")", where, i,
			 r->rank);
		if (rank_check(h, r, exit_age, in, rwhere, err) < 0)
			return -1;
		bytes += rank_put(rb, r, exit_age, in);
		memset(o, 0, offsetof(struct detect_rank, comm));
		o->job_id = h->job_id;
		o->step_id = h->step_id;
		o->rank = r->rank;
		o->pid = r->pid;
		o->exited = r->exited;
		o->exit_known = r->exit_known;
		o->exit_status = r->exit_status;
		o->exit_ns = rebase(recv_now_ns, exit_age);
		{
			uint8_t pb[PROC_MAX];
			uint64_t prog_age = age_of(now, r->proc.progress_ns);
			uint64_t dstate_age = age_of(now, r->proc.dstate_ns);

			if (proc_check(&r->proc, prog_age, dstate_age, rwhere, err) < 0)
				return -1;
			bytes += proc_put(pb, &r->proc, prog_age, dstate_age);
			o->proc = r->proc;
			text_put((uint8_t *)o->proc.wchan, sizeof(o->proc.wchan), r->proc.wchan,
				 sizeof(r->proc.wchan));
			o->proc.progress_ns = rebase(recv_now_ns, prog_age);
			o->proc.dstate_ns = rebase(recv_now_ns, dstate_age);
		}
		o->ncomm = r->ncomm;
		memset(o->comm, 0, r->ncomm * sizeof(o->comm[0]));
		for (k = 0; k < r->ncomm; k++) {
			snprintf(cwhere, sizeof(cwhere), "%s: communicator %" PRIu32, rwhere, k);
			if (comm_carry(&r->comm[k], now, recv_now_ns, &o->comm[k], &bytes, cwhere,
				       err) < 0)
				return -1;
		}
	}
	if (bytes > SUM_MAX_BYTES)
		return pl_err_set(err, "%s: %zu ranks take %zu bytes: want at most %u", where, n,
				  bytes, SUM_MAX_BYTES);
	*nout = n;
	return 0;
}

/* ---- decoding ---- */

/* A wire text: NUL within size, zeros after it (the printable check is
 * text_check's, on the copy); copied into dst. */
static int
text_get(char *dst, const uint8_t *p, size_t size, const char *where, const char *what,
	 pl_err_t *err)
{
	static const uint8_t zeros[SUM_NODE_LEN];
	char c[PL_CLIP_BUF];
	size_t i, n;

	/* One pass in the common case: printable bytes, the NUL, zeros. */
	for (i = 0; i < size && p[i] >= 0x20 && p[i] <= 0x7e; i++)
		;
	if (i < size && !p[i] && size - i - 1 <= sizeof(zeros) &&
	    memcmp(p + i + 1, zeros, size - i - 1) == 0) {
		memcpy(dst, p, size);
		return 0;
	}
	/* Refused (or longer than the zeros): the checks one by one, naming
	 * what is wrong. */
	n = strnlen((const char *)p, size);

	if (n == size)
		return pl_err_set(err, "%s: %s %s: no NUL within its %zu bytes", where, what,
				  pl_clipn((const char *)p, size, c, sizeof(c)), size);
	for (i = n + 1; i < size; i++)
		if (p[i])
			return pl_err_set(err, "%s: %s: byte %zu after the NUL is 0x%02x, want 0",
					  where, what, i, p[i]);
	memcpy(dst, p, size);
	return text_check(dst, size, where, what, err);
}

/* The header: length, magic, version, size, then its fields; *nranks. */
static int
header_get(const uint8_t *p, size_t len, struct sum_header *h, uint32_t *nranks,
	   char *where, size_t wsize, pl_err_t *err)
{
	char c[PL_CLIP_BUF];
	uint32_t total, v;
	int a;

	snprintf(where, wsize, "node summary");
	if (len >= 8 && get64(p + H_MAGIC) != SUM_MAGIC)
		return pl_err_set(err, "node summary: magic %s: want \"PLWSUM01\"",
				  pl_clipn((const char *)p, 8, c, sizeof(c)));
	if (len >= 12 && (v = get32(p + H_VERSION)) != SUM_VERSION)
		return pl_err_set(err, "node summary: version %" PRIu32 ": want version %u, the "
				  "only one this layoutd reads", v, SUM_VERSION);
	if (len < SUM_HEADER_BYTES)
		return pl_err_set(err, "node summary: %zu bytes, shorter than its %u-byte header",
				  len, SUM_HEADER_BYTES);
	if (len > SUM_MAX_BYTES)
		return pl_err_set(err, "node summary: %zu bytes: want at most %u", len,
				  SUM_MAX_BYTES);
	total = get32(p + H_TOTAL);
	if (total > len)
		return pl_err_set(err, "node summary: truncated: %zu bytes of the %" PRIu32
				  " its total_size gives", len, total);
	if (total < len)
		return pl_err_set(err, "node summary: %zu bytes, %zu more than its total_size %"
				  PRIu32, len, len - total, total);
	if (text_get(h->node, p + H_NODE, SUM_NODE_LEN, where, "node", err) < 0)
		return -1;
	if (h->node[0])
		snprintf(where, wsize, "node summary from %s", h->node);
	h->job_id = get64(p + H_JOB);
	h->step_id = get64(p + H_STEP);
	h->sender_now_ns = get64(p + H_NOW);
	h->sender_real_ns = get64(p + H_REAL);
	h->msg_seq = get64(p + H_SEQ);
	h->boot_id = get64(p + H_BOOT);
	h->uid = get32(p + H_UID);
	h->interval_ms = get32(p + H_INTERVAL);
	h->world = get32(p + H_WORLD);
	for (a = 0; a < SUM_NAXES; a++)
		h->size[a] = get32(p + H_SIZE + 4 * a);
	if ((v = get32(p + H_RESERVED)) != 0)
		return pl_err_set(err, "%s: reserved header field 0x%" PRIx32 ": want 0", where, v);
	if (header_check(h, where, err) < 0)
		return -1;
	*nranks = get32(p + H_NRANKS);
	if (*nranks > SUM_MAX_RANKS)
		return pl_err_set(err, "%s: nranks %" PRIu32 ": want at most %d", where, *nranks,
				  SUM_MAX_RANKS);
	if ((len - SUM_HEADER_BYTES) / (RANK_MIN + PROC_MIN) < *nranks)
		return pl_err_set(err, "%s: nranks %" PRIu32 " needs at least %zu bytes, the "
				  "summary has %zu", where, *nranks,
				  (size_t)SUM_HEADER_BYTES + (size_t)*nranks * (RANK_MIN + PROC_MIN), len);
	return 0;
}

/* A reader: where it is, what is left. */
struct cur {
	const uint8_t *p;
	size_t left;
};

/* vget's refusal: why the varint at c is not one of at most max. */
static int
vget_refuse(struct cur *c, uint64_t max, const char *where, const char *what, pl_err_t *err)
{
	uint64_t x = 0;
	size_t i;

	for (i = 0; i < c->left && i < 10; i++) {
		uint8_t b = c->p[i];

		if (i == 9 && b > 1)
			return pl_err_set(err, "%s: %s: a varint above 2^64 - 1", where, what);
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (b & 0x80)
			continue;
		if (i > 0 && b == 0)
			return pl_err_set(err, "%s: %s: a varint of %zu bytes with a zero last byte: "
					  "want its shortest form", where, what, i + 1);
		return pl_err_set(err, "%s: %s %" PRIu64 ": want at most %" PRIu64, where, what, x,
				  max);
	}
	/* (ten bytes with the high bit set were refused above: the tenth) */
	return pl_err_set(err, "%s: %s: truncated (%zu bytes left, in a varint)", where, what,
			  c->left);
}

/* A varint of at most max into *v: refused when truncated, longer than 10
 * bytes, not in its shortest form (a value has one encoding) or above
 * max.  (The common case inline, every field of every communicator of a
 * leader's summaries; the refusal's message out of line.) */
static inline int
vget(struct cur *c, uint64_t max, uint64_t *v, const char *where, const char *what,
     pl_err_t *err)
{
	const uint8_t *p = c->p;
	size_t i, n = c->left < 10 ? c->left : 10;
	uint64_t x = 0;

	*v = 0;
	for (i = 0; i < n; i++) {
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] & 0x80)
			continue;
		if ((i > 0 && p[i] == 0) || (i == 9 && p[i] > 1) || x > max)
			break;
		c->p += i + 1;
		c->left -= i + 1;
		*v = x;
		return 0;
	}
	return vget_refuse(c, max, where, what, err);
}

/* A counted text into dst of size bytes (NUL-terminated, zeros after):
 * its length below size, its bytes printable ASCII. */
static int
tget(struct cur *c, char *dst, size_t size, const char *where, const char *what,
     pl_err_t *err)
{
	size_t n, i;

	if (c->left < 1)
		return pl_err_set(err, "%s: %s: truncated (no length byte left)", where, what);
	n = c->p[0];
	if (n >= size)
		return pl_err_set(err, "%s: %s: length %zu: want at most %zu", where, what, n,
				  size - 1);
	if (c->left - 1 < n)
		return pl_err_set(err, "%s: %s: truncated (%zu of its %zu bytes left)", where, what,
				  c->left - 1, n);
	for (i = 0; i < n; i++)
		if (!printable(c->p[1 + i]))
			return pl_err_set(err, "%s: %s: byte %zu is 0x%02x, want printable ASCII "
					  "(0x20-0x7e)", where, what, i, c->p[1 + i]);
	memcpy(dst, c->p + 1, n);
	memset(dst + n, 0, size - n);
	c->p += 1 + n;
	c->left -= 1 + n;
	return 0;
}

static int
comm_get(struct cur *q, uint64_t recv, struct detect_comm *c, const char *where,
	 pl_err_t *err)
{
	uint64_t v[6] = { 0 }, ea, pa;

	if (q->left < 8)
		return pl_err_set(err, "%s: hash: truncated (%zu bytes left)", where, q->left);
	c->hash = get64(q->p);
	q->p += 8;
	q->left -= 8;
	if (tget(q, c->name, DETECT_NAME_LEN, where, "name", err) < 0 ||
	    vget(q, INT32_MAX, &v[0], where, "rank", err) < 0 ||
	    vget(q, INT32_MAX, &v[1], where, "nranks", err) < 0 ||
	    vget(q, UINT32_MAX, &v[2], where, "flags", err) < 0 ||
	    vget(q, UINT32_MAX, &v[3], where, "nwait", err) < 0 ||
	    vget(q, SUM_MAX_WORLD - 1, &v[4], where, "p2p_peer", err) < 0 ||
	    vget(q, UINT64_MAX, &c->colls, where, "colls", err) < 0 ||
	    vget(q, UINT64_MAX, &c->seq, where, "seq", err) < 0 ||
	    tget(q, c->func, DETECT_TEXT_LEN, where, "func", err) < 0 ||
	    vget(q, UINT64_MAX, &ea, where, "enter_age_ns", err) < 0 ||
	    vget(q, UINT64_MAX, &c->done, where, "done", err) < 0 ||
	    vget(q, UINT64_MAX, &c->ch_inflight, where, "ch_inflight", err) < 0 ||
	    vget(q, UINT64_MAX, &pa, where, "progress_age_ns", err) < 0 ||
	    vget(q, UINT64_MAX, &c->wait_sum_ns, where, "wait_sum_ns", err) < 0 ||
	    vget(q, UINT64_MAX, &c->gap_sum_ns, where, "gap_sum_ns", err) < 0 ||
	    vget(q, INT32_MAX, &v[5], where, "nnodes", err) < 0 ||
	    vget(q, UINT64_MAX, &c->ag_peak_bytes, where, "ag_peak_bytes", err) < 0 ||
	    vget(q, UINT64_MAX, &c->ag_peak_calls, where, "ag_peak_calls", err) < 0 ||
	    vget(q, UINT64_MAX, &c->ag_peak_top, where, "ag_peak_top", err) < 0 ||
	    vget(q, UINT64_MAX, &c->p2p_wait_ns, where, "p2p_wait_ns", err) < 0 ||
	    vget(q, SUM_MAX_AGE_NS, &c->p2p_span_ns, where, "p2p_span_ns", err) < 0)
		return -1;
	c->nnodes = (int32_t)v[5];
	c->rank = (int32_t)(uint32_t)v[0];
	c->nranks = (int32_t)(uint32_t)v[1];
	c->flags = (uint32_t)v[2];
	c->nwait = (uint32_t)v[3];
	c->p2p_peer = (c->flags & DETECT_P2P) ? (int32_t)v[4] : -1;
	if (!(c->flags & DETECT_P2P) && v[4])
		return pl_err_set(err, "%s: p2p_peer %" PRIu64 " without flag 0x%x (p2p): want 0",
				  where, v[4], DETECT_P2P);
	if (comm_check(c, ea, pa, where, err) < 0)
		return -1;
	c->enter_ns = rebase(recv, ea);
	c->progress_ns = rebase(recv, pa);
	return 0;
}

/* Rank entry i's communicator k's signature rest at *off (version 7:
 * after the process trees, in the order of the rank entries and their
 * communicators), into c. */
static int
sig_get(const uint8_t *p, size_t len, size_t *off, uint32_t i, uint32_t k,
	const struct detect_rank *r, struct detect_comm *c, const char *where, pl_err_t *err)
{
	char cwhere[256];
	struct cur q = { p + *off, len - *off };
	uint64_t v;

	snprintf(cwhere, sizeof(cwhere), "%s: rank entry %" PRIu32 " (rank %" PRId64
		 "): communicator %" PRIu32, where, i, r->rank, k);
	if (vget(&q, UINT64_MAX, &c->count, cwhere, "count", err) < 0 ||
	    tget(&q, c->dtype, DETECT_TEXT_LEN, cwhere, "datatype", err) < 0 ||
	    vget(&q, (uint64_t)INT32_MAX + 1, &v, cwhere, "root + 1", err) < 0 ||
	    vget(&q, UINT64_MAX, &c->p2p_tx[0], cwhere, "p2p_tx_prev", err) < 0 ||
	    vget(&q, UINT64_MAX, &c->p2p_rx[0], cwhere, "p2p_rx_prev", err) < 0 ||
	    vget(&q, UINT64_MAX, &c->p2p_tx[1], cwhere, "p2p_tx_next", err) < 0 ||
	    vget(&q, UINT64_MAX, &c->p2p_rx[1], cwhere, "p2p_rx_next", err) < 0 ||
	    vget(&q, c->colls, &c->bursts, cwhere, "bursts", err) < 0)
		return -1;
	if ((c->nranks < 2 || c->nranks > PLW_PEER_BUCKETS) &&
	    (c->p2p_tx[0] | c->p2p_rx[0] | c->p2p_tx[1] | c->p2p_rx[1]))
		return pl_err_set(err, "%s: p2p counts to its neighbours with nranks %" PRId32
				  ": want 0 (known only for 2 to %d members)", cwhere, c->nranks,
				  PLW_PEER_BUCKETS);
	c->root = (int32_t)((int64_t)v - 1);
	*off = (size_t)(q.p - p);
	return 0;
}

/* Rank entry i's process tree at *off (version 5: after the rank
 * entries, in their order), into r->proc rebased on recv. */
static int
proc_get(const uint8_t *p, size_t len, size_t *off, uint32_t i, uint64_t recv,
	 struct detect_rank *r, const char *where, pl_err_t *err)
{
	char rwhere[192];
	struct cur q = { p + *off, len - *off };
	struct detect_proc *pr = &r->proc;
	uint64_t v, prog_age, dstate_age;

	snprintf(rwhere, sizeof(rwhere), "%s: rank entry %" PRIu32 " (rank %" PRId64 ")", where,
		 i, r->rank);
	memset(pr, 0, sizeof(*pr));
	if (q.left < 1)
		return pl_err_set(err, "%s: proc state: truncated", rwhere);
	pr->state = (char)q.p[0];
	q.p++;
	q.left--;
	if (vget(&q, UINT32_MAX, &v, rwhere, "proc known", err) < 0)
		return -1;
	pr->known = (uint32_t)v;
	if (vget(&q, UINT32_MAX, &v, rwhere, "proc nprocs", err) < 0)
		return -1;
	pr->nprocs = (uint32_t)v;
	if (vget(&q, UINT32_MAX, &v, rwhere, "proc threads", err) < 0)
		return -1;
	pr->threads = (uint32_t)v;
	if (vget(&q, UINT64_MAX, &pr->cpu_milli, rwhere, "proc cpu_milli", err) < 0 ||
	    vget(&q, UINT64_MAX, &pr->read_bps, rwhere, "proc read_bps", err) < 0 ||
	    vget(&q, UINT64_MAX, &pr->write_bps, rwhere, "proc write_bps", err) < 0 ||
	    vget(&q, UINT64_MAX, &prog_age, rwhere, "proc progress_age_ns", err) < 0 ||
	    vget(&q, UINT64_MAX, &dstate_age, rwhere, "proc dstate_age_ns", err) < 0 ||
	    tget(&q, pr->wchan, DETECT_WCHAN_LEN, rwhere, "proc wchan", err) < 0)
		return -1;
	if (proc_check(pr, prog_age, dstate_age, rwhere, err) < 0)
		return -1;
	pr->progress_ns = rebase(recv, prog_age);
	pr->dstate_ns = rebase(recv, dstate_age);
	*off = (size_t)(q.p - p);
	return 0;
}

/*
 * Rank entry i at *off (of nr) and its communicators; *off moves past
 * them.  Every length is checked against what is left, with room kept for
 * the rank entries after this one.  named: the messages say which rank
 * entry and communicator (else they start with an empty place: the
 * decoder's first pass, which formats nothing while all is well, and
 * walks again named to say what was wrong).
 */
static int
rank_get(const uint8_t *p, size_t len, size_t *off, uint32_t i, uint32_t nr, size_t *nsig,
	 const struct sum_header *h, uint64_t recv, struct detect_rank *r,
	 struct sum_rank_info *in, const char *where, bool named, pl_err_t *err)
{
	char rwhere[192] = "", cwhere[256] = "";
	/* (the rank entries after it, and every rank's process tree) */
	const size_t after = (size_t)(nr - i - 1) * RANK_MIN + (size_t)nr * PROC_MIN;
	struct cur q = { p + *off, len - *off };
	uint64_t v, exit_age;
	uint32_t k;
	int a;

	if (named)
		snprintf(rwhere, sizeof(rwhere), "%s: rank entry %" PRIu32, where, i);
	if (q.left < RANK_MIN + after)
		return pl_err_set(err, "%s: %zu bytes left, want at least %zu for it, the %"
				  PRIu32 " rank entries after it and the process trees", rwhere, q.left,
				  RANK_MIN + after, nr - i - 1);
	q.left -= after;	/* theirs: never read here */
	memset(r, 0, offsetof(struct detect_rank, comm));
	r->job_id = h->job_id;
	r->step_id = h->step_id;
	if (vget(&q, INT64_MAX, &v, rwhere, "rank", err) < 0)
		return -1;
	r->rank = (int64_t)v;
	if (named)
		snprintf(rwhere, sizeof(rwhere), "%s: rank entry %" PRIu32 " (rank %" PRId64 ")",
			 where, i, r->rank);
	if (vget(&q, INT64_MAX, &v, rwhere, "pid", err) < 0)
		return -1;
	r->pid = (int64_t)v;
	if (vget(&q, UINT64_MAX, &exit_age, rwhere, "exit_age_ns", err) < 0 ||
	    vget(&q, INT32_MAX, &v, rwhere, "exit_status", err) < 0)
		return -1;
	r->exit_status = (int32_t)v;
	if (vget(&q, (uint64_t)INT32_MAX + 1, &v, rwhere, "gpu + 1", err) < 0)
		return -1;
	in->gpu = (int32_t)((int64_t)v - 1);
	for (a = 0; a < SUM_NAXES; a++) {
		if (vget(&q, UINT32_MAX, &v, rwhere, axis[a], err) < 0)
			return -1;
		in->co[a] = (uint32_t)v;
	}
	if (q.left < 1)
		return pl_err_set(err, "%s: exit bits: truncated", rwhere);
	if (q.p[0] & ~3u)
		return pl_err_set(err, "%s: exit bits 0x%02x: want only 0x1 (exited) and 0x2 "
				  "(exit_known)", rwhere, q.p[0]);
	r->exited = q.p[0] & 1;
	r->exit_known = (q.p[0] >> 1) & 1;
	q.p++;
	q.left--;
	if (tget(&q, in->nic, SUM_NIC_LEN, rwhere, "nic", err) < 0 ||
	    vget(&q, UINT32_MAX, &v, rwhere, "ncomm", err) < 0)
		return -1;
	r->ncomm = (uint32_t)v;
	if (rank_check(h, r, exit_age, in, rwhere, err) < 0)
		return -1;
	r->exit_ns = rebase(recv, exit_age);
	/* (the signatures of the communicators so far, this rank's too) */
	*nsig += r->ncomm;
	if (q.left / (COMM_MIN + SIG_MIN) < r->ncomm ||
	    q.left - (size_t)r->ncomm * (COMM_MIN + SIG_MIN) < (*nsig - r->ncomm) * SIG_MIN)
		return pl_err_set(err, "%s: ncomm %" PRIu32 " needs at least %zu bytes and the %"
				  PRIu32 " rank entries after it with the process trees and the "
				  "signatures %zu, %zu are left", rwhere, r->ncomm,
				  (size_t)r->ncomm * COMM_MIN, nr - i - 1,
				  after + *nsig * SIG_MIN, q.left + after);
	q.left -= *nsig * SIG_MIN;	/* theirs: never read here */
	memset(r->comm, 0, r->ncomm * sizeof(r->comm[0]));
	for (k = 0; k < r->ncomm; k++) {
		if (named)
			snprintf(cwhere, sizeof(cwhere), "%s: communicator %" PRIu32, rwhere, k);
		if (comm_get(&q, recv, &r->comm[k], cwhere, err) < 0)
			return -1;
	}
	*off = (size_t)(q.p - p);
	return 0;
}

/* sum_decode_in's work, into sp (grown to the header's rank count). */
static int
decode_into(const uint8_t *p, size_t len, uint64_t recv_now_ns, struct sum_header *h,
	    struct sum_space *sp, size_t *n, pl_err_t *err)
{
	struct detect_rank *r;
	struct sum_rank_info *in;
	char where[96];
	size_t off = SUM_HEADER_BYTES, nsig;
	uint32_t nr = 0, i;
	pl_err_t quiet;

	*n = 0;
	memset(h, 0, sizeof(*h));
	if (!p && len)
		return pl_err_set(err, "node summary: no data");
	if (header_get(p, len, h, &nr, where, sizeof(where), err) < 0)
		return -1;
	if (space_grow(sp, nr, where, err) < 0)
		return -1;
	r = sp->ranks;
	in = sp->info;
	if (nr)
		memset(in, 0, nr * sizeof(*in));
	pl_err_clear(&quiet);
	for (i = 0, nsig = 0; i < nr; i++)
		if (rank_get(p, len, &off, i, nr, &nsig, h, recv_now_ns, &r[i], &in[i], where,
			     false, &quiet) < 0)
			break;
	if (i < nr) {
		/* refused: again, naming the rank entry and communicator */
		off = SUM_HEADER_BYTES;
		for (i = 0, nsig = 0; i < nr; i++)
			if (rank_get(p, len, &off, i, nr, &nsig, h, recv_now_ns, &r[i], &in[i],
				     where, true, err) < 0)
				return -1;
		/* not reached: the walks agree */
		return pl_err_set(err, "%s%s", where, quiet.text);
	}
	for (i = 0; i < nr; i++)
		if (proc_get(p, len, &off, i, recv_now_ns, &r[i], where, err) < 0)
			return -1;
	for (i = 0; i < nr; i++) {
		uint32_t k;

		for (k = 0; k < r[i].ncomm; k++)
			if (sig_get(p, len, &off, i, k, &r[i], &r[i].comm[k], where, err) < 0)
				return -1;
	}
	if (off != len)
		return pl_err_set(err, "%s: %zu bytes after the last signature: want none", where,
				  len - off);
	if (unique_check(r, nr, where, err) < 0)
		return -1;
	*n = nr;
	return 0;
}

int
sum_decode_in(const void *data, size_t len, uint64_t recv_now_ns, struct sum_header *h,
	      struct sum_space *sp, size_t *n, pl_err_t *err)
{
	if (decode_into(data, len, recv_now_ns, h, sp, n, err) == 0)
		return 0;
	memset(h, 0, sizeof(*h));
	*n = 0;
	return -1;
}

void
sum_space_free(struct sum_space *sp)
{
	free(sp->ranks);
	free(sp->info);
	memset(sp, 0, sizeof(*sp));
}

int
sum_decode(const void *data, size_t len, uint64_t recv_now_ns, struct sum_header *h,
	   struct detect_rank **ranks, struct sum_rank_info **info, size_t *n,
	   pl_err_t *err)
{
	struct sum_space sp = { NULL, NULL, 0 };
	int rv = sum_decode_in(data, len, recv_now_ns, h, &sp, n, err);

	*ranks = NULL;
	*info = NULL;
	if (rv == 0 && *n) {
		*ranks = sp.ranks;
		*info = sp.info;
	} else {
		sum_space_free(&sp);
	}
	return rv;
}

/* ---- the batch ---------------------------------------------------------------- */

int
sum_batch_begin(struct buf *out, pl_err_t *err)
{
	uint8_t h[SUM_BATCH_HEADER_BYTES];

	memset(h, 0, sizeof(h));
	put64(h, SUM_BATCH_MAGIC);
	put32(h + 8, SUM_BATCH_VERSION);
	put64(h + 16, SUM_BATCH_HEADER_BYTES);
	out->len = 0;
	if (buf_add(out, h, sizeof(h)) < 0)
		return pl_err_set(err, "summary batch: out of memory");
	return 0;
}

size_t
sum_batch_count(const struct buf *b)
{
	if (!b->s || b->len < SUM_BATCH_HEADER_BYTES)
		return 0;
	return get32((const uint8_t *)b->s + 12);
}

int
sum_batch_add(struct buf *out, const void *sum, size_t len, uint64_t hold_ns, pl_err_t *err)
{
	uint8_t ih[SUM_BATCH_ITEM_BYTES];
	size_t count = sum_batch_count(out);

	if (out->len < SUM_BATCH_HEADER_BYTES)
		return pl_err_set(err, "summary batch: not begun (sum_batch_begin)");
	if (len < 1 || len > SUM_MAX_BYTES)
		return pl_err_set(err, "summary batch: an item of %zu bytes: want 1 to %u", len,
				  SUM_MAX_BYTES);
	if (count >= SUM_BATCH_MAX_ITEMS)
		return pl_err_set(err, "summary batch: full at %u items", SUM_BATCH_MAX_ITEMS);
	if (out->len + SUM_BATCH_ITEM_BYTES + len > SUM_BATCH_MAX_BYTES)
		return pl_err_set(err, "summary batch: %zu bytes more would pass its %u", len,
				  SUM_BATCH_MAX_BYTES);
	memset(ih, 0, sizeof(ih));
	put64(ih, hold_ns > SUM_MAX_AGE_NS ? SUM_MAX_AGE_NS : hold_ns);
	put32(ih + 8, (uint32_t)len);
	if (buf_reserve(out, sizeof(ih) + len) < 0)
		return pl_err_set(err, "summary batch: out of memory");
	buf_add(out, ih, sizeof(ih));
	buf_add(out, sum, len);
	put32((uint8_t *)out->s + 12, (uint32_t)(count + 1));
	put64((uint8_t *)out->s + 16, out->len);
	return 0;
}

/* The batch header: its count, or -1. */
static long
batch_header(const uint8_t *p, size_t len, pl_err_t *err)
{
	uint64_t total;
	uint32_t v, count;

	if (!p || len < SUM_BATCH_HEADER_BYTES)
		return pl_err_set(err, "summary batch: %zu bytes: want at least its %u-byte header",
				  len, SUM_BATCH_HEADER_BYTES);
	if (get64(p) != SUM_BATCH_MAGIC)
		return pl_err_set(err, "summary batch: magic 0x%016" PRIx64 ": want 0x%016llx "
				  "(\"PLWBAT01\")", get64(p), SUM_BATCH_MAGIC);
	v = get32(p + 8);
	if (v != SUM_BATCH_VERSION)
		return pl_err_set(err, "summary batch: version %" PRIu32 ": this layoutd reads "
				  "version %u", v, SUM_BATCH_VERSION);
	count = get32(p + 12);
	if (count < 1 || count > SUM_BATCH_MAX_ITEMS)
		return pl_err_set(err, "summary batch: count %" PRIu32 ": want 1 to %u", count,
				  SUM_BATCH_MAX_ITEMS);
	total = get64(p + 16);
	if (total != len || len > SUM_BATCH_MAX_BYTES)
		return pl_err_set(err, "summary batch: total_size %" PRIu64 " for %zu bytes: want "
				  "the two equal and at most %u", total, len, SUM_BATCH_MAX_BYTES);
	return count;
}

int
sum_batch_next(const void *data, size_t len, size_t *off, const void **sum, size_t *sumlen,
	       uint64_t *hold_ns, pl_err_t *err)
{
	const uint8_t *p = data;
	uint64_t hold;
	uint32_t n;

	if (*off == 0) {
		if (batch_header(p, len, err) < 0)
			return -1;
		*off = SUM_BATCH_HEADER_BYTES;
	}
	if (*off == len)
		return 0;
	if (*off > len || len - *off < SUM_BATCH_ITEM_BYTES)
		return pl_err_set(err, "summary batch: offset %zu: %zu bytes left, want an item's "
				  "%u-byte header", *off, *off > len ? 0 : len - *off,
				  SUM_BATCH_ITEM_BYTES);
	hold = get64(p + *off);
	n = get32(p + *off + 8);
	if (hold > SUM_MAX_AGE_NS)
		return pl_err_set(err, "summary batch: offset %zu: hold_ns %" PRIu64 ": want at most "
				  "%" PRIu64, *off, hold, SUM_MAX_AGE_NS);
	if (get32(p + *off + 12) != 0)
		return pl_err_set(err, "summary batch: offset %zu: reserved 0x%08" PRIx32 ": want 0",
				  *off, get32(p + *off + 12));
	if (n < 1 || n > SUM_MAX_BYTES || n > len - *off - SUM_BATCH_ITEM_BYTES)
		return pl_err_set(err, "summary batch: offset %zu: len %" PRIu32 " with %zu bytes "
				  "left: want 1 to %u and within the batch", *off, n,
				  len - *off - SUM_BATCH_ITEM_BYTES, SUM_MAX_BYTES);
	*sum = p + *off + SUM_BATCH_ITEM_BYTES;
	*sumlen = n;
	*hold_ns = hold;
	*off += SUM_BATCH_ITEM_BYTES + n;
	return 1;
}

long
sum_batch_check(const void *data, size_t len, pl_err_t *err)
{
	const void *s;
	size_t off = 0, sl;
	uint64_t hold;
	long count, seen = 0;
	int rv;

	count = batch_header(data, len, err);
	if (count < 0)
		return -1;
	while ((rv = sum_batch_next(data, len, &off, &s, &sl, &hold, err)) == 1)
		seen++;
	if (rv < 0)
		return -1;
	if (seen != count)
		return pl_err_set(err, "summary batch: count %ld but %ld items in its %zu bytes",
				  count, seen, len);
	return count;
}
