/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster topology map: what placement needs to know about nodes, GPUs,
 * NICs, the switch tree or NVLink blocks, and link bandwidths.  Serialised as
 * JSON (topo_json.c); filled by the readers in topo_*.c.
 */
#ifndef PL_TOPO_H
#define PL_TOPO_H

#include <stdbool.h>
#include <stdio.h>

#include "pl_err.h"

#define TOPO_NAME 64
#define TOPO_PCI 20	/* "0000:07:00.0" */

struct topo_gpu {
	int index;		/* CUDA / nvidia-smi index on the node */
	int numa;		/* -1 unknown */
	char pci[TOPO_PCI];	/* "" unknown; lower case dddd:bb:dd.f */
	int island;		/* NVLink island id within the node; -1 no NVLink */
	int nic;		/* index into the node type's nics[] of the closest NIC; -1 none */
	char name[TOPO_NAME];	/* "NVIDIA H100 80GB HBM3" or "" */
};

struct topo_nic {
	char name[TOPO_NAME];	/* mlx5_0, hfi1_0, rdmap197s0 ... */
	int port;		/* 1-based; 0 unknown */
	int rail;		/* rail number; -1 unknown */
	int numa;		/* -1 unknown */
	char pci[TOPO_PCI];
	double gbps;		/* link bandwidth in Gbit/s; 0 unknown */
};

/* A kind of node: every node of one type has the same GPUs and NICs. */
struct topo_nodetype {
	char name[TOPO_NAME];
	int ngpus;
	struct topo_gpu *gpus;	/* ngpus entries, sorted by index */
	int nnics;
	struct topo_nic *nics;
	double gpu_memory_gb;	/* per GPU; 0 unknown */
	char nccl_topo_file[256];	/* NCCL_TOPO_FILE to hand to tasks; "" none */
};

struct topo_switch {
	char name[TOPO_NAME];
	int parent;		/* index of the parent switch; -1 for a root */
	int level;		/* 0 = leaf (has nodes) */
	double gbps;		/* LinkSpeed if given; 0 unknown */
};

struct topo_block {
	char name[TOPO_NAME];
	bool nvlink;		/* an NVLink domain: TP groups may span its nodes */
};

struct topo_node {
	char name[TOPO_NAME];
	int type;		/* index into types[]; -1 = the map's default type */
	int sw;			/* index of its leaf switch; -1 none */
	int sw2;		/* a second leaf switch when the node is under two; -1 none */
	int block;		/* index into blocks[]; -1 none */
	char *addr;		/* where other nodes reach it (Slurm's NodeAddr); NULL
				 * unknown; owned by the map (topo_set_node_addr) */
	int peer_port;		/* its layoutd's port for other nodes; 0 unknown */
};

/* The longest node address a map holds (a DNS name's limit). */
#define TOPO_ADDR_MAX 255

/* Link classes, from tightest to loosest. */
enum topo_link {
	TOPO_LINK_NVLINK = 0,	/* GPU to GPU inside an NVLink domain */
	TOPO_LINK_PCIE,		/* GPU to GPU inside a node without NVLink */
	TOPO_LINK_LEAF,		/* node to node under one leaf switch (or one block) */
	TOPO_LINK_SPINE,	/* node to node across leaf switches */
	TOPO_NLINKS
};

struct topo_linkclass {
	double gbps;		/* GB/s (10^9 bytes per second) of bus bandwidth */
	bool measured;		/* imported from nccl-tests rather than nominal */
	char source[128];	/* where a measured figure came from */
};

struct topo_map {
	char name[TOPO_NAME];
	int ntypes;
	struct topo_nodetype *types;
	int default_type;	/* index, or -1 */
	int nswitches;
	struct topo_switch *switches;
	int nblocks;
	struct topo_block *blocks;
	long nnodes;
	struct topo_node *nodes;
	struct topo_linkclass link[TOPO_NLINKS];
	/* private: name -> node index (topo_ix.h), built by topo_index() and
	 * kept by topo_add_node() */
	long *hash;
	long hash_size;
	long hash_used;
};

/* "nvlink", "pcie", "leaf", "spine". */
const char *topo_link_name(enum topo_link l);

/* A new empty map with nominal link bandwidths.  Caller frees with topo_free(). */
struct topo_map *topo_new(void);
void topo_free(struct topo_map *m);

/* Append; each returns the new index or -1 (err set). Copies what it is given. */
int topo_add_type(struct topo_map *m, const struct topo_nodetype *t, pl_err_t *err);

/* The index of the node type called name, or -1. */
int topo_find_type(const struct topo_map *m, const char *name);
int topo_add_switch(struct topo_map *m, const char *name, int parent, pl_err_t *err);
int topo_add_block(struct topo_map *m, const char *name, bool nvlink, pl_err_t *err);
long topo_add_node(struct topo_map *m, const char *name, pl_err_t *err);
int topo_find_switch(const struct topo_map *m, const char *name);

/* (Re)build the name index; topo_find_node() needs it.  Once built,
 * topo_add_node() keeps it (a name added twice drops it, so the next
 * topo_index() reports the duplicate).  -1 (err set) on a duplicate name. */
int topo_index(struct topo_map *m, pl_err_t *err);
long topo_find_node(const struct topo_map *m, const char *name);

/*
 * Is addr fit to be a node's address: a host name (dot-separated labels of
 * 1 to 63 letters, digits, '-' or '_', no label starting or ending with
 * '-'; not all labels numeric), an IPv4 literal (a.b.c.d) or an IPv6
 * literal (without brackets), at most TOPO_ADDR_MAX bytes?  0, or -1 with
 * err naming addr (clipped) and what is accepted.
 */
int topo_addr_check(const char *addr, pl_err_t *err);

/*
 * Node i's address (copied; checked by topo_addr_check; NULL clears it)
 * and its layoutd's peer port (1..65535; 0 clears it).  -1 with err when
 * i is not a node index, the value is refused (naming the node) or
 * memory runs out; the node keeps its old value then.
 */
int topo_set_node_addr(struct topo_map *m, long i, const char *addr, pl_err_t *err);
int topo_set_node_port(struct topo_map *m, long i, long port, pl_err_t *err);

/*
 * Where the other nodes reach node i's layoutd, as far as the map knows:
 * *addr its address (NULL when the map has none: use the node's name) and
 * *port (0 when the map has none: use layoutd's peer_port).  *addr points
 * into the map.  0, or -1 when i is not a node index (then *addr is NULL
 * and *port 0).
 */
int topo_node_peer(const struct topo_map *m, long i, const char **addr, int *port);

/* The node type of node i (its own, or the default); NULL if none. */
const struct topo_nodetype *topo_node_type(const struct topo_map *m, long i);

/* Deep copy of a node type into *dst; free with topo_nodetype_clear(). */
int topo_nodetype_copy(struct topo_nodetype *dst, const struct topo_nodetype *src,
		       pl_err_t *err);
void topo_nodetype_clear(struct topo_nodetype *t);

/* How many NVLink islands the type's GPUs form (GPUs without NVLink count
 * for none). */
int topo_nodetype_islands(const struct topo_nodetype *t);

/*
 * A map of n nodes named names[] with `gpus` GPUs each and no switches: what
 * is known from `--nodes N --gpus-per-node G`.  Caller frees.
 */
struct topo_map *topo_make_uniform(const char *const *names, long n, int gpus,
				   pl_err_t *err);

/*
 * A three-level fat tree of `nodes` nodes with `gpus` GPUs each: `per_leaf`
 * nodes under each leaf switch, `per_spine` leaves under each spine, every
 * spine under one core.  With `interleave`, node i sits under leaf
 * i % nleaves, so Slurm's name order alternates between leaves.  Nodes are
 * named node00001...  Caller frees.
 */
struct topo_map *topo_synth_fat_tree(long nodes, int gpus, long per_leaf, long per_spine,
				     int interleave);

/* `nodes` nodes in NVLink blocks of `per_block` nodes; node i is in block
 * i % nblocks (racks interleave in name order).  Caller frees. */
struct topo_map *topo_synth_blocks(long nodes, int gpus, long per_block);

/* Compute levels of switches (0 = leaf) after parents are set. */
void topo_finish(struct topo_map *m);

/* JSON: load/save the map file (topo_json.c).  topo_load() refuses a map
 * of no nodes; topo_from_json_text() reads one (a node type travels so). */
struct topo_map *topo_load(const char *path, pl_err_t *err);
int topo_save(const struct topo_map *m, const char *path, pl_err_t *err);
struct topo_map *topo_from_json_text(const char *text, pl_err_t *err);
char *topo_to_json_text(const struct topo_map *m);	/* caller frees */

/* ---- readers (each fills what its source knows) ---- */

/* Slurm topology.conf (tree: SwitchName/Switches/Nodes; block: BlockName/BlockSizes).
 * Adds switches or blocks and every node they name. */
int topo_read_slurm(struct topo_map *m, const char *path, bool blocks_nvlink,
		    pl_err_t *err);
int topo_read_slurm_text(struct topo_map *m, const char *text, const char *label,
			 bool blocks_nvlink, pl_err_t *err);

/* What topo_read_slurm_yaml() read. */
struct topo_yaml_info {
	char topology[TOPO_NAME];	/* the topology chosen (a longer name is cut) */
	char kind[8];			/* "tree", "block" or "flat" */
	int ntopologies;		/* how many the file defines */
};

/*
 * Slurm topology.yaml (Slurm 25.05 and later): a list of topologies, each
 * `topology: NAME`, maybe `cluster_default: true`, and one of tree:
 * (switches: {switch, children | nodes}), block: (block_sizes:, blocks:
 * {block, nodes}) or flat: true.  The topology called name is read, or
 * (name NULL) the first with cluster_default: true, else the first.  Its
 * switches or blocks go into m exactly as the topology.conf that says the
 * same (topo_read_slurm_text does it); a flat one adds no switch and no
 * node.  Every topology of the file is checked.  -1 with err naming
 * label:line (the YAML's) on input outside the YAML subset of yaml_sub.h,
 * an unknown key, a missing or doubled part, an unknown name (listing the
 * file's), or what topology.conf refuses (in its words: SwitchName=,
 * Switches=, BlockName=).  info (may be NULL) says what was read.
 */
int topo_read_slurm_yaml(struct topo_map *m, const char *path, const char *name,
			 bool blocks_nvlink, struct topo_yaml_info *info, pl_err_t *err);
int topo_read_slurm_yaml_text(struct topo_map *m, const char *text, const char *label,
			      const char *name, bool blocks_nvlink, struct topo_yaml_info *info,
			      pl_err_t *err);

/* One node of `scontrol show nodes` output. */
struct topo_slurm_node {
	char name[TOPO_NAME];		/* NodeName */
	char addr[TOPO_ADDR_MAX + 1];	/* NodeAddr (topo_addr_check passed); "" none */
	long port;			/* Port, slurmd's; 0 when not shown, as scontrol
					 * does when it is the cluster's SlurmdPort */
	long line;			/* where the node's record starts */
};

/*
 * `scontrol show nodes -o` output (one line per node), or the long form
 * (a NodeName= line, indented lines, a blank line between nodes): each
 * node's NodeName, NodeAddr and Port, in the input's order, into *out
 * (caller frees) and *n.  Words after a free-text field (OS, Reason,
 * Comment, Extra) are that field's, never read as fields.  label names
 * the input in messages.  -1 with err naming label:line on a line that
 * starts no record, a name longer than TOPO_NAME - 1, a NodeAddr that
 * topo_addr_check refuses, a Port outside 1..65535, or no node at all.
 */
int topo_read_slurm_nodes_text(const char *text, const char *label, struct topo_slurm_node **out,
			       long *n, pl_err_t *err);
/* The same on the file at path; label (NULL: path) names it in messages. */
int topo_read_slurm_nodes(const char *path, const char *label, struct topo_slurm_node **out,
			  long *n, pl_err_t *err);

/* hwloc XML (v1 or v2) file, or live discovery of this node when path is NULL. */
int topo_read_hwloc(struct topo_nodetype *t, const char *path, pl_err_t *err);

/* `nvidia-smi topo -m` text. */
int topo_read_nvsmi(struct topo_nodetype *t, const char *path, pl_err_t *err);
int topo_read_nvsmi_text(struct topo_nodetype *t, const char *text, const char *label,
			 pl_err_t *err);

/* NCCL topology XML (NCCL_TOPO_FILE format). */
int topo_read_nccl_xml(struct topo_nodetype *t, const char *path, pl_err_t *err);

/* nccl-tests all_reduce_perf output: busbw of the largest size, GB/s. */
struct nccltests_result {
	int nranks;		/* from the "Rank N" lines; 0 unknown */
	int nnodes;		/* distinct hosts in the "Rank" lines; 0 unknown */
	long nrows;
	long max_bytes;
	double busbw_max;	/* busbw at the largest size (best of in/out of place), GB/s */
	double busbw_avg;	/* the "Avg bus bandwidth" line; 0 if absent */
	char host[2][TOPO_NAME];	/* the first two hosts of the "Rank" lines; "" none
					 * (a longer name is cut) */
};
int topo_read_nccltests(struct nccltests_result *r, const char *path, pl_err_t *err);

/*
 * Link class cls of m becomes measured by r: its bus bandwidth at the
 * largest size, with a source saying how many ranks on how many nodes.
 * -1 with err naming label when r has no positive bus bandwidth.
 */
int topo_link_measured(struct topo_map *m, enum topo_link cls,
		       const struct nccltests_result *r, const char *label, pl_err_t *err);

/*
 * The class GPU-to-GPU traffic inside one node runs on: nvlink, unless
 * only pcie is measured or the map's node types have GPUs and none has
 * NVLink (then pcie).  The same for one node type (t NULL: unknown, so
 * nvlink) in topo_type_intra_class.
 */
enum topo_link topo_intra_class(const struct topo_map *m);
enum topo_link topo_type_intra_class(const struct topo_nodetype *t);

/*
 * The nccl-tests runs that measure a map's link classes: one inside a node
 * (all its GPUs), one between two nodes under one leaf switch (or one
 * block), one between nodes under two leaves that a switch above joins
 * (or in two blocks), the closest such pair.
 */
enum { TOPO_BW_INTRA, TOPO_BW_LEAF, TOPO_BW_SPINE, TOPO_BW_NRUNS };

struct topo_bwrun {
	enum topo_link cls;	/* the class the run measures */
	int nnodes;		/* 1 or 2; 0: no such run, why says so */
	long node[2];		/* map node indices */
	int via;		/* spine run: the switch joining the two leaves; -1 */
	char why[200];
};

/*
 * Choose the runs among the candidate nodes cand[0..ncand) (map indices,
 * in the order to prefer them; NULL: every node of the map, in map order).
 * The first pair under one leaf is the leaf run and its first node the
 * intra-node run; the spine run pairs that node with the first node whose
 * leaf joins its leaf lowest in the switch tree (disconnected trees never
 * join; any two blocks are joined).  An NVLink block holds no leaf run:
 * its nodes talk over NVLink, which the intra-node run measures.  -1 with
 * err when there is no candidate.
 */
int topo_bwtest_runs(const struct topo_map *m, const long *cand, long ncand,
		     struct topo_bwrun runs[TOPO_BW_NRUNS], pl_err_t *err);

/* Guess an input file's format from its content: "hwloc", "nvsmi", "nccl-xml",
 * "nccl-tests", "slurm-topology" (topology.conf), "slurm-topology-yaml"
 * (topology.yaml), "map", or NULL. */
const char *topo_sniff(const char *path);

#endif
