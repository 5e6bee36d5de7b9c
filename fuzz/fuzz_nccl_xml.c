/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NCCL topology XML (topo_read_nccl_xml, which reads a file): a node type
 * that keeps topo.h's promises and goes into a map file that loads again. */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_topo.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topo_nodetype t;
	pl_err_t err;

	memset(&t, 0, sizeof(t));
	pl_err_clear(&err);
	if (topo_read_nccl_xml(&t, fuzz_file(data, size), &err) < 0)
		FUZZ_ASSERT(pl_err_isset(&err), "a refusal has a message");
	else {
		fuzz_check_type(&t);
		/* As layoutctl names a type its source left unnamed. */
		if (!t.name[0])
			snprintf(t.name, sizeof(t.name), "default");
		fuzz_check_type_in_map(&t);
	}
	topo_nodetype_clear(&t);
	return 0;
}
