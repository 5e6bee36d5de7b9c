/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The name index the map and the topology.conf reader share (topo_ix.h). */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo_ix.h"

uint64_t
topo_ix_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ull;
	}
	return h;
}

long
topo_ix_find(const struct topo_ix *ix, const char *name, topo_ix_name_fn fn, const void *ctx)
{
	uint64_t h, mask;

	if (!ix->slot || !name)
		return -1;
	mask = (uint64_t)ix->size - 1;
	for (h = topo_ix_hash(name) & mask; ix->slot[h] >= 0; h = (h + 1) & mask)
		if (strcmp(fn(ctx, ix->slot[h]), name) == 0)
			return ix->slot[h];
	return -1;
}

static void
put(struct topo_ix *ix, long i, topo_ix_name_fn fn, const void *ctx)
{
	uint64_t mask = (uint64_t)ix->size - 1, h;

	for (h = topo_ix_hash(fn(ctx, i)) & mask; ix->slot[h] >= 0; h = (h + 1) & mask)
		;
	ix->slot[h] = i;
	ix->used++;
}

int
topo_ix_add(struct topo_ix *ix, long i, topo_ix_name_fn fn, const void *ctx)
{
	if ((ix->used + 1) * 2 > ix->size) {
		struct topo_ix old = *ix;
		long k;

		if (topo_ix_reserve(ix, ix->size ? ix->size : 32) < 0) {
			*ix = old;
			return -1;
		}
		for (k = 0; k < old.size; k++)
			if (old.slot[k] >= 0)
				put(ix, old.slot[k], fn, ctx);
		free(old.slot);
	}
	put(ix, i, fn, ctx);
	return 0;
}

int
topo_ix_reserve(struct topo_ix *ix, long n)
{
	long size = 64, k;

	while (size < n * 2 && size <= LONG_MAX / 4)
		size *= 2;
	if ((size_t)size > SIZE_MAX / sizeof(*ix->slot))
		return -1;
	ix->slot = malloc((size_t)size * sizeof(*ix->slot));
	if (!ix->slot)
		return -1;
	ix->size = size;
	ix->used = 0;
	for (k = 0; k < size; k++)
		ix->slot[k] = -1;
	return 0;
}

void
topo_ix_free(struct topo_ix *ix)
{
	free(ix->slot);
	ix->slot = NULL;
	ix->size = 0;
	ix->used = 0;
}
