/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The nodes a drain has already taken, cluster-wide: before layoutd drains
 * a node it counts, in `scontrol -o show nodes` (one line a node), the
 * nodes drained with its own reason, against drain_max_nodes.  The line is
 * Slurm's, "NodeName=N ... State=IDLE+DRAIN ... Reason=TEXT [USER@TIME]
 * ...", where a reason may hold blanks and '=': so the state is read from
 * its own token and the reason only as a prefix.
 */
#ifndef PL_WATCH_DRAINLIST_H
#define PL_WATCH_DRAINLIST_H

#include <stdbool.h>
#include <stddef.h>

/* The prefix of every reason layoutd's drain gives. */
#define DRAINLIST_REASON "parallel-layout:"

/*
 * Whether the len bytes of line (one node of `scontrol -o show nodes`, no
 * newline; they need not end in NUL) are a node drained (its State holds
 * DRAIN: DRAINING, DRAINED, IDLE+DRAIN, ...) for a reason starting with
 * DRAINLIST_REASON.  A line that is not such a node (no State= token, no
 * Reason=, another reason, a state without DRAIN) is false.
 */
bool drainlist_ours(const char *line, size_t len);

#endif
