/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `layoutctl status`, `layoutctl topology` and `layoutctl query`: the same
 * questions as plan/place, asked of a running layoutd through lib/client
 * (the plugin's own client), so an admin sees what the plugin would get.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "client.h"
#include "ctl.h"
#include "ctl_watch.h"
#include "proto.h"

#define CTL_TIMEOUT_MS 5000L

struct dargs {
	const char *socket, *layout, *nodes, *view;
	char socket_buf[PATH_MAX];
	long timeout_ms, tpn, job_id, step_id;
	bool json;
};

enum { D_SOCKET = 2000, D_TIMEOUT, D_JSON, D_LAYOUT, D_NODES, D_TPN, D_VIEW, D_JOB, D_STEP,
	D_HELP };

/* Options each command accepts: bit (1 << (code - D_SOCKET)). */
#define D_BIT(code) (1u << ((code) - D_SOCKET))
#define D_COMMON (D_BIT(D_SOCKET) | D_BIT(D_TIMEOUT) | D_BIT(D_HELP))

/* In the order of the enum: dparse() names an option by its code. */
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

/* Returns 0 to go on, -1 after --help, else the usage exit status. */
static int
dparse(int argc, char **argv, unsigned allowed, struct dargs *a, void (*help)(void))
{
	int c;

	memset(a, 0, sizeof(*a));
	a->timeout_ms = CTL_TIMEOUT_MS;
	a->job_id = a->step_id = -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", dopts, NULL)) != -1) {
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
		switch (c) {
		case D_SOCKET: a->socket = optarg; break;
		case D_JSON: a->json = true; break;
		case D_LAYOUT: a->layout = optarg; break;
		case D_NODES: a->nodes = optarg; break;
		case D_VIEW: a->view = optarg; break;
		case D_TIMEOUT:
			if ((a->timeout_ms = ctl_parse_count("--timeout", optarg, 3600000)) < 0)
				return 2;
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

/*
 * GET or POST path on the daemon.  Returns the 200 body (caller frees), or
 * NULL after printing why there is none.
 */
static char *
ask(const struct dargs *a, const char *cmd, const char *method, const char *path,
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
	struct dargs a;
	json_t *h = NULL, *disc;
	char *body = NULL;
	const char *st;
	long status;
	size_t i;
	int rv;

	rv = dparse(argc, argv, D_COMMON | D_BIT(D_JSON), &a, status_help);
	if (rv)
		return rv < 0 ? 0 : rv;
	rv = 1;
	body = ask(&a, "status", "GET", "/v1/health", NULL, &status);
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
	struct dargs a;
	char *body;
	long status;
	int rv;

	rv = dparse(argc, argv, D_COMMON, &a, topology_help);
	if (rv)
		return rv < 0 ? 0 : rv;
	body = ask(&a, "topology", "GET", "/v1/topology", NULL, &status);
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
query_nodes(const struct dargs *a, struct hosts *names, struct place_node **out)
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
		body = ask(a, "query", "GET", "/v1/topology", NULL, &status);
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
	struct dargs a;
	char *req = NULL, *body = NULL;
	long status;
	pl_err_t err;
	int rv;

	rv = dparse(argc, argv, D_COMMON | D_BIT(D_JSON) | D_BIT(D_LAYOUT) | D_BIT(D_NODES) |
		    D_BIT(D_TPN) | D_BIT(D_VIEW) | D_BIT(D_JOB) | D_BIT(D_STEP), &a, query_help);
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
	body = ask(&a, "query", "POST", "/v1/placement", req, &status);
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

/* ---- watch ---- */

static int watch_exec(int argc, char **argv);

const struct ctl_cmd ctl_cmd_watch = {
	"watch",
	"JOBID[.STEP] [--once] [--json] [--interval MS] [--all-ranks]\n"
	"[--leader HOST:PORT] [--nodes HOSTLIST] [--topology MAP]\n"
	"[--munge-socket PATH] [--scontrol PATH] [--local]\n"
	"[--socket PATH|http://HOST:PORT] [--timeout MS]",
	"show a job step's ranks in NCCL as its leader sees them, live",
	"Show the whole step as its leader sees it (GET /v1/watch/step), from any node\n"
	"of the step or a login host: its nodes and their state, one row per rank and\n"
	"communicator with the rank's node, GPU, NIC, tp/cp/ep/dp/pp coordinates, the\n"
	"collective it last entered, its sequence number, its state and for how long,\n"
	"then the leader's findings.  The culprits (and nodes holding them) are marked\n"
	">> (bold red on a terminal).  Beyond 64 ranks only the culprits and the ranks\n"
	"of their communicators are shown in full (--all-ranks: every rank).\n"
	"The leader is found so: --leader HOST:PORT (a peer listener) is asked; else\n"
	"this host's layoutd (--socket), which answers when it leads the step and\n"
	"names the leader when it takes part; else the step's nodes, --nodes HOSTLIST\n"
	"or Slurm's (scontrol -o show step; --scontrol PATH), in order, over their\n"
	"peer listeners, following a node's answer naming the leader (two hops at\n"
	"most).  Nodes are reached at the address and peer port the cluster map gives\n"
	"(--topology MAP, else this host's layoutd's map; NAME:6830 without one).\n"
	"Over TCP each request carries a munge credential made as the calling user\n"
	"(payload: the request line, 10 s to live; --munge-socket for another munged).\n"
	"Root and the Slurm user see every step, others only their own.\n"
	"--timeout bounds each request (default 5000 ms).  The view is refreshed in\n"
	"place every --interval ms (default 1000) until interrupted; --once prints it\n"
	"once, --json prints the leader's JSON, every page of ranks merged.\n"
	"--local shows this node's view instead (GET /v1/watch on --socket).\n"
	"Exit status: 0 shown, 1 no view (why, and each node asked, on stderr), 2 usage.\n",
	watch_exec,
	NULL
};

static void
watch_help(void)
{
	ctl_cmd_help(&ctl_cmd_watch, NULL);
}

static volatile sig_atomic_t watch_stop;

static void
on_interrupt(int sig)
{
	(void)sig;
	watch_stop = 1;
}

/* JOBID or JOBID.STEP; *step -1 when not given.  -1 when malformed. */
static int
parse_jobstep(const char *s, long *job, long *step)
{
	char *end = NULL;

	errno = 0;
	*job = strtol(s, &end, 10);
	if (errno || end == s || *job < 0)
		return -1;
	*step = -1;
	if (*end == '.') {
		const char *p = end + 1;

		*step = strtol(p, &end, 10);
		if (errno || end == p || *step < 0)
			return -1;
	}
	return *end ? -1 : 0;
}

static const char *
jstr(json_t *o, const char *key, char *buf, size_t size)
{
	const char *v = json_string_value(json_object_get(o, key));

	return pl_clip(v && *v ? v : "-", buf, size);
}

/* One task's rows: a row per communicator (or one row when it has none). */
static void
watch_task_rows(FILE *f, json_t *t)
{
	char node[PL_CLIP_BUF], name[PL_CLIP_BUF], func[PL_CLIP_BUF], state[64];
	json_t *co = json_object_get(t, "coords"), *comms = json_object_get(t, "comms"), *m;
	bool exited = json_is_true(json_object_get(t, "exited"));
	json_t *st = json_object_get(t, "exit_status");
	size_t i, n = json_array_size(comms);

	if (exited && json_is_integer(st))
		snprintf(state, sizeof(state), "exited(%lld)", (long long)json_integer_value(st));
	else if (exited)
		snprintf(state, sizeof(state), "exited");
	else {
		const char *rs = json_string_value(json_object_get(t, "record_state"));

		/* A record read well: the rank is between collectives. */
		snprintf(state, sizeof(state), "%s", !rs ? "-" : strcmp(rs, "ok") == 0 ? "idle" : rs);
	}
	for (i = 0; i < (n ? n : 1); i++) {
		char what[64] = "-", age[32] = "-";

		m = json_array_get(comms, i);
		fprintf(f, "%5lld %-10.10s %7lld %3lld %3lld %3lld %3lld %3lld  ",
			(long long)json_integer_value(json_object_get(t, "rank")),
			jstr(t, "node", node, sizeof(node)),
			(long long)json_integer_value(json_object_get(t, "pid")),
			(long long)json_integer_value(json_object_get(co, "tp")),
			(long long)json_integer_value(json_object_get(co, "cp")),
			(long long)json_integer_value(json_object_get(co, "ep")),
			(long long)json_integer_value(json_object_get(co, "dp")),
			(long long)json_integer_value(json_object_get(co, "pp")));
		if (!m) {
			fprintf(f, "%-14s %-13s %8s  %-12s %s\n", "-", "-", "-", state, "-");
			continue;
		}
		{
			json_t *le = json_object_get(m, "last_entered");

			if (!exited && json_is_true(json_object_get(m, "in_flight"))) {
				snprintf(what, sizeof(what), "in-flight");
				snprintf(age, sizeof(age), "%.1fs",
					 json_number_value(json_object_get(m, "in_flight_s")));
			} else if (!exited) {
				snprintf(what, sizeof(what), "%s",
					 json_is_true(json_object_get(m, "finalized")) ? "finalized" : state);
				if (json_integer_value(json_object_get(m, "entered")) > 0)
					snprintf(age, sizeof(age), "%.1fs",
						 json_number_value(json_object_get(le, "age_s")));
			} else {
				snprintf(what, sizeof(what), "%s", state);
			}
			fprintf(f, "%-14.14s %-13.13s %8lld  %-12s %s\n", jstr(m, "name", name, sizeof(name)),
				jstr(le, "func", func, sizeof(func)),
				(long long)json_integer_value(json_object_get(le, "seq")), what, age);
		}
	}
}

static void
watch_verdicts(FILE *f, json_t *verd)
{
	char comm[PL_CLIP_BUF], func[PL_CLIP_BUF], kind[PL_CLIP_BUF];
	size_t i;

	if (json_array_size(verd) == 0) {
		fprintf(f, "verdicts: none\n");
		return;
	}
	fprintf(f, "verdicts:\n");
	for (i = 0; i < json_array_size(verd); i++) {
		json_t *v = json_array_get(verd, i), *st = json_object_get(v, "exit_status");

		jstr(v, "kind", kind, sizeof(kind));
		if (strcmp(kind, "exited") == 0) {
			if (json_is_integer(st))
				fprintf(f, "  rank %lld (pid %lld) exited with wait status %lld\n",
					(long long)json_integer_value(json_object_get(v, "rank")),
					(long long)json_integer_value(json_object_get(v, "pid")),
					(long long)json_integer_value(st));
			else
				fprintf(f, "  rank %lld (pid %lld) exited\n",
					(long long)json_integer_value(json_object_get(v, "rank")),
					(long long)json_integer_value(json_object_get(v, "pid")));
			continue;
		}
		fprintf(f, "  %s: rank %lld (pid %lld) in %s: %s seq %lld for %.1f s\n", kind,
			(long long)json_integer_value(json_object_get(v, "rank")),
			(long long)json_integer_value(json_object_get(v, "pid")),
			jstr(v, "comm", comm, sizeof(comm)), jstr(v, "func", func, sizeof(func)),
			(long long)json_integer_value(json_object_get(v, "seq")),
			json_number_value(json_object_get(v, "for_s")));
	}
}

/* The job's steps of the daemon's answer (an array; caller decrefs), NULL
 * when the answer is not a watch report. */
static json_t *
watch_select(json_t *root, long job, long step)
{
	json_t *steps = json_object_get(root, "steps"), *out, *s;
	size_t i;

	if (!json_is_array(steps) || !(out = json_array()))
		return NULL;
	json_array_foreach(steps, i, s) {
		if (json_integer_value(json_object_get(s, "job_id")) == job &&
		    (step < 0 || json_integer_value(json_object_get(s, "step_id")) == step))
			json_array_append(out, s);
	}
	return out;
}

static void
watch_print(FILE *f, json_t *root, json_t *sel)
{
	json_t *s, *t;
	size_t i, k;

	json_array_foreach(sel, i, s) {
		fprintf(f, "step %lld.%lld  %s  (sample every %lld ms, hang threshold %lld s)\n",
			(long long)json_integer_value(json_object_get(s, "job_id")),
			(long long)json_integer_value(json_object_get(s, "step_id")),
			json_string_value(json_object_get(s, "state")) ?
			json_string_value(json_object_get(s, "state")) : "?",
			(long long)json_integer_value(json_object_get(root, "interval_ms")),
			(long long)json_integer_value(json_object_get(root, "hang_threshold_s")));
		fprintf(f, "%5s %-10s %7s %3s %3s %3s %3s %3s  %-14s %-13s %8s  %-12s %s\n", "RANK",
			"NODE", "PID", "TP", "CP", "EP", "DP", "PP", "COMM", "COLLECTIVE", "SEQ",
			"STATE", "FOR");
		json_array_foreach(json_object_get(s, "tasks"), k, t)
			watch_task_rows(f, t);
		watch_verdicts(f, json_object_get(s, "verdicts"));
	}
}

/*
 * The step view's options with a value (--NAME VALUE or --NAME=VALUE) at
 * argv[*i]: 1 taken (*i past its value), 0 not one of them, -1 no value.
 */
static int
watch_opt(int argc, char **argv, int *i, struct ctl_watch_args *sa)
{
	static const char *const names[] = { "leader", "nodes", "topology", "munge-socket",
					      "scontrol" };
	const char **dst[] = { &sa->leader, &sa->nodes, &sa->topology, &sa->munge_socket,
			       &sa->scontrol };
	const char *arg = argv[*i], *v;
	size_t k, len;

	if (strncmp(arg, "--", 2) != 0)
		return 0;
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		len = strlen(names[k]);
		if (strncmp(arg + 2, names[k], len) != 0 || (arg[2 + len] && arg[2 + len] != '='))
			continue;
		v = arg[2 + len] == '=' ? arg + 3 + len : (*i + 1 < argc ? argv[++*i] : NULL);
		if (!v || !*v) {
			ctl_error("watch: --%s needs a value (see '" CTL_PROG " watch --help')", names[k]);
			return -1;
		}
		*dst[k] = v;
		return 1;
	}
	return 0;
}

/* HOST:PORT, [V6]:PORT; the port 1 to 65535. */
static bool
leader_ok(const char *s)
{
	const char *colon = strrchr(s, ':');
	char *end = NULL;
	long port;

	if (!colon || colon == s || strpbrk(s, "/?#@ \t"))
		return false;
	if (s[0] == '[' ? colon[-1] != ']' || colon - s < 3 : memchr(s, ':', (size_t)(colon - s)) != NULL)
		return false;
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	return !errno && end != colon + 1 && !*end && port >= 1 && port <= 65535;
}

static int
watch_exec(int argc, char **argv)
{
	char **rest = NULL, jobbuf[PL_CLIP_BUF];
	const char *jobarg = NULL;
	long job, step, interval = 1000, status;
	bool once = false, local = false, tty = isatty(STDOUT_FILENO);
	struct ctl_watch_args sa;
	struct dargs a;
	int i, n = 0, rv = 2;

	/* Our own options and the job first; the rest is dparse's. */
	memset(&sa, 0, sizeof(sa));
	rest = calloc((size_t)argc + 1, sizeof(*rest));
	if (!rest) {
		ctl_error("watch: out of memory");
		return 1;
	}
	rest[n++] = argv[0];
	for (i = 1; i < argc; i++) {
		int k = watch_opt(argc, argv, &i, &sa);

		if (k < 0)
			goto out;
		if (k > 0)
			continue;
		if (strcmp(argv[i], "--once") == 0) {
			once = true;
		} else if (strcmp(argv[i], "--local") == 0) {
			local = true;
		} else if (strcmp(argv[i], "--all-ranks") == 0) {
			sa.all_ranks = true;
		} else if (strcmp(argv[i], "--interval") == 0 || strncmp(argv[i], "--interval=", 11) == 0) {
			const char *v = argv[i][10] == '=' ? argv[i] + 11 : (i + 1 < argc ? argv[++i] : NULL);

			if (!v || (interval = ctl_parse_count("--interval", v, 3600000)) < 0)
				goto out;
			if (interval < 100) {
				ctl_error("--interval=%ld: at least 100 ms (layoutd samples no faster)", interval);
				goto out;
			}
		} else if (argv[i][0] != '-' && !jobarg) {
			jobarg = argv[i];
		} else {
			rest[n++] = argv[i];
		}
	}
	rv = dparse(n, rest, D_COMMON | D_BIT(D_JSON), &a, watch_help);
	if (rv) {
		rv = rv < 0 ? 0 : rv;
		goto out;
	}
	if (!jobarg) {
		ctl_error("watch: which job? give JOBID or JOBID.STEP (see '" CTL_PROG " watch --help')");
		rv = 2;
		goto out;
	}
	if (parse_jobstep(jobarg, &job, &step) < 0) {
		ctl_error("watch: '%s': expected JOBID or JOBID.STEP (whole numbers, e.g. 1234 or 1234.0)",
			  pl_clip(jobarg, jobbuf, sizeof(jobbuf)));
		rv = 2;
		goto out;
	}
	if (sa.leader && !leader_ok(sa.leader)) {
		ctl_error("watch: --leader %s: expected HOST:PORT, a layoutd's peer listener (e.g. "
			  "gpu001:6830 or [fd00::1]:6830)", ctl_clip(sa.leader));
		rv = 2;
		goto out;
	}
	if (!local) {
		sa.job = job;
		sa.step = step;
		sa.socket = a.socket;
		sa.timeout_ms = a.timeout_ms;
		sa.interval_ms = interval;
		sa.once = once;
		sa.json = a.json;
		rv = ctl_watch_step(&sa);
		goto out;
	}
	if (sa.leader || sa.nodes || sa.topology || sa.munge_socket || sa.scontrol || sa.all_ranks) {
		ctl_error("watch: --local shows this node's view: --leader, --nodes, --topology, "
			  "--munge-socket, --scontrol and --all-ranks do not apply");
		rv = 2;
		goto out;
	}
	if (a.json)
		once = true;
	if (!once) {
		signal(SIGINT, on_interrupt);
		signal(SIGTERM, on_interrupt);
	}
	for (;;) {
		char *body = ask(&a, "watch", "GET", "/v1/watch", NULL, &status);
		json_t *root = body ? json_loads(body, 0, NULL) : NULL, *sel;

		free(body);
		sel = root ? watch_select(root, job, step) : NULL;
		if (!sel) {
			if (root)
				ctl_error("watch: the answer is not a layoutd watch report");
			json_decref(root);
			rv = 1;
			goto out;
		}
		if (json_array_size(sel) == 0) {
			ctl_error("watch: no step of job %s is watched on this node (or it is not yours)",
				  jobarg);
			json_decref(sel);
			json_decref(root);
			rv = 1;
			goto out;
		}
		if (a.json) {
			char *text = json_dumps(sel, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

			if (text)
				puts(text);
			free(text);
		} else {
			if (!once && tty)
				fputs("\033[H\033[2J", stdout);
			watch_print(stdout, root, sel);
		}
		fflush(stdout);
		json_decref(sel);
		json_decref(root);
		rv = 0;
		if (once || watch_stop)
			break;
		{
			struct timespec ts = { interval / 1000, (interval % 1000) * 1000000L };

			while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !watch_stop)
				;
		}
		if (watch_stop)
			break;
	}
out:
	free(rest);
	return rv;
}
