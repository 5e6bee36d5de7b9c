/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The small map the protocol targets place on (four 8-GPU nodes, node1..4,
 * under two leaf switches, interleaved) and the step they check answers
 * against: node1..node4, 8 tasks each, in that order (fuzz_lab.c).
 */
#ifndef PL_FUZZ_LAB_H
#define PL_FUZZ_LAB_H

#include "proto.h"

#define LAB_NODES 4

/* The map, built on first use and kept for the process. */
const struct topo_map *fuzz_lab_map(void);

extern const char *const fuzz_lab_names[LAB_NODES];
extern const long fuzz_lab_ntasks[LAB_NODES];

/*
 * Check p with spk_answer_check() as the plugin would for the step
 * names[]/ntasks[] and view; when it passes, read every field the plugin
 * reads for that view (AddressSanitizer catches an index the check let
 * through).  Returns spk_answer_check()'s result, with its message in *err.
 */
int fuzz_answer_use(const struct proto_placement *p, const char *const *names,
		    const long *ntasks, long nnodes, const char *view, pl_err_t *err);

#endif
