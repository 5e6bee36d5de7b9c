/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The --parallel-layout= spec (layout_parse, layout_resolve, layout_format).
 * A spec that parses formats to a canonical spec that parses again to the
 * same canonical text, and resolving never reads past the layout.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "layout.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long worlds[] = { 1, 8, 64, 96, 1024, 65536 };
	struct pl_layout l, again;
	char *spec = fuzz_text(data, size);
	char canon[1024], canon2[1024];
	pl_err_t err;
	size_t i;
	long mp;
	int n;

	pl_err_clear(&err);
	if (layout_parse(spec, &l, &err) < 0) {
		FUZZ_ASSERT(pl_err_isset(&err), "a refused spec has a message: %s", spec);
		goto out;
	}
	n = layout_format(&l, canon, sizeof(canon));
	FUZZ_ASSERT(n >= 0 && (size_t)n < sizeof(canon), "format fits (%d)", n);
	pl_err_clear(&err);
	FUZZ_ASSERT(layout_parse(canon, &again, &err) == 0, "canonical '%s' parses: %s", canon,
		    err.text);
	layout_format(&again, canon2, sizeof(canon2));
	FUZZ_ASSERT(strcmp(canon, canon2) == 0, "'%s' formats as itself, not '%s'", canon, canon2);

	mp = layout_model_parallel(&l);
	for (i = 0; i < sizeof(worlds) / sizeof(worlds[0]) + 2; i++) {
		struct pl_layout r = l;
		long w = i < 2 ? mp * (long)(i + 1) : worlds[i - 2];

		pl_err_clear(&err);
		if (w > 0 && layout_resolve(&r, w, &err) == 0) {
			FUZZ_ASSERT(layout_world(&r) == w, "resolved world %ld is %ld", w,
				    layout_world(&r));
			layout_expert_dp(&r);
			layout_format(&r, canon, sizeof(canon));
		}
	}
out:
	free(spec);
	return 0;
}
