/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm topology.conf: the topology/tree plugin's switch lines and the
 * topology/block plugin's block lines, read into the map.
 *
 * Parents are resolved only after the whole file is read, because real files
 * name a switch in Switches= before (or without ever) defining its parent.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "hosts.h"
#include "topo.h"
#include "topo_ix.h"
#include "topo_util.h"

/* One Nodes= expression may name at most this many nodes. */
#define SLURM_HOSTS_LIMIT 1000000L
/* A topology.conf larger than this is not a topology.conf. */
#define SLURM_FILE_LIMIT (64L * 1024 * 1024)
#define SLURM_MAX_KEYS 16

enum ix_kind { IX_NODE, IX_SWITCH, IX_BLOCK };

/*
 * Name -> index for the map's nodes, switches or blocks while the file is
 * read (the map indexes only its nodes, and only once topo_index() ran;
 * its switch lookup is a linear scan).
 */
struct name_ix {
	const struct topo_map *m;
	enum ix_kind kind;
	struct topo_ix ix;
};

struct pair {
	const char *key;
	const char *val;
};

/* A switch defined by this file, in the order of the map's switches. */
struct swdef {
	int line;
	char *children;		/* the Switches= expression, or NULL */
};

struct reader {
	struct topo_map *m;
	const char *label;
	bool nvlink;
	pl_err_t *err;
	struct name_ix nodes, switches, blocks;
	int sw_base;		/* map index of the first switch defined here */
	struct swdef *defs;
	int ndefs;
	bool have_sizes;
	char clip[2][PL_CLIP_BUF];	/* inputs echoed in a message (rd_clip) */
	char label_buf[PL_CLIP_BUF];	/* the label, clipped */
};

/* Input text fit to echo (pl_clip) in slot 0 or 1 of the reader. */
static const char *
rd_clip(struct reader *r, int slot, const char *s)
{
	return pl_clip(s, r->clip[slot], sizeof(r->clip[slot]));
}

static const char *
ix_name(const void *ctx, long i)
{
	const struct name_ix *ix = ctx;

	switch (ix->kind) {
	case IX_NODE:
		return ix->m->nodes[i].name;
	case IX_SWITCH:
		return ix->m->switches[i].name;
	default:
		return ix->m->blocks[i].name;
	}
}

static long
ix_find(const struct name_ix *ix, const char *name)
{
	return topo_ix_find(&ix->ix, name, ix_name, ix);
}

/* Record that entry i of the map now exists. */
static int
ix_add(struct name_ix *ix, long i)
{
	return topo_ix_add(&ix->ix, i, ix_name, ix);
}

static int
ix_init(struct name_ix *ix, const struct topo_map *m, enum ix_kind kind, long n)
{
	long i;

	ix->m = m;
	ix->kind = kind;
	memset(&ix->ix, 0, sizeof(ix->ix));
	for (i = 0; i < n; i++)
		if (ix_add(ix, i) < 0)
			return -1;
	return 0;
}

static void
ix_free(struct name_ix *ix)
{
	topo_ix_free(&ix->ix);
}

static int
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/*
 * Split a line into key=value pairs, in place.  Like Slurm: blanks around
 * '=' are allowed and a value may be double-quoted.
 */
static int
split_pairs(struct reader *r, int line, char *p, struct pair *pairs, int *npairs)
{
	int n = 0;

	for (;;) {
		char *key, *keyend, *val;

		while (is_blank(*p))
			p++;
		if (!*p)
			break;
		key = p;
		while (*p && *p != '=' && !is_blank(*p))
			p++;
		keyend = p;
		while (is_blank(*p))
			p++;
		if (*p != '=') {
			*keyend = '\0';
			return pl_err_set(r->err, "%s:%d: expected key=value, found '%s'",
					  r->label, line, rd_clip(r, 0, key));
		}
		*keyend = '\0';
		p++;
		while (is_blank(*p))
			p++;
		if (*p == '"') {
			val = ++p;
			while (*p && *p != '"')
				p++;
			if (!*p)
				return pl_err_set(r->err, "%s:%d: %s=: unterminated quote",
						  r->label, line, key);
		} else {
			val = p;
			while (*p && !is_blank(*p))
				p++;
		}
		if (*p)
			*p++ = '\0';
		if (!*val || !*key)
			return pl_err_set(r->err, "%s:%d: '%s=%s': %s", r->label, line,
					  rd_clip(r, 0, key), rd_clip(r, 1, val), *key ? "empty value" : "empty key");
		if (n == SLURM_MAX_KEYS)
			return pl_err_set(r->err, "%s:%d: more than %d keys on one line",
					  r->label, line, SLURM_MAX_KEYS);
		pairs[n].key = key;
		pairs[n].val = val;
		n++;
	}
	*npairs = n;
	return 0;
}

/*
 * Check the keys after the first against the accepted set (a NULL-ended
 * list; the first entry is the line's own key).  Fills vals[] in the order
 * of the set.
 */
static int
match_keys(struct reader *r, int line, const struct pair *pairs, int npairs,
	   const char *const *accepted, const char **vals)
{
	int i, k;

	for (k = 0; accepted[k]; k++)
		vals[k] = NULL;
	for (i = 0; i < npairs; i++) {
		for (k = 0; accepted[k]; k++)
			if (strcasecmp(pairs[i].key, accepted[k]) == 0)
				break;
		if (!accepted[k]) {
			char set[160] = "";

			for (k = 0; accepted[k]; k++) {
				if (k > 0)
					strncat(set, ", ", sizeof(set) - strlen(set) - 1);
				strncat(set, accepted[k], sizeof(set) - strlen(set) - 1);
			}
			return pl_err_set(r->err, "%s:%d: %s=%s: unknown key '%s' "
					  "(accepted: %s)", r->label, line, accepted[0],
					  rd_clip(r, 0, pairs[0].val), rd_clip(r, 1, pairs[i].key), set);
		}
		if (vals[k])
			return pl_err_set(r->err, "%s:%d: %s=%s: key '%s' is given twice",
					  r->label, line, accepted[0], rd_clip(r, 0, pairs[0].val),
					  accepted[k]);
		vals[k] = pairs[i].val;
	}
	return 0;
}

/* A switch or block name is one short name, since Switches= lists are hostlists. */
static int
check_single_name(struct reader *r, int line, const char *key, const char *name)
{
	if (strpbrk(name, "[],"))
		return pl_err_set(r->err, "%s:%d: %s=%s: must be a single name "
				  "(no brackets or commas)", r->label, line, key, rd_clip(r, 0, name));
	if (strlen(name) >= TOPO_NAME)
		return pl_err_set(r->err, "%s:%d: %s=%s: name is longer than %d "
				  "characters", r->label, line, key, rd_clip(r, 0, name), TOPO_NAME - 1);
	return 0;
}

/* The index of a node, added to the map if it is new. */
static long
get_node(struct reader *r, int line, const char *name)
{
	pl_err_t sub;
	long i = ix_find(&r->nodes, name);

	if (i >= 0)
		return i;
	pl_err_clear(&sub);
	i = topo_add_node(r->m, name, &sub);
	if (i < 0)
		return pl_err_set(r->err, "%s:%d: %s", r->label, line, sub.text);
	if (ix_add(&r->nodes, i) < 0)
		return pl_err_set(r->err, "%s:%d: out of memory", r->label, line);
	return i;
}

/* Expand a Nodes= list and call back for each node. */
static int
each_node(struct reader *r, int line, const char *what, const char *expr,
	  int (*fn)(struct reader *, int, long, int), int arg)
{
	struct hosts h = { 0, NULL };
	pl_err_t sub;
	long i, n;
	int rv = -1;

	pl_err_clear(&sub);
	if (hosts_expand(&h, expr, SLURM_HOSTS_LIMIT, &sub) < 0) {
		pl_err_set(r->err, "%s:%d: %s: Nodes=: %s", r->label, line, what, sub.text);
		goto out;
	}
	for (i = 0; i < h.n; i++) {
		n = get_node(r, line, h.names[i]);
		if (n < 0 || fn(r, line, n, arg) < 0)
			goto out;
	}
	rv = 0;
out:
	hosts_free(&h);
	return rv;
}

static int
node_under_switch(struct reader *r, int line, long n, int sw)
{
	struct topo_node *node = &r->m->nodes[n];

	/* A node cabled to two leaves keeps both; a third is not modelled. */
	if (node->sw < 0)
		node->sw = sw;
	else if (node->sw != sw && node->sw2 < 0)
		node->sw2 = sw;
	return 0;
}

static int
node_in_block(struct reader *r, int line, long n, int b)
{
	struct topo_node *node = &r->m->nodes[n];

	if (node->block >= 0 && node->block != b)
		return pl_err_set(r->err, "%s:%d: BlockName=%s: node '%s' is already in "
				  "block '%s' (a node belongs to one block)", r->label,
				  line, r->m->blocks[b].name, node->name,
				  r->m->blocks[node->block].name);
	node->block = b;
	return 0;
}

static int
parse_linkspeed(struct reader *r, int line, const char *sw, const char *val,
		double *out)
{
	unsigned long long v = 0;
	const char *p;

	for (p = val; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (unsigned long long)(*p - '0');
		if (v > 4294967295ull)
			break;
	}
	if (*p || p == val)
		return pl_err_set(r->err, "%s:%d: SwitchName=%s: LinkSpeed '%s' is not "
				  "a whole number from 0 to 4294967295", r->label, line,
				  sw, rd_clip(r, 0, val));
	*out = (double)v;
	return 0;
}

static int
switch_line(struct reader *r, int line, const struct pair *pairs, int npairs)
{
	static const char *const keys[] = { "SwitchName", "Switches", "Nodes",
					    "LinkSpeed", NULL };
	const char *vals[5];
	const char *name = pairs[0].val;
	pl_err_t sub;
	struct swdef *d;
	double speed = 0;
	int sw;

	if (match_keys(r, line, pairs, npairs, keys, vals) < 0 ||
	    check_single_name(r, line, "SwitchName", name) < 0)
		return -1;
	/* Slurm refuses both of these too. */
	if (vals[1] && vals[2])
		return pl_err_set(r->err, "%s:%d: SwitchName=%s: has both Switches= and "
				  "Nodes= (a switch has either child switches or nodes)",
				  r->label, line, name);
	if (!vals[1] && !vals[2])
		return pl_err_set(r->err, "%s:%d: SwitchName=%s: has neither Switches= "
				  "nor Nodes=", r->label, line, name);
	if (vals[3] && parse_linkspeed(r, line, name, vals[3], &speed) < 0)
		return -1;
	sw = (int)ix_find(&r->switches, name);
	if (sw >= r->sw_base)
		return pl_err_set(r->err, "%s:%d: SwitchName=%s: switch is defined twice "
				  "(first at line %d)", r->label, line, name,
				  r->defs[sw - r->sw_base].line);
	if (sw >= 0)
		return pl_err_set(r->err, "%s:%d: SwitchName=%s: the map already has a "
				  "switch of that name", r->label, line, name);
	d = realloc(r->defs, (size_t)(r->ndefs + 1) * sizeof(*d));
	if (!d)
		return pl_err_set(r->err, "%s:%d: out of memory", r->label, line);
	r->defs = d;
	pl_err_clear(&sub);
	sw = topo_add_switch(r->m, name, -1, &sub);
	if (sw < 0)
		return pl_err_set(r->err, "%s:%d: %s", r->label, line, sub.text);
	r->m->switches[sw].gbps = speed;
	d = &r->defs[r->ndefs++];
	d->line = line;
	d->children = NULL;
	if (ix_add(&r->switches, sw) < 0)
		return pl_err_set(r->err, "%s:%d: out of memory", r->label, line);
	if (vals[1]) {
		d->children = strdup(vals[1]);
		if (!d->children)
			return pl_err_set(r->err, "%s:%d: out of memory", r->label, line);
	}
	if (vals[2]) {
		char what[TOPO_NAME + 16];

		snprintf(what, sizeof(what), "SwitchName=%s", name);
		return each_node(r, line, what, vals[2], node_under_switch, sw);
	}
	return 0;
}

static int
block_line(struct reader *r, int line, const struct pair *pairs, int npairs)
{
	static const char *const keys[] = { "BlockName", "Nodes", NULL };
	const char *vals[3];
	const char *name = pairs[0].val;
	pl_err_t sub;
	int b;

	if (match_keys(r, line, pairs, npairs, keys, vals) < 0 ||
	    check_single_name(r, line, "BlockName", name) < 0)
		return -1;
	if (ix_find(&r->blocks, name) >= 0)
		return pl_err_set(r->err, "%s:%d: BlockName=%s: block is defined twice",
				  r->label, line, name);
	pl_err_clear(&sub);
	b = topo_add_block(r->m, name, r->nvlink, &sub);
	if (b < 0)
		return pl_err_set(r->err, "%s:%d: %s", r->label, line, sub.text);
	if (ix_add(&r->blocks, b) < 0)
		return pl_err_set(r->err, "%s:%d: out of memory", r->label, line);
	if (vals[1]) {
		char what[TOPO_NAME + 16];

		snprintf(what, sizeof(what), "BlockName=%s", name);
		return each_node(r, line, what, vals[1], node_in_block, b);
	}
	return 0;
}

/* BlockSizes=4,8,16: checked, not stored (placement works from the blocks). */
static int
sizes_line(struct reader *r, int line, const struct pair *pairs, int npairs)
{
	const char *p = pairs[0].val;

	if (npairs > 1)
		return pl_err_set(r->err, "%s:%d: BlockSizes=%s: unknown key '%s' "
				  "(accepted: BlockSizes alone)", r->label, line, rd_clip(r, 0, p),
				  rd_clip(r, 1, pairs[1].key));
	if (r->have_sizes)
		return pl_err_set(r->err, "%s:%d: BlockSizes is given twice", r->label, line);
	r->have_sizes = true;
	for (;;) {
		unsigned long v = 0;
		const char *start = p;

		while (*p >= '0' && *p <= '9' && v < 100000000)
			v = v * 10 + (unsigned long)(*p++ - '0');
		if (p == start || v == 0 || (*p && *p != ','))
			return pl_err_set(r->err, "%s:%d: BlockSizes=%s: expected positive "
					  "whole numbers separated by commas, e.g. 4,8,16",
					  r->label, line, rd_clip(r, 0, pairs[0].val));
		if (!*p)
			break;
		p++;
	}
	return 0;
}

static int
parse_line(struct reader *r, int line, char *text)
{
	struct pair pairs[SLURM_MAX_KEYS];
	int npairs = 0;

	if (split_pairs(r, line, text, pairs, &npairs) < 0)
		return -1;
	if (npairs == 0)
		return 0;
	if (strcasecmp(pairs[0].key, "SwitchName") == 0)
		return switch_line(r, line, pairs, npairs);
	if (strcasecmp(pairs[0].key, "BlockName") == 0)
		return block_line(r, line, pairs, npairs);
	if (strcasecmp(pairs[0].key, "BlockSizes") == 0)
		return sizes_line(r, line, pairs, npairs);
	return pl_err_set(r->err, "%s:%d: unknown line '%s=%s' (accepted: lines "
			  "starting SwitchName=, BlockName= or BlockSizes=)", r->label,
			  line, rd_clip(r, 0, pairs[0].key), rd_clip(r, 1, pairs[0].val));
}

/* Set parents from the Switches= lists. */
static int
link_switches(struct reader *r)
{
	struct hosts h = { 0, NULL };
	pl_err_t sub;
	int k, rv = -1;
	long i;

	for (k = 0; k < r->ndefs; k++) {
		int sw = r->sw_base + k, line = r->defs[k].line;
		const char *name = r->m->switches[sw].name;

		if (!r->defs[k].children)
			continue;
		hosts_free(&h);
		pl_err_clear(&sub);
		if (hosts_expand(&h, r->defs[k].children, SLURM_HOSTS_LIMIT, &sub) < 0) {
			pl_err_set(r->err, "%s:%d: SwitchName=%s: Switches=: %s", r->label,
				   line, name, sub.text);
			goto out;
		}
		for (i = 0; i < h.n; i++) {
			int c = (int)ix_find(&r->switches, h.names[i]);
			struct topo_switch *child;

			if (c < 0) {
				pl_err_set(r->err, "%s:%d: SwitchName=%s: Switches= names "
					   "'%s', which no SwitchName= line defines",
					   r->label, line, name, rd_clip(r, 0, h.names[i]));
				goto out;
			}
			if (c == sw) {
				pl_err_set(r->err, "%s:%d: SwitchName=%s: lists itself in "
					   "Switches=", r->label, line, name);
				goto out;
			}
			child = &r->m->switches[c];
			if (child->parent >= 0 && child->parent != sw) {
				int p = child->parent;
				char where[32] = "already in the map";

				if (p >= r->sw_base)
					snprintf(where, sizeof(where), "line %d",
						 r->defs[p - r->sw_base].line);
				pl_err_set(r->err, "%s:%d: switch '%s' is listed under both "
					   "'%s' (%s) and '%s' (line %d); a switch has "
					   "one parent", r->label, line, child->name,
					   r->m->switches[p].name, where, name, line);
				goto out;
			}
			child->parent = sw;
		}
	}
	rv = 0;
out:
	hosts_free(&h);
	return rv;
}

/*
 * Describe the cycle through switch j top-down ("a -> b -> a": a lists b in
 * Switches=), starting at its lowest index so the message is stable.
 */
static void
describe_cycle(const struct topo_switch *s, int j, char *out, size_t size)
{
	int k = j, start = j, len = 0, i;
	int ring[64];

	do {
		if (k < start)
			start = k;
		k = s[k].parent;
	} while (k != j);
	k = start;
	do {
		if (len < 64)
			ring[len++] = k;
		k = s[k].parent;
	} while (k != start);
	out[0] = '\0';
	/* Walking up gives parents after children; print the other way. */
	strncat(out, s[start].name, size - strlen(out) - 1);
	for (i = len - 1; i >= 0; i--) {
		strncat(out, " -> ", size - strlen(out) - 1);
		strncat(out, s[ring[i]].name, size - strlen(out) - 1);
	}
}

/* Refuse a cycle of parents, naming its switches. */
static int
check_cycles(struct reader *r)
{
	const struct topo_switch *s = r->m->switches;
	int n = r->m->nswitches, i, j;
	char *state = calloc((size_t)n + 1, 1);
	int rv = -1;

	if (!state)
		return pl_err_set(r->err, "%s: out of memory", r->label);
	for (i = 0; i < n; i++) {
		/* 1 = on the current walk up, 2 = known to reach a root. */
		for (j = i; j >= 0 && j < n && state[j] == 0; j = s[j].parent)
			state[j] = 1;
		if (j >= 0 && j < n && state[j] == 1) {
			char path[256];

			describe_cycle(s, j, path, sizeof(path));
			pl_err_set(r->err, "%s: switches form a cycle: %s (each lists the "
				   "next in Switches=; a tree needs a root)", r->label, path);
			goto out;
		}
		for (j = i; j >= 0 && j < n && state[j] == 1; j = s[j].parent)
			state[j] = 2;
	}
	rv = 0;
out:
	free(state);
	return rv;
}

/*
 * Cut the text into logical lines (comments stripped, trailing '\'
 * continuing a line) and parse each.
 */
static int
parse_text(struct reader *r, const char *text)
{
	struct buf b = BUF_INIT;
	const char *p = text;
	int lineno = 0, first = 0, rv = -1;

	while (*p) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p);
		const char *hash = memchr(p, '#', (size_t)(end - p));
		size_t n;
		int more;

		lineno++;
		if (b.len == 0)
			first = lineno;
		if (hash)
			end = hash;
		while (end > p && is_blank(end[-1]))
			end--;
		more = end > p && end[-1] == '\\' && !hash;
		if (more)
			end--;
		n = (size_t)(end - p);
		if (buf_add(&b, p, n) < 0 || buf_add(&b, " ", 1) < 0) {
			pl_err_set(r->err, "%s: out of memory", r->label);
			goto out;
		}
		p = eol ? eol + 1 : end + strlen(end);
		if (more && *p)
			continue;
		if (parse_line(r, first, b.s) < 0)
			goto out;
		/* The next logical line reuses the buffer. */
		b.len = 0;
		b.s[0] = '\0';
	}
	rv = 0;
out:
	buf_free(&b);
	return rv;
}

/*
 * Read topology.conf text into m; label names it in messages.  Switches and
 * blocks are appended, nodes found by name or appended, then the node index
 * is rebuilt and switch levels set.  On error (err names label:line) m may
 * hold part of the file: the caller should discard it.
 */
int
topo_read_slurm_text(struct topo_map *m, const char *text, const char *label,
		     bool blocks_nvlink, pl_err_t *err)
{
	struct reader r;
	int k, rv = -1;

	memset(&r, 0, sizeof(r));
	r.m = m;
	r.label = pl_clip_path(label ? label : "topology.conf", r.label_buf, sizeof(r.label_buf));
	r.nvlink = blocks_nvlink;
	r.err = err;
	r.sw_base = m->nswitches;
	if (ix_init(&r.nodes, m, IX_NODE, m->nnodes) < 0 ||
	    ix_init(&r.switches, m, IX_SWITCH, m->nswitches) < 0 ||
	    ix_init(&r.blocks, m, IX_BLOCK, m->nblocks) < 0) {
		pl_err_set(err, "%s: out of memory", r.label);
		goto out;
	}
	if (parse_text(&r, text ? text : "") < 0 || link_switches(&r) < 0 ||
	    check_cycles(&r) < 0 || topo_index(m, err) < 0)
		goto out;
	topo_finish(m);
	rv = 0;
out:
	for (k = 0; k < r.ndefs; k++)
		free(r.defs[k].children);
	free(r.defs);
	ix_free(&r.nodes);
	ix_free(&r.switches);
	ix_free(&r.blocks);
	return rv;
}

/* topo_read_slurm_text() on the contents of the file at path. */
int
topo_read_slurm(struct topo_map *m, const char *path, bool blocks_nvlink,
		pl_err_t *err)
{
	char *text = topo_util_read_text(path, NULL, SLURM_FILE_LIMIT, "a topology.conf", err);
	int rv;

	if (!text)
		return -1;
	rv = topo_read_slurm_text(m, text, path, blocks_nvlink, err);
	free(text);
	return rv;
}

/* ---- `scontrol show nodes` output: each node's NodeAddr and Port ---- */

/* Larger than this is not a node listing (100,000 nodes are ~70 MB with -o). */
#define SLURM_NODES_FILE_LIMIT (256L * 1024 * 1024)

struct nodes_reader {
	const char *label;
	pl_err_t *err;
	struct topo_slurm_node *recs;
	long n, cap;
	bool rest_is_text;	/* past a free-text field of the current record */
	bool have_addr, have_port;
	char clip[PL_CLIP_BUF];
};

/* Is the key of a field whose value is free text (blanks and '=' may
 * follow in it)?  scontrol prints NodeName, NodeAddr and Port before all
 * of them, so the rest of the record is never read as fields. */
static bool
free_text_key(const char *key, size_t len)
{
	static const char *const keys[] = { "OS", "Reason", "Comment", "Extra", NULL };
	int k;

	for (k = 0; keys[k]; k++)
		if (strlen(keys[k]) == len && strncmp(key, keys[k], len) == 0)
			return true;
	return false;
}

/* One blank-separated word key=value of a record (val points past '='). */
static int
nodes_field(struct nodes_reader *r, long line, const char *key, size_t klen, const char *val,
	    size_t vlen)
{
	struct topo_slurm_node *rec = &r->recs[r->n - 1];
	char tmp[TOPO_ADDR_MAX + 1], c[PL_CLIP_BUF];
	pl_err_t sub;
	long port = 0;
	size_t i;

	if (klen == 8 && strncmp(key, "NodeAddr", 8) == 0 && !r->have_addr) {
		r->have_addr = true;
		if (vlen > TOPO_ADDR_MAX)
			return pl_err_set(r->err, "%s:%ld: node '%s': NodeAddr is longer than %d bytes (accepted: a host name or an IP address)",
					  r->label, line, pl_clip(rec->name, c, sizeof(c)), TOPO_ADDR_MAX);
		memcpy(tmp, val, vlen);
		tmp[vlen] = '\0';
		pl_err_clear(&sub);
		if (topo_addr_check(tmp, &sub) < 0)
			return pl_err_set(r->err, "%s:%ld: node '%s': NodeAddr: %s", r->label, line,
					  pl_clip(rec->name, c, sizeof(c)), sub.text);
		memcpy(rec->addr, tmp, vlen + 1);
	} else if (klen == 4 && strncmp(key, "Port", 4) == 0 && !r->have_port) {
		r->have_port = true;
		for (i = 0; i < vlen && i < 6 && val[i] >= '0' && val[i] <= '9'; i++)
			port = port * 10 + (val[i] - '0');
		if (vlen == 0 || i != vlen || port < 1 || port > 65535) {
			snprintf(tmp, sizeof(tmp), "%.*s", (int)(vlen < 64 ? vlen : 64), val);
			return pl_err_set(r->err, "%s:%ld: node '%s': Port=%s is not a port (accepted: 1 to 65535)",
					  r->label, line, pl_clip(rec->name, c, sizeof(c)),
					  pl_clip(tmp, r->clip, sizeof(r->clip)));
		}
		rec->port = port;
	}
	return 0;
}

/* A new record from the line that begins with NodeName=NAME. */
static int
nodes_begin(struct nodes_reader *r, long line, const char *name, size_t len)
{
	char tmp[TOPO_NAME + 1];

	if (len == 0)
		return pl_err_set(r->err, "%s:%ld: NodeName= is empty", r->label, line);
	if (len >= TOPO_NAME) {
		snprintf(tmp, sizeof(tmp), "%.*s", TOPO_NAME, name);
		return pl_err_set(r->err, "%s:%ld: NodeName=%s...: longer than %d characters (accepted: the names a map holds)",
				  r->label, line, pl_clip(tmp, r->clip, sizeof(r->clip)), TOPO_NAME - 1);
	}
	if (r->n == r->cap) {
		long cap = r->cap ? r->cap * 2 : 64;
		struct topo_slurm_node *p = realloc(r->recs, (size_t)cap * sizeof(*p));

		if (!p)
			return pl_err_set(r->err, "%s: out of memory", r->label);
		r->recs = p;
		r->cap = cap;
	}
	memset(&r->recs[r->n], 0, sizeof(r->recs[r->n]));
	memcpy(r->recs[r->n].name, name, len);
	r->recs[r->n].line = line;
	r->n++;
	r->rest_is_text = r->have_addr = r->have_port = false;
	return 0;
}

/* The words of one line of the current record (from p to end). */
static int
nodes_line(struct nodes_reader *r, long line, const char *p, const char *end)
{
	while (p < end && !r->rest_is_text) {
		const char *w, *eq;

		while (p < end && is_blank(*p))
			p++;
		w = p;
		while (p < end && !is_blank(*p))
			p++;
		if (w == p)
			break;
		eq = memchr(w, '=', (size_t)(p - w));
		/* A word without '=' belongs to the value before it (OS=Linux 6.1 #1 SMP). */
		if (!eq || eq == w)
			continue;
		if (free_text_key(w, (size_t)(eq - w)))
			r->rest_is_text = true;
		else if (nodes_field(r, line, w, (size_t)(eq - w), eq + 1, (size_t)(p - eq - 1)) < 0)
			return -1;
	}
	return 0;
}

int
topo_read_slurm_nodes_text(const char *text, const char *label, struct topo_slurm_node **out,
			   long *nout, pl_err_t *err)
{
	struct nodes_reader r;
	const char *p = text ? text : "", *eol, *q;
	char lbuf[PL_CLIP_BUF];
	bool in_record = false;
	long line = 0;

	memset(&r, 0, sizeof(r));
	r.label = pl_clip(label ? label : "scontrol show nodes", lbuf, sizeof(lbuf));
	r.err = err;
	*out = NULL;
	*nout = 0;
	for (; *p; p = *eol ? eol + 1 : eol) {
		eol = strchr(p, '\n');
		if (!eol)
			eol = p + strlen(p);
		line++;
		for (q = p; q < eol && is_blank(*q); q++)
			;
		if (q == eol) {
			in_record = false;	/* records of the long form end so */
		} else if (q > p) {
			/* The long form's continuation lines are indented. */
			if (!in_record) {
				pl_err_set(err, "%s:%ld: an indented line outside a node's record (accepted: `scontrol show nodes` output, records starting with NodeName=)",
					   r.label, line);
				goto fail;
			}
			if (nodes_line(&r, line, q, eol) < 0)
				goto fail;
		} else if ((size_t)(eol - p) >= 9 && strncmp(p, "NodeName=", 9) == 0) {
			for (q = p + 9; q < eol && !is_blank(*q); q++)
				;
			if (nodes_begin(&r, line, p + 9, (size_t)(q - p - 9)) < 0 ||
			    nodes_line(&r, line, q, eol) < 0)
				goto fail;
			in_record = true;
		} else {
			char word[65];

			for (q = p; q < eol && !is_blank(*q) && q - p < 64; q++)
				;
			snprintf(word, sizeof(word), "%.*s", (int)(q - p), p);
			pl_err_set(err, "%s:%ld: '%s' does not start a node's record (accepted: `scontrol show nodes -o` output, one NodeName=... line per node)",
				   r.label, line, pl_clip(word, r.clip, sizeof(r.clip)));
			goto fail;
		}
	}
	if (r.n == 0) {
		pl_err_set(err, "%s: names no node (accepted: `scontrol show nodes -o` output, one NodeName=... line per node)",
			   r.label);
		goto fail;
	}
	*out = r.recs;
	*nout = r.n;
	return 0;
fail:
	free(r.recs);
	return -1;
}

int
topo_read_slurm_nodes(const char *path, const char *label, struct topo_slurm_node **out, long *n,
		      pl_err_t *err)
{
	char *text, c[PL_CLIP_BUF];
	int rv;

	*out = NULL;
	*n = 0;
	pl_clip_path(label ? label : path, c, sizeof(c));
	text = topo_util_read_text(path, c, SLURM_NODES_FILE_LIMIT, "`scontrol show nodes` output",
				   err);
	if (!text)
		return -1;
	rv = topo_read_slurm_nodes_text(text, c, out, n, err);
	free(text);
	return rv;
}
