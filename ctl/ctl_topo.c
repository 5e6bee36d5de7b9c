/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `layoutctl topo build` and `layoutctl topo show`: the options of a map
 * assembly (lib/topo/topo_build.c does the work), and a map's summary.
 */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "topo_build.h"

enum { B_OUT = 1000, B_NAME, B_SLURM, B_BLOCKS, B_NODES, B_NODE, B_NODETYPE, B_NCCLTESTS,
	B_GPUMEM, B_TOPOFILE, B_SLURMNODES, B_PEERPORT, B_SLURMDPORT, B_SLURMNAME, B_HELP };

static const struct option build_opts[] = {
	{ "output", required_argument, NULL, B_OUT },
	{ "name", required_argument, NULL, B_NAME },
	{ "slurm-topology", required_argument, NULL, B_SLURM },
	{ "slurm-topology-name", required_argument, NULL, B_SLURMNAME },
	{ "blocks", required_argument, NULL, B_BLOCKS },
	{ "nodes", required_argument, NULL, B_NODES },
	{ "node", required_argument, NULL, B_NODE },
	{ "node-type", required_argument, NULL, B_NODETYPE },
	{ "nccl-tests", required_argument, NULL, B_NCCLTESTS },
	{ "gpu-mem", required_argument, NULL, B_GPUMEM },
	{ "nccl-topo-file", required_argument, NULL, B_TOPOFILE },
	{ "slurm-nodes", required_argument, NULL, B_SLURMNODES },
	{ "peer-port", required_argument, NULL, B_PEERPORT },
	{ "slurmd-port", required_argument, NULL, B_SLURMDPORT },
	{ "help", no_argument, NULL, B_HELP },
	{ NULL, 0, NULL, 0 }
};

#define SVG_EQ "--svg="

static int topo_build(int argc, char **argv);
static int topo_show(int argc, char **argv);
static int topo_exec(int argc, char **argv);

static const struct ctl_cmd cmd_build = {
	"build",
	"[-o FILE] [--name NAME]\n"
	"[--slurm-topology topology.conf|topology.yaml [--slurm-topology-name NAME]\n"
	"[--blocks nvlink|network]] [--nodes HOSTLIST]\n"
	"[--node SOURCE[+SOURCE...]] [--node-type NAME:HOSTLIST=SOURCE[+SOURCE...]]...\n"
	"[--nccl-tests FILE[=CLASS]]... [--gpu-mem GB] [--nccl-topo-file PATH]\n"
	"[--slurm-nodes FILE|-] [--peer-port N|slurmd+K [--slurmd-port N]]",
	"assemble a cluster map from topology.conf or .yaml, hwloc, nvidia-smi,\n"
	"NCCL topology and nccl-tests files",
	"Assemble a cluster map.  The switch tree or blocks come from Slurm's\n"
	"topology.conf or topology.yaml (blocks are NVLink domains unless --blocks\n"
	"network); --nodes adds nodes the file does not name.  Of a topology.yaml's\n"
	"topologies, --slurm-topology-name NAME reads that one, else the one with\n"
	"cluster_default: true, else the first; a flat topology names no nodes, so\n"
	"the nodes then come from --nodes or --node-type.  --node describes every\n"
	"node's GPUs and NICs; --node-type gives a named type to some nodes of a\n"
	"mixed cluster.  A SOURCE is an hwloc XML (lstopo --of xml), 'nvidia-smi\n"
	"topo -m' output, an NCCL topology XML (kept as the nodes' NCCL_TOPO_FILE),\n"
	"'live' (this node via hwloc) or a GPU count; several joined by '+' are\n"
	"merged.  --nccl-tests imports all_reduce_perf bus bandwidth as a measured\n"
	"link class (nvlink, pcie, leaf, spine; default nvlink for one host, leaf for\n"
	"several).  Refused: a\n"
	"node type name given twice, a map of no nodes, a --name over 63 characters.\n"
	"\n"
	"Peer addresses (where the layoutds of a step's nodes reach each other):\n"
	"--slurm-nodes reads 'scontrol show nodes -o' output (a file, or - for stdin)\n"
	"and records each node's NodeAddr; a node the map lacks is an error, a map\n"
	"node it does not list is left without an address (a warning).  --peer-port N\n"
	"records port N for every node; --peer-port slurmd+K each listed node's\n"
	"slurmd port (Port=) plus K, so nodes sharing one address get one port each.\n"
	"scontrol shows no Port= where it is the cluster's SlurmdPort: --slurmd-port N\n"
	"gives that (default 6818).\n",
	topo_build,
	NULL
};

static const struct ctl_cmd cmd_show = {
	"show",
	"MAP [--json] [--nodes] [--svg FILE]",
	"summarise a cluster map; --svg draws its bandwidth map",
	"Summarise a cluster map: nodes, GPUs, node types, switch levels,\n"
	"blocks, link-class bandwidths (measured or nominal), the intra/inter\n"
	"ratio and how many nodes have a peer address and port.  --nodes adds one line per node: its type,\n"
	"switches, block, address and peer port.\n"
	"\n"
	"--svg FILE draws the bandwidth map (- for stdout, then no summary): the\n"
	"intra/inter ratio (bus bandwidth inside a node over that between nodes\n"
	"under one leaf, and across the spine), each link class's GB/s, measured\n"
	"(and from what) or nominal (grey, dashed), and the switch tree with its\n"
	"leaves and runs of like nodes; NVLink blocks are tinted, and siblings of\n"
	"one shape beyond the second are summarised ('x18 more like leaf101').\n"
	"'" CTL_PROG " bwtest' measures the classes.\n",
	topo_show,
	NULL
};

static const struct ctl_cmd *const topo_cmds[] = { &cmd_build, &cmd_show, NULL };

const struct ctl_cmd ctl_cmd_topo = {
	"topo",
	"build ... | show MAP [--json] [--nodes] [--svg FILE]",
	"the cluster map: build one, show one",
	"'" CTL_PROG " topo build --help' for the build options.\n",
	topo_exec,
	topo_cmds
};

static void
build_help(void)
{
	ctl_cmd_help(&cmd_build, "topo");
}

/* The nodes --slurm-nodes gave no address: their peers will use the
 * node's name.  The first few are named. */
static void
warn_unlisted(const struct topo_map *m, const char *file)
{
	char names[4 * (TOPO_NAME + 2)] = "";
	const char *addr;
	long i, n = 0;
	size_t len = 0;
	int port;

	for (i = 0; i < m->nnodes; i++) {
		if (topo_node_peer(m, i, &addr, &port) < 0 || addr)
			continue;
		if (n++ < 4)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						n > 1 ? ", " : "", m->nodes[i].name);
	}
	if (n)
		ctl_error("warning: --slurm-nodes=%s: %ld node%s of the map %s no line there (%s%s): left without an address, their peers will use the node name",
			  ctl_clip_path(file), n, n > 1 ? "s" : "", n > 1 ? "have" : "has", names,
			  n > 4 ? ", ..." : "");
}

static int
topo_build(int argc, char **argv)
{
	struct topo_build b;
	struct topo_map *m = NULL;
	const char *out = NULL;
	char c[PL_CLIP_BUF], *end;
	pl_err_t err;
	int ch, rv = 1;

	pl_err_clear(&err);
	memset(&b, 0, sizeof(b));
	b.blocks_nvlink = true;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "o:", build_opts, NULL)) != -1) {
		switch (ch) {
		case 'o':
		case B_OUT: out = optarg; break;
		case B_NAME: b.name = optarg; break;
		case B_SLURM: b.slurm = optarg; break;
		case B_SLURMNAME: b.slurm_name = optarg; break;
		case B_NODES: b.nodes = optarg; break;
		case B_NODE: b.node = optarg; break;
		case B_TOPOFILE: b.nccl_topo_file = optarg; break;
		case B_SLURMNODES: b.slurm_nodes = optarg; break;
		case B_PEERPORT: b.peer_port = optarg; break;
		case B_SLURMDPORT:
			b.slurmd_port = ctl_parse_count("--slurmd-port", optarg, 65535);
			if (b.slurmd_port < 0)
				return 2;
			break;
		case B_BLOCKS:
			if (strcmp(optarg, "nvlink") && strcmp(optarg, "network")) {
				ctl_error("--blocks=%s: expected nvlink or network",
					  pl_clip(optarg, c, sizeof(c)));
				return 2;
			}
			b.blocks_nvlink = strcmp(optarg, "nvlink") == 0;
			break;
		case B_NODETYPE:
			if (b.ntypes == TOPO_BUILD_MAX_TYPES) {
				ctl_error("--node-type: at most %d types", TOPO_BUILD_MAX_TYPES);
				return 2;
			}
			b.types[b.ntypes++] = optarg;
			break;
		case B_NCCLTESTS:
			if (b.ntests == TOPO_BUILD_MAX_TESTS) {
				ctl_error("--nccl-tests: at most %d files", TOPO_BUILD_MAX_TESTS);
				return 2;
			}
			b.tests[b.ntests++] = optarg;
			break;
		case B_GPUMEM:
			b.gpu_mem = strtod(optarg, &end);
			if (end == optarg || *end || !(b.gpu_mem > 0) || b.gpu_mem > 1e6) {
				ctl_error("--gpu-mem=%s: expected GB per GPU, e.g. 80",
					  pl_clip(optarg, c, sizeof(c)));
				return 2;
			}
			break;
		case B_HELP:
			build_help();
			return 0;
		default:
			ctl_error("topo build: unknown or incomplete option '%s' (see 'topo build --help')",
				  pl_clip(argv[optind - 1], c, sizeof(c)));
			return 2;
		}
	}
	if (optind < argc) {
		ctl_error("topo build: unexpected argument '%s'", pl_clip(argv[optind], c, sizeof(c)));
		return 2;
	}
	if (!b.slurm && !b.nodes && b.ntypes == 0) {
		ctl_error("topo build: no nodes: give --slurm-topology, --nodes or --node-type");
		return 2;
	}
	m = topo_build_map(&b, &err);
	if (!m) {
		ctl_error("%s", err.text);
		goto out;
	}
	if (b.slurm_nodes)
		warn_unlisted(m, b.slurm_nodes);
	if (ctl_write_map(m, out) < 0)
		goto out;
	rv = 0;
out:
	topo_free(m);
	return rv;
}

/* Node i's switches, "-" for none. */
static const char *
node_switches(const struct topo_map *m, long i, char *buf, size_t size)
{
	const struct topo_node *n = &m->nodes[i];

	if (n->sw < 0)
		return "-";
	snprintf(buf, size, "%s%s%s", m->switches[n->sw].name, n->sw2 >= 0 ? "," : "",
		 n->sw2 >= 0 ? m->switches[n->sw2].name : "");
	return buf;
}

/* show --nodes: one line per node. */
static void
print_nodes(const struct topo_map *m)
{
	char sw[2 * TOPO_NAME + 2];
	const char *addr;
	long i;
	int port;

	printf("\n%-24s %-12s %-20s %-12s %-24s %s\n", "NODE", "TYPE", "SWITCH", "BLOCK", "ADDRESS",
	       "PEER PORT");
	for (i = 0; i < m->nnodes; i++) {
		const struct topo_nodetype *t = topo_node_type(m, i);
		const struct topo_node *n = &m->nodes[i];

		topo_node_peer(m, i, &addr, &port);
		printf("%-24s %-12s %-20s %-12s %-24s ", n->name, t ? t->name : "-",
		       node_switches(m, i, sw, sizeof(sw)), n->block >= 0 ? m->blocks[n->block].name : "-",
		       addr ? addr : "-");
		if (port > 0)
			printf("%d\n", port);
		else
			printf("-\n");
	}
}

/* show --nodes --json: "node_list", each node with null where the map has nothing. */
static int
node_list(const struct topo_map *m, json_t *root)
{
	json_t *list = json_array();
	const char *addr;
	long i;
	int port;

	if (!list || json_object_set_new(root, "node_list", list) < 0)
		return -1;
	for (i = 0; i < m->nnodes; i++) {
		const struct topo_nodetype *t = topo_node_type(m, i);
		const struct topo_node *n = &m->nodes[i];

		topo_node_peer(m, i, &addr, &port);
		if (json_array_append_new(list, json_pack("{s:s, s:s?, s:s?, s:s?, s:s?, s:s?, s:o}",
			"name", n->name, "type", t ? t->name : NULL,
			"switch", n->sw >= 0 ? m->switches[n->sw].name : NULL,
			"switch2", n->sw2 >= 0 ? m->switches[n->sw2].name : NULL,
			"block", n->block >= 0 ? m->blocks[n->block].name : NULL,
			"addr", addr, "peer_port", port > 0 ? json_integer(port) : json_null())) < 0)
			return -1;
	}
	return 0;
}

static int
topo_show(int argc, char **argv)
{
	struct topo_map *m;
	pl_err_t err;
	bool json = false, per_node = false;
	const char *path = NULL, *addr, *svg = NULL;
	long i, gpus = 0, *per_type = NULL, with_addr = 0, with_port = 0;
	int k, maxlevel = -1, rv = 1, port, port_lo = 0, port_hi = 0, intra;
	double r_leaf, r_spine;
	json_t *root = NULL, *types = NULL, *links = NULL;

	for (k = 1; k < argc; k++) {
		if (strcmp(argv[k], "--json") == 0)
			json = true;
		else if (strcmp(argv[k], "--nodes") == 0)
			per_node = true;
		else if (strcmp(argv[k], "--svg") == 0 || strncmp(argv[k], SVG_EQ, strlen(SVG_EQ)) == 0) {
			svg = argv[k][strlen(SVG_EQ) - 1] == '=' ? argv[k] + strlen(SVG_EQ) :
				k + 1 < argc ? argv[++k] : NULL;
			if (!svg || !svg[0]) {
				ctl_error("topo show: --svg needs a file name (or - for stdout)");
				return 2;
			}
		} else if (strcmp(argv[k], "--help") == 0) {
			ctl_cmd_help(&cmd_show, "topo");
			return 0;
		} else if (argv[k][0] == '-' || path) {
			ctl_error("topo show: unexpected argument '%s' (usage: topo show MAP [--json] [--nodes] [--svg FILE])",
				  ctl_clip(argv[k]));
			return 2;
		} else
			path = argv[k];
	}
	if (!path) {
		ctl_error("topo show: give the map file (usage: topo show MAP [--json] [--nodes] [--svg FILE])");
		return 2;
	}
	pl_err_clear(&err);
	m = topo_load(path, &err);
	if (!m) {
		ctl_error("%s", err.text);
		return 1;
	}
	if (svg && ctl_bwmap_write(svg, m) < 0)
		goto out;
	if (svg && strcmp(svg, "-") == 0) {
		rv = 0;
		goto out;
	}
	per_type = calloc((size_t)m->ntypes + 1, sizeof(*per_type));
	if (!per_type) {
		ctl_error("out of memory");
		goto out;
	}
	for (i = 0; i < m->nnodes; i++) {
		const struct topo_nodetype *t = topo_node_type(m, i);

		if (t) {
			gpus += t->ngpus;
			per_type[t - m->types]++;
		}
		topo_node_peer(m, i, &addr, &port);
		with_addr += addr != NULL;
		if (port > 0) {
			port_lo = with_port == 0 || port < port_lo ? port : port_lo;
			port_hi = port > port_hi ? port : port_hi;
			with_port++;
		}
	}
	for (i = 0; i < m->nswitches; i++)
		if (m->switches[i].level > maxlevel)
			maxlevel = m->switches[i].level;
	types = json_array();
	for (k = 0; k < m->ntypes; k++) {
		const struct topo_nodetype *t = &m->types[k];

		json_array_append_new(types, json_pack("{s:s, s:I, s:i, s:i, s:i, s:f, s:s}",
			"name", t->name, "nodes", (json_int_t)per_type[k], "gpus", t->ngpus,
			"nics", t->nnics, "nvlink_islands", topo_nodetype_islands(t),
			"gpu_memory_gb", t->gpu_memory_gb, "nccl_topo_file", t->nccl_topo_file));
	}
	links = json_object();
	for (k = 0; k < TOPO_NLINKS; k++)
		json_object_set_new(links, topo_link_name(k),
				    json_pack("{s:f, s:b, s:s}", "gbps", m->link[k].gbps,
					      "measured", m->link[k].measured,
					      "source", m->link[k].source));
	ctl_bwmap_ratios(m, &intra, &r_leaf, &r_spine);
	root = json_pack("{s:s, s:I, s:I, s:i, s:i, s:i, s:o, s:o, s:{s:s, s:o, s:o}, s:{s:I, s:I}}",
			 "name", m->name, "nodes", (json_int_t)m->nnodes, "gpus", (json_int_t)gpus,
			 "switches", m->nswitches, "switch_levels", maxlevel + 1,
			 "blocks", m->nblocks, "node_types", types, "link_classes", links,
			 "intra_inter", "intra_class", topo_link_name(intra),
			 "leaf", r_leaf > 0 ? json_real(r_leaf) : json_null(),
			 "spine", r_spine > 0 ? json_real(r_spine) : json_null(),
			 "peers", "with_addr", (json_int_t)with_addr, "with_peer_port",
			 (json_int_t)with_port);
	types = links = NULL;
	if (!root) {
		ctl_error("out of memory");
		goto out;
	}
	if (per_node && json && node_list(m, root) < 0) {
		ctl_error("out of memory");
		goto out;
	}
	if (json) {
		json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else {
		printf("map          %s (%s)\n", m->name, path);
		printf("nodes        %ld nodes, %ld GPUs\n", m->nnodes, gpus);
		printf("network      %d switches in %d levels, %d blocks\n", m->nswitches,
		       maxlevel + 1, m->nblocks);
		for (k = 0; k < m->ntypes; k++) {
			const struct topo_nodetype *t = &m->types[k];

			printf("node type    %-16s %5ld nodes: %d GPUs, %d NVLink islands, %d NICs%s%s\n",
			       t->name, per_type[k], t->ngpus, topo_nodetype_islands(t), t->nnics,
			       t->nccl_topo_file[0] ? ", NCCL topology " : "", t->nccl_topo_file);
		}
		for (k = 0; k < TOPO_NLINKS; k++)
			printf("link         %-6s %8.1f GB/s  %s%s%s\n", topo_link_name(k),
			       m->link[k].gbps, m->link[k].measured ? "measured" : "nominal",
			       m->link[k].source[0] ? ": " : "", m->link[k].source);
		printf("intra/inter  %.2f (%s / leaf)", r_leaf, topo_link_name(intra));
		if (r_spine > 0)
			printf(", %.2f across the spine (%s / spine)", r_spine, topo_link_name(intra));
		printf("%s\n", m->link[intra].measured && m->link[TOPO_LINK_LEAF].measured ? "" :
		       ", resting on a nominal figure");
		if (with_addr || with_port)
			printf("peers        %ld of %ld nodes with an address, %ld with a peer port%s",
			       with_addr, m->nnodes, with_port, with_port ? " (" : "\n");
		else
			printf("peers        no addresses or ports (peers use node names and layoutd's peer_port)\n");
		if (with_port && port_lo == port_hi)
			printf("%d)\n", port_lo);
		else if (with_port)
			printf("%d to %d)\n", port_lo, port_hi);
		if (per_node)
			print_nodes(m);
	}
	rv = 0;
out:
	json_decref(root);
	json_decref(types);
	json_decref(links);
	free(per_type);
	topo_free(m);
	return rv;
}

static int
topo_exec(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0) {
		ctl_cmd_help(&ctl_cmd_topo, NULL);
		return argc < 2 ? 2 : 0;
	}
	return ctl_dispatch(topo_cmds, "topo: ", argc - 1, argv + 1);
}

int
ctl_write_map(const struct topo_map *m, const char *out)
{
	pl_err_t err;
	char *text;

	pl_err_clear(&err);
	if (out) {
		if (topo_save(m, out, &err) < 0) {
			ctl_error("-o %s", err.text);
			return -1;
		}
		return 0;
	}
	text = topo_to_json_text(m);
	if (!text) {
		ctl_error("out of memory");
		return -1;
	}
	puts(text);
	free(text);
	return 0;
}
