/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libparallel-layout-nccl.so: an NCCL profiler plugin that writes what each
 * communicator of this rank is doing into the rank's watch record
 * (lib/watch/record.h), for the node's layoutd to read.  NCCL 2.28 finds it
 * through NCCL_PROFILER_PLUGIN and looks up ncclProfiler_v5 (2.27:
 * ncclProfiler_v4); those two tables are all it exports.  It links nothing
 * beyond libc.
 *
 * Environment (read once, at the first communicator init; the SPANK plugin
 * sets them for the tasks of watched steps):
 *   PARALLEL_LAYOUT_WATCH_DIR   directory of the record (required; the
 *                               per-job directory, owned by the user)
 *   SLURM_JOB_ID, SLURM_STEP_ID job and step (0 when unset)
 *   RANK, else SLURM_PROCID     the rank (-1 when unset)
 *   PARALLEL_LAYOUT_WATCH_MASK  NCCL event mask (decimal or 0x hex, at most
 *                               0xfff); default PLW_DEFAULT_MASK; 0 = off
 * The record is DIR/plw-JOB.STEP.RANK.PID, created with O_EXCL|O_NOFOLLOW,
 * mode 0600, one per process.  If this library is unloaded and loaded again
 * in the same process, it continues the record it made before.
 *
 * The default mask is Coll | P2p | KernelCh (0x46).  Coll and P2p (which
 * bring GroupApi, CollApi, P2pApi and Group with them) say which collective
 * each rank entered; KernelCh says when it finished on the GPU, which is the
 * only way to see an intra-node collective complete, or hang on the GPU.
 * KernelCh has a cost: NCCL opens a profiler connection per channel and its
 * kernels write timestamps, which NCCL users measured as extra latency on
 * small intra-node collectives (and a ~0.3 % throughput loss in training).
 * A site that cannot pay it sets PARALLEL_LAYOUT_WATCH_MASK=0x6 and keeps
 * "entered" without "completed".  ProxyOp/ProxyStep events are not recorded.
 *
 * It never fails NCCL: when the record cannot be made it returns success
 * with a NULL context and a zero mask, and says why once through NCCL's
 * logger.  The event functions take no lock, allocate nothing and make no
 * system call (clock_gettime goes through the vDSO): event handles come from
 * fixed per-communicator rings in this library's static memory, so any
 * pointer NCCL hands back is checked by address before it is used; a full
 * ring drops the event and counts it in the record.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nccl_profiler_abi.h"
#include "record.h"

#define PLW_DEFAULT_MASK (PLW_NCCL_EV_COLL | PLW_NCCL_EV_P2P | \
	PLW_NCCL_EV_KERNEL_CH)
#define PLW_MASK_ALL	0xfff	/* every v5 event type */
#define PLW_COLL_POOL	1024	/* Coll/P2p handles per communicator */
#define PLW_KCH_POOL	2048	/* KernelCh handles per communicator */
#define PLW_PROBES	4	/* ring entries tried before a drop */

/* What a handle is. */
enum { EV_API = 1, EV_COLL = 2, EV_P2P = 3, EV_KCH = 4 };

/* Coll/P2p entry states. */
enum {
	ST_FREE = 0,
	ST_LIVE = 1,	/* between Coll start and stop */
	ST_PENDING = 2,	/* stopped (enqueued), waiting for its channels */
	ST_EARLY = 3	/* its channels finished before the Coll stop */
};

struct plw_ctx;

#define PLW_LINE 64	/* a cache line */

/* A Coll or P2p handle.  The proxy thread touches it after NCCL hands it
 * over; the counters are atomics so a late channel racing a reuse is not a
 * data race (the generation tells a stale channel from a current one). */
struct plw_ev {
	_Alignas(2 * PLW_LINE) uint32_t kind;	/* two whole lines: none shared with
						 * a neighbour another thread uses */
	_Atomic uint32_t state;
	_Atomic uint64_t gen;
	struct plw_ctx *ctx;
	uint64_t seq_number;
	uint64_t enqueue_ns;
	_Atomic uint64_t gpu_start;	/* min over its channels */
	_Atomic uint64_t gpu_stop;	/* max over its channels */
	_Atomic uint32_t ch_started;
	_Atomic uint32_t ch_stopped;
	uint32_t nchannels;
	uint32_t pad;
	union plw_text func;
	uint64_t p2p_at_enqueue;	/* g_p2p_total at its Coll start */
};

/* A KernelCh handle (proxy thread only). */
struct plw_kch {
	_Alignas(PLW_LINE) uint32_t kind;	/* one whole line */
	_Atomic uint32_t live;
	struct plw_ev *parent;
	uint64_t parent_gen;
	uint64_t gpu_start;
	uint64_t gpu_stop;
	struct plw_ctx *ctx;
};

/*
 * A communicator's context.  The launching thread's fields and the proxy
 * thread's lie on cache lines of their own, and each context on its own
 * lines: with one communicator per thread, contexts next to each other
 * shared lines, and every collective's coll_next store moved them between
 * cores (4 threads cost half as much again as 1 in bench_hook).
 */
struct plw_ctx {
	_Atomic int live;	/* 1 between init and finalize */
	int index;
	struct plw_slot *slot;
	int kch_on;		/* KernelCh in the mask at init */
	/* the launching thread */
	_Alignas(PLW_LINE) _Atomic uint64_t coll_next;
	/* The AllGather run in progress (record.h), touched only by the
	 * writer holding the launch part. */
	uint64_t ag_bytes, ag_calls, ag_top;
	uint64_t burst_ops;	/* g_p2p_ops at the last collective entered
				 * (the writer holding the launch part) */
	/* NCCL's names are static strings: the last one of each written to
	 * the launch part (the writer holding it), so that the same pointer
	 * again is not copied again, and the func's text */
	const char *func_src, *dtype_src, *algo_src, *proto_src;
	union plw_text func_text;
	/* the proxy thread */
	_Alignas(PLW_LINE) _Atomic uint64_t kch_next;
	uint64_t last_done_ns;	/* the previous completion */
	/* the first p2p's start, the end of the p2p time counted so far */
	uint64_t p2p_first_ns, p2p_covered_ns;
	uint64_t p2p_at_done;	/* g_p2p_total at the previous completion */
	_Alignas(PLW_LINE) char end[1];	/* the next context's lines are its own */
};

/* Everything lives here, so a handle or context is checked by address. */
static struct plw_ctx g_ctx[PLW_MAX_COMMS];
static struct plw_ev g_coll[PLW_MAX_COMMS][PLW_COLL_POOL];
static struct plw_kch g_kch[PLW_MAX_COMMS][PLW_KCH_POOL];
static struct plw_ev g_api = { .kind = EV_API };

enum { REC_UNTRIED = 0, REC_ACTIVE = 1, REC_OFF = 2 };

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_rec_state;
static struct plw_record *g_rec;	/* NULL unless REC_ACTIVE */
/* The process's p2p time so far, every communicator's (record.h's p2p
 * time, added as each transfer completes): what of a collective's gap the
 * rank spent in the pipeline's transfers (plw_gpu.ring_p2p). */
static _Atomic uint64_t g_p2p_total;
/* The process's p2p operations entered so far, every communicator's: a
 * collective entered after one of them starts a burst (plw_launch.bursts). */
static _Atomic uint64_t g_p2p_ops;
static int g_mask;
static pid_t g_pid;
static _Atomic int g_said_slots;	/* "no free slot" said once */
static _Atomic int g_said_on;		/* "recording to" said once */
static _Atomic int g_live_comms;	/* initialised, not finalized */

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void __attribute__((format(printf, 3, 4)))
say(plw_nccl_logger_t logfn, plw_nccl_log_level_t level, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	if (!logfn)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	logfn(level, PLW_NCCL_SUBSYS_INIT | PLW_NCCL_SUBSYS_PROFILE, __FILE__,
	    __LINE__, "parallel-layout watch: %s", text);
}

/* ---- the record ------------------------------------------------------- */

/* A decimal environment value, or dflt when unset or not a number. */
static long long
env_num(const char *name, long long dflt)
{
	const char *v = getenv(name);
	char *end;
	long long n;

	if (!v || !*v)
		return dflt;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || *end)
		return dflt;
	return n;
}

/* The event mask from PARALLEL_LAYOUT_WATCH_MASK, or -1 (said why). */
static int
env_mask(plw_nccl_logger_t logfn)
{
	const char *v = getenv("PARALLEL_LAYOUT_WATCH_MASK");
	char *end;
	long n;

	if (!v || !*v)
		return PLW_DEFAULT_MASK;
	errno = 0;
	n = strtol(v, &end, 0);
	if (errno || *end || n < 0 || n > PLW_MASK_ALL) {
		say(logfn, PLW_NCCL_LOG_WARN, "off: PARALLEL_LAYOUT_WATCH_MASK="
		    "'%.64s' is not an event mask (a number from 0 to 0x%x, "
		    "e.g. 0x%x)", v, PLW_MASK_ALL, PLW_DEFAULT_MASK);
		return -1;
	}
	return (int)n;
}

/*
 * Continue a record this process made before the library was unloaded:
 * ours (owner, pid), a regular file of the right size, a header we know.
 */
static struct plw_record *
rec_reopen(const char *path)
{
	struct plw_record *r;
	struct stat st;
	int fd;

	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) ||
	    st.st_size != (off_t)sizeof(struct plw_record)) {
		close(fd);
		return NULL;
	}
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r == MAP_FAILED)
		return NULL;
	if (plw_check_header(&r->hdr, sizeof(*r)) < 0 ||
	    r->hdr.pid != (int64_t)getpid()) {
		munmap(r, sizeof(*r));
		return NULL;
	}
	return r;
}

/* Create (or continue) the record; on failure say why once and return -1. */
static int
rec_open(plw_nccl_logger_t logfn, int abi)
{
	const char *dir = getenv("PARALLEL_LAYOUT_WATCH_DIR");
	long long job, step, rank;
	struct plw_record *r;
	struct rlimit rl;
	char path[4096];
	int fd, n, mask, e;

	if (!dir || !*dir) {
		say(logfn, PLW_NCCL_LOG_WARN, "off: PARALLEL_LAYOUT_WATCH_DIR "
		    "is not set (it names the directory for this rank's "
		    "record)");
		return -1;
	}
	mask = env_mask(logfn);
	if (mask < 0)
		return -1;
	if (mask == 0) {
		say(logfn, PLW_NCCL_LOG_INFO, "off: "
		    "PARALLEL_LAYOUT_WATCH_MASK is 0");
		return -1;
	}
	/* A file past the size limit raises SIGXFSZ, which kills. */
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < sizeof(*r)) {
		say(logfn, PLW_NCCL_LOG_WARN, "off: the file size limit "
		    "(ulimit -f) of %llu bytes is below the record's %zu",
		    (unsigned long long)rl.rlim_cur, sizeof(*r));
		return -1;
	}
	job = env_num("SLURM_JOB_ID", 0);
	step = env_num("SLURM_STEP_ID", 0);
	rank = env_num("RANK", env_num("SLURM_PROCID", -1));
	g_pid = getpid();
	n = snprintf(path, sizeof(path), "%s/" PLW_FILE_PREFIX
	    "%lld.%lld.%lld.%ld", dir, job, step, rank, (long)g_pid);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		say(logfn, PLW_NCCL_LOG_WARN, "off: PARALLEL_LAYOUT_WATCH_DIR "
		    "'%.64s...' is too long (at most %zu bytes)", dir,
		    sizeof(path) - 64);
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0 && errno == EEXIST) {
		r = rec_reopen(path);
		if (r) {
			g_rec = r;
			g_mask = (int)r->hdr.event_mask;
			return 0;
		}
		errno = EEXIST;
	}
	if (fd < 0) {
		e = errno;
		say(logfn, PLW_NCCL_LOG_WARN, "off: cannot create the record "
		    "'%.200s': %s (the directory must exist, be writable, "
		    "and not hold a file of that name)", path, strerror(e));
		return -1;
	}
	/* Reserve the blocks now: a full tmpfs must fail here, not raise
	 * SIGBUS at the first store into the mapping. */
	e = ftruncate(fd, sizeof(*r)) < 0 ? errno :
	    posix_fallocate(fd, 0, sizeof(*r));
	if (e != 0) {
		say(logfn, PLW_NCCL_LOG_WARN, "off: cannot size the record "
		    "'%.200s' to %zu bytes: %s", path, sizeof(*r), strerror(e));
		unlink(path);
		close(fd);
		return -1;
	}
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	e = errno;
	close(fd);
	if (r == MAP_FAILED) {
		say(logfn, PLW_NCCL_LOG_WARN, "off: cannot map the record "
		    "'%.200s': %s", path, strerror(e));
		unlink(path);
		return -1;
	}
	r->hdr.version = PLW_VERSION;
	r->hdr.header_size = sizeof(struct plw_header);
	r->hdr.slot_size = sizeof(struct plw_slot);
	r->hdr.nslots = PLW_MAX_COMMS;
	r->hdr.record_size = sizeof(struct plw_record);
	r->hdr.job_id = (uint64_t)job;
	r->hdr.step_id = (uint64_t)step;
	r->hdr.rank = rank;
	r->hdr.pid = g_pid;
	r->hdr.start_mono_ns = now_ns();
	r->hdr.start_real_ns = real_ns();
	r->hdr.event_mask = (uint64_t)mask;
	r->hdr.nccl_abi = (uint32_t)abi;
	__atomic_store_n(&r->hdr.state, PLW_STATE_ACTIVE, __ATOMIC_RELAXED);
	__atomic_store_n(&r->hdr.magic, PLW_MAGIC, __ATOMIC_RELEASE);
	g_rec = r;
	g_mask = mask;
	if (!atomic_exchange(&g_said_on, 1))
		say(logfn, PLW_NCCL_LOG_INFO, "recording to '%.200s' "
		    "(event mask 0x%x)", path, mask);
	return 0;
}

/* A forked child (a data-loader worker) shares the mapping: it must not
 * write into its parent's record.  glibc drops this handler when the
 * library is unloaded. */
static void
hook_forked(void)
{
	int i;

	for (i = 0; i < PLW_MAX_COMMS; i++)
		atomic_store_explicit(&g_ctx[i].live, 0, memory_order_relaxed);
	if (g_rec)
		munmap(g_rec, sizeof(*g_rec));
	g_rec = NULL;
	atomic_store(&g_rec_state, REC_OFF);
}

/* The library is being unloaded (NCCL dlcloses it after the last
 * communicator): drop the mapping; the file stays for layoutd. */
static void __attribute__((destructor))
hook_unload(void)
{
	if (g_rec)
		munmap(g_rec, sizeof(*g_rec));
	g_rec = NULL;
}

/* ---- init / finalize -------------------------------------------------- */

static plw_nccl_result_t
hook_init(void **context, uint64_t comm_hash, int *mask, const char *name,
    int nnodes, int nranks, int rank, plw_nccl_logger_t logfn, int abi)
{
	struct plw_ident *id;
	struct plw_ctx *c;
	uint64_t idx;
	int state;

	if (context)
		*context = NULL;
	if (!context || !mask)
		return PLW_NCCL_SUCCESS;
	pthread_mutex_lock(&g_lock);
	state = atomic_load(&g_rec_state);
	if (state == REC_UNTRIED) {
		state = rec_open(logfn, abi) == 0 ? REC_ACTIVE : REC_OFF;
		if (state == REC_ACTIVE)
			pthread_atfork(NULL, NULL, hook_forked);
		atomic_store(&g_rec_state, state);
	}
	pthread_mutex_unlock(&g_lock);
	if (state != REC_ACTIVE) {
		*mask = 0;
		return PLW_NCCL_SUCCESS;
	}
	*mask = g_mask;
	idx = __atomic_fetch_add(&g_rec->hdr.slots_taken, 1, __ATOMIC_RELAXED);
	if (idx >= PLW_MAX_COMMS) {
		plw_count(&g_rec->hdr.comms_dropped);
		if (!atomic_exchange(&g_said_slots, 1))
			say(logfn, PLW_NCCL_LOG_WARN, "communicator %#" PRIx64
			    " (and later ones) not recorded: all %d slots of "
			    "the record are taken", comm_hash, PLW_MAX_COMMS);
		return PLW_NCCL_SUCCESS;
	}
	c = &g_ctx[idx];
	c->index = (int)idx;
	c->slot = &g_rec->slot[idx];
	c->kch_on = (g_mask & PLW_NCCL_EV_KERNEL_CH) != 0;
	atomic_store_explicit(&c->coll_next, 0, memory_order_relaxed);
	atomic_store_explicit(&c->kch_next, 0, memory_order_relaxed);
	c->last_done_ns = 0;
	c->ag_bytes = c->ag_calls = c->ag_top = 0;
	c->func_src = c->dtype_src = c->algo_src = c->proto_src = NULL;
	c->p2p_first_ns = c->p2p_covered_ns = 0;
	c->burst_ops = atomic_load_explicit(&g_p2p_ops, memory_order_relaxed);
	id = &c->slot->ident;
	plw_write_begin(&id->seq);
	plw_st64(&id->comm_hash, comm_hash);
	plw_st_text(id->name.w, sizeof(id->name), name);
	plw_st32(&id->rank, rank);
	plw_st32(&id->nranks, nranks);
	plw_st32(&id->nnodes, nnodes);
	plw_st32(&id->state, (uint32_t)PLW_SLOT_ACTIVE);
	plw_st64(&id->init_ns, now_ns());
	plw_write_end(&id->seq);
	atomic_store_explicit(&c->live, 1, memory_order_release);
	if (atomic_fetch_add(&g_live_comms, 1) == 0) {
		__atomic_store_n(&g_rec->hdr.off_reason, PLW_OFF_NONE,
		    __ATOMIC_RELAXED);
		__atomic_store_n(&g_rec->hdr.state, PLW_STATE_ACTIVE,
		    __ATOMIC_RELEASE);
	}
	*context = c;
	return PLW_NCCL_SUCCESS;
}

static plw_nccl_result_t
hook_init_v5(void **context, uint64_t comm_id, int *mask, const char *name,
    int nnodes, int nranks, int rank, plw_nccl_logger_t logfn)
{
	return hook_init(context, comm_id, mask, name, nnodes, nranks, rank,
	    logfn, 5);
}

static plw_nccl_result_t
hook_init_v4(void **context, int *mask, const char *name, uint64_t hash,
    int nnodes, int nranks, int rank, plw_nccl_logger_t logfn)
{
	return hook_init(context, hash, mask, name, nnodes, nranks, rank,
	    logfn, 4);
}

/* The context if it is one of ours and live, else NULL (counted). */
static struct plw_ctx *
ctx_check(void *p)
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)g_ctx;
	struct plw_ctx *c;

	if (off >= sizeof(g_ctx) || off % sizeof(g_ctx[0]))
		goto bad;
	c = p;
	if (atomic_load_explicit(&c->live, memory_order_acquire) != 1)
		goto bad;
	return c;
bad:
	if (g_rec)
		plw_count(&g_rec->hdr.bad_context);
	return NULL;
}

static plw_nccl_result_t
hook_finalize(void *context)
{
	struct plw_ctx *c = ctx_check(context);
	struct plw_ident *id;

	if (!c)
		return PLW_NCCL_SUCCESS;
	atomic_store_explicit(&c->live, 0, memory_order_release);
	id = &c->slot->ident;
	plw_write_begin(&id->seq);
	plw_st32(&id->state, (uint32_t)PLW_SLOT_FINALIZED);
	plw_st64(&id->fini_ns, now_ns());
	plw_write_end(&id->seq);
	/* The last one: the process is done with NCCL for now. */
	if (atomic_fetch_sub(&g_live_comms, 1) == 1 && g_rec) {
		__atomic_store_n(&g_rec->hdr.off_reason, PLW_OFF_FINALIZED,
		    __ATOMIC_RELAXED);
		__atomic_store_n(&g_rec->hdr.state, PLW_STATE_OFF,
		    __ATOMIC_RELEASE);
	}
	return PLW_NCCL_SUCCESS;
}

/* ---- the launching thread: Coll and P2p ------------------------------- */

/* Take the next Coll/P2p handle of c's ring, or NULL when the ring is full
 * of collectives NCCL has not stopped yet. */
static struct plw_ev *
coll_get(struct plw_ctx *c)
{
	int p;

	for (p = 0; p < PLW_PROBES; p++) {
		/* Not a fetch-add: two threads taking one index both try the
		 * same entry, and the compare-and-swap lets only one have it. */
		uint64_t i = atomic_load_explicit(&c->coll_next,
		    memory_order_relaxed);
		struct plw_ev *e = &g_coll[c->index][i % PLW_COLL_POOL];
		uint32_t s = atomic_load_explicit(&e->state,
		    memory_order_relaxed);

		atomic_store_explicit(&c->coll_next, i + 1,
		    memory_order_relaxed);

		/* A PENDING entry a whole ring old lost its channels (or they
		 * never came): reuse it; the generation fences off late ones. */
		if (s == ST_LIVE)
			continue;
		if (!atomic_compare_exchange_strong_explicit(&e->state, &s,
		    ST_LIVE, memory_order_acquire, memory_order_relaxed))
			continue;
		atomic_store_explicit(&e->gen, atomic_load_explicit(&e->gen,
		    memory_order_relaxed) + 1, memory_order_relaxed);
		e->ctx = c;
		atomic_store_explicit(&e->ch_started, 0, memory_order_relaxed);
		atomic_store_explicit(&e->ch_stopped, 0, memory_order_relaxed);
		atomic_store_explicit(&e->gpu_start, UINT64_MAX,
		    memory_order_relaxed);
		atomic_store_explicit(&e->gpu_stop, 0, memory_order_relaxed);
		return e;
	}
	if (g_rec)
		plw_count(&g_rec->hdr.events_dropped);
	return NULL;
}

/*
 * The AllGather run (record.h) after a collective func of count entered,
 * inside the launch part's write: a few compares and stores.  A run's
 * bytes stop growing at UINT64_MAX rather than wrap.
 */
static void
ag_note(struct plw_ctx *c, struct plw_launch *l, const union plw_text *func,
    uint64_t count)
{
	static const union plw_text ag = { .c = "AllGather" };

	if (func->w[0] != ag.w[0] || func->w[1] != ag.w[1]) {
		if (c->ag_calls)	/* (no store on the common path) */
			c->ag_bytes = c->ag_calls = c->ag_top = 0;
		return;
	}
	c->ag_bytes = count > UINT64_MAX - c->ag_bytes ? UINT64_MAX :
	    c->ag_bytes + count;
	c->ag_calls++;
	if (count > c->ag_top)
		c->ag_top = count;
	if (c->ag_bytes > plw_ld64(&l->ag_peak_bytes)) {
		plw_st64(&l->ag_peak_bytes, c->ag_bytes);
		plw_st64(&l->ag_peak_calls, c->ag_calls);
		plw_st64(&l->ag_peak_top, c->ag_top);
	}
}

/* Whether func reduces (AllReduce, ReduceScatter): a gradient sync, what
 * a step's bursts count (an AllGather of parameters, FSDP's before its
 * forward pass, is not one). */
static int
grad_sync(const union plw_text *func)
{
	static const union plw_text ar = { .c = "AllReduce" }, rs = { .c = "ReduceScatter" };

	return func->w[0] == ar.w[0] ? func->w[1] == ar.w[1] :
	       func->w[0] == rs.w[0] && func->w[1] == rs.w[1];
}

/* Text s into the launch part's field w of len bytes, unless it is the
 * string *src written there last (NCCL's names are static: the same
 * pointer, the same text).  The writer holding the launch part only. */
static inline void
launch_text(uint64_t *w, size_t len, const char **src, const char *s)
{
	if (s && s == *src)
		return;
	plw_st_text(w, len, s);
	*src = s;
}

static void
coll_start(struct plw_ctx *c, void **h, const plw_nccl_descr_v5_t *d)
{
	struct plw_launch *l = &c->slot->launch;
	struct plw_ev *e = coll_get(c);
	uint64_t t = now_ns();
	union plw_text func;
	int held = plw_write_try_begin(&l->seq) == 0;

	/* the func's text: the last one's again when it is the same name */
	if (held && d->coll.func && d->coll.func == c->func_src) {
		func = c->func_text;
	} else {
		plw_st_text(func.w, sizeof(func), d->coll.func);
		if (held) {
			c->func_src = d->coll.func;
			c->func_text = func;
		}
	}
	if (e) {
		e->kind = EV_COLL;
		e->seq_number = d->coll.seqNumber;
		e->enqueue_ns = t;
		e->p2p_at_enqueue = atomic_load_explicit(&g_p2p_total, memory_order_relaxed);
		e->nchannels = d->coll.nChannels;
		e->func = func;
		*h = e;
	}
	if (!held) {
		plw_count(&g_rec->hdr.events_busy);
		return;
	}
	plw_st64(&l->colls, plw_ld64(&l->colls) + 1);
	plw_st64(&l->seq_number, d->coll.seqNumber);
	plw_st64(&l->count, d->coll.count);
	plw_st64(&l->enqueue_ns, t);
	plw_st32(&l->root, d->coll.root);
	plw_st32(&l->nchannels, (uint32_t)d->coll.nChannels);
	plw_st64(&l->func.w[0], func.w[0]);
	plw_st64(&l->func.w[1], func.w[1]);
	launch_text(l->datatype.w, sizeof(l->datatype), &c->dtype_src, d->coll.datatype);
	launch_text(l->algo.w, sizeof(l->algo), &c->algo_src, d->coll.algo);
	launch_text(l->proto.w, sizeof(l->proto), &c->proto_src, d->coll.proto);
	ag_note(c, l, &func, d->coll.count);
	if (grad_sync(&func)) {
		uint64_t ops = atomic_load_explicit(&g_p2p_ops, memory_order_relaxed);

		if (ops != c->burst_ops) {
			c->burst_ops = ops;
			plw_st64(&l->bursts, plw_ld64(&l->bursts) + 1);
		}
	}
	plw_write_end(&l->seq);
}

static void
p2p_start(struct plw_ctx *c, void **h, const plw_nccl_descr_v5_t *d,
    int nchannels)
{
	struct plw_launch *l = &c->slot->launch;
	struct plw_ev *e = coll_get(c);
	uint64_t t = now_ns();
	int send = d->p2p.func && d->p2p.func[0] == 'S';
	unsigned b = (unsigned)d->p2p.peer % PLW_PEER_BUCKETS;

	atomic_fetch_add_explicit(&g_p2p_ops, 1, memory_order_relaxed);
	if (e) {
		e->kind = EV_P2P;
		e->seq_number = 0;
		e->enqueue_ns = t;
		e->nchannels = (uint32_t)nchannels;
		memset(&e->func, 0, sizeof(e->func));
		*h = e;
	}
	if (plw_write_try_begin(&l->seq) < 0) {
		plw_count(&g_rec->hdr.events_busy);
		return;
	}
	plw_st64(&l->p2ps, plw_ld64(&l->p2ps) + 1);
	plw_st64(&l->p2p_ns, t);
	plw_st32(&l->p2p_peer, d->p2p.peer);
	plw_st32(&l->p2p_is_send, (uint32_t)send);
	plw_st64(&l->p2p_count, d->p2p.count);
	if (send)
		plw_st64(&l->sends[b], plw_ld64(&l->sends[b]) + 1);
	else
		plw_st64(&l->recvs[b], plw_ld64(&l->recvs[b]) + 1);
	plw_write_end(&l->seq);
}

/* Coll/P2p stop: enqueued.  The handle stays until its channels finish
 * when KernelCh is on. */
static void
coll_stop(struct plw_ev *e)
{
	uint32_t s = atomic_load_explicit(&e->state, memory_order_acquire);

	if (s == ST_LIVE && e->ctx->kch_on &&
	    atomic_compare_exchange_strong_explicit(&e->state, &s, ST_PENDING,
	    memory_order_acq_rel, memory_order_acquire))
		return;
	if (s == ST_LIVE || s == ST_EARLY) {
		atomic_store_explicit(&e->state, ST_FREE, memory_order_release);
		return;
	}
	if (g_rec)
		plw_count(&g_rec->hdr.bad_handle);	/* stopped twice */
}

/* ---- the proxy thread: KernelCh --------------------------------------- */

static void
kch_start(struct plw_ctx *c, void **h, const plw_nccl_descr_v5_t *d)
{
	uintptr_t off = (uintptr_t)d->parentObj - (uintptr_t)g_coll[c->index];
	struct plw_gpu *g = &c->slot->gpu;
	struct plw_ev *p = d->parentObj;
	struct plw_kch *k = NULL;
	uint32_t n;
	int i;

	if (off >= sizeof(g_coll[0]) || off % sizeof(struct plw_ev) ||
	    atomic_load_explicit(&p->state, memory_order_relaxed) == ST_FREE) {
		plw_count(&g_rec->hdr.bad_handle);
		return;
	}
	/* KernelCh events of one communicator come from one thread alone
	 * (its proxy thread up to NCCL 2.30, its profiler thread in 2.31,
	 * which may serve several communicators but each from that thread
	 * only): its ring and the channel counters need no read-modify-write
	 * instructions. */
	for (i = 0; i < PLW_PROBES && !k; i++) {
		uint64_t j = atomic_load_explicit(&c->kch_next,
		    memory_order_relaxed);

		atomic_store_explicit(&c->kch_next, j + 1, memory_order_relaxed);
		k = &g_kch[c->index][j % PLW_KCH_POOL];
		if (atomic_load_explicit(&k->live, memory_order_relaxed))
			k = NULL;
	}
	if (!k) {
		plw_count(&g_rec->hdr.events_dropped);
		return;
	}
	atomic_store_explicit(&k->live, 1, memory_order_relaxed);
	k->kind = EV_KCH;
	k->ctx = c;
	k->parent = p;
	k->parent_gen = atomic_load_explicit(&p->gen, memory_order_relaxed);
	k->gpu_start = d->kernelCh.pTimer;
	k->gpu_stop = 0;
	*h = k;
	n = atomic_load_explicit(&p->ch_started, memory_order_relaxed);
	atomic_store_explicit(&p->ch_started, n + 1, memory_order_relaxed);
	plw_write_begin(&g->seq);
	plw_st64(&g->ch_started, plw_ld64(&g->ch_started) + 1);
	if (n == 0) {
		plw_st64(&g->progress_ns, now_ns());
		plw_st64(&g->start_seq_number, p->seq_number);
	}
	plw_write_end(&g->seq);
}

/*
 * A p2p operation of [start, t] completed (record.h: p2p time).  Taken in
 * completion order, its time not yet counted is what lies after both its
 * start and the end counted so far: overlapping sends and receives (a
 * 1F1B stage's) count once.
 */
static void
p2p_time(struct plw_ctx *c, struct plw_gpu *g, uint64_t start, uint64_t t)
{
	uint64_t from = start > c->p2p_covered_ns ? start : c->p2p_covered_ns;

	if (!c->p2p_first_ns || start < c->p2p_first_ns)
		c->p2p_first_ns = start;
	if (t > from) {
		plw_st64(&g->p2p_wait_ns, plw_ld64(&g->p2p_wait_ns) + (t - from));
		atomic_fetch_add_explicit(&g_p2p_total, t - from, memory_order_relaxed);
	}
	if (t > c->p2p_covered_ns)
		c->p2p_covered_ns = t;
	if (t > c->p2p_first_ns)
		plw_st64(&g->p2p_span_ns, t - c->p2p_first_ns);
}

/* The last channel of p stopped: it is complete on the GPU. */
static void
coll_done(struct plw_ctx *c, struct plw_ev *p, struct plw_gpu *g)
{
	uint64_t t = now_ns(), n, gap, pw;
	struct plw_wait *w;
	uint32_t s;

	if (p->kind == EV_P2P) {
		plw_st64(&g->p2p_done, plw_ld64(&g->p2p_done) + 1);
		p2p_time(c, g, p->enqueue_ns, t);
	} else {
		n = plw_ld64(&g->done) + 1;
		gap = c->last_done_ns && p->enqueue_ns > c->last_done_ns ?
		    p->enqueue_ns - c->last_done_ns : 0;
		w = &g->ring[(n - 1) % PLW_RING];
		plw_st64(&w->seq_number, p->seq_number);
		plw_st64(&w->enqueue_ns, p->enqueue_ns);
		plw_st64(&w->wait_ns, t > p->enqueue_ns ? t - p->enqueue_ns : 0);
		plw_st64(&w->gap_ns, gap);
		/* the pipeline's transfers done between the previous completion
		 * and this enqueue (0 when they overlap: no gap) */
		pw = gap && p->p2p_at_enqueue > c->p2p_at_done ?
		    p->p2p_at_enqueue - c->p2p_at_done : 0;
		plw_st64(&g->ring_p2p[(n - 1) % PLW_RING], pw < gap ? pw : gap);
		plw_st64(&g->done, n);
		plw_st64(&g->done_seq_number, p->seq_number);
		plw_st64(&g->done_enqueue_ns, p->enqueue_ns);
		plw_st64(&g->done_ns, t);
		plw_st64(&g->gpu_start_ns, atomic_load_explicit(&p->gpu_start,
		    memory_order_relaxed));
		plw_st64(&g->gpu_stop_ns, atomic_load_explicit(&p->gpu_stop,
		    memory_order_relaxed));
		plw_st64(&g->done_func.w[0], p->func.w[0]);
		plw_st64(&g->done_func.w[1], p->func.w[1]);
		c->last_done_ns = t;
		c->p2p_at_done = atomic_load_explicit(&g_p2p_total, memory_order_relaxed);
	}
	plw_st64(&g->progress_ns, t);
	/* Free the handle, or tell its Coll stop to. */
	s = ST_PENDING;
	if (atomic_compare_exchange_strong_explicit(&p->state, &s, ST_FREE,
	    memory_order_acq_rel, memory_order_relaxed))
		return;
	s = ST_LIVE;
	atomic_compare_exchange_strong_explicit(&p->state, &s, ST_EARLY,
	    memory_order_acq_rel, memory_order_relaxed);
}

static void
kch_stop(struct plw_kch *k)
{
	struct plw_ctx *c = k->ctx;
	struct plw_ev *p = k->parent;
	struct plw_gpu *g = &c->slot->gpu;
	uint32_t stopped, target;

	atomic_store_explicit(&k->live, 0, memory_order_relaxed);
	if (atomic_load_explicit(&p->gen, memory_order_relaxed) !=
	    k->parent_gen) {
		plw_count(&g_rec->hdr.bad_handle);	/* its Coll was reused */
		return;
	}
	if (k->gpu_start < atomic_load_explicit(&p->gpu_start,
	    memory_order_relaxed))
		atomic_store_explicit(&p->gpu_start, k->gpu_start,
		    memory_order_relaxed);
	if (k->gpu_stop > atomic_load_explicit(&p->gpu_stop,
	    memory_order_relaxed))
		atomic_store_explicit(&p->gpu_stop, k->gpu_stop,
		    memory_order_relaxed);
	stopped = atomic_load_explicit(&p->ch_stopped, memory_order_relaxed) + 1;
	atomic_store_explicit(&p->ch_stopped, stopped, memory_order_relaxed);
	target = p->nchannels ? p->nchannels :
	    atomic_load_explicit(&p->ch_started, memory_order_relaxed);
	plw_write_begin(&g->seq);
	plw_st64(&g->ch_stopped, plw_ld64(&g->ch_stopped) + 1);
	if (stopped == target)
		coll_done(c, p, g);
	plw_write_end(&g->seq);
}

/* ---- the event functions ---------------------------------------------- */

static void
start_event(void *context, void **h, const plw_nccl_descr_v5_t *d,
    int p2p_nchannels)
{
	struct plw_ctx *c;

	/* PXN: a ProxyOp of another process carries that process's
	 * pointers; look at nothing but its pid. */
	if (d->type == PLW_NCCL_EV_PROXY_OP && d->proxyOp.pid != g_pid) {
		if (g_rec)
			plw_count(&g_rec->hdr.foreign_events);
		return;
	}
	c = ctx_check(context);
	if (!c)
		return;
	switch (d->type) {
	case PLW_NCCL_EV_GROUP_API:
	case PLW_NCCL_EV_COLL_API:
	case PLW_NCCL_EV_P2P_API:
	case PLW_NCCL_EV_KERNEL_LAUNCH:
	case PLW_NCCL_EV_GROUP:
		/* One static handle: nothing to record, nothing to free, so
		 * a stale handle stopped again and again is harmless. */
		*h = &g_api;
		break;
	case PLW_NCCL_EV_COLL:
		coll_start(c, h, d);
		break;
	case PLW_NCCL_EV_P2P:
		p2p_start(c, h, d, p2p_nchannels);
		break;
	case PLW_NCCL_EV_KERNEL_CH:
		kch_start(c, h, d);
		break;
	default:
		break;	/* proxy, net plugin, unknown: not recorded */
	}
}

static plw_nccl_result_t
hook_start_v5(void *context, void **h, plw_nccl_descr_v5_t *d)
{
	if (!h)
		return PLW_NCCL_SUCCESS;
	*h = NULL;
	if (d)
		start_event(context, h, d, d->type == PLW_NCCL_EV_P2P ?
		    d->p2p.nChannels : 0);
	return PLW_NCCL_SUCCESS;
}

/* v4: the same fields at the same places but for the one-byte type and
 * the missing parentGroup; p2p.nChannels may be garbage under 2.28's
 * adapter, so it is not trusted. */
static plw_nccl_result_t
hook_start_v4(void *context, void **h, plw_nccl_descr_v4_t *d4)
{
	plw_nccl_descr_v5_t d;

	if (!h)
		return PLW_NCCL_SUCCESS;
	*h = NULL;
	if (!d4)
		return PLW_NCCL_SUCCESS;
	d.type = d4->type;
	d.parentObj = d4->parentObj;
	d.rank = d4->rank;
	switch (d4->type) {
	case PLW_NCCL_EV_COLL:
		d.coll.seqNumber = d4->coll.seqNumber;
		d.coll.func = d4->coll.func;
		d.coll.count = d4->coll.count;
		d.coll.root = d4->coll.root;
		d.coll.datatype = d4->coll.datatype;
		d.coll.nChannels = d4->coll.nChannels;
		d.coll.algo = d4->coll.algo;
		d.coll.proto = d4->coll.proto;
		break;
	case PLW_NCCL_EV_P2P:
		d.p2p.func = d4->p2p.func;
		d.p2p.count = d4->p2p.count;
		d.p2p.peer = d4->p2p.peer;
		break;
	case PLW_NCCL_EV_PROXY_OP:
		d.proxyOp.pid = d4->proxyOp.pid;
		break;
	case PLW_NCCL_EV_KERNEL_CH:
		d.kernelCh.channelId = d4->kernelCh.channelId;
		d.kernelCh.pTimer = d4->kernelCh.pTimer;
		break;
	case PLW_NCCL_EV_GROUP:
		break;
	default:
		return PLW_NCCL_SUCCESS;
	}
	start_event(context, h, &d, 0);
	return PLW_NCCL_SUCCESS;
}

static plw_nccl_result_t
hook_stop(void *h)
{
	uintptr_t co = (uintptr_t)h - (uintptr_t)g_coll;
	uintptr_t ko = (uintptr_t)h - (uintptr_t)g_kch;

	if (h == &g_api)
		return PLW_NCCL_SUCCESS;
	if (co < sizeof(g_coll) && co % sizeof(struct plw_ev) == 0)
		coll_stop(h);
	else if (ko < sizeof(g_kch) && ko % sizeof(struct plw_kch) == 0 &&
	    atomic_load_explicit(&((struct plw_kch *)h)->live,
	    memory_order_relaxed))
		kch_stop(h);
	else if (h && g_rec)
		plw_count(&g_rec->hdr.bad_handle);
	return PLW_NCCL_SUCCESS;
}

static plw_nccl_result_t
hook_state(void *h, plw_nccl_state_t state, plw_nccl_state_args_v5_t *a)
{
	uintptr_t ko = (uintptr_t)h - (uintptr_t)g_kch;

	if (state == PLW_NCCL_STATE_KERNEL_CH_STOP && a &&
	    ko < sizeof(g_kch) && ko % sizeof(struct plw_kch) == 0)
		((struct plw_kch *)h)->gpu_stop = a->kernelCh.pTimer;
	return PLW_NCCL_SUCCESS;
}

/* The two tables NCCL looks up; nothing else is exported. */
plw_nccl_profiler_v5_t ncclProfiler_v5 = {
	.name = "parallel-layout",
	.init = hook_init_v5,
	.startEvent = hook_start_v5,
	.stopEvent = hook_stop,
	.recordEventState = hook_state,
	.finalize = hook_finalize,
};

plw_nccl_profiler_v4_t ncclProfiler_v4 = {
	.name = "parallel-layout",
	.init = hook_init_v4,
	.startEvent = hook_start_v4,
	.stopEvent = hook_stop,
	.recordEventState = hook_state,
	.finalize = hook_finalize,
};
