/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The placement request (proto_request_parse), then answered on the lab
 * map as layoutd answers it (proto_answer, proto_placement_json).  A 200 answer parses, and passes the
 * plugin's own check for the step and view that were asked for.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_lab.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_request req;
	struct proto_placement p, placed;
	char *text = fuzz_text(data, size), *answer = NULL;
	const char **names = NULL;
	long *ntasks = NULL, i;
	pl_err_t err;
	int status = 0;

	memset(&p, 0, sizeof(p));
	memset(&placed, 0, sizeof(placed));
	pl_err_clear(&err);
	if (proto_request_parse(text, &req, &err) < 0) {
		FUZZ_ASSERT(pl_err_isset(&err), "a refusal has a message");
		goto out;
	}
	if (proto_answer(fuzz_lab_map(), &req, &placed, &status, &err) < 0) {
		FUZZ_ASSERT((status == 400 || status == 422) && pl_err_isset(&err), "status %d",
			    status);
		goto out;
	}
	FUZZ_ASSERT(status == 200, "status %d with an answer", status);
	answer = proto_placement_json(&placed);
	FUZZ_ASSERT(answer != NULL, "an answer");
	pl_err_clear(&err);
	FUZZ_ASSERT(proto_placement_parse(answer, &p, &err) == 0, "layoutd's answer parses: %s",
		    err.text);
	names = calloc((size_t)req.nnodes + 1, sizeof(*names));
	ntasks = calloc((size_t)req.nnodes + 1, sizeof(*ntasks));
	FUZZ_ASSERT(names && ntasks, "memory");
	for (i = 0; i < req.nnodes; i++) {
		names[i] = req.nodes[i].name;
		ntasks[i] = req.nodes[i].ntasks;
	}
	FUZZ_ASSERT(fuzz_answer_use(&p, names, ntasks, req.nnodes, req.view, &err) == 0,
		    "layoutd's answer passes the plugin's check: %s", err.text);
out:
	proto_request_free(&req);
	proto_placement_free(&placed);
	proto_placement_free(&p);
	free(names);
	free(ntasks);
	free(answer);
	free(text);
	return 0;
}
