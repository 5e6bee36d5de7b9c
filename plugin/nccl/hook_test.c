/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The NCCL hook driven the way NCCL 2.28.9 drives it: dlopen with
 * RTLD_NOW|RTLD_LOCAL, ncclProfiler_v5 then v4, the per-collective event
 * sequence of the launching thread, KernelCh from another thread; then the
 * record is read back as layoutd would (a read-only mapping, the plw_read_*
 * helpers) and its fields checked against what the test sent.  Each
 * scenario loads the library afresh (its state is per process).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nccl_profiler_abi.h"
#include "record.h"
#include "tap.h"

#define DEFAULT_MASK 0x46	/* Coll | P2p | KernelCh, by hand */

static void *dl;
static const plw_nccl_profiler_v5_t *P5;
static const plw_nccl_profiler_v4_t *P4;

/* ---- a logger like NCCL's ---------------------------------------------- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static int log_n;
static char log_last[1024];

static void __attribute__((format(printf, 5, 6)))
test_log(plw_nccl_log_level_t level, unsigned long flags, const char *file,
    int line, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&log_mu);
	va_start(ap, fmt);
	vsnprintf(log_last, sizeof(log_last), fmt, ap);
	va_end(ap);
	log_n++;
	pthread_mutex_unlock(&log_mu);
}

static uint64_t
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
load(void)
{
	dl = dlopen(HOOK_SO, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		diag("dlopen %s: %s", HOOK_SO, dlerror());
		return -1;
	}
	P5 = dlsym(dl, "ncclProfiler_v5");
	P4 = dlsym(dl, "ncclProfiler_v4");
	log_n = 0;
	log_last[0] = 0;
	return P5 && P4 ? 0 : -1;
}

/* Unload, and say whether the library really went (so the next scenario
 * starts from fresh state). */
static int
unload(void)
{
	dlclose(dl);
	dl = dlopen(HOOK_SO, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (dl) {
		dlclose(dl);
		return -1;
	}
	return 0;
}

/* ---- the record, read back as layoutd would ----------------------------- */

static char rec_path[4096];

static const struct plw_record *
map_record(const char *dir, const char *job, const char *step,
    const char *rank)
{
	struct plw_record *r;
	struct stat st;
	int fd;

	snprintf(rec_path, sizeof(rec_path), "%s/plw-%s.%s.%s.%ld", dir, job,
	    step, rank, (long)getpid());
	fd = open(rec_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size != sizeof(*r)) {
		close(fd);
		return NULL;
	}
	r = mmap(NULL, sizeof(*r), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return r == MAP_FAILED ? NULL : r;
}

static int
count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* ---- NCCL's event sequences (v5) ---------------------------------------- */

static void *
start5(void *ctx, uint64_t type, void *parent, plw_nccl_descr_v5_t *d)
{
	void *h = (void *)0x1;	/* the hook must always write it */

	d->type = type;
	d->parentObj = parent;
	P5->startEvent(ctx, &h, d);
	return h;
}

/*
 * One collective on the launching thread, in 2.28.9's order: GroupApi
 * start, state 23, CollApi start/stop, state 24, KernelLaunch start/stop,
 * Group start, Coll start, Coll stop (enqueued), Group stop, GroupApi stop.
 * Returns the Coll handle (the parent of its KernelCh events).
 */
static void *
coll5(void *ctx, uint64_t seq, const char *func, size_t count,
    const char *dtype, int nch, int root, void **capi_out)
{
	plw_nccl_descr_v5_t d;
	void *gapi, *capi, *kl, *grp, *coll;

	memset(&d, 0, sizeof(d));
	d.groupApi.groupDepth = 1;
	gapi = start5(ctx, PLW_NCCL_EV_GROUP_API, NULL, &d);
	P5->recordEventState(gapi, PLW_NCCL_STATE_GROUP_START_API_STOP, NULL);
	memset(&d, 0, sizeof(d));
	d.collApi.func = func;
	d.collApi.count = count;
	d.collApi.datatype = dtype;
	d.collApi.root = root;
	capi = start5(ctx, PLW_NCCL_EV_COLL_API, gapi, &d);
	P5->stopEvent(capi);
	P5->recordEventState(gapi, PLW_NCCL_STATE_GROUP_END_API_START, NULL);
	memset(&d, 0, sizeof(d));
	kl = start5(ctx, PLW_NCCL_EV_KERNEL_LAUNCH, gapi, &d);
	P5->stopEvent(kl);
	memset(&d, 0, sizeof(d));
	grp = start5(ctx, PLW_NCCL_EV_GROUP, NULL, &d);
	memset(&d, 0, sizeof(d));
	d.rank = 3;
	d.coll.seqNumber = seq;
	d.coll.func = func;
	d.coll.count = count;
	d.coll.root = root;
	d.coll.datatype = dtype;
	d.coll.nChannels = (uint8_t)nch;
	d.coll.nWarps = 16;
	d.coll.algo = "RING";
	d.coll.proto = "LL128";
	d.coll.parentGroup = grp;
	coll = start5(ctx, PLW_NCCL_EV_COLL, capi, &d);
	P5->stopEvent(coll);
	P5->stopEvent(grp);
	P5->stopEvent(gapi);
	if (capi_out)
		*capi_out = capi;
	return coll;
}

/* One p2p operation (Send or Recv) inside its own group. */
static void *
p2p5(void *ctx, const char *func, int peer, size_t count, int nch)
{
	plw_nccl_descr_v5_t d;
	void *gapi, *papi, *kl, *grp, *p;

	memset(&d, 0, sizeof(d));
	d.groupApi.groupDepth = 2;
	gapi = start5(ctx, PLW_NCCL_EV_GROUP_API, NULL, &d);
	P5->recordEventState(gapi, PLW_NCCL_STATE_GROUP_START_API_STOP, NULL);
	memset(&d, 0, sizeof(d));
	d.p2pApi.func = func;
	d.p2pApi.count = count;
	d.p2pApi.datatype = "ncclFloat16";
	papi = start5(ctx, PLW_NCCL_EV_P2P_API, gapi, &d);
	P5->stopEvent(papi);
	P5->recordEventState(gapi, PLW_NCCL_STATE_GROUP_END_API_START, NULL);
	memset(&d, 0, sizeof(d));
	kl = start5(ctx, PLW_NCCL_EV_KERNEL_LAUNCH, gapi, &d);
	P5->stopEvent(kl);
	memset(&d, 0, sizeof(d));
	grp = start5(ctx, PLW_NCCL_EV_GROUP, NULL, &d);
	memset(&d, 0, sizeof(d));
	d.p2p.func = func;
	d.p2p.datatype = "ncclFloat16";
	d.p2p.count = count;
	d.p2p.peer = peer;
	d.p2p.nChannels = (uint8_t)nch;
	d.p2p.parentGroup = grp;
	p = start5(ctx, PLW_NCCL_EV_P2P, papi, &d);
	P5->stopEvent(p);
	P5->stopEvent(grp);
	P5->stopEvent(gapi);
	return p;
}

/* KernelCh operations, run on a thread of their own like NCCL's proxy. */
struct kch_op {
	void *ctx;
	void *parent;
	int channel;
	uint64_t gpu_start, gpu_stop;
	int stop;		/* 0: start only (still running) */
};

struct kch_run {
	struct kch_op *ops;
	int n;
};

static void *
kch_thread(void *arg)
{
	struct kch_run *run = arg;
	void *h[64];
	int i;

	for (i = 0; i < run->n; i++) {
		plw_nccl_descr_v5_t d;

		memset(&d, 0, sizeof(d));
		d.kernelCh.channelId = (uint8_t)run->ops[i].channel;
		d.kernelCh.pTimer = run->ops[i].gpu_start;
		h[i] = start5(run->ops[i].ctx, PLW_NCCL_EV_KERNEL_CH,
		    run->ops[i].parent, &d);
	}
	for (i = 0; i < run->n; i++) {
		plw_nccl_state_args_v5_t a;

		if (!run->ops[i].stop || !h[i])
			continue;
		a.kernelCh.pTimer = run->ops[i].gpu_stop;
		P5->recordEventState(h[i], PLW_NCCL_STATE_KERNEL_CH_STOP, &a);
		P5->stopEvent(h[i]);
	}
	return NULL;
}

static void
kch_on_thread(struct kch_op *ops, int n)
{
	struct kch_run run = { ops, n };
	pthread_t t;

	pthread_create(&t, NULL, kch_thread, &run);
	pthread_join(t, NULL);
}

/* All channels of a collective: start at base+10*c, stop at base+1000+c. */
static void
finish(void *ctx, void *coll, int nch, uint64_t base)
{
	struct kch_op ops[64];
	int c;

	for (c = 0; c < nch; c++) {
		ops[c] = (struct kch_op){ ctx, coll, c, base + 10 * (uint64_t)c,
		    base + 1000 + (uint64_t)c, 1 };
	}
	kch_on_thread(ops, nch);
}

static void *
init5(const char *name, uint64_t hash, int *mask)
{
	void *ctx = (void *)0x1;

	*mask = 0;
	if (P5->init(&ctx, hash, mask, name, 2, 8, 3, test_log) != 0)
		return (void *)0x2;	/* seen as "not NULL" and fails */
	return ctx;
}

static char *
mkdir_tmp(const char *tag)
{
	static char dirs[8][256];
	static int n;
	char *d = dirs[n++ % 8];
	const char *t = getenv("TMPDIR");

	snprintf(d, 256, "%s/hook_test-%s-XXXXXX", t && *t ? t : "/tmp", tag);
	return mkdtemp(d);
}

static void
rm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[4096];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

/* ---- off paths ---------------------------------------------------------- */

/* The hook cannot record: init succeeds with a NULL context and a zero
 * mask, says why once, and every later call is harmless. */
static void
off_case(const char *what, const char *dir, const char *mask_env,
    const char *want)
{
	void *ctx, *h = (void *)0x1;
	plw_nccl_descr_v5_t d;
	int mask, rc;

	if (dir)
		setenv("PARALLEL_LAYOUT_WATCH_DIR", dir, 1);
	else
		unsetenv("PARALLEL_LAYOUT_WATCH_DIR");
	if (mask_env)
		setenv("PARALLEL_LAYOUT_WATCH_MASK", mask_env, 1);
	else
		unsetenv("PARALLEL_LAYOUT_WATCH_MASK");
	ok(load() == 0, "%s: loads, both tables found", what);
	ctx = (void *)0x1;
	mask = 0x7;
	rc = P5->init(&ctx, 0x1234, &mask, "off", 1, 1, 0, test_log);
	ok(rc == 0 && ctx == NULL && mask == 0,
	    "%s: init succeeds with a NULL context and a zero mask", what);
	is_int(log_n, 1, "%s: said so once", what);
	like(log_last, want, "%s: the message names the cause", what);
	ctx = (void *)0x1;
	mask = 0x7;
	rc = P5->init(&ctx, 0x5678, &mask, "off2", 1, 1, 0, test_log);
	ok(rc == 0 && ctx == NULL && mask == 0 && log_n == 1,
	    "%s: a second communicator is off too, nothing said again", what);
	memset(&d, 0, sizeof(d));
	d.type = PLW_NCCL_EV_COLL;
	d.coll.func = "AllReduce";
	rc = P5->startEvent(NULL, &h, &d);
	ok(rc == 0 && h == NULL, "%s: events give NULL handles", what);
	ok(P5->stopEvent(NULL) == 0 &&
	    P5->recordEventState(NULL, PLW_NCCL_STATE_KERNEL_CH_STOP, NULL) == 0,
	    "%s: stop and state on NULL succeed", what);
	ok(unload() == 0, "%s: the library unloads", what);
}

static void
test_off(void)
{
	char *dir = mkdir_tmp("off");
	char bad[4096], file[4096];
	int fd;

	off_case("no directory", NULL, NULL, "PARALLEL_LAYOUT_WATCH_DIR");
	snprintf(bad, sizeof(bad), "%s/missing", dir);
	off_case("missing directory", bad, NULL, "missing");
	/* A path through a regular file cannot be written even by root. */
	snprintf(file, sizeof(file), "%s/file", dir);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	close(fd);
	snprintf(bad, sizeof(bad), "%s/file", dir);
	off_case("unwritable directory", bad, NULL, "Not a directory");
	off_case("bad mask", dir, "banana", "'banana' is not an event mask");
	off_case("mask zero", dir, "0", "is 0");
	{
		/* Past RLIMIT_FSIZE a write raises SIGXFSZ (death). */
		struct rlimit old, low;

		getrlimit(RLIMIT_FSIZE, &old);
		low = old;
		low.rlim_cur = 4096;
		setrlimit(RLIMIT_FSIZE, &low);
		off_case("file size limit", dir, NULL, "ulimit -f");
		setrlimit(RLIMIT_FSIZE, &old);
	}
	/* Something already at the record's name (a symlink another user
	 * planted, a file of another version): never followed, never
	 * reused, the target untouched. */
	{
		char rec[4096], target[4096];
		struct stat st;

		snprintf(rec, sizeof(rec), "%s/plw-0.0.-1.%ld", dir,
		    (long)getpid());
		snprintf(target, sizeof(target), "%s/target", dir);
		if (symlink(target, rec) < 0)
			diag("symlink: %s", strerror(errno));
		off_case("planted symlink", dir, NULL, "File exists");
		ok(lstat(target, &st) < 0 && errno == ENOENT,
		    "planted symlink: its target was not created");
		unlink(rec);
		fd = open(rec, O_CREAT | O_WRONLY, 0600);
		if (fd >= 0) {
			if (ftruncate(fd, sizeof(struct plw_record)) < 0)
				diag("ftruncate: %s", strerror(errno));
			close(fd);
		}
		off_case("planted file", dir, NULL, "File exists");
		stat(rec, &st);
		is_int(st.st_size, sizeof(struct plw_record),
		    "planted file: left as it was");
		unlink(rec);
	}
	is_int(count_files(dir), 1, "off: no record was left behind");
	unlink(file);
	rm_dir(dir);
	unsetenv("PARALLEL_LAYOUT_WATCH_MASK");
}

/* ---- the record's seqcount helpers on their own ------------------------ */

static struct plw_slot seq_slot;
static _Atomic int seq_done;

/* Every word of the launch part's body gets the same value per write. */
static void *
seq_writer(void *arg)
{
	uint64_t *w = (uint64_t *)&seq_slot.launch;
	size_t n = sizeof(seq_slot.launch) / 8, j;
	uint64_t i;

	for (i = 1; i <= 2000000 && !atomic_load(&seq_done); i++) {
		plw_write_begin(&seq_slot.launch.seq);
		for (j = 1; j < n; j++)
			plw_st64(&w[j], i);
		plw_write_end(&seq_slot.launch.seq);
	}
	atomic_store(&seq_done, 1);
	return NULL;
}

static void
test_seqcount(void)
{
	size_t n = sizeof(struct plw_launch) / 8, j;
	long reads = 0, torn = 0;
	struct plw_launch l;
	pthread_t t;

	/* A writer inside its part: the reader refuses, never waits long. */
	plw_write_begin(&seq_slot.launch.seq);
	plw_st64(&seq_slot.launch.colls, 1);
	ok(plw_read_launch(&seq_slot, &l) == -1,
	    "seqcount: a part being written is not returned");
	plw_write_end(&seq_slot.launch.seq);
	ok(plw_read_launch(&seq_slot, &l) == 0 && l.colls == 1,
	    "seqcount: once written it is");
	ok(plw_read_ident(&seq_slot, &(struct plw_ident){ 0 }) == -1,
	    "seqcount: a never written identity is refused");
	ok(plw_write_try_begin(&seq_slot.launch.seq) == 0 &&
	    plw_write_try_begin(&seq_slot.launch.seq) == -1,
	    "seqcount: a second writer cannot take a held part");
	plw_write_end(&seq_slot.launch.seq);

	/* A writer and a reader at once: no copy mixes two writes. */
	plw_write_begin(&seq_slot.launch.seq);
	plw_st64(&seq_slot.launch.colls, 0);
	plw_write_end(&seq_slot.launch.seq);
	pthread_create(&t, NULL, seq_writer, NULL);
	while (!atomic_load(&seq_done)) {
		const uint64_t *w = (const uint64_t *)&l;

		if (plw_read_launch(&seq_slot, &l) < 0)
			continue;
		reads++;
		for (j = 2; j < n; j++)
			if (w[j] != w[1]) {
				torn++;
				break;
			}
		if (reads >= 300000)
			atomic_store(&seq_done, 1);
	}
	pthread_join(t, NULL);
	ok(reads > 0, "seqcount: %ld consistent reads", reads);
	is_int(torn, 0, "seqcount: none of them torn");
}

/* ---- the main v5 scenario ----------------------------------------------- */

struct reader_view {
	struct plw_ident id;
	struct plw_launch l;
	struct plw_gpu g;
};

static int
view(const struct plw_record *r, int slot, struct reader_view *v)
{
	return plw_read_ident(&r->slot[slot], &v->id) |
	    plw_read_launch(&r->slot[slot], &v->l) |
	    plw_read_gpu(&r->slot[slot], &v->g);
}

static void
test_sequences(const struct plw_record *r, void *ctx)
{
	struct reader_view v;
	uint64_t t0, t1, t2, done1;
	void *coll, *coll3, *p;
	struct kch_op op;
	plw_nccl_descr_v5_t d;

	/* One all-reduce, two channels, then its kernel channels finish on
	 * another thread after the Coll stop (as on a GPU). */
	t0 = mono();
	coll = coll5(ctx, 7, "AllReduce", 1024, "ncclFloat32", 2, -1, NULL);
	t1 = mono();
	ok(coll != NULL, "a Coll gets a handle");
	ok(view(r, 0, &v) == 0, "the slot reads back whole");
	is_int(v.l.colls, 1, "one collective entered");
	is_int(v.l.seq_number, 7, "its seqNumber");
	is_str(v.l.func.c, "AllReduce", "its func");
	is_str(v.l.datatype.c, "ncclFloat32", "its datatype");
	is_str(v.l.algo.c, "RING", "its algo");
	is_str(v.l.proto.c, "LL128", "its proto");
	is_int(v.l.count, 1024, "its count");
	is_int(v.l.nchannels, 2, "its nChannels");
	is_int(v.l.root, -1, "its root");
	ok(v.l.enqueue_ns >= t0 && v.l.enqueue_ns <= t1,
	    "its enqueue time lies within the call");
	is_int(v.g.done, 0, "not complete before its channels stop");
	finish(ctx, coll, 2, 5000);
	ok(view(r, 0, &v) == 0, "the slot reads back whole after the GPU");
	is_int(v.g.ch_started, 2, "two channels started");
	is_int(v.g.ch_stopped, 2, "two channels stopped");
	is_int(v.g.done, 1, "one collective complete on the GPU");
	is_int(v.g.done_seq_number, 7, "the completed seqNumber");
	is_str(v.g.done_func.c, "AllReduce", "the completed func");
	is_int(v.g.gpu_start_ns, 5000, "GPU start: the earliest channel start");
	is_int(v.g.gpu_stop_ns, 6001, "GPU stop: the latest channel stop");
	is_int(v.g.ring[0].seq_number, 7, "the wait ring holds it");
	is_int(v.g.ring[0].wait_ns, v.g.done_ns - v.l.enqueue_ns,
	    "its wait is enqueue to completion");
	is_int(v.g.ring[0].gap_ns, 0, "the first collective has no gap");
	done1 = v.g.done_ns;

	/* A second one, 2 ms after the first completed: its gap. */
	while (mono() < done1 + 2000000)
		;
	coll = coll5(ctx, 8, "AllGather", 4096, "ncclInt8", 1, -1, NULL);
	t2 = mono();
	finish(ctx, coll, 1, 9000);
	ok(view(r, 0, &v) == 0, "read back after the second");
	is_int(v.g.done, 2, "two complete");
	is_int(v.g.ring[1].seq_number, 8, "ring[1] is the second");
	ok(v.g.ring[1].gap_ns >= 2000000 && v.g.ring[1].gap_ns <= t2 - done1,
	    "its gap is the time between the first's completion and its "
	    "enqueue");

	/* A third one whose one channel starts and never stops: in flight. */
	coll3 = coll5(ctx, 9, "AllReduce", 8, "ncclFloat32", 2, -1, NULL);
	op = (struct kch_op){ ctx, coll3, 0, 12000, 0, 0 };
	kch_on_thread(&op, 1);
	ok(view(r, 0, &v) == 0, "read back with one in flight");
	is_int(v.g.ch_started - v.g.ch_stopped, 1, "one channel in flight");
	is_int(v.g.start_seq_number, 9, "the in-flight collective's seq");
	is_int(v.g.done, 2, "still two complete");

	/* p2p: a Send to 17 and a Recv from 1, counted per peer bucket. */
	p = p2p5(ctx, "Send", 17, 100, 1);
	ok(p != NULL, "a P2p gets a handle");
	finish(ctx, p, 1, 20000);
	p = p2p5(ctx, "Recv", 1, 200, 1);
	finish(ctx, p, 1, 21000);
	ok(view(r, 0, &v) == 0, "read back after p2p");
	is_int(v.l.p2ps, 2, "two p2p entered");
	is_int(v.l.sends[17 % PLW_PEER_BUCKETS], 1, "the Send in peer 17's bucket");
	is_int(v.l.recvs[1], 1, "the Recv in peer 1's bucket");
	is_int(v.l.p2p_peer, 1, "the last p2p's peer");
	is_int(v.l.p2p_count, 200, "the last p2p's count");
	is_int(v.g.p2p_done, 2, "both p2p complete on the GPU");
	is_int(v.g.done, 2, "p2p does not count as a collective");

	/* PXN: another process's ProxyOp, with pointers that are not ours. */
	memset(&d, 0, sizeof(d));
	d.proxyOp.pid = getpid() + 1;
	d.proxyOp.peer = 5;
	p = (void *)0x1;
	d.type = PLW_NCCL_EV_PROXY_OP;
	d.parentObj = (void *)0x10;
	P5->startEvent((void *)0x20, &p, &d);
	ok(p == NULL, "a foreign ProxyOp gets no handle");
	is_int(plw_read_counter(&r->hdr, foreign_events), 1,
	    "and is counted, its pointers untouched");
	memset(&d, 0, sizeof(d));
	p = (void *)0x1;
	d.type = 1u << 20;
	P5->startEvent(ctx, &p, &d);
	ok(p == NULL, "an unknown event type gets no handle");
}

/* Section 0's traps. */
static void
test_traps(const struct plw_record *r, void *ctx)
{
	struct reader_view v;
	void *capi, *coll, *h;
	plw_nccl_descr_v5_t d;
	uint64_t bad0, colls0;
	int i, local;

	/* The stale CollApi handle NCCL stops again for later collectives. */
	coll = coll5(ctx, 10, "AllReduce", 8, "ncclFloat32", 1, -1, &capi);
	finish(ctx, coll, 1, 30000);
	view(r, 0, &v);
	colls0 = v.l.colls;
	for (i = 0; i < 1000; i++)
		P5->stopEvent(capi);
	coll = coll5(ctx, 11, "AllReduce", 8, "ncclFloat32", 1, -1, NULL);
	P5->stopEvent(capi);
	finish(ctx, coll, 1, 31000);
	ok(view(r, 0, &v) == 0, "read back after the stale stops");
	is_int(v.l.colls, colls0 + 1, "stale CollApi stops change nothing");
	is_int(v.g.done_seq_number, 11, "the next collective completes");

	/* Contexts a failed init could leave. */
	bad0 = plw_read_counter(&r->hdr, bad_context);
	memset(&d, 0, sizeof(d));
	d.type = PLW_NCCL_EV_COLL;
	d.coll.func = "AllReduce";
	h = (void *)0x1;
	P5->startEvent(NULL, &h, &d);
	ok(h == NULL, "NULL context: no handle");
	h = (void *)0x1;
	P5->startEvent(&local, &h, &d);
	ok(h == NULL, "a context that is not ours: no handle");
	h = (void *)0x1;
	P5->startEvent((char *)ctx + 1, &h, &d);
	ok(h == NULL, "a misaligned context: no handle");
	is_int(plw_read_counter(&r->hdr, bad_context) - bad0, 3,
	    "each counted");
	ok(P5->stopEvent(&local) == 0 && P5->stopEvent(NULL) == 0 &&
	    P5->recordEventState(&local, PLW_NCCL_STATE_KERNEL_CH_STOP, NULL)
	    == 0, "stop and state on handles not ours succeed");
	ok(P5->finalize(&local) == 0, "finalize of a context not ours succeeds");
	ok(P5->startEvent(ctx, NULL, &d) == 0 && P5->startEvent(ctx, &h, NULL)
	    == 0, "NULL handle or descriptor pointers are survived");
}

/* A ring full of unstopped collectives drops and counts, and recovers. */
static void
test_pool(const struct plw_record *r, void *ctx, int slot)
{
	static void *h[1100];
	plw_nccl_descr_v5_t d;
	struct reader_view v;
	uint64_t drop0;
	int i, got = 0;

	drop0 = plw_read_counter(&r->hdr, events_dropped);
	for (i = 0; i < 1100; i++) {
		memset(&d, 0, sizeof(d));
		d.coll.seqNumber = (uint64_t)i;
		d.coll.func = "AllReduce";
		d.coll.nChannels = 1;
		h[i] = start5(ctx, PLW_NCCL_EV_COLL, NULL, &d);
		got += h[i] != NULL;
	}
	is_int(got, 1024, "a fresh ring holds 1024 unstopped collectives");
	is_int(plw_read_counter(&r->hdr, events_dropped) - drop0, 76,
	    "the other 76 are dropped and counted");
	view(r, slot, &v);
	is_int(v.l.colls, 1100, "a dropped one still counts as entered");
	for (i = 0; i < 1100; i++)
		if (h[i])
			P5->stopEvent(h[i]);
	memset(&d, 0, sizeof(d));
	d.coll.func = "AllReduce";
	d.coll.nChannels = 1;
	d.coll.seqNumber = 5000;
	h[0] = start5(ctx, PLW_NCCL_EV_COLL, NULL, &d);
	ok(h[0] != NULL, "after the stops a collective gets a handle again");
	P5->stopEvent(h[0]);
	finish(ctx, h[0], 1, 40000);
	view(r, slot, &v);
	is_int(v.g.done_seq_number, 5000, "and completes");
}

/* ---- two threads hammering at once, a reader watching ------------------- */

#define HAMMER_N 20000
#define QLEN 256

struct hammer {
	void *ctx;
	void *q[QLEN];
	_Atomic unsigned head, tail;
};

static _Atomic int hammer_stop;

static void *
hammer_launch(void *arg)
{
	struct hammer *hm = arg;
	unsigned i;

	for (i = 1; i <= HAMMER_N; i++) {
		void *c = coll5(hm->ctx, i, i & 1 ? "AllReduce" : "AllGather",
		    3 * (size_t)i + 1, i & 1 ? "ncclFloat32" : "ncclInt8", 2,
		    (int)(i % 8), NULL);

		while (atomic_load(&hm->tail) - atomic_load(&hm->head) >= QLEN)
			sched_yield();
		hm->q[atomic_load(&hm->tail) % QLEN] = c;
		atomic_fetch_add(&hm->tail, 1);
	}
	return NULL;
}

static void *
hammer_proxy(void *arg)
{
	struct hammer *hm = arg;
	unsigned n = 0;

	while (n < HAMMER_N) {
		plw_nccl_state_args_v5_t a;
		plw_nccl_descr_v5_t d;
		void *c, *k[2];
		int ch;

		if (atomic_load(&hm->head) == atomic_load(&hm->tail)) {
			sched_yield();
			continue;
		}
		c = hm->q[atomic_load(&hm->head) % QLEN];
		atomic_fetch_add(&hm->head, 1);
		n++;
		for (ch = 0; ch < 2; ch++) {
			memset(&d, 0, sizeof(d));
			d.kernelCh.channelId = (uint8_t)ch;
			d.kernelCh.pTimer = 10 * (uint64_t)n;
			k[ch] = start5(hm->ctx, PLW_NCCL_EV_KERNEL_CH, c, &d);
		}
		for (ch = 0; ch < 2; ch++) {
			a.kernelCh.pTimer = 10 * (uint64_t)n + 5;
			P5->recordEventState(k[ch],
			    PLW_NCCL_STATE_KERNEL_CH_STOP, &a);
			P5->stopEvent(k[ch]);
		}
	}
	return NULL;
}

struct reader_stats {
	const struct plw_record *r;
	int slot[2];
	long reads, busy, torn;
};

/* Every consistent copy must satisfy what the writers wrote together. */
static void *
hammer_reader(void *arg)
{
	struct reader_stats *st = arg;
	int s;

	while (!atomic_load(&hammer_stop)) {
		for (s = 0; s < 2; s++) {
			const struct plw_slot *sl = &st->r->slot[st->slot[s]];
			struct plw_launch l;
			struct plw_gpu g;

			if (plw_read_launch(sl, &l) < 0 ||
			    plw_read_gpu(sl, &g) < 0) {
				st->busy++;
				continue;
			}
			st->reads++;
			if (l.colls && (l.count != 3 * l.seq_number + 1 ||
			    strcmp(l.func.c, l.seq_number & 1 ? "AllReduce" :
			    "AllGather") != 0 ||
			    strcmp(l.datatype.c, l.seq_number & 1 ?
			    "ncclFloat32" : "ncclInt8") != 0 ||
			    l.root != (int)(l.seq_number % 8) ||
			    l.colls != l.seq_number))
				st->torn++;
			if (g.done && (g.ring[(g.done - 1) % PLW_RING].seq_number
			    != g.done_seq_number || g.done_seq_number != g.done ||
			    g.ring[(g.done - 1) % PLW_RING].enqueue_ns !=
			    g.done_enqueue_ns || g.ch_stopped - 2 * g.done > 1))
				st->torn++;
		}
	}
	return NULL;
}

static void
test_hammer(const struct plw_record *r, void *ctx0, int slot0, void *ctx1,
    int slot1)
{
	static struct hammer hm[2];
	struct reader_stats st = { r, { slot0, slot1 }, 0, 0, 0 };
	pthread_t tl[2], tp[2], tr;
	uint64_t drop0 = plw_read_counter(&r->hdr, events_dropped);
	uint64_t busy0 = plw_read_counter(&r->hdr, events_busy);
	int i;

	hm[0].ctx = ctx0;
	hm[1].ctx = ctx1;
	pthread_create(&tr, NULL, hammer_reader, &st);
	for (i = 0; i < 2; i++) {
		pthread_create(&tl[i], NULL, hammer_launch, &hm[i]);
		pthread_create(&tp[i], NULL, hammer_proxy, &hm[i]);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(tl[i], NULL);
		pthread_join(tp[i], NULL);
	}
	atomic_store(&hammer_stop, 1);
	pthread_join(tr, NULL);
	for (i = 0; i < 2; i++) {
		struct reader_view v;

		ok(view(r, st.slot[i], &v) == 0, "hammer %d: reads back", i);
		is_int(v.l.colls, HAMMER_N, "hammer %d: all entered", i);
		is_int(v.g.done, HAMMER_N, "hammer %d: all complete", i);
		is_int(v.g.ch_started, 2 * HAMMER_N, "hammer %d: channels", i);
	}
	is_int(plw_read_counter(&r->hdr, events_dropped) - drop0, 0,
	    "hammer: nothing dropped");
	is_int(plw_read_counter(&r->hdr, events_busy) - busy0, 0,
	    "hammer: no writer collided (one per part)");
	ok(st.reads > 0, "hammer: the reader read (%ld reads, %ld busy)",
	    st.reads, st.busy);
	is_int(st.torn, 0, "hammer: the reader never saw a torn part");
}

/* The AllGather run with the most bytes, on slot 1 (its first
 * collectives). */
static void
test_ag_runs(const struct plw_record *r, void *ctx)
{
	struct reader_view v;
	void *p;

	view(r, 1, &v);
	ok(v.l.ag_peak_bytes == 0 && v.l.ag_peak_calls == 0 && v.l.ag_peak_top == 0,
	    "AllGather run: none before the first");
	coll5(ctx, 1, "AllGather", 100, "ncclInt8", 1, -1, NULL);
	p = p2p5(ctx, "Send", 1, 64, 1);
	coll5(ctx, 2, "AllGather", 300, "ncclInt8", 1, -1, NULL);
	coll5(ctx, 1, "ReduceScatter", 4000, "ncclFloat32", 1, -1, NULL);
	view(r, 1, &v);
	ok(p && v.l.ag_peak_bytes == 400 && v.l.ag_peak_calls == 2 &&
	    v.l.ag_peak_top == 300, "AllGather run: two, a p2p between them, "
	    "then another collective: 400 bytes in 2, the largest 300");
	coll5(ctx, 3, "AllGather", 1000, "ncclInt8", 1, -1, NULL);
	view(r, 1, &v);
	ok(v.l.ag_peak_bytes == 1000 && v.l.ag_peak_calls == 1 &&
	    v.l.ag_peak_top == 1000, "AllGather run: a larger run of one takes over");
	coll5(ctx, 4, "AllGather", 10, "ncclInt8", 1, -1, NULL);
	coll5(ctx, 1, "Broadcast", 7, "ncclInt8", 1, 0, NULL);
	coll5(ctx, 5, "AllGather", 5, "ncclInt8", 1, -1, NULL);
	view(r, 1, &v);
	ok(v.l.ag_peak_bytes == 1010 && v.l.ag_peak_calls == 2 &&
	    v.l.ag_peak_top == 1000 && v.l.colls == 7,
	    "AllGather run: it grows while it lasts; a smaller later run leaves "
	    "it (1010 in 2, the largest 1000)");
}

static void
sleep_ms(long ms)
{
	struct timespec t = { 0, ms * 1000000L };

	nanosleep(&t, NULL);
}

/* The p2p time on slot `slot`: a send and a receive that overlap count
 * once; the time between operations is in the span, not the wait. */
static void
test_p2p_time(const struct plw_record *r, void *ctx, int slot)
{
	struct reader_view v;
	uint64_t t0, t1, w1, s1;
	void *a, *b, *c;

	view(r, slot, &v);
	ok(v.g.p2p_wait_ns == 0 && v.g.p2p_span_ns == 0, "p2p time: none before the first");
	t0 = mono();
	a = p2p5(ctx, "Send", 1, 64, 1);
	b = p2p5(ctx, "Recv", 1, 64, 1);
	sleep_ms(20);
	finish(ctx, a, 1, 100);
	finish(ctx, b, 1, 200);
	t1 = mono();
	view(r, slot, &v);
	w1 = v.g.p2p_wait_ns;
	s1 = v.g.p2p_span_ns;
	ok(a && b && w1 >= 20000000 && w1 == s1 && s1 <= t1 - t0,
	    "p2p time: a send and a receive in flight together for 20 ms count "
	    "once (wait %" PRIu64 " = span %" PRIu64 ")", w1, s1);
	sleep_ms(30);
	c = p2p5(ctx, "Send", 1, 64, 1);
	finish(ctx, c, 1, 300);
	view(r, slot, &v);
	ok(c && v.g.p2p_span_ns >= s1 + 30000000 &&
	    v.g.p2p_wait_ns - w1 < v.g.p2p_span_ns - s1 - 25000000,
	    "p2p time: 30 ms between operations lengthen the span, not the wait "
	    "(wait %" PRIu64 ", span %" PRIu64 ")", v.g.p2p_wait_ns,
	    v.g.p2p_span_ns);
}

/* The pipeline's transfers inside a collective's gap (plw_gpu.ring_p2p):
 * a receive on another communicator in flight for 20 ms between two
 * collectives of slot's counts in the second's gap, at most the gap; the
 * next collective's gap holds none. */
static void
test_ring_p2p(const struct plw_record *r, void *ctx, int slot, void *pctx)
{
	struct reader_view v;
	uint64_t n, gap, pw;
	void *a, *p, *b;

	a = coll5(ctx, 900, "AllReduce", 8, "ncclFloat32", 1, -1, NULL);
	finish(ctx, a, 1, 100);
	p = p2p5(pctx, "Recv", 1, 64, 1);
	sleep_ms(20);
	finish(pctx, p, 1, 200);
	sleep_ms(5);
	b = coll5(ctx, 901, "AllReduce", 8, "ncclFloat32", 1, -1, NULL);
	finish(ctx, b, 1, 300);
	view(r, slot, &v);
	n = v.g.done;
	gap = n ? v.g.ring[(n - 1) % PLW_RING].gap_ns : 0;
	pw = n ? v.g.ring_p2p[(n - 1) % PLW_RING] : 0;
	ok(a && p && b && pw >= 20000000 && pw <= gap && gap >= 25000000,
	    "ring_p2p: a 20 ms receive on another communicator is in the next "
	    "collective's gap (%" PRIu64 " of %" PRIu64 " ns)", pw, gap);
	sleep_ms(5);
	b = coll5(ctx, 902, "AllReduce", 8, "ncclFloat32", 1, -1, NULL);
	finish(ctx, b, 1, 400);
	view(r, slot, &v);
	n = v.g.done;
	gap = n ? v.g.ring[(n - 1) % PLW_RING].gap_ns : 0;
	pw = n ? v.g.ring_p2p[(n - 1) % PLW_RING] : 1;
	ok(b && pw == 0 && gap >= 5000000,
	    "ring_p2p: none in a gap with no transfer (%" PRIu64 " of %" PRIu64 " ns)", pw, gap);
}

static void
test_v5(void)
{
	char *dir = mkdir_tmp("v5");
	const struct plw_record *r;
	struct reader_view v;
	struct stat st;
	void *ctx, *ctx1, *ctxs[PLW_MAX_COMMS + 2], *h;
	plw_nccl_descr_v5_t d;
	struct timespec now;
	uint64_t real;
	int mask, i, n, logs;

	setenv("PARALLEL_LAYOUT_WATCH_DIR", dir, 1);
	setenv("SLURM_JOB_ID", "77", 1);
	setenv("SLURM_STEP_ID", "3", 1);
	setenv("RANK", "5", 1);
	ok(load() == 0, "v5: loads, both tables found");
	ctx = init5("tp0", 0xabcdef0123456789ULL, &mask);
	ok(ctx != NULL, "v5: init gives a context");
	is_int(mask, DEFAULT_MASK, "v5: the default mask is Coll|P2p|KernelCh");
	ctx1 = init5("dp0", 0x42, &mask);
	ok(ctx1 != NULL && ctx1 != ctx, "v5: a second communicator, its own "
	    "context");
	is_int(log_n, 1, "v5: one line said where it records");
	r = map_record(dir, "77", "3", "5");
	ok(r != NULL, "v5: the record is DIR/plw-JOB.STEP.RANK.PID, full size");
	if (!r)
		return;		/* the plan makes the missing checks fail */
	stat(rec_path, &st);
	is_int(st.st_mode & 07777, 0600, "v5: the record is mode 0600");
	ok(plw_check_header(&r->hdr, sizeof(*r)) == 0, "v5: header checks");
	is_int(r->hdr.job_id, 77, "v5: job");
	is_int(r->hdr.step_id, 3, "v5: step");
	is_int(r->hdr.rank, 5, "v5: rank");
	is_int(r->hdr.pid, getpid(), "v5: pid");
	is_int(r->hdr.nccl_abi, 5, "v5: ABI 5");
	is_int(r->hdr.event_mask, DEFAULT_MASK, "v5: mask in the header");
	is_int(r->hdr.state, PLW_STATE_ACTIVE, "v5: active");
	clock_gettime(CLOCK_REALTIME, &now);
	real = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	ok(r->hdr.start_real_ns <= real && r->hdr.start_real_ns +
	    60000000000ULL > real && r->hdr.start_mono_ns <= mono(),
	    "v5: start times: a realtime anchor beside the monotonic start");
	ok(view(r, 0, &v) == 0, "v5: slot 0 reads back");
	is_int(v.id.comm_hash, 0xabcdef0123456789ULL, "v5: commHash");
	is_str(v.id.name.c, "tp0", "v5: name");
	ok(v.id.rank == 3 && v.id.nranks == 8 && v.id.nnodes == 2,
	    "v5: rank, nranks, nNodes");
	is_int(v.id.state, PLW_SLOT_ACTIVE, "v5: slot active");

	test_sequences(r, ctx);
	test_traps(r, ctx);
	test_ag_runs(r, ctx1);
	test_p2p_time(r, ctx1, 1);
	test_ring_p2p(r, ctx, 0, ctx1);

	/* A forked child shares the mapping but must not write to it. */
	{
		uint64_t colls0;
		pid_t pid;
		int status = -1;

		view(r, 0, &v);
		colls0 = v.l.colls;
		pid = fork();
		if (pid == 0) {
			memset(&d, 0, sizeof(d));
			d.type = PLW_NCCL_EV_COLL;
			d.coll.func = "AllReduce";
			h = (void *)0x1;
			P5->startEvent(ctx, &h, &d);
			_exit(h == NULL ? 0 : 1);
		}
		waitpid(pid, &status, 0);
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "v5: a forked child's events get no handle");
		view(r, 0, &v);
		is_int(v.l.colls, colls0, "v5: and leave the record alone");
	}

	/* Finalize: the slot says so and later events are refused. */
	ok(P5->finalize(ctx) == 0, "v5: finalize");
	view(r, 0, &v);
	is_int(v.id.state, PLW_SLOT_FINALIZED, "v5: slot finalized");
	memset(&d, 0, sizeof(d));
	h = (void *)0x1;
	d.type = PLW_NCCL_EV_COLL;
	P5->startEvent(ctx, &h, &d);
	ok(h == NULL, "v5: a finalized context gets no handle");

	/* The ring on a fresh communicator (slot 2), the hammer on two more
	 * (slots 3 and 4). */
	ctxs[0] = init5("pool", 0x99, &mask);
	test_pool(r, ctxs[0], 2);
	ctxs[1] = init5("h0", 0x100, &mask);
	ctxs[2] = init5("h1", 0x101, &mask);
	test_hammer(r, ctxs[1], 3, ctxs[2], 4);

	/* Slots run out: later communicators are not recorded, said once. */
	logs = log_n;
	n = 5;
	for (i = 0; i < PLW_MAX_COMMS + 2 - n; i++)
		ctxs[i] = init5("more", 0x200 + (uint64_t)i, &mask);
	ok(ctxs[PLW_MAX_COMMS - n - 1] != NULL && ctxs[PLW_MAX_COMMS - n] ==
	    NULL && ctxs[PLW_MAX_COMMS - n + 1] == NULL,
	    "v5: %d slots, then NULL contexts", PLW_MAX_COMMS);
	is_int(mask, DEFAULT_MASK, "v5: the mask stays for the others");
	is_int(log_n - logs, 1, "v5: said once");
	like(log_last, "slots", "v5: the message says why");
	is_int(r->hdr.comms_dropped, 2, "v5: two communicators counted");
	ok(unload() == 0, "v5: the library unloads");
	munmap((void *)r, sizeof(*r));
	rm_dir(dir);
}

/* Unloaded and loaded again in one process: the same record goes on. */
static void
test_reload(void)
{
	char *dir = mkdir_tmp("reload");
	const struct plw_record *r;
	struct reader_view v;
	void *ctx;
	int mask;

	setenv("PARALLEL_LAYOUT_WATCH_DIR", dir, 1);
	ok(load() == 0, "reload: loads");
	ctx = init5("first", 1, &mask);
	P5->finalize(ctx);
	ok(unload() == 0, "reload: unloads");
	ok(load() == 0, "reload: loads again");
	ctx = init5("second", 2, &mask);
	ok(ctx != NULL && mask == DEFAULT_MASK, "reload: records again");
	is_int(log_n, 0, "reload: nothing to complain about");
	r = map_record(dir, "77", "3", "5");
	ok(r && r->hdr.slots_taken == 2, "reload: the same record, slot 1");
	if (r) {
		view(r, 0, &v);
		is_int(v.id.state, PLW_SLOT_FINALIZED, "reload: slot 0 finished");
		view(r, 1, &v);
		is_str(v.id.name.c, "second", "reload: slot 1 is the new one");
		ok(r->hdr.state == PLW_STATE_ACTIVE &&
		    r->hdr.off_reason == PLW_OFF_NONE,
		    "reload: active again with a communicator");
		P5->finalize(ctx);
		ok(r->hdr.state == PLW_STATE_OFF &&
		    r->hdr.off_reason == PLW_OFF_FINALIZED,
		    "reload: off (finalized) when the last one finalizes");
		munmap((void *)r, sizeof(*r));
	} else {
		ok(0, "reload: slot 0 finished");
		ok(0, "reload: slot 1 is the new one");
		ok(0, "reload: active again with a communicator");
		ok(0, "reload: off (finalized) when the last one finalizes");
		P5->finalize(ctx);
	}
	is_int(count_files(dir), 1, "reload: one file");
	ok(unload() == 0, "reload: unloads");
	rm_dir(dir);
}

/* NCCL 2.27's table: v4 descriptors, its init order, garbage nChannels on
 * p2p under 2.28's adapter. */
static void
test_v4(void)
{
	char *dir = mkdir_tmp("v4");
	const struct plw_record *r;
	plw_nccl_state_args_v4_t a;
	plw_nccl_descr_v4_t d;
	struct reader_view v;
	void *ctx = (void *)0x1, *grp, *coll, *k, *p;
	int mask = 0, rc;

	setenv("PARALLEL_LAYOUT_WATCH_DIR", dir, 1);
	ok(load() == 0, "v4: loads");
	rc = P4->init(&ctx, &mask, "v4comm", 0x44, 1, 2, 0, test_log);
	ok(rc == 0 && ctx != NULL && mask == DEFAULT_MASK, "v4: init");
	memset(&d, 0, sizeof(d));
	d.type = PLW_NCCL_EV_GROUP;
	grp = NULL;
	P4->startEvent(ctx, &grp, &d);
	memset(&d, 0, sizeof(d));
	d.type = PLW_NCCL_EV_COLL;
	d.parentObj = grp;
	d.coll.seqNumber = 5;
	d.coll.func = "ReduceScatter";
	d.coll.count = 64;
	d.coll.datatype = "ncclBfloat16";
	d.coll.nChannels = 1;
	d.coll.algo = "RING";
	d.coll.proto = "SIMPLE";
	d.coll.root = -1;
	coll = NULL;
	P4->startEvent(ctx, &coll, &d);
	P4->stopEvent(coll);
	P4->stopEvent(grp);
	memset(&d, 0, sizeof(d));
	d.type = PLW_NCCL_EV_KERNEL_CH;
	d.parentObj = coll;
	d.kernelCh.pTimer = 100;
	k = NULL;
	P4->startEvent(ctx, &k, &d);
	a.kernelCh.pTimer = 200;
	P4->recordEventState(k, PLW_NCCL_STATE_KERNEL_CH_STOP, &a);
	P4->stopEvent(k);
	memset(&d, 0, sizeof(d));
	d.type = PLW_NCCL_EV_P2P;
	d.p2p.func = "Send";
	d.p2p.peer = 1;
	d.p2p.count = 9;
	d.p2p.nChannels = 200;	/* uninitialised under the adapter */
	p = NULL;
	P4->startEvent(ctx, &p, &d);
	P4->stopEvent(p);
	memset(&d, 0, sizeof(d));
	d.type = PLW_NCCL_EV_KERNEL_CH;
	d.parentObj = p;
	k = NULL;
	P4->startEvent(ctx, &k, &d);
	P4->stopEvent(k);
	r = map_record(dir, "77", "3", "5");
	ok(r != NULL, "v4: record");
	if (r) {
		is_int(r->hdr.nccl_abi, 4, "v4: ABI 4");
		view(r, 0, &v);
		is_int(v.id.comm_hash, 0x44, "v4: commHash from init");
		is_str(v.id.name.c, "v4comm", "v4: name");
		is_int(v.l.seq_number, 5, "v4: seqNumber");
		is_str(v.l.func.c, "ReduceScatter", "v4: func");
		is_str(v.l.datatype.c, "ncclBfloat16", "v4: datatype");
		is_str(v.l.proto.c, "SIMPLE", "v4: proto");
		is_int(v.g.done_seq_number, 5, "v4: completed on the GPU");
		is_int(v.g.gpu_stop_ns, 200, "v4: GPU stop from state 22");
		is_int(v.g.p2p_done, 1, "v4: p2p complete despite nChannels");
		munmap((void *)r, sizeof(*r));
	} else {
		for (rc = 0; rc < 10; rc++)
			ok(0, "v4: record field");
	}
	P4->finalize(ctx);
	ok(unload() == 0, "v4: unloads");
	rm_dir(dir);
}

int
main(void)
{
	plan(211);
	test_seqcount();
	test_off();
	test_v5();
	test_reload();
	test_v4();
	return done_testing();
}
