/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm's topology.yaml (Slurm 25.05 and later): a list of named
 * topologies, each a tree (switches), a block topology (blocks and block
 * sizes) or flat.  One of them is chosen and turned into the topology.conf
 * lines that say the same, each placed on the line number of the YAML that
 * gave it, so topo_read_slurm_text() fills the map (one code path for what
 * the switches and blocks mean) and its messages name the YAML file:line.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "topo.h"
#include "topo_util.h"
#include "yaml_sub.h"

/* A topology.yaml larger than this is not a topology.yaml (as topology.conf). */
#define YAML_FILE_LIMIT (64L * 1024 * 1024)

/* One topology.conf line and the YAML line it comes from. */
struct cline {
	int line;
	char *text;
};

struct conv {
	const char *label;
	const char *topo;	/* the topology being read, for messages */
	pl_err_t *err;
	struct cline *lines;
	long n, cap;
	char clip[2][PL_CLIP_BUF];
	char label_buf[PL_CLIP_BUF];
};

/* Input text fit to echo (pl_clip) in slot 0 or 1. */
static const char *
cv_clip(struct conv *c, int slot, const char *s)
{
	return pl_clip(s, c->clip[slot], sizeof(c->clip[slot]));
}

/* Free the topology.conf lines gathered so far. */
static void
lines_free(struct conv *c)
{
	long i;

	for (i = 0; i < c->n; i++)
		free(c->lines[i].text);
	free(c->lines);
	c->lines = NULL;
	c->n = c->cap = 0;
}

/* Add the topology.conf line text for YAML line `line`. */
static int
emit(struct conv *c, int line, struct buf *b)
{
	char *text = buf_take(b);

	if (!text)
		return pl_err_set(c->err, "%s: out of memory", c->label);
	if (c->n == c->cap) {
		long cap = c->cap ? 2 * c->cap : 32;
		struct cline *l = realloc(c->lines, (size_t)cap * sizeof(*l));

		if (!l) {
			free(text);
			return pl_err_set(c->err, "%s: out of memory", c->label);
		}
		c->lines = l;
		c->cap = cap;
	}
	c->lines[c->n].line = line;
	c->lines[c->n].text = text;
	c->n++;
	return 0;
}

/* Refuse a key of map outside accepted (NULL-ended), naming where. */
static int
check_keys(struct conv *c, const struct ysub_node *map, const char *where,
	   const char *const *accepted)
{
	long i;
	int k;

	for (i = 0; i < map->n; i++) {
		char set[160] = "";

		for (k = 0; accepted[k]; k++)
			if (strcmp(map->kids[i]->key, accepted[k]) == 0)
				break;
		if (accepted[k])
			continue;
		for (k = 0; accepted[k]; k++) {
			if (k > 0)
				strncat(set, ", ", sizeof(set) - strlen(set) - 1);
			strncat(set, accepted[k], sizeof(set) - strlen(set) - 1);
		}
		return pl_err_set(c->err, "%s:%d: %s: unknown key '%s' (accepted: %s)", c->label,
				  map->kids[i]->line, where, cv_clip(c, 0, map->kids[i]->key), set);
	}
	return 0;
}

/* A plain ~ or null is YAML's null, as an absent value. */
static bool
is_null(const struct ysub_node *n)
{
	return !n || n->kind == YSUB_NULL ||
	       (n->kind == YSUB_SCALAR && !n->quoted &&
		(strcmp(n->text, "~") == 0 || strcasecmp(n->text, "null") == 0));
}

/*
 * The string value of key in map: NULL when absent or null (an error when
 * required), else a non-empty scalar that fits on a topology.conf line (no
 * blanks, quotes, '=', '#' or '\').
 */
static int
get_str(struct conv *c, const struct ysub_node *map, const char *key, const char *where,
	bool required, const char **out)
{
	const struct ysub_node *v = ysub_get(map, key);
	const char *s;

	*out = NULL;
	if (is_null(v)) {
		if (required)
			return pl_err_set(c->err, "%s:%d: %s: no '%s:' (accepted: %s with %s: NAME)",
					  c->label, map->line, where, key, where, key);
		return 0;
	}
	if (v->kind != YSUB_SCALAR)
		return pl_err_set(c->err, "%s:%d: %s: %s: is %s (accepted: one name or hostlist expression, e.g. node[01-04])",
				  c->label, v->line, where, key, ysub_kind_name(v->kind));
	for (s = v->text; *s; s++)
		if (*s == ' ' || *s == '=' || *s == '#' || *s == '"' || *s == '\'' ||
		    *s == '\\' || (unsigned char)*s < 0x20)
			break;
	if (*s || !v->text[0])
		return pl_err_set(c->err, "%s:%d: %s: %s: '%s': %s (accepted: a name or hostlist expression without blanks, quotes, '=', '#' or '\\')",
				  c->label, v->line, where, key, cv_clip(c, 0, v->text),
				  v->text[0] ? "a character Slurm names do not hold" : "empty");
	*out = v->text;
	return 0;
}

/* Slurm's booleans: true/false, yes/no, on/off, y/n, t/f in any case. */
static int
get_bool(struct conv *c, const struct ysub_node *map, const char *key, const char *where,
	 bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "y", "t", NULL };
	static const char *const no[] = { "false", "no", "off", "n", "f", NULL };
	const struct ysub_node *v = ysub_get(map, key);
	int k;

	*out = false;
	if (!v)
		return 0;
	if (v->kind == YSUB_SCALAR) {
		for (k = 0; yes[k]; k++)
			if (strcasecmp(v->text, yes[k]) == 0) {
				*out = true;
				return 0;
			}
		for (k = 0; no[k]; k++)
			if (strcasecmp(v->text, no[k]) == 0)
				return 0;
	}
	return pl_err_set(c->err, "%s:%d: %s: %s: '%s' is not a boolean (accepted: true or false)",
			  c->label, v->line, where, key,
			  v->kind == YSUB_SCALAR ? cv_clip(c, 0, v->text) : ysub_kind_name(v->kind));
}

/*
 * The entries of a list of mappings (switches:, blocks:): a sequence, or
 * one mapping alone as Slurm also takes.  *items and *n describe them.
 */
static int
get_list(struct conv *c, const struct ysub_node *map, const char *key, const char *where,
	 const char *what, struct ysub_node *const **items, long *n)
{
	const struct ysub_node *v = ysub_get(map, key);
	long i;

	if (!v || is_null(v) || (v->kind == YSUB_SEQ && v->n == 0))
		return pl_err_set(c->err, "%s:%d: %s: no %s (accepted: %s: followed by '- %s: NAME' items)",
				  c->label, v ? v->line : map->line, where, key, key, what);
	if (v->kind == YSUB_MAP) {
		/* A lone mapping is the list of itself. */
		for (i = 0; i < map->n; i++)
			if (map->kids[i] == v)
				*items = &map->kids[i];
		*n = 1;
		return 0;
	}
	if (v->kind != YSUB_SEQ)
		return pl_err_set(c->err, "%s:%d: %s: %s: is %s (accepted: a sequence of '- %s: NAME' items)",
				  c->label, v->line, where, key, ysub_kind_name(v->kind), what);
	for (i = 0; i < v->n; i++)
		if (v->kids[i]->kind != YSUB_MAP)
			return pl_err_set(c->err, "%s:%d: %s: %s: an item that is %s (accepted: '- %s: NAME' with its keys)",
					  c->label, v->kids[i]->line, where, key,
					  ysub_kind_name(v->kids[i]->kind), what);
	*items = v->kids;
	*n = v->n;
	return 0;
}

/* tree: switches: each switch is a SwitchName= line. */
static int
conv_tree(struct conv *c, const struct ysub_node *tree)
{
	static const char *const tkeys[] = { "switches", NULL };
	static const char *const skeys[] = { "switch", "children", "nodes", NULL };
	struct ysub_node *const *sw;
	struct buf b = BUF_INIT;
	char where[TOPO_NAME + 64];
	long i, n;

	snprintf(where, sizeof(where), "topology '%s': tree", c->topo);
	if (tree->kind != YSUB_MAP)
		return pl_err_set(c->err, "%s:%d: %s: is %s (accepted: a mapping with switches:)",
				  c->label, tree->line, where, ysub_kind_name(tree->kind));
	if (check_keys(c, tree, where, tkeys) < 0 ||
	    get_list(c, tree, "switches", where, "switch", &sw, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		const char *name, *kids, *nodes;

		snprintf(where, sizeof(where), "topology '%s': switches", c->topo);
		if (check_keys(c, sw[i], where, skeys) < 0 ||
		    get_str(c, sw[i], "switch", where, true, &name) < 0)
			return -1;
		snprintf(where, sizeof(where), "topology '%s': switch '%s'", c->topo,
			 cv_clip(c, 1, name));
		if (get_str(c, sw[i], "children", where, false, &kids) < 0 ||
		    get_str(c, sw[i], "nodes", where, false, &nodes) < 0)
			return -1;
		if (kids && nodes)
			return pl_err_set(c->err, "%s:%d: %s: has both children: and nodes: (a switch has either child switches or nodes)",
					  c->label, sw[i]->line, where);
		if (!kids && !nodes)
			return pl_err_set(c->err, "%s:%d: %s: has neither children: nor nodes: (accepted: children: SWITCHES or nodes: HOSTLIST)",
					  c->label, sw[i]->line, where);
		if (buf_printf(&b, "SwitchName=%s %s=%s", name, kids ? "Switches" : "Nodes",
			       kids ? kids : nodes) < 0 || emit(c, sw[i]->line, &b) < 0) {
			buf_free(&b);
			return pl_err_set(c->err, "%s: out of memory", c->label);
		}
	}
	return 0;
}

/* block_sizes: [4, 16] (or a block sequence, or "4,16") as BlockSizes=4,16. */
static int
conv_sizes(struct conv *c, const struct ysub_node *v, const char *where)
{
	struct buf b = BUF_INIT;
	long i, n = v->kind == YSUB_SEQ ? v->n : 1;

	if (v->kind != YSUB_SEQ && v->kind != YSUB_SCALAR)
		return pl_err_set(c->err, "%s:%d: %s: block_sizes: is %s (accepted: a list of sizes, e.g. [4, 16])",
				  c->label, v->line, where, ysub_kind_name(v->kind));
	if (n == 0)
		return pl_err_set(c->err, "%s:%d: %s: block_sizes: is empty (accepted: a list of sizes, e.g. [4, 16], or no block_sizes:)",
				  c->label, v->line, where);
	buf_adds(&b, "BlockSizes=");
	for (i = 0; i < n; i++) {
		const struct ysub_node *s = v->kind == YSUB_SEQ ? v->kids[i] : v;
		const char *p;

		if (s->kind != YSUB_SCALAR)
			goto bad;
		for (p = s->text; *p; p++)
			if ((*p < '0' || *p > '9') && (*p != ',' || v->kind == YSUB_SEQ))
				goto bad;
		if (!s->text[0])
			goto bad;
		if (i > 0)
			buf_adds(&b, ",");
		buf_adds(&b, s->text);
		continue;
bad:
		buf_free(&b);
		return pl_err_set(c->err, "%s:%d: %s: block_sizes: '%s' is not a positive whole number (accepted: a list of sizes, e.g. [4, 16])",
				  c->label, s->line, where,
				  s->kind == YSUB_SCALAR ? cv_clip(c, 0, s->text) : ysub_kind_name(s->kind));
	}
	/* The key's line: the sizes may stand before or after the blocks. */
	return emit(c, v->line, &b);
}

/* block: block_sizes and blocks: BlockSizes= and BlockName= lines. */
static int
conv_block(struct conv *c, const struct ysub_node *block)
{
	static const char *const tkeys[] = { "block_sizes", "blocks", NULL };
	static const char *const bkeys[] = { "block", "nodes", NULL };
	const struct ysub_node *sizes;
	struct ysub_node *const *bl;
	struct buf b = BUF_INIT;
	char where[TOPO_NAME + 64];
	long i, n;

	snprintf(where, sizeof(where), "topology '%s': block", c->topo);
	if (block->kind != YSUB_MAP)
		return pl_err_set(c->err, "%s:%d: %s: is %s (accepted: a mapping with blocks: and block_sizes:)",
				  c->label, block->line, where, ysub_kind_name(block->kind));
	if (check_keys(c, block, where, tkeys) < 0)
		return -1;
	sizes = ysub_get(block, "block_sizes");
	if (!is_null(sizes) && conv_sizes(c, sizes, where) < 0)
		return -1;
	if (get_list(c, block, "blocks", where, "block", &bl, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		const char *name, *nodes;

		snprintf(where, sizeof(where), "topology '%s': blocks", c->topo);
		if (check_keys(c, bl[i], where, bkeys) < 0 ||
		    get_str(c, bl[i], "block", where, true, &name) < 0)
			return -1;
		snprintf(where, sizeof(where), "topology '%s': block '%s'", c->topo,
			 cv_clip(c, 1, name));
		if (get_str(c, bl[i], "nodes", where, false, &nodes) < 0)
			return -1;
		/* Slurm takes a block without nodes, as topology.conf does. */
		if (buf_printf(&b, "BlockName=%s%s%s", name, nodes ? " Nodes=" : "",
			       nodes ? nodes : "") < 0 || emit(c, bl[i]->line, &b) < 0) {
			buf_free(&b);
			return pl_err_set(c->err, "%s: out of memory", c->label);
		}
	}
	return 0;
}

/* Check one topology and add its topology.conf lines to c; *kind says which
 * kind it is. */
static int
conv_topology(struct conv *c, const struct ysub_node *t, const char **kind)
{
	static const char *const keys[] = { "topology", "cluster_default", "tree", "block",
					    "flat", NULL };
	const struct ysub_node *tree = ysub_get(t, "tree"), *block = ysub_get(t, "block");
	char where[TOPO_NAME + 32];
	bool flat = false;
	int kinds;

	snprintf(where, sizeof(where), "topology '%s'", c->topo);
	if (check_keys(c, t, where, keys) < 0 || get_bool(c, t, "flat", where, &flat) < 0)
		return -1;
	kinds = (tree != NULL) + (block != NULL) + flat;
	if (kinds != 1)
		return pl_err_set(c->err, "%s:%d: %s: %s (accepted: exactly one of tree:, block: or flat: true)",
				  c->label, t->line, where,
				  kinds ? "has more than one of tree:, block: and flat: true" :
				  "has none of tree:, block: or flat: true");
	if (tree) {
		*kind = "tree";
		return conv_tree(c, tree);
	}
	if (block) {
		*kind = "block";
		return conv_block(c, block);
	}
	*kind = "flat";
	return 0;
}

/* Order topology.conf lines by the YAML line that gave them. */
static int
cline_cmp(const void *a, const void *b)
{
	const struct cline *x = a, *y = b;

	return (x->line > y->line) - (x->line < y->line);
}

/*
 * The topology.conf text of c's lines: each on the line number of the YAML
 * line that gave it, blank lines between.  Caller frees.
 */
static char *
conf_text(struct conv *c)
{
	struct buf b = BUF_INIT;
	long i;
	int nl = 0;

	if (c->n > 1)
		qsort(c->lines, (size_t)c->n, sizeof(*c->lines), cline_cmp);
	buf_adds(&b, "");
	for (i = 0; i < c->n; i++) {
		while (nl < c->lines[i].line - 1 && buf_add(&b, "\n", 1) == 0)
			nl++;
		buf_adds(&b, c->lines[i].text);
		buf_add(&b, "\n", 1);
		nl++;
	}
	return buf_take(&b);
}

/* The topologies of the document root: a sequence of mappings, or one. */
static int
topologies(struct conv *c, const struct ysub_node *root, struct ysub_node *const **items,
	   long *n)
{
	static struct ysub_node *one[1];
	long i;

	if (root->kind == YSUB_MAP) {
		/* Slurm takes a single topology without the list. */
		one[0] = (struct ysub_node *)root;
		*items = one;
		*n = 1;
		return 0;
	}
	if (root->kind != YSUB_SEQ || root->n == 0)
		return pl_err_set(c->err, "%s:%d: the document is %s (accepted: a list of topologies, each '- topology: NAME' with tree:, block: or flat: true)",
				  c->label, root->line, root->kind == YSUB_SEQ ? "an empty sequence" :
				  ysub_kind_name(root->kind));
	for (i = 0; i < root->n; i++)
		if (root->kids[i]->kind != YSUB_MAP)
			return pl_err_set(c->err, "%s:%d: a list item that is %s (accepted: '- topology: NAME' with its keys)",
					  c->label, root->kids[i]->line, ysub_kind_name(root->kids[i]->kind));
	*items = root->kids;
	*n = root->n;
	return 0;
}

int
topo_read_slurm_yaml_text(struct topo_map *m, const char *text, const char *label,
			  const char *name, bool blocks_nvlink, struct topo_yaml_info *info,
			  pl_err_t *err)
{
	struct ysub_node *root = NULL;
	struct ysub_node *const *t = NULL;
	struct conv c;
	const char *kind = NULL, *chosen_kind;
	char *conf = NULL, names[256] = "";
	long i, j, n = 0, chosen = -1, first_default = -1;
	int rv = -1;

	memset(&c, 0, sizeof(c));
	c.label = pl_clip_path(label ? label : "topology.yaml", c.label_buf, sizeof(c.label_buf));
	c.err = err;
	root = ysub_parse(text, c.label, err);
	if (!root || topologies(&c, root, &t, &n) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		const char *tname;
		bool def;

		c.topo = "?";
		if (get_str(&c, t[i], "topology", "a topology", true, &tname) < 0)
			goto out;
		c.topo = tname;
		for (j = 0; j < i; j++)
			if (strcmp(ysub_get(t[j], "topology")->text, tname) == 0) {
				pl_err_set(err, "%s:%d: topology '%s' is defined twice (first at line %d; accepted: unique names)",
					   c.label, t[i]->line, cv_clip(&c, 0, tname), t[j]->line);
				goto out;
			}
		if (get_bool(&c, t[i], "cluster_default", "topology", &def) < 0)
			goto out;
		if (def && first_default < 0)
			first_default = i;
		if (strlen(names) + strlen(tname) + 3 < sizeof(names))
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? ", " : "", tname);
		/* Every topology is checked (Slurm refuses a file with one bad);
		 * only the chosen one's lines are kept below. */
		if (conv_topology(&c, t[i], &kind) < 0)
			goto out;
		if (name && chosen < 0 && strcmp(name, tname) == 0)
			chosen = i;
	}
	if (name && chosen < 0) {
		pl_err_set(err, "%s: no topology '%s' (accepted: %s)", c.label, cv_clip(&c, 0, name),
			   names);
		goto out;
	}
	if (chosen < 0)
		chosen = first_default >= 0 ? first_default : 0;
	chosen_kind = ysub_get(t[chosen], "tree") ? "tree" :
		      ysub_get(t[chosen], "block") ? "block" : "flat";
	/* Keep only the chosen topology's lines: those between its first
	 * line and the next topology's. */
	for (i = j = 0; i < c.n; i++) {
		long end = chosen + 1 < n ? t[chosen + 1]->line : 0x7fffffff;

		if (c.lines[i].line >= t[chosen]->line && c.lines[i].line < end)
			c.lines[j++] = c.lines[i];
		else
			free(c.lines[i].text);
	}
	c.n = j;
	conf = conf_text(&c);
	if (!conf) {
		pl_err_set(err, "%s: out of memory", c.label);
		goto out;
	}
	if (info) {
		memset(info, 0, sizeof(*info));
		snprintf(info->topology, sizeof(info->topology), "%s",
			 ysub_get(t[chosen], "topology")->text);
		snprintf(info->kind, sizeof(info->kind), "%s", chosen_kind);
		info->ntopologies = (int)n;
	}
	rv = topo_read_slurm_text(m, conf, label ? label : "topology.yaml", blocks_nvlink, err);
out:
	free(conf);
	lines_free(&c);
	ysub_free(root);
	return rv;
}

int
topo_read_slurm_yaml(struct topo_map *m, const char *path, const char *name, bool blocks_nvlink,
		     struct topo_yaml_info *info, pl_err_t *err)
{
	char *text = topo_util_read_text(path, NULL, YAML_FILE_LIMIT, "a topology.yaml", err);
	int rv;

	if (!text)
		return -1;
	rv = topo_read_slurm_yaml_text(m, text, path, name, blocks_nvlink, info, err);
	free(text);
	return rv;
}
