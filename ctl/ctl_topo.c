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
	B_GPUMEM, B_TOPOFILE, B_HELP };

static const struct option build_opts[] = {
	{ "output", required_argument, NULL, B_OUT },
	{ "name", required_argument, NULL, B_NAME },
	{ "slurm-topology", required_argument, NULL, B_SLURM },
	{ "blocks", required_argument, NULL, B_BLOCKS },
	{ "nodes", required_argument, NULL, B_NODES },
	{ "node", required_argument, NULL, B_NODE },
	{ "node-type", required_argument, NULL, B_NODETYPE },
	{ "nccl-tests", required_argument, NULL, B_NCCLTESTS },
	{ "gpu-mem", required_argument, NULL, B_GPUMEM },
	{ "nccl-topo-file", required_argument, NULL, B_TOPOFILE },
	{ "help", no_argument, NULL, B_HELP },
	{ NULL, 0, NULL, 0 }
};

static int topo_build(int argc, char **argv);
static int topo_show(int argc, char **argv);
static int topo_exec(int argc, char **argv);

static const struct ctl_cmd cmd_build = {
	"build",
	"[-o FILE] [--name NAME]\n"
	"[--slurm-topology topology.conf [--blocks nvlink|network]] [--nodes HOSTLIST]\n"
	"[--node SOURCE[+SOURCE...]] [--node-type NAME:HOSTLIST=SOURCE[+SOURCE...]]...\n"
	"[--nccl-tests FILE[=CLASS]]... [--gpu-mem GB] [--nccl-topo-file PATH]",
	"assemble a cluster map from topology.conf, hwloc, nvidia-smi,\n"
	"NCCL topology and nccl-tests files",
	"Assemble a cluster map.  The switch tree or blocks come from Slurm's\n"
	"topology.conf (blocks are NVLink domains unless --blocks network); --nodes\n"
	"adds nodes the file does not name.  --node describes every node's GPUs and\n"
	"NICs; --node-type gives a named type to some nodes of a mixed cluster.  A\n"
	"SOURCE is an hwloc XML (lstopo --of xml), 'nvidia-smi topo -m' output, an\n"
	"NCCL topology XML (kept as the nodes' NCCL_TOPO_FILE), 'live' (this node via\n"
	"hwloc) or a GPU count; several joined by '+' are merged.  --nccl-tests\n"
	"imports all_reduce_perf bus bandwidth as a measured link class (nvlink, pcie,\n"
	"leaf, spine; default nvlink for one host, leaf for several).  Refused: a\n"
	"node type name given twice, a map of no nodes, a --name over 63 characters.\n",
	topo_build,
	NULL
};

static const struct ctl_cmd cmd_show = {
	"show",
	"MAP [--json]",
	"summarise a cluster map",
	"Summarise a cluster map: nodes, GPUs, node types, switch levels,\n"
	"blocks and link-class bandwidths (measured or nominal).\n",
	topo_show,
	NULL
};

static const struct ctl_cmd *const topo_cmds[] = { &cmd_build, &cmd_show, NULL };

const struct ctl_cmd ctl_cmd_topo = {
	"topo",
	"build ... | show MAP [--json]",
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
		case B_NODES: b.nodes = optarg; break;
		case B_NODE: b.node = optarg; break;
		case B_TOPOFILE: b.nccl_topo_file = optarg; break;
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
	if (out) {
		if (topo_save(m, out, &err) < 0) {
			ctl_error("-o %s", err.text);
			goto out;
		}
	} else {
		char *text = topo_to_json_text(m);

		if (!text) {
			ctl_error("out of memory");
			goto out;
		}
		puts(text);
		free(text);
	}
	rv = 0;
out:
	topo_free(m);
	return rv;
}

static int
topo_show(int argc, char **argv)
{
	struct topo_map *m;
	pl_err_t err;
	bool json = false;
	const char *path = NULL;
	long i, gpus = 0, *per_type = NULL;
	int k, maxlevel = -1, rv = 1;
	json_t *root = NULL, *types = NULL, *links = NULL;

	for (k = 1; k < argc; k++) {
		if (strcmp(argv[k], "--json") == 0)
			json = true;
		else if (strcmp(argv[k], "--help") == 0) {
			ctl_cmd_help(&cmd_show, "topo");
			return 0;
		} else if (argv[k][0] == '-' || path) {
			ctl_error("topo show: unexpected argument '%s' (usage: topo show MAP [--json])",
				  ctl_clip(argv[k]));
			return 2;
		} else
			path = argv[k];
	}
	if (!path) {
		ctl_error("topo show: give the map file (usage: topo show MAP [--json])");
		return 2;
	}
	pl_err_clear(&err);
	m = topo_load(path, &err);
	if (!m) {
		ctl_error("%s", err.text);
		return 1;
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
	root = json_pack("{s:s, s:I, s:I, s:i, s:i, s:i, s:o, s:o}", "name", m->name,
			 "nodes", (json_int_t)m->nnodes, "gpus", (json_int_t)gpus,
			 "switches", m->nswitches, "switch_levels", maxlevel + 1,
			 "blocks", m->nblocks, "node_types", types, "link_classes", links);
	types = links = NULL;
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
