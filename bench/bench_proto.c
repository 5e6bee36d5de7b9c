/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon path: a placement request as slurmstepd sends it (every node
 * with its task ids, the view of one node) answered as layoutd answers it
 * (request JSON in, answer JSON out: parse, answer, json), at 1,280 and 12,800
 * nodes of 8 GPUs on a three-level fat tree, the whole answer (view all)
 * at 12,800, and 12,800 nodes in NVLink racks of 18.  The baseline, measured in the same run on the same step,
 * is place_compute alone with the planner's bytes; the answer's ranks are
 * checked against the baseline's, so both sides did the same work.
 * Targets: 12,800 nodes under 0.5 s, and growth about linear:
 * time(12,800) / time(1,280) below 15 (10 is linear; a quadratic step
 * shows as 100).  Exits non-zero on a miss.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "place.h"
#include "proto.h"
#include "service.h"
#include "topo.h"

#define RUNS 3
#define GPUS 8
#define SPEC "tp8,pp4"

struct setup {
	struct topo_map *map;
	struct place_node *nodes;
	long *tids;
	long nnodes;
	struct pl_layout layout;
	double bytes[PL_NAXES];
	char *request;		/* the request JSON */
	long view_node;		/* -1 for view all */
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
teardown(struct setup *s)
{
	free(s->nodes);
	free(s->tids);
	free(s->request);
	topo_free(s->map);
}

static int
setup(struct setup *s, long nnodes, int node_view, int blocks)
{
	struct svc_options opt = { .need_place = true };
	struct svc_result r;
	char view[PROTO_VIEW_MAX];
	pl_err_t err;
	long i, j;
	int a;

	memset(s, 0, sizeof(*s));
	pl_err_clear(&err);
	s->nnodes = nnodes;
	/* An interleaved fat tree, or NVLink racks of 18 nodes (racks
	 * interleaved in name order). */
	s->map = blocks ? topo_synth_blocks(nnodes, GPUS, 18) :
			  topo_synth_fat_tree(nnodes, GPUS, 32, 16, 1);
	s->nodes = calloc((size_t)nnodes, sizeof(*s->nodes));
	s->tids = calloc((size_t)(nnodes * GPUS), sizeof(*s->tids));
	if (!s->map || !s->nodes || !s->tids)
		return -1;
	/* slurmstepd sends every node's task ids (here Slurm's block order). */
	for (i = 0; i < nnodes; i++) {
		s->nodes[i].name = s->map->nodes[i].name;
		s->nodes[i].ntasks = GPUS;
		s->nodes[i].tids = &s->tids[i * GPUS];
		for (j = 0; j < GPUS; j++)
			s->tids[i * GPUS + j] = i * GPUS + j;
	}
	/* The baseline places with the bytes the service plans. */
	if (svc_run(s->map, SPEC, s->nodes, nnodes, &opt, &r, &err) < 0 || !r.plan_ok) {
		fprintf(stderr, "bench_proto: %s\n", err.text);
		return -1;
	}
	s->layout = r.layout;
	for (a = 0; a < PL_NAXES; a++)
		s->bytes[a] = plan_axis_bytes(&r.plan, a);
	svc_result_free(&r);
	s->view_node = node_view ? nnodes / 2 : -1;
	if (node_view)
		snprintf(view, sizeof(view), "node:%s", s->nodes[s->view_node].name);
	else
		snprintf(view, sizeof(view), "all");
	s->request = proto_request_json(SPEC, s->nodes, nnodes, 1, 0, view);
	return s->request ? 0 : -1;
}

/* layoutd's path (layoutd_http.c): the request text parsed, answered and
 * serialized; NULL when refused (*status says why). */
static char *
daemon_path(const struct topo_map *m, const char *request_text, int *status)
{
	struct proto_request req;
	struct proto_placement p;
	pl_err_t err;
	char *text = NULL;

	pl_err_clear(&err);
	*status = 400;
	if (proto_request_parse(request_text, &req, &err) < 0)
		return NULL;
	if (proto_answer(m, &req, &p, status, &err) == 0)
		text = proto_placement_json(&p);
	proto_placement_free(&p);
	proto_request_free(&req);
	return text;
}

/* The daemon path once, timed (*secs) from request text to answer text;
 * the view's ranks into ranks[procid] (others -1). */
static int
run_proto(const struct setup *s, long *ranks, double *secs)
{
	struct proto_placement p;
	pl_err_t err;
	int status = 0, rv = -1;
	double t0 = now();
	char *answer = daemon_path(s->map, s->request, &status);
	long i;

	*secs = now() - t0;
	pl_err_clear(&err);
	if (!answer || status != 200 || proto_placement_parse(answer, &p, &err) < 0) {
		fprintf(stderr, "bench_proto: status %d: %s\n", status,
			err.text[0] ? err.text : "no answer");
		free(answer);
		return -1;
	}
	for (i = 0; i < s->nnodes * GPUS; i++)
		ranks[i] = -1;
	for (i = 0; i < p.ntasks; i++)
		ranks[p.tasks[i].procid] = p.tasks[i].rank;
	rv = p.ntasks == (s->view_node >= 0 ? GPUS : s->nnodes * GPUS) ? 0 : -1;
	proto_placement_free(&p);
	free(answer);
	return rv;
}

static int
run_place(const struct setup *s, long *ranks)
{
	struct place_result r;
	pl_err_t err;
	long i;

	pl_err_clear(&err);
	if (place_compute(&s->layout, s->map, s->nodes, s->nnodes, s->bytes, &r, &err) < 0) {
		fprintf(stderr, "bench_proto: %s\n", err.text);
		return -1;
	}
	for (i = 0; i < r.ntasks; i++)
		ranks[i] = r.tasks[i].rank;
	place_result_free(&r);
	return 0;
}

int
main(void)
{
	/* slurmstepd's node views, the whole answer (layoutctl, tests), and
	 * a node view on NVLink racks. */
	static const struct { long nodes; int node_view, blocks; } runs[] = {
		{ 1280, 1, 0 }, { 12800, 1, 0 }, { 12800, 0, 0 }, { 12800, 1, 1 },
	};
	double best_proto[4], best_place[4], growth;
	int rc = 0;
	size_t i;

	printf("# the daemon path: request JSON with task ids -> answer JSON (parse, answer, json)\n");
	printf("# layout %s, %d GPUs per node, 3-level fat tree or NVLink racks of 18 nodes; best of %d runs\n",
	       SPEC, GPUS, RUNS);
	printf("# baseline: place_compute alone on the same step\n");
	printf("%8s %-7s %-6s %10s %10s %10s %8s %6s\n", "nodes", "fabric", "view", "req_bytes",
	       "proto_ms", "place_ms", "ratio", "ranks");
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct setup s;
		long *rp = NULL, *rb = NULL, j, same = 1, n = runs[i].nodes * GPUS;
		int k;

		best_proto[i] = best_place[i] = 1e9;
		if (setup(&s, runs[i].nodes, runs[i].node_view, runs[i].blocks) < 0) {
			fprintf(stderr, "bench_proto: setup failed at %ld nodes\n", runs[i].nodes);
			return 1;
		}
		rp = calloc((size_t)n, sizeof(*rp));
		rb = calloc((size_t)n, sizeof(*rb));
		if (!rp || !rb)
			return 1;
		for (k = 0; k < RUNS; k++) {
			double t0;

			if (run_proto(&s, rp, &t0) < 0)
				return 1;
			if (t0 < best_proto[i])
				best_proto[i] = t0;
			t0 = now();
			if (run_place(&s, rb) < 0)
				return 1;
			t0 = now() - t0;
			if (t0 < best_place[i])
				best_place[i] = t0;
		}
		/* The answer's tasks must carry the ranks place_compute gives them. */
		if (s.view_node >= 0)
			for (j = 0; j < GPUS; j++) {
				long procid = s.tids[s.view_node * GPUS + j];

				same &= rp[procid] >= 0 && rp[procid] == rb[procid];
			}
		else
			for (j = 0; j < n; j++)
				same &= rp[j] >= 0 && rp[j] == rb[j];
		printf("%8ld %-7s %-6s %10zu %10.1f %10.1f %8.1f %6s\n", runs[i].nodes,
		       runs[i].blocks ? "racks" : "tree", runs[i].node_view ? "node" : "all",
		       strlen(s.request), best_proto[i] * 1e3,
		       best_place[i] * 1e3, best_proto[i] / best_place[i], same ? "same" : "DIFFER");
		if (!same)
			rc = 1;
		free(rp);
		free(rb);
		teardown(&s);
	}
	growth = best_proto[1] / best_proto[0];
	printf("# target: 12,800 nodes under 500 ms (node view): %.1f ms, %s\n", best_proto[1] * 1e3,
	       best_proto[1] < 0.5 ? "met" : "MISSED");
	printf("# target: 12,800 nodes under 500 ms (view all): %.1f ms, %s\n", best_proto[2] * 1e3,
	       best_proto[2] < 0.5 ? "met" : "MISSED");
	printf("# target: 12,800 nodes under 500 ms (NVLink racks): %.1f ms, %s\n",
	       best_proto[3] * 1e3, best_proto[3] < 0.5 ? "met" : "MISSED");
	printf("# target: linear growth, 12,800 vs 1,280 nodes about 10 (below 15): %.1f, %s\n",
	       growth, growth < 15 ? "met" : "MISSED");
	if (best_proto[1] >= 0.5 || best_proto[2] >= 0.5 || best_proto[3] >= 0.5 || growth >= 15)
		rc = 1;
	return rc;
}
