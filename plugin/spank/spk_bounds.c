/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The map's bounds for srun's validation.  Loading the whole map of a
 * 10,000-node floor (topo_load) took 15-17 ms in srun's option callback,
 * about 6 ms of it parsing the JSON; this reads the parsed document
 * directly, in one pass over the nodes, and builds nothing else.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "spk_bounds.h"

struct kind {
	long ngpus;
	double mem;
};

static int
read_types(json_t *types, struct kind **out, json_t *index, pl_err_t *err)
{
	size_t i;
	json_t *v;

	*out = calloc(json_array_size(types) + 1, sizeof(**out));
	if (!*out)
		return pl_err_set(err, "out of memory");
	json_array_foreach(types, i, v) {
		json_t *name = json_object_get(v, "name"), *mem = json_object_get(v, "gpu_memory_gb");

		if (!json_is_string(name) || !json_is_array(json_object_get(v, "gpus")))
			return pl_err_set(err, "node_types[%zu]: no name or gpus", i);
		(*out)[i].ngpus = (long)json_array_size(json_object_get(v, "gpus"));
		(*out)[i].mem = json_is_number(mem) ? json_number_value(mem) : 0;
		if (json_object_set_new(index, json_string_value(name), json_integer((json_int_t)i)) < 0)
			return pl_err_set(err, "out of memory");
	}
	return 0;
}

static int
read_blocks(json_t *blocks, json_t *index, pl_err_t *err)
{
	size_t i;
	json_t *v;

	json_array_foreach(blocks, i, v) {
		json_t *name = json_object_get(v, "name");

		if (!json_is_string(name))
			return pl_err_set(err, "blocks[%zu]: no name", i);
		if (json_object_set_new(index, json_string_value(name), json_integer((json_int_t)i)) < 0)
			return pl_err_set(err, "out of memory");
	}
	return 0;
}

/* The index a node's "type" or "block" names, -1 when absent. */
static long
lookup(json_t *node, const char *key, json_t *index, size_t i, pl_err_t *err)
{
	json_t *v = json_object_get(node, key), *ix;
	char clip[PL_CLIP_BUF];

	if (!v)
		return -1;
	ix = json_is_string(v) ? json_object_get(index, json_string_value(v)) : NULL;
	if (!ix) {
		pl_err_set(err, "nodes[%zu]: %s '%s' is not in the map", i, key,
			   pl_clip(json_is_string(v) ? json_string_value(v) : "?", clip, sizeof(clip)));
		return -2;
	}
	return (long)json_integer_value(ix);
}

static void
read_links(json_t *links, struct spk_bounds *b)
{
	int k;

	for (k = 0; k < TOPO_NLINKS; k++) {
		json_t *g = json_object_get(json_object_get(links, topo_link_name(k)), "gbps");

		if (json_is_number(g) && json_number_value(g) > 0)
			b->link[k].gbps = json_number_value(g);
	}
}

static int
read_nodes(json_t *root, const struct kind *kinds, json_t *tix, json_t *bix, struct spk_bounds *b,
	   pl_err_t *err)
{
	json_t *nodes = json_object_get(root, "nodes"), *blocks = json_object_get(root, "blocks"), *v;
	long *gpus = calloc(json_array_size(blocks) + 1, sizeof(long)), def = -1;
	size_t i;
	int rv = -1;

	if (!gpus)
		return pl_err_set(err, "out of memory");
	if (json_is_string(json_object_get(root, "default_type")) &&
	    (def = lookup(root, "default_type", tix, 0, err)) < 0)
		goto out;
	json_array_foreach(nodes, i, v) {
		long t = lookup(v, "type", tix, i, err), k = lookup(v, "block", bix, i, err);

		if (t < -1 || k < -1)
			goto out;
		if (t < 0)
			t = def;
		if (t < 0)
			continue;
		if (kinds[t].ngpus > b->domain)
			b->domain = kinds[t].ngpus;
		if (kinds[t].mem > 0 && (b->gpu_memory_gb == 0 || kinds[t].mem < b->gpu_memory_gb))
			b->gpu_memory_gb = kinds[t].mem;
		if (k >= 0)
			gpus[k] += kinds[t].ngpus;
	}
	b->nnodes = (long)json_array_size(nodes);
	json_array_foreach(blocks, i, v)
		if (json_is_true(json_object_get(v, "nvlink")) && gpus[i] > b->domain)
			b->domain = gpus[i];
	rv = 0;
out:
	free(gpus);
	return rv;
}

int
spk_bounds_load(const char *path, struct spk_bounds *b, pl_err_t *err)
{
	struct topo_map *nominal = topo_new();
	json_t *root, *tix = json_object(), *bix = json_object();
	struct kind *kinds = NULL;
	json_error_t je;
	char clip[PL_CLIP_BUF];
	int rv = -1;

	memset(b, 0, sizeof(*b));
	root = json_load_file(path, 0, &je);
	if (!nominal || !tix || !bix) {
		pl_err_set(err, "out of memory");
		goto out;
	}
	memcpy(b->link, nominal->link, sizeof(b->link));
	if (!root) {
		pl_err_set(err, "%s:%d:%d: %s", pl_clip_path(path, clip, sizeof(clip)), je.line, je.column,
			   je.text);
		goto out;
	}
	if (!json_is_array(json_object_get(root, "node_types")) ||
	    !json_is_array(json_object_get(root, "nodes")) ||
	    (json_object_get(root, "blocks") && !json_is_array(json_object_get(root, "blocks")))) {
		pl_err_set(err, "%s: not a cluster map (node_types and nodes arrays)",
			   pl_clip_path(path, clip, sizeof(clip)));
		goto out;
	}
	if (read_types(json_object_get(root, "node_types"), &kinds, tix, err) < 0 ||
	    read_blocks(json_object_get(root, "blocks"), bix, err) < 0 ||
	    read_nodes(root, kinds, tix, bix, b, err) < 0)
		goto out;
	read_links(json_object_get(root, "link_classes"), b);
	rv = 0;
out:
	free(kinds);
	json_decref(tix);
	json_decref(bix);
	json_decref(root);
	topo_free(nominal);
	return rv;
}
