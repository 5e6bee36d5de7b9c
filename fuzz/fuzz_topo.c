/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Checks the topology fuzz targets share (see fuzz_topo.h). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_topo.h"

#define TERMINATED(a) (memchr((a), '\0', sizeof(a)) != NULL)

void
fuzz_check_type(const struct topo_nodetype *t)
{
	int i;

	FUZZ_ASSERT(TERMINATED(t->name) && TERMINATED(t->nccl_topo_file), "type names terminated");
	FUZZ_ASSERT(t->ngpus >= 0 && t->nnics >= 0, "counts %d, %d", t->ngpus, t->nnics);
	FUZZ_ASSERT(t->ngpus == 0 || t->gpus, "%d GPUs and an array", t->ngpus);
	FUZZ_ASSERT(t->nnics == 0 || t->nics, "%d NICs and an array", t->nnics);
	for (i = 0; i < t->ngpus; i++) {
		const struct topo_gpu *g = &t->gpus[i];

		FUZZ_ASSERT(TERMINATED(g->pci) && TERMINATED(g->name), "GPU %d names terminated", i);
		FUZZ_ASSERT(g->index >= 0, "GPU %d: index %d", i, g->index);
		FUZZ_ASSERT(i == 0 || t->gpus[i - 1].index < g->index, "GPU %d: index %d after %d", i,
			    g->index, i ? t->gpus[i - 1].index : 0);
		FUZZ_ASSERT(g->nic >= -1 && g->nic < t->nnics, "GPU %d: NIC %d of %d", i, g->nic,
			    t->nnics);
	}
	for (i = 0; i < t->nnics; i++)
		FUZZ_ASSERT(TERMINATED(t->nics[i].name) && TERMINATED(t->nics[i].pci),
			    "NIC %d names terminated", i);
}

void
fuzz_check_map(const struct topo_map *m)
{
	struct topo_map *back;
	char *text;
	pl_err_t err;
	long i;

	FUZZ_ASSERT(m->ntypes >= 0 && m->nswitches >= 0 && m->nblocks >= 0 && m->nnodes >= 0,
		    "counts");
	FUZZ_ASSERT(m->default_type >= -1 && m->default_type < m->ntypes, "default type %d of %d",
		    m->default_type, m->ntypes);
	for (i = 0; i < m->ntypes; i++)
		fuzz_check_type(&m->types[i]);
	for (i = 0; i < m->nswitches; i++)
		FUZZ_ASSERT(m->switches[i].parent >= -1 && m->switches[i].parent < m->nswitches &&
				    TERMINATED(m->switches[i].name),
			    "switch %ld: parent %d of %d", i, m->switches[i].parent, m->nswitches);
	for (i = 0; i < m->nnodes; i++) {
		const struct topo_node *n = &m->nodes[i];

		FUZZ_ASSERT(TERMINATED(n->name), "node %ld name terminated", i);
		FUZZ_ASSERT(n->type >= -1 && n->type < m->ntypes, "node %ld: type %d", i, n->type);
		FUZZ_ASSERT(n->sw >= -1 && n->sw < m->nswitches && n->sw2 >= -1 &&
				    n->sw2 < m->nswitches,
			    "node %ld: switches %d, %d of %d", i, n->sw, n->sw2, m->nswitches);
		FUZZ_ASSERT(n->block >= -1 && n->block < m->nblocks, "node %ld: block %d of %d", i,
			    n->block, m->nblocks);
	}
	text = topo_to_json_text(m);
	FUZZ_ASSERT(text != NULL, "the map serialises");
	pl_err_clear(&err);
	back = topo_from_json_text(text, &err);
	FUZZ_ASSERT(back != NULL, "the map file written loads again: %s", err.text);
	FUZZ_ASSERT(back->nnodes == m->nnodes && back->nswitches == m->nswitches &&
			    back->nblocks == m->nblocks,
		    "and keeps its nodes (%ld/%ld), switches (%d/%d) and blocks (%d/%d)",
		    back->nnodes, m->nnodes, back->nswitches, m->nswitches, back->nblocks,
		    m->nblocks);
	topo_free(back);
	free(text);
}

void
fuzz_check_type_in_map(const struct topo_nodetype *t)
{
	struct topo_map *m = topo_new();
	pl_err_t err;

	FUZZ_ASSERT(m != NULL, "a map");
	pl_err_clear(&err);
	m->default_type = topo_add_type(m, t, &err);
	if (m->default_type < 0) {
		/* layoutctl reports this and writes no map. */
		FUZZ_ASSERT(pl_err_isset(&err), "a refused type has a message");
		topo_free(m);
		return;
	}
	FUZZ_ASSERT(topo_add_node(m, "node1", &err) >= 0 && topo_index(m, &err) == 0, "a node: %s",
		    err.text);
	fuzz_check_map(m);
	topo_free(m);
}

void
fuzz_check_read_map(struct topo_map *m)
{
	pl_err_t err;

	pl_err_clear(&err);
	if (topo_index(m, &err) < 0) {
		FUZZ_ASSERT(pl_err_isset(&err), "a refused index has a message");
		return;
	}
	topo_finish(m);
	fuzz_check_map(m);
}
