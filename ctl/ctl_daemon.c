/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `layoutctl status`, `layoutctl topology` and `layoutctl query`: the same
 * questions as plan/place, asked of a running layoutd through lib/client
 * (the plugin's own client), so an admin sees what the plugin would get.
 * The option table and the asking are shared with `layoutctl watch`
 * (ctl_daemon.h).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "client.h"
#include "ctl.h"
#include "ctl_daemon.h"
#include "proto.h"

#define CTL_TIMEOUT_MS 5000L
#define CTL_INTERVAL_MS 1000L	/* watch's redraw */
#define CTL_INTERVAL_MIN_MS 100L	/* layoutd samples no faster */

/* In the order of the enum: ctl_dparse() names an option by its code. */
static const struct option dopts[] = {
	{ "socket", required_argument, NULL, D_SOCKET },
	{ "timeout", required_argument, NULL, D_TIMEOUT },
	{ "json", no_argument, NULL, D_JSON },
	{ "layout", required_argument, NULL, D_LAYOUT },
	{ "nodes", required_argument, NULL, D_NODES },
	{ "tasks-per-node", required_argument, NULL, D_TPN },
	{ "view", required_argument, NULL, D_VIEW },
	{ "job-id", required_argument, NULL, D_JOB },
	{ "step-id", required_argument, NULL, D_STEP },
	{ "once", no_argument, NULL, D_ONCE },
	{ "local", no_argument, NULL, D_LOCAL },
	{ "all-ranks", no_argument, NULL, D_ALL_RANKS },
	{ "interval", required_argument, NULL, D_INTERVAL },
	{ "leader", required_argument, NULL, D_LEADER },
	{ "topology", required_argument, NULL, D_TOPOLOGY },
	{ "munge-socket", required_argument, NULL, D_MUNGE_SOCKET },
	{ "scontrol", required_argument, NULL, D_SCONTROL },
	{ "stack", required_argument, NULL, D_STACK },
	{ "state-dir", required_argument, NULL, D_STATE_DIR },
	{ "help", no_argument, NULL, D_HELP },
	{ NULL, 0, NULL, 0 }
};

int
ctl_default_socket(const char *cmd, char *buf, size_t size)
{
	const char *env = getenv("SLURMD_NODENAME");
	char host[256], *dot;

	if (env && *env) {
		snprintf(host, sizeof(host), "%s", env);
	} else {
		if (gethostname(host, sizeof(host)) < 0) {
			ctl_error("%s: gethostname: %s; give --socket", cmd, strerror(errno));
			return -1;
		}
		host[sizeof(host) - 1] = '\0';
		dot = strchr(host, '.');
		if (dot)
			*dot = '\0';
	}
	if (client_socket_path(CLIENT_DEFAULT_SOCKET, host, buf, size) < 0) {
		ctl_error("%s: node name '%s' makes too long a socket path; give --socket", cmd,
			  ctl_clip(host));
		return -1;
	}
	return 0;
}

static long
parse_id(const char *opt, const char *val)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || end == val || *end || v < 0) {
		ctl_error("%s=%s: expected a whole number from 0", opt, ctl_clip(val));
		return -2;
	}
	return v;
}

int
ctl_dparse(int argc, char **argv, unsigned allowed, unsigned nonempty, struct ctl_dargs *a,
	   void (*help)(void))
{
	int c;

	memset(a, 0, sizeof(*a));
	a->timeout_ms = CTL_TIMEOUT_MS;
	a->interval_ms = CTL_INTERVAL_MS;
	a->job_id = a->step_id = -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", dopts, NULL)) != -1) {
		/* no value at all: for an option of nonempty, as an empty one */
		if (c == ':' && optopt >= D_SOCKET && optopt <= D_HELP &&
		    (nonempty & D_BIT(optopt))) {
			c = optopt;
			optarg = NULL;
		}
		if (c < D_SOCKET || c > D_HELP) {
			ctl_error("%s: unknown or incomplete option '%s' (see '" CTL_PROG " %s --help')",
				  argv[0], ctl_clip(argv[optind - 1]), argv[0]);
			return 2;
		}
		if (!(allowed & D_BIT(c))) {
			ctl_error("%s: --%s does not apply to this command (see '" CTL_PROG " %s --help')",
				  argv[0], dopts[c - D_SOCKET].name, argv[0]);
			return 2;
		}
		if ((nonempty & D_BIT(c)) && (!optarg || !*optarg)) {
			ctl_error("%s: --%s needs a value (see '" CTL_PROG " %s --help')", argv[0],
				  dopts[c - D_SOCKET].name, argv[0]);
			return 2;
		}
		switch (c) {
		case D_SOCKET: a->socket = optarg; break;
		case D_JSON: a->json = true; break;
		case D_LAYOUT: a->layout = optarg; break;
		case D_NODES: a->nodes = optarg; break;
		case D_VIEW: a->view = optarg; break;
		case D_ONCE: a->once = true; break;
		case D_LOCAL: a->local = true; break;
		case D_ALL_RANKS: a->all_ranks = true; break;
		case D_LEADER: a->leader = optarg; break;
		case D_TOPOLOGY: a->topology = optarg; break;
		case D_MUNGE_SOCKET: a->munge_socket = optarg; break;
		case D_SCONTROL: a->scontrol = optarg; break;
		case D_STACK: a->stack = optarg; break;
		case D_STATE_DIR: a->state_dir = optarg; break;
		case D_TIMEOUT:
			if ((a->timeout_ms = ctl_parse_count("--timeout", optarg, 3600000)) < 0)
				return 2;
			break;
		case D_INTERVAL:
			if ((a->interval_ms = ctl_parse_count("--interval", optarg, 3600000)) < 0)
				return 2;
			if (a->interval_ms < CTL_INTERVAL_MIN_MS) {
				ctl_error("--interval=%ld: at least %ld ms (layoutd samples no faster)",
					  a->interval_ms, CTL_INTERVAL_MIN_MS);
				return 2;
			}
			break;
		case D_TPN:
			if ((a->tpn = ctl_parse_count("--tasks-per-node", optarg, 4096)) < 0)
				return 2;
			break;
		case D_JOB:
			if ((a->job_id = parse_id("--job-id", optarg)) < -1)
				return 2;
			break;
		case D_STEP:
			if ((a->step_id = parse_id("--step-id", optarg)) < -1)
				return 2;
			break;
		case D_HELP:
			help();
			return -1;
		}
	}
	if (optind < argc && (allowed & D_ARG))
		a->arg = argv[optind++];
	if (optind < argc) {
		ctl_error("%s: unexpected argument '%s'", argv[0], ctl_clip(argv[optind]));
		return 2;
	}
	if (!a->socket) {
		if (ctl_default_socket(argv[0], a->socket_buf, sizeof(a->socket_buf)) < 0)
			return 2;
		a->socket = a->socket_buf;
	}
	if (!*a->socket) {
		ctl_error("%s: --socket needs a socket path or http://HOST:PORT", argv[0]);
		return 2;
	}
	return 0;
}

char *
ctl_ask(const struct ctl_dargs *a, const char *cmd, const char *method, const char *path,
	const char *body, long *status)
{
	struct client_reply r;
	pl_err_t err;

	pl_err_clear(&err);
	*status = 0;
	if (client_request(a->socket, method, path, body, a->timeout_ms, &r, &err) < 0) {
		ctl_error("%s: layoutd does not answer: %s", cmd, err.text);
		return NULL;
	}
	*status = r.status;
	if (r.status != 200) {
		json_t *e = r.body ? json_loads(r.body, 0, NULL) : NULL;
		const char *msg = json_string_value(json_object_get(e, "error"));

		ctl_error("%s: layoutd answered %ld: %s", cmd, r.status, msg ? msg : "no message");
		json_decref(e);
		free(r.body);
		return NULL;
	}
	if (!r.body) {
		ctl_error("%s: layoutd answered 200 without a body", cmd);
		return NULL;
	}
	return r.body;
}

/* Print JSON text indented (as the other commands' --json do). */
static int
print_pretty(const char *text)
{
	json_t *root = json_loads(text, 0, NULL);
	int rv = 0;

	if (!root) {
		ctl_error("layoutd's answer is not JSON");
		return 1;
	}
	if (json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
		       JSON_REAL_PRECISION(12)) < 0)
		rv = 1;
	fputc('\n', stdout);
	json_decref(root);
	return rv;
}

/* ---- status ---- */

static int status_exec(int argc, char **argv);
static int topology_exec(int argc, char **argv);
static int query_exec(int argc, char **argv);

const struct ctl_cmd ctl_cmd_status = {
	"status",
	"[--socket PATH|http://HOST:PORT] [--timeout MS] [--json]",
	"ask a running layoutd how it is (exit 1 when degraded)",
	"Ask a running layoutd how it is: node, map, discrepancies between the map\n"
	"and this node's hardware, uptime, requests and reloads.  The default socket\n"
	"is " CLIENT_DEFAULT_SOCKET " for this node ($SLURMD_NODENAME,\n"
	"else hostname -s); --timeout bounds the whole exchange (default 5000 ms).\n"
	"Exit status: 0 ok, 1 degraded or no answer, 2 usage.\n",
	status_exec,
	NULL
};

const struct ctl_cmd ctl_cmd_topology = {
	"topology",
	"[--socket PATH|http://HOST:PORT] [--timeout MS]",
	"print the map a running layoutd serves",
	"Print the cluster map a running layoutd serves (the map file's JSON), e.g. to\n"
	"check which map a node uses after a reload, or to feed 'topo show'.\n",
	topology_exec,
	NULL
};

const struct ctl_cmd ctl_cmd_query = {
	"query",
	"--layout SPEC --nodes HOSTLIST [--tasks-per-node N]\n"
	"[--view all|hostfile|node:NAME] [--job-id J] [--step-id S]\n"
	"[--json] [--socket PATH|http://HOST:PORT] [--timeout MS]",
	"ask a running layoutd for a placement (the table of 'place')",
	"Ask a running layoutd for a placement, as the plugin does, and print the same\n"
	"table as '" CTL_PROG " place' (or the daemon's JSON answer with --json).\n"
	"Without --tasks-per-node each node runs one task per GPU of its type in the\n"
	"daemon's map (fetched from it first), as 'place' does.  --view hostfile gives\n"
	"each rank's node; node:NAME only that node's tasks.  The request is recorded\n"
	"in the daemon's /v1/steps under --job-id/--step-id when given.\n"
	"Exit status: 0 placed, 1 refused or no answer, 2 usage.\n",
	query_exec,
	NULL
};

static void
status_help(void)
{
	ctl_cmd_help(&ctl_cmd_status, NULL);
}

static int
status_exec(int argc, char **argv)
{
	struct ctl_dargs a;
	json_t *h = NULL, *disc;
	char *body = NULL;
	const char *st;
	long status;
	size_t i;
	int rv;

	rv = ctl_dparse(argc, argv, D_COMMON | D_BIT(D_JSON), 0, &a, status_help);
	if (rv)
		return rv < 0 ? 0 : rv;
	rv = 1;
	body = ctl_ask(&a, "status", "GET", "/v1/health", NULL, &status);
	if (!body)
		goto out;
	h = json_loads(body, 0, NULL);
	st = json_string_value(json_object_get(h, "status"));
	if (!st) {
		ctl_error("status: %s: the answer is not a layoutd health report", ctl_clip(a.socket));
		goto out;
	}
	if (a.json) {
		if (print_pretty(body))
			goto out;
	} else {
		printf("layoutd      %s\n", a.socket);
		printf("status       %s\n", st);
		printf("node         %s\n", json_string_value(json_object_get(h, "node")));
		printf("map          %s (%lld nodes) from %s\n",
		       json_string_value(json_object_get(h, "map")),
		       (long long)json_integer_value(json_object_get(h, "map_nodes")),
		       json_string_value(json_object_get(h, "map_file")));
		printf("hwloc check  %s\n", json_string_value(json_object_get(h, "hwloc_check")));
		printf("uptime       %.0f s, %lld requests, %lld reloads (%lld failed)\n",
		       json_number_value(json_object_get(h, "uptime_s")),
		       (long long)json_integer_value(json_object_get(h, "requests")),
		       (long long)json_integer_value(json_object_get(h, "reloads")),
		       (long long)json_integer_value(json_object_get(h, "reload_failures")));
		printf("version      %s\n", json_string_value(json_object_get(h, "version")));
		disc = json_object_get(h, "discrepancies");
		if (json_array_size(disc) == 0)
			printf("discrepancies none\n");
		for (i = 0; i < json_array_size(disc); i++)
			printf("discrepancy  %s\n", json_string_value(json_array_get(disc, i)));
	}
	rv = strcmp(st, "ok") == 0 ? 0 : 1;
out:
	json_decref(h);
	free(body);
	return rv;
}

/* ---- topology ---- */

static void
topology_help(void)
{
	ctl_cmd_help(&ctl_cmd_topology, NULL);
}

static int
topology_exec(int argc, char **argv)
{
	struct ctl_dargs a;
	char *body;
	long status;
	int rv;

	rv = ctl_dparse(argc, argv, D_COMMON, 0, &a, topology_help);
	if (rv)
		return rv < 0 ? 0 : rv;
	body = ctl_ask(&a, "topology", "GET", "/v1/topology", NULL, &status);
	if (!body)
		return 1;
	fputs(body, stdout);
	if (!*body || body[strlen(body) - 1] != '\n')
		fputc('\n', stdout);
	free(body);
	return 0;
}

/* ---- query ---- */

static void
query_help(void)
{
	ctl_cmd_help(&ctl_cmd_query, NULL);
}

/* The step's nodes and tasks: --tasks-per-node, or GPUs from the daemon's map. */
static int
query_nodes(const struct ctl_dargs *a, struct hosts *names, struct place_node **out)
{
	struct topo_map *m = NULL;
	struct place_node *pn = NULL;
	char *body = NULL;
	long i, status;
	pl_err_t err;
	int rv = -1;

	pl_err_clear(&err);
	if (hosts_expand(names, a->nodes, 1000000, &err) < 0) {
		ctl_error("--nodes=%s: %s", ctl_clip(a->nodes), err.text);
		return -1;
	}
	if (names->n == 0) {
		ctl_error("--nodes=%s: the step has no nodes", ctl_clip(a->nodes));
		return -1;
	}
	if (a->tpn <= 0) {
		body = ctl_ask(a, "query", "GET", "/v1/topology", NULL, &status);
		if (!body)
			goto out;
		m = topo_from_json_text(body, &err);
		if (!m) {
			ctl_error("query: the daemon's map: %s", err.text);
			goto out;
		}
	}
	pn = calloc((size_t)names->n, sizeof(*pn));
	if (!pn) {
		ctl_error("out of memory");
		goto out;
	}
	for (i = 0; i < names->n; i++) {
		pn[i].name = names->names[i];
		pn[i].ntasks = a->tpn;
		if (m) {
			long mi = topo_find_node(m, names->names[i]);
			const struct topo_nodetype *t = mi >= 0 ? topo_node_type(m, mi) : NULL;

			if (!t) {
				ctl_error("--nodes: node '%s' is not in layoutd's map %s (%ld nodes)",
					  ctl_clip(names->names[i]), m->name, m->nnodes);
				goto out;
			}
			pn[i].ntasks = t->ngpus;
		}
	}
	*out = pn;
	pn = NULL;
	rv = 0;
out:
	free(pn);
	topo_free(m);
	free(body);
	return rv;
}

static void
print_placement(const struct proto_placement *p)
{
	char b1[32], b2[32], b3[32], b4[32];
	long i;

	if (p->ntasks == 0 && p->rank_nodes) {
		printf("%6s  %s\n", "rank", "node");
		for (i = 0; i < p->world; i++)
			printf("%6ld  %s\n", i, p->nodes[p->rank_nodes[i]].name);
	} else {
		printf("%6s  %-16s %6s %5s %4s %4s %4s %4s %4s  %s\n", "procid", "node", "rank",
		       "local", "tp", "cp", "ep", "dp", "pp", "nic");
		for (i = 0; i < p->ntasks; i++) {
			const struct proto_task *t = &p->tasks[i];

			printf("%6ld  %-16s %6ld %5d %4ld %4ld %4ld %4ld %4ld  %s\n", t->procid,
			       p->nodes[t->node].name, t->rank, t->local_rank, t->co[PL_TP],
			       t->co[PL_CP], t->co[PL_EP], t->co[PL_DP], t->co[PL_PP],
			       t->nic[0] ? t->nic : "-");
		}
	}
	printf("cost: cross-node %s, cross-switch %s per step; Slurm block order: %s, %s\n",
	       ctl_bytes(p->cost.cross_node_bytes, b1, sizeof(b1)),
	       ctl_bytes(p->cost.cross_switch_bytes, b2, sizeof(b2)),
	       ctl_bytes(p->baseline.cross_node_bytes, b3, sizeof(b3)),
	       ctl_bytes(p->baseline.cross_switch_bytes, b4, sizeof(b4)));
	printf("strategy: %s\n", p->strategy);
}

static int
query_exec(int argc, char **argv)
{
	struct proto_placement p;
	struct place_node *nodes = NULL;
	struct hosts names = { 0, NULL };
	struct ctl_dargs a;
	char *req = NULL, *body = NULL;
	long status;
	pl_err_t err;
	int rv;

	rv = ctl_dparse(argc, argv, D_COMMON | D_BIT(D_JSON) | D_BIT(D_LAYOUT) | D_BIT(D_NODES) |
			D_BIT(D_TPN) | D_BIT(D_VIEW) | D_BIT(D_JOB) | D_BIT(D_STEP), 0, &a,
			query_help);
	if (rv)
		return rv < 0 ? 0 : rv;
	if (!a.layout || !a.nodes) {
		ctl_error("query: --layout SPEC and --nodes HOSTLIST are required");
		return 2;
	}
	if (strlen(a.layout) >= PROTO_SPEC_MAX) {
		ctl_error("query: --layout is longer than %d bytes", PROTO_SPEC_MAX - 1);
		return 2;
	}
	rv = 1;
	memset(&p, 0, sizeof(p));
	pl_err_clear(&err);
	if (query_nodes(&a, &names, &nodes) < 0)
		goto out;
	req = proto_request_json(a.layout, nodes, names.n, a.job_id, a.step_id, a.view);
	if (!req) {
		ctl_error("out of memory");
		goto out;
	}
	body = ctl_ask(&a, "query", "POST", "/v1/placement", req, &status);
	if (!body)
		goto out;
	if (a.json) {
		rv = print_pretty(body);
		goto out;
	}
	if (proto_placement_parse(body, &p, &err) < 0) {
		ctl_error("query: layoutd's answer: %s", err.text);
		goto out;
	}
	print_placement(&p);
	rv = 0;
out:
	proto_placement_free(&p);
	free(body);
	free(req);
	free(nodes);
	hosts_free(&names);
	return rv;
}
