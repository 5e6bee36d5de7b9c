/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster map file: topo_map <-> JSON.  The file is what
 * `layoutctl topo build` writes and what layoutd and the plugin load, so
 * reading it is strict: unknown keys are errors that name the object.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "topo.h"

#define MAP_FORMAT "parallel-layout-map"
#define MAP_VERSION 1

static int
copy_name(char *dst, size_t size, const char *src, const char *what, pl_err_t *err)
{
	if (!src)
		src = "";
	if (strlen(src) >= size) {
		char c[PL_CLIP_BUF];

		return pl_err_set(err, "%s '%s' is longer than %zu characters",
				  what, pl_clip(src, c, sizeof(c)), size - 1);
	}
	strcpy(dst, src);
	return 0;
}

static json_t *
gpu_to_json(const struct topo_gpu *g)
{
	return json_pack("{s:i, s:i, s:s, s:i, s:i, s:s}",
			 "index", g->index, "numa", g->numa, "pci", g->pci,
			 "island", g->island, "nic", g->nic, "name", g->name);
}

static json_t *
nic_to_json(const struct topo_nic *n)
{
	return json_pack("{s:s, s:i, s:i, s:i, s:s, s:f}",
			 "name", n->name, "port", n->port, "rail", n->rail,
			 "numa", n->numa, "pci", n->pci, "gbps", n->gbps);
}

static json_t *
type_to_json(const struct topo_nodetype *t)
{
	json_t *gpus = json_array(), *nics = json_array();
	int i;

	for (i = 0; i < t->ngpus; i++)
		json_array_append_new(gpus, gpu_to_json(&t->gpus[i]));
	for (i = 0; i < t->nnics; i++)
		json_array_append_new(nics, nic_to_json(&t->nics[i]));
	return json_pack("{s:s, s:f, s:s, s:o, s:o}",
			 "name", t->name, "gpu_memory_gb", t->gpu_memory_gb,
			 "nccl_topo_file", t->nccl_topo_file,
			 "gpus", gpus, "nics", nics);
}

static json_t *
map_to_json(const struct topo_map *m)
{
	json_t *root, *links, *types, *sws, *blocks, *nodes;
	long i;

	links = json_object();
	for (i = 0; i < TOPO_NLINKS; i++)
		json_object_set_new(links, topo_link_name(i),
				    json_pack("{s:f, s:b, s:s}", "gbps", m->link[i].gbps,
					      "measured", m->link[i].measured,
					      "source", m->link[i].source));
	types = json_array();
	for (i = 0; i < m->ntypes; i++)
		json_array_append_new(types, type_to_json(&m->types[i]));
	sws = json_array();
	for (i = 0; i < m->nswitches; i++) {
		const struct topo_switch *s = &m->switches[i];
		json_t *o = json_pack("{s:s, s:i, s:f}", "name", s->name,
				      "level", s->level, "gbps", s->gbps);

		if (s->parent >= 0)
			json_object_set_new(o, "parent",
					    json_string(m->switches[s->parent].name));
		json_array_append_new(sws, o);
	}
	blocks = json_array();
	for (i = 0; i < m->nblocks; i++)
		json_array_append_new(blocks, json_pack("{s:s, s:b}", "name", m->blocks[i].name,
							"nvlink", m->blocks[i].nvlink));
	nodes = json_array();
	for (i = 0; i < m->nnodes; i++) {
		const struct topo_node *n = &m->nodes[i];
		json_t *o = json_pack("{s:s}", "name", n->name);

		/* Defaults are left out: a 10,000-node map stays small. */
		if (n->type >= 0)
			json_object_set_new(o, "type", json_string(m->types[n->type].name));
		if (n->sw >= 0)
			json_object_set_new(o, "switch", json_string(m->switches[n->sw].name));
		if (n->sw2 >= 0)
			json_object_set_new(o, "switch2", json_string(m->switches[n->sw2].name));
		if (n->block >= 0)
			json_object_set_new(o, "block", json_string(m->blocks[n->block].name));
		if (n->addr)
			json_object_set_new(o, "addr", json_string(n->addr));
		if (n->peer_port > 0)
			json_object_set_new(o, "peer_port", json_integer(n->peer_port));
		json_array_append_new(nodes, o);
	}
	root = json_pack("{s:s, s:i, s:s, s:o, s:o, s:o, s:o, s:o}",
			 "format", MAP_FORMAT, "version", MAP_VERSION, "name", m->name,
			 "link_classes", links, "node_types", types, "switches", sws,
			 "blocks", blocks, "nodes", nodes);
	if (root && m->default_type >= 0)
		json_object_set_new(root, "default_type",
				    json_string(m->types[m->default_type].name));
	return root;
}

char *
topo_to_json_text(const struct topo_map *m)
{
	json_t *root = map_to_json(m);
	char *text;

	if (!root)
		return NULL;
	text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return text;
}

int
topo_save(const struct topo_map *m, const char *path, pl_err_t *err)
{
	char *text = topo_to_json_text(m), c[PL_CLIP_BUF];
	FILE *f = NULL;
	int rv = -1;

	if (!text) {
		pl_err_set(err, "out of memory writing the map");
		goto out;
	}
	pl_clip_path(path, c, sizeof(c));
	f = fopen(path, "w");
	if (!f) {
		pl_err_set(err, "%s: %s", c, strerror(errno));
		goto out;
	}
	if (fputs(text, f) < 0 || fputc('\n', f) < 0) {
		pl_err_set(err, "%s: write failed: %s", c, strerror(errno));
		goto out;
	}
	if (fclose(f) != 0) {
		f = NULL;
		pl_err_set(err, "%s: %s", c, strerror(errno));
		goto out;
	}
	f = NULL;
	rv = 0;
out:
	if (f)
		fclose(f);
	free(text);
	return rv;
}

/* ---- reading ---- */

static int
unpack_gpu(json_t *o, struct topo_gpu *g, const char *where, pl_err_t *err)
{
	const char *pci = "", *name = "";
	json_error_t je;

	g->numa = -1;
	g->island = -1;
	g->nic = -1;
	if (json_unpack_ex(o, &je, JSON_STRICT, "{s:i, s?:i, s?:s, s?:i, s?:i, s?:s}",
			   "index", &g->index, "numa", &g->numa, "pci", &pci,
			   "island", &g->island, "nic", &g->nic, "name", &name) < 0)
		return pl_err_set(err, "%s: %s (accepted: index, numa, pci, island, nic, name)",
				  where, je.text);
	if (copy_name(g->pci, sizeof(g->pci), pci, "pci bus id", err) < 0 ||
	    copy_name(g->name, sizeof(g->name), name, "GPU name", err) < 0)
		return -1;
	return 0;
}

static int
unpack_nic(json_t *o, struct topo_nic *n, const char *where, pl_err_t *err)
{
	const char *name = NULL, *pci = "";
	json_error_t je;

	n->rail = -1;
	n->numa = -1;
	if (json_unpack_ex(o, &je, JSON_STRICT, "{s:s, s?:i, s?:i, s?:i, s?:s, s?:F}",
			   "name", &name, "port", &n->port, "rail", &n->rail,
			   "numa", &n->numa, "pci", &pci, "gbps", &n->gbps) < 0)
		return pl_err_set(err, "%s: %s (accepted: name, port, rail, numa, pci, gbps)",
				  where, je.text);
	if (copy_name(n->name, sizeof(n->name), name, "NIC name", err) < 0 ||
	    copy_name(n->pci, sizeof(n->pci), pci, "pci bus id", err) < 0)
		return -1;
	return 0;
}

static int
unpack_type(json_t *o, struct topo_map *m, int idx, pl_err_t *err)
{
	struct topo_nodetype t;
	const char *name = NULL, *tf = "";
	json_t *gpus = NULL, *nics = NULL, *v;
	json_error_t je;
	char where[128];
	size_t i;
	int rv = -1;

	memset(&t, 0, sizeof(t));
	snprintf(where, sizeof(where), "node_types[%d]", idx);
	if (json_unpack_ex(o, &je, JSON_STRICT, "{s:s, s?:F, s?:s, s?:o, s?:o}",
			   "name", &name, "gpu_memory_gb", &t.gpu_memory_gb,
			   "nccl_topo_file", &tf, "gpus", &gpus, "nics", &nics) < 0) {
		pl_err_set(err, "%s: %s (accepted: name, gpu_memory_gb, nccl_topo_file, gpus, nics)",
			   where, je.text);
		goto out;
	}
	if (copy_name(t.name, sizeof(t.name), name, "node type name", err) < 0 ||
	    copy_name(t.nccl_topo_file, sizeof(t.nccl_topo_file), tf, "nccl_topo_file", err) < 0)
		goto out;
	if ((gpus && !json_is_array(gpus)) || (nics && !json_is_array(nics))) {
		pl_err_set(err, "%s (%s): gpus and nics must be arrays", where, t.name);
		goto out;
	}
	if (gpus && json_array_size(gpus) > 0) {
		t.gpus = calloc(json_array_size(gpus), sizeof(*t.gpus));
		if (!t.gpus)
			goto nomem;
		json_array_foreach(gpus, i, v) {
			snprintf(where, sizeof(where), "node type '%s': gpus[%zu]", t.name, i);
			if (unpack_gpu(v, &t.gpus[i], where, err) < 0)
				goto out;
			t.ngpus++;
		}
	}
	if (nics && json_array_size(nics) > 0) {
		t.nics = calloc(json_array_size(nics), sizeof(*t.nics));
		if (!t.nics)
			goto nomem;
		json_array_foreach(nics, i, v) {
			snprintf(where, sizeof(where), "node type '%s': nics[%zu]", t.name, i);
			if (unpack_nic(v, &t.nics[i], where, err) < 0)
				goto out;
			t.nnics++;
		}
	}
	for (i = 0; i < (size_t)t.ngpus; i++) {
		if (t.gpus[i].nic >= t.nnics || t.gpus[i].nic < -1) {
			pl_err_set(err, "node type '%s': GPU %d names NIC %d but the type has %d NICs",
				   t.name, t.gpus[i].index, t.gpus[i].nic, t.nnics);
			goto out;
		}
		/* The index is the task's LOCAL_RANK: one GPU, one index. */
		if (t.gpus[i].index < 0 || t.gpus[i].index > 65535 ||
		    (i > 0 && t.gpus[i].index <= t.gpus[i - 1].index)) {
			pl_err_set(err, "node type '%s': gpus[%zu] has index %d (accepted: 0 to 65535, "
				   "each larger than the one before)", t.name, i, t.gpus[i].index);
			goto out;
		}
	}
	if (topo_add_type(m, &t, err) < 0)
		goto out;
	rv = 0;
	goto out;
nomem:
	pl_err_set(err, "out of memory reading node types");
out:
	topo_nodetype_clear(&t);
	return rv;
}

static int
find_block(const struct topo_map *m, const char *name)
{
	int i;

	for (i = 0; i < m->nblocks; i++)
		if (strcmp(m->blocks[i].name, name) == 0)
			return i;
	return -1;
}

static int
unpack_links(json_t *links, struct topo_map *m, pl_err_t *err)
{
	const char *key;
	json_t *v;

	json_object_foreach(links, key, v) {
		char c[PL_CLIP_BUF];
		struct topo_linkclass *lc = NULL;
		const char *source = "";
		json_error_t je;
		int i, measured = 0;

		for (i = 0; i < TOPO_NLINKS; i++)
			if (strcmp(key, topo_link_name(i)) == 0)
				lc = &m->link[i];
		if (!lc)
			return pl_err_set(err, "link_classes: unknown class '%s' (accepted: nvlink, pcie, leaf, spine)",
					  pl_clip(key, c, sizeof(c)));
		if (json_unpack_ex(v, &je, JSON_STRICT, "{s:F, s?:b, s?:s}", "gbps", &lc->gbps,
				   "measured", &measured, "source", &source) < 0)
			return pl_err_set(err, "link_classes.%s: %s (accepted: gbps, measured, source)",
					  key, je.text);
		if (!(lc->gbps > 0))
			return pl_err_set(err, "link_classes.%s: gbps must be positive", key);
		lc->measured = measured;
		if (copy_name(lc->source, sizeof(lc->source), source, "source", err) < 0)
			return -1;
	}
	return 0;
}

static int
unpack_switches(json_t *sws, struct topo_map *m, pl_err_t *err)
{
	size_t i;
	json_t *v;

	/* Two passes: parents may be listed after their children. */
	json_array_foreach(sws, i, v) {
		const char *name = NULL, *parent = NULL;
		char c[PL_CLIP_BUF];
		json_error_t je;
		int level = 0, idx;
		double gbps = 0;

		if (json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s?:s, s?:i, s?:F}", "name", &name,
				   "parent", &parent, "level", &level, "gbps", &gbps) < 0)
			return pl_err_set(err, "switches[%zu]: %s (accepted: name, parent, level, gbps)",
					  i, je.text);
		if (topo_find_switch(m, name) >= 0)
			return pl_err_set(err, "switches[%zu]: switch '%s' is listed twice", i,
					  pl_clip(name, c, sizeof(c)));
		idx = topo_add_switch(m, name, -1, err);
		if (idx < 0)
			return -1;
		m->switches[idx].gbps = gbps;
	}
	json_array_foreach(sws, i, v) {
		json_t *p = json_object_get(v, "parent");
		char c[PL_CLIP_BUF];
		int pi;

		if (!p)
			continue;
		pi = topo_find_switch(m, json_string_value(p));
		if (pi < 0)
			return pl_err_set(err, "switch '%s': parent '%s' is not in switches",
					  m->switches[i].name, pl_clip(json_string_value(p), c, sizeof(c)));
		m->switches[i].parent = pi;
	}
	topo_finish(m);
	return 0;
}

static int
unpack_node(json_t *v, size_t i, struct topo_map *m, pl_err_t *err)
{
	const char *name = NULL, *type = NULL, *sw = NULL, *sw2 = NULL, *block = NULL;
	const char *addr = NULL;
	char c[PL_CLIP_BUF], c0[PL_CLIP_BUF];
	json_int_t port = 0;
	json_t *jport = NULL;
	json_error_t je;
	long idx;
	struct topo_node *n;

	if (json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s?:s, s?:s, s?:s, s?:s, s?:s, s?:o}",
			   "name", &name, "type", &type, "switch", &sw, "switch2", &sw2,
			   "block", &block, "addr", &addr, "peer_port", &jport) < 0)
		return pl_err_set(err, "nodes[%zu]: %s (accepted: name, type, switch, switch2, block, addr, peer_port)",
				  i, je.text);
	/* A port is an integer 1..65535; jansson's "i" would wrap a large one. */
	if (jport && (!json_is_integer(jport) || (port = json_integer_value(jport)) < 1 ||
		      port > 65535))
		return pl_err_set(err, "node '%s': peer_port must be an integer from 1 to 65535",
				  pl_clip(name, c0, sizeof(c0)));
	idx = topo_add_node(m, name, err);
	if (idx < 0)
		return -1;
	n = &m->nodes[idx];
	if (type && (n->type = topo_find_type(m, type)) < 0)
		return pl_err_set(err, "node '%s': type '%s' is not in node_types", pl_clip(name, c0, sizeof(c0)),
				  pl_clip(type, c, sizeof(c)));
	if (sw && (n->sw = topo_find_switch(m, sw)) < 0)
		return pl_err_set(err, "node '%s': switch '%s' is not in switches", pl_clip(name, c0, sizeof(c0)),
				  pl_clip(sw, c, sizeof(c)));
	if (sw2 && (n->sw2 = topo_find_switch(m, sw2)) < 0)
		return pl_err_set(err, "node '%s': switch2 '%s' is not in switches", pl_clip(name, c0, sizeof(c0)),
				  pl_clip(sw2, c, sizeof(c)));
	if (block && (n->block = find_block(m, block)) < 0)
		return pl_err_set(err, "node '%s': block '%s' is not in blocks", pl_clip(name, c0, sizeof(c0)),
				  pl_clip(block, c, sizeof(c)));
	if ((addr && topo_set_node_addr(m, idx, addr, err) < 0) ||
	    (jport && topo_set_node_port(m, idx, (long)port, err) < 0))
		return -1;
	return 0;
}

static int
unpack_map(json_t *root, struct topo_map *m, pl_err_t *err)
{
	const char *format = NULL, *name = "", *deftype = NULL;
	char c[PL_CLIP_BUF];
	json_t *links = NULL, *types = NULL, *sws = NULL, *blocks = NULL, *nodes = NULL, *v;
	json_error_t je;
	int version = 0;
	size_t i;

	if (json_unpack_ex(root, &je, JSON_STRICT,
			   "{s:s, s:i, s?:s, s?:o, s?:o, s?:s, s?:o, s?:o, s?:o}",
			   "format", &format, "version", &version, "name", &name,
			   "link_classes", &links, "node_types", &types, "default_type", &deftype,
			   "switches", &sws, "blocks", &blocks, "nodes", &nodes) < 0)
		return pl_err_set(err, "%s (accepted: format, version, name, link_classes, node_types, default_type, switches, blocks, nodes)",
				  je.text);
	if (strcmp(format, MAP_FORMAT) != 0)
		return pl_err_set(err, "format is '%s', expected '%s'", pl_clip(format, c, sizeof(c)),
				  MAP_FORMAT);
	if (version != MAP_VERSION)
		return pl_err_set(err, "map version %d is not supported (this build reads version %d)",
				  version, MAP_VERSION);
	if (copy_name(m->name, sizeof(m->name), name, "map name", err) < 0)
		return -1;
	if ((links && !json_is_object(links)) || (types && !json_is_array(types)) ||
	    (sws && !json_is_array(sws)) || (blocks && !json_is_array(blocks)) ||
	    (nodes && !json_is_array(nodes)))
		return pl_err_set(err, "link_classes must be an object; node_types, switches, blocks and nodes arrays");
	if (links && unpack_links(links, m, err) < 0)
		return -1;
	json_array_foreach(types, i, v) {
		if (topo_find_type(m, json_string_value(json_object_get(v, "name")) ?
			      json_string_value(json_object_get(v, "name")) : "") >= 0)
			return pl_err_set(err, "node_types[%zu]: type '%s' is listed twice", i,
					  pl_clip(json_string_value(json_object_get(v, "name")), c,
						  sizeof(c)));
		if (unpack_type(v, m, (int)i, err) < 0)
			return -1;
	}
	if (deftype && (m->default_type = topo_find_type(m, deftype)) < 0)
		return pl_err_set(err, "default_type '%s' is not in node_types",
				  pl_clip(deftype, c, sizeof(c)));
	if (sws && unpack_switches(sws, m, err) < 0)
		return -1;
	json_array_foreach(blocks, i, v) {
		const char *bname = NULL;
		int nvlink = 0;

		if (json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s?:b}", "name", &bname,
				   "nvlink", &nvlink) < 0)
			return pl_err_set(err, "blocks[%zu]: %s (accepted: name, nvlink)", i, je.text);
		if (find_block(m, bname) >= 0)
			return pl_err_set(err, "blocks[%zu]: block '%s' is listed twice", i,
					  pl_clip(bname, c, sizeof(c)));
		if (topo_add_block(m, bname, nvlink, err) < 0)
			return -1;
	}
	json_array_foreach(nodes, i, v)
		if (unpack_node(v, i, m, err) < 0)
			return -1;
	return topo_index(m, err);
}

static struct topo_map *
map_from_root(json_t *root, pl_err_t *err)
{
	struct topo_map *m = topo_new();

	if (!m) {
		pl_err_set(err, "out of memory");
		return NULL;
	}
	if (unpack_map(root, m, err) < 0) {
		topo_free(m);
		return NULL;
	}
	return m;
}

struct topo_map *
topo_from_json_text(const char *text, pl_err_t *err)
{
	json_error_t je;
	json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	struct topo_map *m;

	if (!root) {
		pl_err_set(err, "line %d column %d: %s", je.line, je.column, je.text);
		return NULL;
	}
	m = map_from_root(root, err);
	json_decref(root);
	return m;
}

struct topo_map *
topo_load(const char *path, pl_err_t *err)
{
	json_error_t je;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	struct topo_map *m;
	pl_err_t inner;
	char c[PL_CLIP_BUF];

	pl_clip_path(path, c, sizeof(c));
	if (!root) {
		/* jansson reports open failures at line -1. */
		if (je.line < 1)
			pl_err_set(err, "%s: %s", c, je.text);
		else
			pl_err_set(err, "%s:%d:%d: %s", c, je.line, je.column, je.text);
		return NULL;
	}
	pl_err_clear(&inner);
	m = map_from_root(root, &inner);
	json_decref(root);
	if (!m) {
		pl_err_set(err, "%s: %s", c, inner.text);
		return NULL;
	}
	/* A map of no nodes places nothing: every job would be refused. */
	if (m->nnodes == 0) {
		pl_err_set(err, "%s: the map has no nodes (accepted: a map of at least one node)",
			   c);
		topo_free(m);
		return NULL;
	}
	return m;
}
