/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Assembling a cluster map from the files admins already have: Slurm's
 * topology.conf, a hostlist, node descriptions (hwloc XML, `nvidia-smi topo
 * -m`, NCCL topology XML, live hwloc discovery, a GPU count) and
 * nccl-tests bandwidths.  `layoutctl topo build` is a thin face of this;
 * layoutd and the tests can build the same maps.  Part of libpl_hwloc.
 */
#ifndef PL_TOPO_BUILD_H
#define PL_TOPO_BUILD_H

#include <stdbool.h>

#include "pl_err.h"
#include "topo.h"

/* At most this many --node-type and --nccl-tests inputs. */
#define TOPO_BUILD_MAX_TYPES 64
#define TOPO_BUILD_MAX_TESTS 16

struct topo_build {
	const char *name;		/* the map's name; NULL: "cluster" */
	const char *slurm;		/* topology.conf or topology.yaml path; NULL none */
	const char *slurm_name;		/* the topology.yaml topology to read; NULL: its default */
	bool blocks_nvlink;		/* its blocks are NVLink domains */
	const char *nodes;		/* hostlist of more nodes; NULL none */
	const char *node;		/* SOURCE[+SOURCE...] of the default type; NULL none */
	const char *types[TOPO_BUILD_MAX_TYPES];	/* NAME:HOSTLIST=SOURCE[+SOURCE...] */
	int ntypes;
	const char *tests[TOPO_BUILD_MAX_TESTS];	/* all_reduce_perf output FILE[=CLASS] */
	int ntests;
	double gpu_mem;			/* GB per GPU of the default type; 0 unknown */
	const char *nccl_topo_file;	/* NCCL_TOPO_FILE of the default type; NULL none */
	const char *slurm_nodes;	/* `scontrol show nodes -o` output, "-" stdin; NULL none */
	const char *peer_port;		/* "N", or "slurmd+K": slurmd's port + K; NULL none */
	long slurmd_port;		/* SlurmdPort, for nodes shown without Port=; 0: 6818 */
};

/* Slurm's default SlurmdPort. */
#define TOPO_BUILD_SLURMD_PORT 6818

/*
 * The map the inputs in *b describe; caller frees (topo_free).  Node
 * names are found through the map's index, so n nodes cost O(n log n) at
 * most.  NULL with err naming the input (as the option that gives it,
 * e.g. "--node-type=..."; echoed inputs clipped) when one cannot be read,
 * when the name is longer than TOPO_NAME - 1 characters, when a node type
 * name is given twice, when a node has no type, or when the result has no
 * nodes.
 *
 * slurm is read as a topology.yaml when topo_sniff() says so or its name
 * ends in .yaml or .yml, else as a topology.conf; slurm_name (only with a
 * topology.yaml) chooses one of its topologies.
 *
 * Peer addresses: slurm_nodes gives each node it lists its NodeAddr (a
 * node the map lacks is an error naming it; a map node it does not list
 * is left without an address, which the caller may warn about:
 * topo_node_peer); peer_port "N" gives every node port N, "slurmd+K"
 * gives each listed node its slurmd port (Port=, else slurmd_port) + K.
 */
struct topo_map *topo_build_map(const struct topo_build *b, pl_err_t *err);

/*
 * One node description into *t (zeroed first): "live", a GPU count
 * (1..4096), or a file of a kind topo_sniff() knows, several joined by '+'
 * merged (the first source's figures win, later ones fill what it lacks).
 * opt names the input in messages.  An hwloc XML is read in a child
 * process (hwloc_child.h).  -1 with err set; *t is empty then.
 */
int topo_build_node(struct topo_nodetype *t, const char *list, const char *opt,
		    pl_err_t *err);

#endif
