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

char *
topo_util_read_file(const char *path, long max, const char *what, size_t *lenp,
		    pl_err_t *err)
{
	FILE *f = NULL;
	char *buf = NULL, *rv = NULL;
	size_t len = 0, cap = 0;
	/* Room to read one byte past max, so a file too large is seen as such. */
	size_t most = (size_t)max + 4096 + 2;
	char c[PL_CLIP_BUF];
	const char *label = pl_clip(path, c, sizeof(c));

	f = fopen(path, "r");
	if (!f) {
		pl_err_set(err, "%s: cannot open: %s", label, strerror(errno));
		goto out;
	}
	for (;;) {
		size_t got;

		if (len + 4096 + 1 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 8192;
			/* Refusing a file just past max must not cost twice max. */
			if (cap > most)
				cap = most;
			nb = realloc(buf, cap);
			if (!nb) {
				pl_err_set(err, "%s: out of memory", label);
				goto out;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if ((long)len > max) {
			pl_err_set(err, "%s: larger than %ld bytes; not %s", label, max, what);
			goto out;
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		pl_err_set(err, "%s: cannot read: %s", label, strerror(errno));
		goto out;
	}
	buf[len] = '\0';
	*lenp = len;
	rv = buf;
	buf = NULL;
out:
	if (f)
		fclose(f);
	free(buf);
	return rv;
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
