/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutctl: the command-line face of lib/ and of a running layoutd.  Its
 * nine commands, in the order of ctl_cmd.c's table: plan, place, topo
 * (build, show), bwtest, status, topology, query, watch and alerts.
 * Each command returns the process exit status: 0 ok, 1 what its help
 * names (bad input, a refused layout, a degraded or silent layoutd, no
 * view), 2 usage error.
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

/* The same for a file name (pl_clip_path: its end is kept). */
const char *ctl_clip_path(const char *path);

/* 7516192768 -> "7.52 GB" into buf; returns buf. */
const char *ctl_bytes(double b, char *buf, size_t size);

/* Parse a positive long option value; -1 with a message when bad. */
long ctl_parse_count(const char *opt, const char *val, long max);

/*
 * The map behind --topology: a map file, or a Slurm topology.conf together
 * with gpus_per_node (> 0).  Returns NULL after printing why.
 */
struct topo_map *ctl_load_topology(const char *path, long gpus_per_node);

/* Write map m to the file out (topo_save), or as JSON to stdout when out is
 * NULL.  Returns 0, or -1 after an error message. */
int ctl_write_map(const struct topo_map *m, const char *out);

/*
 * This node's layoutd socket: layoutd's default pattern
 * (CLIENT_DEFAULT_SOCKET) for SLURMD_NODENAME, else the short host name,
 * into buf.  Returns -1 after a message naming cmd (the command, e.g.
 * "status") when the name is not found or the path does not fit.
 */
int ctl_default_socket(const char *cmd, char *buf, size_t size);

/* The step nodes from a hostlist (or all map nodes when hostlist is NULL). */
int ctl_step_nodes(const struct topo_map *m, const char *hostlist, long tasks_per_node,
		   struct hosts *names, struct place_node **nodes, long *nnodes);

/*
 * One command, like tmux's cmd_entry.  exec gets argv with argv[0] the
 * command's name and returns the exit status.  A command with sub (a
 * NULL-terminated table) dispatches its first argument through it.
 */
struct ctl_cmd {
	const char *name;
	const char *usage;	/* the options after the name; lines split by '\n' */
	const char *summary;	/* one line for the top-level usage */
	const char *help;	/* the rest of COMMAND --help; NULL none */
	int (*exec)(int argc, char **argv);
	const struct ctl_cmd *const *sub;
};

/* The commands (ctl_plan.c, ctl_topo.c, ctl_bwtest.c, ctl_daemon.c, ctl_watch.c,
 * ctl_alerts.c); the table is in ctl_cmd.c. */
extern const struct ctl_cmd ctl_cmd_plan;
extern const struct ctl_cmd ctl_cmd_place;
extern const struct ctl_cmd ctl_cmd_topo;
extern const struct ctl_cmd ctl_cmd_bwtest;
extern const struct ctl_cmd ctl_cmd_status;
extern const struct ctl_cmd ctl_cmd_topology;
extern const struct ctl_cmd ctl_cmd_query;
extern const struct ctl_cmd ctl_cmd_watch;
extern const struct ctl_cmd ctl_cmd_alerts;

/* The top-level usage, from the table. */
void ctl_usage(FILE *f);

/* COMMAND --help on stdout: "Usage: layoutctl [PARENT ]NAME USAGE" and the
 * help text. */
void ctl_cmd_help(const struct ctl_cmd *e, const char *parent);

/* Run the entry of table named argv[0]; an unknown name is a usage error
 * (2) naming the accepted ones, what (e.g. "topo: ") in front. */
int ctl_dispatch(const struct ctl_cmd *const *table, const char *what, int argc, char **argv);

/* Run the top-level command argv[0]. */
int ctl_run(int argc, char **argv);

/* Write an SVG picture of a placement: nodes as rows grouped by switch, GPUs as cells. */
int ctl_svg_write(const char *path, const struct pl_layout *l, const struct topo_map *m,
		  const struct place_node *nodes, long nnodes,
		  const struct place_result *r);

/*
 * End the SVG document on f (written to `path`, "-" for stdout): the
 * closing tag, then fclose (fflush for stdout).  f is done with either
 * way; -1 when writing failed, said on stderr naming path.
 */
int ctl_svg_end(FILE *f, const char *path);

/*
 * Text into an SVG or other XML: markup characters escaped; control bytes
 * and bytes that are not UTF-8 written as '?', so any map gives a document
 * that parses.
 */
void ctl_xml_text(FILE *f, const char *s);

/*
 * The bandwidth map of m as an SVG at path ("-" for stdout): the
 * intra/inter ratio, the link classes (measured or nominal), the switch
 * tree with like nodes and like switches summarised (ctl_bwmap.c).
 * Returns -1 after a message naming path.
 */
int ctl_bwmap_write(const char *path, const struct topo_map *m);

/*
 * The ratios the bandwidth map prints: *intra the intra-node class
 * (topo_intra_class), *leaf its GB/s over the leaf class's, *spine over
 * the spine class's (0 where the map has no switch above its leaves and
 * no second block, or a class has no figure).
 */
void ctl_bwmap_ratios(const struct topo_map *m, int *intra, double *leaf, double *spine);

#endif
