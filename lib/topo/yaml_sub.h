/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small subset of YAML, enough for configuration files such as Slurm's
 * topology.yaml: block mappings and sequences nested by indentation with
 * spaces, "- " items, one-line flow sequences ([4, 16], [a, b]), plain and
 * quoted scalars, '#' comments and a leading "---".  Anything else (tabs,
 * flow mappings, anchors, aliases, tags, block scalars, several documents,
 * scalars over several lines) is refused with the line and what is
 * accepted, rather than read wrongly.
 */
#ifndef PL_YAML_SUB_H
#define PL_YAML_SUB_H

#include <stdbool.h>

#include "pl_err.h"

enum ysub_kind {
	YSUB_NULL,	/* a key or item with no value */
	YSUB_SCALAR,
	YSUB_MAP,
	YSUB_SEQ
};

struct ysub_node {
	enum ysub_kind kind;
	int line;			/* where the node starts (1-based) */
	char *key;			/* a mapping's value: its key; else NULL */
	char *text;			/* YSUB_SCALAR: the value, unquoted */
	bool quoted;			/* a scalar written in quotes */
	bool flow;			/* a sequence written [a, b] */
	long n;				/* YSUB_MAP: entries; YSUB_SEQ: items */
	struct ysub_node **kids;	/* in the order of the text */
};

/* The most a document may nest (mappings and sequences together). */
#define YSUB_MAX_DEPTH 32

/*
 * Parse text (label names it in messages) into a tree; caller frees with
 * ysub_free().  An empty document gives a YSUB_NULL node.  NULL with err
 * naming label:line and what is accepted on input outside the subset, a
 * key given twice in one mapping, bad indentation, or deeper nesting than
 * YSUB_MAX_DEPTH.
 */
struct ysub_node *ysub_parse(const char *text, const char *label, pl_err_t *err);
void ysub_free(struct ysub_node *n);

/* The value of key in mapping map, or NULL (also when map is no mapping). */
const struct ysub_node *ysub_get(const struct ysub_node *map, const char *key);

/* "nothing", "a scalar", "a mapping", "a sequence": for messages. */
const char *ysub_kind_name(enum ysub_kind k);

#endif
