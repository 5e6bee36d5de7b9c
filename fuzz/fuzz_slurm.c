/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm topology.conf (topo_read_slurm_text), tree and block forms; the
 * first byte's low bit says whether blocks are NVLink domains.  A map read
 * from it indexes, and its map file loads again.
 */
#include <stdlib.h>

#include "fuzz.h"
#include "fuzz_topo.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topo_map *m = topo_new();
	char *text = fuzz_text(data, size);
	pl_err_t err;

	FUZZ_ASSERT(m != NULL, "a map");
	pl_err_clear(&err);
	if (topo_read_slurm_text(m, text, "topology.conf", size && (data[0] & 1), &err) < 0) {
		FUZZ_ASSERT(pl_err_isset(&err), "a refusal has a message");
		goto out;
	}
	fuzz_check_read_map(m);
out:
	topo_free(m);
	free(text);
	return 0;
}
