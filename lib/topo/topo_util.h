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
 * What a node reader's fill() shares with the others, start and end: the
 * type's arrays and the scratch for islands (union-find over nnodes >=
 * ngpus nodes: the GPUs, then switches or hubs) and NIC choice.
 */
struct topo_util_fill {
	int *up;		/* nnodes entries, up[i] == i to begin with */
	int *id;		/* nnodes, scratch for the island numbers */
	bool *linked;		/* nnodes, false: GPU g has NVLink when set */
	int *score;		/* ngpus x nnics closeness, 0 to begin with */
	int *load;		/* nnics */
	int nnodes;
};

/*
 * Allocate t->gpus (ngpus: index g, numa -1, island -1, nic -1), t->nics
 * (nnics, zeroed but rail -1, numa -1) and f's scratch; set t's counts.
 * Returns 0, or -1 with "label: out of memory" (then t and f are freed).
 */
int topo_util_fill_begin(struct topo_nodetype *t, int ngpus, int nnics, int nnodes,
			 struct topo_util_fill *f, const char *label, pl_err_t *err);

/* Number the islands from f->up and f->linked, pick each GPU's NIC from
 * f->score (topo_util_number_islands, topo_util_pick_nics), free f. */
void topo_util_fill_end(struct topo_nodetype *t, struct topo_util_fill *f);

/* Free f's scratch (on an error between begin and end). */
void topo_util_fill_free(struct topo_util_fill *f);

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
 * topo_util_read_file() of a text file: one that holds a NUL byte is
 * refused with "label: contains a NUL byte; not a text file" (label: the
 * name for messages, already clipped; NULL names path).
 */
char *topo_util_read_text(const char *path, const char *label, long max, const char *what,
			  pl_err_t *err);

/*
 * The number after prefix when s is prefix followed by decimal digits only
 * ("GPU12" with prefix "GPU" gives 12; prefix "" parses a bare number).
 * -1 when s is NULL, has another prefix, has no digits, has anything after
 * them, or is past a million (so hostile input cannot overflow).
 */
int topo_util_numbered(const char *s, const char *prefix);

#endif
