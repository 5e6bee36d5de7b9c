/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The node summary decoder (sum_decode): the input is a summary a peer
 * sent.  A refusal says why and hands nothing out.  What it accepts keeps
 * every promise of summary.h, and is canonical: encoded again against the
 * receiver's clock it gives back the very bytes that came (but the
 * sender's now), so no two accepted inputs mean the same and nothing in
 * them went unchecked.  A receiver whose clock is behind the ages gets
 * times of at least 1, never 0 (never) or a wrapped value.  A summary of
 * any other version than SUM_VERSION is refused as such (the regression
 * inputs of versions 1 to 3 that came before the first release).  Handed
 * over as structs (sum_carry), what was accepted gives the very ranks the
 * wire gives.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "layout.h"
#include "summary.h"

/* The receiver's clock: above every accepted age, so rebasing is exact. */
#define RECV	(UINT64_MAX / 2)
/* A receiver that booted a microsecond ago. */
#define RECV_YOUNG UINT64_C(1000)

_Static_assert(SUM_VERSION == 7, "the refusal of another version below names it");

static int
text_ok(const char *s, size_t size)
{
	size_t i;

	for (i = 0; i < size && s[i]; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return 0;
	return i < size;
}

static void
check_rank(const struct sum_header *h, const struct detect_rank *r,
	   const struct sum_rank_info *in, size_t i)
{
	uint32_t k;
	int a;

	FUZZ_ASSERT(r->job_id == h->job_id && r->step_id == h->step_id, "rank %zu: job, step", i);
	FUZZ_ASSERT(r->rank >= 0 && r->rank < (int64_t)h->world, "rank %zu: rank %lld", i,
		    (long long)r->rank);
	FUZZ_ASSERT(r->pid >= 1 && r->pid <= INT32_MAX, "rank %zu: pid", i);
	FUZZ_ASSERT((r->exited == 0 || r->exited == 1) && (r->exit_known == 0 || r->exit_known == 1) &&
		    (!r->exit_known || r->exited), "rank %zu: exit flags", i);
	FUZZ_ASSERT(r->exit_status >= 0 && r->exit_status <= 0xffff &&
		    (r->exit_known || r->exit_status == 0), "rank %zu: status", i);
	FUZZ_ASSERT(r->exited || r->exit_ns == 0, "rank %zu: exit time while running", i);
	FUZZ_ASSERT(r->exit_ns == 0 || (r->exit_ns >= RECV - SUM_MAX_AGE_NS && r->exit_ns < RECV),
		    "rank %zu: exit time rebased within ten years", i);
	for (a = 0; a < SUM_NAXES; a++)
		FUZZ_ASSERT(in->co[a] < h->size[a], "rank %zu: coordinate %d", i, a);
	FUZZ_ASSERT(in->gpu >= -1 && in->gpu < SUM_MAX_GPU, "rank %zu: gpu", i);
	FUZZ_ASSERT(text_ok(in->nic, sizeof(in->nic)), "rank %zu: nic", i);
	FUZZ_ASSERT(r->ncomm <= PLW_MAX_COMMS, "rank %zu: ncomm", i);
	FUZZ_ASSERT(r->proc.known <= 1 && r->proc.nprocs <= SUM_MAX_PROCS &&
		    r->proc.threads <= SUM_MAX_THREADS && r->proc.cpu_milli <= SUM_MAX_CPU_MILLI &&
		    r->proc.read_bps <= SUM_MAX_BPS && r->proc.write_bps <= SUM_MAX_BPS &&
		    (r->proc.known || (!r->proc.cpu_milli && !r->proc.read_bps &&
				       !r->proc.write_bps && !r->proc.progress_ns)) &&
		    (!r->proc.dstate_ns || r->proc.state == 'D') &&
		    text_ok(r->proc.wchan, sizeof(r->proc.wchan)), "rank %zu: its process tree", i);
	for (k = 0; k < r->ncomm; k++) {
		const struct detect_comm *c = &r->comm[k];

		FUZZ_ASSERT(!(c->flags & ~(uint32_t)(DETECT_GPU | DETECT_BUSY | DETECT_FINAL |
						     DETECT_P2P | DETECT_SEND)) &&
			    (!(c->flags & DETECT_SEND) || (c->flags & DETECT_P2P)),
			    "rank %zu comm %u: flags", i, k);
		FUZZ_ASSERT((c->flags & DETECT_P2P) ? c->p2p_peer >= 0 && c->p2p_peer < c->nranks :
			    c->p2p_peer == -1, "rank %zu comm %u: p2p peer %d", i, k, c->p2p_peer);
		FUZZ_ASSERT((c->nranks == 0 && c->rank == 0 && (c->flags & DETECT_BUSY)) ||
			    (c->nranks >= 1 && c->nranks <= SUM_MAX_WORLD && c->rank >= 0 &&
			     c->rank < c->nranks), "rank %zu comm %u: rank %d of %d", i, k,
			    c->rank, c->nranks);
		FUZZ_ASSERT(text_ok(c->name, sizeof(c->name)) && text_ok(c->func, sizeof(c->func)),
			    "rank %zu comm %u: texts", i, k);
		FUZZ_ASSERT(c->nnodes >= 0 && c->nnodes <= c->nranks &&
			    (c->ag_peak_calls ? c->ag_peak_top <= c->ag_peak_bytes &&
			     c->ag_peak_bytes / c->ag_peak_calls <= c->ag_peak_top :
			     !c->ag_peak_bytes && !c->ag_peak_top),
			    "rank %zu comm %u: nnodes, AllGather run", i, k);
		FUZZ_ASSERT(c->p2p_wait_ns <= c->p2p_span_ns && c->p2p_span_ns <= SUM_MAX_AGE_NS,
			    "rank %zu comm %u: p2p time", i, k);
		FUZZ_ASSERT(c->nwait <= PLW_RING && c->wait_sum_ns <= c->nwait * SUM_MAX_AGE_NS &&
			    c->gap_sum_ns <= c->nwait * SUM_MAX_AGE_NS, "rank %zu comm %u: window",
			    i, k);
		FUZZ_ASSERT((c->enter_ns == 0 || c->enter_ns >= RECV - SUM_MAX_AGE_NS) &&
			    c->enter_ns < RECV && c->progress_ns < RECV &&
			    (c->progress_ns == 0 || c->progress_ns >= RECV - SUM_MAX_AGE_NS),
			    "rank %zu comm %u: times rebased within ten years", i, k);
	}
}

/* Rebased against a young clock: every time 0 or in [1, RECV_YOUNG). */
static void
check_young(const uint8_t *data, size_t size, size_t n_want)
{
	struct detect_rank *r = NULL;
	struct sum_rank_info *in = NULL;
	struct sum_header h;
	size_t n = 0, i;
	uint32_t k;
	pl_err_t err;

	pl_err_clear(&err);
	FUZZ_ASSERT(sum_decode(data, size, RECV_YOUNG, &h, &r, &in, &n, &err) == 0 && n == n_want,
		    "accepted whatever the receiver's clock: %s", err.text);
	for (i = 0; i < n; i++) {
		FUZZ_ASSERT(r[i].exit_ns < RECV_YOUNG, "rank %zu: exit time %llu", i,
			    (unsigned long long)r[i].exit_ns);
		for (k = 0; k < r[i].ncomm; k++)
			FUZZ_ASSERT(r[i].comm[k].enter_ns < RECV_YOUNG &&
				    r[i].comm[k].progress_ns < RECV_YOUNG,
				    "rank %zu comm %u: times below the young clock", i, k);
	}
	free(r);
	free(in);
}

/* sum_decode_in into one space kept across inputs, as a leader keeps it:
 * the same verdict, error and ranks as sum_decode's. */
static void
same_in_space(const uint8_t *data, size_t size, int rv, const struct sum_header *h,
	      const struct detect_rank *r, const struct sum_rank_info *in, size_t n,
	      const pl_err_t *err)
{
	static struct sum_space sp;
	struct sum_header h2;
	size_t n2 = 99, i;
	pl_err_t e2;

	pl_err_clear(&e2);
	FUZZ_ASSERT(sum_decode_in(data, size, RECV, &h2, &sp, &n2, &e2) == rv && n2 == n &&
		    !memcmp(h, &h2, sizeof(h2)) && !strcmp(err->text, e2.text),
		    "sum_decode_in: another verdict (%zu ranks, %s)", n2, e2.text);
	for (i = 0; i < n; i++) {
		const struct detect_rank *a = &r[i], *b = &sp.ranks[i];

		FUZZ_ASSERT(a->job_id == b->job_id && a->step_id == b->step_id &&
			    a->rank == b->rank && a->pid == b->pid && a->exited == b->exited &&
			    a->exit_known == b->exit_known && a->exit_status == b->exit_status &&
			    a->exit_ns == b->exit_ns && a->ncomm == b->ncomm &&
			    !memcmp(a->comm, b->comm, a->ncomm * sizeof(a->comm[0])) &&
			    !memcmp(&in[i], &sp.info[i], sizeof(in[i])),
			    "sum_decode_in: rank entry %zu differs", i);
	}
}

/* What was accepted, handed over as structs (sum_carry, a leader's own
 * node): the very ranks the wire gives from the same summary, at a
 * receiver's clock other than the sender's. */
static void
same_carry(const struct sum_header *h, const struct detect_rank *r,
	   const struct sum_rank_info *in, size_t n, const void *wire, size_t len)
{
	static struct sum_space a, b;
	const uint64_t recv = RECV - 12345;
	struct sum_header h2;
	size_t na = 99, nb = 99, i;
	pl_err_t ea, eb;

	pl_err_clear(&ea);
	pl_err_clear(&eb);
	FUZZ_ASSERT(sum_carry(h, r, in, n, recv, &a, &na, &ea) == 0 && na == n,
		    "sum_carry takes what the wire took: %s", ea.text);
	FUZZ_ASSERT(sum_decode_in(wire, len, recv, &h2, &b, &nb, &eb) == 0 && nb == n &&
		    !memcmp(h, &h2, sizeof(h2)), "decoded again: %s", eb.text);
	for (i = 0; i < n; i++)
		FUZZ_ASSERT(!memcmp(&a.ranks[i], &b.ranks[i], offsetof(struct detect_rank, comm)) &&
			    !memcmp(a.ranks[i].comm, b.ranks[i].comm,
				    a.ranks[i].ncomm * sizeof(a.ranks[i].comm[0])) &&
			    !memcmp(&a.info[i], &b.info[i], sizeof(a.info[i])),
			    "sum_carry: rank entry %zu differs from the wire's", i);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct detect_rank *r = (struct detect_rank *)&r;
	struct sum_rank_info *in = (struct sum_rank_info *)&in;
	struct sum_header h;
	struct buf b = BUF_INIT;
	size_t n = 99, i;
	uint32_t version;
	pl_err_t err;
	int rv, a;
	uint64_t prod = 1;

	version = size < 12 ? 0 :
		  data[8] | data[9] << 8 | data[10] << 16 | (uint32_t)data[11] << 24;
	pl_err_clear(&err);
	rv = sum_decode(data, size, RECV, &h, &r, &in, &n, &err);
	FUZZ_ASSERT(rv == 0 || rv == -1, "rv %d", rv);
	same_in_space(data, size, rv, &h, r, in, n, &err);
	if (rv == -1) {
		FUZZ_ASSERT(pl_err_isset(&err) && !strncmp(err.text, "node summary", 12),
			    "a refusal says what it refused: %s", err.text);
		FUZZ_ASSERT(!r && !in && n == 0 && !h.node[0] && !h.world,
			    "a refusal hands nothing out");
		FUZZ_ASSERT(size < 12 || memcmp(data, "PLWSUM01", 8) || version == SUM_VERSION ||
			    strstr(err.text, "want version 7, the only one"),
			    "version %u refused as another version: %s", version, err.text);
		return 0;
	}
	FUZZ_ASSERT(n <= SUM_MAX_RANKS && size <= SUM_MAX_BYTES, "%zu ranks in %zu bytes", n, size);
	FUZZ_ASSERT((n == 0) == (r == NULL) && (n == 0) == (in == NULL), "arrays for %zu ranks", n);
	FUZZ_ASSERT(size >= 12 && !memcmp(data, "PLWSUM01", 8) && data[8] == SUM_VERSION &&
		    !data[9] && !data[10] && !data[11], "accepted without the magic and version");
	FUZZ_ASSERT(text_ok(h.node, sizeof(h.node)) && h.node[0], "the node name");
	FUZZ_ASSERT(h.world >= 1 && h.world <= SUM_MAX_WORLD && h.interval_ms >= 1 &&
		    h.interval_ms <= SUM_MAX_INTERVAL_MS && h.msg_seq >= 1 && h.uid != UINT32_MAX,
		    "header values");
	for (a = 0; a < SUM_NAXES; a++) {
		FUZZ_ASSERT(h.size[a] >= 1 && h.size[a] <= h.world, "layout size %d", a);
		if (a != PL_EP)
			prod *= h.size[a];
	}
	FUZZ_ASSERT(prod == h.world, "tp*cp*dp*pp is the world");
	for (i = 0; i < n; i++)
		check_rank(&h, &r[i], &in[i], i);
	/* No rank twice (quadratic, but n is small in what the fuzzer makes). */
	for (i = 0; i < n; i++) {
		size_t j;

		for (j = i + 1; j < n; j++)
			FUZZ_ASSERT(r[i].rank != r[j].rank, "rank %lld twice", (long long)r[i].rank);
	}
	/* Canonical: encoded again against RECV, the same bytes. */
	h.sender_now_ns = RECV;
	pl_err_clear(&err);
	FUZZ_ASSERT(sum_encode(&b, &h, r, in, n, &err) == 0, "what was accepted encodes: %s",
		    err.text);
	FUZZ_ASSERT(b.len == size, "encoded again: %zu bytes, came %zu", b.len, size);
	for (i = 0; i < 8; i++)
		FUZZ_ASSERT((uint8_t)b.s[96 + i] == (uint8_t)(RECV >> (8 * i)), "sender_now written");
	FUZZ_ASSERT(!memcmp(b.s, data, 96) && !memcmp(b.s + 104, data + 104, size - 104),
		    "encoded again: the very bytes that came");
	same_carry(&h, r, in, n, b.s, b.len);
	buf_free(&b);
	check_young(data, size, n);
	free(r);
	free(in);
	return 0;
}
