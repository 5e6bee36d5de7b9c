/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The step's shape from srun's command line, walked with the option table
 * of the running Slurm release (spk_release.c) to the program, picking out
 * the task and node counts.  An option the release does not have makes the
 * shape incomplete, and then we only validate what we are sure of.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pl_err.h"
#include "spk_release.h"
#include "spk_shape.h"

/* The options SPANK plugins register that we know: ours. */
static const struct {
	const char *name;
	enum spk_arg arg;
} spank_opts[] = {
	{ "parallel-layout", PL_ARG_REQ },
	{ "parallel-layout-verbose", PL_ARG_NONE },
	{ "parallel-layout-watch", PL_ARG_REQ },
};

/* Options after which we leave Slurm's own task placement alone. */
static const char *const blockers[] = {
	"distribution", "relative", "exclude", "multi-prog", "nodefile", "het-group", NULL
};

/* How release r's srun (with our options) takes --name[0..len); -1 unknown. */
static int
long_arg(const struct spk_release *r, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(spank_opts) / sizeof(spank_opts[0]); i++)
		if (strlen(spank_opts[i].name) == len && strncmp(spank_opts[i].name, name, len) == 0)
			return spank_opts[i].arg;
	return spk_release_long(r, name, len);
}

static bool
listed(const char *const *list, const char *name, size_t len)
{
	int i;

	for (i = 0; list[i]; i++)
		if (strlen(list[i]) == len && strncmp(list[i], name, len) == 0)
			return true;
	return false;
}

/*
 * A count: its leading digits ("-N 2-4", a range, counts as its minimum;
 * Slurm may pick more).  0 when there is no number; past
 * PL_SHAPE_MAX_COUNT the shape is marked invalid, naming where the
 * count came from.
 */
static long
count(struct spk_shape *s, const char *what, const char *v)
{
	char clip[PL_CLIP_BUF];
	long x = 0;
	const char *p;

	for (p = v; isdigit((unsigned char)*p); p++) {
		if (x > (PL_SHAPE_MAX_COUNT - (*p - '0')) / 10) {
			if (!s->invalid[0])
				snprintf(s->invalid, sizeof(s->invalid), "%s=%s: expected a count from 1 to %ld",
					 what, pl_clip(v, clip, sizeof(clip)), PL_SHAPE_MAX_COUNT);
			return 0;
		}
		x = x * 10 + (*p - '0');
	}
	return x;
}

static void
take(struct spk_shape *s, const char *name, size_t len, const char *v)
{
	if (len == 6 && strncmp(name, "ntasks", 6) == 0)
		s->ntasks = count(s, "--ntasks", v);
	else if (len == 5 && strncmp(name, "nodes", 5) == 0) {
		s->nnodes = count(s, "--nodes", v);
		/* A range leaves the count to Slurm. */
		if (strchr(v, '-'))
			s->steer_blockers = true;
	} else if (len == 15 && strncmp(name, "ntasks-per-node", 15) == 0)
		s->ntasks_per_node = count(s, "--ntasks-per-node", v);
	else if (len == 8 && strncmp(name, "nodelist", 8) == 0)
		s->nodelist = true;
	else if (len == 23 && strncmp(name, "parallel-layout-verbose", 23) == 0)
		s->verbose = true;
	if (listed(blockers, name, len))
		s->steer_blockers = true;
}

static void
from_env(struct spk_shape *s)
{
	const char *v;

	if (!s->ntasks && (v = getenv("SLURM_NTASKS")))
		s->ntasks = count(s, "SLURM_NTASKS", v);
	if (!s->nnodes && (v = getenv("SLURM_NNODES")))
		s->nnodes = count(s, "SLURM_NNODES", v);
	if (!s->ntasks_per_node && (v = getenv("SLURM_NTASKS_PER_NODE")))
		s->ntasks_per_node = count(s, "SLURM_NTASKS_PER_NODE", v);
	if (getenv("SLURM_DISTRIBUTION"))
		s->steer_blockers = true;
	if (s->ntasks && s->ntasks_per_node && !s->nnodes && s->ntasks % s->ntasks_per_node == 0)
		s->nnodes = s->ntasks / s->ntasks_per_node;
	if (s->nnodes && s->ntasks_per_node && !s->ntasks) {
		/* Both are at most PL_SHAPE_MAX_COUNT: the product fits a long. */
		if (s->nnodes > PL_SHAPE_MAX_COUNT / s->ntasks_per_node) {
			if (!s->invalid[0])
				snprintf(s->invalid, sizeof(s->invalid),
					 "%ld nodes x %ld tasks per node: more than %ld tasks",
					 s->nnodes, s->ntasks_per_node, PL_SHAPE_MAX_COUNT);
		} else {
			s->ntasks = s->nnodes * s->ntasks_per_node;
		}
	}
}

void
spk_shape_parse(const struct spk_release *r, int argc, char **argv, struct spk_shape *s)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->complete = true;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0 || a[0] != '-' || a[1] == '\0')
			break;	/* the program starts here */
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			int arg = long_arg(r, name, len);

			if (arg == PL_ARG_REQ) {
				const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : "");

				take(s, name, len, v);
			} else if (arg == PL_ARG_OPT || (arg == PL_ARG_NONE && !eq)) {
				take(s, name, len, eq ? eq + 1 : "");
			} else {
				/* Unknown, or a value given to a flag (srun refuses it). */
				s->complete = false;
			}
			continue;
		}
		/* A cluster of short options: "-l", "-n8", "-ln 8", "-K1". */
		for (a++; *a; a++) {
			const char *name;
			int arg = spk_release_short(r, *a, &name);

			if (arg == PL_ARG_REQ) {
				const char *v = a[1] ? a + 1 : (i + 1 < argc ? argv[++i] : "");

				take(s, name, strlen(name), v);
				break;
			}
			if (arg == PL_ARG_OPT) {
				/* Its value, if any, is the rest of the word. */
				take(s, name, strlen(name), a + 1);
				break;
			}
			if (arg < 0)
				s->complete = false;
		}
	}
	from_env(s);
}

int
spk_shape_self(const struct spk_release *r, struct spk_shape *s)
{
	struct buf b = BUF_INIT;
	char chunk[8192], **argv = NULL;
	size_t n, o;
	int argc = 0, rv = -1;
	FILE *f = fopen("/proc/self/cmdline", "r");

	memset(s, 0, sizeof(*s));
	if (!f)
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	if (ferror(f) || b.bad)
		goto out;
	for (o = 0; o < b.len; o += strlen(b.s + o) + 1)
		argc++;
	argv = calloc((size_t)argc + 1, sizeof(*argv));
	if (!argv)
		goto out;
	argc = 0;
	for (o = 0; o < b.len; o += strlen(b.s + o) + 1)
		argv[argc++] = b.s + o;
	spk_shape_parse(r, argc, argv, s);
	rv = 0;
out:
	fclose(f);
	free(argv);
	buf_free(&b);
	return rv;
}
