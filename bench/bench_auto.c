/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The automatic layout's speed: plan_auto for model=405b on 1,024 GPUs
 * (128 nodes of 8; target under 50 ms, srun waits for it) and, for scale,
 * 16,384.  Each against a baseline measured in the same run: plan_estimate
 * called as many times as plan_auto planned candidates (on the winner's
 * layout), i.e. the bare per-candidate arithmetic without the enumeration,
 * the pins, the ranking and the winners' warnings.  Both sides report the
 * count they did, and the bench fails when the counts differ.  Times are
 * the best of several runs on one core.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "layout.h"
#include "plan.h"

#define RUNS 7
#define TARGET_MS 50.0

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct plan_auto_result res;
static struct plan scratch;

static int
one(const char *spec, long nodes)
{
	struct plan_ctx ctx;
	struct pl_layout l, w;
	double best = 1e9, base = 1e9, t;
	long i, n = 0, considered = 0;
	pl_err_t err;
	char out[256];
	int r, rv = 0;

	pl_err_clear(&err);
	if (layout_parse(spec, &l, &err) < 0) {
		fprintf(stderr, "bench_auto: %s: %s\n", spec, err.text);
		return -1;
	}
	plan_ctx_default(&ctx, nodes, 8);
	ctx.gpu_memory_gb = 80;
	for (r = 0; r < RUNS; r++) {
		t = now();
		if (plan_auto(&l, &ctx, &res, &err) < 0) {
			fprintf(stderr, "bench_auto: %s: %s\n", spec, err.text);
			return -1;
		}
		t = now() - t;
		if (t < best)
			best = t;
	}
	considered = res.considered;
	w = res.top[0].layout;
	for (r = 0; r < RUNS; r++) {
		n = 0;
		t = now();
		for (i = 0; i < considered; i++)
			if (plan_estimate(&w, &ctx, &scratch, NULL) == 0)
				n++;
		t = now() - t;
		if (t < base)
			base = t;
	}
	layout_format(&w, out, sizeof(out));
	printf("%-36s %6ld GPUs: plan_auto %7.2f ms (%ld planned, %ld fit), baseline %ld "
	       "plan_estimate %7.2f ms, ratio %.2f; %s\n", spec, nodes * 8, best * 1e3,
	       considered, res.fitting, n, base * 1e3, base > 0 ? best / base : 0.0, out);
	if (n != considered) {
		fprintf(stderr, "bench_auto: the baseline did %ld estimates, plan_auto %ld\n", n,
			considered);
		rv = -1;
	}
	if (nodes == 128 && best * 1e3 > TARGET_MS) {
		fprintf(stderr, "bench_auto: %s on 1,024 GPUs took %.2f ms, over the %.0f ms "
			"target\n", spec, best * 1e3, TARGET_MS);
		rv = -1;
	}
	return rv;
}

int
main(void)
{
	static const struct {
		const char *spec;
		long nodes;
	} cases[] = {
		{ "auto,model=405b", 128 },
		{ "auto,model=405b,seq=8192,gbs=2048", 128 },
		{ "auto,model=405b,seq=131072,gbs=128", 128 },
		{ "auto,model=405b,seq=8192,gbs=2048", 2048 },
	};
	size_t i;
	int rv = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (one(cases[i].spec, cases[i].nodes) < 0)
			rv = 1;
	return rv;
}
