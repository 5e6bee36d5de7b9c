/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slowrank_measure: the numbers behind the judge's slow-rank rule, taken
 * from the real hook under nccl_driver.  Runs a world of nccl_driver ranks
 * on this machine (tp2, pp2, dp2 by default, as tests/nccl_driver_test.py
 * does), reads every rank's record each interval with the reader, sums it
 * up with detect_summarize, and runs the judge on the round as layoutd's
 * leader would, one judge_state for the run, default parameters.
 *
 * Prints per run: the rounds, the machine's load, the largest score
 * (judge_state_lead) each rank reached, and when the judge first named a
 * slow rank (which one, at what cost); with --verbose every round's
 * scores; with --csv FILE every rank's window per round (mean wait and
 * gap per communicator), the raw numbers the rule judges by.  Exits 1 when
 * --expect-slow R was given and R was not named alone in every run, or
 * --expect-none and anything was named.
 *
 *   slowrank_measure [--runs N] [--seconds S] [--interval-ms MS]
 *                    [--tp N] [--cp N] [--pp N] [--dp N] [--csv FILE] [--verbose]
 *                    [--seed-base N] [--expect-slow R | --expect-none]
 *                    [--margin N]   (slow_margin in 1/10000, off at half)
 *                    [-- DRIVER-ARGS]
 *
 * Run k (from 0) gives the driver --seed N+k (N: --seed-base, 1), so the
 * runs draw their own jitter and spikes.
 *
 * The ranks sleep for their compute, but a machine busy with other work
 * delays some of them at random: read the load with the results.
 * NCCL_DRIVER and PL_NCCL_HOOK name the driver and the hook.  Needs no
 * root: the records are the caller's own.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "detect.h"
#include "judge.h"
#include "reader.h"
#include "record.h"

#define PROG "slowrank_measure"
#define MAX_RANKS 64
#define MAX_ARGS 64
#define MAX_FOUND 16

struct opts {
	int runs;
	double seconds;
	int interval_ms;
	int tp, cp, pp, dp;
	const char *csv;
	int expect_slow;	/* -1 none */
	int expect_none;
	int verbose;		/* every round's scores */
	int seed_base;		/* run k runs the driver with --seed base+k */
	int margin_pm;		/* slow_margin in 1/10000 (0: the default) */
	char *dargs[MAX_ARGS];
	int ndargs;
};

static struct opts opt = {
	.runs = 1, .seconds = 30, .interval_ms = 1000, .tp = 2, .cp = 1, .pp = 2,
	.dp = 2, .expect_slow = -1, .seed_base = 1,
};

struct world {
	char dir[256];
	char wdir[300];
	int n;
	pid_t pid[MAX_RANKS];
	char path[MAX_RANKS][600];
	struct detect_rank st[MAX_RANKS];
	int have[MAX_RANKS];
};

/* The world running now, for the signal handler to stop. */
static struct world *g_running;

static void
on_signal(int sig)
{
	int r;

	if (g_running)
		for (r = 0; r < g_running->n; r++)
			if (g_running->pid[r] > 0)
				kill(g_running->pid[r], SIGKILL);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The 1-minute load average (the machine is shared: say how busy). */
static double
load1(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l = -1;

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
sleep_ns(uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	while (nanosleep(&t, &t) == -1 && errno == EINTR)
		;
}

static void
die(const char *msg)
{
	fprintf(stderr, PROG ": %s\n", msg);
	exit(2);
}

/* The environment of rank r: the caller's without PARALLEL_LAYOUT*, NCCL_*
 * and SLURM*, then the rank's. */
static char **
rank_env(int r, int job, const struct world *w)
{
	extern char **environ;
	static char buf[12][640];
	char **env;
	size_t n = 0, k = 0, i;

	while (environ[n])
		n++;
	env = calloc(n + 13, sizeof(*env));
	if (!env)
		die("out of memory");
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "PARALLEL_LAYOUT", 15) != 0 &&
		    strncmp(environ[i], "NCCL_", 5) != 0 && strncmp(environ[i], "SLURM", 5) != 0)
			env[k++] = environ[i];
	snprintf(buf[0], sizeof(buf[0]), "RANK=%d", r);
	snprintf(buf[1], sizeof(buf[1]), "WORLD_SIZE=%d", w->n);
	snprintf(buf[2], sizeof(buf[2]), "LOCAL_RANK=%d", r);
	snprintf(buf[3], sizeof(buf[3]), "PARALLEL_LAYOUT_TP=%d", opt.tp);
	snprintf(buf[4], sizeof(buf[4]), "PARALLEL_LAYOUT_PP=%d", opt.pp);
	snprintf(buf[5], sizeof(buf[5]), "PARALLEL_LAYOUT_DP=%d", opt.dp);
	snprintf(buf[6], sizeof(buf[6]), "PARALLEL_LAYOUT_CP=%d", opt.cp);
	snprintf(buf[7], sizeof(buf[7]), "SLURM_JOB_ID=%d", job);
	snprintf(buf[8], sizeof(buf[8]), "SLURM_STEP_ID=0");
	snprintf(buf[9], sizeof(buf[9]), "SLURM_PROCID=%d", r);
	snprintf(buf[10], sizeof(buf[10]), "NCCL_PROFILER_PLUGIN=%s",
		 getenv("PL_NCCL_HOOK") ? getenv("PL_NCCL_HOOK") : "");
	snprintf(buf[11], sizeof(buf[11]), "PARALLEL_LAYOUT_WATCH_DIR=%s", w->wdir);
	for (i = 0; i < 12; i++)
		env[k++] = buf[i];
	env[k] = NULL;
	return env;
}

static void
world_start(struct world *w, int job, int run)
{
	const char *driver = getenv("NCCL_DRIVER");
	char *argv[MAX_ARGS + 16], seed[16];
	int r, i, a;

	if (!driver || !*driver || !getenv("PL_NCCL_HOOK"))
		die("NCCL_DRIVER and PL_NCCL_HOOK must name the driver and the hook");
	memset(w, 0, sizeof(*w));
	w->n = opt.tp * opt.cp * opt.pp * opt.dp;
	if (w->n > MAX_RANKS)
		die("--tp * --cp * --pp * --dp: at most 64 ranks");
	snprintf(w->dir, sizeof(w->dir), "/tmp/" PROG ".XXXXXX");
	if (!mkdtemp(w->dir))
		die("mkdtemp failed");
	snprintf(w->wdir, sizeof(w->wdir), "%s/watch", w->dir);
	if (mkdir(w->wdir, 0700) < 0)
		die("cannot make the watch directory");
	for (r = 0; r < w->n; r++) {
		char **env = rank_env(r, job, w);
		pid_t p;

		a = 0;
		argv[a++] = (char *)driver;
		argv[a++] = "--sync-dir";
		argv[a++] = w->dir;
		argv[a++] = "--steps";
		argv[a++] = "1000000";
		argv[a++] = "--timeout";
		argv[a++] = "60";
		/* Each run its own jitter and spikes (a --seed given wins). */
		snprintf(seed, sizeof(seed), "%d", opt.seed_base + run);
		argv[a++] = "--seed";
		argv[a++] = seed;
		for (i = 0; i < opt.ndargs; i++)
			argv[a++] = opt.dargs[i];
		argv[a] = NULL;
		fflush(NULL);
		p = fork();
		if (p < 0)
			die("fork failed");
		if (p == 0) {
			char out[320];

			snprintf(out, sizeof(out), "%s/out.%d", w->dir, r);
			if (!freopen(out, "w", stdout) || !freopen(out, "a", stderr))
				_exit(2);
			execve(driver, argv, env);
			_exit(127);
		}
		free(env);
		w->pid[r] = p;
	}
	g_running = w;
}

static void
world_stop(struct world *w)
{
	char cmd[400];
	int r;

	for (r = 0; r < w->n; r++)
		if (w->pid[r] > 0)
			kill(w->pid[r], SIGKILL);
	for (r = 0; r < w->n; r++)
		if (w->pid[r] > 0)
			waitpid(w->pid[r], NULL, 0);
	g_running = NULL;
	/* Only our own mkdtemp directory. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", w->dir);
	if (system(cmd) != 0)
		fprintf(stderr, PROG ": could not remove %s\n", w->dir);
}

/* Find the records not found yet (plw-JOB.0.RANK.PID). */
static void
world_find(struct world *w)
{
	DIR *d = opendir(w->wdir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		unsigned long job, step, rank, pid;

		if (sscanf(e->d_name, PLW_FILE_PREFIX "%lu.%lu.%lu.%lu", &job, &step, &rank,
			   &pid) != 4 || rank >= (unsigned long)w->n || w->path[rank][0])
			continue;
		snprintf(w->path[rank], sizeof(w->path[rank]), "%s/%s", w->wdir, e->d_name);
	}
	closedir(d);
}

/* One sample of every record; 1 when every rank's was read. */
static int
world_sample(struct world *w)
{
	static struct reader_snap snap;
	struct reader_expect x;
	int r, all = 1;

	world_find(w);
	reader_expect_uid(&x, getuid());
	for (r = 0; r < w->n; r++) {
		pl_err_t err;

		w->have[r] = 0;
		if (!w->path[r][0] || reader_read(w->path[r], &x, &snap, &err) < 0) {
			all = 0;
			continue;
		}
		detect_summarize(&snap, &w->st[r]);
		w->have[r] = 1;
	}
	return all;
}

/* Megatron order for the driver's layout: tp fastest, then cp, dp, pp. */
static void
coords(int r, uint32_t co[5])
{
	co[JUDGE_TP] = (uint32_t)(r % opt.tp);
	co[JUDGE_CP] = (uint32_t)((r / opt.tp) % opt.cp);
	co[JUDGE_EP] = 0;
	co[JUDGE_DP] = (uint32_t)((r / (opt.tp * opt.cp)) % opt.dp);
	co[JUDGE_PP] = (uint32_t)(r / (opt.tp * opt.cp * opt.dp));
}

struct run_result {
	int rounds;
	int named;		/* rank first named slow, -1 none */
	double named_s;		/* seconds after the first full round */
	double cost;
	int others;		/* findings of other kinds or other ranks */
	double lead_max[MAX_RANKS];
	int run_max[MAX_RANKS];	/* most rounds in a row it qualified */
	double load;		/* the machine's load at the end */
};

static void
csv_round(FILE *f, int run, double t, const struct world *w)
{
	int r;
	uint32_t k;

	for (r = 0; r < w->n; r++)
		for (k = 0; w->have[r] && k < w->st[r].ncomm; k++) {
			const struct detect_comm *c = &w->st[r].comm[k];

			if (!c->nwait)
				continue;
			fprintf(f, "%d,%.3f,%d,%s,%llu,%u,%.1f,%.1f\n", run, t, r, c->name,
				(unsigned long long)c->done, c->nwait,
				(double)c->wait_sum_ns / c->nwait / 1e3,
				(double)c->gap_sum_ns / c->nwait / 1e3);
		}
}

static int
one_run(int run, FILE *csv, struct run_result *res)
{
	static struct judge_rank jr[MAX_RANKS];
	struct judge_step step;
	struct judge_params par;
	struct judge_state *state;
	struct judge_finding out[16];
	struct judge_node node = { .name = "local" };
	struct world w;
	pl_err_t err;
	uint64_t t0, next, start_ns = 0;
	int r, cur[MAX_RANKS] = { 0 };

	memset(res, 0, sizeof(*res));
	res->named = -1;
	world_start(&w, 7300 + run, run);
	memset(&step, 0, sizeof(step));
	step.job_id = (uint64_t)(7300 + run);
	step.world = (uint32_t)w.n;
	step.size[JUDGE_TP] = (uint32_t)opt.tp;
	step.size[JUDGE_CP] = (uint32_t)opt.cp;
	step.size[JUDGE_EP] = 1;
	step.size[JUDGE_DP] = (uint32_t)opt.dp;
	step.size[JUDGE_PP] = (uint32_t)opt.pp;
	step.nodes = &node;
	step.nnodes = 1;
	judge_params_default(&par);
	if (opt.margin_pm) {
		par.slow_margin = opt.margin_pm / 10000.0;
		par.slow_margin_off = par.slow_margin / 2;
	}
	state = judge_state_new(step.world, &err);
	if (!state)
		die(err.text);
	t0 = mono_ns();
	next = t0;
	while (mono_ns() - t0 < (uint64_t)(opt.seconds * 1e9)) {
		uint64_t now;
		size_t n, i;

		next += (uint64_t)opt.interval_ms * 1000000u;
		sleep_ns(next > mono_ns() ? next - mono_ns() : 0);
		if (!world_sample(&w))
			continue;
		now = mono_ns();
		if (!start_ns)
			start_ns = now;
		res->rounds++;
		if (csv)
			csv_round(csv, run, (double)(now - start_ns) / 1e9, &w);
		for (r = 0; r < w.n; r++) {
			memset(&jr[r], 0, sizeof(jr[r]));
			jr[r].st = w.st[r];
			jr[r].node = 0;
			jr[r].gpu = r;
			jr[r].present = 1;
			coords(r, jr[r].co);
		}
		node.last_ns = now;
		n = judge_run(&step, jr, (size_t)w.n, now, &par, state, out,
			      sizeof(out) / sizeof(out[0]));
		if (opt.verbose)
			printf("  run %d round %3d:", run, res->rounds);
		for (r = 0; r < w.n; r++) {
			if (opt.verbose)
				printf(" %.3f", judge_state_lead(state, r));
			if (judge_state_lead(state, r) > res->lead_max[r])
				res->lead_max[r] = judge_state_lead(state, r);
			cur[r] = judge_state_lead(state, r) > 0 ? cur[r] + 1 : 0;
			if (cur[r] > res->run_max[r])
				res->run_max[r] = cur[r];
		}
		if (opt.verbose)
			printf("\n");
		for (i = 0; i < n && i < sizeof(out) / sizeof(out[0]); i++) {
			if (out[i].kind == JUDGE_SLOW && res->named < 0 && out[i].nculprits) {
				res->named = (int)out[i].culprits[0];
				res->named_s = (double)(now - start_ns) / 1e9;
				res->cost = out[i].cost_frac;
				printf("  run %d: %.1f s: %s\n", run, res->named_s, out[i].text);
			} else if (out[i].kind != JUDGE_SLOW ||
				   (int)out[i].culprits[0] != res->named) {
				res->others++;
				printf("  run %d: %.1f s: other finding: %s\n", run,
				       (double)(now - start_ns) / 1e9, out[i].text);
			}
		}
	}
	res->load = load1();
	judge_state_free(state);
	world_stop(&w);
	return 0;
}

static long
num(const char *what, const char *v, long lo, long hi)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi) {
		fprintf(stderr, PROG ": %s=%s: expected an integer from %ld to %ld\n", what, v, lo,
			hi);
		exit(2);
	}
	return n;
}

static void
parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 's' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "tp", required_argument, NULL, 't' },
		{ "cp", required_argument, NULL, 'C' },
		{ "pp", required_argument, NULL, 'p' },
		{ "dp", required_argument, NULL, 'd' },
		{ "csv", required_argument, NULL, 'c' },
		{ "expect-slow", required_argument, NULL, 'e' },
		{ "expect-none", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "seed-base", required_argument, NULL, 'b' },
		{ "margin", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'r': opt.runs = (int)num("--runs", optarg, 1, 1000); break;
		case 's': opt.seconds = (double)num("--seconds", optarg, 1, 3600); break;
		case 'i': opt.interval_ms = (int)num("--interval-ms", optarg, 10, 60000); break;
		case 't': opt.tp = (int)num("--tp", optarg, 1, 64); break;
		case 'C': opt.cp = (int)num("--cp", optarg, 1, 64); break;
		case 'p': opt.pp = (int)num("--pp", optarg, 1, 64); break;
		case 'd': opt.dp = (int)num("--dp", optarg, 1, 64); break;
		case 'c': opt.csv = optarg; break;
		case 'e': opt.expect_slow = (int)num("--expect-slow", optarg, 0, MAX_RANKS - 1); break;
		case 'n': opt.expect_none = 1; break;
		case 'v': opt.verbose = 1; break;
		case 'b': opt.seed_base = (int)num("--seed-base", optarg, 0, 1000000); break;
		case 'm': opt.margin_pm = (int)num("--margin (in 1/10000)", optarg, 1, 5000); break;
		default:
			fprintf(stderr, "usage: " PROG " [--runs N] [--seconds S] [--interval-ms MS] "
				"[--tp N] [--cp N] [--pp N] [--dp N] [--csv FILE] [--expect-slow R | "
				"--expect-none] [--verbose] [--seed-base N] [--margin N] [-- DRIVER-ARGS]\n");
			exit(2);
		}
	}
	for (; optind < argc; optind++) {
		if (opt.ndargs == MAX_ARGS)
			die("too many driver arguments");
		opt.dargs[opt.ndargs++] = argv[optind];
	}
}

int
main(int argc, char **argv)
{
	FILE *csv = NULL;
	int run, r, bad = 0, nworld, worst_run = 0;
	double worst_healthy = 0, slowest = 0;

	parse(argc, argv);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	nworld = opt.tp * opt.cp * opt.pp * opt.dp;
	if (opt.csv) {
		csv = fopen(opt.csv, "w");
		if (!csv)
			die("cannot write the --csv file");
		fprintf(csv, "run,t_s,rank,comm,done,nwait,wait_us,gap_us\n");
	}
	printf(PROG ": %d run(s) of %.0f s, rounds every %d ms, world %d (tp%d cp%d pp%d dp%d), "
	       "driver:", opt.runs, opt.seconds, opt.interval_ms, nworld, opt.tp, opt.cp, opt.pp,
	       opt.dp);
	for (r = 0; r < opt.ndargs; r++)
		printf(" %s", opt.dargs[r]);
	printf("\n");
	for (run = 0; run < opt.runs; run++) {
		struct run_result res;

		one_run(run, csv, &res);
		printf("  run %d: %d rounds, load %.1f; largest score per rank:", run, res.rounds,
		       res.load);
		for (r = 0; r < nworld; r++)
			printf(" %.3f", res.lead_max[r]);
		printf("; most rounds in a row qualifying:");
		for (r = 0; r < nworld; r++)
			printf(" %d", res.run_max[r]);
		printf("\n");
		if (opt.expect_slow >= 0) {
			if (res.named != opt.expect_slow || res.others) {
				bad = 1;
				printf("  run %d: MISS: rank %d was not named alone\n", run,
				       opt.expect_slow);
			} else if (res.named_s > slowest) {
				slowest = res.named_s;
			}
		}
		if (opt.expect_none && (res.named >= 0 || res.others))
			bad = 1;
		for (r = 0; r < nworld; r++) {
			if (r == opt.expect_slow)
				continue;
			if (res.lead_max[r] > worst_healthy)
				worst_healthy = res.lead_max[r];
			if (res.run_max[r] > worst_run)
				worst_run = res.run_max[r];
		}
	}
	if (opt.expect_slow >= 0)
		printf(PROG ": rank %d named in every run: %s; the latest after %.1f s\n",
		       opt.expect_slow, bad ? "no" : "yes", slowest);
	if (opt.expect_none)
		printf(PROG ": nothing named in %d healthy run(s): %s\n", opt.runs, bad ? "no" : "yes");
	printf(PROG ": healthy ranks: largest score %.3f, most rounds in a row qualifying %d\n",
	       worst_healthy, worst_run);
	if (csv)
		fclose(csv);
	return bad;
}
