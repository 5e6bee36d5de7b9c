/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `scontrol show nodes` output (topo_read_slurm_nodes_text), both forms.
 * A refusal says why and hands nothing out; every node accepted has a
 * name, an address the address check passes (or none), a port in range
 * (or 0), and the line its record starts on.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "topo.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topo_slurm_node *nodes = NULL;
	char *text = fuzz_text(data, size);
	pl_err_t err;
	long n = -1, i, last = 0;

	pl_err_clear(&err);
	if (topo_read_slurm_nodes_text(text, "scontrol", &nodes, &n, &err) < 0) {
		FUZZ_ASSERT(pl_err_isset(&err), "a refusal has a message");
		FUZZ_ASSERT(nodes == NULL, "a refusal hands out no nodes");
		goto out;
	}
	FUZZ_ASSERT(n > 0 && nodes != NULL, "an accepted listing has a node");
	for (i = 0; i < n; i++) {
		pl_err_t e2;

		FUZZ_ASSERT(nodes[i].name[0] != '\0', "a node has a name");
		FUZZ_ASSERT(memchr(nodes[i].name, '\0', sizeof(nodes[i].name)) != NULL,
			    "the name ends within its array");
		FUZZ_ASSERT(memchr(nodes[i].addr, '\0', sizeof(nodes[i].addr)) != NULL,
			    "the address ends within its array");
		pl_err_clear(&e2);
		FUZZ_ASSERT(nodes[i].addr[0] == '\0' || topo_addr_check(nodes[i].addr, &e2) == 0,
			    "an address the address check passes");
		FUZZ_ASSERT(nodes[i].port >= 0 && nodes[i].port <= 65535, "a port in range");
		FUZZ_ASSERT(nodes[i].line >= 1 && nodes[i].line >= last, "records in the input's order");
		last = nodes[i].line;
	}
out:
	free(nodes);
	free(text);
	return 0;
}
