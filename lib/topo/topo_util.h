/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internal to lib/, not part of the public API: helpers that the readers
 * (topo_hwloc.c, topo_nvsmi.c, topo_nccl.c, topo_nccltests.c,
 * topo_slurm.c) share so that they number islands, pick NICs, number rails
 * and read files the same way.  Nothing outside lib/ includes this header.
 */
#ifndef PL_TOPO_UTIL_H
#define PL_TOPO_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "pl_err.h"
#include "topo.h"

/*
 * Put a and b in one component of the union-find forest up[] (up[x] == x
 * for a root).  The lower root becomes the root of both.
 */
void topo_util_join(int *up, int a, int b);

/*
 * Set t->gpus[g].island for every GPU g: -1 when linked[g] is false, else
 * the id of g's component in up[], ids counted from 0 in GPU order.  The
 * first t->ngpus entries of up[] and linked[] are the GPUs; up[] may hold
 * more nodes (switches, hubs) after them.  id is scratch space of nnodes
 * entries, nnodes covering every node in up[].  Path compression rewrites up[].
 */
void topo_util_number_islands(struct topo_nodetype *t, int *up, const bool *linked, int *id,
			      int nnodes);

/*
 * Set t->gpus[g].nic to the closest NIC of each GPU, score[g * t->nnics + n]
 * being how close NIC n is to GPU g (higher is closer; negative = unusable).
 * Ties go to the NIC fewer GPUs have taken so far, then to the lowest
 * index, so two GPUs that share a switch with two NICs get one each.  When
 * every GPU has a NIC and no NIC serves two GPUs, the NICs in use are the
 * rails, numbered in NIC order; otherwise every rail is -1.  load is
 * scratch space of t->nnics zeroed entries; it ends as each NIC's count of
 * GPUs.
 */
void topo_util_pick_nics(struct topo_nodetype *t, const int *score, int *load);

/*
 * The whole of the file at path, NUL-terminated, with its length in *lenp;
 * caller frees.  The bytes are not checked: the file may hold NUL bytes,
 * which the caller sees as strlen() != *lenp.  A file of more than max
 * bytes is refused with "path: larger than max bytes; not <what>".
 * Returns NULL with err set on that, on a file that cannot be opened or
 * read, or when out of memory.
 */
char *topo_util_read_file(const char *path, long max, const char *what, size_t *lenp,
			  pl_err_t *err);

/*
 * The number after prefix when s is prefix followed by decimal digits only
 * ("GPU12" with prefix "GPU" gives 12; prefix "" parses a bare number).
 * -1 when s is NULL, has another prefix, has no digits, has anything after
 * them, or is past a million (so hostile input cannot overflow).
 */
int topo_util_numbered(const char *s, const char *prefix);

#endif
