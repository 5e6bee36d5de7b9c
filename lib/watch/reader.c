/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading a watch record safely (see reader.h for the rules it enforces). */
/* S_ISVTX (the sticky bit) is XSI. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader.h"

void
reader_expect_uid(struct reader_expect *x, uid_t uid)
{
	x->uid = uid;
	x->job_id = -1;
	x->step_id = -1;
	x->rank = -1;
	x->pid = -1;
	x->now_ns = 0;
	x->born_ns = 0;
}

static const char *
type_name(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISLNK(m))
		return "a symbolic link";
	return "not a regular file";
}

/* One directory of the path, open as fd: a directory owned by root or uid,
 * writable by no one else unless sticky. */
static int
dir_check(int fd, const char *path, const char *shown, uid_t uid, pl_err_t *err)
{
	char c[PL_CLIP_BUF];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return pl_err_set(err, "watch record %s: directory %s: %s",
				  pl_clip_path(path, c, sizeof(c)), shown, strerror(errno));
	if (st.st_uid != 0 && st.st_uid != uid)
		return pl_err_set(err, "watch record %s: directory %s is owned by uid %lu "
				  "(want root or the record's owner, uid %lu)",
				  pl_clip_path(path, c, sizeof(c)), shown,
				  (unsigned long)st.st_uid, (unsigned long)uid);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return pl_err_set(err, "watch record %s: directory %s is writable by others "
				  "(mode %04o; want no group or other write, or the sticky bit)",
				  pl_clip_path(path, c, sizeof(c)), shown,
				  (unsigned)(st.st_mode & 07777));
	return 0;
}

/*
 * Open the directory that holds path's last component, walking it from the
 * root (or the working directory) one component at a time with O_NOFOLLOW,
 * and checking each.  Returns the directory's fd and sets *base to the last
 * component, or -1.
 */
static int
dir_open(const char *path, uid_t uid, const char **base, pl_err_t *err)
{
	char c[PL_CLIP_BUF], cs[PL_CLIP_BUF], comp[NAME_MAX + 1], shown[PATH_MAX];
	const char *p = path, *slash;
	int fd, next;

	if (!*path)
		return pl_err_set(err, "watch record: empty path");
	if (strlen(path) >= PATH_MAX)
		return pl_err_set(err, "watch record %s: path longer than %d bytes",
				  pl_clip_path(path, c, sizeof(c)), PATH_MAX - 1);
	fd = open(*p == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return pl_err_set(err, "watch record %s: %s", pl_clip_path(path, c, sizeof(c)),
				  strerror(errno));
	snprintf(shown, sizeof(shown), "%s", *p == '/' ? "/" : ".");
	if (dir_check(fd, path, shown, uid, err) < 0)
		goto fail;
	while (*p == '/')
		p++;
	while ((slash = strchr(p, '/'))) {
		size_t n = (size_t)(slash - p);

		if (n > NAME_MAX) {
			pl_err_set(err, "watch record %s: a directory name longer than %d bytes",
				   pl_clip_path(path, c, sizeof(c)), NAME_MAX);
			goto fail;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		snprintf(shown, sizeof(shown), "%.*s", (int)(slash - path), path);
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			int e = errno;

			pl_err_set(err, "watch record %s: directory %s: %s",
				   pl_clip_path(path, c, sizeof(c)),
				   pl_clip_path(shown, cs, sizeof(cs)),
				   e == ELOOP || e == ENOTDIR ?
				   "not a directory (symbolic links are not followed)" : strerror(e));
			goto fail;
		}
		close(fd);
		fd = next;
		if (dir_check(fd, path, pl_clip_path(shown, cs, sizeof(cs)), uid, err) < 0)
			goto fail;
		p = slash + 1;
		while (*p == '/')
			p++;
	}
	if (!*p) {
		pl_err_set(err, "watch record %s: names a directory, not a file",
			   pl_clip_path(path, c, sizeof(c)));
		goto fail;
	}
	*base = p;
	return fd;
fail:
	close(fd);
	return -1;
}

/* The open file: a regular file of the owner, mode 0600, the record's size. */
static int
file_check(int fd, const char *path, uid_t uid, pl_err_t *err)
{
	char c[PL_CLIP_BUF];
	struct stat st;
	const uint64_t want = sizeof(struct plw_record);

	if (fstat(fd, &st) < 0)
		return pl_err_set(err, "watch record %s: %s", pl_clip_path(path, c, sizeof(c)),
				  strerror(errno));
	if (!S_ISREG(st.st_mode))
		return pl_err_set(err, "watch record %s: %s, want a regular file",
				  pl_clip_path(path, c, sizeof(c)), type_name(st.st_mode));
	if (st.st_uid != uid)
		return pl_err_set(err, "watch record %s: owned by uid %lu, want uid %lu",
				  pl_clip_path(path, c, sizeof(c)), (unsigned long)st.st_uid,
				  (unsigned long)uid);
	if ((st.st_mode & 07777) != 0600)
		return pl_err_set(err, "watch record %s: mode %04o, want 0600",
				  pl_clip_path(path, c, sizeof(c)), (unsigned)(st.st_mode & 07777));
	if (st.st_size < 0 || (uint64_t)st.st_size != want)
		return pl_err_set(err, "watch record %s: %jd bytes (%s), want %" PRIu64,
				  pl_clip_path(path, c, sizeof(c)), (intmax_t)st.st_size,
				  (uint64_t)st.st_size < want ? "truncated" : "too large", want);
	return 0;
}

int
reader_read(const char *path, const struct reader_expect *x, struct reader_snap *snap,
	    pl_err_t *err)
{
	char c[PL_CLIP_BUF];
	const char *base = NULL;
	void *map = MAP_FAILED;
	const size_t size = sizeof(struct plw_record);
	int dfd = -1, fd = -1, rv = -1;

	memset(snap, 0, sizeof(*snap));
	dfd = dir_open(path, x->uid, &base, err);
	if (dfd < 0)
		goto out;
	/* O_NONBLOCK: a FIFO opens without waiting for a writer (then it is
	 * refused as not a regular file). */
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		pl_err_set(err, "watch record %s: %s", pl_clip_path(path, c, sizeof(c)),
			   e == ELOOP ? "a symbolic link (not followed), want a regular file" :
			   strerror(e));
		goto out;
	}
	if (file_check(fd, path, x->uid, err) < 0)
		goto out;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		pl_err_set(err, "watch record %s: mmap: %s", pl_clip_path(path, c, sizeof(c)),
			   strerror(errno));
		goto out;
	}
	rv = reader_snap_mem(map, size, path, x, snap, err);
out:
	if (map != MAP_FAILED)
		munmap(map, size);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return rv;
}

/* ---- validation of the copied values ---------------------------------- */

/* A text of len bytes ends in NUL within the array and is printable ASCII
 * before it. */
static int
text_ok(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] == '\0')
			return 1;
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return 0;
	}
	return 0;
}

/* The header copied with one atomic load per word (the writer may be
 * bumping its counters). */
static void
header_copy(const struct plw_header *h, struct plw_header *out)
{
	const uint64_t *sw = (const uint64_t *)h;
	uint64_t *dw = (uint64_t *)out;
	size_t i;

	for (i = 0; i < sizeof(*h) / 8; i++)
		dw[i] = __atomic_load_n(&sw[i], __ATOMIC_RELAXED);
}

static int
header_ok(const struct plw_header *h, const char *name, const struct reader_expect *x,
	  pl_err_t *err)
{
	char c[PL_CLIP_BUF];

	if (h->state > PLW_STATE_OFF)
		return pl_err_set(err, "watch record %s: state %u, want 0 to 2",
				  pl_clip_path(name, c, sizeof(c)), h->state);
	if (h->off_reason > PLW_OFF_FINALIZED)
		return pl_err_set(err, "watch record %s: off_reason %u, want 0 to 3",
				  pl_clip_path(name, c, sizeof(c)), h->off_reason);
	if (h->nccl_abi != 0 && h->nccl_abi != 4 && h->nccl_abi != 5)
		return pl_err_set(err, "watch record %s: nccl_abi %u, want 0, 4 or 5",
				  pl_clip_path(name, c, sizeof(c)), h->nccl_abi);
	if (x->job_id >= 0 && h->job_id != (uint64_t)x->job_id)
		return pl_err_set(err, "watch record %s: job %" PRIu64 ", want %" PRId64,
				  pl_clip_path(name, c, sizeof(c)), h->job_id, x->job_id);
	if (x->step_id >= 0 && h->step_id != (uint64_t)x->step_id)
		return pl_err_set(err, "watch record %s: step %" PRIu64 ", want %" PRId64,
				  pl_clip_path(name, c, sizeof(c)), h->step_id, x->step_id);
	if (x->rank >= 0 && h->rank != x->rank)
		return pl_err_set(err, "watch record %s: rank %" PRId64 ", want %" PRId64,
				  pl_clip_path(name, c, sizeof(c)), h->rank, x->rank);
	if (x->pid >= 0 && h->pid != x->pid)
		return pl_err_set(err, "watch record %s: pid %" PRId64 ", want %" PRId64,
				  pl_clip_path(name, c, sizeof(c)), h->pid, x->pid);
	return 0;
}

static int
ident_ok(const struct plw_ident *id, const char *name, int i, pl_err_t *err)
{
	char c[PL_CLIP_BUF];

	if (id->state != PLW_SLOT_ACTIVE && id->state != PLW_SLOT_FINALIZED)
		return pl_err_set(err, "watch record %s: slot %d: state %u, want 1 or 2",
				  pl_clip_path(name, c, sizeof(c)), i, id->state);
	if (id->nranks < 1 || id->nranks > READER_MAX_RANKS)
		return pl_err_set(err, "watch record %s: slot %d: nranks %d, want 1 to %d",
				  pl_clip_path(name, c, sizeof(c)), i, id->nranks,
				  READER_MAX_RANKS);
	if (id->rank < 0 || id->rank >= id->nranks)
		return pl_err_set(err, "watch record %s: slot %d: rank %d, want 0 to %d",
				  pl_clip_path(name, c, sizeof(c)), i, id->rank, id->nranks - 1);
	if (id->nnodes < 1 || id->nnodes > id->nranks)
		return pl_err_set(err, "watch record %s: slot %d: nnodes %d, want 1 to %d",
				  pl_clip_path(name, c, sizeof(c)), i, id->nnodes, id->nranks);
	/* The name is the user's (any bytes, UTF-8 say): it need only end. */
	if (strnlen(id->name.c, sizeof(id->name.c)) == sizeof(id->name.c))
		return pl_err_set(err, "watch record %s: slot %d: the communicator name does "
				  "not end in NUL within %zu bytes",
				  pl_clip_path(name, c, sizeof(c)), i, sizeof(id->name.c));
	return 0;
}

static int
launch_ok(const struct plw_launch *l, const struct plw_ident *id, const char *name, int i,
	  pl_err_t *err)
{
	char c[PL_CLIP_BUF];
	const union plw_text *t[] = { &l->func, &l->datatype, &l->algo, &l->proto };
	static const char *const tn[] = { "func", "datatype", "algo", "proto" };
	size_t k;

	for (k = 0; k < sizeof(t) / sizeof(t[0]); k++)
		if (!text_ok(t[k]->c, sizeof(t[k]->c)))
			return pl_err_set(err, "watch record %s: slot %d: %s is not printable "
					  "text ending in NUL within %zu bytes",
					  pl_clip_path(name, c, sizeof(c)), i, tn[k],
					  sizeof(t[k]->c));
	if (l->root < -1 || l->root >= id->nranks)
		return pl_err_set(err, "watch record %s: slot %d: root %d, want -1 to %d",
				  pl_clip_path(name, c, sizeof(c)), i, l->root, id->nranks - 1);
	if (l->p2ps && (l->p2p_peer < 0 || l->p2p_peer >= id->nranks))
		return pl_err_set(err, "watch record %s: slot %d: p2p peer %d, want 0 to %d",
				  pl_clip_path(name, c, sizeof(c)), i, l->p2p_peer,
				  id->nranks - 1);
	if (!l->p2ps && l->p2p_peer != 0 && l->p2p_peer != -1)
		return pl_err_set(err, "watch record %s: slot %d: p2p peer %d with no p2p",
				  pl_clip_path(name, c, sizeof(c)), i, l->p2p_peer);
	if (l->p2p_is_send > 1)
		return pl_err_set(err, "watch record %s: slot %d: p2p_is_send %u, want 0 or 1",
				  pl_clip_path(name, c, sizeof(c)), i, l->p2p_is_send);
	if (l->bursts > l->colls)
		return pl_err_set(err, "watch record %s: slot %d: %" PRIu64 " bursts of %" PRIu64
				  " collectives", pl_clip_path(name, c, sizeof(c)), i, l->bursts,
				  l->colls);
	if (l->nchannels > READER_MAX_CHANNELS)
		return pl_err_set(err, "watch record %s: slot %d: %u channels, want at most %d",
				  pl_clip_path(name, c, sizeof(c)), i, l->nchannels,
				  READER_MAX_CHANNELS);
	return 0;
}

static int
gpu_ok(const struct plw_gpu *g, const char *name, int i, pl_err_t *err)
{
	char c[PL_CLIP_BUF];

	if (g->ch_stopped > g->ch_started)
		return pl_err_set(err, "watch record %s: slot %d: %" PRIu64 " channels stopped "
				  "of %" PRIu64 " started", pl_clip_path(name, c, sizeof(c)), i,
				  g->ch_stopped, g->ch_started);
	if (!text_ok(g->done_func.c, sizeof(g->done_func.c)))
		return pl_err_set(err, "watch record %s: slot %d: done_func is not printable "
				  "text ending in NUL within %zu bytes",
				  pl_clip_path(name, c, sizeof(c)), i, sizeof(g->done_func.c));
	return 0;
}

/*
 * One slot: ident first (written once), then gpu before launch, so that a
 * completion counted in the gpu copy belongs to a collective the (later)
 * launch copy has entered.  Returns 0 (snapshot or busy) or -1 (refused).
 */
static int
slot_snap(const struct plw_slot *s, int i, const char *name, struct reader_slot *out,
	  pl_err_t *err)
{
	uint64_t q;

	memset(out, 0, sizeof(*out));
	q = plw_read_part(&s->ident, &out->ident, sizeof(out->ident));
	if (q == 0) {
		memset(&out->ident, 0, sizeof(out->ident));
		out->state = READER_SLOT_FREE;
		return 0;
	}
	if (q == UINT64_MAX) {
		memset(&out->ident, 0, sizeof(out->ident));
		out->state = READER_SLOT_BUSY;
		return 0;
	}
	if (ident_ok(&out->ident, name, i, err) < 0)
		return -1;
	if (plw_read_gpu(s, &out->gpu) < 0 || plw_read_launch(s, &out->launch) < 0) {
		memset(&out->gpu, 0, sizeof(out->gpu));
		memset(&out->launch, 0, sizeof(out->launch));
		out->state = READER_SLOT_BUSY;
		return 0;
	}
	if (gpu_ok(&out->gpu, name, i, err) < 0 ||
	    launch_ok(&out->launch, &out->ident, name, i, err) < 0)
		return -1;
	out->state = READER_SLOT_OK;
	return 0;
}

/* One time of slot i against [lo, hi]; 0 (never written) passes. */
static int
time_ok(uint64_t t, uint64_t lo, uint64_t hi, const char *field, const char *name, int i,
	pl_err_t *err)
{
	char c[PL_CLIP_BUF];

	if (t == 0 || (t >= lo && t <= hi))
		return 0;
	if (t < lo)
		return pl_err_set(err, "watch record %s: slot %d: %s is %.1f s before the record "
				  "began (a wait it cannot have had)",
				  pl_clip_path(name, c, sizeof(c)), i, field, (double)(lo - t) / 1e9);
	return pl_err_set(err, "watch record %s: slot %d: %s is %.1f s in the future",
			  pl_clip_path(name, c, sizeof(c)), i, field, (double)(t - hi) / 1e9);
}

/* One duration of slot i: at most max. */
static int
span_ok(uint64_t d, uint64_t max, const char *field, const char *name, int i, pl_err_t *err)
{
	char c[PL_CLIP_BUF];

	if (d <= max)
		return 0;
	return pl_err_set(err, "watch record %s: slot %d: %s of %.1f s is longer than the "
			  "record has existed (%.1f s)", pl_clip_path(name, c, sizeof(c)), i,
			  field, (double)d / 1e9, (double)max / 1e9);
}

/* The times of an accepted copy against the caller's clock (reader.h). */
static int
times_ok(const struct reader_snap *snap, const char *name, const struct reader_expect *x,
	 pl_err_t *err)
{
	char c[PL_CLIP_BUF];
	uint64_t lo = snap->hdr.start_mono_ns, hi = x->now_ns + READER_CLOCK_SLACK_NS, max;
	int i, k;

	if (x->now_ns == 0)
		return 0;
	if (lo > hi)
		return pl_err_set(err, "watch record %s: it began %.1f s in the future",
				  pl_clip_path(name, c, sizeof(c)), (double)(lo - hi) / 1e9);
	if (x->born_ns > READER_CLOCK_SLACK_NS && lo < x->born_ns - READER_CLOCK_SLACK_NS)
		return pl_err_set(err, "watch record %s: it began %.1f s before its process did",
				  pl_clip_path(name, c, sizeof(c)),
				  (double)(x->born_ns - lo) / 1e9);
	max = hi - lo;
	for (i = 0; i < PLW_MAX_COMMS; i++) {
		const struct reader_slot *s = &snap->slot[i];
		const struct plw_launch *l = &s->launch;
		const struct plw_gpu *g = &s->gpu;

		if (s->state != READER_SLOT_OK)
			continue;
		if (time_ok(s->ident.init_ns, lo, hi, "init_ns", name, i, err) < 0 ||
		    time_ok(s->ident.fini_ns, lo, hi, "fini_ns", name, i, err) < 0 ||
		    time_ok(l->enqueue_ns, lo, hi, "launch.enqueue_ns", name, i, err) < 0 ||
		    time_ok(l->p2p_ns, lo, hi, "launch.p2p_ns", name, i, err) < 0 ||
		    time_ok(g->progress_ns, lo, hi, "gpu.progress_ns", name, i, err) < 0 ||
		    time_ok(g->done_enqueue_ns, lo, hi, "gpu.done_enqueue_ns", name, i, err) < 0 ||
		    time_ok(g->done_ns, lo, hi, "gpu.done_ns", name, i, err) < 0 ||
		    span_ok(g->p2p_wait_ns, max, "gpu.p2p_wait_ns", name, i, err) < 0 ||
		    span_ok(g->p2p_span_ns, max, "gpu.p2p_span_ns", name, i, err) < 0)
			return -1;
		for (k = 0; k < PLW_RING; k++)
			if (time_ok(g->ring[k].enqueue_ns, lo, hi, "a wait ring entry's enqueue_ns",
				    name, i, err) < 0 ||
			    span_ok(g->ring[k].wait_ns, max, "a wait ring entry's wait_ns", name, i,
				    err) < 0 ||
			    span_ok(g->ring[k].gap_ns, max, "a wait ring entry's gap_ns", name, i,
				    err) < 0 ||
			    span_ok(g->ring_p2p[k], max, "a wait ring entry's p2p time", name, i,
				    err) < 0)
				return -1;
	}
	return 0;
}

int
reader_snap_mem(const void *base, uint64_t size, const char *name,
		const struct reader_expect *x, struct reader_snap *snap, pl_err_t *err)
{
	char c[PL_CLIP_BUF], busy[PLW_MAX_COMMS * 4 + 1] = "";
	const struct plw_record *r = base;
	size_t blen = 0;
	int i;

	memset(snap, 0, sizeof(*snap));
	if (size != sizeof(struct plw_record))
		return pl_err_set(err, "watch record %s: %" PRIu64 " bytes (%s), want %zu",
				  pl_clip_path(name, c, sizeof(c)), size,
				  size < sizeof(struct plw_record) ? "truncated" : "too large",
				  sizeof(struct plw_record));
	if (__atomic_load_n(&r->hdr.magic, __ATOMIC_ACQUIRE) != PLW_MAGIC)
		return pl_err_set(err, "watch record %s: bad magic 0x%016" PRIx64
				  " (not a watch record, or not yet complete)",
				  pl_clip_path(name, c, sizeof(c)),
				  __atomic_load_n(&r->hdr.magic, __ATOMIC_RELAXED));
	header_copy(&r->hdr, &snap->hdr);
	if (snap->hdr.version != PLW_VERSION)
		goto refuse_version;
	if (plw_check_header(&snap->hdr, size) < 0) {
		pl_err_set(err, "watch record %s: header sizes %u/%u/%u/%" PRIu64 ", want "
			   "%zu/%zu/%d/%zu (header, slot, slots, record)",
			   pl_clip_path(name, c, sizeof(c)), snap->hdr.header_size,
			   snap->hdr.slot_size, snap->hdr.nslots, snap->hdr.record_size,
			   sizeof(struct plw_header), sizeof(struct plw_slot), PLW_MAX_COMMS,
			   sizeof(struct plw_record));
		goto fail;
	}
	if (header_ok(&snap->hdr, name, x, err) < 0)
		goto fail;
	for (i = 0; i < PLW_MAX_COMMS; i++) {
		if (slot_snap(&r->slot[i], i, name, &snap->slot[i], err) < 0)
			goto fail;
		if (snap->slot[i].state != READER_SLOT_FREE)
			snap->nslots_used++;
		if (snap->slot[i].state == READER_SLOT_BUSY) {
			snap->nbusy++;
			blen += (size_t)snprintf(busy + blen, sizeof(busy) - blen, "%s%d",
						 blen ? "," : "", i);
		}
	}
	if (times_ok(snap, name, x, err) < 0)
		goto fail;
	if (snap->nbusy) {
		pl_err_set(err, "watch record %s: busy: a writer stayed inside slot%s %s for "
			   "%d tries", pl_clip_path(name, c, sizeof(c)),
			   snap->nbusy > 1 ? "s" : "", busy, PLW_READ_TRIES);
		return 1;
	}
	return 0;
refuse_version:
	pl_err_set(err, "watch record %s: version %u, want %u", pl_clip_path(name, c, sizeof(c)),
		   snap->hdr.version, PLW_VERSION);
fail:
	memset(snap, 0, sizeof(*snap));
	return -1;
}
