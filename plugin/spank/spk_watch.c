/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The NCCL watch's per-step record directory, made by slurmstepd as root
 * before the tasks start and removed when the step ends.  The tasks (the
 * NCCL hook in them, as the job's user) create their records in it.  The
 * parent is shared by every job of the node, so nothing here follows a
 * symlink: a link or a foreign file planted at either name is refused, and
 * the caller turns the watch off for the step.
 */
#define _XOPEN_SOURCE 700	/* S_ISVTX */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "spk_plugin.h"
#include "watch/register.h"
#include "watch/summary.h"

/* PARENT as a directory fd we may trust: made 0755 when absent, a real
 * directory of ours that others cannot write (unless sticky). */
static int
open_parent(const char *parent, pl_err_t *err)
{
	char clip[PL_CLIP_BUF];
	struct stat sb;
	int fd;

	if (mkdir(parent, 0755) == 0)
		(void)chmod(parent, 0755);	/* the umask may have taken bits */
	else if (errno != EEXIST)
		return pl_err_set(err, "watch_dir %s: cannot create it: %s",
				  pl_clip_path(parent, clip, sizeof(clip)), strerror(errno));
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pl_err_set(err, "watch_dir %s: not a directory we can open without following a symlink: %s",
				  pl_clip_path(parent, clip, sizeof(clip)), strerror(errno));
	if (fstat(fd, &sb) < 0 || sb.st_uid != geteuid() ||
	    ((sb.st_mode & (S_IWGRP | S_IWOTH)) && !(sb.st_mode & S_ISVTX))) {
		close(fd);
		return pl_err_set(err, "watch_dir %s: must be owned by uid %ld and not writable by others (mode 0755 or sticky)",
				  pl_clip_path(parent, clip, sizeof(clip)), (long)geteuid());
	}
	return fd;
}

int
spk_watch_dir_make(const char *parent, unsigned long job, unsigned long step, long uid,
		  long gid, char *out, size_t outlen, pl_err_t *err)
{
	char name[48], clip[PL_CLIP_BUF];
	struct stat sb;
	bool made = false;
	int pfd, fd = -1, rv = -1;

	snprintf(name, sizeof(name), "%lu.%lu", job, step);
	if ((size_t)snprintf(out, outlen, "%s/%s", parent, name) >= outlen)
		return pl_err_set(err, "watch_dir %s: the step's directory name is too long",
				  pl_clip_path(parent, clip, sizeof(clip)));
	pfd = open_parent(parent, err);
	if (pfd < 0)
		return -1;
	if (mkdirat(pfd, name, 0700) == 0)
		made = true;
	else if (errno != EEXIST) {
		pl_err_set(err, "%s: cannot create it: %s", pl_clip_path(out, clip, sizeof(clip)),
			   strerror(errno));
		goto out;
	}
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		pl_err_set(err, "%s: something other than a directory is there (not followed): %s",
			   pl_clip_path(out, clip, sizeof(clip)), strerror(errno));
		goto out;
	}
	/* Another slurmstepd of this machine may have made it for the same
	 * step; a directory of anybody else is not ours to take. */
	if (fstat(fd, &sb) < 0 ||
	    (!made && sb.st_uid != geteuid() && (long)sb.st_uid != uid)) {
		pl_err_set(err, "%s: already there and owned by uid %ld, not by the job's user",
			   pl_clip_path(out, clip, sizeof(clip)), (long)sb.st_uid);
		goto out;
	}
	/* A directory taken over (a requeued job's same JOB.STEP) is fresh
	 * again: layoutd's sweep judges an unregistered one by its age. */
	if (!made)
		(void)futimens(fd, NULL);
	if ((uid >= 0 && fchown(fd, (uid_t)uid, gid >= 0 ? (gid_t)gid : (gid_t)-1) < 0 &&
	     (long)sb.st_uid != uid) || fchmod(fd, 0700) < 0) {
		pl_err_set(err, "%s: cannot give it to uid %ld with mode 0700: %s",
			   pl_clip_path(out, clip, sizeof(clip)), uid, strerror(errno));
		goto out;
	}
	rv = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rv < 0 && made)
		(void)unlinkat(pfd, name, AT_REMOVEDIR);
	close(pfd);
	return rv;
}

int
spk_watch_dir_remove(const char *parent, unsigned long job, unsigned long step, pl_err_t *err)
{
	char name[48], clip[PL_CLIP_BUF];
	struct dirent *de;
	DIR *d = NULL;
	int pfd, fd, rv = -1;

	snprintf(name, sizeof(name), "%lu.%lu", job, step);
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return errno == ENOENT ? 0 : pl_err_set(err, "watch_dir %s: %s",
							pl_clip_path(parent, clip, sizeof(clip)),
							strerror(errno));
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			rv = 0;
		else
			pl_err_set(err, "%s/%s: not a directory (left alone): %s",
				   pl_clip_path(parent, clip, sizeof(clip)), name, strerror(errno));
		goto out;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		pl_err_set(err, "%s/%s: %s", pl_clip_path(parent, clip, sizeof(clip)), name,
			   strerror(errno));
		goto out;
	}
	/* The records are files; unlinkat without AT_REMOVEDIR removes a
	 * symlink itself, never what it points to. */
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			(void)unlinkat(dirfd(d), de->d_name, 0);
	if (unlinkat(pfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
		pl_err_set(err, "%s/%s: cannot remove it: %s", pl_clip_path(parent, clip, sizeof(clip)),
			   name, strerror(errno));
		goto out;
	}
	rv = 0;
out:
	if (d)
		closedir(d);
	close(pfd);
	return rv;
}

int
spk_watch_record_path(const struct spk_watch_task *t, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "%s/plw-%lu.%lu.%ld.%ld", t->dir, t->job, t->step, t->rank,
			 t->pid);

	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* A node by the lowest rank it hosts (ties, which a checked placement
 * cannot have, by index: the order is total). */
struct node_key {
	long min_rank, index;
};

static int
by_min_rank(const void *a, const void *b)
{
	const struct node_key *x = a, *y = b;

	if (x->min_rank != y->min_rank)
		return x->min_rank < y->min_rank ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The step as the registration carries it (watch/register.h): world,
 * layout sizes and the nodes that host ranks, ordered by their lowest
 * rank.  A node of no tasks (its min_rank is the world) hosts no rank and
 * is left out.  NULL when out of memory.
 */
static struct reg_step *
step_of(const struct proto_placement *p)
{
	const long *sz = p->layout.size;
	static const int order[REG_NAXES] = { PL_TP, PL_CP, PL_EP, PL_DP, PL_PP };
	struct reg_step *s = NULL;
	struct node_key *key = NULL;
	const char **names = NULL;
	uint32_t size[REG_NAXES];
	long i, n = 0;

	if (p->nnodes < 0)
		return NULL;
	key = malloc(((size_t)p->nnodes + 1) * sizeof(*key));
	names = malloc(((size_t)p->nnodes + 1) * sizeof(*names));
	if (!key || !names)
		goto out;
	for (i = 0; i < p->nnodes; i++)
		if (p->nodes[i].ntasks > 0 && p->nodes[i].min_rank < p->world) {
			key[n].min_rank = p->nodes[i].min_rank;
			key[n++].index = i;
		}
	qsort(key, (size_t)n, sizeof(*key), by_min_rank);
	for (i = 0; i < n; i++)
		names[i] = p->nodes[key[i].index].name;
	for (i = 0; i < REG_NAXES; i++)
		size[i] = (uint32_t)sz[order[i]];
	s = reg_step_new((uint32_t)p->world, size, names, (size_t)n);
out:
	free(key);
	free(names);
	return s;
}

char *
spk_watch_task_json(const struct spk_watch_task *t)
{
	static const int order[REG_NAXES] = { PL_TP, PL_CP, PL_EP, PL_DP, PL_PP };
	struct reg_task r = { 0 };
	char rec[PATH_MAX];
	char *text;
	int i;

	if (spk_watch_record_path(t, rec, sizeof(rec)) < 0)
		return NULL;
	if (t->place && !(r.step = step_of(t->place)))
		return NULL;
	if (r.step && t->watch)
		r.step->watch = *t->watch;
	r.job = (json_int_t)t->job;
	r.step_id = (json_int_t)t->step;
	r.task = t->task;
	r.rank = t->rank;
	r.pid = t->pid;
	r.uid = t->uid;
	r.node = t->node;
	for (i = 0; i < REG_NAXES; i++)
		r.coords[i] = t->co[order[i]];
	r.record = rec;
	/* Only what a node summary carries (watch/summary.h): a GPU index
	 * past it goes as unknown, a longer NIC name as none, rather than as
	 * a registration layoutd refuses, which would leave the task unwatched. */
	r.gpu = t->gpu >= 0 && t->gpu < SUM_MAX_GPU ? t->gpu : -1;
	r.nic = t->nic && strlen(t->nic) < SUM_NIC_LEN ? t->nic : "";
	text = reg_task_encode(&r);
	reg_step_free(r.step);
	return text;
}

char *
spk_watch_exit_json(unsigned long job, unsigned long step, long task, int status)
{
	struct reg_exit e = { (json_int_t)job, (json_int_t)step, task, status };

	return reg_exit_encode(&e);
}
