/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * srun's command line (spk_shape_parse), read with each release's option
 * table in turn; the input is argv[1...], NUL-separated, after argv[0]
 * "srun".
 */
#include <stdlib.h>

#include "fuzz.h"
#include "spk_shape.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spk_shape s;
	size_t i;
	int ac;
	char **av = fuzz_argv(data, size, "srun", &ac);

	for (i = 0; i < spk_nreleases; i++) {
		spk_shape_parse(&spk_releases[i], ac, av, &s);
		FUZZ_ASSERT(s.ntasks >= 0 && s.nnodes >= 0 && s.ntasks_per_node >= 0,
			    "%s: counts are never negative (%ld, %ld, %ld)", spk_releases[i].name,
			    s.ntasks, s.nnodes, s.ntasks_per_node);
	}
	fuzz_argv_free(av);
	return 0;
}
