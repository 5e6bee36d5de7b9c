/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading an hwloc XML file in a child process, for layoutctl and layoutd.
 * libhwloc 2.9 can crash on a damaged export (one mangled cpuset attribute
 * is enough); the child dies instead of the program.
 */
#ifndef PL_HWLOC_CHILD_H
#define PL_HWLOC_CHILD_H

#include <stddef.h>

#include "topo.h"

/*
 * Fill *t (zeroed) from the hwloc XML at path.  Returns 0, or -1 with msg
 * saying why (the reader's error, or that hwloc crashed).  t->name is ""
 * when the file names no machine.
 */
int hwloc_read_isolated(struct topo_nodetype *t, const char *path, char *msg, size_t len);

#endif
