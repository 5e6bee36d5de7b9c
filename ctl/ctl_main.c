/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutctl lives beside layoutd: it is the admin's and the user's tool for
 * the same maps and placements the daemon serves, and it queries a running
 * layoutd with the plugin's own client code (status, topology, query).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

void
ctl_error(const char *fmt, ...)
{
	va_list ap;

	fputs(CTL_PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static char clip_ring[4][PL_CLIP_BUF];
static unsigned clip_next;

const char *
ctl_clip(const char *s)
{
	clip_next = (clip_next + 1) % 4;
	return pl_clip(s, clip_ring[clip_next], sizeof(clip_ring[clip_next]));
}

const char *
ctl_clip_path(const char *path)
{
	clip_next = (clip_next + 1) % 4;
	return pl_clip_path(path, clip_ring[clip_next], sizeof(clip_ring[clip_next]));
}

const char *
ctl_bytes(double b, char *buf, size_t size)
{
	if (b >= 1e9)
		snprintf(buf, size, "%.2f GB", b / 1e9);
	else if (b >= 1e6)
		snprintf(buf, size, "%.2f MB", b / 1e6);
	else
		snprintf(buf, size, "%.0f B", b);
	return buf;
}

long
ctl_parse_count(const char *opt, const char *val, long max)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || end == val || *end != '\0' || v <= 0 || v > max) {
		ctl_error("%s=%s: expected a whole number from 1 to %ld", opt, ctl_clip(val), max);
		return -1;
	}
	return v;
}

struct topo_map *
ctl_load_topology(const char *path, long gpus_per_node)
{
	const char *kind = topo_sniff(path);
	struct topo_map *m = NULL;
	struct topo_yaml_info info;
	bool yaml;
	int rc = -1;
	pl_err_t err;

	pl_err_clear(&err);
	if (!kind) {
		FILE *f = fopen(path, "r");

		if (!f)
			ctl_error("--topology %s: %s", ctl_clip_path(path), strerror(errno));
		else {
			fclose(f);
			ctl_error("--topology %s: not a cluster map (layoutctl topo build) nor a Slurm topology.conf or topology.yaml",
				  ctl_clip_path(path));
		}
		return NULL;
	}
	if (strcmp(kind, "map") == 0) {
		m = topo_load(path, &err);
		if (!m)
			ctl_error("--topology %s", err.text);
		return m;
	}
	yaml = strcmp(kind, "slurm-topology-yaml") == 0;
	if (strcmp(kind, "slurm-topology") != 0 && !yaml) {
		ctl_error("--topology %s: this is %s input; build a map from it with '" CTL_PROG " topo build'",
			  ctl_clip_path(path), kind);
		return NULL;
	}
	if (gpus_per_node <= 0) {
		ctl_error("--topology %s is a Slurm %s: give --gpus-per-node G too",
			  ctl_clip_path(path), yaml ? "topology.yaml" : "topology.conf");
		return NULL;
	}
	/* A topology.yaml gives its cluster_default topology, as Slurm does. */
	m = topo_make_uniform(NULL, 0, (int)gpus_per_node, &err);
	memset(&info, 0, sizeof(info));
	if (m)
		rc = yaml ? topo_read_slurm_yaml(m, path, NULL, true, &info, &err) :
			    topo_read_slurm(m, path, true, &err);
	if (!m || rc < 0) {
		ctl_error("%s", err.text);
		topo_free(m);
		return NULL;
	}
	if (yaml && strcmp(info.kind, "flat") == 0) {
		char name[PL_CLIP_BUF];

		ctl_error("--topology %s: its default topology '%s' is flat, and a flat topology names no nodes: build a map with '" CTL_PROG " topo build --slurm-topology %s --nodes HOSTLIST' (or --slurm-topology-name for another of its topologies)",
			  ctl_clip_path(path), pl_clip(info.topology, name, sizeof(name)),
			  ctl_clip_path(path));
		topo_free(m);
		return NULL;
	}
	snprintf(m->name, sizeof(m->name), "%s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	return m;
}

/* Natural name order, as Slurm lists nodes when slurm.conf names them in
 * order (node2 < node10). */
static int
natural_cmp(const void *a, const void *b)
{
	return hosts_natural_cmp(*(const char *const *)a, *(const char *const *)b);
}

int
ctl_step_nodes(const struct topo_map *m, const char *hostlist, long tasks_per_node,
	       struct hosts *names, struct place_node **nodes, long *nnodes)
{
	struct place_node *pn = NULL;
	pl_err_t err;
	long i;

	pl_err_clear(&err);
	memset(names, 0, sizeof(*names));
	if (hostlist) {
		if (hosts_expand(names, hostlist, 1000000, &err) < 0) {
			ctl_error("--nodes=%s: %s", ctl_clip(hostlist), err.text);
			return -1;
		}
	} else {
		names->names = calloc((size_t)m->nnodes + 1, sizeof(*names->names));
		if (!names->names) {
			ctl_error("out of memory");
			return -1;
		}
		for (i = 0; i < m->nnodes; i++) {
			names->names[i] = strdup(m->nodes[i].name);
			if (!names->names[i]) {
				ctl_error("out of memory");
				hosts_free(names);
				return -1;
			}
			names->n++;
		}
		qsort(names->names, (size_t)names->n, sizeof(*names->names), natural_cmp);
	}
	if (names->n == 0) {
		ctl_error("the step has no nodes");
		goto fail;
	}
	pn = calloc((size_t)names->n, sizeof(*pn));
	if (!pn) {
		ctl_error("out of memory");
		goto fail;
	}
	for (i = 0; i < names->n; i++) {
		long mi = topo_find_node(m, names->names[i]);
		const struct topo_nodetype *t = mi >= 0 ? topo_node_type(m, mi) : NULL;

		if (!t) {
			ctl_error("--nodes: node '%s' is not in the topology map (%ld nodes)",
				  ctl_clip(names->names[i]), m->nnodes);
			goto fail;
		}
		pn[i].name = names->names[i];
		pn[i].ntasks = tasks_per_node > 0 ? tasks_per_node : t->ngpus;
		pn[i].tids = NULL;
	}
	*nodes = pn;
	*nnodes = names->n;
	return 0;
fail:
	free(pn);
	hosts_free(names);
	return -1;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		ctl_usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		ctl_usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf(CTL_PROG " " PL_BUILD "\n");
		return 0;
	}
	return ctl_run(argc - 1, argv + 1);
}
