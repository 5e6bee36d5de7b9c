/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugstack.conf arguments (spk_args_parse); the input is the argument list,
 * NUL-separated.  A refusal always says why.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "spk_plugin.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spk_conf c;
	pl_err_t err;
	int ac;
	char **av = fuzz_argv(data, size, NULL, &ac);

	pl_err_clear(&err);
	if (spk_args_parse(ac, av, &c, &err) < 0)
		FUZZ_ASSERT(pl_err_isset(&err), "a refusal has a message");
	else
		FUZZ_ASSERT(memchr(c.map, '\0', sizeof(c.map)) && memchr(c.socket, '\0', sizeof(c.socket)) &&
			    memchr(c.force, '\0', sizeof(c.force)), "strings stay terminated");
	fuzz_argv_free(av);
	return 0;
}
