/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading one rank's watch record (record.h) safely: the file is written by
 * the job's user, so layoutd (root) treats it as hostile input.  A record is
 * opened without following symbolic links, checked (type, owner, mode, size,
 * magic, version, sizes), mapped read-only, and each communicator slot is
 * copied through its sequence counters into a plain snapshot that holds no
 * pointer into the mapping; every value is validated before the caller sees
 * it.
 *
 * The path rule: every directory of the path (for a relative path, those
 * named in it) must be a real directory (no symbolic link anywhere), owned
 * by root or by the record's expected owner, and writable by no one else
 * unless it has the sticky bit (as /tmp and /dev/shm do).  Give it a
 * canonical path: a record under a symlinked directory is refused.
 *
 * What an accepted snapshot promises (the fuzz target checks each):
 *   - the header's version and sizes are this reader's; state and
 *     off_reason are values of their enums; nccl_abi is 0, 4 or 5;
 *   - nslots_used <= PLW_MAX_COMMS; every slot is READER_SLOT_FREE (ident,
 *     launch and gpu all zero), READER_SLOT_BUSY (a writer stayed inside
 *     one of its parts: ident may be valid, launch and gpu are zero) or
 *     READER_SLOT_OK;
 *   - in an OK slot: ident.state is ACTIVE or FINALIZED, 1 <= nranks <=
 *     READER_MAX_RANKS, 0 <= rank < nranks, 1 <= nnodes <= nranks; the name
 *     (the user's: any bytes, echo it through pl_clip) ends in NUL within
 *     its array; the texts NCCL gives (func, datatype, algo, proto,
 *     done_func) end in NUL within theirs and are printable ASCII before; launch.root and launch.p2p_peer are -1 or
 *     in [0, nranks); launch.nchannels and gpu counts of channels are
 *     bounded (READER_MAX_CHANNELS); gpu.ch_stopped <= gpu.ch_started;
 *     launch.bursts <= launch.colls;
 *   - every seq in the snapshot is even.
 *
 * Times, when the caller gives its clock (reader_expect.now_ns, and the
 * process's start, born_ns): the record's start lies between the process's
 * start and now; every time of a slot (init, fini, enqueue, p2p, progress,
 * completion, the wait ring's) lies between the record's start and now,
 * and every duration (waits, gaps, p2p time) fits in that span, each with
 * READER_CLOCK_SLACK_NS to spare.  A record that claims a wait since boot
 * or a time to come is refused, saying which field: the record is the
 * user's to write, and an age made of it must not outlive the process.
 * Not checked: the GPU's own times (gpu_start_ns, gpu_stop_ns: another
 * clock), and relations between the launch and gpu parts (they are copied
 * at different moments).
 *
 * Truncation: the record's owner can shrink the file after it was checked,
 * and an access to the lost pages of a mapping raises SIGBUS.  lib/ installs
 * no signal handler; a daemon that samples records of untrusted users must
 * guard the call (a SIGBUS handler around reader_read, see layoutd).
 */
#ifndef PL_WATCH_READER_H
#define PL_WATCH_READER_H

#include <stdint.h>
#include <sys/types.h>

#include "pl_err.h"
#include "record.h"

/* Bounds beyond NCCL's own (MAXCHANNELS is 64; ranks fit in an int). */
#define READER_MAX_RANKS	(1 << 24)
#define READER_MAX_CHANNELS	64
/* What a time may lie past the bounds it is checked against: a write
 * racing the read, the process's start known to a clock tick. */
#define READER_CLOCK_SLACK_NS	1000000000ULL

enum reader_slot_state {
	READER_SLOT_FREE = 0,	/* no communicator in this slot */
	READER_SLOT_OK = 1,	/* a consistent, validated copy */
	READER_SLOT_BUSY = 2	/* a writer stayed inside a part */
};

struct reader_slot {
	enum reader_slot_state state;
	struct plw_ident ident;
	struct plw_launch launch;
	struct plw_gpu gpu;
};

/* One record's contents, copied.  No pointers: it can be kept, compared and
 * copied freely. */
struct reader_snap {
	struct plw_header hdr;	/* copied field by field (atomic loads) */
	uint32_t nslots_used;	/* slots not FREE */
	uint32_t nbusy;		/* slots BUSY */
	struct reader_slot slot[PLW_MAX_COMMS];
};

/* What the caller knows of the record from elsewhere (the registration).
 * A field of -1 is not checked; uid is always checked. */
struct reader_expect {
	uid_t uid;		/* the owner the file must have */
	int64_t job_id;
	int64_t step_id;
	int64_t rank;
	int64_t pid;
	uint64_t now_ns;	/* CLOCK_MONOTONIC now; 0: times not checked */
	uint64_t born_ns;	/* the process's start on that clock; 0: not known */
};

/* An expectation that checks the owner only. */
void reader_expect_uid(struct reader_expect *x, uid_t uid);

/*
 * Read the record at path into *snap.  Returns 0 when every slot was copied,
 * 1 when the record is valid but some slot stayed busy (snap->nbusy > 0; err
 * names the file and the slots), -1 when the record is refused (err names
 * the file and the reason; *snap is zeroed).  Never blocks: a FIFO is
 * refused without waiting for a writer, a busy slot after
 * PLW_READ_TRIES copies.
 */
int reader_read(const char *path, const struct reader_expect *x, struct reader_snap *snap,
		pl_err_t *err);

/*
 * The same for a record already in memory (size bytes at base, as mapped):
 * magic, version, sizes and every value are checked as above; name is the
 * record's name for messages.  reader_read() uses it on its mapping.
 */
int reader_snap_mem(const void *base, uint64_t size, const char *name,
		    const struct reader_expect *x, struct reader_snap *snap, pl_err_t *err);

#endif
