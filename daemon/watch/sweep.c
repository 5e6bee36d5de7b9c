/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sweep of watch_dir (watch/sweep.h).
 *
 * The sweep removes the step directories (watch_dir/JOB.STEP) that nobody
 * removed: slurmstepd's exit callback did not run, or the step was never
 * registered here.  The directories are the job users' and layoutd runs as
 * root, so nothing is reached through a name: watch_dir is opened without
 * following a link, each step directory by openat() from it, its entries
 * unlinked by unlinkat() from that descriptor (a link is removed itself,
 * never what it points to), and no directory is descended into.  A pass is
 * bounded (names looked at, directories read, entries per directory) so a
 * user with many directories or files cannot hold up the loop; the next
 * pass goes on where this one stopped.
 */
#define _XOPEN_SOURCE 700	/* S_ISVTX */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "layoutd.h"
#include "pl_err.h"
#include "sweep.h"

/* A pass looks at SWEEP_NAMES names of watch_dir at most, reads
 * SWEEP_DIRS step directories at most and SWEEP_BUDGET of their entries
 * (each read and each removal counts), and judges no directory holding
 * more than SWEEP_ENTRIES entries (a step has at most watch_max_tasks
 * records, 4096); a fresh pass can always finish one it may judge.  Names
 * it logs about once are remembered by inode and name, SWEEP_NOTED of
 * them. */
#define SWEEP_NAMES 4096
#define SWEEP_DIRS 64
#define SWEEP_ENTRIES 8192
#define SWEEP_BUDGET (2 * SWEEP_ENTRIES)
#define SWEEP_NOTED 64

struct ld_sweep {
	struct ld *d;
	ld_sweep_step_cb step;		/* the node's view: what a JOB.STEP is */
	void *arg;
	unsigned long leftovers;	/* step directories removed */
	unsigned long sweeps;
	long sweep_skip;		/* names of watch_dir the next pass skips */
	char dir_note[PL_ERR_TEXT];	/* why watch_dir is not swept, as last logged */
	struct noted {
		ino_t ino;
		uint64_t name;		/* FNV-1a of the name */
	} noted[SWEEP_NOTED];
	int nnoted;
	bool noted_full;		/* said that further names are not logged */
};

/* A canonical decimal of n bytes: digits only, no leading zero, at most 18
 * (job and step ids as the plugin writes them, %lu). */
static bool
decimal(const char *s, size_t n, long *out)
{
	long v = 0;
	size_t i;

	if (n == 0 || n > 18 || (n > 1 && s[0] == '0'))
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/* "JOB.STEP", the name the plugin gives a step's directory. */
static bool
step_name(const char *name, long *job, long *step)
{
	const char *dot = strchr(name, '.');

	return dot && decimal(name, (size_t)(dot - name), job) &&
	       decimal(dot + 1, strlen(dot + 1), step);
}

/* "plw-JOB.STEP.RANK.PID", the name the hook gives a record: its pid. */
static bool
record_pid(const char *name, long *pid)
{
	static const char prefix[] = "plw-";
	const char *p = name + sizeof(prefix) - 1, *dot;
	long v = 0;
	int i;

	if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
		return false;
	for (i = 0; i < 3; i++) {
		dot = strchr(p, '.');
		if (!dot || !decimal(p, (size_t)(dot - p), &v))
			return false;
		p = dot + 1;
	}
	if (!decimal(p, strlen(p), &v) || v <= 0 || v > INT32_MAX)
		return false;
	*pid = v;
	return true;
}

static uint64_t
fnv(const char *s)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return h;
}

/* True the first time a name (by inode and name) is noted: the caller logs
 * then.  When the table is full, one line says so and the rest stay
 * silent. */
static bool
note_once(struct ld_sweep *w, ino_t ino, const char *name)
{
	const char *dir = w->d->cur->conf.watch_dir;
	char cl[PL_CLIP_BUF];
	uint64_t h = fnv(name);
	int i;

	for (i = 0; i < w->nnoted; i++)
		if (w->noted[i].ino == ino && w->noted[i].name == h)
			return false;
	if (w->nnoted == SWEEP_NOTED) {
		if (!w->noted_full)
			ld_log(&w->d->log, "watch: watch_dir %s: %d names are left alone already; "
			       "further ones are not logged", pl_clip_path(dir, cl, sizeof(cl)),
			       SWEEP_NOTED);
		w->noted_full = true;
		return false;
	}
	w->noted[w->nnoted].ino = ino;
	w->noted[w->nnoted].name = h;
	w->nnoted++;
	return true;
}

/* watch_dir, opened without following a link, when it is root's (layoutd's
 * uid) and others cannot write it (unless it is sticky, as /dev/shm).
 * -1 when absent (nothing to sweep) or refused (logged once). */
static int
watch_dir_open(struct ld_sweep *w, struct stat *st)
{
	const char *dir = w->d->cur->conf.watch_dir;
	char note[PL_ERR_TEXT], cl[PL_CLIP_BUF];
	int fd;

	note[0] = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno != ENOENT)
		snprintf(note, sizeof(note), "not a directory opened without following a link: %s",
			 strerror(errno));
	if (fd >= 0 && fstat(fd, st) < 0)
		snprintf(note, sizeof(note), "%s", strerror(errno));
	else if (fd >= 0 && (st->st_uid != geteuid() ||
			     ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))))
		snprintf(note, sizeof(note), "owned by uid %ld, mode %04o: want uid %ld's and not "
			 "writable by others unless sticky", (long)st->st_uid,
			 (unsigned)(st->st_mode & 07777), (long)geteuid());
	if (note[0] && strcmp(note, w->dir_note) != 0)
		ld_log(&w->d->log, "watch: watch_dir %s: %s: not swept",
		       pl_clip_path(dir, cl, sizeof(cl)), note);
	snprintf(w->dir_note, sizeof(w->dir_note), "%s", note);
	if (note[0] && fd >= 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Empty the step directory `name` (st: what fstatat found) and remove it,
 * unless one of its records' processes still runs.  1 when removed, 0
 * when kept, -1 when *budget ran out before it was judged (the pass stops
 * here and the next one starts with it). */
static int
sweep_dir(struct ld_sweep *w, int wfd, const char *name, const struct stat *st, const char *why,
	  long *budget)
{
	const char *dir = w->d->cur->conf.watch_dir;
	char cl[PL_CLIP_BUF], cn[PL_CLIP_BUF];
	struct stat fs, again;
	struct dirent *de;
	long n = 0, pid, live = 0;
	DIR *sd;
	int fd, rv = 0;

	fd = openat(wfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* gone, or a link by now: not followed */
	if (fstat(fd, &fs) < 0 || fs.st_dev != st->st_dev || fs.st_ino != st->st_ino ||
	    !(sd = fdopendir(fd))) {
		close(fd);
		return 0;
	}
	while ((de = readdir(sd)) != NULL && live == 0) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++n > SWEEP_ENTRIES)
			break;
		if (--*budget < 0) {
			rv = -1;
			goto out;
		}
		/* The pid of a record, as the hook named it.  A pid that runs
		 * keeps the directory, even when another process took it. */
		if (record_pid(de->d_name, &pid) && (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			live = pid;
	}
	if (n > SWEEP_ENTRIES) {
		if (note_once(w, st->st_ino, name))
			ld_log(&w->d->log, "watch: %s/%s holds more than %d entries: left alone",
			       pl_clip_path(dir, cl, sizeof(cl)), pl_clip(name, cn, sizeof(cn)),
			       SWEEP_ENTRIES);
		goto out;
	}
	if (live)
		goto out;
	rewinddir(sd);
	while ((de = readdir(sd)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		--*budget;
		/* A name is removed itself, never what it points to; an
		 * empty directory in it goes too, a full one keeps it. */
		if (unlinkat(dirfd(sd), de->d_name, 0) < 0 && (errno == EISDIR || errno == EPERM))
			(void)unlinkat(dirfd(sd), de->d_name, AT_REMOVEDIR);
	}
	/* The name must still be the directory just emptied. */
	if (fstatat(wfd, name, &again, AT_SYMLINK_NOFOLLOW) < 0 || again.st_dev != fs.st_dev ||
	    again.st_ino != fs.st_ino)
		goto out;
	if (unlinkat(wfd, name, AT_REMOVEDIR) < 0) {
		if (note_once(w, st->st_ino, name))
			ld_log(&w->d->log, "watch: leftover %s/%s (%s) cannot be removed: %s",
			       pl_clip_path(dir, cl, sizeof(cl)), pl_clip(name, cn, sizeof(cn)), why,
			       strerror(errno));
		goto out;
	}
	w->leftovers++;
	rv = 1;
	ld_log(&w->d->log, "watch: leftover %s/%s removed (%ld entries): %s, no record's process "
	       "runs", pl_clip_path(dir, cl, sizeof(cl)), pl_clip(name, cn, sizeof(cn)), n, why);
out:
	closedir(sd);
	return rv;
}

/* One name of watch_dir: 1 when removed, 0 when kept, -1 when the pass
 * must stop before it.  *ndirs counts the directories read, *budget their
 * entries. */
static int
sweep_name(struct ld_sweep *w, int wfd, const struct stat *wst, const struct dirent *de,
	   uint64_t now, int *ndirs, long *budget)
{
	const struct ld_conf *c = &w->d->cur->conf;
	const char *name = de->d_name;
	char why[160], cl[PL_CLIP_BUF], cn[PL_CLIP_BUF];
	enum ld_sweep_step known;
	struct stat st;
	long job, stepid;
	double age = 0;

	if (!step_name(name, &job, &stepid)) {
		if (note_once(w, de->d_ino, name))
			ld_log(&w->d->log, "watch: watch_dir %s: %s is not a step's name (JOB.STEP): "
			       "left alone", pl_clip_path(c->watch_dir, cl, sizeof(cl)),
			       pl_clip(name, cn, sizeof(cn)));
		return 0;
	}
	if (fstatat(wfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	known = w->step(w->arg, job, stepid, now, &age);
	if (known == LD_SWEEP_RUNNING)
		return 0;	/* watched, and running */
	if (known == LD_SWEEP_ENDED) {
		snprintf(why, sizeof(why), "job %ld.%ld ended %.0f s ago and its directory stayed",
			 job, stepid, age);
	} else {
		age = difftime(time(NULL), st.st_mtime);
		snprintf(why, sizeof(why), "not a step watched here, unchanged for %.0f s", age);
	}
	if (!(age >= (double)c->watch_leftover_s))
		return 0;
	if (S_ISDIR(st.st_mode) && st.st_dev != wst->st_dev) {
		if (note_once(w, st.st_ino, name))
			ld_log(&w->d->log, "watch: %s/%s is a mount point: left alone",
			       pl_clip_path(c->watch_dir, cl, sizeof(cl)), pl_clip(name, cn, sizeof(cn)));
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		/* A link or a file at a step's name would only make the plugin
		 * refuse that step: the name goes, what it points to stays. */
		if (unlinkat(wfd, name, 0) < 0)
			return 0;
		w->leftovers++;
		ld_log(&w->d->log, "watch: leftover %s/%s removed: %s, not a directory (removed "
		       "itself, not followed); %s", pl_clip_path(c->watch_dir, cl, sizeof(cl)),
		       pl_clip(name, cn, sizeof(cn)), S_ISLNK(st.st_mode) ? "a symbolic link" :
		       "a file", why);
		return 1;
	}
	if (*budget <= 0)
		return -1;
	(*ndirs)++;
	return sweep_dir(w, wfd, name, &st, why, budget);
}

void
ld_sweep_run(struct ld_sweep *w)
{
	uint64_t now = mono_ns();
	long looked = 0, removed = 0, skip = w->sweep_skip, budget = SWEEP_BUDGET;
	bool finished = true;
	struct dirent *de;
	struct stat wst;
	int wfd, ndirs = 0, rv;
	DIR *dd;

	w->sweeps++;
	wfd = watch_dir_open(w, &wst);
	if (wfd < 0)
		return;
	dd = fdopendir(wfd);
	if (!dd) {
		close(wfd);
		return;
	}
	while ((de = readdir(dd)) != NULL) {
		if (skip > 0) {
			skip--;
			continue;
		}
		if (looked >= SWEEP_NAMES || ndirs >= SWEEP_DIRS) {
			finished = false;
			break;
		}
		rv = 0;
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			rv = sweep_name(w, dirfd(dd), &wst, de, now, &ndirs, &budget);
		if (rv < 0) {
			finished = false;
			break;
		}
		looked++;
		removed += rv;
	}
	/* Where the next pass starts: past what this one looked at and
	 * kept (readdir keeps the order of what is left). */
	w->sweep_skip = finished ? 0 : w->sweep_skip + looked - removed;
	closedir(dd);
}

void
ld_sweep_stats(const struct ld_sweep *w, struct ld_sweep_stats *st)
{
	st->sweeps = w->sweeps;
	st->leftovers = w->leftovers;
}

struct ld_sweep *
ld_sweep_new(struct ld *d, ld_sweep_step_cb step, void *arg)
{
	struct ld_sweep *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->d = d;
	w->step = step;
	w->arg = arg;
	return w;
}

void
ld_sweep_free(struct ld_sweep *w)
{
	free(w);
}
