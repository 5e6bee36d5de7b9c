/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A name -> index hash over an array the caller owns (the map's nodes, a
 * reader's switches or blocks, the nodes of a step layoutd leads).  Open addressing over
 * indices, FNV-1a, load kept under 1/2, so adding n names costs O(n).  The
 * names stay in the caller's array; name(ctx, i) returns entry i's.
 */
#ifndef PL_TOPO_IX_H
#define PL_TOPO_IX_H

#include <stdint.h>

struct topo_ix {
	long *slot;		/* size entries, -1 empty; NULL while empty */
	long size;		/* a power of two, or 0 */
	long used;
};

typedef const char *(*topo_ix_name_fn)(const void *ctx, long i);

#define TOPO_IX_INIT { NULL, 0, 0 }

/* FNV-1a: cheap, and spreads "node0001".."node9999" well. */
uint64_t topo_ix_hash(const char *s);

/* The index whose name is name, or -1. */
long topo_ix_find(const struct topo_ix *ix, const char *name, topo_ix_name_fn fn,
		  const void *ctx);

/*
 * Record entry i (its name must not be in ix yet: callers look it up
 * first).  Grows the table when it is half full.  0, or -1 when out of
 * memory (ix is unchanged then).
 */
int topo_ix_add(struct topo_ix *ix, long i, topo_ix_name_fn fn, const void *ctx);

/* An empty table with room for n names (ix must be empty).  0 or -1. */
int topo_ix_reserve(struct topo_ix *ix, long n);

/* Empty it and free the table. */
void topo_ix_free(struct topo_ix *ix);

#endif
