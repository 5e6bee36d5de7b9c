/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nccl-tests all_reduce_perf output (topo_read_nccltests) and the format
 * guess (topo_sniff), both of which read a file. */
#include <math.h>

#include "fuzz.h"
#include "topo.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nccltests_result r;
	const char *path = fuzz_file(data, size);
	pl_err_t err;

	pl_err_clear(&err);
	if (topo_read_nccltests(&r, path, &err) < 0)
		FUZZ_ASSERT(pl_err_isset(&err), "a refusal has a message");
	else
		FUZZ_ASSERT(r.nrows > 0 && r.nranks >= 0 && r.nnodes >= 0 && isfinite(r.busbw_max) &&
				    r.busbw_max >= 0 && isfinite(r.busbw_avg) && r.busbw_avg >= 0,
			    "rows %ld, ranks %d, nodes %d, busbw %g/%g", r.nrows, r.nranks, r.nnodes,
			    r.busbw_max, r.busbw_avg);
	topo_sniff(path);
	return 0;
}
