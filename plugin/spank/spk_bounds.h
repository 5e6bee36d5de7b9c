/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What srun's validation needs of the cluster map, before the allocation
 * exists: the largest NVLink domain, the smallest GPU memory and the link
 * bandwidths.  Read from the map file without building the map (no node
 * index, no switches, no GPU or NIC records): srun pays it on every launch.
 */
#ifndef SPK_BOUNDS_H
#define SPK_BOUNDS_H

#include "pl_err.h"
#include "topo.h"

struct spk_bounds {
	long domain;		/* GPUs of the largest NVLink domain (node or block); 0 unknown */
	double gpu_memory_gb;	/* the smallest per-GPU memory of any node; 0 unknown */
	struct topo_linkclass link[TOPO_NLINKS];
	long nnodes;
};

/*
 * Read b from the map file at path.  Lenient about what it does not use
 * (layoutd and the nodes read the map strictly), strict about what it
 * does: a node naming a type or block the map lacks is an error.  Returns
 * 0, or -1 with err.
 */
int spk_bounds_load(const char *path, struct spk_bounds *b, pl_err_t *err);

#endif
