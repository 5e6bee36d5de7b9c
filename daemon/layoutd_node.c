/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The node check: this node, as hwloc sees it (live, or an XML export read
 * in a child process), against its entry in the map.  Differences are
 * sentences in the load's discrepancy list; /v1/health shows them.
 */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "hwloc_child.h"
#include "layoutd.h"

static void add_disc(struct ld_load *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
add_disc(struct ld_load *l, const char *fmt, ...)
{
	va_list ap;

	if (l->ndisc >= LD_MAX_DISCREPANCIES)
		return;
	va_start(ap, fmt);
	vsnprintf(l->disc[l->ndisc++], LD_DISCREPANCY_LEN, fmt, ap);
	va_end(ap);
}

static int
count_islands(const struct topo_nodetype *t)
{
	int i, j, n = 0;

	for (i = 0; i < t->ngpus; i++) {
		if (t->gpus[i].island < 0)
			continue;
		for (j = 0; j < i; j++)
			if (t->gpus[j].island == t->gpus[i].island)
				break;
		n += j == i;
	}
	return n;
}

/* Names of a's NICs that b lacks, comma-separated into buf. */
static void
nics_missing(const struct topo_nodetype *a, const struct topo_nodetype *b, char *buf,
	     size_t size)
{
	size_t o = 0;
	int i, j;

	buf[0] = '\0';
	for (i = 0; i < a->nnics; i++) {
		for (j = 0; j < b->nnics; j++)
			if (strcmp(a->nics[i].name, b->nics[j].name) == 0)
				break;
		if (j < b->nnics || o + strlen(a->nics[i].name) + 2 >= size)
			continue;
		o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? "," : "", a->nics[i].name);
	}
}

static void
compare_types(struct ld_load *l, const struct topo_nodetype *mt, const struct topo_nodetype *ht,
	      const char *src)
{
	int mi = count_islands(mt), hi = count_islands(ht);
	char miss[128], extra[128];

	if (mt->ngpus != ht->ngpus)
		add_disc(l, "GPUs: the map gives node %s (type %s) %d GPUs, %s finds %d%s",
			 l->conf.node_name, mt->name, mt->ngpus, src, ht->ngpus,
			 ht->ngpus < mt->ngpus ? " (a GPU is missing: fallen off the bus or driver not loaded?)" : "");
	else if (mi != hi)
		add_disc(l, "NVLink: the map gives node %s (type %s) %d NVLink islands, %s finds %d",
			 l->conf.node_name, mt->name, mi, src, hi);
	if (mt->nnics > 0 && ht->nnics > 0) {
		nics_missing(mt, ht, miss, sizeof(miss));
		nics_missing(ht, mt, extra, sizeof(extra));
		if (miss[0] || extra[0])
			add_disc(l, "NICs: node %s (type %s): %s%s%s%s%s (map %d, %s %d)",
				 l->conf.node_name, mt->name, miss[0] ? "missing here: " : "", miss,
				 miss[0] && extra[0] ? "; " : "", extra[0] ? "not in the map: " : "",
				 extra, mt->nnics, src, ht->nnics);
	}
}

void
ld_node_check(struct ld_load *l)
{
	const struct ld_conf *c = &l->conf;
	long i = topo_find_node(l->map, c->node_name);
	const struct topo_nodetype *mt = i >= 0 ? topo_node_type(l->map, i) : NULL;
	bool live = strcmp(c->hwloc_check, "live") == 0;
	struct topo_nodetype ht;
	char src[LD_PATH + 16];
	pl_err_t err;

	if (i < 0)
		add_disc(l, "node %s is not in the map %s (%ld nodes): placements that name it are refused",
			 c->node_name, l->map->name, l->map->nnodes);
	else if (!mt)
		add_disc(l, "node %s has no node type in the map %s", c->node_name, l->map->name);
	if (strcmp(c->hwloc_check, "no") == 0)
		return;
	snprintf(src, sizeof(src), "hwloc %s", live ? "(live)" : c->hwloc_check);
	memset(&ht, 0, sizeof(ht));
	pl_err_clear(&err);
	if (live ? topo_read_hwloc(&ht, NULL, &err) < 0 :
	    hwloc_read_isolated(&ht, c->hwloc_check, &err) < 0) {
		add_disc(l, "hwloc_check: %s", err.text);
		return;
	}
	if (mt)
		compare_types(l, mt, &ht, src);
	topo_nodetype_clear(&ht);
}
