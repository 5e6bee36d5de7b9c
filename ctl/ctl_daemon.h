/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the commands that ask a running layoutd share (ctl_daemon.c):
 * status, topology, query (ctl_daemon.c) and watch (ctl_watch.c) take
 * their options from one table, each the ones its mask allows, and ask
 * through one helper.  Private to those two files.
 */
#ifndef PL_CTL_DAEMON_H
#define PL_CTL_DAEMON_H

#include <limits.h>
#include <stdbool.h>

struct ctl_dargs {
	const char *socket, *layout, *nodes, *view;
	const char *leader, *topology, *munge_socket, *scontrol;	/* watch's */
	const char *stack, *state_dir;	/* watch --stack RANK, --state-dir */
	const char *arg;		/* the command's argument (D_ARG); NULL: none */
	char socket_buf[PATH_MAX];
	long timeout_ms, tpn, job_id, step_id, interval_ms;
	bool json, once, local, all_ranks;
};

/* The options' codes; D_HELP last. */
enum { D_SOCKET = 2000, D_TIMEOUT, D_JSON, D_LAYOUT, D_NODES, D_TPN, D_VIEW, D_JOB, D_STEP,
	D_ONCE, D_LOCAL, D_ALL_RANKS, D_INTERVAL, D_LEADER, D_TOPOLOGY, D_MUNGE_SOCKET,
	D_SCONTROL, D_STACK, D_STATE_DIR, D_HELP };

/* Options each command accepts: bit (1 << (code - D_SOCKET)). */
#define D_BIT(code) (1u << ((code) - D_SOCKET))
#define D_COMMON (D_BIT(D_SOCKET) | D_BIT(D_TIMEOUT) | D_BIT(D_HELP))
/* Beside the options: the command takes one argument (a->arg). */
#define D_ARG (1u << 31)

/*
 * Parse argv (argv[0] the command) into *a: the options of allowed, each
 * other option a usage error naming the command, and one argument when
 * allowed has D_ARG.  An option of nonempty given no value or an empty
 * one is refused as "--NAME needs a value".  --socket defaults to this
 * node's layoutd (ctl_default_socket).  0 to go on, -1 after help() ran
 * for --help, else the usage exit status (2) after a message.
 */
int ctl_dparse(int argc, char **argv, unsigned allowed, unsigned nonempty, struct ctl_dargs *a,
	       void (*help)(void));

/*
 * method path (with body, or NULL) on a's layoutd, cmd naming the command
 * in messages.  Returns the 200 answer's body (caller frees), or NULL
 * after printing why there is none; *status the HTTP status (0: none).
 */
char *ctl_ask(const struct ctl_dargs *a, const char *cmd, const char *method, const char *path,
	      const char *body, long *status);

#endif
