/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Placement speed and memory at 1k, 16k and 100k GPUs (8 per node, a
 * three-level fat tree), each against a baseline measured in the same run:
 * the identity mapping (RANK = SLURM_PROCID, LOCAL_RANK = local id, with the
 * same node lookups), i.e. what a launcher does without placement.  Times are
 * the best of several runs on one core; peak memory is the maximum resident
 * size of a child process that builds the map and runs one placement, less
 * that of a child that builds the map and runs the baseline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "place.h"
#include "topo.h"
#include "plan.h"

#define RUNS 7

struct setup {
	struct topo_map *map;
	struct place_node *nodes;
	char **names;
	long nnodes;
	struct pl_layout layout;
	double bytes[PL_NAXES];
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
setup(struct setup *s, long gpus, const char *spec)
{
	struct plan p;
	struct plan_ctx ctx;
	pl_err_t err;
	long i;
	int a;

	memset(s, 0, sizeof(*s));
	pl_err_clear(&err);
	s->nnodes = gpus / 8;
	s->map = topo_synth_fat_tree(s->nnodes, 8, 32, 16, 1);
	s->nodes = calloc((size_t)s->nnodes, sizeof(*s->nodes));
	if (!s->map || !s->nodes)
		return -1;
	for (i = 0; i < s->nnodes; i++) {
		s->nodes[i].name = s->map->nodes[i].name;
		s->nodes[i].ntasks = 8;
	}
	if (layout_parse(spec, &s->layout, &err) < 0 ||
	    layout_resolve(&s->layout, gpus, &err) < 0) {
		fprintf(stderr, "bench: %s: %s\n", spec, err.text);
		return -1;
	}
	plan_ctx_default(&ctx, s->nnodes, 8);
	if (plan_compute(&s->layout, &ctx, &p, &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.text);
		return -1;
	}
	for (a = 0; a < PL_NAXES; a++)
		s->bytes[a] = plan_axis_bytes(&p, a);
	return 0;
}

static void
teardown(struct setup *s)
{
	free(s->nodes);
	topo_free(s->map);
}

/* The baseline: what a launcher computes without placement. */
static long
identity(const struct setup *s, struct place_task *tasks)
{
	long i, j, procid = 0, sum = 0;

	for (i = 0; i < s->nnodes; i++) {
		long mi = topo_find_node(s->map, s->nodes[i].name);
		const struct topo_nodetype *t = topo_node_type(s->map, mi);

		for (j = 0; j < s->nodes[i].ntasks; j++, procid++) {
			tasks[procid].procid = procid;
			tasks[procid].rank = procid;
			tasks[procid].node = i;
			tasks[procid].local_id = j;
			tasks[procid].local_rank = t->gpus[j].index;
			sum += tasks[procid].local_rank;
		}
	}
	return sum;
}

static int
run_place(const struct setup *s)
{
	struct place_result r;
	pl_err_t err;

	pl_err_clear(&err);
	if (place_compute(&s->layout, s->map, s->nodes, s->nnodes, s->bytes, &r, &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.text);
		return -1;
	}
	place_result_free(&r);
	return 0;
}

static int
run_identity(const struct setup *s)
{
	struct place_task *tasks = calloc((size_t)s->nnodes * 8, sizeof(*tasks));
	volatile long sink;

	if (!tasks)
		return -1;
	sink = identity(s, tasks);
	(void)sink;
	free(tasks);
	return 0;
}

/* Peak RSS (KiB) of a child that sets up and runs fn once; the child
 * reports its own maximum through a pipe. */
static long
child_peak_kib(long gpus, const char *spec, int (*fn)(const struct setup *))
{
	long kib = -1;
	int fds[2], status;
	pid_t pid;

	if (pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		struct setup s;
		struct rusage ru;
		long peak = -1;

		close(fds[0]);
		if (setup(&s, gpus, spec) == 0 && fn(&s) == 0 && getrusage(RUSAGE_SELF, &ru) == 0)
			peak = ru.ru_maxrss;
		teardown(&s);
		if (write(fds[1], &peak, sizeof(peak)) != sizeof(peak))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (pid > 0 && read(fds[0], &kib, sizeof(kib)) != sizeof(kib))
		kib = -1;
	close(fds[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return kib;
}

int
main(void)
{
	static const long sizes[] = { 1024, 16384, 100000 };
	const char *spec = "tp8,pp4";
	long peak_place[3], peak_ident[3];
	size_t i;
	int rc = 0;

	/* Memory first, while this process is still small: a forked child
	 * starts with its parent's resident pages. */
	for (i = 0; i < 3; i++) {
		peak_place[i] = child_peak_kib(sizes[i], spec, run_place);
		peak_ident[i] = child_peak_kib(sizes[i], spec, run_identity);
	}
	printf("# placement speed and memory, layout %s, 8 GPUs per node, 3-level fat tree\n", spec);
	printf("# baseline: the identity mapping (RANK = SLURM_PROCID) over the same map\n");
	printf("%8s %10s %12s %8s %10s %12s %8s\n", "gpus", "place_ms", "identity_ms", "ratio",
	       "place_kib", "identity_kib", "ratio");
	for (i = 0; i < 3; i++) {
		struct setup s;
		double best_p = 1e9, best_i = 1e9;
		int k;

		if (setup(&s, sizes[i], spec) < 0)
			return 1;
		for (k = 0; k < RUNS; k++) {
			double t0 = now();

			if (run_place(&s) < 0)
				return 1;
			t0 = now() - t0;
			if (t0 < best_p)
				best_p = t0;
			t0 = now();
			run_identity(&s);
			t0 = now() - t0;
			if (t0 < best_i)
				best_i = t0;
		}
		teardown(&s);
		printf("%8ld %10.3f %12.3f %8.1f %10ld %12ld %8.2f\n", sizes[i], best_p * 1e3,
		       best_i * 1e3, best_p / best_i, peak_place[i], peak_ident[i],
		       peak_ident[i] > 0 ? (double)peak_place[i] / (double)peak_ident[i] : 0.0);
		if (sizes[i] == 100000) {
			printf("# target: 100k GPUs under 50 ms on one core: %.1f ms, %s\n",
			       best_p * 1e3, best_p < 0.050 ? "met" : "MISSED");
			rc = best_p < 0.050 ? 0 : 1;
		}
	}
	return rc;
}
