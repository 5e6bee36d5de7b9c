/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading an hwloc XML file in a child process, for layoutctl and layoutd.
 * libhwloc 2.9 can crash on a damaged export (one mangled cpuset attribute
 * is enough); the child dies instead of the program.
 */
#ifndef PL_HWLOC_CHILD_H
#define PL_HWLOC_CHILD_H

#include "pl_err.h"
#include "topo.h"

/*
 * Fill *t (zeroed) from the hwloc XML at path.  Returns 0, or -1 with err
 * saying why (the reader's error, or that hwloc crashed).  t->name is ""
 * when the file names no machine.  Free *t with topo_nodetype_clear().
 */
int hwloc_read_isolated(struct topo_nodetype *t, const char *path, pl_err_t *err);

#endif
