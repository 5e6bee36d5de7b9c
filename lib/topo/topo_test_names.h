/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the topology readers' tests ask of a map by name: a node's leaf
 * switch and block, a switch's parent.  "-" for none; "(no node)" or
 * "(no switch)" when the map lacks the name.
 */
#ifndef PL_TOPO_TEST_NAMES_H
#define PL_TOPO_TEST_NAMES_H

#include "topo.h"

static inline const char *
leaf_of(const struct topo_map *m, const char *node)
{
	long i = topo_find_node(m, node);

	if (i < 0)
		return "(no node)";
	return m->nodes[i].sw >= 0 ? m->switches[m->nodes[i].sw].name : "-";
}

static inline const char *
parent_of(const struct topo_map *m, const char *sw)
{
	int i = topo_find_switch(m, sw);

	if (i < 0)
		return "(no switch)";
	return m->switches[i].parent >= 0 ? m->switches[m->switches[i].parent].name : "-";
}

static inline const char *
block_of(const struct topo_map *m, const char *node)
{
	long i = topo_find_node(m, node);

	if (i < 0)
		return "(no node)";
	return m->nodes[i].block >= 0 ? m->blocks[m->nodes[i].block].name : "-";
}

#endif
