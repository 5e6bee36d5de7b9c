/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The topology map in memory: growth of its arrays, the name index, the
 * nodes' peer addresses, and the nominal link bandwidths a map starts with.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"
#include "topo_ix.h"

/*
 * Nominal bus bandwidths in GB/s, used until nccl-tests figures are imported:
 * NVLink 4 (H100) moves about 450 GB/s per direction, PCIe 4.0 x16 about 25,
 * one 400 Gb/s NIC per GPU about 50 under a leaf, and a 2:1 oversubscribed
 * spine half of that.
 */
static const double nominal_gbps[TOPO_NLINKS] = { 450.0, 25.0, 50.0, 25.0 };
static const char *const link_names[TOPO_NLINKS] = { "nvlink", "pcie", "leaf", "spine" };

const char *
topo_link_name(enum topo_link l)
{
	return (unsigned)l < TOPO_NLINKS ? link_names[l] : "?";
}

struct topo_map *
topo_new(void)
{
	struct topo_map *m = calloc(1, sizeof(*m));
	int i;

	if (!m)
		return NULL;
	m->default_type = -1;
	for (i = 0; i < TOPO_NLINKS; i++)
		m->link[i].gbps = nominal_gbps[i];
	return m;
}

void
topo_nodetype_clear(struct topo_nodetype *t)
{
	if (!t)
		return;
	free(t->gpus);
	free(t->nics);
	t->gpus = NULL;
	t->nics = NULL;
	t->ngpus = 0;
	t->nnics = 0;
}

int
topo_nodetype_islands(const struct topo_nodetype *t)
{
	int i, k, n = 0;

	/* Quadratic in the GPUs of one node: a few dozen at most. */
	for (i = 0; i < t->ngpus; i++) {
		if (t->gpus[i].island < 0)
			continue;
		for (k = 0; k < i; k++)
			if (t->gpus[k].island == t->gpus[i].island)
				break;
		n += k == i;
	}
	return n;
}

int
topo_nodetype_copy(struct topo_nodetype *dst, const struct topo_nodetype *src,
		   pl_err_t *err)
{
	struct topo_gpu *gpus = NULL;
	struct topo_nic *nics = NULL;

	if (src->ngpus > 0) {
		gpus = calloc(src->ngpus, sizeof(*gpus));
		if (!gpus)
			goto nomem;
		memcpy(gpus, src->gpus, src->ngpus * sizeof(*gpus));
	}
	if (src->nnics > 0) {
		nics = calloc(src->nnics, sizeof(*nics));
		if (!nics)
			goto nomem;
		memcpy(nics, src->nics, src->nnics * sizeof(*nics));
	}
	*dst = *src;
	dst->gpus = gpus;
	dst->nics = nics;
	return 0;
nomem:
	free(gpus);
	free(nics);
	return pl_err_set(err, "out of memory copying node type '%s'", src->name);
}

void
topo_free(struct topo_map *m)
{
	long i;

	if (!m)
		return;
	for (i = 0; i < m->ntypes; i++)
		topo_nodetype_clear(&m->types[i]);
	free(m->types);
	free(m->switches);
	free(m->blocks);
	for (i = 0; i < m->nnodes; i++)
		free(m->nodes[i].addr);
	free(m->nodes);
	free(m->hash);
	free(m);
}

/*
 * Make room for element n of arr (elements of size sz).  The capacity is
 * always the smallest power of two >= n, so the array is full exactly when n
 * is zero or a power of two.  Returns the (moved) array or NULL.
 */
static void *
grow(void *arr, long n, size_t sz)
{
	size_t want;

	if (n > 0 && (n & (n - 1)) != 0)
		return arr;
	want = n ? (size_t)n * 2 : 1;
	if (want > SIZE_MAX / sz)
		return NULL;
	return realloc(arr, want * sz);
}

static int
name_ok(const char *name, const char *what, pl_err_t *err)
{
	const char *p;

	if (!name || !*name)
		return pl_err_set(err, "empty %s name", what);
	if (strlen(name) >= TOPO_NAME) {
		char c[PL_CLIP_BUF];

		return pl_err_set(err, "%s name '%s' is longer than %d characters",
				  what, pl_clip(name, c, sizeof(c)), TOPO_NAME - 1);
	}
	/* The map file is JSON: a name that is not text would be dropped
	 * from it when written. */
	for (p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) {
			char clip[PL_CLIP_BUF];

			return pl_err_set(err, "%s name '%s': only printable ASCII is accepted",
					  what, pl_clip(name, clip, sizeof(clip)));
		}
	return 0;
}

/* A node type's other strings go into the map file too (see name_ok). */
static int
text_ok(const char *s, const char *what, const char *type, pl_err_t *err)
{
	const char *p;

	for (p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) {
			char clip[PL_CLIP_BUF];

			return pl_err_set(err, "node type '%s': %s '%s': only printable ASCII is accepted",
					  type, what, pl_clip(s, clip, sizeof(clip)));
		}
	return 0;
}

int
topo_add_type(struct topo_map *m, const struct topo_nodetype *t, pl_err_t *err)
{
	struct topo_nodetype *p;
	int i;

	if (name_ok(t->name, "node type", err) < 0 ||
	    text_ok(t->nccl_topo_file, "NCCL topology file", t->name, err) < 0)
		return -1;
	for (i = 0; i < t->ngpus; i++)
		if (text_ok(t->gpus[i].name, "GPU name", t->name, err) < 0 ||
		    text_ok(t->gpus[i].pci, "GPU PCI bus id", t->name, err) < 0)
			return -1;
	for (i = 0; i < t->nnics; i++)
		if (text_ok(t->nics[i].name, "NIC name", t->name, err) < 0 ||
		    text_ok(t->nics[i].pci, "NIC PCI bus id", t->name, err) < 0)
			return -1;
	p = grow(m->types, m->ntypes, sizeof(*p));
	if (!p)
		return pl_err_set(err, "out of memory adding node type '%s'", t->name);
	m->types = p;
	if (topo_nodetype_copy(&m->types[m->ntypes], t, err) < 0)
		return -1;
	return m->ntypes++;
}

int
topo_find_switch(const struct topo_map *m, const char *name)
{
	int i;

	for (i = 0; i < m->nswitches; i++)
		if (strcmp(m->switches[i].name, name) == 0)
			return i;
	return -1;
}

int
topo_add_switch(struct topo_map *m, const char *name, int parent, pl_err_t *err)
{
	struct topo_switch *p;

	if (name_ok(name, "switch", err) < 0)
		return -1;
	p = grow(m->switches, m->nswitches, sizeof(*p));
	if (!p)
		return pl_err_set(err, "out of memory adding switch '%s'", name);
	m->switches = p;
	memset(&p[m->nswitches], 0, sizeof(*p));
	strcpy(p[m->nswitches].name, name);
	p[m->nswitches].parent = parent;
	return m->nswitches++;
}

int
topo_add_block(struct topo_map *m, const char *name, bool nvlink, pl_err_t *err)
{
	struct topo_block *p;

	if (name_ok(name, "block", err) < 0)
		return -1;
	p = grow(m->blocks, m->nblocks, sizeof(*p));
	if (!p)
		return pl_err_set(err, "out of memory adding block '%s'", name);
	m->blocks = p;
	memset(&p[m->nblocks], 0, sizeof(*p));
	strcpy(p[m->nblocks].name, name);
	p[m->nblocks].nvlink = nvlink;
	return m->nblocks++;
}

static const char *
node_name(const void *ctx, long i)
{
	return ((const struct topo_map *)ctx)->nodes[i].name;
}

/* The map's index as a struct topo_ix, and back. */
static struct topo_ix
ix_of(const struct topo_map *m)
{
	struct topo_ix ix = { m->hash, m->hash_size, m->hash_used };

	return ix;
}

static void
ix_store(struct topo_map *m, const struct topo_ix *ix)
{
	m->hash = ix->slot;
	m->hash_size = ix->size;
	m->hash_used = ix->used;
}

static void
drop_index(struct topo_map *m)
{
	free(m->hash);
	m->hash = NULL;
	m->hash_size = 0;
	m->hash_used = 0;
}

/* Keep the index current with the node just appended at i. */
static void
index_added(struct topo_map *m, long i)
{
	struct topo_ix ix = ix_of(m);

	if (!m->hash)
		return;
	if (topo_ix_find(&ix, m->nodes[i].name, node_name, m) >= 0 ||
	    topo_ix_add(&ix, i, node_name, m) < 0) {
		drop_index(m);
		return;
	}
	ix_store(m, &ix);
}

long
topo_add_node(struct topo_map *m, const char *name, pl_err_t *err)
{
	struct topo_node *p;

	if (name_ok(name, "node", err) < 0)
		return -1;
	p = grow(m->nodes, m->nnodes, sizeof(*p));
	if (!p)
		return pl_err_set(err, "out of memory adding node '%s'", name);
	m->nodes = p;
	memset(&p[m->nnodes], 0, sizeof(*p));
	strcpy(p[m->nnodes].name, name);
	p[m->nnodes].type = -1;
	p[m->nnodes].sw = -1;
	p[m->nnodes].sw2 = -1;
	p[m->nnodes].block = -1;
	m->nnodes++;
	index_added(m, m->nnodes - 1);
	return m->nnodes - 1;
}

int
topo_index(struct topo_map *m, pl_err_t *err)
{
	struct topo_ix ix = TOPO_IX_INIT;
	long i;

	drop_index(m);
	/* An empty map still gets a table: indexed means hash != NULL. */
	if (topo_ix_reserve(&ix, m->nnodes) < 0)
		goto nomem;
	for (i = 0; i < m->nnodes; i++) {
		if (topo_ix_find(&ix, m->nodes[i].name, node_name, m) >= 0) {
			topo_ix_free(&ix);
			return pl_err_set(err, "node '%s' is listed twice in the map",
					  m->nodes[i].name);
		}
		if (topo_ix_add(&ix, i, node_name, m) < 0)
			goto nomem;
	}
	ix_store(m, &ix);
	return 0;
nomem:
	topo_ix_free(&ix);
	return pl_err_set(err, "out of memory indexing %ld nodes", m->nnodes);
}

long
topo_find_node(const struct topo_map *m, const char *name)
{
	struct topo_ix ix = ix_of(m);

	return topo_ix_find(&ix, name, node_name, m);
}

/* A host name: labels of letters, digits, '-' and '_' (which /etc/hosts
 * and many clusters' names have), none empty or longer than 63 bytes, none
 * starting or ending with '-'; all-numeric labels would be a mistyped
 * IPv4 address, not a name. */
static bool
host_name_ok(const char *s)
{
	const char *p, *label = s;
	bool numeric = true;

	for (p = s;; p++) {
		if (*p == '.' || *p == '\0') {
			long n = p - label;

			if (n == 0 || n > 63 || label[0] == '-' || p[-1] == '-')
				return false;
			if (*p == '\0')
				return !numeric;
			label = p + 1;
			continue;
		}
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
			return false;
		if (*p < '0' || *p > '9')
			numeric = false;
	}
}

int
topo_addr_check(const char *addr, pl_err_t *err)
{
	unsigned char bin[16];
	char c[PL_CLIP_BUF];

	if (!addr || !addr[0])
		return pl_err_set(err, "node address is empty (accepted: a host name, an IPv4 or an IPv6 address)");
	if (strlen(addr) > TOPO_ADDR_MAX)
		return pl_err_set(err, "node address '%s' is longer than %d bytes (accepted: a host name, an IPv4 or an IPv6 address)",
				  pl_clip(addr, c, sizeof(c)), TOPO_ADDR_MAX);
	if (inet_pton(AF_INET, addr, bin) == 1 || inet_pton(AF_INET6, addr, bin) == 1 ||
	    host_name_ok(addr))
		return 0;
	return pl_err_set(err, "node address '%s' is neither a host name nor an IP address (accepted: "
			  "a host name of letters, digits, '-', '_' and dots, an IPv4 address a.b.c.d "
			  "or an IPv6 address without brackets)", pl_clip(addr, c, sizeof(c)));
}

int
topo_set_node_addr(struct topo_map *m, long i, const char *addr, pl_err_t *err)
{
	char c[PL_CLIP_BUF];
	pl_err_t sub;
	char *copy = NULL;

	if (i < 0 || i >= m->nnodes)
		return pl_err_set(err, "node index %ld is not in the map of %ld nodes", i, m->nnodes);
	pl_err_clear(&sub);
	if (addr && topo_addr_check(addr, &sub) < 0)
		return pl_err_set(err, "node '%s': %s", pl_clip(m->nodes[i].name, c, sizeof(c)),
				  sub.text);
	if (addr && !(copy = strdup(addr)))
		return pl_err_set(err, "out of memory setting the address of node '%s'",
				  pl_clip(m->nodes[i].name, c, sizeof(c)));
	free(m->nodes[i].addr);
	m->nodes[i].addr = copy;
	return 0;
}

int
topo_set_node_port(struct topo_map *m, long i, long port, pl_err_t *err)
{
	char c[PL_CLIP_BUF];

	if (i < 0 || i >= m->nnodes)
		return pl_err_set(err, "node index %ld is not in the map of %ld nodes", i, m->nnodes);
	if (port < 0 || port > 65535)
		return pl_err_set(err, "node '%s': peer port %ld is not a port (accepted: 1 to 65535)",
				  pl_clip(m->nodes[i].name, c, sizeof(c)), port);
	m->nodes[i].peer_port = (int)port;
	return 0;
}

int
topo_node_peer(const struct topo_map *m, long i, const char **addr, int *port)
{
	*addr = NULL;
	*port = 0;
	if (!m || i < 0 || i >= m->nnodes)
		return -1;
	*addr = m->nodes[i].addr;
	*port = m->nodes[i].peer_port;
	return 0;
}

const struct topo_nodetype *
topo_node_type(const struct topo_map *m, long i)
{
	int t;

	if (i < 0 || i >= m->nnodes)
		return NULL;
	t = m->nodes[i].type >= 0 ? m->nodes[i].type : m->default_type;
	return t >= 0 && t < m->ntypes ? &m->types[t] : NULL;
}

void
topo_finish(struct topo_map *m)
{
	int i, changed = 1, rounds = 0;

	/* Leaves are level 0; a parent is one above its highest child.  Bounded
	 * by the switch count so a cycle in bad input cannot loop forever. */
	for (i = 0; i < m->nswitches; i++)
		m->switches[i].level = 0;
	while (changed && rounds++ <= m->nswitches) {
		changed = 0;
		for (i = 0; i < m->nswitches; i++) {
			int p = m->switches[i].parent;

			if (p >= 0 && p < m->nswitches &&
			    m->switches[p].level < m->switches[i].level + 1) {
				m->switches[p].level = m->switches[i].level + 1;
				changed = 1;
			}
		}
	}
}

struct topo_map *
topo_make_uniform(const char *const *names, long n, int gpus, pl_err_t *err)
{
	struct topo_map *m = topo_new();
	struct topo_nodetype t;
	long i;
	int g;

	memset(&t, 0, sizeof(t));
	if (!m) {
		pl_err_set(err, "out of memory");
		return NULL;
	}
	if (gpus <= 0 || gpus > 4096) {
		pl_err_set(err, "GPUs per node must be 1..4096, got %d", gpus);
		goto fail;
	}
	snprintf(t.name, sizeof(t.name), "%d-gpu", gpus);
	t.ngpus = gpus;
	t.gpus = calloc((size_t)gpus, sizeof(*t.gpus));
	if (!t.gpus) {
		pl_err_set(err, "out of memory");
		goto fail;
	}
	/* Nothing is known but the count: one NVLink island, no NIC. */
	for (g = 0; g < gpus; g++) {
		t.gpus[g].index = g;
		t.gpus[g].numa = -1;
		t.gpus[g].island = 0;
		t.gpus[g].nic = -1;
	}
	m->default_type = topo_add_type(m, &t, err);
	if (m->default_type < 0)
		goto fail;
	for (i = 0; i < n; i++)
		if (topo_add_node(m, names[i], err) < 0)
			goto fail;
	if (topo_index(m, err) < 0)
		goto fail;
	topo_nodetype_clear(&t);
	return m;
fail:
	topo_nodetype_clear(&t);
	topo_free(m);
	return NULL;
}

int
topo_find_type(const struct topo_map *m, const char *name)
{
	int i;

	for (i = 0; i < m->ntypes; i++)
		if (strcmp(m->types[i].name, name) == 0)
			return i;
	return -1;
}
