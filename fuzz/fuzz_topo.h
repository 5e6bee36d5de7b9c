/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Checks the topology fuzz targets share (fuzz_topo.c). */
#ifndef PL_FUZZ_TOPO_H
#define PL_FUZZ_TOPO_H

#include "topo.h"

/* What topo.h promises of a node type a reader filled: GPUs sorted by
 * index, every GPU's NIC an index into nics[] or -1, names terminated. */
void fuzz_check_type(const struct topo_nodetype *t);

/* What topo.h promises of a map, and that the map file written for it
 * loads again (what layoutctl writes, layoutd must read). */
void fuzz_check_map(const struct topo_map *m);

/* A map a reader accepted: indexed (a refusal must say why), finished,
 * then fuzz_check_map(). */
void fuzz_check_read_map(struct topo_map *m);

/* A map of one node of type t (copied), then fuzz_check_map(); a type
 * topo_add_type() refuses (with a message) ends the check. */
void fuzz_check_type_in_map(const struct topo_nodetype *t);

#endif
