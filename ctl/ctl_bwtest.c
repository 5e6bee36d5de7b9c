/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `layoutctl bwtest`: the sbatch script that measures a map's link classes
 * with nccl-tests' all_reduce_perf (inside a node, between two nodes under
 * one leaf, between two nodes across the spine; lib/topo chooses the
 * nodes), and `bwtest --import DIR`, which reads the outputs that script
 * wrote back into the map as measured classes.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl.h"

#define BW_FILE_PREFIX "all_reduce_perf_"

/* The script's own options lie between W_MAP and W_IMPORT (W_OUT aside):
 * --import refuses them. */
enum { W_MAP = 1000, W_NODES, W_OUT, W_NCCLDIR, W_RESULTS, W_PARTITION, W_ACCOUNT, W_TIME,
	W_GPUS, W_MAXBYTES, W_MPI, W_IMPORT, W_HELP };

static const struct option bw_opts[] = {
	{ "map", required_argument, NULL, W_MAP },
	{ "nodes", required_argument, NULL, W_NODES },
	{ "output", required_argument, NULL, W_OUT },
	{ "nccl-tests-dir", required_argument, NULL, W_NCCLDIR },
	{ "results", required_argument, NULL, W_RESULTS },
	{ "partition", required_argument, NULL, W_PARTITION },
	{ "account", required_argument, NULL, W_ACCOUNT },
	{ "time", required_argument, NULL, W_TIME },
	{ "gpus-per-node", required_argument, NULL, W_GPUS },
	{ "max-bytes", required_argument, NULL, W_MAXBYTES },
	{ "mpi", required_argument, NULL, W_MPI },
	{ "import", required_argument, NULL, W_IMPORT },
	{ "help", no_argument, NULL, W_HELP },
	{ NULL, 0, NULL, 0 }
};

struct bw_args {
	const char *map, *nodes, *out, *nccl_dir, *results, *partition, *account, *time;
	const char *max_bytes, *mpi, *import;
	long gpus;
};

static int bwtest_exec(int argc, char **argv);

const struct ctl_cmd ctl_cmd_bwtest = {
	"bwtest",
	"--map MAP [--nodes HOSTLIST] [-o SCRIPT] [--nccl-tests-dir DIR]\n"
	"[--results DIR] [--partition P] [--account A] [--time T] [--gpus-per-node N]\n"
	"[--max-bytes SIZE] [--mpi TYPE]\n"
	"| --import DIR --map MAP [-o NEWMAP]",
	"write the sbatch script that measures the map's link classes with\n"
	"nccl-tests, or import its results into the map",
	"Write an sbatch script (stdout, or -o SCRIPT) that runs nccl-tests'\n"
	"all_reduce_perf (-b 8 -e SIZE -f 2 -g 1, one task per GPU) three times: on\n"
	"one node with all its GPUs (class nvlink, or pcie for nodes without\n"
	"NVLink), on two nodes under one leaf switch or network block (leaf), and\n"
	"on two nodes under different leaves that a switch above joins, the\n"
	"closest such pair (spine).  The nodes come from the map's switch tree\n"
	"(among --nodes when given) and are named with --nodelist; a run the map\n"
	"cannot have (one leaf and no spine; inside an NVLink block, which is\n"
	"NVLink) is left out with a comment saying why.  Each run writes\n"
	"DIR/" BW_FILE_PREFIX "CLASS.txt (DIR from --results, default\n"
	"bwtest-results, or $RESULTS when the job runs); all_reduce_perf is taken\n"
	"from --nccl-tests-dir (default /opt/nccl-tests/build, or $NCCL_TESTS).\n"
	"--gpus-per-node overrides the map's GPU count; --mpi adds srun --mpi=TYPE\n"
	"(nccl-tests built with MPI=1 needs the PMI the cluster offers).\n"
	"\n"
	"--import DIR reads the files the script wrote and sets their classes in\n"
	"MAP as measured (bus bandwidth at the largest size, as topo build\n"
	"--nccl-tests), writing the map to NEWMAP (default stdout).  A missing class\n"
	"file is left as it was, with a warning; no file at all, a file that is not\n"
	"all_reduce_perf output, an intra-node file from several hosts, a\n"
	"node-to-node file from one host, a leaf file whose hosts are under two\n"
	"leaves of the map or a spine file whose hosts share one are errors naming\n"
	"the file (hosts the map lacks are not checked: a warning).\n",
	bwtest_exec,
	NULL
};

/* Names sbatch and srun take as they are: letters, digits and ._:,-+ */
static int
plain_word(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("._:,-+", *s)))
			return 0;
	return 1;
}

/* s in a comment line: a control byte cannot end the comment. */
static void
comment_text(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

/* s in single quotes for the shell. */
static void
sh_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

static int
check_word(const char *opt, const char *val)
{
	if (val && !plain_word(val)) {
		ctl_error("%s=%s: expected letters, digits and . _ : , - + only", opt, ctl_clip(val));
		return -1;
	}
	return 0;
}

/* 8G, 512M, 1048576: digits and at most one of K, M, G. */
static int
check_size(const char *val)
{
	const char *p = val;

	while (*p >= '0' && *p <= '9')
		p++;
	if (p == val || (*p && (strchr("KMG", *p) == NULL || p[1])) || val[0] == '0') {
		ctl_error("--max-bytes=%s: expected a size like 8G, 512M or 1048576", ctl_clip(val));
		return -1;
	}
	return 0;
}

/* The GPUs a run uses on node i. */
static long
run_gpus(const struct topo_map *m, long i, const struct bw_args *a)
{
	const struct topo_nodetype *t = topo_node_type(m, i);

	if (a->gpus > 0)
		return a->gpus;
	return t ? t->ngpus : 0;
}

static const char *
leaf_of(const struct topo_map *m, long i)
{
	const struct topo_node *n = &m->nodes[i];

	if (n->sw >= 0)
		return m->switches[n->sw].name;
	return n->block >= 0 ? m->blocks[n->block].name : "-";
}

static void
write_run(FILE *f, const struct topo_map *m, const struct topo_bwrun *r, const char *label,
	  const struct bw_args *a, long gpus)
{
	const char *cls = topo_link_name(r->cls);

	if (r->nnodes == 0) {
		fprintf(f, "\n# no %s run: ", label);
		comment_text(f, r->why);
		fputc('\n', f);
		return;
	}
	if (r->nnodes == 1)
		fprintf(f, "\n# %s: inside %s, its %ld GPUs (class %s)\n", label,
			m->nodes[r->node[0]].name, gpus, cls);
	else if (r->via >= 0)
		fprintf(f, "\n# %s: %s (%s) and %s (%s), joined at %s (class %s)\n", label,
			m->nodes[r->node[0]].name, ctl_clip(leaf_of(m, r->node[0])),
			m->nodes[r->node[1]].name, ctl_clip(leaf_of(m, r->node[1])),
			ctl_clip(m->switches[r->via].name), cls);
	else if (r->cls == TOPO_LINK_SPINE)
		fprintf(f, "\n# %s: %s (%s) and %s (%s), two blocks (class %s)\n", label,
			m->nodes[r->node[0]].name, ctl_clip(leaf_of(m, r->node[0])),
			m->nodes[r->node[1]].name, ctl_clip(leaf_of(m, r->node[1])), cls);
	else
		fprintf(f, "\n# %s: %s and %s, both under %s (class %s)\n", label,
			m->nodes[r->node[0]].name, m->nodes[r->node[1]].name,
			ctl_clip(leaf_of(m, r->node[0])), cls);
	fprintf(f, "srun --nodes=%d --ntasks-per-node=%ld --gpus-per-node=%ld --nodelist=%s%s%s",
		r->nnodes, gpus, gpus, m->nodes[r->node[0]].name, r->nnodes > 1 ? "," : "",
		r->nnodes > 1 ? m->nodes[r->node[1]].name : "");
	if (a->mpi)
		fprintf(f, " --mpi=%s", a->mpi);
	fprintf(f, " \\\n\t\"$NCCL_TESTS/all_reduce_perf\" -b 8 -e %s -f 2 -g 1 \\\n"
		"\t>\"$RESULTS/" BW_FILE_PREFIX "%s.txt\" 2>\"$RESULTS/" BW_FILE_PREFIX "%s.err\" "
		"|| failed=\"$failed %s\"\n", a->max_bytes, cls, cls, cls);
}

/* The nodes of --nodes as map indices (caller frees), or every node (NULL, *n 0). */
static int
candidates(const struct topo_map *m, const char *hostlist, long **out, long *n)
{
	struct hosts h = { 0, NULL };
	pl_err_t err;
	long k, *c = NULL;
	int rv = -1;

	*out = NULL;
	*n = 0;
	if (!hostlist)
		return 0;
	pl_err_clear(&err);
	if (hosts_expand(&h, hostlist, 1000000, &err) < 0) {
		ctl_error("--nodes=%s: %s", ctl_clip(hostlist), err.text);
		return -1;
	}
	c = calloc((size_t)h.n + 1, sizeof(*c));
	if (!c) {
		ctl_error("out of memory");
		goto out;
	}
	for (k = 0; k < h.n; k++) {
		c[k] = topo_find_node(m, h.names[k]);
		if (c[k] < 0) {
			ctl_error("--nodes: node '%s' is not in the map", ctl_clip(h.names[k]));
			goto out;
		}
	}
	if (h.n == 0) {
		ctl_error("--nodes=%s: no nodes", ctl_clip(hostlist));
		goto out;
	}
	*out = c;
	*n = h.n;
	c = NULL;
	rv = 0;
out:
	free(c);
	hosts_free(&h);
	return rv;
}

/* The map of --map, loaded and indexed; NULL after an error message. */
static struct topo_map *
load_map(const char *path)
{
	struct topo_map *m;
	pl_err_t err;

	pl_err_clear(&err);
	m = topo_load(path, &err);
	if (!m) {
		ctl_error("--map %s", err.text);
		return NULL;
	}
	if (topo_index(m, &err) < 0) {
		ctl_error("--map %s: %s", ctl_clip_path(path), err.text);
		topo_free(m);
		return NULL;
	}
	return m;
}

/* The job: its runs, the GPUs each uses per node, the nodes it allocates. */
struct bw_job {
	struct topo_bwrun runs[TOPO_BW_NRUNS];
	long gpus[TOPO_BW_NRUNS];
	long alloc[2 * TOPO_BW_NRUNS];
	long nalloc;
	long maxg;
};

/* The runs' GPUs and nodes; -1 after a message naming a node that has no
 * GPUs or a name sbatch cannot take. */
static int
size_job(const struct topo_map *m, const struct bw_args *a, struct bw_job *j)
{
	long k;
	int i, q;

	for (i = 0; i < TOPO_BW_NRUNS; i++) {
		j->gpus[i] = 0;
		for (q = 0; q < j->runs[i].nnodes; q++) {
			long n = j->runs[i].node[q], g = run_gpus(m, n, a);

			if (g <= 0) {
				ctl_error("bwtest: node '%s' has no GPUs in the map %s: give --gpus-per-node",
					  ctl_clip(m->nodes[n].name), ctl_clip_path(a->map));
				return -1;
			}
			if (!plain_word(m->nodes[n].name)) {
				ctl_error("bwtest: node '%s' has a name sbatch cannot take as it is",
					  ctl_clip(m->nodes[n].name));
				return -1;
			}
			j->gpus[i] = j->gpus[i] == 0 || g < j->gpus[i] ? g : j->gpus[i];
			j->maxg = g > j->maxg ? g : j->maxg;
			for (k = 0; k < j->nalloc && j->alloc[k] != n; k++)
				;
			if (k == j->nalloc)
				j->alloc[j->nalloc++] = n;
		}
	}
	return 0;
}

static void
write_body(FILE *f, const struct topo_map *m, const struct bw_args *a, const struct bw_job *j)
{
	static const char *const labels[TOPO_BW_NRUNS] = { "intra-node", "leaf", "spine" };
	long k;
	int i;

	fprintf(f, "#!/bin/bash\n"
		"# Measures the link classes of the cluster map '%s' with nccl-tests'\n"
		"# all_reduce_perf; written by '" CTL_PROG " bwtest'.  Submit with sbatch, then:\n"
		"#   " CTL_PROG " bwtest --import DIR --map MAP -o NEWMAP\n"
		"# (DIR: $RESULTS below; MAP: %s).  Each run writes\n"
		"# " BW_FILE_PREFIX "CLASS.txt there.\n", ctl_clip(m->name), ctl_clip_path(a->map));
	fprintf(f, "#SBATCH --job-name=pl-bwtest\n#SBATCH --nodes=%ld\n#SBATCH --nodelist=", j->nalloc);
	for (k = 0; k < j->nalloc; k++)
		fprintf(f, "%s%s", k ? "," : "", m->nodes[j->alloc[k]].name);
	fprintf(f, "\n#SBATCH --ntasks-per-node=%ld\n#SBATCH --gpus-per-node=%ld\n"
		"#SBATCH --exclusive\n#SBATCH --time=%s\n#SBATCH --output=pl-bwtest-%%j.log\n",
		j->maxg, j->maxg, a->time);
	if (a->partition)
		fprintf(f, "#SBATCH --partition=%s\n", a->partition);
	if (a->account)
		fprintf(f, "#SBATCH --account=%s\n", a->account);
	fprintf(f, "set -u\nNCCL_TESTS=${NCCL_TESTS:-");
	sh_quote(f, a->nccl_dir);
	fprintf(f, "}\nRESULTS=${RESULTS:-");
	sh_quote(f, a->results);
	fprintf(f, "}\nif [ ! -x \"$NCCL_TESTS/all_reduce_perf\" ]; then\n"
		"\techo \"pl-bwtest: $NCCL_TESTS/all_reduce_perf: not found (set NCCL_TESTS)\" >&2\n"
		"\texit 1\nfi\nmkdir -p \"$RESULTS\" || exit 1\nfailed=\n");
	for (i = 0; i < TOPO_BW_NRUNS; i++)
		write_run(f, m, &j->runs[i], labels[i], a, j->gpus[i]);
	/* A failed run does not stop the others; the job says which failed. */
	fprintf(f, "\nif [ -n \"$failed\" ]; then\n"
		"\techo \"pl-bwtest: failed:$failed (see $RESULTS/*.err)\" >&2\n\texit 1\nfi\n"
		"echo \"pl-bwtest: done; now: " CTL_PROG " bwtest --import $RESULTS --map \"");
	sh_quote(f, a->map);
	fprintf(f, "\" -o NEWMAP\"\n");
}

static int
write_script(const struct bw_args *a)
{
	struct bw_job j;
	struct topo_map *m = NULL;
	long *cand = NULL, ncand = 0;
	pl_err_t err;
	FILE *f = NULL;
	int rv = 1;

	memset(&j, 0, sizeof(j));
	pl_err_clear(&err);
	m = load_map(a->map);
	if (!m)
		return 1;
	if (candidates(m, a->nodes, &cand, &ncand) < 0)
		goto out;
	if (topo_bwtest_runs(m, cand, ncand, j.runs, &err) < 0) {
		ctl_error("bwtest: %s", err.text);
		goto out;
	}
	if (size_job(m, a, &j) < 0)
		goto out;
	f = a->out ? fopen(a->out, "w") : stdout;
	if (!f) {
		ctl_error("-o %s: %s", ctl_clip_path(a->out), strerror(errno));
		goto out;
	}
	write_body(f, m, a, &j);
	if (a->out ? fclose(f) != 0 : fflush(f) != 0) {
		f = NULL;
		ctl_error("-o %s: %s", a->out ? ctl_clip_path(a->out) : "-", strerror(errno));
		goto out;
	}
	f = NULL;
	rv = 0;
out:
	if (f && a->out)
		fclose(f);
	free(cand);
	topo_free(m);
	return rv;
}

/* Host h of an nccl-tests output as a map node: its name, or its name up
 * to the first dot (hostname may give the FQDN, Slurm the short name). */
static long
host_node(const struct topo_map *m, const char *h)
{
	char shrt[TOPO_NAME];
	long i = topo_find_node(m, h);

	if (i >= 0 || !strchr(h, '.'))
		return i;
	snprintf(shrt, sizeof(shrt), "%.*s", (int)(strchr(h, '.') - h), h);
	return topo_find_node(m, shrt);
}

static long
leaf_key(const struct topo_map *m, long i)
{
	const struct topo_node *n = &m->nodes[i];

	return n->sw >= 0 ? n->sw : n->block >= 0 ? m->nswitches + n->block : -1;
}

/*
 * A node-to-node file's first two hosts against the map: a leaf run's
 * share a leaf, a spine run's do not (a file saved under the other name
 * would set the wrong class).  Hosts the map does not know are not
 * checked (a warning).  0, or -1 after a message.
 */
static int
check_hosts(const struct topo_map *m, const char *path, enum topo_link cls,
	    const struct nccltests_result *r)
{
	long a, b;

	if (r->nnodes < 2 || (cls != TOPO_LINK_LEAF && cls != TOPO_LINK_SPINE))
		return 0;
	a = host_node(m, r->host[0]);
	b = host_node(m, r->host[1]);
	if (a < 0 || b < 0) {
		ctl_error("warning: --import: %s: its hosts %s and %s are not both in the map: not checked against its switches",
			  ctl_clip_path(path), ctl_clip(r->host[0]), ctl_clip(r->host[1]));
		return 0;
	}
	if (cls == TOPO_LINK_LEAF && leaf_key(m, a) != leaf_key(m, b)) {
		ctl_error("--import: %s: its hosts %s (%s) and %s (%s) are under different leaves: a spine run, not a leaf run",
			  ctl_clip_path(path), m->nodes[a].name, ctl_clip(leaf_of(m, a)), m->nodes[b].name,
			  ctl_clip(leaf_of(m, b)));
		return -1;
	}
	if (cls == TOPO_LINK_SPINE && leaf_key(m, a) == leaf_key(m, b)) {
		ctl_error("--import: %s: its hosts %s and %s are both under %s: a leaf run, not a spine run",
			  ctl_clip_path(path), m->nodes[a].name, m->nodes[b].name, ctl_clip(leaf_of(m, a)));
		return -1;
	}
	return 0;
}

/* One class file of --import: 1 read, 0 absent, -1 refused (after a message). */
static int
import_one(struct topo_map *m, const char *dir, enum topo_link cls)
{
	struct nccltests_result r;
	char path[4096];
	struct stat st;
	pl_err_t err;
	int intra = cls == TOPO_LINK_NVLINK || cls == TOPO_LINK_PCIE;

	pl_err_clear(&err);
	if ((size_t)snprintf(path, sizeof(path), "%s/" BW_FILE_PREFIX "%s.txt", dir,
			     topo_link_name(cls)) >= sizeof(path)) {
		ctl_error("--import %s: the path is too long", ctl_clip_path(dir));
		return -1;
	}
	if (stat(path, &st) < 0 && errno == ENOENT)
		return 0;
	if (topo_read_nccltests(&r, path, &err) < 0) {
		ctl_error("--import: %s", err.text);
		return -1;
	}
	if (intra && r.nnodes > 1) {
		ctl_error("--import: %s: ranks on %d hosts, but the %s class is measured inside one node",
			  ctl_clip_path(path), r.nnodes, topo_link_name(cls));
		return -1;
	}
	if (!intra && r.nnodes == 1) {
		ctl_error("--import: %s: every rank on one host, but the %s class is measured between two nodes",
			  ctl_clip_path(path), topo_link_name(cls));
		return -1;
	}
	if (check_hosts(m, path, cls, &r) < 0)
		return -1;
	if (topo_link_measured(m, cls, &r, path, &err) < 0) {
		ctl_error("--import: %s", err.text);
		return -1;
	}
	fprintf(stderr, CTL_PROG ": %-6s %8.1f GB/s measured (%s)\n", topo_link_name(cls),
		r.busbw_max, ctl_clip_path(path));
	return 1;
}

static int
import_results(const struct bw_args *a)
{
	struct topo_map *m = NULL;
	char missing[128] = "";
	struct stat st;
	int k, got = 0, rc, rv = 1;

	if (stat(a->import, &st) < 0) {
		ctl_error("--import %s: %s", ctl_clip_path(a->import), strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		ctl_error("--import %s: not a directory (give the directory the bwtest script wrote its results to)",
			  ctl_clip_path(a->import));
		return 1;
	}
	m = load_map(a->map);
	if (!m)
		return 1;
	for (k = 0; k < TOPO_NLINKS; k++) {
		rc = import_one(m, a->import, k);
		if (rc < 0)
			goto out;
		got += rc;
		/* pcie is only measured on nodes without NVLink: not missed. */
		if (rc == 0 && k != TOPO_LINK_PCIE && k != (int)TOPO_LINK_NVLINK)
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), " %s",
				 topo_link_name(k));
	}
	if (!got) {
		ctl_error("--import %s: no " BW_FILE_PREFIX "{nvlink,pcie,leaf,spine}.txt there (the names 'bwtest' scripts write)",
			  ctl_clip_path(a->import));
		goto out;
	}
	if (!m->link[TOPO_LINK_NVLINK].measured && !m->link[TOPO_LINK_PCIE].measured)
		snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), " intra-node");
	if (missing[0])
		ctl_error("warning: --import %s: not measured, left as they were:%s",
			  ctl_clip_path(a->import), missing);
	if (ctl_write_map(m, a->out) < 0)
		goto out;
	rv = 0;
out:
	topo_free(m);
	return rv;
}

static int
bwtest_exec(int argc, char **argv)
{
	struct bw_args a;
	char c[PL_CLIP_BUF];
	const char *script_opt = NULL;	/* an option of the script, for --import's refusal */
	int ch, li = 0;

	memset(&a, 0, sizeof(a));
	a.nccl_dir = "/opt/nccl-tests/build";
	a.results = "bwtest-results";
	a.time = "00:30:00";
	a.max_bytes = "8G";
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "o:", bw_opts, &li)) != -1) {
		if (ch > W_MAP && ch < W_IMPORT && ch != W_OUT)
			script_opt = bw_opts[li].name;
		switch (ch) {
		case W_MAP: a.map = optarg; break;
		case W_NODES: a.nodes = optarg; break;
		case 'o':
		case W_OUT: a.out = optarg; break;
		case W_NCCLDIR: a.nccl_dir = optarg; break;
		case W_RESULTS: a.results = optarg; break;
		case W_PARTITION: a.partition = optarg; break;
		case W_ACCOUNT: a.account = optarg; break;
		case W_TIME: a.time = optarg; break;
		case W_MAXBYTES: a.max_bytes = optarg; break;
		case W_MPI: a.mpi = optarg; break;
		case W_IMPORT: a.import = optarg; break;
		case W_GPUS:
			a.gpus = ctl_parse_count("--gpus-per-node", optarg, 4096);
			if (a.gpus < 0)
				return 2;
			break;
		case W_HELP:
			ctl_cmd_help(&ctl_cmd_bwtest, NULL);
			return 0;
		default:
			ctl_error("bwtest: unknown or incomplete option '%s' (see 'bwtest --help')",
				  pl_clip(argv[optind - 1], c, sizeof(c)));
			return 2;
		}
	}
	if (optind < argc) {
		ctl_error("bwtest: unexpected argument '%s'", pl_clip(argv[optind], c, sizeof(c)));
		return 2;
	}
	if (!a.map) {
		ctl_error("bwtest: give the cluster map with --map MAP (see 'bwtest --help')");
		return 2;
	}
	if (a.import && script_opt) {
		ctl_error("bwtest: --%s belongs to the script, not to --import (which takes --map and -o)",
			  script_opt);
		return 2;
	}
	if (a.import)
		return import_results(&a);
	if (!a.results[0] || !a.nccl_dir[0]) {
		ctl_error("bwtest: --results and --nccl-tests-dir take a directory");
		return 2;
	}
	if (check_word("--partition", a.partition) < 0 || check_word("--account", a.account) < 0 ||
	    check_word("--time", a.time) < 0 || check_word("--mpi", a.mpi) < 0 ||
	    check_size(a.max_bytes) < 0)
		return 2;
	return write_script(&a);
}
