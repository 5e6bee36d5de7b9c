/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the node readers share (see topo_util.h): one copy of the island,
 * NIC and rail rules, so that a node reads the same whichever source
 * describes it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "topo_util.h"

/* Past this, a "small number" in a device name or cell is junk. */
#define TOPO_UTIL_MAX_NUMBER 1000000

static int
uf_root(int *up, int x)
{
	while (up[x] != x) {
		up[x] = up[up[x]];
		x = up[x];
	}
	return x;
}

void
topo_util_join(int *up, int a, int b)
{
	a = uf_root(up, a);
	b = uf_root(up, b);
	if (a < b)
		up[b] = a;
	else if (b < a)
		up[a] = b;
}

void
topo_util_number_islands(struct topo_nodetype *t, int *up, const bool *linked, int *id,
			 int nnodes)
{
	int g, next = 0;

	for (g = 0; g < nnodes; g++)
		id[g] = -1;
	for (g = 0; g < t->ngpus; g++) {
		int r;

		if (!linked[g]) {
			t->gpus[g].island = -1;
			continue;
		}
		r = uf_root(up, g);
		if (id[r] < 0)
			id[r] = next++;
		t->gpus[g].island = id[r];
	}
}

void
topo_util_pick_nics(struct topo_nodetype *t, const int *score, int *load)
{
	bool one_to_one = t->ngpus > 0;
	int g, n, rail = 0;

	for (g = 0; g < t->ngpus; g++) {
		int best = -1;

		for (n = 0; n < t->nnics; n++) {
			int s = score[g * t->nnics + n];

			if (s < 0)
				continue;
			if (best < 0 || s > score[g * t->nnics + best] ||
			    (s == score[g * t->nnics + best] && load[n] < load[best]))
				best = n;
		}
		t->gpus[g].nic = best;
		if (best < 0)
			one_to_one = false;
		else if (++load[best] > 1)
			one_to_one = false;
	}
	for (n = 0; n < t->nnics; n++)
		t->nics[n].rail = one_to_one && load[n] > 0 ? rail++ : -1;
}

int
topo_util_fill_begin(struct topo_nodetype *t, int ngpus, int nnics, int nnodes,
		     struct topo_util_fill *f, const char *label, pl_err_t *err)
{
	int i;

	memset(f, 0, sizeof(*f));
	if (nnodes < ngpus)
		nnodes = ngpus;
	t->gpus = ngpus ? calloc((size_t)ngpus, sizeof(*t->gpus)) : NULL;
	t->nics = nnics ? calloc((size_t)nnics, sizeof(*t->nics)) : NULL;
	f->up = calloc((size_t)nnodes + 1, sizeof(*f->up));
	f->id = calloc((size_t)nnodes + 1, sizeof(*f->id));
	f->linked = calloc((size_t)nnodes + 1, sizeof(*f->linked));
	f->score = calloc((size_t)ngpus * (size_t)nnics + 1, sizeof(*f->score));
	f->load = calloc((size_t)nnics + 1, sizeof(*f->load));
	f->nnodes = nnodes;
	if ((ngpus && !t->gpus) || (nnics && !t->nics) || !f->up || !f->id || !f->linked ||
	    !f->score || !f->load) {
		topo_util_fill_free(f);
		topo_nodetype_clear(t);
		return pl_err_set(err, "%s: out of memory", label);
	}
	t->ngpus = ngpus;
	t->nnics = nnics;
	for (i = 0; i < ngpus; i++) {
		t->gpus[i].index = i;
		t->gpus[i].numa = -1;
		t->gpus[i].island = -1;
		t->gpus[i].nic = -1;
	}
	for (i = 0; i < nnics; i++) {
		t->nics[i].rail = -1;
		t->nics[i].numa = -1;
	}
	for (i = 0; i < nnodes; i++)
		f->up[i] = i;
	return 0;
}

void
topo_util_fill_free(struct topo_util_fill *f)
{
	free(f->up);
	free(f->id);
	free(f->linked);
	free(f->score);
	free(f->load);
	memset(f, 0, sizeof(*f));
}

void
topo_util_fill_end(struct topo_nodetype *t, struct topo_util_fill *f)
{
	topo_util_number_islands(t, f->up, f->linked, f->id, f->nnodes);
	topo_util_pick_nics(t, f->score, f->load);
	topo_util_fill_free(f);
}

char *
topo_util_read_file(const char *path, long max, const char *what, size_t *lenp,
		    pl_err_t *err)
{
	struct buf b = BUF_INIT;
	FILE *f = NULL;
	char *rv = NULL, c[PL_CLIP_BUF];
	const char *label = pl_clip_path(path, c, sizeof(c));

	f = fopen(path, "r");
	if (!f) {
		pl_err_set(err, "%s: cannot open: %s", label, strerror(errno));
		goto out;
	}
	for (;;) {
		char chunk[8192];
		size_t got = fread(chunk, 1, sizeof(chunk), f);

		if (got == 0)
			break;
		/* Refused before it is kept: a huge file costs max, not its size. */
		if (b.len + got > (size_t)max) {
			pl_err_set(err, "%s: larger than %ld bytes; not %s", label, max, what);
			goto out;
		}
		if (buf_add(&b, chunk, got) < 0) {
			pl_err_set(err, "%s: out of memory", label);
			goto out;
		}
	}
	if (ferror(f)) {
		pl_err_set(err, "%s: cannot read: %s", label, strerror(errno));
		goto out;
	}
	*lenp = b.len;
	rv = buf_take(&b);
	if (!rv)
		pl_err_set(err, "%s: out of memory", label);
out:
	if (f)
		fclose(f);
	buf_free(&b);
	return rv;
}

char *
topo_util_read_text(const char *path, const char *label, long max, const char *what,
		    pl_err_t *err)
{
	char c[PL_CLIP_BUF];
	size_t n = 0;
	char *text = topo_util_read_file(path, max, what, &n, err);

	if (text && memchr(text, '\0', n)) {
		pl_err_set(err, "%s: contains a NUL byte; not a text file",
			   label ? label : pl_clip_path(path, c, sizeof(c)));
		free(text);
		return NULL;
	}
	return text;
}

int
topo_util_numbered(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	long v = 0;

	if (!s || strncmp(s, prefix, n) != 0 || !s[n])
		return -1;
	for (s += n; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > TOPO_UTIL_MAX_NUMBER)
			return -1;
	}
	return (int)v;
}
