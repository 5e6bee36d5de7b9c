/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the plugin knows about each Slurm release, as data: srun's option
 * table (to read the step's shape from srun's command line before the
 * allocation exists) and the behaviours the plugin relies on (where the
 * option value is visible, SLURM_HOSTFILE steering, the callbacks' order).
 * The running Slurm's version (spank_get_item(S_SLURM_VERSION)) picks the
 * release at run time; a release outside the table gets what is certain
 * on any release (validation, the environment remap) and no steering.
 */
#ifndef SPK_RELEASE_H
#define SPK_RELEASE_H

#include <stdbool.h>
#include <stddef.h>

/* How an srun option takes its value. */
enum spk_arg {
	PL_ARG_NONE,		/* a flag */
	PL_ARG_REQ,		/* `--opt V`, `--opt=V`, `-oV`, `-o V` */
	PL_ARG_OPT,		/* `--opt=V` or `-oV` only; alone, a flag */
};

struct spk_release {
	const char *name;		/* "24.11" */
	int major, minor;		/* 24, 11 */
	/*
	 * srun calls the option callback while it reads its command line,
	 * before it asks for the allocation, and reads SLURM_HOSTFILE after
	 * that (only when no -w or --nodefile is given): a hostfile set in
	 * the callback steers Slurm's own task placement.
	 */
	bool hostfile_steer;
	/*
	 * slurmstepd calls the option callbacks before init_post_opt, with
	 * the value srun was given: init_post_opt can place the step.
	 */
	bool remote_value_in_post_opt;
	/* spank.h declares slurm_spank_init_failure_mode (25.05 on). */
	bool init_failure_mode;
	/* Any non-zero return of a callback is an error (25.05 on; before,
	 * some callers looked only for negative values). */
	bool nonzero_is_error;
};

/* The releases the plugin knows, oldest first, and how many. */
extern const struct spk_release spk_releases[];
extern const size_t spk_nreleases;

/*
 * The release of a Slurm version string ("24.11.5", "25.05.0-0rc1",
 * "24.11"): the table's entry, or NULL when the version is outside it or
 * cannot be read.  Either way *major and *minor get what was read (0 when
 * nothing).
 */
const struct spk_release *spk_release_find(const char *version, int *major, int *minor);

/*
 * The release whose option table reads a command line of an unknown
 * version: the nearest one (the oldest for older versions, the newest for
 * newer or unreadable ones).
 */
const struct spk_release *spk_release_nearest(int major, int minor);

/*
 * How srun of release r takes the long option name[0..len), or -1 when
 * that release has no such option.  Options SPANK plugins register are
 * not in the table: spk_shape adds ours.
 */
int spk_release_long(const struct spk_release *r, const char *name, size_t len);

/* The same for a short option letter, with its long name in *name ("" when
 * r has no such letter: then -1). */
int spk_release_short(const struct spk_release *r, char c, const char **name);

/*
 * What verbose mode says when the running Slurm (version, "" unknown) is
 * not in the table: what the plugin still does and what it leaves alone.
 */
void spk_release_unknown_note(const char *version, char *out, size_t outlen);

#endif
