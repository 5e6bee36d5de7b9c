/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The watch registration: what the SPANK plugin tells the node's layoutd
 * about a task it watches (POST /v1/watch/tasks, layoutd(8)), and where
 * the tasks' records live.  This header is the format's home; its first
 * piece is the records' directory, which the plugin writes under and
 * layoutd sweeps, so both must name the same default.
 */
#ifndef PL_WATCH_REGISTER_H
#define PL_WATCH_REGISTER_H

/* The default watch directory (plugstack watch_dir=, layoutd.conf
 * watch_dir): one step directory JOB.STEP per watched step under it, and
 * PARALLEL_LAYOUT_WATCH_DIR in the tasks' environment names the step's. */
#define REG_WATCH_DIR	"/dev/shm/parallel-layout"

#endif
