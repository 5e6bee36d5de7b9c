/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The watch record reader (reader_read): the input becomes a record file of
 * ours, mode 0600, read as layoutd reads a rank's record.  A record it
 * accepts must keep every promise of reader.h, its copies must be the very
 * bytes of the file (no writer races here), and detection on its summary
 * must give bounded, well-formed verdicts.
 */
#include <string.h>
#include <unistd.h>

#include "detect.h"
#include "fuzz.h"
#include "reader.h"

/* A text field: NUL within len, printable ASCII before it. */
static int
text_ok(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && s[i]; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return 0;
	return i < len;
}

static int
all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

static void
check_slot(const struct reader_slot *s, const struct plw_slot *raw, int i)
{
	const struct plw_ident *id = &s->ident;
	const struct plw_launch *l = &s->launch;
	const struct plw_gpu *g = &s->gpu;

	if (s->state == READER_SLOT_FREE) {
		FUZZ_ASSERT(all_zero(id, sizeof(*id)) && all_zero(l, sizeof(*l)) &&
			    all_zero(g, sizeof(*g)), "slot %d: a free slot is all zero", i);
		FUZZ_ASSERT(raw->ident.seq == 0, "slot %d: free only when never written", i);
		return;
	}
	if (s->state == READER_SLOT_BUSY) {
		FUZZ_ASSERT(all_zero(l, sizeof(*l)) && all_zero(g, sizeof(*g)),
			    "slot %d: a busy slot holds no launch or gpu state", i);
		FUZZ_ASSERT((raw->ident.seq | raw->launch.seq | raw->gpu.seq) & 1,
			    "slot %d: busy only when a seq is odd", i);
		return;
	}
	FUZZ_ASSERT(s->state == READER_SLOT_OK, "slot %d: state %d", i, (int)s->state);
	/* Without a writer the copies are the file's bytes. */
	FUZZ_ASSERT(memcmp(id, &raw->ident, sizeof(*id)) == 0, "slot %d: ident copied", i);
	FUZZ_ASSERT(raw->launch.seq == 0 ? all_zero(l, sizeof(*l)) :
		    memcmp(l, &raw->launch, sizeof(*l)) == 0, "slot %d: launch copied", i);
	FUZZ_ASSERT(raw->gpu.seq == 0 ? all_zero(g, sizeof(*g)) :
		    memcmp(g, &raw->gpu, sizeof(*g)) == 0, "slot %d: gpu copied", i);
	FUZZ_ASSERT(!(id->seq & 1) && !(l->seq & 1) && !(g->seq & 1), "slot %d: even seqs", i);
	FUZZ_ASSERT(id->state == PLW_SLOT_ACTIVE || id->state == PLW_SLOT_FINALIZED,
		    "slot %d: ident state %u", i, id->state);
	FUZZ_ASSERT(id->nranks >= 1 && id->nranks <= READER_MAX_RANKS, "slot %d: nranks %d", i,
		    id->nranks);
	FUZZ_ASSERT(id->rank >= 0 && id->rank < id->nranks, "slot %d: rank %d", i, id->rank);
	FUZZ_ASSERT(id->nnodes >= 1 && id->nnodes <= id->nranks, "slot %d: nnodes %d", i,
		    id->nnodes);
	FUZZ_ASSERT(strnlen(id->name.c, sizeof(id->name.c)) < sizeof(id->name.c),
		    "slot %d: the name ends in NUL", i);
	FUZZ_ASSERT(text_ok(l->func.c, sizeof(l->func.c)) &&
		    text_ok(l->datatype.c, sizeof(l->datatype.c)) &&
		    text_ok(l->algo.c, sizeof(l->algo.c)) &&
		    text_ok(l->proto.c, sizeof(l->proto.c)) &&
		    text_ok(g->done_func.c, sizeof(g->done_func.c)), "slot %d: texts", i);
	FUZZ_ASSERT(l->root >= -1 && l->root < id->nranks, "slot %d: root %d", i, l->root);
	FUZZ_ASSERT(!l->p2ps || (l->p2p_peer >= 0 && l->p2p_peer < id->nranks),
		    "slot %d: p2p peer %d", i, l->p2p_peer);
	FUZZ_ASSERT(l->nchannels <= READER_MAX_CHANNELS, "slot %d: %u channels", i, l->nchannels);
	FUZZ_ASSERT(g->ch_stopped <= g->ch_started, "slot %d: stops <= starts", i);
}

static void
check_detect(const struct reader_snap *snap)
{
	static struct detect_rank r[2];
	struct detect_verdict v[2 * PLW_MAX_COMMS + 1];
	const uint64_t nows[] = { 0, 1000000000ULL, UINT64_MAX };
	size_t t, n, k;

	detect_summarize(snap, &r[0]);
	FUZZ_ASSERT(r[0].ncomm == snap->nslots_used, "%u comms from %u slots", r[0].ncomm,
		    snap->nslots_used);
	/* The same rank twice, the second one exited: peers of each other. */
	r[1] = r[0];
	r[1].rank++;
	r[1].exited = 1;
	r[1].exit_status = 1 << 8;
	r[1].exit_known = 1;
	for (t = 0; t < sizeof(nows) / sizeof(nows[0]); t++) {
		n = detect_run(r, 2, nows[t], 5000000000ULL, v, sizeof(v) / sizeof(v[0]));
		/* At most: the exit, then per comm one not-entered and one
		 * gpu-stuck verdict of the live rank. */
		FUZZ_ASSERT(n <= 1 + 2 * (size_t)r[0].ncomm, "%zu verdicts for %u comms", n,
			    r[0].ncomm);
		FUZZ_ASSERT(n >= 1 && v[0].kind == DETECT_EXITED && v[0].rank == r[1].rank,
			    "the exited rank first");
		for (k = 0; k < n; k++)
			FUZZ_ASSERT(strnlen(v[k].comm_name, DETECT_NAME_LEN) < DETECT_NAME_LEN &&
				    strnlen(v[k].func, DETECT_TEXT_LEN) < DETECT_TEXT_LEN,
				    "verdict %zu: texts end in NUL", k);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct reader_snap snap;
	static struct plw_record raw_copy;
	const struct plw_record *raw = &raw_copy;
	struct reader_expect x;
	const char *path = fuzz_file(data, size);
	uint32_t used = 0, busy = 0;
	pl_err_t err;
	int rv, i;

	pl_err_clear(&err);
	reader_expect_uid(&x, geteuid());
	rv = reader_read(path, &x, &snap, &err);
	FUZZ_ASSERT(rv >= -1 && rv <= 1, "rv %d", rv);
	if (rv == -1) {
		FUZZ_ASSERT(pl_err_isset(&err) && strstr(err.text, "pl-fuzz-"),
			    "a refusal names the file: %s", err.text);
		FUZZ_ASSERT(all_zero(&snap, sizeof(snap)), "a refusal leaves the snapshot zero");
		return 0;
	}
	FUZZ_ASSERT(size == sizeof(struct plw_record), "accepted %zu bytes", size);
	/* The file's bytes, aligned for reading them as a record. */
	memcpy(&raw_copy, data, size);
	FUZZ_ASSERT(raw->hdr.magic == PLW_MAGIC, "accepted without the magic");
	FUZZ_ASSERT(memcmp(&snap.hdr, &raw->hdr, sizeof(snap.hdr)) == 0, "the header copied");
	FUZZ_ASSERT(snap.hdr.version == PLW_VERSION && snap.hdr.nslots == PLW_MAX_COMMS &&
		    snap.hdr.slot_size == sizeof(struct plw_slot) &&
		    snap.hdr.header_size == sizeof(struct plw_header) &&
		    snap.hdr.record_size == sizeof(struct plw_record), "version and sizes");
	FUZZ_ASSERT(snap.hdr.state <= PLW_STATE_OFF && snap.hdr.off_reason <= PLW_OFF_FINALIZED &&
		    (snap.hdr.nccl_abi == 0 || snap.hdr.nccl_abi == 4 || snap.hdr.nccl_abi == 5),
		    "state %u, off_reason %u, abi %u", snap.hdr.state, snap.hdr.off_reason,
		    snap.hdr.nccl_abi);
	for (i = 0; i < PLW_MAX_COMMS; i++) {
		check_slot(&snap.slot[i], &raw->slot[i], i);
		used += snap.slot[i].state != READER_SLOT_FREE;
		busy += snap.slot[i].state == READER_SLOT_BUSY;
	}
	FUZZ_ASSERT(used == snap.nslots_used && busy == snap.nbusy, "used %u/%u, busy %u/%u",
		    used, snap.nslots_used, busy, snap.nbusy);
	FUZZ_ASSERT((rv == 1) == (busy > 0) && (rv == 1) == pl_err_isset(&err),
		    "busy reported as such: rv %d, %u busy, '%s'", rv, busy, err.text);
	check_detect(&snap);
	return 0;
}
