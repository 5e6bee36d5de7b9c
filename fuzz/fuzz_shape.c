/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * srun's command line (pl_shape_parse); the input is argv[1...],
 * NUL-separated, after argv[0] "srun".
 */
#include <stdlib.h>

#include "fuzz.h"
#include "pl_shape.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pl_shape s;
	int ac;
	char **av = fuzz_argv(data, size, "srun", &ac);

	pl_shape_parse(ac, av, &s);
	FUZZ_ASSERT(s.ntasks >= 0 && s.nnodes >= 0 && s.ntasks_per_node >= 0,
		    "counts are never negative (%ld, %ld, %ld)", s.ntasks, s.nnodes,
		    s.ntasks_per_node);
	fuzz_argv_free(av);
	return 0;
}
