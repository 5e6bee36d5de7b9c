/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `layoutctl topo build` and `layoutctl topo show`: assemble a cluster map
 * from the files admins already have, and summarise one.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "ctl.h"
#include "hwloc_child.h"

/* Read one node description SOURCE into *t: a file of a known kind, "live"
 * (hwloc discovery of this machine) or a GPU count. */
static int
read_source(struct topo_nodetype *t, const char *src, const char *opt)
{
	const char *kind;
	pl_err_t err;
	char *end = NULL;
	long n;
	int rc, i;

	pl_err_clear(&err);
	memset(t, 0, sizeof(*t));
	n = strtol(src, &end, 10);
	if (end != src && *end == '\0') {
		if (n <= 0 || n > 4096) {
			ctl_error("%s=%s: a GPU count must be 1..4096", opt, src);
			return -1;
		}
		t->ngpus = (int)n;
		t->gpus = calloc((size_t)n, sizeof(*t->gpus));
		if (!t->gpus) {
			ctl_error("out of memory");
			return -1;
		}
		for (i = 0; i < n; i++) {
			t->gpus[i].index = i;
			t->gpus[i].numa = -1;
			t->gpus[i].island = 0;
			t->gpus[i].nic = -1;
		}
		return 0;
	}
	if (strcmp(src, "live") == 0)
		rc = topo_read_hwloc(t, NULL, &err);
	else if (!(kind = topo_sniff(src))) {
		ctl_error("%s=%s: cannot read it, or not an hwloc XML, nvidia-smi topo -m, or NCCL topology file",
			  opt, src);
		return -1;
	} else if (strcmp(kind, "hwloc") == 0)
	{
		char msg[PL_ERR_TEXT + 128];

		if (hwloc_read_isolated(t, src, msg, sizeof(msg)) < 0) {
			ctl_error("%s=%s: %s", opt, src, msg);
			return -1;
		}
		return 0;
	}
	else if (strcmp(kind, "nvsmi") == 0)
		rc = topo_read_nvsmi(t, src, &err);
	else if (strcmp(kind, "nccl-xml") == 0) {
		rc = topo_read_nccl_xml(t, src, &err);
		/* Hand the same file to NCCL on the nodes (kept as given: the
		 * path must be valid there). */
		if (rc == 0)
			snprintf(t->nccl_topo_file, sizeof(t->nccl_topo_file), "%s", src);
	} else {
		ctl_error("%s=%s: this is %s input, not a node description (accepted: hwloc XML, nvidia-smi topo -m, NCCL topology XML, live, or a GPU count)",
			  opt, src, kind);
		return -1;
	}
	if (rc < 0) {
		ctl_error("%s=%s: %s", opt, src, err.text);
		topo_nodetype_clear(t);
		return -1;
	}
	return 0;
}

/* Fill what *dst does not know from *src (same GPU indexes). */
static int
merge_type(struct topo_nodetype *dst, const struct topo_nodetype *src)
{
	int i, k, nic_base = -1;

	if (dst->ngpus == 0) {
		pl_err_t err;
		char name[TOPO_NAME];

		memcpy(name, dst->name, sizeof(name));
		topo_nodetype_clear(dst);
		if (topo_nodetype_copy(dst, src, &err) < 0)
			return -1;
		if (name[0])
			memcpy(dst->name, name, sizeof(name));
		return 0;
	}
	if (dst->nnics == 0 && src->nnics > 0) {
		dst->nics = calloc((size_t)src->nnics, sizeof(*dst->nics));
		if (!dst->nics)
			return -1;
		memcpy(dst->nics, src->nics, (size_t)src->nnics * sizeof(*dst->nics));
		dst->nnics = src->nnics;
		nic_base = 0;
	}
	for (i = 0; i < dst->ngpus; i++) {
		struct topo_gpu *g = &dst->gpus[i];

		for (k = 0; k < src->ngpus; k++) {
			const struct topo_gpu *s = &src->gpus[k];

			if (s->index != g->index)
				continue;
			if (g->numa < 0)
				g->numa = s->numa;
			if (!g->pci[0])
				memcpy(g->pci, s->pci, sizeof(g->pci));
			if (g->island < 0)
				g->island = s->island;
			if (!g->name[0])
				memcpy(g->name, s->name, sizeof(g->name));
			if (g->nic < 0 && nic_base == 0)
				g->nic = s->nic;
		}
	}
	if (dst->gpu_memory_gb <= 0)
		dst->gpu_memory_gb = src->gpu_memory_gb;
	if (!dst->nccl_topo_file[0])
		memcpy(dst->nccl_topo_file, src->nccl_topo_file, sizeof(dst->nccl_topo_file));
	return 0;
}

/* SOURCE[+SOURCE...] into one node type. */
static int
read_sources(struct topo_nodetype *t, const char *list, const char *opt)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int rv = -1;

	if (!copy) {
		ctl_error("out of memory");
		return -1;
	}
	memset(t, 0, sizeof(*t));
	for (tok = strtok_r(copy, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
		struct topo_nodetype one;

		if (read_source(&one, tok, opt) < 0)
			goto out;
		if (merge_type(t, &one) < 0) {
			topo_nodetype_clear(&one);
			ctl_error("out of memory");
			goto out;
		}
		topo_nodetype_clear(&one);
	}
	if (t->ngpus == 0) {
		ctl_error("%s=%s: the node description has no GPUs", opt, list);
		goto out;
	}
	rv = 0;
out:
	if (rv < 0)
		topo_nodetype_clear(t);
	free(copy);
	return rv;
}

/* --node-type NAME:HOSTLIST=SOURCE[+SOURCE]. */
static int
add_node_type(struct topo_map *m, const char *arg)
{
	const char *colon = strchr(arg, ':'), *eq = colon ? strchr(colon, '=') : NULL;
	struct topo_nodetype t;
	struct hosts h = { 0, NULL };
	char name[TOPO_NAME], *hl = NULL;
	pl_err_t err;
	long i;
	int ti, rv = -1;

	pl_err_clear(&err);
	memset(&t, 0, sizeof(t));
	if (!colon || !eq || colon == arg || eq == colon + 1 || !eq[1] ||
	    (size_t)(colon - arg) >= sizeof(name)) {
		ctl_error("--node-type=%s: expected NAME:HOSTLIST=SOURCE, e.g. a100:gpu[01-16]=a100.xml",
			  arg);
		return -1;
	}
	memcpy(name, arg, (size_t)(colon - arg));
	name[colon - arg] = '\0';
	hl = strndup(colon + 1, (size_t)(eq - colon - 1));
	if (!hl || read_sources(&t, eq + 1, "--node-type") < 0)
		goto out;
	memcpy(t.name, name, sizeof(name));
	ti = topo_add_type(m, &t, &err);
	if (ti < 0 || hosts_expand(&h, hl, 1000000, &err) < 0 || topo_index(m, &err) < 0) {
		ctl_error("--node-type=%s: %s", arg, err.text);
		goto out;
	}
	for (i = 0; i < h.n; i++) {
		long ni = topo_find_node(m, h.names[i]);

		if (ni < 0) {
			ni = topo_add_node(m, h.names[i], &err);
			if (ni < 0 || topo_index(m, &err) < 0) {
				ctl_error("--node-type=%s: %s", arg, err.text);
				goto out;
			}
		}
		m->nodes[ni].type = ti;
	}
	rv = 0;
out:
	free(hl);
	hosts_free(&h);
	topo_nodetype_clear(&t);
	return rv;
}

static int
import_nccltests(struct topo_map *m, const char *arg)
{
	char path[PATH_MAX];
	const char *eq = strrchr(arg, '=');
	struct nccltests_result r;
	pl_err_t err;
	int cls = -1, i;

	pl_err_clear(&err);
	snprintf(path, sizeof(path), "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
	if (eq)
		for (i = 0; i < TOPO_NLINKS; i++)
			if (strcmp(eq + 1, topo_link_name(i)) == 0)
				cls = i;
	if (eq && cls < 0) {
		ctl_error("--nccl-tests=%s: unknown link class '%s' (accepted: nvlink, pcie, leaf, spine)",
			  arg, eq + 1);
		return -1;
	}
	if (topo_read_nccltests(&r, path, &err) < 0) {
		ctl_error("--nccl-tests=%s: %s", path, err.text);
		return -1;
	}
	/* Ranks on one host measured NVLink; several hosts measured the network. */
	if (cls < 0)
		cls = r.nnodes > 1 ? TOPO_LINK_LEAF : TOPO_LINK_NVLINK;
	if (!(r.busbw_max > 0)) {
		ctl_error("--nccl-tests=%s: no positive bus bandwidth in the file", path);
		return -1;
	}
	m->link[cls].gbps = r.busbw_max;
	m->link[cls].measured = true;
	snprintf(m->link[cls].source, sizeof(m->link[cls].source),
		 "all_reduce_perf busbw at %ld bytes, %d ranks on %d nodes", r.max_bytes, r.nranks,
		 r.nnodes);
	return 0;
}

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

static void
build_help(void)
{
	printf("Usage: " CTL_PROG " topo build [-o FILE] [--name NAME]\n"
	       "           [--slurm-topology topology.conf [--blocks nvlink|network]] [--nodes HOSTLIST]\n"
	       "           [--node SOURCE[+SOURCE...]] [--node-type NAME:HOSTLIST=SOURCE[+SOURCE...]]...\n"
	       "           [--nccl-tests FILE[=CLASS]]... [--gpu-mem GB] [--nccl-topo-file PATH]\n"
	       "\n"
	       "Assemble a cluster map.  The switch tree or blocks come from Slurm's\n"
	       "topology.conf (blocks are NVLink domains unless --blocks network); --nodes\n"
	       "adds nodes the file does not name.  --node describes every node's GPUs and\n"
	       "NICs; --node-type gives a named type to some nodes of a mixed cluster.  A\n"
	       "SOURCE is an hwloc XML (lstopo --of xml), 'nvidia-smi topo -m' output, an\n"
	       "NCCL topology XML (kept as the nodes' NCCL_TOPO_FILE), 'live' (this node via\n"
	       "hwloc) or a GPU count; several joined by '+' are merged.  --nccl-tests\n"
	       "imports all_reduce_perf bus bandwidth as a measured link class (nvlink, pcie,\n"
	       "leaf, spine; default nvlink for one host, leaf for several).\n");
}

static int
topo_build(int argc, char **argv)
{
	const char *out = NULL, *name = NULL, *slurm = NULL, *nodes = NULL, *node = NULL;
	const char *topofile = NULL, *types[64], *tests[16];
	int ntypes = 0, ntests = 0, c, i, rv = 1;
	bool blocks_nvlink = true;
	double gpu_mem = 0;
	struct topo_map *m = NULL;
	struct topo_nodetype t;
	struct hosts h = { 0, NULL };
	pl_err_t err;
	char *end;

	pl_err_clear(&err);
	memset(&t, 0, sizeof(t));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:", build_opts, NULL)) != -1) {
		switch (c) {
		case 'o':
		case B_OUT: out = optarg; break;
		case B_NAME: name = optarg; break;
		case B_SLURM: slurm = optarg; break;
		case B_NODES: nodes = optarg; break;
		case B_NODE: node = optarg; break;
		case B_TOPOFILE: topofile = optarg; break;
		case B_BLOCKS:
			if (strcmp(optarg, "nvlink") && strcmp(optarg, "network")) {
				ctl_error("--blocks=%s: expected nvlink or network", optarg);
				return 2;
			}
			blocks_nvlink = strcmp(optarg, "nvlink") == 0;
			break;
		case B_NODETYPE:
			if (ntypes == 64) {
				ctl_error("--node-type: at most 64 types");
				return 2;
			}
			types[ntypes++] = optarg;
			break;
		case B_NCCLTESTS:
			if (ntests == 16) {
				ctl_error("--nccl-tests: at most 16 files");
				return 2;
			}
			tests[ntests++] = optarg;
			break;
		case B_GPUMEM:
			gpu_mem = strtod(optarg, &end);
			if (end == optarg || *end || !(gpu_mem > 0) || gpu_mem > 1e6) {
				ctl_error("--gpu-mem=%s: expected GB per GPU, e.g. 80", optarg);
				return 2;
			}
			break;
		case B_HELP:
			build_help();
			return 0;
		default:
			ctl_error("topo build: unknown or incomplete option '%s' (see 'topo build --help')",
				  argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		ctl_error("topo build: unexpected argument '%s'", argv[optind]);
		return 2;
	}
	if (!slurm && !nodes && ntypes == 0) {
		ctl_error("topo build: no nodes: give --slurm-topology, --nodes or --node-type");
		return 2;
	}
	m = topo_new();
	if (!m) {
		ctl_error("out of memory");
		return 1;
	}
	snprintf(m->name, sizeof(m->name), "%s", name ? name : "cluster");
	if (node) {
		if (read_sources(&t, node, "--node") < 0)
			goto out;
		if (!t.name[0])
			snprintf(t.name, sizeof(t.name), "default");
		if (gpu_mem > 0)
			t.gpu_memory_gb = gpu_mem;
		if (topofile)
			snprintf(t.nccl_topo_file, sizeof(t.nccl_topo_file), "%s", topofile);
		m->default_type = topo_add_type(m, &t, &err);
		if (m->default_type < 0) {
			ctl_error("--node=%s: %s", node, err.text);
			goto out;
		}
	}
	if (slurm && topo_read_slurm(m, slurm, blocks_nvlink, &err) < 0) {
		ctl_error("--slurm-topology=%s", err.text);
		goto out;
	}
	if (topo_index(m, &err) < 0) {
		ctl_error("%s", err.text);
		goto out;
	}
	if (nodes) {
		if (hosts_expand(&h, nodes, 1000000, &err) < 0) {
			ctl_error("--nodes=%s: %s", nodes, err.text);
			goto out;
		}
		for (i = 0; i < h.n; i++)
			if (topo_find_node(m, h.names[i]) < 0 &&
			    (topo_add_node(m, h.names[i], &err) < 0 || topo_index(m, &err) < 0)) {
				ctl_error("--nodes=%s: %s", nodes, err.text);
				goto out;
			}
	}
	for (i = 0; i < ntypes; i++)
		if (add_node_type(m, types[i]) < 0)
			goto out;
	for (i = 0; i < ntests; i++)
		if (import_nccltests(m, tests[i]) < 0)
			goto out;
	for (i = 0; i < m->nnodes; i++)
		if (!topo_node_type(m, i)) {
			ctl_error("node '%s' has no node type: give --node SOURCE for all nodes or --node-type for it",
				  m->nodes[i].name);
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
	hosts_free(&h);
	topo_nodetype_clear(&t);
	topo_free(m);
	return rv;
}

static int
count_islands(const struct topo_nodetype *t)
{
	int i, k, n = 0;

	for (i = 0; i < t->ngpus; i++) {
		int seen = 0;

		if (t->gpus[i].island < 0)
			continue;
		for (k = 0; k < i; k++)
			seen |= t->gpus[k].island == t->gpus[i].island;
		n += !seen;
	}
	return n;
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
			printf("Usage: " CTL_PROG " topo show MAP [--json]\n\n"
			       "Summarise a cluster map: nodes, GPUs, node types, switch levels,\n"
			       "blocks and link-class bandwidths (measured or nominal).\n");
			return 0;
		} else if (argv[k][0] == '-' || path) {
			ctl_error("topo show: unexpected argument '%s' (usage: topo show MAP [--json])",
				  argv[k]);
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
			"nics", t->nnics, "nvlink_islands", count_islands(t),
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
			       t->name, per_type[k], t->ngpus, count_islands(t), t->nnics,
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

int
ctl_topo(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0) {
		printf("Usage: " CTL_PROG " topo build ... | " CTL_PROG " topo show MAP [--json]\n"
		       "'" CTL_PROG " topo build --help' for the build options.\n");
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "build") == 0)
		return topo_build(argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return topo_show(argc - 1, argv + 1);
	ctl_error("topo: unknown command '%s' (accepted: build, show)", argv[1]);
	return 2;
}
