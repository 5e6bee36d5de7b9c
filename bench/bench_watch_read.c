/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What one of layoutd's watch samples costs in its own code, without the
 * daemon: for each of 8 records reader_read() (path walk, checks, mapping,
 * slot copies through the sequence counters) and detect_summarize(), then
 * one detect_run() over the 8 summaries.  The baseline, in the same run,
 * is the irreducible work of a sampler that reads the same files anew each
 * time: open, pread of all 57,600 bytes, close; a second one keeps the
 * descriptors open and only preads.
 *
 * The records are written here with 2, 4 and 6 communicators per rank
 * (world, tp, pp, dp, and Megatron's model-parallel and tp-dp groups of
 * tp2,pp2,dp2), each with a full wait ring, healthy (no verdict), so the
 * issue's 8 ranks x 6 communicators is measured exactly; nccl_driver can
 * make only 4 at 8 ranks (bench_watch.py runs the real daemon on those).
 * Timed with the thread's CPU clock, best of RUNS batches.  Both sides
 * must do the same work: every read accepted with every slot, the summary
 * holding the communicators written, no verdict, every pread whole and the
 * bytes the file's.  Target: a sample of 6 communicators under 1 % of one
 * core at 10 Hz (1000 us); exits non-zero on a miss.  Needs no root.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "detect.h"
#include "reader.h"
#include "record.h"

#define RANKS 8
#define TP 2
#define PP 2
#define DP 2
#define NCOMM_MAX 6
#define RUNS 5
#define BATCH 400		/* samples per timed batch */
#define COLLS 1000		/* collectives every communicator entered */
#define INTERVAL_MS 100
#define BUDGET 0.01		/* of one core */

/* A group: the ranks that share the coordinates of the axes not in it
 * (axes: bit 0 tp, 1 pp, 2 dp). */
static const struct {
	const char *name;
	unsigned axes;
} groups[NCOMM_MAX] = {
	{ "world", 7 }, { "tp", 1 }, { "pp", 2 }, { "dp", 4 }, { "mp", 3 },
	{ "tp-dp", 5 }
};

static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Megatron order: tp fastest, then dp, then pp. */
static void
coords(int r, int c[3])
{
	c[0] = r % TP;
	c[2] = (r / TP) % DP;
	c[1] = r / (TP * DP);
}

/* rank r's place in group g, the group's size and a hash of its members
 * (the same on every member, as NCCL's commHash is). */
static void
group_of(int g, int r, int *rank, int *nranks, uint64_t *hash)
{
	int cr[3], cq[3], q, a, same;

	coords(r, cr);
	*rank = *nranks = 0;
	*hash = UINT64_C(0xcbf29ce484222325) ^ (uint64_t)g;
	for (q = 0; q < RANKS; q++) {
		coords(q, cq);
		for (same = 1, a = 0; a < 3; a++)
			if (!(groups[g].axes & (1u << a)) && cq[a] != cr[a])
				same = 0;
		if (!same)
			continue;
		if (q == r)
			*rank = *nranks;
		(*nranks)++;
		*hash = (*hash ^ (uint64_t)(q + 1)) * UINT64_C(0x100000001b3);
	}
}

/* A healthy record of rank r with ncomm communicators, each having entered
 * and completed COLLS all-reduces on 2 channels. */
static void
fill(struct plw_record *rec, int r, int ncomm, uint64_t now)
{
	int g, k, crank, cn;

	memset(rec, 0, sizeof(*rec));
	rec->hdr.version = PLW_VERSION;
	rec->hdr.header_size = sizeof(struct plw_header);
	rec->hdr.slot_size = sizeof(struct plw_slot);
	rec->hdr.nslots = PLW_MAX_COMMS;
	rec->hdr.record_size = sizeof(struct plw_record);
	rec->hdr.job_id = 9200;
	rec->hdr.rank = r;
	rec->hdr.pid = 100000 + r;
	rec->hdr.start_mono_ns = now - UINT64_C(60000000000);
	rec->hdr.state = PLW_STATE_ACTIVE;
	rec->hdr.event_mask = 0x46;
	rec->hdr.nccl_abi = 5;
	rec->hdr.slots_taken = (uint64_t)ncomm;
	for (g = 0; g < ncomm; g++) {
		struct plw_slot *s = &rec->slot[g];

		group_of(g, r, &crank, &cn, &s->ident.comm_hash);
		s->ident.seq = 2;
		s->ident.rank = crank;
		s->ident.nranks = cn;
		snprintf(s->ident.name.c, sizeof(s->ident.name.c), "%s", groups[g].name);
		s->ident.nnodes = 1;
		s->ident.state = PLW_SLOT_ACTIVE;
		s->ident.init_ns = rec->hdr.start_mono_ns;
		s->launch.seq = 2 * COLLS;
		s->launch.colls = COLLS;
		s->launch.seq_number = COLLS - 1;
		s->launch.count = 1 << 20;
		s->launch.enqueue_ns = now - 2000000;
		s->launch.root = -1;
		s->launch.nchannels = 2;
		snprintf(s->launch.func.c, sizeof(s->launch.func.c), "AllReduce");
		snprintf(s->launch.datatype.c, sizeof(s->launch.datatype.c), "ncclBfloat16");
		snprintf(s->launch.algo.c, sizeof(s->launch.algo.c), "RING");
		snprintf(s->launch.proto.c, sizeof(s->launch.proto.c), "SIMPLE");
		s->launch.p2p_peer = -1;
		s->gpu.seq = 2 * COLLS;
		s->gpu.ch_started = s->gpu.ch_stopped = 2 * COLLS;
		s->gpu.progress_ns = now - 1000000;
		s->gpu.start_seq_number = s->gpu.done_seq_number = COLLS - 1;
		s->gpu.done = COLLS;
		s->gpu.done_enqueue_ns = s->launch.enqueue_ns;
		s->gpu.done_ns = s->gpu.progress_ns;
		snprintf(s->gpu.done_func.c, sizeof(s->gpu.done_func.c), "AllReduce");
		for (k = 0; k < PLW_RING; k++) {
			uint64_t n = COLLS - PLW_RING + (uint64_t)k;
			struct plw_wait *w = &s->gpu.ring[n % PLW_RING];

			w->seq_number = n;
			w->enqueue_ns = now - (COLLS - n) * 8000000;
			w->wait_ns = 900000;
			w->gap_ns = 7000000;
		}
	}
	rec->hdr.magic = PLW_MAGIC;
}

static int
write_all(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, p, n);
	if (close(fd) < 0 || w != (ssize_t)n)
		return -1;
	return 0;
}

struct side {
	double us;		/* best per-sample time */
	uint64_t work;		/* what was read, to compare with the want */
};

static struct plw_record image[RANKS];
static char paths[RANKS][4096];
static struct reader_snap snap;
static struct detect_rank sum[RANKS];
static struct detect_verdict verd[64];
static unsigned char buf[sizeof(struct plw_record)];

/* What layoutd does per sample; work: communicators summarized. */
static int
sample_reader(uint64_t *work, size_t *nverd)
{
	struct reader_expect x;
	pl_err_t err;
	int r;

	for (r = 0; r < RANKS; r++) {
		reader_expect_uid(&x, getuid());
		x.job_id = 9200;
		x.step_id = 0;
		x.rank = r;
		x.pid = 100000 + r;
		pl_err_clear(&err);
		if (reader_read(paths[r], &x, &snap, &err) != 0) {
			fprintf(stderr, "bench_watch_read: %s\n", err.text);
			return -1;
		}
		detect_summarize(&snap, &sum[r]);
		*work += sum[r].ncomm;
	}
	*nverd += detect_run(sum, RANKS, mono_ns(), UINT64_C(60000000000), verd, 64);
	return 0;
}

/* The floor: open, read the whole file, close (fds NULL), or pread on the
 * descriptors held in fds.  work: bytes read. */
static int
sample_pread(const int *fds, uint64_t *work)
{
	int r, fd;
	ssize_t n;

	for (r = 0; r < RANKS; r++) {
		fd = fds ? fds[r] : open(paths[r], O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "bench_watch_read: %s: %s\n", paths[r], strerror(errno));
			return -1;
		}
		n = pread(fd, buf, sizeof(buf), 0);
		if (!fds)
			close(fd);
		if (n != (ssize_t)sizeof(buf)) {
			fprintf(stderr, "bench_watch_read: %s: read %zd of %zu bytes\n", paths[r], n,
				sizeof(buf));
			return -1;
		}
		*work += (uint64_t)n;
	}
	return 0;
}

/* Best of RUNS batches of each side, alternating. */
static int
measure(const int *fds, struct side *rd, struct side *op, struct side *pr, size_t *nverd)
{
	uint64_t t;
	int run, i;

	rd->us = op->us = pr->us = 1e30;
	rd->work = op->work = pr->work = 0;
	for (run = 0; run < RUNS; run++) {
		double us;

		t = cpu_ns();
		for (i = 0; i < BATCH; i++)
			if (sample_reader(&rd->work, nverd) < 0)
				return -1;
		us = (double)(cpu_ns() - t) / BATCH / 1e3;
		if (us < rd->us)
			rd->us = us;
		t = cpu_ns();
		for (i = 0; i < BATCH; i++)
			if (sample_pread(NULL, &op->work) < 0)
				return -1;
		us = (double)(cpu_ns() - t) / BATCH / 1e3;
		if (us < op->us)
			op->us = us;
		t = cpu_ns();
		for (i = 0; i < BATCH; i++)
			if (sample_pread(fds, &pr->work) < 0)
				return -1;
		us = (double)(cpu_ns() - t) / BATCH / 1e3;
		if (us < pr->us)
			pr->us = us;
	}
	return 0;
}

int
main(void)
{
	static const int ncomms[] = { 2, 4, 6 };
	const char *tmp = getenv("TMPDIR");
	char dir[1024];
	double at6 = 0;
	int fds[RANKS], fail = 0, i, r;
	const uint64_t samples = (uint64_t)RUNS * BATCH;

	if (snprintf(dir, sizeof(dir), "%s/bench_watch_read-XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
	    (int)sizeof(dir)) {
		fprintf(stderr, "bench_watch_read: TMPDIR=%.64s...: want a directory name shorter "
			"than %zu bytes\n", tmp, sizeof(dir) - 32);
		return 1;
	}
	if (!mkdtemp(dir)) {
		fprintf(stderr, "bench_watch_read: mkdtemp %s: %s\n", dir, strerror(errno));
		return 1;
	}
	printf("watch sample in-process: %d records of %zu bytes, us per sample of all %d "
	       "(thread CPU, best of %d x %d)\n", RANKS, sizeof(struct plw_record), RANKS, RUNS,
	       BATCH);
	printf("%-6s %10s %12s %12s %10s %10s %10s\n", "comms", "reader", "open+pread", "pread",
	       "x open", "x pread", "core_%");
	for (i = 0; i < 3; i++) {
		int n = ncomms[i];
		struct side rd, op, pr;
		size_t nverd = 0;
		uint64_t now = mono_ns();

		for (r = 0; r < RANKS; r++) {
			snprintf(paths[r], sizeof(paths[r]), "%s/plw-9200.0.%d.%d", dir, r, 100000 + r);
			fill(&image[r], r, n, now);
			if (write_all(paths[r], &image[r], sizeof(image[r])) < 0) {
				fprintf(stderr, "bench_watch_read: %s: %s\n", paths[r],
					strerror(errno));
				fail = 1;
				goto out;
			}
		}
		for (r = 0; r < RANKS; r++)
			fds[r] = open(paths[r], O_RDONLY | O_CLOEXEC);
		if (measure(fds, &rd, &op, &pr, &nverd) < 0) {
			fail = 1;
			goto out;
		}
		for (r = 0; r < RANKS; r++) {
			/* the floor read the file's bytes */
			if (pread(fds[r], buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) ||
			    memcmp(buf, &image[r], sizeof(buf)) != 0) {
				fprintf(stderr, "bench_watch_read: %s: the bytes read are not "
					"the record written\n", paths[r]);
				fail = 1;
			}
			close(fds[r]);
		}
		if (rd.work != samples * RANKS * (uint64_t)n || nverd != 0 ||
		    op.work != samples * RANKS * sizeof(buf) || pr.work != op.work) {
			fprintf(stderr, "bench_watch_read: %d comms: the reader summarized %" PRIu64
				" communicators (want %" PRIu64 ") with %zu verdicts (want 0); "
				"the preads read %" PRIu64 " and %" PRIu64 " bytes (want %" PRIu64 ")\n",
				n, rd.work, samples * RANKS * (uint64_t)n, nverd, op.work, pr.work,
				samples * RANKS * sizeof(buf));
			fail = 1;
		}
		printf("%-6d %10.1f %12.1f %12.1f %10.2f %10.2f %10.4f\n", n, rd.us, op.us, pr.us,
		       rd.us / op.us, rd.us / pr.us, rd.us * 1e-6 * (1000.0 / INTERVAL_MS) * 100);
		at6 = rd.us;
	}
	if (at6 * 1e-6 * (1000.0 / INTERVAL_MS) >= BUDGET) {
		fprintf(stderr, "bench_watch_read: a sample of %d ranks x 6 communicators costs "
			"%.1f us: %.3f %% of a core at %d Hz (target < %.0f %%)\n", RANKS, at6,
			at6 * 1e-4 * (1000.0 / INTERVAL_MS), 1000 / INTERVAL_MS, BUDGET * 100);
		fail = 1;
	}
out:
	for (r = 0; r < RANKS; r++)
		unlink(paths[r]);
	rmdir(dir);
	return fail;
}
