/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `nvidia-smi topo -m` (topo_read_nvsmi_text): a node type that keeps
 * topo.h's promises and goes into a map file that loads again. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_topo.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topo_nodetype t;
	char *text = fuzz_text(data, size);
	pl_err_t err;

	memset(&t, 0, sizeof(t));
	pl_err_clear(&err);
	if (topo_read_nvsmi_text(&t, text, "nvidia-smi", &err) < 0)
		FUZZ_ASSERT(pl_err_isset(&err), "a refusal has a message");
	else {
		fuzz_check_type(&t);
		/* As layoutctl names a type its source left unnamed. */
		if (!t.name[0])
			snprintf(t.name, sizeof(t.name), "default");
		fuzz_check_type_in_map(&t);
	}
	topo_nodetype_clear(&t);
	free(text);
	return 0;
}
