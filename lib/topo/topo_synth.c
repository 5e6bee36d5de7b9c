/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Synthetic clusters for benchmarks, tests and what-if planning: fat trees
 * (optionally with node names interleaved across leaves, as on many real
 * floors) and NVLink-block racks.  Every node has the same GPUs, one NIC per
 * GPU (a rail-optimised fabric) and 80 GB per GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

static struct topo_map *
with_gpus(int gpus)
{
	struct topo_nodetype t;
	struct topo_map *m = topo_new();
	int g;

	memset(&t, 0, sizeof(t));
	snprintf(t.name, sizeof(t.name), "gpu%d", gpus);
	t.ngpus = gpus;
	t.gpus = calloc((size_t)gpus, sizeof(*t.gpus));
	t.nnics = gpus;
	t.nics = calloc((size_t)gpus, sizeof(*t.nics));
	if (!m || !t.gpus || !t.nics)
		goto fail;
	for (g = 0; g < gpus; g++) {
		t.gpus[g].index = g;
		t.gpus[g].numa = g * 2 / gpus;
		t.gpus[g].island = 0;
		t.gpus[g].nic = g;
		snprintf(t.nics[g].name, sizeof(t.nics[g].name), "mlx5_%d", g);
		t.nics[g].port = 1;
		t.nics[g].rail = g;
		t.nics[g].numa = t.gpus[g].numa;
		t.nics[g].gbps = 400;
	}
	t.gpu_memory_gb = 80;
	m->default_type = topo_add_type(m, &t, NULL);
	if (m->default_type < 0)
		goto fail;
	topo_nodetype_clear(&t);
	return m;
fail:
	topo_nodetype_clear(&t);
	topo_free(m);
	return NULL;
}

struct topo_map *
topo_synth_fat_tree(long nodes, int gpus, long per_leaf, long per_spine, int interleave)
{
	struct topo_map *m = with_gpus(gpus);
	long nleaves = (nodes + per_leaf - 1) / per_leaf;
	long nspines = (nleaves + per_spine - 1) / per_spine, i;
	int core;
	char name[TOPO_NAME];

	if (!m)
		return NULL;
	core = topo_add_switch(m, "core", -1, NULL);
	for (i = 0; i < nspines; i++) {
		snprintf(name, sizeof(name), "spine%ld", i);
		topo_add_switch(m, name, core, NULL);
	}
	for (i = 0; i < nleaves; i++) {
		snprintf(name, sizeof(name), "leaf%ld", i);
		topo_add_switch(m, name, 1 + (int)(i / per_spine), NULL);
	}
	for (i = 0; i < nodes; i++) {
		long n, leaf = interleave ? i % nleaves : i / per_leaf;

		snprintf(name, sizeof(name), "node%05ld", i + 1);
		n = topo_add_node(m, name, NULL);
		if (n < 0) {
			topo_free(m);
			return NULL;
		}
		m->nodes[n].sw = (int)(1 + nspines + leaf);
	}
	topo_finish(m);
	if (topo_index(m, NULL) < 0) {
		topo_free(m);
		return NULL;
	}
	return m;
}

struct topo_map *
topo_synth_blocks(long nodes, int gpus, long per_block)
{
	struct topo_map *m = with_gpus(gpus);
	char name[TOPO_NAME];
	long i;

	if (!m)
		return NULL;
	for (i = 0; i < (nodes + per_block - 1) / per_block; i++) {
		snprintf(name, sizeof(name), "rack%ld", i);
		topo_add_block(m, name, true, NULL);
	}
	for (i = 0; i < nodes; i++) {
		long n;

		snprintf(name, sizeof(name), "node%05ld", i + 1);
		n = topo_add_node(m, name, NULL);
		if (n < 0) {
			topo_free(m);
			return NULL;
		}
		/* Slurm's order interleaves the racks, as names often do. */
		m->nodes[n].block = (int)(i % ((nodes + per_block - 1) / per_block));
	}
	if (topo_index(m, NULL) < 0) {
		topo_free(m);
		return NULL;
	}
	return m;
}
