/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The NCCL profiler plugin ABI, declared from its documented layout so the
 * hook builds without CUDA or NCCL's headers.  Two versions are declared:
 *
 *   v5  NCCL 2.28 (looked up first as the data symbol "ncclProfiler_v5")
 *   v4  NCCL 2.27 (symbol "ncclProfiler_v4"; 2.28 wraps it in an adapter)
 *
 * Only the layout matters: member order, types and enum values must match
 * what NCCL 2.28.9 passes.  The names are ours (prefix plw_nccl_ / PLW_NCCL_)
 * so this header can sit beside a real nccl.h without clashing.
 *
 * Facts worth keeping next to the layout:
 * - A descriptor is valid only during startEvent; strings in it must be
 *   copied if they are to outlive the call.
 * - The event-activation mask given to init is one process-wide int shared
 *   by every communicator; NCCL reads it at each group and copies it into
 *   each task.  A set bit also enables its ancestors (Coll alone still brings
 *   GroupApi, CollApi and Group).
 * - Coll/P2p stop means "enqueued", not "done".  Completion on the GPU is
 *   seen through KernelCh events, which start and stop on the
 *   communicator's proxy progress thread; the stop is preceded by a
 *   recordEventState(PLW_NCCL_STATE_KERNEL_CH_STOP) carrying the GPU stop
 *   timestamp.
 * - With PXN, a ProxyOp may be progressed by another process: when
 *   proxyOp.pid differs from ours, parentObj and the context are that
 *   process's pointers.
 */
#ifndef PLW_NCCL_PROFILER_ABI_H
#define PLW_NCCL_PROFILER_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ncclResult_t: NCCL returns and expects a plain int-sized enum. */
typedef enum {
	PLW_NCCL_SUCCESS = 0,
	PLW_NCCL_UNHANDLED_CUDA_ERROR = 1,
	PLW_NCCL_SYSTEM_ERROR = 2,
	PLW_NCCL_INTERNAL_ERROR = 3,
	PLW_NCCL_INVALID_ARGUMENT = 4,
	PLW_NCCL_INVALID_USAGE = 5,
	PLW_NCCL_REMOTE_ERROR = 6,
	PLW_NCCL_IN_PROGRESS = 7,
	PLW_NCCL_NUM_RESULTS = 8
} plw_nccl_result_t;

/* ncclDebugLogLevel: the first argument of NCCL's logger. */
typedef enum {
	PLW_NCCL_LOG_NONE = 0,
	PLW_NCCL_LOG_VERSION = 1,
	PLW_NCCL_LOG_WARN = 2,
	PLW_NCCL_LOG_INFO = 3,
	PLW_NCCL_LOG_ABORT = 4,
	PLW_NCCL_LOG_TRACE = 5
} plw_nccl_log_level_t;

/* ncclDebugLogSubSys bits: the logger's flags argument. */
#define PLW_NCCL_SUBSYS_INIT	0x1UL
#define PLW_NCCL_SUBSYS_ENV	0x80UL
#define PLW_NCCL_SUBSYS_PROFILE	0x4000UL

/* ncclDebugLogger_t: printf-style, with level, subsystem flags, file, line. */
typedef void (*plw_nccl_logger_t)(plw_nccl_log_level_t level,
	unsigned long flags, const char *file, int line, const char *fmt, ...);

/* Event types: bits of the activation mask and the descriptor's type. */
enum {
	PLW_NCCL_EV_GROUP = 1 << 0,		/* legacy group of one plan */
	PLW_NCCL_EV_COLL = 1 << 1,		/* collective task */
	PLW_NCCL_EV_P2P = 1 << 2,		/* send/recv task */
	PLW_NCCL_EV_PROXY_OP = 1 << 3,		/* proxy thread, per peer */
	PLW_NCCL_EV_PROXY_STEP = 1 << 4,	/* proxy thread, per transfer */
	PLW_NCCL_EV_PROXY_CTRL = 1 << 5,	/* proxy thread state */
	PLW_NCCL_EV_KERNEL_CH = 1 << 6,		/* proxy thread, per channel */
	PLW_NCCL_EV_NET_PLUGIN = 1 << 7,	/* from the net plugin */
	PLW_NCCL_EV_GROUP_API = 1 << 8,		/* v5: ncclGroupStart/End */
	PLW_NCCL_EV_COLL_API = 1 << 9,		/* v5: the collective call */
	PLW_NCCL_EV_P2P_API = 1 << 10,		/* v5: ncclSend/ncclRecv */
	PLW_NCCL_EV_KERNEL_LAUNCH = 1 << 11	/* v5: around the launch */
};

/* ncclProfilerEventState_v4_t / _v5_t (int-sized). */
typedef enum {
	PLW_NCCL_STATE_PROXY_OP_SEND_POSTED = 0,	/* 0-7 deprecated */
	PLW_NCCL_STATE_PROXY_OP_SEND_REM_FIFO_WAIT = 1,
	PLW_NCCL_STATE_PROXY_OP_SEND_TRANSMITTED = 2,
	PLW_NCCL_STATE_PROXY_OP_SEND_DONE = 3,
	PLW_NCCL_STATE_PROXY_OP_RECV_POSTED = 4,
	PLW_NCCL_STATE_PROXY_OP_RECV_RECEIVED = 5,
	PLW_NCCL_STATE_PROXY_OP_RECV_TRANSMITTED = 6,
	PLW_NCCL_STATE_PROXY_OP_RECV_DONE = 7,
	PLW_NCCL_STATE_PROXY_STEP_SEND_GPU_WAIT = 8,
	PLW_NCCL_STATE_PROXY_STEP_SEND_WAIT = 9,
	PLW_NCCL_STATE_PROXY_STEP_RECV_WAIT = 10,
	PLW_NCCL_STATE_PROXY_STEP_RECV_FLUSH_WAIT = 11,
	PLW_NCCL_STATE_PROXY_STEP_RECV_GPU_WAIT = 12,
	PLW_NCCL_STATE_PROXY_CTRL_IDLE = 13,
	PLW_NCCL_STATE_PROXY_CTRL_ACTIVE = 14,
	PLW_NCCL_STATE_PROXY_CTRL_SLEEP = 15,
	PLW_NCCL_STATE_PROXY_CTRL_WAKEUP = 16,
	PLW_NCCL_STATE_PROXY_CTRL_APPEND = 17,
	PLW_NCCL_STATE_PROXY_CTRL_APPEND_END = 18,
	PLW_NCCL_STATE_PROXY_OP_IN_PROGRESS = 19,
	PLW_NCCL_STATE_PROXY_STEP_SEND_PEER_WAIT = 20,
	PLW_NCCL_STATE_NET_PLUGIN_UPDATE = 21,
	PLW_NCCL_STATE_KERNEL_CH_STOP = 22,	/* args: kernelCh.pTimer */
	PLW_NCCL_STATE_GROUP_START_API_STOP = 23,	/* v5, GroupApi */
	PLW_NCCL_STATE_GROUP_END_API_START = 24		/* v5, GroupApi */
} plw_nccl_state_t;

/*
 * ncclProfilerEventDescr_v5_t.  Header: type (uint64), parentObj (the
 * handle this plugin returned for the parent, or NULL), rank (set for Coll,
 * P2p, ProxyOp, ProxyStep and NetPlugin; 0 for the API events and
 * KernelCh); then one union member per event kind.
 */
typedef struct {
	uint64_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			_Bool graphCaptured;
			int groupDepth;		/* 1: implicit group */
		} groupApi;
		struct {
			const char *func;
			size_t count;		/* the caller's count */
			const char *datatype;	/* the caller's datatype */
			int root;
			void *stream;
			_Bool graphCaptured;
		} collApi;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			void *stream;
			_Bool graphCaptured;
		} p2pApi;
		struct {
			void *stream;
		} kernelLaunch;
		struct {
			uint64_t seqNumber;	/* per comm, per func */
			const char *func;
			const void *sendBuff;
			void *recvBuff;
			size_t count;		/* AllGather/Broadcast: bytes */
			int root;
			const char *datatype;
			uint8_t nChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
			void *parentGroup;	/* the legacy Group handle */
		} coll;
		struct {
			const char *func;	/* "Send" or "Recv" */
			void *buff;
			const char *datatype;
			size_t count;
			int peer;
			uint8_t nChannels;
			void *parentGroup;
		} p2p;
		struct {
			pid_t pid;		/* the originating process */
			uint8_t channelId;
			int peer;
			int nSteps;
			int chunkSize;		/* bytes */
			int isSend;
		} proxyOp;
		struct {
			int step;
		} proxyStep;
		struct {
			uint8_t channelId;
			uint64_t pTimer;	/* GPU globaltimer at start, ns */
		} kernelCh;
		struct {
			int64_t id;
			void *data;
		} netPlugin;
	};
} plw_nccl_descr_v5_t;

/* ncclProfilerEventStateArgs_v5_t (v4 has the same layout). */
typedef union {
	struct {
		size_t transSize;
	} proxyStep;
	struct {
		int appendedProxyOps;
	} proxyCtrl;
	struct {
		void *data;
	} netPlugin;
	struct {
		uint64_t pTimer;	/* GPU globaltimer at stop, ns */
	} kernelCh;
} plw_nccl_state_args_v5_t;

typedef plw_nccl_state_args_v5_t plw_nccl_state_args_v4_t;

/* ncclProfiler_v5_t: the table NCCL 2.28 finds as "ncclProfiler_v5". */
typedef struct {
	const char *name;
	plw_nccl_result_t (*init)(void **context, uint64_t commId,
		int *eActivationMask, const char *commName, int nNodes,
		int nranks, int rank, plw_nccl_logger_t logfn);
	plw_nccl_result_t (*startEvent)(void *context, void **eHandle,
		plw_nccl_descr_v5_t *eDescr);
	plw_nccl_result_t (*stopEvent)(void *eHandle);
	plw_nccl_result_t (*recordEventState)(void *eHandle,
		plw_nccl_state_t eState, plw_nccl_state_args_v5_t *eStateArgs);
	plw_nccl_result_t (*finalize)(void *context);
} plw_nccl_profiler_v5_t;

/*
 * ncclProfilerEventDescr_v4_t: type is one byte, no API events, Coll/P2p
 * have no parentGroup (their parentObj is the Group handle).  Under the 2.28
 * adapter p2p.nChannels is left uninitialised.
 */
typedef struct {
	uint8_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			uint64_t seqNumber;
			const char *func;
			const void *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			uint8_t nChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
		} coll;
		struct {
			const char *func;
			void *buff;
			const char *datatype;
			size_t count;
			int peer;
			uint8_t nChannels;
		} p2p;
		struct {
			pid_t pid;
			uint8_t channelId;
			int peer;
			int nSteps;
			int chunkSize;
			int isSend;
		} proxyOp;
		struct {
			int step;
		} proxyStep;
		struct {
			uint8_t channelId;
			uint64_t pTimer;
		} kernelCh;
		struct {
			int64_t id;
			void *data;
		} netPlugin;
	};
} plw_nccl_descr_v4_t;

/* ncclProfiler_v4_t: the table NCCL 2.27 finds as "ncclProfiler_v4"; init
 * takes the mask before the name and the hash after it. */
typedef struct {
	const char *name;
	plw_nccl_result_t (*init)(void **context, int *eActivationMask,
		const char *commName, uint64_t commHash, int nNodes, int nranks,
		int rank, plw_nccl_logger_t logfn);
	plw_nccl_result_t (*startEvent)(void *context, void **eHandle,
		plw_nccl_descr_v4_t *eDescr);
	plw_nccl_result_t (*stopEvent)(void *eHandle);
	plw_nccl_result_t (*recordEventState)(void *eHandle,
		plw_nccl_state_t eState, plw_nccl_state_args_v4_t *eStateArgs);
	plw_nccl_result_t (*finalize)(void *context);
} plw_nccl_profiler_v4_t;

#if defined(__LP64__)
/* The offsets NCCL 2.28.9 uses on LP64, worked out by hand from the layout
 * above: a change to a field's type or place breaks the build. */
_Static_assert(sizeof(plw_nccl_descr_v5_t) == 112, "v5 descriptor size");
_Static_assert(offsetof(plw_nccl_descr_v5_t, rank) == 16, "v5 rank");
_Static_assert(offsetof(plw_nccl_descr_v5_t, coll.seqNumber) == 24,
    "v5 union start");
_Static_assert(offsetof(plw_nccl_descr_v5_t, coll.nChannels) == 80,
    "v5 coll.nChannels");
_Static_assert(offsetof(plw_nccl_descr_v5_t, coll.parentGroup) == 104,
    "v5 coll.parentGroup");
_Static_assert(offsetof(plw_nccl_descr_v5_t, p2p.parentGroup) == 64,
    "v5 p2p.parentGroup");
_Static_assert(offsetof(plw_nccl_descr_v5_t, groupApi.groupDepth) == 28,
    "v5 groupApi.groupDepth");
_Static_assert(offsetof(plw_nccl_descr_v5_t, kernelCh.pTimer) == 32,
    "v5 kernelCh.pTimer");
_Static_assert(sizeof(plw_nccl_descr_v4_t) == 104, "v4 descriptor size");
_Static_assert(offsetof(plw_nccl_descr_v4_t, coll.proto) == 96,
    "v4 coll.proto");
_Static_assert(sizeof(plw_nccl_state_args_v5_t) == 8, "state args size");
_Static_assert(sizeof(plw_nccl_profiler_v5_t) == 48, "v5 table size");
#endif

#endif
