/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm topology.yaml (topo_read_slurm_yaml_text), its default topology;
 * the first byte's low bit says whether blocks are NVLink domains.  What is
 * accepted says which topology it read, and its map indexes and loads again
 * from its map file.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_topo.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topo_map *m = topo_new();
	struct topo_yaml_info info;
	char *text = fuzz_text(data, size);
	pl_err_t err;

	FUZZ_ASSERT(m != NULL, "a map");
	pl_err_clear(&err);
	if (topo_read_slurm_yaml_text(m, text, "topology.yaml", NULL, size && (data[0] & 1), &info,
				      &err) < 0) {
		FUZZ_ASSERT(pl_err_isset(&err), "a refusal has a message");
		goto out;
	}
	FUZZ_ASSERT(info.ntopologies >= 1, "an accepted file has a topology");
	FUZZ_ASSERT(strcmp(info.kind, "tree") == 0 || strcmp(info.kind, "block") == 0 ||
		    strcmp(info.kind, "flat") == 0, "its kind is tree, block or flat");
	FUZZ_ASSERT(strcmp(info.kind, "flat") != 0 || (m->nnodes == 0 && m->nswitches == 0),
		    "a flat topology adds nothing");
	fuzz_check_read_map(m);
out:
	topo_free(m);
	free(text);
	return 0;
}
