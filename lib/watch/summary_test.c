/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The node summary: a fixture of three ranks (five communicator states,
 * among them a busy slot and a finalized one) encoded and decoded back,
 * with the rebased times worked out by hand; the bytes summary.h
 * documents, laid out here by hand; every class of malformed input
 * refused with the message that names it (truncated at every byte offset,
 * with and without the size field agreeing, wrong magic, every version
 * but the current one, counts too large, sizes that disagree, bad texts
 * and varints, every out-of-range field); what the encoder cleans and what
 * it refuses; the encoded size of 8 ranks x 6 communicators.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "summary.h"
#include "tap.h"

#define S	UINT64_C(1000000000)	/* one second in ns */
#define MS	UINT64_C(1000000)
#define SEND	(1000 * S)		/* the sender's now */
#define RECV	(5000 * S)		/* the receiver's now */
#define YEARS10	SUM_MAX_AGE_NS

/*
 * The fixture's ranks after the header, laid out by hand from summary.h:
 * varints (LEB128), counted texts, the hash in 8 bytes.  The offsets in
 * the comments are into this body (the summary's offset less 168).
 */
static const uint8_t body[] = {
	/* 0 rank 4: rank, pid 1004, exit age 0, status 0, gpu 0 + 1,
	 * co 0 0 1 2 0, exit bits 0, nic "mlx5_0" (12), ncomm 2 (19) */
	0x04, 0xec, 0x07, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00,
	0x06, 0x6d, 0x6c, 0x78, 0x35, 0x5f, 0x30, 0x02,
	/* 20 comm tp: hash, name (28), rank 0 (31), nranks 2, flags 0x1 (33),
	 * nwait 32 (34), p2p_peer 0 (35), colls 100, seq 99, func (38),
	 * enter age 10 s (48), done 99, in flight 4, progress age 2 s (55),
	 * wait sum 160 ms (60), gap sum 640 ms (64), nnodes 0 (69), the
	 * AllGather run 0 0 0, the p2p time 0 0 */
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0xaa, 0xaa, 0x02, 0x74, 0x70, 0x00,
	0x02, 0x01, 0x20, 0x00, 0x64, 0x63, 0x09, 0x41, 0x6c, 0x6c, 0x52, 0x65,
	0x64, 0x75, 0x63, 0x65, 0x80, 0xc8, 0xaf, 0xa0, 0x25, 0x63, 0x04, 0x80,
	0xa8, 0xd6, 0xb9, 0x07, 0x80, 0xd0, 0xa5, 0x4c, 0x80, 0xc0, 0x96, 0xb1,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* 75 comm dp: hash, name (83), rank 1, nranks 4, flags 0x5, nwait 12
	 * (89), p2p_peer 0, colls 12, seq 11, func (93), enter age 1 (107),
	 * done 12, in flight 0, progress age 0, wait sum 480 ms (111), gap sum
	 * 3.6 s (116), then six 0 */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0xdd, 0xdd, 0x02, 0x64, 0x70, 0x01,
	0x04, 0x05, 0x0c, 0x00, 0x0c, 0x0b, 0x0d, 0x52, 0x65, 0x64, 0x75, 0x63,
	0x65, 0x53, 0x63, 0x61, 0x74, 0x74, 0x65, 0x72, 0x01, 0x0c, 0x00, 0x00,
	0x80, 0xf0, 0xf0, 0xe4, 0x01, 0x80, 0xc8, 0xce, 0xb4, 0x0d, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
	/* 127 rank 5: rank, pid 1005, exit age 3 s (130), status 7 << 8
	 * (135), gpu 1 + 1, co 1 0 1 2 0, exit bits 0x3 (143), nic "mlx5_1",
	 * ncomm 1 (151) */
	0x05, 0xed, 0x07, 0x80, 0xbc, 0xc1, 0x96, 0x0b, 0x80, 0x0e, 0x02, 0x01,
	0x00, 0x01, 0x02, 0x00, 0x03, 0x06, 0x6d, 0x6c, 0x78, 0x35, 0x5f, 0x31,
	0x01,
	/* 152 comm (busy): hash 0, name "", rank 0 (161), nranks 0, flags
	 * 0x2, the rest 0 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00,
	/* 181 rank 7: rank, pid 1007, exit age 1, status 0 (185), gpu
	 * unknown (0), co 1 0 0 3 0, exit bits 0x1, nic "", ncomm 0 (194) */
	0x07, 0xef, 0x07, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x03, 0x00, 0x01,
	0x00, 0x00,
	/* 195 the process trees (version 5), in the order of the rank entries.
	 * Rank 4: state 'S', known, 3 processes, 40 threads, 1.9 cores, no
	 * reads, 310 MB/s written (202), progress 1 s ago (207), not in D,
	 * no wchan */
	0x53, 0x01, 0x03, 0x28, 0xec, 0x0e, 0x00, 0x80, 0xf3, 0xe8, 0x93, 0x01,
	0x80, 0x94, 0xeb, 0xdc, 0x03, 0x00, 0x00,
	/* 214 rank 5: not sampled */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* 224 rank 7: state 'D', known, 1 process, 2 threads, no CPU nor
	 * I/O, no progress, in D 70 s (232), wchan "nfs_wait_bit_killable"
	 * (238) */
	0x44, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x80, 0xf8, 0xcc, 0xe2,
	0x84, 0x02, 0x15, 0x6e, 0x66, 0x73, 0x5f, 0x77, 0x61, 0x69, 0x74, 0x5f,
	0x62, 0x69, 0x74, 0x5f, 0x6b, 0x69, 0x6c, 0x6c, 0x61, 0x62, 0x6c, 0x65,
	/* 260 the communicators' rest (version 7), in the order of the rank
	 * entries and their communicators.  Rank 4's tp: count 1048576,
	 * "ncclBfloat16" (263), root none (276), p2p to and from its
	 * neighbours 3 4 5 6 (277), 7 bursts (281) */
	0x80, 0x80, 0x40, 0x0c, 0x6e, 0x63, 0x63, 0x6c, 0x42, 0x66, 0x6c, 0x6f,
	0x61, 0x74, 0x31, 0x36, 0x00, 0x03, 0x04, 0x05, 0x06, 0x07,
	/* 282 its dp: count 4194304, "ncclFloat32" (286), root 0 (298), no
	 * p2p (299), no bursts (303) */
	0x80, 0x80, 0x80, 0x02, 0x0b, 0x6e, 0x63, 0x63, 0x6c, 0x46, 0x6c, 0x6f,
	0x61, 0x74, 0x33, 0x32, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
	/* 304 rank 5's busy slot: nothing known */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

#define FIX_LEN	(SUM_HEADER_BYTES + sizeof(body))

static struct sum_header fh;
static struct detect_rank fr[3];
static struct sum_rank_info fi[3];

static void
le_put(uint8_t *p, unsigned width, uint64_t v)
{
	unsigned i;

	for (i = 0; i < width; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
le_get(const uint8_t *p, unsigned width)
{
	uint64_t v = 0;
	unsigned i;

	for (i = 0; i < width; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static struct detect_comm *
comm(struct detect_rank *r, uint64_t hash, const char *name, int32_t rank, int32_t nranks,
     uint32_t flags)
{
	struct detect_comm *c = &r->comm[r->ncomm++];

	memset(c, 0, sizeof(*c));
	c->hash = hash;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->rank = rank;
	c->nranks = nranks;
	c->flags = flags;
	c->p2p_peer = -1;
	c->root = -1;
	return c;
}

/*
 * Job 4242.3 of uid 1000, world 16 as tp2 ep2 dp4 pp2, on node2:
 *   rank 4 running, GPU 0, mlx5_0, coordinates tp0 cp0 ep1 dp2 pp0:
 *     tp (rank 0 of 2): AllReduce #99 entered 10 s ago, 99 of 100 done,
 *       4 channels in flight, progress 2 s ago, a full wait window;
 *     dp (rank 1 of 4), finalized: entered "now" (sent as age 1), no
 *       progress time;
 *   rank 5 exited 3 s ago with status 7 << 8, GPU 1: a busy slot whose
 *     identity was not readable (nranks 0);
 *   rank 7 gone with its status unknown, seen at a time after the
 *     sender's now (age 1), GPU unknown, no NIC, no communicator.
 */
static void
fixture(void)
{
	struct detect_comm *c;
	int i;

	memset(&fh, 0, sizeof(fh));
	snprintf(fh.node, sizeof(fh.node), "node2");
	fh.job_id = 4242;
	fh.step_id = 3;
	fh.uid = 1000;
	fh.interval_ms = 1000;
	fh.sender_now_ns = SEND;
	fh.sender_real_ns = UINT64_C(1700000000) * S;
	fh.msg_seq = 7;
	fh.boot_id = UINT64_C(0x1122334455667788);
	fh.world = 16;
	fh.size[0] = 2;		/* tp */
	fh.size[1] = 1;		/* cp */
	fh.size[2] = 2;		/* ep */
	fh.size[3] = 4;		/* dp */
	fh.size[4] = 2;		/* pp */
	memset(fr, 0, sizeof(fr));
	memset(fi, 0, sizeof(fi));
	for (i = 0; i < 3; i++) {
		fr[i].job_id = 4242;
		fr[i].step_id = 3;
	}
	fr[0].rank = 4;
	fr[0].pid = 1004;
	fr[0].proc.known = 1;
	fr[0].proc.state = 'S';
	fr[0].proc.nprocs = 3;
	fr[0].proc.threads = 40;
	fr[0].proc.cpu_milli = 1900;
	fr[0].proc.write_bps = 310000000;
	fr[0].proc.progress_ns = SEND - S;
	c = comm(&fr[0], UINT64_C(0xaaaa000000000001), "tp", 0, 2, DETECT_GPU);
	c->colls = 100;
	c->seq = 99;
	snprintf(c->func, sizeof(c->func), "AllReduce");
	snprintf(c->dtype, sizeof(c->dtype), "ncclBfloat16");
	c->count = 1048576;
	c->p2p_tx[0] = 3;
	c->p2p_rx[0] = 4;
	c->p2p_tx[1] = 5;
	c->p2p_rx[1] = 6;
	c->bursts = 7;
	c->enter_ns = SEND - 10 * S;
	c->done = 99;
	c->ch_inflight = 4;
	c->progress_ns = SEND - 2 * S;
	c->nwait = 32;
	c->wait_sum_ns = 32 * 5 * MS;
	c->gap_sum_ns = 32 * 20 * MS;
	c = comm(&fr[0], UINT64_C(0xdddd000000000002), "dp", 1, 4, DETECT_GPU | DETECT_FINAL);
	c->colls = 12;
	c->seq = 11;
	snprintf(c->func, sizeof(c->func), "ReduceScatter");
	snprintf(c->dtype, sizeof(c->dtype), "ncclFloat32");
	c->count = 4194304;
	c->root = 0;
	c->enter_ns = SEND;
	c->done = 12;
	c->nwait = 12;
	c->wait_sum_ns = 12 * 40 * MS;
	c->gap_sum_ns = 12 * 300 * MS;
	fi[0].gpu = 0;
	snprintf(fi[0].nic, sizeof(fi[0].nic), "mlx5_0");
	fi[0].co[2] = 1;
	fi[0].co[3] = 2;
	fr[1].rank = 5;
	fr[1].pid = 1005;
	fr[1].exited = 1;
	fr[1].exit_known = 1;
	fr[1].exit_status = 7 << 8;
	fr[1].exit_ns = SEND - 3 * S;
	comm(&fr[1], 0, "", 0, 0, DETECT_BUSY);
	fi[1].gpu = 1;
	snprintf(fi[1].nic, sizeof(fi[1].nic), "mlx5_1");
	fi[1].co[0] = 1;
	fi[1].co[2] = 1;
	fi[1].co[3] = 2;
	fr[2].rank = 7;
	fr[2].pid = 1007;
	fr[2].proc.known = 1;
	fr[2].proc.state = 'D';
	fr[2].proc.nprocs = 1;
	fr[2].proc.threads = 2;
	fr[2].proc.dstate_ns = SEND - 70 * S;
	snprintf(fr[2].proc.wchan, sizeof(fr[2].proc.wchan), "nfs_wait_bit_killable");
	fr[2].exited = 1;
	fr[2].exit_ns = SEND + 5 * S;
	fi[2].gpu = -1;
	fi[2].co[0] = 1;
	fi[2].co[3] = 3;
}

/* The name of the first field where two ranks differ, or NULL. */
static const char *
rank_diff(const struct detect_rank *a, const struct detect_rank *b)
{
	uint32_t k;

	if (a->job_id != b->job_id || a->step_id != b->step_id)
		return "job/step";
	if (a->rank != b->rank)
		return "rank";
	if (a->pid != b->pid)
		return "pid";
	if (a->exited != b->exited || a->exit_known != b->exit_known ||
	    a->exit_status != b->exit_status)
		return "exit";
	if (a->exit_ns != b->exit_ns)
		return "exit_ns";
	if (a->ncomm != b->ncomm)
		return "ncomm";
	for (k = 0; k < a->ncomm; k++) {
		const struct detect_comm *x = &a->comm[k], *y = &b->comm[k];

		if (x->hash != y->hash || strcmp(x->name, y->name) || x->rank != y->rank ||
		    x->nranks != y->nranks || x->flags != y->flags)
			return "comm identity";
		if (x->colls != y->colls || x->seq != y->seq || strcmp(x->func, y->func) ||
		    x->count != y->count || strcmp(x->dtype, y->dtype) || x->root != y->root ||
		    x->done != y->done || x->ch_inflight != y->ch_inflight)
			return "comm counts";
		if (x->enter_ns != y->enter_ns)
			return "comm enter_ns";
		if (x->progress_ns != y->progress_ns)
			return "comm progress_ns";
		if (x->nwait != y->nwait || x->wait_sum_ns != y->wait_sum_ns ||
		    x->gap_sum_ns != y->gap_sum_ns)
			return "comm window";
		if (x->p2p_peer != y->p2p_peer)
			return "comm p2p_peer";
		if (x->nnodes != y->nnodes || x->ag_peak_bytes != y->ag_peak_bytes ||
		    x->ag_peak_calls != y->ag_peak_calls || x->ag_peak_top != y->ag_peak_top)
			return "comm nnodes/AllGather run";
	}
	return NULL;
}

static const char *
info_diff(const struct sum_rank_info *a, const struct sum_rank_info *b)
{
	if (a->gpu != b->gpu)
		return "gpu";
	if (strcmp(a->nic, b->nic))
		return "nic";
	if (memcmp(a->co, b->co, sizeof(a->co)))
		return "coordinates";
	return NULL;
}

/* With SUMMARY_SEEDS=DIR in the environment, write len bytes at p as
 * DIR/name: the fuzz target's seeds (fuzz/corpus/summary) made by the
 * encoder of this version. */
static void
seed(const char *name, const void *p, size_t len)
{
	const char *dir = getenv("SUMMARY_SEEDS");
	char path[4096];
	FILE *f;

	if (!dir || !*dir || !p)
		return;
	snprintf(path, sizeof(path), "%s/v%u-%s", dir, SUM_VERSION, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len)
		diag("seed %s: not written", path);
	if (f)
		fclose(f);
}

/* The fixture encoded: caller frees. */
static uint8_t *
encoded(size_t *len)
{
	struct buf b = BUF_INIT;
	pl_err_t err;

	pl_err_clear(&err);
	fixture();
	if (sum_encode(&b, &fh, fr, fi, 3, &err) < 0) {
		diag("encode: %s", err.text);
		*len = 0;
		buf_free(&b);
		return NULL;
	}
	*len = b.len;
	seed("three-ranks-exits-busy-slot", b.s, b.len);
	return (uint8_t *)buf_take(&b);
}

static void
t_roundtrip(void)
{
	struct detect_rank want[3], *r = NULL;
	struct sum_rank_info *in = NULL;
	struct sum_header h;
	const char *d = NULL;
	uint8_t *p;
	size_t len, n = 0, i;
	pl_err_t err;
	int rv;

	p = encoded(&len);
	is_int(len, FIX_LEN, "encoded: the 168-byte header, 195 bytes of ranks, 65 of "
	       "process trees and 49 of the communicators' rest");
	pl_err_clear(&err);
	rv = sum_decode(p, len, RECV, &h, &r, &in, &n, &err);
	ok(rv == 0 && n == 3, "decoded: 3 ranks (%s)", err.text);
	ok(rv == 0 && !strcmp(h.node, "node2") && h.job_id == 4242 && h.step_id == 3 &&
	   h.uid == 1000 && h.interval_ms == 1000 && h.sender_now_ns == SEND &&
	   h.sender_real_ns == UINT64_C(1700000000) * S && h.msg_seq == 7 &&
	   h.boot_id == UINT64_C(0x1122334455667788) && h.world == 16 && h.size[0] == 2 &&
	   h.size[1] == 1 && h.size[2] == 2 && h.size[3] == 4 && h.size[4] == 2,
	   "the header comes back field by field");
	ok(rv == 0 && r[0].proc.known == 1 && r[0].proc.state == 'S' && r[0].proc.nprocs == 3 &&
	   r[0].proc.threads == 40 && r[0].proc.cpu_milli == 1900 && r[0].proc.read_bps == 0 &&
	   r[0].proc.write_bps == 310000000 && r[0].proc.progress_ns == RECV - S &&
	   r[0].proc.dstate_ns == 0 && !r[1].proc.known && !r[1].proc.state &&
	   r[2].proc.state == 'D' && r[2].proc.dstate_ns == RECV - 70 * S &&
	   r[2].proc.progress_ns == 0 && !strcmp(r[2].proc.wchan, "nfs_wait_bit_killable"),
	   "the process trees come back, their times rebased on the receiver's clock");
	/* The times, by hand: recv - (send - t). */
	memcpy(want, fr, sizeof(want));
	want[0].comm[0].enter_ns = RECV - 10 * S;
	want[0].comm[0].progress_ns = RECV - 2 * S;
	want[0].comm[1].enter_ns = RECV - 1;	/* at send: age 1 */
	want[0].comm[1].progress_ns = 0;	/* never stays never */
	want[1].exit_ns = RECV - 3 * S;
	want[2].exit_ns = RECV - 1;		/* after send: age 1 */
	for (i = 0; rv == 0 && i < 3 && !d; i++)
		if ((d = rank_diff(&r[i], &want[i])) || (d = info_diff(&in[i], &fi[i])))
			diag("  rank entry %zu: %s differs", i, d);
	ok(rv == 0 && !d, "ranks, communicators and naming come back; times rebased to the "
	   "receiver's clock (10 s, 2 s, 3 s ago; age 1 for now and later; 0 stays 0)");
	free(r);
	free(in);
	/* A receiver whose clock is behind the ages: 1, never 0 or a wrap. */
	r = NULL;
	in = NULL;
	rv = sum_decode(p, len, 5 * S, &h, &r, &in, &n, &err);
	ok(rv == 0 && r[0].comm[0].enter_ns == 1 && r[0].comm[0].progress_ns == 3 * S &&
	   r[1].exit_ns == 2 * S && r[0].comm[1].progress_ns == 0,
	   "receiver at 5 s: an age of 10 s rebases to 1, 2 s to 3 s, 3 s to 2 s, never to 0");
	free(r);
	free(in);
	free(p);
}

/* The header's bytes at summary.h's offsets, little-endian, and the
 * ranks as laid out by hand. */
static void
t_bytes(void)
{
	size_t len;
	uint8_t *p = encoded(&len);

	if (!p) {
		ok(0, "bytes: no encoding");
		ok(0, "bytes: no encoding");
		return;
	}
	ok(!memcmp(p, "PLWSUM01", 8) && le_get(p + 8, 4) == SUM_VERSION && SUM_VERSION == 7 &&
	   le_get(p + 12, 4) == len && !strcmp((const char *)p + 16, "node2") &&
	   le_get(p + 80, 8) == 4242 && le_get(p + 88, 8) == 3 && le_get(p + 96, 8) == SEND &&
	   le_get(p + 112, 8) == 7 && le_get(p + 128, 4) == 1000 && le_get(p + 136, 4) == 16 &&
	   le_get(p + 140, 4) == 2 && le_get(p + 148, 4) == 2 && le_get(p + 152, 4) == 4 &&
	   le_get(p + 160, 4) == 3 && le_get(p + 164, 4) == 0 && p[120] == 0x88 && p[127] == 0x11,
	   "header: \"PLWSUM01\", version 7, size, node, job, step, now, seq, uid, world, "
	   "layout, nranks at their offsets, little-endian");
	ok(len == FIX_LEN && !memcmp(p + SUM_HEADER_BYTES, body, sizeof(body)),
	   "the ranks, communicators and process trees: the bytes laid out by hand");
	free(p);
}

/*
 * One change to the fixture's bytes and the message it must give: a
 * number of the header (NUM), bytes written over (TXT), or n bytes of the
 * body at o replaced by others (REP, total_size set to the new length).
 */
struct patch {
	unsigned off;
	unsigned width;		/* 1, 2, 4, 8; 0: the bytes */
	uint64_t value;
	const char *bytes;
	unsigned nbytes;
	unsigned replaced;	/* REP: the bytes replaced, else 0 */
	const char *want;	/* a part of the message */
	const char *what;
};

#define NUM(o, w, v, want, what)	{ (o), (w), (uint64_t)(v), NULL, 0, 0, (want), (what) }
#define TXT(o, b, want, what)		{ (o), 0, 0, (b), sizeof(b) - 1, 0, (want), (what) }
#define REP(o, n, b, want, what) \
	{ SUM_HEADER_BYTES + (o), 0, 0, (b), sizeof(b) - 1, (n), (want), (what) }

static const struct patch patches[] = {
	TXT(0, "XLWSUM01", "magic XLWSUM01: want \"PLWSUM01\"", "wrong magic"),
	NUM(8, 4, 8, "version 8: want version 7, the only one this layoutd reads",
	    "a version to come"),
	NUM(8, 4, 6, "version 6: want version 7, the only one", "version 6 (no bursts)"),
	NUM(8, 4, 5, "version 5: want version 7, the only one", "version 5 (no signatures)"),
	NUM(8, 4, 4, "version 4: want version 7, the only one", "version 4 (no process trees)"),
	NUM(8, 4, 3, "version 3: want version 7, the only one", "version 3 (never released)"),
	NUM(8, 4, 2, "version 2: want version 7, the only one", "version 2 (never released)"),
	NUM(8, 4, 1, "version 1: want version 7, the only one", "version 1 (never released)"),
	NUM(8, 4, 0, "version 0: want version 7", "version 0"),
	NUM(12, 4, FIX_LEN + 1, "truncated: 480 bytes of the 481", "total_size above the length"),
	NUM(12, 4, FIX_LEN - 1, "480 bytes, 1 more than its total_size 479", "total_size below"),
	NUM(12, 4, 0xffffffffu, "truncated: 480 bytes of the 4294967295", "total_size huge"),
	TXT(16, "\x01", "node \\x01ode2: byte 0 is 0x01, want printable", "node not printable"),
	NUM(16, 8, 0, "node: empty", "node empty"),
	TXT(16, "node2\0x", "node: byte 6 after the NUL is 0x78, want 0", "node: junk after the NUL"),
	TXT(16, "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
	    "no NUL within its 64 bytes", "node without NUL"),
	NUM(136, 4, 0, "world 0: want 1 to 16777216", "world 0"),
	NUM(136, 4, (1 << 24) + 1, "world 16777217: want 1 to 16777216", "world too large"),
	NUM(140, 4, 0, "layout tp = 0: want 1 to the world, 16", "layout size 0"),
	NUM(148, 4, 17, "layout ep = 17: want 1 to the world, 16", "ep above the world"),
	NUM(140, 4, 4, "tp*cp*dp*pp exceeds the world, 16", "product above the world"),
	NUM(152, 4, 2, "tp*cp*dp*pp = 8, want the world, 16", "product below the world"),
	NUM(132, 4, 0, "interval_ms 0: want 1 to 3600000", "interval 0"),
	NUM(132, 4, 3600001, "interval_ms 3600001", "interval above an hour"),
	NUM(112, 8, 0, "msg_seq 0: want 1 or more", "msg_seq 0"),
	NUM(128, 4, 0xffffffffu, "uid 4294967295", "uid -1"),
	NUM(164, 4, 1, "reserved header field 0x1: want 0", "header reserved"),
	NUM(160, 4, 1025, "nranks 1025: want at most 1024", "nranks too large"),
	NUM(160, 4, 16, "nranks 16 needs at least 536 bytes, the summary has 480",
	    "nranks beyond the length"),
	NUM(160, 4, 4, "rank entry 3 (rank 83): rank 83: want 0 to 15 (world 16)",
	    "one rank entry more than there are (a process tree read as one)"),
	NUM(160, 4, 2, "rank entry 0 (rank 4): proc known 1007: want 0 or 1",
	    "one rank entry fewer (rank 7's read as a process tree)"),
	REP(0, 1, "\x10", "rank entry 0 (rank 16): rank 16: want 0 to 15 (world 16)",
	    "rank = world"),
	REP(0, 1, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01",
	    "rank 9223372036854775808: want at most 9223372036854775807", "rank negative"),
	REP(0, 1, "\x05", "rank entries 0 and 1 both hold rank 5: want each rank once",
	    "rank twice"),
	REP(0, 1, "\x84\x00", "rank: a varint of 2 bytes with a zero last byte: want its "
	    "shortest form", "a varint not in its shortest form"),
	REP(0, 1, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "rank: a varint above 2^64 - 1",
	    "a varint above 64 bits"),
	REP(0, 1, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", "rank: a varint above 2^64 - 1",
	    "an 11-byte varint"),
	REP(1, 2, "\x00", "rank entry 0 (rank 4): pid 0: want 1 to 2147483647", "pid 0"),
	REP(1, 2, "\x80\x80\x80\x80\x08", "pid 2147483648", "pid above INT32_MAX"),
	REP(11, 1, "\x04", "exit bits 0x04: want only 0x1 (exited) and 0x2 (exit_known)",
	    "an unknown exit bit"),
	REP(11, 1, "\x02", "exit_known 1 while exited 0", "exit known, not exited"),
	REP(135, 2, "\xf0\xa2\x04", "exit_status 70000: want a wait status, 0 to 65535",
	    "status too large"),
	REP(135, 2, "\xff\xff\xff\xff\x0f", "exit_status 4294967295: want at most 2147483647",
	    "status negative"),
	REP(185, 1, "\x05", "exit_status 5 while exit_known 0: want 0", "status while unknown"),
	REP(3, 1, "\x01", "exit_age_ns 1 while exited 0: want 0", "exit age, not exited"),
	REP(130, 5, "\x81\x80\x8e\x9d\xb3\xd6\xc9\xb0\x04",
	    "exit_age_ns 315576000000000001: want at most 315576000000000000 (ten years)",
	    "exit age beyond ten years"),
	REP(6, 1, "\x02", "coordinate tp = 2: want 0 to 1 (layout tp2)", "tp coordinate"),
	REP(7, 1, "\x01", "coordinate cp = 1: want 0 to 0 (layout cp1)", "cp coordinate"),
	REP(9, 1, "\x04", "coordinate dp = 4: want 0 to 3 (layout dp4)", "dp coordinate"),
	REP(10, 1, "\xff\xff\xff\xff\x0f", "coordinate pp = 4294967295: want 0 to 1",
	    "pp coordinate"),
	REP(5, 1, "\x81\x08", "gpu 1024: want -1 (unknown) or 0 to 1023", "gpu 1024"),
	REP(12, 1, "\x20", "nic: length 32: want at most 31", "a NIC too long"),
	TXT(SUM_HEADER_BYTES + 13, "\x1b", "nic: byte 0 is 0x1b, want printable ASCII",
	    "a NIC with an escape"),
	REP(19, 1, "\x21", "rank entry 0 (rank 4): ncomm 33: want at most 32", "ncomm too large"),
	REP(19, 1, "\x0a", "rank entry 0 (rank 4): ncomm 10 needs at least 290 bytes",
	    "ncomm beyond the length"),
	REP(194, 1, "\x03", "rank entry 2 (rank 7): ncomm 3 needs at least 87 bytes and the 0 "
	    "rank entries after it with the process trees and the signatures 78, 117 are left",
	    "ncomm in the last entry beyond the length"),
	REP(28, 1, "\x30", "name: length 48: want at most 47", "a name too long"),
	TXT(SUM_HEADER_BYTES + 29, "\x7f", "communicator 0: name: byte 0 is 0x7f",
	    "name not printable"),
	REP(33, 1, "\x20", "communicator 0: flags 0x20: want only 0x1 (gpu), 0x2 (busy), 0x4 "
	    "(finalized), 0x8 (p2p) and 0x10 (send)", "unknown flag"),
	REP(31, 1, "\x02", "communicator 0: rank 2: want 0 to 1 (nranks 2)",
	    "comm rank = nranks"),
	REP(31, 1, "\x80\x80\x80\x80\x08", "communicator 0: rank 2147483648: want at most "
	    "2147483647", "comm rank negative"),
	REP(32, 1, "\x00", "nranks 0: want 1 to 16777216 (0 only in a busy slot)",
	    "nranks 0, not busy"),
	REP(32, 1, "\x81\x80\x80\x08", "nranks 16777217: want 1 to 16777216",
	    "comm nranks too large"),
	REP(161, 1, "\x01", "rank entry 1 (rank 5): communicator 0: nranks 0: want 1",
	    "busy slot rank 1 of 0"),
	REP(38, 1, "\x10", "func: length 16: want at most 15", "a func too long"),
	TXT(SUM_HEADER_BYTES + 42, "\xc3", "func: byte 3 is 0xc3, want printable", "func not ASCII"),
	REP(34, 1, "\x21", "nwait 33: want at most 32 (the wait ring)", "nwait beyond the ring"),
	REP(34, 1, "\x80\x80\x80\x80\x10", "nwait 4294967296: want at most 4294967295",
	    "nwait above 32 bits"),
	REP(35, 1, "\x01", "p2p_peer 1 without flag 0x8 (p2p): want 0",
	    "a p2p peer without the flag"),
	REP(60, 4, "\x81\x80\xc0\xa3\xe7\xcc\xb5\x92\x8c\x01",
	    "wait_sum_ns 10098432000000000001: want at most 10098432000000000000",
	    "wait sum beyond nwait * ten years"),
	REP(89, 1, "\x00", "communicator 1: wait_sum_ns 480000000: want at most 0 (nwait 0",
	    "sums with nwait 0"),
	REP(116, 5, "\x81\x80\xa8\xdd\xe6\x8c\xf4\xc6\x34",
	    "gap_sum_ns 3786912000000000001: want at most", "gap sum too large"),
	REP(48, 5, "\x81\x80\x8e\x9d\xb3\xd6\xc9\xb0\x04",
	    "communicator 0: enter_age_ns 315576000000000001: want at most", "enter age"),
	REP(55, 5, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
	    "progress_age_ns 18446744073709551615: want at most", "progress age"),
	REP(263, 1, "\x10", "rank entry 0 (rank 4): communicator 0: datatype: length 16: want at "
	    "most 15", "a datatype too long"),
	TXT(SUM_HEADER_BYTES + 264, "\x01", "communicator 0: datatype: byte 0 is 0x01, want "
	    "printable", "a datatype not printable"),
	REP(298, 1, "\x81\x80\x80\x80\x08", "rank entry 0 (rank 4): communicator 1: root + 1 "
	    "2147483649: want at most 2147483648", "a root above INT32_MAX"),
	REP(307, 1, "\x01", "rank entry 1 (rank 5): communicator 0: p2p counts to its neighbours "
	    "with nranks 0: want 0 (known only for 2 to 16 members)",
	    "p2p counts in a slot whose members are not known"),
	REP(304, 8, "", "rank entry 1 (rank 5): communicator 0: count: truncated",
	    "the last signature cut"),
	REP(sizeof(body), 0, "\x00", "1 bytes after the last signature: want none",
	    "a byte after the last rank"),
	REP(195, 1, "\x01", "rank entry 0 (rank 4): proc state 0x01: want 0 (unknown) or a "
	    "letter", "proc state not a letter"),
	REP(196, 1, "\x02", "proc known 2: want 0 or 1", "proc known 2"),
	REP(199, 2, "\x81\xad\xe2\x04", "proc cpu_milli 10000001: want at most 10000000",
	    "proc CPU above 10,000 cores"),
	REP(212, 1, "\x01", "proc in D state for a time while its state is 0x53: want D",
	    "a D-state age outside D"),
	REP(218, 1, "\x05", "rank entry 1 (rank 5): proc rates or progress while known 0: want 0",
	    "rates of a tree not sampled"),
	REP(239, 1, "\x0a", "proc wchan: byte 0 is 0x0a, want printable", "a wchan not printable"),
};

#define NPATCH	(sizeof(patches) / sizeof(patches[0]))

/* p (room for len + PATCH_ROOM): the good summary with patch x applied;
 * its length. */
#define PATCH_ROOM	16

static size_t
patched(uint8_t *p, const uint8_t *good, size_t len, const struct patch *x)
{
	size_t n = len;

	if (x->replaced || x->off + x->nbytes > len) {
		n = len - x->replaced + x->nbytes;
		memcpy(p, good, x->off);
		memcpy(p + x->off, x->bytes, x->nbytes);
		memcpy(p + x->off + x->nbytes, good + x->off + x->replaced,
		       len - x->off - x->replaced);
		le_put(p + 12, 4, n);
		return n;
	}
	memcpy(p, good, len);
	if (x->width)
		le_put(p + x->off, x->width, x->value);
	else
		memcpy(p + x->off, x->bytes, x->nbytes);
	return n;
}

/* Each patch refused with its message, and nothing handed out. */
static void
t_patches(const uint8_t *good, size_t len)
{
	uint8_t *p = malloc(len + PATCH_ROOM);
	size_t i;

	for (i = 0; i < NPATCH; i++) {
		const struct patch *x = &patches[i];
		struct detect_rank *r = (void *)1;
		struct sum_rank_info *in = (void *)1;
		struct sum_header h;
		size_t n = 99, plen;
		pl_err_t err;
		int rv;

		plen = patched(p, good, len, x);
		pl_err_clear(&err);
		rv = sum_decode(p, plen, RECV, &h, &r, &in, &n, &err);
		if (rv != -1 || r || in || n || h.node[0]) {
			ok(0, "%s: refused (rv %d, n %zu)", x->what, rv, n);
			continue;
		}
		like(err.text, x->want, "%s: refused: %s", x->what, err.text);
	}
	free(p);
}

/*
 * sum_decode_in into one space, as a leader does: the same ranks as
 * sum_decode, every refusal the same error with n 0, and the space kept
 * (not grown again, not freed) across refusals.
 */
static void
t_space(const uint8_t *good, size_t len)
{
	struct sum_space sp = { NULL, NULL, 0 };
	struct detect_rank *r = NULL, *keep;
	struct sum_rank_info *in = NULL;
	struct sum_header h, h2;
	const char *d = NULL;
	uint8_t *p = malloc(len + PATCH_ROOM);
	size_t n = 0, n2 = 0, i, same = 0, plen;
	pl_err_t err, err2;
	int rv, rv2;

	pl_err_clear(&err);
	rv = sum_decode(good, len, RECV, &h, &r, &in, &n, &err);
	rv2 = sum_decode_in(good, len, RECV, &h2, &sp, &n2, &err);
	for (i = 0; rv == 0 && rv2 == 0 && i < n && !d; i++)
		if ((d = rank_diff(&sp.ranks[i], &r[i])) || (d = info_diff(&sp.info[i], &in[i])))
			diag("  rank entry %zu: %s differs", i, d);
	ok(rv == 0 && rv2 == 0 && n2 == n && sp.cap == n && !d &&
	   memcmp(&h, &h2, sizeof(h)) == 0,
	   "sum_decode_in: the header and the %zu ranks sum_decode gives", n);
	for (i = 0; i < NPATCH; i++) {
		const struct patch *x = &patches[i];
		struct detect_rank *r1 = NULL;
		struct sum_rank_info *in1 = NULL;
		size_t n1 = 0;

		plen = patched(p, good, len, x);
		pl_err_clear(&err);
		pl_err_clear(&err2);
		n2 = 99;
		rv = sum_decode(p, plen, RECV, &h, &r1, &in1, &n1, &err);
		rv2 = sum_decode_in(p, plen, RECV, &h2, &sp, &n2, &err2);
		same += rv == -1 && rv2 == -1 && n2 == 0 && !h2.node[0] &&
			strcmp(err.text, err2.text) == 0;
		free(r1);
		free(in1);
	}
	ok(same == NPATCH, "sum_decode_in: each of the %zu patched summaries refused with "
	   "sum_decode's error and n 0 (%zu agree)", NPATCH, same);
	keep = sp.ranks;
	pl_err_clear(&err);
	rv2 = sum_decode_in(good, len, RECV, &h2, &sp, &n2, &err);
	for (i = 0, d = NULL; rv2 == 0 && i < n && !d; i++)
		d = rank_diff(&sp.ranks[i], &r[i]);
	ok(rv2 == 0 && n2 == n && !d && sp.ranks == keep && sp.cap >= n,
	   "sum_decode_in after the refusals: the same ranks, in the space they left "
	   "(a refusal may have grown it, to %zu ranks)", sp.cap);
	sum_space_free(&sp);
	ok(!sp.ranks && !sp.info && !sp.cap, "sum_space_free empties the space");
	free(r);
	free(in);
	free(p);
}

/*
 * Truncated at every byte offset: with the header's size intact, "shorter
 * than its header" or "truncated"; with the size made to agree, a message
 * naming nranks or the rank entry that does not fit.  Also one byte more.
 */
static void
t_truncated(const uint8_t *good, size_t len)
{
	uint8_t *p = malloc(len + 1);
	size_t cut, bad = 0, bad2 = 0;
	struct sum_header h;
	struct detect_rank *r;
	struct sum_rank_info *in;
	size_t n;
	pl_err_t err;

	for (cut = 0; cut < len; cut++) {
		const char *want = cut < SUM_HEADER_BYTES ? "shorter than its 168-byte header" :
				   "node summary: truncated: ";

		memcpy(p, good, len);
		pl_err_clear(&err);
		if (sum_decode(p, cut, RECV, &h, &r, &in, &n, &err) != -1 || r || in ||
		    !strstr(err.text, want)) {
			if (!bad++)
				diag("  cut at %zu: %s", cut, err.text);
		}
		if (cut < SUM_HEADER_BYTES)
			continue;
		le_put(p + 12, 4, cut);
		pl_err_clear(&err);
		if (sum_decode(p, cut, RECV, &h, &r, &in, &n, &err) != -1 || r || in ||
		    !(strstr(err.text, "nranks 3 needs") || strstr(err.text, "rank entry"))) {
			if (!bad2++)
				diag("  cut at %zu, size agreeing: %s", cut, err.text);
		}
	}
	ok(bad == 0, "truncated at each of the %zu byte offsets: refused as truncated (%zu not)",
	   len, bad);
	ok(bad2 == 0, "truncated at each offset past the header with the size agreeing: refused, "
	   "naming nranks or the rank entry (%zu not)", bad2);
	memcpy(p, good, len);
	p[len] = 0;
	le_put(p + 12, 4, len + 1);
	pl_err_clear(&err);
	sum_decode(p, len + 1, RECV, &h, &r, &in, &n, &err);
	like(err.text, "node2: 1 bytes after the last signature: want none",
	     "one byte after the last entry, size agreeing: refused");
	free(p);
}

/* Past the 1 MiB bound, before anything else is read. */
static void
t_too_large(const uint8_t *good, size_t len)
{
	uint8_t *p = calloc(1, SUM_MAX_BYTES + 1);
	struct sum_header h;
	struct detect_rank *r;
	struct sum_rank_info *in;
	size_t n;
	pl_err_t err;

	memcpy(p, good, len);
	le_put(p + 12, 4, SUM_MAX_BYTES + 1);
	pl_err_clear(&err);
	sum_decode(p, SUM_MAX_BYTES + 1, RECV, &h, &r, &in, &n, &err);
	like(err.text, "node summary: 1048577 bytes: want at most 1048576", "1 MiB + 1 byte: refused");
	pl_err_clear(&err);
	sum_decode(NULL, 0, RECV, &h, &r, &in, &n, &err);
	like(err.text, "0 bytes, shorter than its 168-byte header", "nothing at all: refused");
	free(p);
}

/* What comes from a record is cleaned, never refused. */
static void
t_encode_cleans(void)
{
	struct buf b = BUF_INIT;
	struct sum_header h;
	struct detect_rank *r = NULL;
	struct sum_rank_info *in = NULL;
	struct detect_comm *c;
	size_t n = 0;
	pl_err_t err;
	int rv;

	fixture();
	c = &fr[0].comm[0];
	memcpy(c->name, "t\x01p\n", 5);
	memset(fr[0].comm[1].name, 'x', sizeof(fr[0].comm[1].name));	/* no NUL */
	memcpy(fi[0].nic, "mlx\x05", 5);
	fh.sender_now_ns = 20 * YEARS10;	/* 200 years of uptime */
	c->enter_ns = 1;			/* all of them ago */
	c->progress_ns = 20 * YEARS10 - 5 * S;
	c->wait_sum_ns = UINT64_MAX;		/* a saturated sum */
	c->gap_sum_ns = UINT64_MAX;
	fr[0].comm[1].enter_ns = 0;
	pl_err_clear(&err);
	rv = sum_encode(&b, &fh, fr, fi, 3, &err);
	ok(rv == 0, "encode: a hostile record's texts, ages and sums do not fail it (%s)", err.text);
	rv = rv == 0 ? sum_decode(b.s, b.len, 30 * YEARS10, &h, &r, &in, &n, &err) : -1;
	ok(rv == 0 && !strcmp(r[0].comm[0].name, "t?p?") && strlen(r[0].comm[1].name) == 47 &&
	   !strcmp(in[0].nic, "mlx?"), "non-printable bytes go as '?', a name without NUL is cut "
	   "to 47 bytes (%s)", err.text);
	ok(rv == 0 && r[0].comm[0].enter_ns == 29 * YEARS10 &&
	   r[0].comm[0].progress_ns == 30 * YEARS10 - 5 * S,
	   "an age of 200 years goes as ten (the bound); 5 s stays 5 s");
	ok(rv == 0 && r[0].comm[0].wait_sum_ns == 32 * YEARS10 && r[0].comm[0].gap_sum_ns == 32 * YEARS10,
	   "a saturated wait sum goes as nwait * ten years");
	free(r);
	free(in);
	buf_free(&b);
}

/* encode_fails: the fixture changed by what, refused with want; out keeps
 * what it held. */
static void
encode_fails(size_t n, const char *want, const char *what)
{
	struct buf b = BUF_INIT;
	pl_err_t err;
	int rv;

	buf_adds(&b, "kept");
	pl_err_clear(&err);
	rv = sum_encode(&b, &fh, fr, fi, n, &err);
	if (!ok(rv == -1 && b.len == 4 && !strcmp(b.s, "kept") && strstr(err.text, want),
		"encode refuses %s: %s", what, err.text))
		diag("  rv %d, len %zu, want '%s'", rv, b.len, want);
	buf_free(&b);
}

static void
t_encode_refuses(void)
{
	static struct detect_rank big[SUM_MAX_RANKS + 1];
	static struct sum_rank_info bigi[SUM_MAX_RANKS + 1];
	struct buf b = BUF_INIT;
	pl_err_t err;
	size_t i;

	fixture();
	fh.world = 0;
	encode_fails(3, "node summary from node2: world 0: want 1", "a bad header");
	fixture();
	fh.node[0] = '\0';
	encode_fails(3, "node summary: node: empty", "an empty node name");
	fixture();
	fr[2].pid = 0;
	encode_fails(3, "rank entry 2 (rank 7): pid 0: want 1", "a bad rank field, after writing two");
	fixture();
	fr[1].comm[0].flags = 0x10;
	encode_fails(3, "rank entry 1 (rank 5): communicator 0: flags 0x10", "an unknown flag");
	fixture();
	fr[0].comm[0].nwait = 40;
	encode_fails(3, "nwait 40: want at most 32", "nwait beyond the ring");
	fixture();
	fr[0].ncomm = PLW_MAX_COMMS + 1;
	encode_fails(3, "rank entry 0 (rank 4): ncomm 33: want at most 32", "too many communicators");
	fixture();
	fr[1].step_id = 4;
	encode_fails(3, "rank entry 1 (rank 5) is of job 4242.4, want the summary's 4242.3",
		     "a rank of another step");
	fixture();
	fr[2].rank = 4;
	encode_fails(3, "rank entries 0 and 2 both hold rank 4", "a rank twice");
	fixture();
	fi[0].co[4] = 2;
	encode_fails(3, "coordinate pp = 2: want 0 to 1", "a coordinate out of the layout");
	/* 1025 ranks; 1024 ranks of 32 communicators of 55 bytes each, their
	 * process trees of 19 and the communicators' rest of 21: 168 + 128 *
	 * 20 + 896 * 21 (ranks from 128 take a second byte) + 32768 * 55 +
	 * 1024 * 19 + 32768 * 21 = 2,531,368 bytes. */
	memset(&fh, 0, sizeof(fh));
	fixture();
	fh.world = 2048;
	fh.size[0] = 8;
	fh.size[1] = 1;
	fh.size[2] = 2;
	fh.size[3] = 128;
	fh.size[4] = 2;
	for (i = 0; i <= SUM_MAX_RANKS; i++) {
		int k;

		big[i] = fr[0];
		big[i].rank = (int64_t)i;
		big[i].ncomm = PLW_MAX_COMMS;
		for (k = 0; k < PLW_MAX_COMMS; k++)
			big[i].comm[k] = fr[0].comm[0];
		bigi[i] = fi[0];
	}
	pl_err_clear(&err);
	buf_adds(&b, "kept");
	ok(sum_encode(&b, &fh, big, bigi, SUM_MAX_RANKS + 1, &err) == -1 &&
	   strstr(err.text, "1025 ranks: want at most 1024") && b.len == 4,
	   "encode refuses 1025 ranks: %s", err.text);
	pl_err_clear(&err);
	ok(sum_encode(&b, &fh, big, bigi, SUM_MAX_RANKS, &err) == -1 &&
	   strstr(err.text, "1024 ranks take 2564136 bytes: want at most 1048576") &&
	   b.len == 4, "encode refuses a summary over 1 MiB: %s", err.text);
	buf_free(&b);
}

/* No ranks: a header alone, and back. */
static void
t_empty(void)
{
	struct buf b = BUF_INIT;
	struct sum_header h;
	struct detect_rank *r = (void *)1;
	struct sum_rank_info *in = (void *)1;
	size_t n = 99;
	pl_err_t err;
	int rv;

	fixture();
	pl_err_clear(&err);
	rv = sum_encode(&b, &fh, NULL, NULL, 0, &err);
	ok(rv == 0 && b.len == SUM_HEADER_BYTES,
	   "no ranks: the 168-byte header alone (%s)", err.text);
	seed("no-ranks", b.s, b.len);
	rv = sum_decode(b.s, b.len, RECV, &h, &r, &in, &n, &err);
	ok(rv == 0 && n == 0 && !r && !in && !strcmp(h.node, "node2"),
	   "no ranks: decoded, n 0, no arrays (%s)", err.text);
	buf_free(&b);
}

/* Bytes p refused by sum_decode with a message containing want. */
static void
like_err(const uint8_t *p, size_t len, const char *want, const char *what)
{
	struct detect_rank *r = NULL;
	struct sum_rank_info *in = NULL;
	struct sum_header h;
	size_t n = 0;
	pl_err_t err;

	pl_err_clear(&err);
	if (sum_decode(p, len, RECV, &h, &r, &in, &n, &err) != -1) {
		ok(0, "%s: refused", what);
		free(r);
		free(in);
		return;
	}
	like(err.text, want, "%s: %s", what, err.text);
}

/*
 * The p2p part: rank 4's tp communicator with a send to its rank 1 in
 * flight goes with flags 0x19 and the peer, and comes back; the peer out
 * of range or a send without p2p are refused (a peer without the flag is
 * a patch above).
 */
static void
t_p2p(void)
{
	struct detect_rank *r = NULL;
	struct sum_rank_info *in = NULL;
	struct sum_header h;
	struct buf b = BUF_INIT;
	pl_err_t err;
	size_t n = 0;
	uint8_t *p, *q;
	int rv;

	fixture();
	fr[0].comm[0].flags |= DETECT_P2P | DETECT_SEND;
	fr[0].comm[0].p2p_peer = 1;
	pl_err_clear(&err);
	rv = sum_encode(&b, &fh, fr, fi, 3, &err);
	p = (uint8_t *)b.s;
	q = p + SUM_HEADER_BYTES;
	seed("p2p-in-flight", b.s, b.len);
	ok(rv == 0 && b.len == FIX_LEN && q[33] == (DETECT_GPU | DETECT_P2P | DETECT_SEND) &&
	   q[35] == 1 && q[89] == 12,
	   "a p2p in flight: the flags 0x19 and the peer 1 in the communicator (%s)", err.text);
	rv = rv ? rv : sum_decode(p, b.len, RECV, &h, &r, &in, &n, &err);
	ok(rv == 0 && n == 3 && r[0].comm[0].p2p_peer == 1 && r[0].comm[0].nwait == 32 &&
	   r[0].comm[0].flags == (DETECT_GPU | DETECT_P2P | DETECT_SEND) &&
	   r[0].comm[1].p2p_peer == -1 && r[1].comm[0].p2p_peer == -1,
	   "decoded: the p2p peer and flags back, -1 where none (%s)", err.text);
	free(r);
	free(in);
	if (b.len != FIX_LEN) {
		ok(0, "no encoding");
		ok(0, "no encoding");
		buf_free(&b);
		return;
	}
	q[35] = 2;
	like_err(p, b.len, "communicator 0: p2p_peer 2: want 0 to 1 (nranks 2)",
		 "the p2p peer out of the communicator refused");
	q[35] = 0;
	q[33] = DETECT_GPU | DETECT_SEND;
	like_err(p, b.len, "flags 0x11: 0x10 (send) only with 0x8 (p2p)",
		 "a send without p2p refused");
	buf_free(&b);
}

/* The bytes after the last communicator of v4_make's summary: its three
 * process trees, not sampled (10 bytes each), and its four communicators'
 * rest (22, 22, 8 and 8 bytes). */
#define V4_TAIL	90

/* A summary of the fixture (the fields version 4 brought), whose last
 * communicator (rank 7's only one, put there) has nnodes and an AllGather
 * run: its varints end the ranks, V4_TAIL bytes before the summary's end.
 * Caller frees. */
static uint8_t *
v4_make(size_t *len)
{
	struct detect_comm *c;
	struct buf b = BUF_INIT;
	pl_err_t err;
	uint8_t *p;

	fixture();
	memset(&fr[0].proc, 0, sizeof(fr[0].proc));
	memset(&fr[2].proc, 0, sizeof(fr[2].proc));
	fr[0].comm[1].nnodes = 1;
	c = comm(&fr[2], UINT64_C(0xeeee000000000003), "dp", 1, 4, DETECT_GPU);
	c->nnodes = 2;
	c->ag_peak_bytes = 300;
	c->ag_peak_calls = 3;
	c->ag_peak_top = 100;
	c->p2p_wait_ns = 5;
	c->p2p_span_ns = 9;
	if (sum_encode(&b, &fh, fr, fi, 3, &err) < 0) {
		diag("v4_make: %s", err.text);
		buf_free(&b);
		return NULL;
	}
	p = malloc(b.len);
	memcpy(p, b.s, b.len);
	*len = b.len;
	buf_free(&b);
	return p;
}

/* The v4 fixture with the n bytes `back` bytes before its end replaced
 * by rep: refused. */
static void
v4_refused(const char *rep, size_t n, size_t back, const char *want, const char *what)
{
	struct detect_rank *r = NULL;
	struct sum_rank_info *in = NULL;
	struct sum_header h;
	size_t len, k = 0;
	uint8_t *p = v4_make(&len);
	pl_err_t err;
	int rv;

	if (!p) {
		ok(0, "version 4, %s: no fixture", what);
		return;
	}
	memcpy(p + len - V4_TAIL - back, rep, n);
	pl_err_clear(&err);
	rv = sum_decode(p, len, RECV, &h, &r, &in, &k, &err);
	free(p);
	free(r);
	free(in);
	if (rv != -1) {
		ok(0, "version 4, %s: refused (rv %d)", what, rv);
		return;
	}
	like(err.text, want, "version 4, %s: refused: %s", what, err.text);
}

static void
t_v4(void)
{
	struct detect_rank *r = NULL;
	struct sum_rank_info *in = NULL;
	struct sum_header h;
	struct buf b = BUF_INIT;
	size_t len, n = 0;
	uint8_t *p = v4_make(&len);
	const struct detect_comm *c;
	pl_err_t err;
	int rv;

	pl_err_clear(&err);
	rv = p ? sum_decode(p, len, RECV, &h, &r, &in, &n, &err) : -1;
	ok(rv == 0 && le_get(p + 8, 4) == SUM_VERSION && n == 3 &&
	   memcmp(p + len - V4_TAIL - 7, "\x02\xac\x02\x03\x64\x05\x09", 7) == 0,
	   "sum_encode writes the last communicator ending in nnodes 2, run 300, "
	   "3 calls, top 100, p2p wait 5 in a span of 9 (%s)", err.text);
	c = rv == 0 ? &r[2].comm[0] : NULL;
	ok(c && c->nnodes == 2 && c->ag_peak_bytes == 300 && c->ag_peak_calls == 3 &&
	   c->ag_peak_top == 100 && r[0].comm[1].nnodes == 1 && r[0].comm[0].nnodes == 0 &&
	   c->p2p_wait_ns == 5 && c->p2p_span_ns == 9,
	   "version 4 decodes nnodes, the AllGather run and the p2p time");
	free(p);
	free(r);
	free(in);
	/* What the record gave that cannot be true goes out as unknown. */
	fr[2].comm[0].nnodes = 5;
	fr[2].comm[0].ag_peak_top = 7;
	fr[2].comm[0].p2p_wait_ns = 10;
	r = NULL;
	in = NULL;
	rv = sum_encode(&b, &fh, fr, fi, 3, &err);
	rv = rv == 0 ? sum_decode(b.s, b.len, RECV, &h, &r, &in, &n, &err) : -1;
	ok(rv == 0 && r[2].comm[0].nnodes == 0 && r[2].comm[0].ag_peak_bytes == 0 &&
	   r[2].comm[0].ag_peak_calls == 0 && r[2].comm[0].ag_peak_top == 0 &&
	   r[2].comm[0].p2p_wait_ns == 0 && r[2].comm[0].p2p_span_ns == 0,
	   "nnodes above nranks, a run whose largest is below its mean, a p2p wait above its "
	   "span: sent as 0 (%s)",
	   err.text);
	free(r);
	free(in);
	buf_free(&b);
	v4_refused("\x05", 1, 7, "nnodes 5: want 0 (unknown) to 4 (nranks)",
		   "nnodes above nranks");
	v4_refused("\x03\x05", 2, 4, "AllGather run of 300 bytes in 3 calls, the largest 5",
		   "the largest below the mean");
	v4_refused("\x00\x64", 2, 4, "AllGather run of 300 bytes in 0 calls", "bytes in no call");
	v4_refused("\x05\x01\xac\x02", 4, 6, "AllGather run of 5 bytes in 1 calls, the largest 300",
		   "the largest above the run");
	v4_refused("\x0a", 1, 2, "p2p_wait_ns 10 in p2p_span_ns 9: want the wait at most the span",
		   "a p2p wait above its span");
	/* (the reader runs on into the process trees: their minimum is kept
	 * back, the signatures are longer than theirs) */
	v4_refused("\x80", 1, 1, "p2p_span_ns: a varint of 2 bytes with a zero last byte",
		   "a varint cut");
}

/*
 * The size of 8 ranks x 6 communicators: each rank as rank 4 of the
 * fixture (20 bytes, and 19 of its process tree) with six copies of its
 * tp communicator (55 bytes, and 22 of its rest): 168 + 8 * (20 + 19 + 6 *
 * (55 + 22)) = 4176 bytes.
 */
static void
t_size(void)
{
	static struct detect_rank r[8];
	static struct sum_rank_info in[8];
	struct buf b = BUF_INIT;
	pl_err_t err;
	size_t i;
	int k;

	fixture();
	fh.world = 64;
	fh.size[0] = 8;
	fh.size[1] = 1;
	fh.size[2] = 2;
	fh.size[3] = 4;
	fh.size[4] = 2;
	for (i = 0; i < 8; i++) {
		r[i] = fr[0];
		r[i].rank = (int64_t)(8 + i);
		r[i].ncomm = 6;
		for (k = 0; k < 6; k++)
			r[i].comm[k] = fr[0].comm[0];
		in[i] = fi[0];
		in[i].gpu = (int32_t)i;
	}
	pl_err_clear(&err);
	ok(sum_encode(&b, &fh, r, in, 8, &err) == 0 && b.len == 4176,
	   "8 ranks x 6 communicators: 4176 bytes (%zu; %s)", b.len, err.text);
	diag("encoded size, 8 ranks x 6 communicators: %zu bytes", b.len);
	seed("eight-ranks-six-comms", b.s, b.len);
	buf_free(&b);
}

/*
 * sum_carry against the wire: the fixture as it stands (fh, fr, fi, n
 * ranks) through sum_carry, and through sum_encode then sum_decode_in,
 * both at recv, give the same header, ranks and naming to the byte, or the
 * same refusal.
 */
static void
carry_same(size_t n, uint64_t recv, const char *what)
{
	struct sum_space a = { NULL, NULL, 0 }, b = { NULL, NULL, 0 };
	struct buf w = BUF_INIT;
	struct sum_header h;
	size_t na = 0, nb = 0, i;
	pl_err_t ea, eb;
	const char *d = NULL;
	int ra, rb;

	pl_err_clear(&ea);
	pl_err_clear(&eb);
	ra = sum_carry(&fh, fr, fi, n, recv, &a, &na, &ea);
	rb = sum_encode(&w, &fh, fr, fi, n, &eb);
	if (rb == 0)
		rb = sum_decode_in(w.s, w.len, recv, &h, &b, &nb, &eb);
	if (ra != rb || na != nb)
		d = "the outcome";
	else if (ra < 0 && strcmp(ea.text, eb.text) != 0)
		d = "the refusal";
	else if (ra == 0 && memcmp(&h, &fh, sizeof(h)) != 0)
		d = "the header";
	for (i = 0; !d && ra == 0 && i < na; i++) {
		const struct detect_rank *x = &a.ranks[i], *y = &b.ranks[i];

		if ((d = rank_diff(x, y)) || (d = info_diff(&a.info[i], &b.info[i])))
			break;
		if (memcmp(x, y, offsetof(struct detect_rank, comm)) != 0 ||
		    memcmp(x->comm, y->comm, x->ncomm * sizeof(x->comm[0])) != 0 ||
		    memcmp(&a.info[i], &b.info[i], sizeof(a.info[i])) != 0)
			d = "a byte of a rank entry";
	}
	if (!ok(!d, "sum_carry as the wire: %s (%s%s)", what, ra < 0 ? "refused: " : "",
		ra < 0 ? ea.text : "the same ranks"))
		diag("  %s differs: carry %d (%s), wire %d (%s)", d, ra, ea.text, rb, eb.text);
	sum_space_free(&a);
	sum_space_free(&b);
	buf_free(&w);
}

static void
t_carry(void)
{
	static struct detect_rank big[SUM_MAX_RANKS];
	static struct sum_rank_info bigi[SUM_MAX_RANKS];
	struct detect_rank save[3];
	struct sum_rank_info savei[3];
	size_t i;
	int k;

	fixture();
	carry_same(3, RECV, "the fixture");
	carry_same(3, 5 * S, "a receiver whose clock is behind the ages");
	carry_same(0, RECV, "no ranks");
	fixture();
	memcpy(fr[0].comm[0].name, "t\x01p\n", 5);
	memset(fr[0].comm[1].name, 'x', sizeof(fr[0].comm[1].name));
	memset(fr[0].comm[1].func, 'y', sizeof(fr[0].comm[1].func));
	memcpy(fi[0].nic, "mlx\x05", 5);
	fh.sender_now_ns = 20 * YEARS10;
	fr[0].comm[0].enter_ns = 1;
	fr[0].comm[0].progress_ns = 20 * YEARS10 - 5 * S;
	fr[0].comm[0].wait_sum_ns = UINT64_MAX;
	fr[0].comm[0].gap_sum_ns = UINT64_MAX;
	fr[1].exit_ns = 1;
	carry_same(3, 30 * YEARS10, "a hostile record's texts, ages and sums");
	fixture();
	fr[0].comm[0].flags |= DETECT_P2P | DETECT_SEND;
	fr[0].comm[0].p2p_peer = 1;
	fr[0].comm[1].p2p_peer = 3;	/* no p2p flag: the wire says none */
	carry_same(3, RECV, "a p2p in flight");
	fixture();
	fr[0].comm[0].nnodes = 5;
	fr[0].comm[0].ag_peak_bytes = 10;
	fr[0].comm[0].ag_peak_calls = 3;
	fr[0].comm[0].ag_peak_top = 1;
	fr[0].comm[1].p2p_wait_ns = 9;
	fr[0].comm[1].p2p_span_ns = 5;
	carry_same(3, RECV, "nnodes, an AllGather run and a p2p wait out of range");
	fixture();
	fh.world = 0;
	carry_same(3, RECV, "a bad header");
	fixture();
	fr[2].pid = 0;
	carry_same(3, RECV, "a bad rank field");
	fixture();
	fr[1].comm[0].flags = 0x10;
	carry_same(3, RECV, "an unknown flag");
	fixture();
	fr[0].comm[0].nwait = 40;
	carry_same(3, RECV, "nwait beyond the ring");
	fixture();
	fr[1].step_id = 4;
	carry_same(3, RECV, "a rank of another step");
	fixture();
	fr[2].rank = 4;
	carry_same(3, RECV, "a rank twice");
	fixture();
	fi[0].co[4] = 2;
	carry_same(3, RECV, "a coordinate out of the layout");
	fixture();
	fr[0].exit_status = -1;
	carry_same(3, RECV, "a negative exit status");
	/* The 1 MiB bound, counted without writing. */
	fixture();
	memcpy(save, fr, sizeof(save));
	memcpy(savei, fi, sizeof(savei));
	fh.world = 2048;
	fh.size[0] = 8;
	fh.size[1] = 1;
	fh.size[2] = 2;
	fh.size[3] = 128;
	fh.size[4] = 2;
	for (i = 0; i < SUM_MAX_RANKS; i++) {
		big[i] = save[0];
		big[i].rank = (int64_t)i;
		big[i].ncomm = PLW_MAX_COMMS;
		for (k = 0; k < PLW_MAX_COMMS; k++)
			big[i].comm[k] = save[0].comm[0];
		bigi[i] = savei[0];
	}
	{
		struct sum_space a = { NULL, NULL, 0 };
		size_t na = 9;
		pl_err_t e;

		pl_err_clear(&e);
		ok(sum_carry(&fh, big, bigi, SUM_MAX_RANKS, RECV, &a, &na, &e) == -1 && na == 0 &&
		   strstr(e.text, "1024 ranks take 2564136 bytes: want at most 1048576"),
		   "sum_carry refuses what would be over 1 MiB on the wire, as encode: %s", e.text);
		pl_err_clear(&e);
		ok(sum_carry(&fh, big, bigi, 384, RECV, &a, &na, &e) == 0 && na == 384,
		   "and takes 384 such ranks (%s)", e.text);
		sum_space_free(&a);
	}
}

int
main(void)
{
	uint8_t *good;
	size_t len;

	plan(5 + 3 + (int)NPATCH + 4 + 3 + 2 + 4 + 11 + 2 + 4 + 1 + 9 + 16);
	t_roundtrip();
	t_bytes();
	good = encoded(&len);
	if (!good)
		return 1;
	t_patches(good, len);
	t_space(good, len);
	t_truncated(good, len);
	t_too_large(good, len);
	free(good);
	t_encode_cleans();
	t_encode_refuses();
	t_empty();
	t_p2p();
	t_size();
	t_v4();
	t_carry();
	return done_testing();
}
