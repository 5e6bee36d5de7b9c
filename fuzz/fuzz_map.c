/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The map file (topo_from_json_text): a map it accepts keeps topo.h's
 * promises, and the file written for it loads again. */
#include <stdlib.h>

#include "fuzz.h"
#include "fuzz_topo.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct topo_map *m;
	pl_err_t err;

	pl_err_clear(&err);
	m = topo_from_json_text(text, &err);
	if (!m)
		FUZZ_ASSERT(pl_err_isset(&err), "a refusal has a message");
	else {
		fuzz_check_map(m);
		topo_free(m);
	}
	free(text);
	return 0;
}
