/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm hostlist expressions (hosts_expand, hosts_compress): the compact
 * form of an expansion expands to the very same names.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hosts.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hosts h = { 0 }, back = { 0 };
	char *expr = fuzz_text(data, size), *compact = NULL;
	pl_err_t err;
	long i;

	pl_err_clear(&err);
	/* A small limit: the fuzzer must not spend its time writing names. */
	if (hosts_expand(&h, expr, 4096, &err) < 0) {
		FUZZ_ASSERT(pl_err_isset(&err), "a refused list has a message: %s", expr);
		goto out;
	}
	compact = hosts_compress(&h);
	FUZZ_ASSERT(compact != NULL, "%ld names compress", h.n);
	pl_err_clear(&err);
	FUZZ_ASSERT(hosts_expand(&back, compact, 4096, &err) == 0, "'%s' (from '%s') expands: %s",
		    compact, expr, err.text);
	FUZZ_ASSERT(back.n == h.n, "'%s' gives %ld names, '%s' gave %ld", compact, back.n, expr,
		    h.n);
	for (i = 0; i < h.n; i++)
		FUZZ_ASSERT(strcmp(h.names[i], back.names[i]) == 0, "name %ld: '%s' became '%s'", i,
			    h.names[i], back.names[i]);
out:
	hosts_free(&h);
	hosts_free(&back);
	free(compact);
	free(expr);
	return 0;
}
