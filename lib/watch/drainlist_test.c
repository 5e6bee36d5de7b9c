/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "drainlist.h"
#include "tap.h"

struct tcase {
	const char *name, *line;
	bool want;
};

static const struct tcase cases[] = {
	{ "drained by us", "NodeName=node3 Arch=x86_64 CoresPerSocket=1 State=IDLE+DRAIN "
	  "ThreadsPerCore=1 Reason=parallel-layout: job 8.0 rank 13 gpu-stuck [root@2026-12-04T01:00:00]",
	  true },
	{ "draining, busy", "NodeName=n1 State=MIXED+DRAIN Reason=parallel-layout: job 9.1 rank 2 "
	  "gpu-stuck [slurm@2026-12-04T01:00:00] Comment=(null)", true },
	{ "drained (DRAINED)", "NodeName=n1 State=DRAINED Reason=parallel-layout: x", true },
	{ "another reason", "NodeName=n1 State=IDLE+DRAIN Reason=Kill task failed [root@t]", false },
	{ "our reason, no longer drained (resumed: the reason kept)",
	  "NodeName=n1 State=IDLE Reason=parallel-layout: job 1.0 rank 0 gpu-stuck", false },
	{ "down, not drained", "NodeName=n1 State=DOWN+NOT_RESPONDING Reason=parallel-layout: x",
	  false },
	{ "our prefix inside another reason", "NodeName=n1 State=DRAIN Reason=see parallel-layout: x",
	  false },
	{ "a reason naming a state", "NodeName=n1 State=IDLE Reason=State=DRAIN parallel-layout:",
	  false },
	{ "a node named like a key", "NodeName=State=DRAIN Reason=x State=IDLE", false },
	{ "no reason", "NodeName=n1 State=IDLE+DRAIN", false },
	{ "no state", "NodeName=n1 Reason=parallel-layout: x", false },
	{ "empty", "", false },
	{ "the reason cut short", "NodeName=n1 State=DRAIN Reason=parallel-lay", false },
};

int
main(void)
{
	size_t i;
	char cut[] = "NodeName=n1 State=DRAIN Reason=parallel-layout: job";

	plan((int)(sizeof(cases) / sizeof(cases[0])) + 1);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ok(drainlist_ours(cases[i].line, strlen(cases[i].line)) == cases[i].want,
		   "%s: %s", cases[i].name, cases[i].want ? "ours" : "not ours");
	/* Only len bytes are read: a line whose NUL is far away. */
	ok(!drainlist_ours(cut, strlen("NodeName=n1 State=DRAIN Reason=parallel")),
	   "only the bytes given are read");
	return done_testing();
}
