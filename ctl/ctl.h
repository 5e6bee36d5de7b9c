/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutctl: the command-line face of lib/ (plan, place, topo build/show).
 * Each command returns the process exit status: 0 ok, 1 bad input or a
 * refused layout, 2 usage error.
 */
#ifndef PL_CTL_H
#define PL_CTL_H

#include <stdio.h>

#include "hosts.h"
#include "layout.h"
#include "place.h"
#include "plan.h"
#include "topo.h"

#define CTL_PROG "layoutctl"

/* Print "layoutctl: <msg>" on stderr. */
void ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * An input fit to echo in a message (pl_clip: cut to 64 characters,
 * control bytes escaped), in one of a few static buffers that take turns:
 * up to four may appear in one message.  For this program's messages only.
 */
const char *ctl_clip(const char *s);

/* 7516192768 -> "7.52 GB" into buf; returns buf. */
const char *ctl_bytes(double b, char *buf, size_t size);

/* Parse a positive long option value; -1 with a message when bad. */
long ctl_parse_count(const char *opt, const char *val, long max);

/*
 * The map behind --topology: a map file, or a Slurm topology.conf together
 * with gpus_per_node (> 0).  Returns NULL after printing why.
 */
struct topo_map *ctl_load_topology(const char *path, long gpus_per_node);

/* The step nodes from a hostlist (or all map nodes when hostlist is NULL). */
int ctl_step_nodes(const struct topo_map *m, const char *hostlist, long tasks_per_node,
		   struct hosts *names, struct place_node **nodes, long *nnodes);

int ctl_plan(int argc, char **argv);
int ctl_place(int argc, char **argv);
int ctl_topo(int argc, char **argv);

/* Commands that talk to a running layoutd (ctl_daemon.c). */
int ctl_status(int argc, char **argv);
int ctl_topology(int argc, char **argv);
int ctl_query(int argc, char **argv);

/* Write an SVG picture of a placement: nodes as rows grouped by switch, GPUs as cells. */
int ctl_svg_write(const char *path, const struct pl_layout *l, const struct topo_map *m,
		  const struct place_node *nodes, long nnodes,
		  const struct place_result *r);

#endif
