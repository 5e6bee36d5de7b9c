/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The protocol targets' map and step, and an answer used as the plugin
 * uses it (see fuzz_lab.h). */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_lab.h"
#include "spk_answer.h"

const char *const fuzz_lab_names[LAB_NODES] = { "node1", "node2", "node3", "node4" };
const long fuzz_lab_ntasks[LAB_NODES] = { 8, 8, 8, 8 };

const struct topo_map *
fuzz_lab_map(void)
{
	static struct topo_map *m;
	static const char *const none[] = { NULL };
	pl_err_t err;

	if (m)
		return m;
	pl_err_clear(&err);
	m = topo_make_uniform(none, 0, 8, &err);
	FUZZ_ASSERT(m != NULL, "the lab map: %s", err.text);
	FUZZ_ASSERT(topo_read_slurm_text(m, "SwitchName=leaf0 Nodes=node[1,3]\n"
					 "SwitchName=leaf1 Nodes=node[2,4]\n"
					 "SwitchName=spine Switches=leaf[0-1]\n",
					 "lab", true, &err) == 0 &&
			    topo_index(m, &err) == 0,
		    "the lab switches: %s", err.text);
	snprintf(m->name, sizeof(m->name), "lab");
	return m;
}

/* Volatile sums keep the reads below from being optimised away. */
static volatile long sink;

int
fuzz_answer_use(const struct proto_placement *p, const char *const *names, const long *ntasks,
		long nnodes, const char *view, pl_err_t *err)
{
	long i, me = -1, world_here = 0;
	int a;

	pl_err_clear(err);
	if (spk_answer_check(p, names, ntasks, nnodes, view, err) < 0) {
		FUZZ_ASSERT(pl_err_isset(err), "a refused answer (view %s) has a message", view);
		return -1;
	}
	FUZZ_ASSERT(memchr(p->spec, '\0', sizeof(p->spec)) != NULL, "spec terminated");
	/* srun writing SLURM_HOSTFILE (spk_local.c): one node name per rank. */
	if (strcmp(view, "hostfile") == 0) {
		FUZZ_ASSERT(p->rank_nodes != NULL, "a hostfile answer that passed has rank_nodes");
		for (i = 0; i < p->world; i++)
			sink += (long)strlen(p->nodes[p->rank_nodes[i]].name);
		return 0;
	}
	/* slurmstepd (spk_remote.c): its node, MASTER_ADDR's node, NODE_RANK,
	 * and every task's variables. */
	if (strncmp(view, "node:", 5) == 0)
		for (i = 0; i < nnodes; i++)
			if (strcmp(names[i], view + 5) == 0) {
				me = i;
				break;
			}
	sink += (long)strlen(p->nodes[p->master_node].name);
	for (i = 0; i < nnodes; i++) {
		sink += p->nodes[i].min_rank;
		sink += (long)strlen(p->nodes[i].nccl_topo_file);
	}
	for (a = 0; a < PL_NAXES; a++)
		sink += p->layout.size[a];
	for (i = 0; i < p->ntasks; i++) {
		const struct proto_task *t = &p->tasks[i];

		FUZZ_ASSERT(t->node >= 0 && t->node < nnodes && t->rank >= 0 && t->rank < p->world &&
				    t->procid >= 0 && t->procid < p->world && t->local_id >= 0 &&
				    t->local_id < ntasks[t->node] && t->local_rank >= 0,
			    "task %ld of a passed answer is in range", i);
		FUZZ_ASSERT(me < 0 || t->node == me, "task %ld is on the node asked for", i);
		FUZZ_ASSERT(memchr(t->nic, '\0', sizeof(t->nic)) != NULL, "NIC name terminated");
		sink += (long)strlen(p->nodes[t->node].name) + t->local_rank;
		world_here++;
	}
	FUZZ_ASSERT(me < 0 || world_here == ntasks[me], "node %ld: %ld tasks of %ld", me, world_here,
		    me >= 0 ? ntasks[me] : 0);
	return 0;
}
