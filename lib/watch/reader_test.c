/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record reader against records written by hand (record.h's writer
 * side) in a temporary directory: a good one reads back; every malformed or
 * hostile one is refused naming the file and the reason, or reported busy,
 * never a crash or a hang; a writer racing the reader never shows a torn
 * copy.
 */
/* realpath, aligned_alloc and mkdtemp. */
#define _DEFAULT_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "reader.h"
#include "tap.h"

static char dir[PATH_MAX];
static char path[PATH_MAX + 64];
static struct reader_snap snap;
static pl_err_t err;

/* A good record: job 42 step 3 rank 5, two communicators. */
static void
rec_fill(struct plw_record *r)
{
	struct plw_slot *s;

	memset(r, 0, sizeof(*r));
	r->hdr.version = PLW_VERSION;
	r->hdr.header_size = sizeof(struct plw_header);
	r->hdr.slot_size = sizeof(struct plw_slot);
	r->hdr.nslots = PLW_MAX_COMMS;
	r->hdr.record_size = sizeof(struct plw_record);
	r->hdr.job_id = 42;
	r->hdr.step_id = 3;
	r->hdr.rank = 5;
	r->hdr.pid = 1234;
	r->hdr.start_mono_ns = 1000;
	r->hdr.start_real_ns = 2000;
	r->hdr.state = PLW_STATE_ACTIVE;
	r->hdr.event_mask = (1u << 1) | (1u << 6);
	r->hdr.nccl_abi = 5;

	s = &r->slot[0];
	plw_write_begin(&s->ident.seq);
	s->ident.comm_hash = 0xabcdef;
	plw_st_text(s->ident.name.w, PLW_NAME_LEN, "tp");
	s->ident.rank = 1;
	s->ident.nranks = 4;
	s->ident.nnodes = 1;
	s->ident.state = PLW_SLOT_ACTIVE;
	plw_write_end(&s->ident.seq);
	plw_write_begin(&s->launch.seq);
	s->launch.colls = 7;
	s->launch.seq_number = 6;
	s->launch.enqueue_ns = 5000;
	s->launch.root = -1;
	s->launch.nchannels = 4;
	plw_st_text(s->launch.func.w, PLW_TEXT_LEN, "AllReduce");
	plw_st_text(s->launch.datatype.w, PLW_TEXT_LEN, "ncclFloat32");
	plw_st_text(s->launch.algo.w, PLW_TEXT_LEN, "RING");
	plw_st_text(s->launch.proto.w, PLW_TEXT_LEN, "SIMPLE");
	plw_write_end(&s->launch.seq);
	plw_write_begin(&s->gpu.seq);
	s->gpu.ch_started = 28;
	s->gpu.ch_stopped = 24;
	s->gpu.done = 6;
	plw_st_text(s->gpu.done_func.w, PLW_TEXT_LEN, "AllReduce");
	plw_write_end(&s->gpu.seq);

	/* slot 3: initialised, nothing entered yet. */
	s = &r->slot[3];
	plw_write_begin(&s->ident.seq);
	s->ident.comm_hash = 0x1234;
	s->ident.rank = 0;
	s->ident.nranks = 2;
	s->ident.nnodes = 2;
	s->ident.state = PLW_SLOT_ACTIVE;
	plw_write_end(&s->ident.seq);
	r->hdr.magic = PLW_MAGIC;
}

/* Write size bytes of r as dir/name with mode; returns the path. */
static const char *
put(const char *name, const void *r, size_t size, mode_t mode)
{
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || (size && write(fd, r, size) != (ssize_t)size) || fchmod(fd, mode) < 0) {
		perror(path);
		exit(2);
	}
	close(fd);
	return path;
}

static struct reader_expect me;

/* Read p and check it is refused with a message naming base and want. */
static void
refused(const char *p, const struct reader_expect *x, const char *base, const char *want,
	const char *what)
{
	int rv;

	pl_err_clear(&err);
	rv = reader_read(p, x, &snap, &err);
	is_int(rv, -1, "%s: refused", what);
	if (!ok(strstr(err.text, base) && strstr(err.text, want), "%s: the message names %s and "
		"says '%s'", what, base, want))
		diag("  got '%s'", err.text);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- a writer racing the reader ---------------------------------------- */

static struct plw_record *race_rec;
static volatile int race_stop;

/* Keeps launch.colls, seq_number and enqueue_ns in step (k, k + 1, 3k),
 * with the p2p buckets written between them to widen the window: a torn
 * copy would break the relation. */
static void *
race_writer(void *arg)
{
	struct plw_slot *s = &race_rec->slot[0];
	uint64_t k = 0;
	int i;

	(void)arg;
	while (!__atomic_load_n(&race_stop, __ATOMIC_RELAXED)) {
		k++;
		plw_write_begin(&s->launch.seq);
		plw_st64(&s->launch.colls, k);
		plw_st64(&s->launch.seq_number, k + 1);
		for (i = 0; i < PLW_PEER_BUCKETS; i++)
			plw_st64(&s->launch.sends[i], k);
		plw_st64(&s->launch.enqueue_ns, 3 * k);
		plw_write_end(&s->launch.seq);
		/* A pause now and then, as a hook's writes come a collective
		 * apart: without one a writer on a loaded machine can hold
		 * every read busy, and no consistent copy is ever seen. */
		if (k % 256 == 0) {
			struct timespec ts = { 0, 1000 };

			nanosleep(&ts, NULL);
		}
	}
	return NULL;
}

static void
race_test(void)
{
	pthread_t t;
	long i, torn = 0, busy = 0, good = 0, bad = 0;
	pl_err_t e;

	race_rec = aligned_alloc(64, sizeof(*race_rec));
	if (!race_rec)
		exit(2);
	rec_fill(race_rec);
	race_stop = 0;
	if (pthread_create(&t, NULL, race_writer, NULL) != 0)
		exit(2);
	/* 20000 reads, and on until a consistent copy came (at most 2M). */
	for (i = 0; i < 20000 || (good == 0 && i < 2000000); i++) {
		const struct plw_launch *l = &snap.slot[0].launch;
		int rv;

		pl_err_clear(&e);
		rv = reader_snap_mem(race_rec, sizeof(*race_rec), "race", &me, &snap, &e);
		if (rv < 0 && !bad++)
			diag("refused: %s", e.text);
		if (rv == 1) {
			busy++;
			continue;
		}
		if (rv == 0 && l->colls != 7 && (l->seq_number != l->colls + 1 ||
						  l->enqueue_ns != 3 * l->colls))
			torn++;
		else if (rv == 0)
			good++;
	}
	__atomic_store_n(&race_stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	is_int(torn + bad, 0, "a racing writer: no torn or refused copy in %ld reads (%ld "
	       "good, %ld busy)", i, good, busy);
	ok(good > 0, "a racing writer: consistent copies come through");
	free(race_rec);
}

int
main(void)
{
	struct plw_record *r = aligned_alloc(64, sizeof(*r));
	const char *tmp = getenv("TMPDIR");
	char tpl[PATH_MAX], sub[PATH_MAX + 16], lnk[PATH_MAX + 16];
	struct reader_expect x;
	double t0;
	int rv, root = geteuid() == 0;

	plan(80);
	if (!r)
		return 2;
	snprintf(tpl, sizeof(tpl), "%s/reader_test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	/* The reader follows no symbolic link: work under the real path. */
	if (!mkdtemp(tpl) || !realpath(tpl, dir)) {
		perror(tpl);
		return 2;
	}
	chmod(dir, 0700);
	reader_expect_uid(&me, geteuid());

	/* A good record reads back. */
	rec_fill(r);
	put("good", r, sizeof(*r), 0600);
	pl_err_clear(&err);
	rv = reader_read(path, &me, &snap, &err);
	is_int(rv, 0, "a good record reads (%s)", err.text);
	is_int(snap.hdr.job_id, 42, "job");
	is_int(snap.hdr.step_id, 3, "step");
	is_int(snap.hdr.rank, 5, "rank");
	is_int(snap.nslots_used, 2, "two slots used");
	is_int(snap.nbusy, 0, "none busy");
	is_int(snap.slot[0].state, READER_SLOT_OK, "slot 0 ok");
	is_int(snap.slot[0].ident.comm_hash, 0xabcdef, "slot 0 hash");
	is_str(snap.slot[0].ident.name.c, "tp", "slot 0 name");
	is_int(snap.slot[0].launch.colls, 7, "slot 0 collectives entered");
	is_str(snap.slot[0].launch.func.c, "AllReduce", "slot 0 func");
	is_int(snap.slot[0].gpu.ch_started - snap.slot[0].gpu.ch_stopped, 4,
	       "slot 0 channels in flight");
	is_int(snap.slot[1].state, READER_SLOT_FREE, "slot 1 free");
	is_int(snap.slot[3].state, READER_SLOT_OK, "slot 3 ok");
	is_int(snap.slot[3].launch.colls, 0, "slot 3 never entered: launch zero");

	/* With the ids the registration gave. */
	x = me;
	x.job_id = 42;
	x.step_id = 3;
	x.rank = 5;
	x.pid = 1234;
	is_int(reader_read(path, &x, &snap, NULL), 0, "the registered ids match");
	x.pid = 999;
	refused(path, &x, "/good", "pid 1234, want 999", "another pid");

	/* The file itself. */
	put("short", r, sizeof(*r) - 8, 0600);
	refused(path, &me, "/short", "truncated", "a truncated record");
	put("empty", r, 0, 0600);
	refused(path, &me, "/empty", "0 bytes (truncated)", "an empty file");
	put("huge", r, sizeof(*r), 0600);
	if (truncate(path, 1L << 40) < 0 && truncate(path, 1L << 30) < 0)
		return 2;
	refused(path, &me, "/huge", "too large", "a huge (sparse) file");
	put("mode", r, sizeof(*r), 0644);
	refused(path, &me, "/mode", "mode 0644, want 0600", "mode 0644");
	put("owner", r, sizeof(*r), 0600);
	if (root) {
		if (chown(path, 65534, 65534) < 0)
			return 2;
		refused(path, &me, "/owner", "owned by uid 65534", "another owner");
	} else {
		x = me;
		x.uid = me.uid + 1;
		refused(path, &x, "/owner", "owned by uid", "another owner");
	}

	r->hdr.magic ^= 1;
	put("magic", r, sizeof(*r), 0600);
	refused(path, &me, "/magic", "bad magic", "wrong magic");
	rec_fill(r);
	r->hdr.version = PLW_VERSION + 1;
	put("version", r, sizeof(*r), 0600);
	refused(path, &me, "/version", "version 3, want 2", "a version to come");
	rec_fill(r);
	r->hdr.version = 1;
	put("version1", r, sizeof(*r), 0600);
	refused(path, &me, "/version1", "version 1, want 2", "version 1 (no ring_p2p)");
	rec_fill(r);
	r->hdr.slot_size += 64;
	put("sizes", r, sizeof(*r), 0600);
	refused(path, &me, "/sizes", "header sizes", "wrong slot size");

	/* Not a regular file. */
	snprintf(path, sizeof(path), "%s/good", dir);
	snprintf(lnk, sizeof(lnk), "%s/link", dir);
	if (symlink(path, lnk) < 0)
		return 2;
	refused(lnk, &me, "/link", "symbolic link", "a symlink to a good record");
	snprintf(sub, sizeof(sub), "%s/fifo", dir);
	if (mkfifo(sub, 0600) < 0)
		return 2;
	t0 = now_s();
	refused(sub, &me, "/fifo", "a FIFO", "a FIFO");
	ok(now_s() - t0 < 2.0, "a FIFO: refused without waiting for a writer");
	snprintf(sub, sizeof(sub), "%s/adir", dir);
	if (mkdir(sub, 0700) < 0)
		return 2;
	refused(sub, &me, "/adir", "a directory", "a directory");
	snprintf(sub, sizeof(sub), "%s/nothing", dir);
	refused(sub, &me, "/nothing", "No such file", "a missing file");

	/* The directories on the way. */
	snprintf(sub, sizeof(sub), "%s/dlink/good", dir);
	snprintf(lnk, sizeof(lnk), "%s/dlink", dir);
	if (symlink(dir, lnk) < 0)
		return 2;
	refused(sub, &me, "dlink", "symbolic links are not followed",
		"a symlinked directory on the way");
	snprintf(sub, sizeof(sub), "%s/open", dir);
	if (mkdir(sub, 0700) < 0 || chmod(sub, 0777) < 0)
		return 2;
	snprintf(sub, sizeof(sub), "%s/open/rec", dir);
	snprintf(lnk, sizeof(lnk), "%s/good", dir);
	if (link(lnk, sub) < 0)
		return 2;
	refused(sub, &me, "/open", "writable by others", "a world-writable directory");
	snprintf(sub, sizeof(sub), "%s/open", dir);
	chmod(sub, 01777);
	snprintf(sub, sizeof(sub), "%s/open/rec", dir);
	is_int(reader_read(sub, &me, &snap, &err), 0, "a sticky world-writable directory is fine");
	snprintf(sub, sizeof(sub), "%s/open", dir);
	if (root) {
		if (chown(sub, 65534, 65534) < 0)
			return 2;
		snprintf(sub, sizeof(sub), "%s/open/rec", dir);
		refused(sub, &me, "/open", "owned by uid 65534", "a directory of another user");
	} else {
		x = me;
		x.uid = me.uid + 1;
		snprintf(sub, sizeof(sub), "%s/open/rec", dir);
		refused(sub, &x, "/open", "owned by uid", "a directory of another user");
	}

	/* A stuck writer: seq odd forever. */
	rec_fill(r);
	r->slot[0].launch.seq |= 1;
	r->slot[3].ident.seq |= 1;
	put("stuck", r, sizeof(*r), 0600);
	t0 = now_s();
	pl_err_clear(&err);
	rv = reader_read(path, &me, &snap, &err);
	is_int(rv, 1, "a stuck writer: reported busy");
	ok(now_s() - t0 < 2.0, "a stuck writer: no hang (%.3f s)", now_s() - t0);
	is_int(snap.nbusy, 2, "a stuck writer: two slots busy");
	like(err.text, "busy: a writer stayed inside slots 0,3", "a stuck writer: the message");
	like(err.text, "/stuck", "a stuck writer: the message names the file");
	is_int(snap.slot[0].launch.colls, 0, "a busy slot holds no launch state");

	/* Values out of bounds. */
	rec_fill(r);
	memset(r->slot[0].ident.name.c, 'a', PLW_NAME_LEN);
	put("name", r, sizeof(*r), 0600);
	refused(path, &me, "/name", "slot 0: the communicator name", "a name without NUL");
	rec_fill(r);
	plw_st_text(r->slot[0].ident.name.w, PLW_NAME_LEN, "tp-gr\xc3\xbcppe\n");
	put("utf8", r, sizeof(*r), 0600);
	rv = reader_read(path, &me, &snap, &err);
	ok(rv == 0 && strcmp(snap.slot[0].ident.name.c, "tp-gr\xc3\xbcppe\n") == 0,
	   "a name of any bytes that ends in NUL reads back");
	rec_fill(r);
	plw_st_text(r->slot[0].launch.func.w, PLW_TEXT_LEN, "All\x01Reduce");
	put("func", r, sizeof(*r), 0600);
	refused(path, &me, "/func", "slot 0: func is not printable", "a func with a control byte");
	rec_fill(r);
	r->slot[0].ident.rank = 4;
	put("rank", r, sizeof(*r), 0600);
	refused(path, &me, "/rank", "slot 0: rank 4, want 0 to 3", "a rank >= nranks");
	rec_fill(r);
	r->slot[0].gpu.ch_stopped = 29;
	put("chans", r, sizeof(*r), 0600);
	refused(path, &me, "/chans", "29 channels stopped of 28", "more stops than starts");

	/* Times against the reader's clock (given): the record began at
	 * 1000 ns, now is 100 s on. */
	x = me;
	x.now_ns = 100 * 1000000000ULL;
	rec_fill(r);
	put("times", r, sizeof(*r), 0600);
	pl_err_clear(&err);
	is_int(reader_read(path, &x, &snap, &err), 0, "times in range read (%s)", err.text);
	r->slot[0].launch.enqueue_ns = 1;
	put("boot", r, sizeof(*r), 0600);
	pl_err_clear(&err);
	is_int(reader_read(path, &me, &snap, &err), 0, "without a clock, times are not checked");
	refused(path, &x, "/boot", "slot 0: launch.enqueue_ns is 0.0 s before the record began",
		"an enqueue before the record began (a wait since boot)");
	rec_fill(r);
	r->slot[0].gpu.progress_ns = 105 * 1000000000ULL;
	put("future", r, sizeof(*r), 0600);
	refused(path, &x, "/future", "slot 0: gpu.progress_ns is 4.0 s in the future",
		"a progress time to come");
	rec_fill(r);
	r->slot[0].gpu.ring[3].wait_ns = 200 * 1000000000ULL;
	put("ring", r, sizeof(*r), 0600);
	refused(path, &x, "/ring", "a wait ring entry's wait_ns of 200.0 s is longer than the "
		"record has existed", "a wait longer than the record's life");
	rec_fill(r);
	x.born_ns = 5 * 1000000000ULL;
	put("born", r, sizeof(*r), 0600);
	refused(path, &x, "/born", "it began 5.0 s before its process did",
		"a record older than its process");

	race_test();

	/* Leave nothing behind. */
	snprintf(sub, sizeof(sub), "rm -rf '%s'", dir);
	ok(system(sub) == 0, "the temporary directory is removed");
	free(r);
	return done_testing();
}
