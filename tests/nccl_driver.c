/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nccl_driver: a stand-in for NCCL 2.28 that drives the profiler hook the
 * way the library does, without a GPU.
 *
 * It loads the hook as NCCL does (NCCL_PROFILER_PLUGIN, RTLD_NOW|RTLD_LOCAL,
 * the data symbol ncclProfiler_v5, then ncclProfiler_v4), creates the
 * communicators of a Megatron training step from the rank environment
 * (RANK, WORLD_SIZE, PARALLEL_LAYOUT_TP/CP/DP/PP; tp fastest, then cp, dp,
 * pp), and runs a training-like loop: per layer a TP all-reduce, PP
 * send/recv at stage boundaries, a DP all-reduce per step.  Each operation
 * goes through the event sequence NCCL 2.28 emits on the user thread; each
 * communicator's "proxy" thread emits the kernel-channel events when the
 * operation completes.
 *
 * Ranks are processes.  Operations really synchronise: every rank of the
 * job on this machine maps one shared file (under --sync-dir) in which each
 * rank counts the operations it entered per communicator; an operation
 * completes, and its kernel channels stop, only when every member has
 * entered it.  So a missing rank leaves its peers inside the operation with
 * channels started and not stopped.  Every wait is bounded by --timeout.
 *
 * Patterns beside the faults: --microbatches M runs M micro-batches a
 * step through the pipeline (the bubble shrinks as M grows), in the order
 * --schedule says: GPipe (all forwards, then all backwards), Megatron's
 * 1F1B, or its interleaved 1F1B with --vpp chunks a stage (the p2p ring
 * wrapping from the last stage to the first), their transfers to the
 * next and previous stage grouped in one ncclGroupStart/End as Megatron
 * batches them (a group's operations posted together, done when all
 * are); --fsdp root:MIB gathers a model's parameters
 * on the DP group in one AllGather before each forward pass (FSDP wrapping
 * only the root module), --fsdp block:MIB in one per layer; a rank's node
 * is SLURMD_NODENAME (else the host name), so ranks given names that split
 * a TP group make a TP communicator whose init counts two nodes, as one
 * built across nodes does.
 *
 * Exit status: 0 healthy; 3 an operation timed out (after aborting the
 * communicators as PyTorch's watchdog does) or this rank was told to stop;
 * the --fault=exit status; 2 bad usage or set-up.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nccl_profiler_abi.h"
#include "record.h"

#define PROG "nccl_driver"
#define MAX_WORLD 4096
#define MAX_COMMS 5
#define MAX_FAULTS 8
#define MAX_CHANNELS 32
#define MAX_BATCH 4	/* p2p operations in one group (Megatron's most) */
#define SYNC_MAGIC UINT64_C(0x4e43434c44525631)	/* "NCCLDRV1" */

/* Mask groups: an event is emitted when its bit or a descendant's is set
 * (NCCL checks "this event or any event below it"). */
#define M_BELOW_TASK (PLW_NCCL_EV_PROXY_OP | PLW_NCCL_EV_PROXY_STEP | \
	PLW_NCCL_EV_KERNEL_CH | PLW_NCCL_EV_NET_PLUGIN)
#define M_COLL (PLW_NCCL_EV_COLL | M_BELOW_TASK)
#define M_P2P (PLW_NCCL_EV_P2P | M_BELOW_TASK)
#define M_COLL_API (PLW_NCCL_EV_COLL_API | M_COLL)
#define M_P2P_API (PLW_NCCL_EV_P2P_API | M_P2P)
#define M_GROUP (PLW_NCCL_EV_GROUP | PLW_NCCL_EV_COLL | PLW_NCCL_EV_P2P | \
	M_BELOW_TASK)
#define M_GROUP_API (PLW_NCCL_EV_GROUP_API | PLW_NCCL_EV_COLL_API | \
	PLW_NCCL_EV_P2P_API | PLW_NCCL_EV_KERNEL_LAUNCH | M_GROUP)

enum axis { AX_TP, AX_CP, AX_DP, AX_PP, AX_N };
static const char *const axis_name[AX_N] = { "tp", "cp", "dp", "pp" };
static const char *const axis_env[AX_N] = {
	"PARALLEL_LAYOUT_TP", "PARALLEL_LAYOUT_CP", "PARALLEL_LAYOUT_DP",
	"PARALLEL_LAYOUT_PP"
};

enum fault_kind { F_STOP, F_SLOW, F_EXIT, F_STUCK, F_WEDGE, F_BUSY, F_MISMATCH, F_MISCOUNT,
	F_TAIL, F_FORGE };
struct fault {
	enum fault_kind kind;
	int rank;
	long arg;		/* step (stop, exit, stuck, wedge, busy) or percent (slow) */
	int status;		/* exit; seconds (busy, tail) */
	int mode;		/* busy: BUSY_BOTH, BUSY_CPU or BUSY_IO */
};

enum { BUSY_BOTH, BUSY_CPU, BUSY_IO };

enum func { FN_ALLREDUCE, FN_ALLGATHER, FN_REDUCESCATTER, FN_SEND, FN_RECV, FN_N };
static const char *const func_name[FN_N] = {
	"AllReduce", "AllGather", "ReduceScatter", "Send", "Recv"
};

/* --schedule: the pipeline's order of micro-batches. */
enum schedule { SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED };

/* --fsdp: how the model's parameters are gathered on the DP group. */
enum fsdp_mode { FSDP_OFF, FSDP_ROOT, FSDP_BLOCK };

/*
 * The shared segment: one writer per slot (the rank named by the index),
 * any number of readers.  Counters only grow, so "every member entered
 * operation n" stays true once seen.
 */
struct sync_rank {
	_Atomic uint64_t arrived;	/* 1 once attached */
	_Atomic uint64_t node;		/* hash of the node name */
	_Atomic uint64_t entered[MAX_COMMS];	/* collectives per comm */
};
struct sync_seg {
	uint64_t magic;
	uint64_t world;
	uint64_t pp;
	struct sync_rank rank[];	/* world of them, then the p2p matrix */
};
/* p2p[r][stage][0 send, 1 recv]: operations rank r posted to the pp stage. */

struct work {
	int busy;		/* 1 posted, 2 completed (the proxy's copy) */
	void *task;		/* the Coll/P2p handle (parent of KernelCh) */
	unsigned mask;		/* the task's activation mask */
	int nch;
	int stuck;		/* the kernel never completes */
	int wedge;		/* and yet it reached its peers */
	enum func fn;
	uint64_t target;	/* entered count every member must reach */
	int peer;		/* p2p: the peer's global rank */
};

struct comm {
	int idx;		/* slot in the shared counters */
	const char *name;
	int nranks, rank, nnodes;
	int members[MAX_WORLD];
	uint64_t id;
	void *ctx;
	uint64_t seq[FN_N];
	uint64_t entered;	/* my collectives on it */
	pthread_t proxy;
	int proxy_up;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct work w[MAX_BATCH];	/* the posted group's operations */
	int nw;
	int busy;		/* posted, not yet taken by the proxy */
	int done;		/* the posted work completed */
	int shutdown;
};

struct opts {
	int steps, layers, channels;
	long compute_us;
	int jitter_pct;
	int spike_pct;		/* --spike: a step this much slower ... */
	int spike_every;	/* ... on one step in this many, at random */
	unsigned long seed;
	double timeout_s;
	const char *sync_dir;
	int abi;		/* 0 auto, 4, 5 */
	int comm_names;
	const char *comm_prefix;	/* --comm-prefix: before each commName */
	size_t count;
	int net;		/* ProxyOp/ProxyStep per channel (network peers) */
	int pxn;		/* plus one ProxyOp from "another process" */
	int set_mask_step;	/* -1 none */
	int set_mask;
	int microbatches;	/* per step */
	enum schedule schedule;	/* their order (default GPipe) */
	int vpp;		/* model chunks per stage (interleaved), else 1 */
	enum fsdp_mode fsdp;
	uint64_t fsdp_bytes;	/* the model's parameters, bytes (all ranks) */
	struct fault faults[MAX_FAULTS];
	int nfaults;
};

static struct opts opt = {
	.steps = 10, .layers = 2, .channels = 2, .compute_us = 2000,
	.jitter_pct = 5, .seed = 1, .timeout_s = 10.0, .abi = 0,
	.comm_names = 1, .count = 1 << 20, .set_mask_step = -1, .microbatches = 1, .vpp = 1,
};

static int g_rank = -1, g_world, g_size[AX_N], g_co[AX_N];
static struct comm g_comm[MAX_COMMS];
static int g_ncomm;
static struct comm *g_ax[AX_N];	/* NULL when the axis has size 1 */
static struct comm *g_worldc;
static struct sync_seg *g_seg;
static size_t g_seg_len;
static int g_mask;		/* the process-wide activation mask */
static void *g_lib;
static int g_ver;		/* 5 or 4; 0 no hook */
static const plw_nccl_profiler_v5_t *g_v5;
static const plw_nccl_profiler_v4_t *g_v4;
static uint64_t g_rng;
static uint64_t g_colls, g_p2ps;
static uint64_t g_stale_stops;	/* stops of an already stopped CollApi */
static int g_step;
static void *g_foreign;	/* a page that faults: another process's pointers */

/* NCCL keeps the API handles per thread and never clears the CollApi one
 * (facts: the stale CollApi handle); so do we. */
static void *g_group_api, *g_coll_api, *g_p2p_api;

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t
gpu_timer(void)
{
	struct timespec t;

	/* %globaltimer counts ns since the epoch on most GPUs. */
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void
sleep_us(long us)
{
	struct timespec t = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&t, &t) == -1 && errno == EINTR)
		;
}

static uint64_t
rng_next(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

/* FNV-1a, 64 bit. */
static uint64_t
fnv1a(uint64_t h, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)

static void __attribute__((format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* NCCL's logger: the hook says what it must through this. */
static void __attribute__((format(printf, 5, 6)))
nccl_log(plw_nccl_log_level_t level, unsigned long flags, const char *file,
	 int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG "[%d]: NCCL log level %d flags %#lx: ", g_rank,
		(int)level, flags);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- the rank environment and the communicators ---- */

static long
env_long(const char *name, long dflt, long lo, long hi)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return dflt;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < lo || n > hi)
		die("%s=%.64s: expected an integer from %ld to %ld", name, v,
		    lo, hi);
	return n;
}

static void
read_env(void)
{
	long prod = 1;
	int a;

	g_world = (int)env_long("WORLD_SIZE", -1, 1, MAX_WORLD);
	g_rank = (int)env_long("RANK", -1, 0, MAX_WORLD - 1);
	if (g_world < 0 || g_rank < 0)
		die("RANK and WORLD_SIZE must be set (as the launcher sets them)");
	if (g_rank >= g_world)
		die("RANK=%d is not below WORLD_SIZE=%d", g_rank, g_world);
	for (a = 0; a < AX_N; a++) {
		if (a == AX_DP)
			continue;
		g_size[a] = (int)env_long(axis_env[a], 1, 1, MAX_WORLD);
		prod *= g_size[a];
	}
	if (g_world % prod)
		die("WORLD_SIZE=%d is not a multiple of tp*cp*pp=%ld", g_world,
		    prod);
	g_size[AX_DP] = (int)env_long(axis_env[AX_DP], g_world / prod, 1,
				      MAX_WORLD);
	if (prod * g_size[AX_DP] != g_world)
		die("tp*cp*dp*pp=%ld is not WORLD_SIZE=%d",
		    prod * g_size[AX_DP], g_world);
	if (opt.schedule == SCHED_INTERLEAVED &&
	    (g_size[AX_PP] < 2 || opt.microbatches % g_size[AX_PP]))
		die("--schedule interleaved wants pp 2 or more and --microbatches a multiple of "
		    "pp (%d): got %d", g_size[AX_PP], opt.microbatches);
}

/* Members of my group along the axes in mask: they vary over the masked
 * axes (first fastest) and agree with me on the others. */
static int
group_members(unsigned amask, int *out)
{
	int stride[AX_N], co[AX_N], a, n = 0, r, s = 1;

	for (a = 0; a < AX_N; a++) {
		stride[a] = s;
		co[a] = (g_rank / s) % g_size[a];
		s *= g_size[a];
	}
	for (r = 0; r < g_world; r++) {
		int same = 1;

		for (a = 0; a < AX_N && same; a++)
			if (!(amask & (1u << a)) &&
			    (r / stride[a]) % g_size[a] != co[a])
				same = 0;
		if (same)
			out[n++] = r;
	}
	for (a = 0; a < AX_N; a++)
		g_co[a] = co[a];
	return n;
}

/* The comm id every member computes alike: FNV-1a over "NAME:r0,r1,...". */
static uint64_t
comm_hash(const char *name, const int *m, int n)
{
	char num[16];
	uint64_t h = fnv1a(FNV_OFFSET, name, strlen(name));
	int i;

	h = fnv1a(h, ":", 1);
	for (i = 0; i < n; i++) {
		int len = snprintf(num, sizeof(num), "%s%d", i ? "," : "", m[i]);

		h = fnv1a(h, num, (size_t)len);
	}
	return h;
}

static struct comm *
add_comm(const char *name, unsigned amask)
{
	struct comm *c = &g_comm[g_ncomm];
	int i;

	c->idx = g_ncomm++;
	c->name = name;
	c->nranks = group_members(amask, c->members);
	for (i = 0; i < c->nranks; i++)
		if (c->members[i] == g_rank)
			c->rank = i;
	c->id = comm_hash(name, c->members, c->nranks);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	return c;
}

static void
make_comms(void)
{
	int a;

	g_worldc = add_comm("world", (1u << AX_N) - 1);
	for (a = 0; a < AX_N; a++)
		if (g_size[a] > 1)
			g_ax[a] = add_comm(axis_name[a], 1u << a);
}

/* ---- the shared segment ---- */

static _Atomic uint64_t *
p2p_slot(int r, int stage, int dir)
{
	_Atomic uint64_t *base = (_Atomic uint64_t *)&g_seg->rank[g_world];

	return &base[((size_t)r * (size_t)g_size[AX_PP] + (size_t)stage) * 2 +
		     (size_t)dir];
}

static void
attach_sync(void)
{
	char path[4096];
	const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
	const char *node = getenv("SLURMD_NODENAME");
	char host[256];
	struct stat st;
	double deadline;
	int fd, r;

	if (!opt.sync_dir)
		opt.sync_dir = getenv("NCCL_DRIVER_DIR");
	if (!opt.sync_dir || !*opt.sync_dir)
		die("no directory for the shared segment: give --sync-dir DIR or NCCL_DRIVER_DIR");
	snprintf(path, sizeof(path), "%s/nccl-driver.%s.%s.sync", opt.sync_dir,
		 job ? job : "local", step ? step : "0");
	g_seg_len = sizeof(struct sync_seg) +
		    (size_t)g_world * sizeof(struct sync_rank) +
		    (size_t)g_world * (size_t)g_size[AX_PP] * 2 * sizeof(uint64_t);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		die("%.200s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		die("%.200s: %s", path, strerror(errno));
	if (st.st_size != 0 && (size_t)st.st_size != g_seg_len)
		die("%.200s: size %lld, expected %zu (left from another run?)",
		    path, (long long)st.st_size, g_seg_len);
	if (ftruncate(fd, (off_t)g_seg_len) < 0)
		die("%.200s: %s", path, strerror(errno));
	g_seg = mmap(NULL, g_seg_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (g_seg == MAP_FAILED)
		die("%.200s: mmap: %s", path, strerror(errno));
	if (atomic_load(&g_seg->rank[g_rank].arrived))
		die("%.200s: rank %d already attached (left from another run?)",
		    path, g_rank);
	if (!node) {
		if (gethostname(host, sizeof(host)) < 0)
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		node = host;
	}
	atomic_store(&g_seg->rank[g_rank].node,
		     fnv1a(FNV_OFFSET, node, strlen(node)));
	atomic_store(&g_seg->rank[g_rank].arrived, 1);
	/* Bootstrap: every rank attached before the communicators exist. */
	deadline = now_s() + opt.timeout_s;
	for (r = 0; r < g_world; r++)
		while (!atomic_load(&g_seg->rank[r].arrived)) {
			if (now_s() > deadline)
				die("rank %d did not start within %.1f s", r,
				    opt.timeout_s);
			sleep_us(1000);
		}
	/* All are mapped now: the name can go, so no run sees a stale one. */
	if (g_rank == 0)
		unlink(path);
}

static int
count_nodes(const struct comm *c)
{
	uint64_t seen[MAX_WORLD];
	int n = 0, i, j;

	for (i = 0; i < c->nranks; i++) {
		uint64_t h = atomic_load(&g_seg->rank[c->members[i]].node);

		for (j = 0; j < n && seen[j] != h; j++)
			;
		if (j == n)
			seen[n++] = h;
	}
	return n;
}

/* ---- loading the hook as NCCL 2.28 does ---- */

static void
load_hook(void)
{
	const char *name = getenv("NCCL_PROFILER_PLUGIN");
	char alt[4096];

	if (name && strcasecmp(name, "none") == 0)
		return;
	if (name && *name && strncasecmp(name, "STATIC_PLUGIN",
					 strlen(name)) == 0) {
		g_lib = dlopen(NULL, RTLD_NOW | RTLD_LOCAL);
	} else if (name && *name) {
		g_lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
		if (!g_lib && !strchr(name, '/') &&
		    !(strncmp(name, "lib", 3) == 0 && strlen(name) > 6 &&
		      strcmp(name + strlen(name) - 3, ".so") == 0)) {
			snprintf(alt, sizeof(alt), "libnccl-profiler-%s.so", name);
			g_lib = dlopen(alt, RTLD_NOW | RTLD_LOCAL);
		}
	} else {
		g_lib = dlopen("libnccl-profiler.so", RTLD_NOW | RTLD_LOCAL);
	}
	if (!g_lib) {
		fprintf(stderr, PROG "[%d]: no profiler plugin: %s\n", g_rank,
			dlerror());
		return;
	}
	if (opt.abi != 4)
		g_v5 = dlsym(g_lib, "ncclProfiler_v5");
	if (g_v5) {
		g_ver = 5;
	} else if (opt.abi != 5 &&
		   (g_v4 = dlsym(g_lib, "ncclProfiler_v4")) != NULL) {
		g_ver = 4;
	} else {
		fprintf(stderr, PROG "[%d]: External profiler plugin %s is unsupported\n",
			g_rank, name ? name : "libnccl-profiler.so");
		dlclose(g_lib);
		g_lib = NULL;
		return;
	}
	fprintf(stderr, PROG "[%d]: PROFILER/Plugin: Loaded %s (v%d)\n", g_rank,
		g_ver == 5 ? g_v5->name : g_v4->name, g_ver);
}

static void
init_comm(struct comm *c)
{
	const char *cname = opt.comm_names ? c->name : NULL;
	char named[64];
	int rc;

	/* A name the user chose (PyTorch passes its process group's): any
	 * bytes it likes, which the watch must carry without acting on. */
	if (cname && opt.comm_prefix) {
		snprintf(named, sizeof(named), "%s%s", opt.comm_prefix, cname);
		cname = named;
	}

	c->nnodes = count_nodes(c);
	if (!g_ver)
		return;
	if (g_ver == 5)
		rc = g_v5->init(&c->ctx, c->id, &g_mask, cname, c->nnodes,
				c->nranks, c->rank, nccl_log);
	else
		rc = g_v4->init(&c->ctx, &g_mask, cname, c->id, c->nnodes,
				c->nranks, c->rank, nccl_log);
	/* 2.28.9 logs and goes on calling the hook with whatever context
	 * init left (facts, section 0). */
	if (rc)
		fprintf(stderr, PROG "[%d]: Profiler init failed with error '%d'. Continue without profiler.\n",
			g_rank, rc);
}

/* ---- hook calls, v5 or the v4 adapter ---- */

static void *
ev_start(struct comm *c, plw_nccl_descr_v5_t *d)
{
	void *h = NULL;
	plw_nccl_descr_v4_t d4;

	if (g_ver == 5) {
		g_v5->startEvent(c->ctx, &h, d);
		return h;
	}
	/* The v4 adapter: API events dropped, Coll/P2p under the Group. */
	if (!g_ver || d->type >= PLW_NCCL_EV_GROUP_API)
		return NULL;
	memset(&d4, 0, sizeof(d4));
	d4.type = (uint8_t)d->type;
	d4.parentObj = d->parentObj;
	d4.rank = d->rank;
	switch (d->type) {
	case PLW_NCCL_EV_COLL:
		d4.parentObj = d->coll.parentGroup;
		d4.coll.seqNumber = d->coll.seqNumber;
		d4.coll.func = d->coll.func;
		d4.coll.sendBuff = d->coll.sendBuff;
		d4.coll.recvBuff = d->coll.recvBuff;
		d4.coll.count = d->coll.count;
		d4.coll.root = d->coll.root;
		d4.coll.datatype = d->coll.datatype;
		d4.coll.nChannels = d->coll.nChannels;
		d4.coll.nWarps = d->coll.nWarps;
		d4.coll.algo = d->coll.algo;
		d4.coll.proto = d->coll.proto;
		break;
	case PLW_NCCL_EV_P2P:
		d4.parentObj = d->p2p.parentGroup;
		d4.p2p.func = d->p2p.func;
		d4.p2p.buff = d->p2p.buff;
		d4.p2p.datatype = d->p2p.datatype;
		d4.p2p.count = d->p2p.count;
		d4.p2p.peer = d->p2p.peer;
		/* The 2.28 adapter leaves it uninitialised: garbage. */
		d4.p2p.nChannels = (uint8_t)(rng_next() | 0x80);
		break;
	case PLW_NCCL_EV_KERNEL_CH:
		d4.kernelCh.channelId = d->kernelCh.channelId;
		d4.kernelCh.pTimer = d->kernelCh.pTimer;
		break;
	default:
		break;
	}
	g_v4->startEvent(c->ctx, &h, &d4);
	return h;
}

static void
ev_stop(void *h)
{
	if (!h)
		return;
	if (g_ver == 5)
		g_v5->stopEvent(h);
	else if (g_ver == 4)
		g_v4->stopEvent(h);
}

static void
ev_state(void *h, plw_nccl_state_t s, plw_nccl_state_args_v5_t *a)
{
	if (!h)
		return;
	if (g_ver == 5)
		g_v5->recordEventState(h, s, a);
	else if (g_ver == 4 && s != PLW_NCCL_STATE_GROUP_START_API_STOP &&
		 s != PLW_NCCL_STATE_GROUP_END_API_START)
		g_v4->recordEventState(h, s, a);
}

/* ---- the proxy thread: kernel channels of each posted operation ---- */

static int
work_complete(const struct comm *c, const struct work *w)
{
	int i;

	if (w->fn == FN_SEND)
		return atomic_load(p2p_slot(w->peer, g_co[AX_PP], 1)) >= w->target;
	if (w->fn == FN_RECV)
		return atomic_load(p2p_slot(w->peer, g_co[AX_PP], 0)) >= w->target;
	for (i = 0; i < c->nranks; i++)
		if (atomic_load(&g_seg->rank[c->members[i]].entered[c->idx]) <
		    w->target)
			return 0;
	return 1;
}

/*
 * Network progress of one channel: a send and a recv ProxyOp to the ring
 * neighbours, one ProxyStep each.  Started when the kernel starts, ended
 * when the operation completes (the steps wait on the peer meanwhile).
 */
struct netop {
	void *op[2], *step[2];
};

static void
net_start(struct comm *c, const struct work *w, int ch, struct netop *n)
{
	plw_nccl_descr_v5_t d;
	int k;

	memset(n, 0, sizeof(*n));
	if (!opt.net || !(w->mask & (PLW_NCCL_EV_PROXY_OP |
				     PLW_NCCL_EV_PROXY_STEP |
				     PLW_NCCL_EV_NET_PLUGIN)))
		return;
	for (k = 0; k < 2; k++) {
		memset(&d, 0, sizeof(d));
		d.type = PLW_NCCL_EV_PROXY_OP;
		d.parentObj = w->task;
		d.rank = c->rank;
		d.proxyOp.pid = getpid();
		d.proxyOp.channelId = (uint8_t)ch;
		d.proxyOp.peer = (c->rank + (k ? c->nranks - 1 : 1)) % c->nranks;
		d.proxyOp.nSteps = 1;
		d.proxyOp.chunkSize = 1 << 19;
		d.proxyOp.isSend = !k;
		n->op[k] = ev_start(c, &d);
		if (!(w->mask & (PLW_NCCL_EV_PROXY_STEP | PLW_NCCL_EV_NET_PLUGIN)))
			continue;
		memset(&d, 0, sizeof(d));
		d.type = PLW_NCCL_EV_PROXY_STEP;
		d.parentObj = n->op[k];
		d.rank = c->rank;
		d.proxyStep.step = 0;
		n->step[k] = ev_start(c, &d);
		ev_state(n->step[k], k ? PLW_NCCL_STATE_PROXY_STEP_RECV_WAIT :
			 PLW_NCCL_STATE_PROXY_STEP_SEND_GPU_WAIT, NULL);
	}
}

static void
net_stop(struct netop *n)
{
	plw_nccl_state_args_v5_t a;
	int k;

	for (k = 0; k < 2; k++) {
		memset(&a, 0, sizeof(a));
		a.proxyStep.transSize = 1 << 19;
		ev_state(n->step[k], k ? PLW_NCCL_STATE_PROXY_STEP_RECV_GPU_WAIT :
			 PLW_NCCL_STATE_PROXY_STEP_SEND_WAIT, &a);
		ev_stop(n->step[k]);
		ev_stop(n->op[k]);
	}
}

/* With PXN another process's proxy thread progresses our ops: its
 * context and parent are pointers of that process (here: a page that
 * faults), only the pid says so.  A hook must look at nothing else. */
static void
pxn_event(struct comm *c, const struct work *w, int ch)
{
	plw_nccl_descr_v5_t d;
	void *h;

	if (!opt.pxn || !g_ver || !(w->mask & (PLW_NCCL_EV_PROXY_OP |
					       PLW_NCCL_EV_PROXY_STEP |
					       PLW_NCCL_EV_NET_PLUGIN)))
		return;
	memset(&d, 0, sizeof(d));
	d.type = PLW_NCCL_EV_PROXY_OP;
	d.parentObj = g_foreign;
	d.rank = (c->rank + 1) % c->nranks;
	d.proxyOp.pid = getpid() + 1;
	d.proxyOp.channelId = (uint8_t)ch;
	d.proxyOp.peer = c->rank;
	d.proxyOp.nSteps = 1;
	d.proxyOp.chunkSize = 1 << 19;
	d.proxyOp.isSend = 1;
	h = NULL;
	if (g_ver == 5) {
		g_v5->startEvent(g_foreign, &h, &d);
	} else {
		plw_nccl_descr_v4_t d4;

		memset(&d4, 0, sizeof(d4));
		d4.type = (uint8_t)d.type;
		d4.parentObj = d.parentObj;
		d4.rank = d.rank;
		d4.proxyOp.pid = d.proxyOp.pid;
		d4.proxyOp.channelId = d.proxyOp.channelId;
		d4.proxyOp.peer = d.proxyOp.peer;
		d4.proxyOp.nSteps = d.proxyOp.nSteps;
		d4.proxyOp.chunkSize = d.proxyOp.chunkSize;
		d4.proxyOp.isSend = d.proxyOp.isSend;
		g_v4->startEvent(g_foreign, &h, &d4);
	}
	ev_stop(h);
}

static void *
proxy_main(void *arg)
{
	struct comm *c = arg;
	void *ch[MAX_BATCH][MAX_CHANNELS];
	struct netop net[MAX_BATCH][MAX_CHANNELS];
	struct work w[MAX_BATCH];
	int nw, i, k;

	for (;;) {
		long back = 20;
		int left;

		pthread_mutex_lock(&c->mu);
		while (!c->busy && !c->shutdown)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->shutdown) {
			pthread_mutex_unlock(&c->mu);
			return NULL;
		}
		nw = c->nw;
		memcpy(w, c->w, sizeof(w[0]) * (size_t)nw);
		c->busy = 0;
		pthread_mutex_unlock(&c->mu);

		/* The kernel starts work on each channel of each operation
		 * (it may then spin waiting for its peers). */
		for (k = 0; k < nw; k++)
			for (i = 0; i < w[k].nch; i++) {
				plw_nccl_descr_v5_t d;

				ch[k][i] = NULL;
				if (w[k].mask & PLW_NCCL_EV_KERNEL_CH) {
					memset(&d, 0, sizeof(d));
					d.type = PLW_NCCL_EV_KERNEL_CH;
					d.parentObj = w[k].task;
					d.kernelCh.channelId = (uint8_t)i;
					d.kernelCh.pTimer = gpu_timer();
					ch[k][i] = ev_start(c, &d);
				}
				net_start(c, &w[k], i, &net[k][i]);
				pxn_event(c, &w[k], i);
			}
		/* Each operation's channels stop when it completes; the group
		 * is done when all have. */
		for (left = nw; left > 0;) {
			int stop;

			pthread_mutex_lock(&c->mu);
			stop = c->shutdown;
			pthread_mutex_unlock(&c->mu);
			/* On abort NCCL drops ops whose kernels never ran out:
			 * their channels are never stopped. */
			if (stop)
				return NULL;
			for (k = 0; k < nw; k++) {
				if (w[k].busy != 1 || w[k].stuck || !work_complete(c, &w[k]))
					continue;
				for (i = 0; i < w[k].nch; i++) {
					plw_nccl_state_args_v5_t a;

					net_stop(&net[k][i]);
					if (!ch[k][i])
						continue;
					memset(&a, 0, sizeof(a));
					a.kernelCh.pTimer = gpu_timer();
					ev_state(ch[k][i], PLW_NCCL_STATE_KERNEL_CH_STOP, &a);
					ev_stop(ch[k][i]);
				}
				w[k].busy = 2;
				left--;
				back = 20;
			}
			if (left) {
				sleep_us(back);
				if (back < 1000)
					back *= 2;
			}
		}
		pthread_mutex_lock(&c->mu);
		c->done = 1;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
	}
}

static void
post(struct comm *c, const struct work *w, int nw)
{
	int k;

	/* NCCL starts the proxy thread lazily, with the first operation. */
	if (!c->proxy_up) {
		if (pthread_create(&c->proxy, NULL, proxy_main, c) != 0)
			die("cannot start a proxy thread");
		c->proxy_up = 1;
	}
	pthread_mutex_lock(&c->mu);
	for (k = 0; k < nw; k++) {
		c->w[k] = w[k];
		c->w[k].busy = 1;
	}
	c->nw = nw;
	c->busy = 1;
	c->done = 0;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

static void
abort_comms(void)
{
	int i;

	for (i = 0; i < g_ncomm; i++) {
		struct comm *c = &g_comm[i];

		if (!c->proxy_up)
			continue;
		pthread_mutex_lock(&c->mu);
		c->shutdown = 1;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		pthread_join(c->proxy, NULL);
		c->proxy_up = 0;
	}
	/* finalize comes after the proxy thread is gone, only for a
	 * non-NULL context; the library goes with the last comm. */
	for (i = 0; i < g_ncomm; i++)
		if (g_comm[i].ctx) {
			if (g_ver == 5)
				g_v5->finalize(g_comm[i].ctx);
			else if (g_ver == 4)
				g_v4->finalize(g_comm[i].ctx);
			g_comm[i].ctx = NULL;
		}
	if (g_lib) {
		dlclose(g_lib);
		g_lib = NULL;
	}
}

static void
summary(const char *result, const struct comm *c, enum func fn)
{
	int i;

	printf("nccl_driver: rank=%d pid=%ld abi=v%d steps=%d colls=%" PRIu64
	       " p2p=%" PRIu64 " stale_collapi_stops=%" PRIu64 " result=%s",
	       g_rank, (long)getpid(), g_ver, g_step, g_colls, g_p2ps,
	       g_stale_stops, result);
	if (c)
		printf(" comm=%s func=%s seq=%" PRIu64, c->name, func_name[fn],
		       c->seq[fn] ? c->seq[fn] - 1 : 0);
	printf(" comms=");
	for (i = 0; i < g_ncomm; i++)
		printf("%s%s:%d/%d:%016" PRIx64, i ? "," : "", g_comm[i].name,
		       g_comm[i].rank, g_comm[i].nranks, g_comm[i].id);
	printf("\n");
	fflush(stdout);
}

/* Wait for the posted operation; on timeout abort like the watchdog. */
static void
wait_done(struct comm *c, enum func fn)
{
	struct timespec dl;
	double t = opt.timeout_s;
	int done, rc = 0;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += (time_t)t;
	dl.tv_nsec += (long)((t - (double)(time_t)t) * 1e9);
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&c->mu);
	while (!c->done && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&c->cv, &c->mu, &dl);
	done = c->done;
	pthread_mutex_unlock(&c->mu);
	if (done)
		return;
	fprintf(stderr, PROG "[%d]: %s seq %" PRIu64 " on comm %s did not complete in %.1f s: aborting\n",
		g_rank, func_name[fn], c->seq[fn] - 1, c->name, opt.timeout_s);
	summary("timeout", c, fn);
	abort_comms();
	exit(3);
}

/* ---- one operation, as the user thread of NCCL 2.28 emits it ---- */

static int g_fault_mode;	/* the mode of the fault fault_at() found last */

static int
fault_at(enum fault_kind k, long *arg, int *status)
{
	int i;

	for (i = 0; i < opt.nfaults; i++)
		if (opt.faults[i].kind == k && opt.faults[i].rank == g_rank) {
			if (arg)
				*arg = opt.faults[i].arg;
			if (status)
				*status = opt.faults[i].status;
			g_fault_mode = opt.faults[i].mode;
			return 1;
		}
	return 0;
}

/*
 * Busy outside NCCL for secs seconds, as a checkpoint is: a core spun for
 * 15 ms and 1 MiB written to a file of the sync directory every 20 ms, then
 * the file removed and training goes on.  BUSY_CPU only spins (a compile,
 * a data loader decoding: 0.75 of a core, nothing written); BUSY_IO only
 * writes, sleeping between (a checkpoint bound by storage: 1 MiB every
 * 20 ms, hardly any CPU).
 */
static void
busy_outside(int secs, int mode)
{
	static char chunk[1 << 20];
	char path[4096];
	struct timespec t0, t;
	int fd;

	fprintf(stderr, PROG "[%d]: busy outside NCCL (%s) for %d s at step %d (fault)\n", g_rank,
		mode == BUSY_CPU ? "cpu" : mode == BUSY_IO ? "io" : "cpu and io", secs, g_step);
	snprintf(path, sizeof(path), "%s/busy.%d", opt.sync_dir, g_rank);
	fd = mode == BUSY_CPU ? -1 : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct timespec s0, s1;

		clock_gettime(CLOCK_MONOTONIC, &s0);
		if (mode != BUSY_IO)
			do
				clock_gettime(CLOCK_MONOTONIC, &s1);
			while ((s1.tv_sec - s0.tv_sec) * 1000000000L + (s1.tv_nsec - s0.tv_nsec) <
			       15000000L);
		if (fd >= 0 && write(fd, chunk, sizeof(chunk)) < 0)
			break;
		if (fd >= 0 && lseek(fd, 0, SEEK_END) > (64L << 20))
			(void)!ftruncate(fd, 0);
		sleep_us(mode == BUSY_IO ? 20000 : 5000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

/*
 * Forge this rank's own record, as any user's process can (the record is
 * its to write): every communicator claims one more collective entered,
 * in flight since CLOCK_MONOTONIC's 1 ns (boot: a wait of the machine's
 * uptime, the "ten-year wait"), its kernel's channels started with no
 * progress since.  Written through the seq counters, as the hook writes,
 * so a reader takes the copy as consistent.  0, or -1 (said on stderr).
 */
static int
forge_record(void)
{
	const char *dir = getenv("PARALLEL_LAYOUT_WATCH_DIR");
	const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID");
	struct plw_record *r;
	char path[4096];
	int fd, i, n = 0;

	if (!dir || !*dir) {
		fprintf(stderr, PROG "[%d]: forge: no PARALLEL_LAYOUT_WATCH_DIR\n", g_rank);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/" PLW_FILE_PREFIX "%s.%s.%d.%ld", dir, job ? job : "0",
		 step ? step : "0", g_rank, (long)getpid());
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, PROG "[%d]: forge: %s: %s\n", g_rank, path, strerror(errno));
		return -1;
	}
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r == MAP_FAILED) {
		fprintf(stderr, PROG "[%d]: forge: mmap %s: %s\n", g_rank, path, strerror(errno));
		return -1;
	}
	for (i = 0; i < PLW_MAX_COMMS; i++) {
		struct plw_slot *sl = &r->slot[i];

		if (plw_ld64(&sl->ident.seq) == 0 || sl->ident.state != PLW_SLOT_ACTIVE)
			continue;
		plw_write_begin(&sl->launch.seq);
		plw_st64(&sl->launch.colls, plw_ld64(&sl->launch.colls) + 1);
		plw_st64(&sl->launch.seq_number, plw_ld64(&sl->launch.seq_number) + 1);
		plw_st64(&sl->launch.enqueue_ns, 1);
		plw_write_end(&sl->launch.seq);
		plw_write_begin(&sl->gpu.seq);
		plw_st64(&sl->gpu.ch_started, plw_ld64(&sl->gpu.ch_started) + 2);
		plw_st64(&sl->gpu.start_seq_number, plw_ld64(&sl->launch.seq_number));
		plw_st64(&sl->gpu.progress_ns, 1);
		plw_write_end(&sl->gpu.seq);
		n++;
	}
	munmap(r, sizeof(*r));
	fprintf(stderr, PROG "[%d]: forged %d communicator%s of %s: a wait since boot, kernels "
		"stuck (fault)\n", g_rank, n, n == 1 ? "" : "s", path);
	return 0;
}

static int g_stuck_armed;	/* the next operation's kernel never ends */
static int g_wedge_armed;	/* the next collective's kernel never ends, its
				 * peers' do (a GPU that hangs after its part) */
static int g_mismatch_armed;	/* the next collective is another one than its
				 * peers' (1: another func, 2: twice the
				 * count), and hangs with them (as NCCL's
				 * kernels of two collectives do) */

/* One operation as the user thread sees it. */
struct op {
	struct comm *c;
	enum func fn;
	int is_p2p;
	size_t count;		/* the caller's count */
	const char *dtype;	/* the caller's datatype */
	size_t esize;		/* its size in bytes */
	int peer;		/* p2p: the peer's global rank */
	int peer_rank;		/* p2p: its rank in c */
	unsigned mask;		/* the activation mask read at the group */
	void *stream;
};

static char g_buf[64];	/* stands for the device buffers */

/* GroupApi start, state 23, CollApi/P2pApi start+stop, state 24.
 * Returns the API handle, the parent of the task event. */
static void *
api_events(const struct op *o)
{
	plw_nccl_descr_v5_t d;
	struct comm *c = o->c;
	void *api;

	g_group_api = NULL;
	if (g_ver && (o->mask & M_GROUP_API)) {
		memset(&d, 0, sizeof(d));
		d.type = PLW_NCCL_EV_GROUP_API;
		d.rank = c->rank;
		d.groupApi.graphCaptured = 0;
		/* Only the outermost group reports: 1 is NCCL's implicit
		 * group; p2p comes inside the caller's ncclGroupStart. */
		d.groupApi.groupDepth = o->is_p2p ? 2 : 1;
		g_group_api = ev_start(c, &d);
	}
	ev_state(g_group_api, PLW_NCCL_STATE_GROUP_START_API_STOP, NULL);
	memset(&d, 0, sizeof(d));
	d.rank = c->rank;
	d.parentObj = g_group_api;
	if (o->is_p2p) {
		if (g_ver && (o->mask & M_P2P_API)) {
			d.type = PLW_NCCL_EV_P2P_API;
			d.p2pApi.func = func_name[o->fn];
			d.p2pApi.count = o->count;
			d.p2pApi.datatype = o->dtype;
			d.p2pApi.stream = o->stream;
			g_p2p_api = ev_start(c, &d);
		}
		api = g_p2p_api;
		ev_stop(g_p2p_api);
		g_p2p_api = NULL;
	} else {
		if (g_ver && (o->mask & M_COLL_API)) {
			d.type = PLW_NCCL_EV_COLL_API;
			d.collApi.func = func_name[o->fn];
			d.collApi.count = o->count;
			d.collApi.datatype = o->dtype;
			d.collApi.root = -1;
			d.collApi.stream = o->stream;
			g_coll_api = ev_start(c, &d);
		} else if (g_coll_api) {
			g_stale_stops++;
		}
		/* Never cleared: with the CollApi bits off, the last handle
		 * is stopped again (NCCL 2.28.9 does this). */
		api = g_coll_api;
		ev_stop(g_coll_api);
	}
	ev_state(g_group_api, PLW_NCCL_STATE_GROUP_END_API_START, NULL);
	return api;
}

/* KernelLaunch start+stop around the launch, then the Group start.
 * Returns the Group handle. */
static void *
launch_events(const struct op *o)
{
	plw_nccl_descr_v5_t d;
	void *klaunch = NULL, *group = NULL;

	if (g_ver && (o->mask & PLW_NCCL_EV_KERNEL_LAUNCH)) {
		memset(&d, 0, sizeof(d));
		d.type = PLW_NCCL_EV_KERNEL_LAUNCH;
		d.rank = o->c->rank;
		d.parentObj = g_group_api;
		d.kernelLaunch.stream = o->stream;
		klaunch = ev_start(o->c, &d);
	}
	ev_stop(klaunch);
	if (g_ver && (o->mask & M_GROUP)) {
		memset(&d, 0, sizeof(d));
		d.type = PLW_NCCL_EV_GROUP;
		group = ev_start(o->c, &d);
	}
	return group;
}

/* The P2p task event; counts the operation in the shared segment. */
static void *
p2p_task(const struct op *o, void *api, void *group, struct work *w)
{
	plw_nccl_descr_v5_t d;
	_Atomic uint64_t *mine;
	void *task = NULL;

	if (g_ver && (o->mask & M_P2P)) {
		memset(&d, 0, sizeof(d));
		d.type = PLW_NCCL_EV_P2P;
		d.rank = o->c->rank;
		d.parentObj = api;
		d.p2p.func = func_name[o->fn];
		d.p2p.buff = g_buf;
		d.p2p.datatype = o->dtype;
		d.p2p.count = o->count;
		d.p2p.peer = o->peer_rank;
		d.p2p.nChannels = (uint8_t)opt.channels;
		d.p2p.parentGroup = group;
		task = ev_start(o->c, &d);
	}
	w->peer = o->peer;
	mine = p2p_slot(g_rank, o->peer_rank, o->fn == FN_SEND ? 0 : 1);
	/* A stuck kernel never reaches its peer. */
	if (w->stuck)
		w->target = atomic_load(mine) + 1;
	else
		w->target = atomic_fetch_add(mine, 1) + 1;
	g_p2ps++;
	return task;
}

/* The Coll task event; counts the operation in the shared segment. */
static void *
coll_task(const struct op *o, void *api, void *group, struct work *w)
{
	plw_nccl_descr_v5_t d;
	struct comm *c = o->c;
	void *task = NULL;

	if (g_ver && (o->mask & M_COLL)) {
		memset(&d, 0, sizeof(d));
		d.type = PLW_NCCL_EV_COLL;
		d.rank = c->rank;
		d.parentObj = api;
		d.coll.seqNumber = c->seq[o->fn];
		d.coll.func = func_name[o->fn];
		d.coll.sendBuff = g_buf;
		d.coll.recvBuff = g_buf;
		d.coll.count = o->count;
		d.coll.datatype = o->dtype;
		/* AllGather's task carries bytes as ncclInt8. */
		if (o->fn == FN_ALLGATHER) {
			d.coll.count = o->count * o->esize;
			d.coll.datatype = "ncclInt8";
		}
		d.coll.root = -1;
		d.coll.nChannels = (uint8_t)opt.channels;
		d.coll.nWarps = 16;
		d.coll.algo = "RING";
		d.coll.proto = o->count * o->esize >= 65536 ? "SIMPLE" : "LL";
		d.coll.parentGroup = group;
		task = ev_start(c, &d);
	}
	c->entered++;
	w->target = c->entered;
	if (!w->stuck || w->wedge)
		atomic_store(&g_seg->rank[g_rank].entered[c->idx], c->entered);
	g_colls++;
	return task;
}

/*
 * fn on comm c; peer is the p2p peer's global rank.  Emits GroupApi start,
 * state 23, CollApi/P2pApi start+stop, state 24, KernelLaunch start+stop,
 * Group start, Coll/P2p start, posts the channels to the proxy, Coll/P2p
 * stop, Group stop, GroupApi stop; then waits for completion.
 */
static void
nccl_op(struct comm *c, enum func fn, size_t count, const char *dtype,
	size_t esize, int peer)
{
	struct op o = {
		.c = c, .fn = fn, .is_p2p = fn == FN_SEND || fn == FN_RECV,
		.count = count, .dtype = dtype, .esize = esize, .peer = peer,
		.stream = (void *)(uintptr_t)(0x1000 + c->idx),
	};
	struct work w;
	void *api, *group, *task;
	int i;

	/* A divergent code path: this rank calls another collective where
	 * its peers call fn; nothing completes for anyone. */
	if (!o.is_p2p && g_mismatch_armed) {
		if (g_mismatch_armed == 1)
			o.fn = fn = fn == FN_ALLREDUCE ? FN_ALLGATHER : FN_ALLREDUCE;
		else
			o.count = count *= 2;
		fprintf(stderr, PROG "[%d]: calling %s of %zu on %s where its peers call another "
			"(fault)\n", g_rank, func_name[fn], count, c->name);
		g_mismatch_armed = 0;
		g_stuck_armed = 1;
	}
	for (i = 0; o.is_p2p && i < c->nranks; i++)
		if (c->members[i] == peer)
			o.peer_rank = i;
	/* NCCL reads the shared mask once, at the group. */
	o.mask = (unsigned)atomic_load_explicit((_Atomic int *)&g_mask,
						memory_order_relaxed);
	api = api_events(&o);
	group = launch_events(&o);
	memset(&w, 0, sizeof(w));
	w.fn = fn;
	w.nch = opt.channels;
	w.mask = o.mask;
	w.stuck = g_stuck_armed;
	g_stuck_armed = 0;
	if (!o.is_p2p && g_wedge_armed) {
		w.stuck = w.wedge = 1;
		g_wedge_armed = 0;
	}
	task = o.is_p2p ? p2p_task(&o, api, group, &w) :
			  coll_task(&o, api, group, &w);
	/* NCCL counts the sequence even without a profiler. */
	c->seq[fn]++;
	w.task = task;
	post(c, &w, 1);
	ev_stop(task);
	ev_stop(group);
	ev_stop(g_group_api);
	g_group_api = NULL;
	wait_done(c, fn);
}

/* ---- the training loop ---- */

static void
compute(void)
{
	static int spike_step = -1, spiking;
	long pct = 0;
	double f = 1.0;
	long j;

	if (fault_at(F_SLOW, &pct, NULL))
		f += (double)pct / 100.0;
	/* A healthy rank's occasional slow step (a GC pause, a noisy
	 * neighbour): drawn once per step, the whole step slower. */
	if (opt.spike_every > 0 && spike_step != g_step) {
		spike_step = g_step;
		spiking = rng_next() % (uint64_t)opt.spike_every == 0;
	}
	if (spiking)
		f += (double)opt.spike_pct / 100.0;
	if (opt.jitter_pct > 0) {
		j = (long)(rng_next() % (uint64_t)(2 * opt.jitter_pct + 1)) -
		    opt.jitter_pct;
		f += (double)j / 100.0;
	}
	sleep_us((long)((double)opt.compute_us * f));
}

/* The DP group FSDP shards over (the world when dp is 1). */
static struct comm *
fsdp_comm(void)
{
	return g_ax[AX_DP] ? g_ax[AX_DP] : g_worldc;
}

/* An FSDP AllGather of `bytes` of parameters (all ranks'), bf16. */
static void
fsdp_gather(uint64_t bytes)
{
	struct comm *c = fsdp_comm();
	uint64_t mine = bytes / (uint64_t)c->nranks;

	nccl_op(c, FN_ALLGATHER, (size_t)(mine / 2 ? mine / 2 : 1), "ncclBfloat16", 2, -1);
}

/* One pass over the layers of a model chunk (all of them but with
 * --schedule interleaved, which splits them into --vpp chunks). */
static void
layer_pass(int forward)
{
	int l, n = opt.layers / opt.vpp > 0 ? opt.layers / opt.vpp : 1;

	for (l = 0; l < n; l++) {
		/* Wrapped per block: each block's parameters gathered before
		 * it runs. */
		if (forward && opt.fsdp == FSDP_BLOCK)
			fsdp_gather(opt.fsdp_bytes / (uint64_t)opt.layers);
		compute();
		if (g_ax[AX_CP])
			nccl_op(g_ax[AX_CP], FN_ALLGATHER, opt.count / 8,
				"ncclBfloat16", 2, -1);
		if (g_ax[AX_TP])
			nccl_op(g_ax[AX_TP], FN_ALLREDUCE, opt.count,
				"ncclBfloat16", 2, -1);
	}
}

static void
pp_op(enum func fn, int dstage)
{
	struct comm *c = g_ax[AX_PP];

	nccl_op(c, fn, opt.count, "ncclBfloat16", 2,
		c->members[c->rank + dstage]);
}

/*
 * n p2p operations on the PP communicator in one ncclGroupStart/End, as
 * Megatron's batched isend/irecv posts them: GroupApi start (a user
 * group), state 23, a P2pApi start and stop per operation, state 24,
 * KernelLaunch, Group start, a P2p start per operation, all posted to the
 * proxy at once, the P2p stops, Group stop, GroupApi stop; then the wait
 * for all of them.  fn[k] is FN_SEND or FN_RECV, to[k] the peer's stage.
 */
static void
pp_group(const enum func *fn, const int *to, int n)
{
	struct comm *c = g_ax[AX_PP];
	struct op o[MAX_BATCH];
	struct work w[MAX_BATCH];
	void *api[MAX_BATCH], *task[MAX_BATCH], *group;
	plw_nccl_descr_v5_t d;
	unsigned mask;
	int k;

	if (n < 1 || n > MAX_BATCH)
		return;
	if (n == 1) {
		nccl_op(c, fn[0], opt.count, "ncclBfloat16", 2, c->members[to[0]]);
		return;
	}
	memset(o, 0, sizeof(o));
	memset(w, 0, sizeof(w));
	mask = (unsigned)atomic_load_explicit((_Atomic int *)&g_mask, memory_order_relaxed);
	g_group_api = NULL;
	if (g_ver && (mask & M_GROUP_API)) {
		memset(&d, 0, sizeof(d));
		d.type = PLW_NCCL_EV_GROUP_API;
		d.rank = c->rank;
		d.groupApi.groupDepth = 2;
		g_group_api = ev_start(c, &d);
	}
	ev_state(g_group_api, PLW_NCCL_STATE_GROUP_START_API_STOP, NULL);
	for (k = 0; k < n; k++) {
		memset(&o[k], 0, sizeof(o[k]));
		o[k].c = c;
		o[k].fn = fn[k];
		o[k].is_p2p = 1;
		o[k].count = opt.count;
		o[k].dtype = "ncclBfloat16";
		o[k].esize = 2;
		o[k].peer = c->members[to[k]];
		o[k].peer_rank = to[k];
		o[k].mask = mask;
		o[k].stream = (void *)(uintptr_t)(0x1000 + c->idx);
		api[k] = NULL;
		if (g_ver && (mask & M_P2P_API)) {
			memset(&d, 0, sizeof(d));
			d.type = PLW_NCCL_EV_P2P_API;
			d.rank = c->rank;
			d.parentObj = g_group_api;
			d.p2pApi.func = func_name[fn[k]];
			d.p2pApi.count = opt.count;
			d.p2pApi.datatype = "ncclBfloat16";
			d.p2pApi.stream = o[k].stream;
			api[k] = ev_start(c, &d);
		}
		ev_stop(api[k]);
	}
	ev_state(g_group_api, PLW_NCCL_STATE_GROUP_END_API_START, NULL);
	group = launch_events(&o[0]);
	for (k = 0; k < n; k++) {
		memset(&w[k], 0, sizeof(w[k]));
		w[k].fn = fn[k];
		w[k].nch = opt.channels;
		w[k].mask = mask;
		w[k].stuck = g_stuck_armed;
		g_stuck_armed = 0;
		task[k] = p2p_task(&o[k], api[k], group, &w[k]);
		c->seq[fn[k]]++;
		w[k].task = task[k];
	}
	post(c, w, n);
	for (k = 0; k < n; k++)
		ev_stop(task[k]);
	ev_stop(group);
	ev_stop(g_group_api);
	g_group_api = NULL;
	wait_done(c, fn[0]);
}

/* A send and a receive (any of them absent: to < 0) in one group, sends
 * first to the previous stage, as Megatron's _communicate orders them:
 * send to prev, receive from prev, send to next, receive from next. */
static void
pp_comm(int send_prev, int recv_prev, int send_next, int recv_next)
{
	struct comm *c = g_ax[AX_PP];
	int P = c->nranks, s = c->rank, prev = (s + P - 1) % P, next = (s + 1) % P;
	enum func fn[MAX_BATCH];
	int to[MAX_BATCH], n = 0;

	if (send_prev) {
		fn[n] = FN_SEND;
		to[n++] = prev;
	}
	if (recv_prev) {
		fn[n] = FN_RECV;
		to[n++] = prev;
	}
	if (send_next) {
		fn[n] = FN_SEND;
		to[n++] = next;
	}
	if (recv_next) {
		fn[n] = FN_RECV;
		to[n++] = next;
	}
	if (n)
		pp_group(fn, to, n);
}

/* One step of Megatron's 1F1B (no interleaving): min(P - s - 1, m)
 * warm-up forwards, then one forward and one backward in turn (their
 * sends and receives to the next stage, and then the previous one,
 * grouped), then the cool-down backwards. */
static void
step_1f1b(void)
{
	struct comm *pp = g_ax[AX_PP];
	int P = pp ? pp->nranks : 1, s = pp ? pp->rank : 0, m = opt.microbatches;
	int first = s == 0, last = s == P - 1;
	int warm = P - s - 1 < m ? P - s - 1 : m, rem = m - warm, i;

	for (i = 0; i < warm; i++) {
		if (!first)
			pp_comm(0, 1, 0, 0);
		layer_pass(1);
		if (!last)
			pp_comm(0, 0, 1, 0);
	}
	if (rem > 0 && !first)
		pp_comm(0, 1, 0, 0);
	for (i = 0; i < rem; i++) {
		layer_pass(1);
		if (!last)
			pp_comm(0, 0, 1, 1);		/* send forward, receive backward */
		layer_pass(0);
		if (!first)
			pp_comm(1, i < rem - 1, 0, 0);	/* send backward, receive forward */
	}
	for (i = 0; i < warm; i++) {
		if (!last)
			pp_comm(0, 0, 0, 1);
		layer_pass(0);
		if (!first)
			pp_comm(1, 0, 0, 0);
	}
}

/* Megatron's model chunk of virtual micro-batch k (forward, or backward:
 * the chunks in reverse). */
static int
chunk_of(int k, int forward, int P, int V)
{
	/* k may be negative (Megatron looks P - 1 back): its modulo is
	 * Python's, never negative */
	int c = ((k % (P * V) + P * V) % (P * V)) / P;

	return forward ? c : V - 1 - c;
}

/*
 * One step of Megatron's interleaved 1F1B: each stage holds V model chunks
 * (--vpp), m micro-batches (a multiple of P) run as m * V virtual ones,
 * the p2p ring wrapping from the last stage to the first between chunks.
 * The warm-up, steady and cool-down phases and which transfer each
 * iteration sends and receives follow Megatron-Core's schedule without
 * overlapped p2p (its forward_backward_pipelining_with_interleaving).
 */
static void
step_interleaved(void)
{
	struct comm *pp = g_ax[AX_PP];
	int P = pp->nranks, s = pp->rank, V = opt.vpp, m = opt.microbatches;
	int total = m * V, warm = (P - s - 1) * 2 + (V - 1) * P, rem, k;
	int first = s == 0, last = s == P - 1;

	if (warm > total)
		warm = total;
	rem = total - warm;
	/* the first forward's input (stage 0's chunk 0 reads the data) */
	if (!first)
		pp_comm(0, 1, 0, 0);
	for (k = 0; k < warm; k++) {
		int send = !(last && chunk_of(k, 1, P, V) == V - 1);
		int recv_prev = !(first && chunk_of(k + 1, 1, P, V) == 0) && k != total - 1;

		layer_pass(1);
		if (k == warm - 1 && rem > 0)
			pp_comm(0, recv_prev, send, !last);
		else
			pp_comm(0, recv_prev, send, 0);
	}
	for (k = 0; k < rem; k++) {
		int fk = k + warm, bk = k;
		int send_next = !(last && chunk_of(fk, 1, P, V) == V - 1);
		int send_prev = !(first && chunk_of(bk, 0, P, V) == 0);
		int recv_prev = 1, recv_next = 1;

		layer_pass(1);
		layer_pass(0);
		if (first && chunk_of(fk - (P - 1), 1, P, V) == V - 1)
			recv_prev = 0;
		if (last && chunk_of(bk - (P - 1), 0, P, V) == 0)
			recv_next = 0;
		if (k == rem - 1)
			recv_prev = 0;
		pp_comm(send_prev, recv_prev, send_next, recv_next);
	}
	if (rem == 0 && !last)
		pp_comm(0, 0, 0, 1);
	for (k = rem; k < total; k++) {
		int send_prev = !(first && chunk_of(k, 0, P, V) == 0);
		int recv_next = !(last && chunk_of(k + 1, 0, P, V) == V - 1) && k != total - 1;

		layer_pass(0);
		pp_comm(send_prev, 0, 0, recv_next);
	}
}

static void
train(void)
{
	struct comm *pp = g_ax[AX_PP];
	int first = !pp || pp->rank == 0;
	int last = !pp || pp->rank == pp->nranks - 1;
	long k;
	int status, mb;

	for (g_step = 0; g_step < opt.steps; g_step++) {
		if (fault_at(F_EXIT, &k, &status) && k == g_step) {
			fprintf(stderr, PROG "[%d]: exiting with status %d at step %d (fault)\n",
				g_rank, status, g_step);
			fflush(NULL);
			_exit(status);
		}
		if (fault_at(F_FORGE, &k, NULL) && k == g_step)
			(void)forge_record();
		if ((fault_at(F_STOP, &k, NULL) || fault_at(F_FORGE, &k, NULL)) && k == g_step) {
			summary("stopped", NULL, FN_N);
			/* Busy elsewhere (a data loader, say): no more NCCL. */
			sleep_us((long)(opt.timeout_s * 1e6) + 500000);
			abort_comms();
			exit(3);
		}
		if (fault_at(F_STUCK, &k, NULL) && k == g_step)
			g_stuck_armed = 1;
		if (fault_at(F_BUSY, &k, &status) && k == g_step)
			busy_outside(status, g_fault_mode);
		if (fault_at(F_WEDGE, &k, NULL) && k == g_step)
			g_wedge_armed = 1;
		if (fault_at(F_MISMATCH, &k, NULL) && k == g_step)
			g_mismatch_armed = 1;
		if (fault_at(F_MISCOUNT, &k, NULL) && k == g_step)
			g_mismatch_armed = 2;
		/* A plugin may change the shared mask at run time (the
		 * example plugin's start/stop calls do); NCCL reads it at
		 * the next group. */
		if (opt.set_mask_step == g_step)
			atomic_store_explicit((_Atomic int *)&g_mask, opt.set_mask,
					      memory_order_relaxed);
		/* forward; wrapped at the root only, FSDP gathers every
		 * parameter in one AllGather before it */
		if (opt.fsdp == FSDP_ROOT)
			fsdp_gather(opt.fsdp_bytes);
		if (opt.schedule == SCHED_1F1B)
			step_1f1b();
		else if (opt.schedule == SCHED_INTERLEAVED && pp)
			step_interleaved();
		else
			for (mb = 0; mb < opt.microbatches; mb++) {
				if (!first)
					pp_op(FN_RECV, -1);
				layer_pass(1);
				if (!last)
					pp_op(FN_SEND, +1);
			}
		/* backward, the micro-batches in turn (GPipe: a bubble of
		 * (pp - 1) / (m + pp - 1) of the step) */
		for (mb = 0; opt.schedule == SCHED_GPIPE && mb < opt.microbatches; mb++) {
			if (!last)
				pp_op(FN_RECV, +1);
			layer_pass(0);
			if (!first)
				pp_op(FN_SEND, -1);
		}
		/* gradients: reduce-scattered to their shards under FSDP */
		if (opt.fsdp != FSDP_OFF)
			nccl_op(fsdp_comm(), FN_REDUCESCATTER,
				(size_t)(opt.fsdp_bytes / 2 / (uint64_t)fsdp_comm()->nranks),
				"ncclBfloat16", 2, -1);
		else if (g_ax[AX_DP])
			nccl_op(g_ax[AX_DP], FN_ALLREDUCE, opt.count * 4,
				"ncclFloat32", 4, -1);
	}
	/* The loss, across the world, ends the run together. */
	nccl_op(g_worldc, FN_ALLREDUCE, 1, "ncclFloat32", 4, -1);
}

/* ---- options ---- */

static long
num_arg(const char *what, const char *v, long lo, long hi)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi)
		die("%s=%.64s: expected an integer from %ld to %ld", what, v, lo,
		    hi);
	return n;
}

/* --spike PCT:EVERY */
static void
parse_spike(const char *spec)
{
	char *end, *end2;
	long pct, every;

	errno = 0;
	pct = strtol(spec, &end, 10);
	if (errno || end == spec || *end != ':' || pct < 1 || pct > 1000)
		goto bad;
	every = strtol(end + 1, &end2, 10);
	if (errno || end2 == end + 1 || *end2 || every < 1 || every > 1000000)
		goto bad;
	opt.spike_pct = (int)pct;
	opt.spike_every = (int)every;
	return;
bad:
	die("--spike=%.64s: expected PCT:EVERY, PCT from 1 to 1000 and EVERY from 1 to 1000000 (steps)",
	    spec);
}

/* --fsdp root:MIB or block:MIB */
static void
parse_fsdp(const char *spec)
{
	const char *v;
	long mib;

	if (strncmp(spec, "root:", 5) == 0) {
		opt.fsdp = FSDP_ROOT;
		v = spec + 5;
	} else if (strncmp(spec, "block:", 6) == 0) {
		opt.fsdp = FSDP_BLOCK;
		v = spec + 6;
	} else {
		die("--fsdp=%.64s: expected root:MIB or block:MIB", spec);
	}
	mib = num_arg("--fsdp MIB", v, 1, 1L << 20);
	opt.fsdp_bytes = (uint64_t)mib << 20;
}

/* stop:R:K  slow:R:PCT  exit:R:K[:STATUS]  stuck:R:K  wedge:R:K  busy:R:K:SECS
 * busycpu:R:K:SECS  busyio:R:K:SECS  mismatch:R:K  miscount:R:K  tail:R:SECS  forge:R:K */
static void
parse_fault(const char *spec)
{
	char tmp[128], *f[4], *save = NULL, *p;
	struct fault *ft;
	int n = 0;

	if (opt.nfaults == MAX_FAULTS)
		die("--fault: at most %d", MAX_FAULTS);
	snprintf(tmp, sizeof(tmp), "%s", spec);
	for (p = strtok_r(tmp, ":", &save); p && n < 4;
	     p = strtok_r(NULL, ":", &save))
		f[n++] = p;
	ft = &opt.faults[opt.nfaults];
	if (n < 3)
		goto bad;
	if (strcmp(f[0], "stop") == 0)
		ft->kind = F_STOP;
	else if (strcmp(f[0], "slow") == 0)
		ft->kind = F_SLOW;
	else if (strcmp(f[0], "exit") == 0)
		ft->kind = F_EXIT;
	else if (strcmp(f[0], "stuck") == 0)
		ft->kind = F_STUCK;
	else if (strcmp(f[0], "wedge") == 0)
		ft->kind = F_WEDGE;
	else if (strcmp(f[0], "busy") == 0)
		ft->kind = F_BUSY, ft->mode = BUSY_BOTH;
	else if (strcmp(f[0], "busycpu") == 0)
		ft->kind = F_BUSY, ft->mode = BUSY_CPU;
	else if (strcmp(f[0], "busyio") == 0)
		ft->kind = F_BUSY, ft->mode = BUSY_IO;
	else if (strcmp(f[0], "mismatch") == 0)
		ft->kind = F_MISMATCH;
	else if (strcmp(f[0], "miscount") == 0)
		ft->kind = F_MISCOUNT;
	else if (strcmp(f[0], "tail") == 0)
		ft->kind = F_TAIL;
	else if (strcmp(f[0], "forge") == 0)
		ft->kind = F_FORGE;
	else
		goto bad;
	if (ft->kind == F_BUSY ? n != 4 : n == 4 && ft->kind != F_EXIT)
		goto bad;
	ft->rank = (int)num_arg("--fault rank", f[1], 0, MAX_WORLD - 1);
	ft->arg = num_arg("--fault step or percent", f[2], 0, 1000000);
	if (ft->kind == F_BUSY)
		ft->status = (int)num_arg("--fault seconds", f[3], 1, 3600);
	else
		ft->status = n == 4 ? (int)num_arg("--fault status", f[3], 0, 255) : 1;
	opt.nfaults++;
	return;
bad:
	die("--fault=%.64s: expected stop:RANK:STEP, slow:RANK:PERCENT, exit:RANK:STEP[:STATUS], "
	    "stuck:RANK:STEP, wedge:RANK:STEP, busy[cpu|io]:RANK:STEP:SECONDS, mismatch:RANK:STEP, "
	    "miscount:RANK:STEP, tail:RANK:SECONDS or forge:RANK:STEP", spec);
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [options]\n"
		"Drives the NCCL profiler hook named by NCCL_PROFILER_PLUGIN as NCCL 2.28\n"
		"does, for the rank in RANK/WORLD_SIZE/PARALLEL_LAYOUT_{TP,CP,DP,PP}.\n"
		"  --steps N          training steps (10)\n"
		"  --layers N         layers per stage (2)\n"
		"  --compute-us N     compute per layer, microseconds (2000)\n"
		"  --jitter PCT       random compute jitter, +-percent (5)\n"
		"  --spike PCT:EVERY  a whole step PCT %% slower, on one step in EVERY\n"
		"                     at random (each rank on its own)\n"
		"  --seed N           jitter seed (1; the rank is added)\n"
		"  --channels N       kernel channels per operation (2)\n"
		"  --count N          elements per TP all-reduce (1048576)\n"
		"  --timeout S        bound on every wait, seconds (10)\n"
		"  --sync-dir DIR     where the job's shared segment lives (NCCL_DRIVER_DIR)\n"
		"  --abi 4|5          use only that table (default: v5, then v4)\n"
		"  --no-comm-names    pass a NULL commName, as NCCL does by default\n"
		"  --comm-prefix STR  each commName starts with STR (a user's own names)\n"
		"  --net              ProxyOp/ProxyStep events per channel (network peers)\n"
		"  --pxn              plus a ProxyOp of another process per channel\n"
		"  --set-mask K:MASK  at step K store MASK in the shared event mask\n"
		"  --microbatches M   micro-batches per step through the pipeline (1)\n"
		"  --schedule S       their order: gpipe (all forwards, then all backwards;\n"
		"                     the default), 1f1b (Megatron's one forward, one\n"
		"                     backward) or interleaved (Megatron's interleaved\n"
		"                     1F1B: --vpp chunks per stage, M a multiple of pp)\n"
		"  --vpp V            model chunks per stage with --schedule interleaved\n"
		"  --fsdp root:MIB    FSDP over the DP group (the world when dp is 1) of a\n"
		"  --fsdp block:MIB   model of MIB MiB: one AllGather of it all before the\n"
		"                     forward pass (root), or one per layer (block); the\n"
		"                     gradients reduce-scattered\n"
		"  --fault SPEC       stop:R:K, slow:R:PCT, exit:R:K[:STATUS], stuck:R:K, wedge:R:K,\n"
		"                     busy:R:K:SECS (CPU and writes; busycpu, busyio: one of\n"
		"                     them), mismatch:R:K (rank R's first collective of\n"
		"                     step K another func than its peers': all hang), miscount:R:K\n"
		"                     (the same with twice the count), tail:R:SECS (rank R busy\n"
		"                     outside NCCL for SECS after the last step, as a final\n"
		"                     checkpoint is, then exit 0), forge:R:K (rank R writes\n"
		"                     into its own record a wait since boot and stuck kernels\n"
		"                     at step K, then stops as stop does)\n");
}

static void
parse_opts(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "steps", required_argument, NULL, 's' },
		{ "layers", required_argument, NULL, 'l' },
		{ "compute-us", required_argument, NULL, 'c' },
		{ "jitter", required_argument, NULL, 'j' },
		{ "spike", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 'S' },
		{ "channels", required_argument, NULL, 'C' },
		{ "count", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "sync-dir", required_argument, NULL, 'd' },
		{ "abi", required_argument, NULL, 'a' },
		{ "no-comm-names", no_argument, NULL, 'N' },
		{ "comm-prefix", required_argument, NULL, 'Q' },
		{ "fault", required_argument, NULL, 'f' },
		{ "net", no_argument, NULL, 'e' },
		{ "pxn", no_argument, NULL, 'x' },
		{ "set-mask", required_argument, NULL, 'm' },
		{ "fsdp", required_argument, NULL, 'F' },
		{ "microbatches", required_argument, NULL, 'M' },
		{ "schedule", required_argument, NULL, 'P' },
		{ "vpp", required_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *end, *end2;
	int ch;

	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 's': opt.steps = (int)num_arg("--steps", optarg, 0, 1000000); break;
		case 'l': opt.layers = (int)num_arg("--layers", optarg, 1, 1000); break;
		case 'c': opt.compute_us = num_arg("--compute-us", optarg, 0, 10000000); break;
		case 'j': opt.jitter_pct = (int)num_arg("--jitter", optarg, 0, 50); break;
		case 'k': parse_spike(optarg); break;
		case 'S': opt.seed = (unsigned long)num_arg("--seed", optarg, 0, 0x7fffffff); break;
		case 'C': opt.channels = (int)num_arg("--channels", optarg, 1, MAX_CHANNELS); break;
		case 'n': opt.count = (size_t)num_arg("--count", optarg, 1, 1L << 30); break;
		case 't':
			errno = 0;
			opt.timeout_s = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(opt.timeout_s > 0) ||
			    opt.timeout_s > 3600)
				die("--timeout=%.64s: expected seconds, above 0 and at most 3600",
				    optarg);
			break;
		case 'd': opt.sync_dir = optarg; break;
		case 'a': opt.abi = (int)num_arg("--abi", optarg, 4, 5); break;
		case 'N': opt.comm_names = 0; break;
		case 'Q':
			if (strlen(optarg) > 40)
				die("--comm-prefix=%.64s: at most 40 bytes", optarg);
			opt.comm_prefix = optarg;
			break;
		case 'f': parse_fault(optarg); break;
		case 'e': opt.net = 1; break;
		case 'x': opt.pxn = 1; break;
		case 'F': parse_fsdp(optarg); break;
		case 'M': opt.microbatches = (int)num_arg("--microbatches", optarg, 1, 10000); break;
		case 'P':
			if (strcmp(optarg, "gpipe") == 0)
				opt.schedule = SCHED_GPIPE;
			else if (strcmp(optarg, "1f1b") == 0)
				opt.schedule = SCHED_1F1B;
			else if (strcmp(optarg, "interleaved") == 0)
				opt.schedule = SCHED_INTERLEAVED;
			else
				die("--schedule=%.64s: expected gpipe, 1f1b or interleaved", optarg);
			break;
		case 'V': opt.vpp = (int)num_arg("--vpp", optarg, 1, 64); break;
		case 'm':
			errno = 0;
			opt.set_mask_step = (int)strtol(optarg, &end, 10);
			if (errno || end == optarg || *end != ':' || opt.set_mask_step < 0)
				die("--set-mask=%.64s: expected STEP:MASK", optarg);
			opt.set_mask = (int)strtol(end + 1, &end2, 0);
			if (errno || *end2 || opt.set_mask < 0 || opt.set_mask > 0xfff)
				die("--set-mask=%.64s: expected STEP:MASK, MASK from 0 to 0xfff",
				    optarg);
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%.64s'", argv[optind]);
	if (opt.schedule != SCHED_INTERLEAVED)
		opt.vpp = 1;
	else if (opt.vpp < 2)
		die("--schedule interleaved wants --vpp 2 or more (model chunks per stage)");
}

int
main(int argc, char **argv)
{
	int i;

	parse_opts(argc, argv);
	read_env();
	g_rng = (uint64_t)opt.seed * UINT64_C(0x9e3779b97f4a7c15) +
		(uint64_t)g_rank + 1;
	/* A page any access to which faults (/dev/zero: POSIX has no
	 * MAP_ANONYMOUS). */
	i = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	g_foreign = i < 0 ? MAP_FAILED :
		    mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE, i, 0);
	if (i >= 0)
		close(i);
	if (g_foreign == MAP_FAILED)
		die("/dev/zero: %s", strerror(errno));
	make_comms();
	attach_sync();
	load_hook();
	for (i = 0; i < g_ncomm; i++)
		init_comm(&g_comm[i]);
	train();
	/* A last checkpoint after the end: this rank alone, its peers gone
	 * (its communicators kept until it exits, as a script's are). */
	{
		long secs;

		if (fault_at(F_TAIL, &secs, NULL))
			busy_outside((int)secs, BUSY_BOTH);
	}
	summary("ok", NULL, FN_N);
	abort_comms();
	munmap(g_seg, g_seg_len);
	return 0;
}
