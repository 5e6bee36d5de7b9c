/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The placement answer (proto_placement_parse, then spk_answer_check) for
 * the lab step in each view the plugin asks for, then for the step the
 * answer names; an answer the check passes is then read the way the plugin
 * reads it.  Every answer is also checked against a concrete and an auto
 * spec (spk_answer_layout_check), and its "auto" line must be printable.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "fuzz_lab.h"
#include "spk_answer.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const views[] = { "hostfile", "all", "node:node1", "node:node2",
					     "node:node3", "node:node4", "node:node5" };
	static const char *const specs[] = { "tp8,pp4", "auto,model=7b", "auto,tp8,zero=1,gbs=64" };
	struct proto_placement p;
	char *text = fuzz_text(data, size);
	pl_err_t err;
	size_t v;

	pl_err_clear(&err);
	if (proto_placement_parse(text, &p, &err) < 0) {
		FUZZ_ASSERT(pl_err_isset(&err), "a refusal has a message");
		goto out;
	}
	for (v = 0; p.choice[v]; v++)
		FUZZ_ASSERT((unsigned char)p.choice[v] >= 0x20 && p.choice[v] != 0x7f,
			    "the auto line has no control character");
	for (v = 0; v < sizeof(specs) / sizeof(specs[0]); v++) {
		pl_err_clear(&err);
		if (spk_answer_layout_check(&p, specs[v], &err) < 0)
			FUZZ_ASSERT(pl_err_isset(&err), "a refused layout has a message");
	}
	for (v = 0; v < sizeof(views) / sizeof(views[0]); v++)
		fuzz_answer_use(&p, fuzz_lab_names, fuzz_lab_ntasks, LAB_NODES, views[v], &err);
	/* Then for the step the answer itself names, so that answers which
	 * get past the node check reach the checks of tasks and rank_nodes. */
	if (p.nnodes > 0 && p.nnodes <= 64) {
		const char *names[64];
		long ntasks[64], i;
		char view[TOPO_NAME + 8];

		for (i = 0; i < p.nnodes; i++) {
			names[i] = p.nodes[i].name;
			ntasks[i] = p.nodes[i].ntasks;
		}
		snprintf(view, sizeof(view), "node:%s", names[p.nnodes - 1]);
		fuzz_answer_use(&p, names, ntasks, p.nnodes, "hostfile", &err);
		fuzz_answer_use(&p, names, ntasks, p.nnodes, "all", &err);
		fuzz_answer_use(&p, names, ntasks, p.nnodes, view, &err);
	}
out:
	proto_placement_free(&p);
	free(text);
	return 0;
}
