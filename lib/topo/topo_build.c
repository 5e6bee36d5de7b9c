/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Assembling a cluster map (topo_build.h): node descriptions read and
 * merged, nodes from topology.conf, a hostlist and named node types, and
 * measured bandwidths from nccl-tests.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "hosts.h"
#include "hwloc_child.h"
#include "topo_build.h"

/* A hostlist given to the builder may name at most this many nodes. */
#define BUILD_HOSTS_LIMIT 1000000L

/* A node type of n GPUs and nothing else known: one NVLink island. */
static int
counted_type(struct topo_nodetype *t, long n, const char *opt, const char *src, pl_err_t *err)
{
	char c[PL_CLIP_BUF];
	long i;

	if (n <= 0 || n > 4096)
		return pl_err_set(err, "%s=%s: a GPU count must be 1..4096", opt,
				  pl_clip(src, c, sizeof(c)));
	t->gpus = calloc((size_t)n, sizeof(*t->gpus));
	if (!t->gpus)
		return pl_err_set(err, "out of memory");
	t->ngpus = (int)n;
	for (i = 0; i < n; i++) {
		t->gpus[i].index = (int)i;
		t->gpus[i].numa = -1;
		t->gpus[i].island = 0;
		t->gpus[i].nic = -1;
	}
	return 0;
}

/* Read one node description src into *t (zeroed here). */
static int
read_source(struct topo_nodetype *t, const char *src, const char *opt, pl_err_t *err)
{
	char c[PL_CLIP_BUF];
	const char *kind;
	pl_err_t sub;
	char *end = NULL;
	long n;
	int rc;

	pl_err_clear(&sub);
	memset(t, 0, sizeof(*t));
	n = strtol(src, &end, 10);
	if (end != src && *end == '\0')
		return counted_type(t, n, opt, src, err);
	pl_clip_path(src, c, sizeof(c));
	if (strcmp(src, "live") == 0)
		rc = topo_read_hwloc(t, NULL, &sub);
	else if (!(kind = topo_sniff(src)))
		return pl_err_set(err, "%s=%s: cannot read it, or not an hwloc XML, nvidia-smi topo -m, or NCCL topology file",
				  opt, c);
	else if (strcmp(kind, "hwloc") == 0)
		rc = hwloc_read_isolated(t, src, &sub);
	else if (strcmp(kind, "nvsmi") == 0)
		rc = topo_read_nvsmi(t, src, &sub);
	else if (strcmp(kind, "nccl-xml") == 0) {
		rc = topo_read_nccl_xml(t, src, &sub);
		/* Hand the same file to NCCL on the nodes (kept as given: the
		 * path must be valid there). */
		if (rc == 0 && strlen(src) >= sizeof(t->nccl_topo_file)) {
			topo_nodetype_clear(t);
			return pl_err_set(err, "%s=%s: the path is longer than %zu characters (it becomes the nodes' NCCL_TOPO_FILE)",
					  opt, c, sizeof(t->nccl_topo_file) - 1);
		}
		if (rc == 0)
			snprintf(t->nccl_topo_file, sizeof(t->nccl_topo_file), "%s", src);
	} else
		return pl_err_set(err, "%s=%s: this is %s input, not a node description (accepted: hwloc XML, nvidia-smi topo -m, NCCL topology XML, live, or a GPU count)",
				  opt, c, kind);
	if (rc < 0) {
		topo_nodetype_clear(t);
		return pl_err_set(err, "%s=%s: %s", opt, c, sub.text);
	}
	return 0;
}

/* Fill what *dst does not know from *src (same GPU indexes). */
static int
merge_type(struct topo_nodetype *dst, const struct topo_nodetype *src, pl_err_t *err)
{
	int i, k, nic_base = -1;

	if (dst->ngpus == 0) {
		char name[TOPO_NAME];

		memcpy(name, dst->name, sizeof(name));
		topo_nodetype_clear(dst);
		if (topo_nodetype_copy(dst, src, err) < 0)
			return -1;
		if (name[0])
			memcpy(dst->name, name, sizeof(name));
		return 0;
	}
	if (dst->nnics == 0 && src->nnics > 0) {
		dst->nics = calloc((size_t)src->nnics, sizeof(*dst->nics));
		if (!dst->nics)
			return pl_err_set(err, "out of memory");
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

int
topo_build_node(struct topo_nodetype *t, const char *list, const char *opt, pl_err_t *err)
{
	char c[PL_CLIP_BUF], host[256] = "", *copy = strdup(list), *save = NULL, *tok;
	int rv = -1;

	memset(t, 0, sizeof(*t));
	if (!copy)
		return pl_err_set(err, "out of memory");
	for (tok = strtok_r(copy, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
		struct topo_nodetype one;
		int bad;

		/* Say which machine "live" was: the one this runs on. */
		if (strcmp(tok, "live") == 0 && gethostname(host, sizeof(host) - 1) < 0)
			snprintf(host, sizeof(host), "?");
		if (read_source(&one, tok, opt, err) < 0)
			goto out;
		bad = merge_type(t, &one, err) < 0;
		topo_nodetype_clear(&one);
		if (bad)
			goto out;
	}
	if (t->ngpus == 0) {
		char ch[PL_CLIP_BUF];

		pl_err_set(err, "%s=%s: the node description has no GPUs%s%s%s", opt,
			   pl_clip(list, c, sizeof(c)), host[0] ? " (live: hwloc found none on host '" : "",
			   host[0] ? pl_clip(host, ch, sizeof(ch)) : "", host[0] ? "')" : "");
		goto out;
	}
	rv = 0;
out:
	if (rv < 0)
		topo_nodetype_clear(t);
	free(copy);
	return rv;
}

/* Add every node of hostlist hl the map lacks; set its type to ti (ti < 0:
 * leave the type alone). */
static int
add_hosts(struct topo_map *m, const char *hl, int ti, pl_err_t *err)
{
	struct hosts h = { 0, NULL };
	long i;
	int rv = -1;

	if (hosts_expand(&h, hl, BUILD_HOSTS_LIMIT, err) < 0)
		goto out;
	for (i = 0; i < h.n; i++) {
		long ni = topo_find_node(m, h.names[i]);

		if (ni < 0 && (ni = topo_add_node(m, h.names[i], err)) < 0)
			goto out;
		if (ti >= 0)
			m->nodes[ni].type = ti;
	}
	rv = 0;
out:
	hosts_free(&h);
	return rv;
}

/* NAME:HOSTLIST=SOURCE[+SOURCE]. */
static int
add_node_type(struct topo_map *m, const char *arg, pl_err_t *err)
{
	const char *colon = strchr(arg, ':'), *eq = colon ? strchr(colon, '=') : NULL;
	struct topo_nodetype t;
	char name[TOPO_NAME], c[PL_CLIP_BUF], *hl = NULL;
	pl_err_t sub;
	int ti, rv = -1;

	pl_err_clear(&sub);
	memset(&t, 0, sizeof(t));
	pl_clip(arg, c, sizeof(c));
	if (!colon || !eq || colon == arg || eq == colon + 1 || !eq[1])
		return pl_err_set(err, "--node-type=%s: expected NAME:HOSTLIST=SOURCE, e.g. a100:gpu[01-16]=a100.xml",
				  c);
	if ((size_t)(colon - arg) >= sizeof(name))
		return pl_err_set(err, "--node-type=%s: the type name is longer than %d characters",
				  c, TOPO_NAME - 1);
	memcpy(name, arg, (size_t)(colon - arg));
	name[colon - arg] = '\0';
	/* Two types of one name make a map that no reader accepts. */
	if (topo_find_type(m, name) >= 0) {
		char cn[PL_CLIP_BUF];

		return pl_err_set(err, "--node-type=%s: node type '%s' is given twice (accepted: one --node-type per name%s)",
				  c, pl_clip(name, cn, sizeof(cn)),
				  m->default_type >= 0 && strcmp(m->types[m->default_type].name, name) == 0 ?
				  "; 'default' is --node's" : "");
	}
	hl = strndup(colon + 1, (size_t)(eq - colon - 1));
	if (!hl) {
		pl_err_set(err, "out of memory");
		goto out;
	}
	if (topo_build_node(&t, eq + 1, "--node-type", err) < 0)
		goto out;
	memcpy(t.name, name, sizeof(name));
	ti = topo_add_type(m, &t, &sub);
	if (ti < 0 || add_hosts(m, hl, ti, &sub) < 0) {
		pl_err_set(err, "--node-type=%s: %s", c, sub.text);
		goto out;
	}
	rv = 0;
out:
	free(hl);
	topo_nodetype_clear(&t);
	return rv;
}

static int
import_nccltests(struct topo_map *m, const char *arg, pl_err_t *err)
{
	char path[PATH_MAX], c[PL_CLIP_BUF];
	const char *eq = strrchr(arg, '=');
	struct nccltests_result r;
	pl_err_t sub;
	int cls = -1, i;

	pl_err_clear(&sub);
	if ((eq ? (size_t)(eq - arg) : strlen(arg)) >= sizeof(path))
		return pl_err_set(err, "--nccl-tests=%s: the path is too long",
				  pl_clip(arg, c, sizeof(c)));
	snprintf(path, sizeof(path), "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
	if (eq)
		for (i = 0; i < TOPO_NLINKS; i++)
			if (strcmp(eq + 1, topo_link_name(i)) == 0)
				cls = i;
	if (eq && cls < 0) {
		char cc[PL_CLIP_BUF];

		return pl_err_set(err, "--nccl-tests=%s: unknown link class '%s' (accepted: nvlink, pcie, leaf, spine)",
				  pl_clip(arg, c, sizeof(c)), pl_clip(eq + 1, cc, sizeof(cc)));
	}
	pl_clip_path(path, c, sizeof(c));
	if (topo_read_nccltests(&r, path, &sub) < 0)
		return pl_err_set(err, "--nccl-tests=%s: %s", c, sub.text);
	/* Ranks on one host measured NVLink; several hosts measured the network. */
	if (cls < 0)
		cls = r.nnodes > 1 ? TOPO_LINK_LEAF : TOPO_LINK_NVLINK;
	if (topo_link_measured(m, cls, &r, path, &sub) < 0)
		return pl_err_set(err, "--nccl-tests=%s", sub.text);
	return 0;
}

/* --peer-port: "N" sets *fixed, "slurmd+K" sets *offset (else -1). */
static int
parse_peer_port(const char *arg, long *fixed, long *offset, pl_err_t *err)
{
	const char *p = arg;
	char c[PL_CLIP_BUF];
	bool slurmd = strncmp(arg, "slurmd+", 7) == 0;
	long v = 0;

	*fixed = *offset = -1;
	if (slurmd)
		p += 7;
	for (; *p >= '0' && *p <= '9' && v <= 65535; p++)
		v = v * 10 + (*p - '0');
	if (p == arg + (slurmd ? 7 : 0) || *p || v > 65535 || (!slurmd && v < 1) ||
	    (slurmd && v > 65534))
		return pl_err_set(err, "--peer-port=%s: expected a port from 1 to 65535, or slurmd+K (each node's slurmd port from --slurm-nodes plus K, 0 to 65534)",
				  pl_clip(arg, c, sizeof(c)));
	if (slurmd)
		*offset = v;
	else
		*fixed = v;
	return 0;
}

/* Up to this many unknown nodes are named in the message. */
#define BUILD_NAMED_UNKNOWN 4

/*
 * NodeAddr (and with offset >= 0 the slurmd Port + offset) from the
 * `scontrol show nodes` output at b->slurm_nodes, for the nodes of m it
 * lists; every listed node must be in m, and listed once.
 */
static int
apply_slurm_nodes(struct topo_map *m, const struct topo_build *b, long offset, pl_err_t *err)
{
	const char *path = strcmp(b->slurm_nodes, "-") == 0 ? "/dev/stdin" : b->slurm_nodes;
	long slurmd = b->slurmd_port > 0 ? b->slurmd_port : TOPO_BUILD_SLURMD_PORT;
	struct topo_slurm_node *recs = NULL;
	long *seen = NULL, n = 0, i, unknown = 0;
	char c[PL_CLIP_BUF], cn[PL_CLIP_BUF];
	struct buf names = BUF_INIT;
	pl_err_t sub;
	int rv = -1;

	pl_err_clear(&sub);
	pl_clip_path(b->slurm_nodes, c, sizeof(c));
	if (topo_read_slurm_nodes(path, b->slurm_nodes, &recs, &n, &sub) < 0) {
		pl_err_set(err, "--slurm-nodes=%s", sub.text);
		goto out;
	}
	seen = calloc((size_t)m->nnodes + 1, sizeof(*seen));
	if (!seen) {
		pl_err_set(err, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		long ni = topo_find_node(m, recs[i].name);

		if (ni < 0) {
			if (unknown++ < BUILD_NAMED_UNKNOWN)
				buf_printf(&names, "%s%s (line %ld)", unknown > 1 ? ", " : "",
					   pl_clip(recs[i].name, cn, sizeof(cn)), recs[i].line);
			continue;
		}
		if (seen[ni]) {
			pl_err_set(err, "--slurm-nodes=%s:%ld: node '%s' is listed twice (also at line %ld)",
				   c, recs[i].line, pl_clip(recs[i].name, cn, sizeof(cn)), seen[ni]);
			goto out;
		}
		seen[ni] = recs[i].line;
		if (recs[i].addr[0] && topo_set_node_addr(m, ni, recs[i].addr, &sub) < 0) {
			pl_err_set(err, "--slurm-nodes=%s:%ld: %s", c, recs[i].line, sub.text);
			goto out;
		}
		if (offset >= 0) {
			long port = (recs[i].port > 0 ? recs[i].port : slurmd) + offset;

			if (port > 65535) {
				pl_err_set(err, "--peer-port=slurmd+%ld: node '%s' has slurmd port %ld%s, and %ld is past 65535 (accepted: a sum from 1 to 65535)",
					   offset, pl_clip(recs[i].name, cn, sizeof(cn)),
					   port - offset, recs[i].port > 0 ? "" : " (SlurmdPort: no Port= on its line)",
					   port);
				goto out;
			}
			m->nodes[ni].peer_port = (int)port;
		}
	}
	if (unknown) {
		pl_err_set(err, "--slurm-nodes=%s: %ld node%s not in the map: %s%s (accepted: nodes of the map; add them with --nodes or the topology.conf)",
			   c, unknown, unknown > 1 ? "s are" : " is",
			   names.bad ? "?" : buf_str(&names),
			   unknown > BUILD_NAMED_UNKNOWN ? ", ..." : "");
		goto out;
	}
	rv = 0;
out:
	buf_free(&names);
	free(seen);
	free(recs);
	return rv;
}

/* --peer-port and --slurmd-port, checked before anything is read. */
static int
check_peer_args(const struct topo_build *b, long *fixed, long *offset, pl_err_t *err)
{
	*fixed = *offset = -1;
	if (b->peer_port && parse_peer_port(b->peer_port, fixed, offset, err) < 0)
		return -1;
	if (*offset >= 0 && !b->slurm_nodes)
		return pl_err_set(err, "--peer-port=slurmd+%ld: needs --slurm-nodes FILE (the slurmd ports come from it)",
				  *offset);
	if (b->slurmd_port < 0 || b->slurmd_port > 65535)
		return pl_err_set(err, "--slurmd-port=%ld: expected a port from 1 to 65535", b->slurmd_port);
	if (b->slurmd_port && *offset < 0)
		return pl_err_set(err, "--slurmd-port=%ld: only with --peer-port slurmd+K", b->slurmd_port);
	return 0;
}

/* --slurm-nodes and --peer-port on the finished map. */
static int
add_peers(struct topo_map *m, const struct topo_build *b, long fixed, long offset, pl_err_t *err)
{
	long i;

	if (b->slurm_nodes && apply_slurm_nodes(m, b, offset, err) < 0)
		return -1;
	for (i = 0; fixed > 0 && i < m->nnodes; i++)
		m->nodes[i].peer_port = (int)fixed;
	return 0;
}

/* The default type from --node (and --gpu-mem, --nccl-topo-file). */
static int
add_default_type(struct topo_map *m, const struct topo_build *b, pl_err_t *err)
{
	struct topo_nodetype t;
	char c[PL_CLIP_BUF];
	pl_err_t sub;
	int rv = -1;

	pl_err_clear(&sub);
	if (topo_build_node(&t, b->node, "--node", err) < 0)
		return -1;
	if (!t.name[0])
		snprintf(t.name, sizeof(t.name), "default");
	if (b->gpu_mem > 0)
		t.gpu_memory_gb = b->gpu_mem;
	if (b->nccl_topo_file) {
		if (strlen(b->nccl_topo_file) >= sizeof(t.nccl_topo_file)) {
			pl_err_set(err, "--nccl-topo-file=%s: longer than %zu characters",
				   pl_clip_path(b->nccl_topo_file, c, sizeof(c)),
				   sizeof(t.nccl_topo_file) - 1);
			goto out;
		}
		snprintf(t.nccl_topo_file, sizeof(t.nccl_topo_file), "%s", b->nccl_topo_file);
	}
	m->default_type = topo_add_type(m, &t, &sub);
	if (m->default_type < 0) {
		pl_err_set(err, "--node=%s: %s", pl_clip(b->node, c, sizeof(c)), sub.text);
		goto out;
	}
	rv = 0;
out:
	topo_nodetype_clear(&t);
	return rv;
}

/* Is the file at path a topology.yaml rather than a topology.conf? */
static bool
is_yaml(const char *path)
{
	const char *kind = topo_sniff(path), *dot = strrchr(path, '.');

	if (kind && strcmp(kind, "slurm-topology-yaml") == 0)
		return true;
	if (kind && strcmp(kind, "slurm-topology") == 0)
		return false;
	return dot && (strcmp(dot, ".yaml") == 0 || strcmp(dot, ".yml") == 0);
}

/*
 * --slurm-topology (and --slurm-topology-name) into m.  *flat says that a
 * topology.yaml's chosen topology is flat (it names no nodes).
 */
static int
read_slurm(struct topo_map *m, const struct topo_build *b, bool *flat, pl_err_t *err)
{
	struct topo_yaml_info info;
	char c[PL_CLIP_BUF], c2[PL_CLIP_BUF];
	pl_err_t sub;

	pl_err_clear(&sub);
	*flat = false;
	if (!is_yaml(b->slurm)) {
		if (b->slurm_name)
			return pl_err_set(err, "--slurm-topology-name=%s: only with a topology.yaml (%s is a topology.conf, which holds one topology)",
					  pl_clip(b->slurm_name, c, sizeof(c)), pl_clip_path(b->slurm, c2, sizeof(c2)));
		if (topo_read_slurm(m, b->slurm, b->blocks_nvlink, &sub) < 0)
			return pl_err_set(err, "--slurm-topology=%s", sub.text);
		return 0;
	}
	if (topo_read_slurm_yaml(m, b->slurm, b->slurm_name, b->blocks_nvlink, &info, &sub) < 0)
		return pl_err_set(err, "--slurm-topology=%s", sub.text);
	*flat = strcmp(info.kind, "flat") == 0;
	return 0;
}

struct topo_map *
topo_build_map(const struct topo_build *b, pl_err_t *err)
{
	bool flat = false;
	struct topo_map *m = NULL;
	char c[PL_CLIP_BUF];
	pl_err_t sub;
	long i, fixed, offset;

	pl_err_clear(&sub);
	if (b->name && strlen(b->name) >= sizeof(m->name)) {
		pl_err_set(err, "--name=%s: longer than %d characters (accepted: a name of 1 to %d characters)",
			   pl_clip(b->name, c, sizeof(c)), TOPO_NAME - 1, TOPO_NAME - 1);
		return NULL;
	}
	if (b->name && !b->name[0]) {
		pl_err_set(err, "--name is empty (accepted: a name of 1 to %d characters)",
			   TOPO_NAME - 1);
		return NULL;
	}
	if (b->ntypes < 0 || b->ntypes > TOPO_BUILD_MAX_TYPES || b->ntests < 0 ||
	    b->ntests > TOPO_BUILD_MAX_TESTS) {
		pl_err_set(err, "at most %d --node-type and %d --nccl-tests inputs",
			   TOPO_BUILD_MAX_TYPES, TOPO_BUILD_MAX_TESTS);
		return NULL;
	}
	if (check_peer_args(b, &fixed, &offset, err) < 0)
		return NULL;
	m = topo_new();
	if (!m) {
		pl_err_set(err, "out of memory");
		return NULL;
	}
	snprintf(m->name, sizeof(m->name), "%s", b->name ? b->name : "cluster");
	if (b->node && add_default_type(m, b, err) < 0)
		goto fail;
	if (b->slurm_name && !b->slurm) {
		pl_err_set(err, "--slurm-topology-name=%s: only with --slurm-topology topology.yaml",
			   pl_clip(b->slurm_name, c, sizeof(c)));
		goto fail;
	}
	if (b->slurm && read_slurm(m, b, &flat, err) < 0)
		goto fail;
	/* From here on topo_add_node() keeps the index: each name costs O(1). */
	if (topo_index(m, err) < 0)
		goto fail;
	if (b->nodes && add_hosts(m, b->nodes, -1, &sub) < 0) {
		pl_err_set(err, "--nodes=%s: %s", pl_clip(b->nodes, c, sizeof(c)), sub.text);
		goto fail;
	}
	for (i = 0; i < b->ntypes; i++)
		if (add_node_type(m, b->types[i], err) < 0)
			goto fail;
	for (i = 0; i < b->ntests; i++)
		if (import_nccltests(m, b->tests[i], err) < 0)
			goto fail;
	if (m->nnodes == 0) {
		pl_err_set(err, "the map has no nodes%s%s%s (accepted: a map of at least one node; name them with --nodes HOSTLIST or --node-type)",
			   b->slurm ? ": " : "", b->slurm ? pl_clip(b->slurm, c, sizeof(c)) : "",
			   !b->slurm ? "" : flat ? "'s topology is flat, and a flat topology names no nodes" :
			   " names none");
		goto fail;
	}
	for (i = 0; i < m->nnodes; i++)
		if (!topo_node_type(m, i)) {
			pl_err_set(err, "node '%s' has no node type: give --node SOURCE for all nodes or --node-type for it",
				   pl_clip(m->nodes[i].name, c, sizeof(c)));
			goto fail;
		}
	if (add_peers(m, b, fixed, offset, err) < 0)
		goto fail;
	return m;
fail:
	topo_free(m);
	return NULL;
}
