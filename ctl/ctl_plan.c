/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `layoutctl plan` and `layoutctl place`: both parse a layout, find the
 * step's nodes, run the planner (for the report and for the traffic that
 * orders the placement) and place the ranks.  An auto spec is chosen by
 * svc_run (plan_auto on the step's nodes, the best candidate that places),
 * the same path srun's placements take.
 */
#include "config.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"
#include "order.h"
#include "proto.h"
#include "service.h"

/* Everything one run of plan/place builds; freed by job_free(). */
struct job {
	struct topo_map *map;
	struct hosts names;
	struct place_node *nodes;
	long nnodes;
	struct svc_result r;
	double usable_gb, gpu_gb;	/* what the candidates had to fit */
	bool gpu_gb_nominal;		/* neither the map nor --gpu-mem knew it */
	bool gbs_chosen;		/* gbs was not pinned: the planner's */
};

/* What plan_auto is told beyond the map (plan's --headroom etc.). */
struct auto_opts {
	double headroom, efficiency, peak_tflops;
};

static void
job_free(struct job *j)
{
	svc_result_free(&j->r);
	free(j->nodes);
	hosts_free(&j->names);
	topo_free(j->map);
}

/* N plain nodes named node1..nodeN with G GPUs each. */
static struct topo_map *
uniform_map(const char *nodes_arg, long gpus_per_node)
{
	long n = ctl_parse_count("--nodes", nodes_arg, 1000000), i;
	struct topo_map *m = NULL;
	char **names;
	pl_err_t err;

	if (n < 0)
		return NULL;
	pl_err_clear(&err);
	names = calloc((size_t)n, sizeof(*names));
	for (i = 0; names && i < n; i++) {
		names[i] = malloc(24);
		if (names[i])
			snprintf(names[i], 24, "node%ld", i + 1);
	}
	if (names)
		m = topo_make_uniform((const char *const *)names, n, (int)gpus_per_node, &err);
	for (i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	if (!m)
		ctl_error("%s", err.text[0] ? err.text : "out of memory");
	return m;
}

/* What the candidates of an auto spec had to fit, for the table. */
static void
auto_fit(struct job *j, const char *spec)
{
	const struct plan_ctx *c = &j->r.pctx;
	struct pl_layout req;

	j->gpu_gb_nominal = !(c->gpu_memory_gb > 0);
	j->gpu_gb = c->gpu_memory_gb > 0 ? c->gpu_memory_gb : 80.0;
	j->usable_gb = j->gpu_gb * (1.0 - (c->mem_headroom > 0 ? c->mem_headroom :
					   PLAN_DEFAULT_HEADROOM));
	j->gbs_chosen = layout_parse(spec, &req, NULL) == 0 && !(req.given & PL_GIVEN_GBS);
}

/* Load, find the step, plan and place.  Returns an exit status (0 ok). */
static int
job_run(struct job *j, const char *spec, const char *topology, const char *nodes_arg,
	long gpus_per_node, long tasks_per_node, double gpu_mem, const char *previous,
	bool need_place, const struct auto_opts *ao)
{
	struct svc_options opt = { previous, gpu_mem, need_place, ao->headroom, ao->efficiency,
				   ao->peak_tflops };
	pl_err_t err;

	pl_err_clear(&err);
	if (topology) {
		j->map = ctl_load_topology(topology, gpus_per_node);
	} else if (!nodes_arg || gpus_per_node <= 0) {
		ctl_error("give --topology MAP, or --nodes N with --gpus-per-node G");
		return 2;
	} else {
		j->map = uniform_map(nodes_arg, gpus_per_node);
		nodes_arg = NULL;
	}
	if (!j->map)
		return 1;
	if (ctl_step_nodes(j->map, nodes_arg, tasks_per_node, &j->names, &j->nodes,
			   &j->nnodes) < 0)
		return 1;
	if (svc_run(j->map, spec, j->nodes, j->nnodes, &opt, &j->r, &err) < 0) {
		ctl_error("--layout=%s: %s", ctl_clip(spec), err.text);
		return 1;
	}
	if (j->r.choice)
		auto_fit(j, spec);
	return 0;
}

static json_t *
layout_json(const struct pl_layout *l)
{
	char spec[256];

	layout_format(l, spec, sizeof(spec));
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:s, s:s}",
			 "tp", (json_int_t)l->size[PL_TP], "pp", (json_int_t)l->size[PL_PP],
			 "cp", (json_int_t)l->size[PL_CP], "ep", (json_int_t)l->size[PL_EP],
			 "dp", (json_int_t)l->size[PL_DP], "order", l->order_name, "spec", spec);
}

static json_t *
cost_json(const struct place_cost *c)
{
	return json_pack("{s:f, s:f}", "cross_node_bytes_per_step", c->cross_node_bytes,
			 "cross_switch_bytes_per_step", c->cross_switch_bytes);
}

/* The step time of a plan (plan.h states the model). */
static json_t *
step_json(const struct plan *p)
{
	json_t *exposed = json_object();
	int i;

	for (i = 0; i < PL_NAXES; i++)
		json_object_set_new(exposed, pl_axis_name(i), json_real(p->exposed_seconds[i]));
	return json_pack("{s:f, s:f, s:o, s:f, s:f, s:f, s:f, s:b}",
			 "compute_seconds", p->compute_seconds,
			 "exposed_comm_seconds", p->exposed_comm_seconds,
			 "exposed_seconds", exposed, "bubble_seconds", p->bubble_seconds,
			 "step_seconds", p->step_seconds, "peak_tflops", p->peak_tflops,
			 "efficiency", p->efficiency, "peak_nominal", p->peak_nominal);
}

static json_t *
auto_json(const struct job *j)
{
	static const char *const rc[] = { "none", "selective", "full" };
	json_t *cands = json_array();
	size_t i;

	for (i = 0; i < j->r.choice->n; i++) {
		const struct plan_candidate *c = &j->r.choice->top[i];
		const struct pl_layout *l = &c->layout;
		json_t *o = layout_json(l);

		json_object_set_new(o, "vpp", json_integer(l->vpp));
		json_object_set_new(o, "sp", json_boolean(l->sp));
		json_object_set_new(o, "zero", json_integer(l->zero));
		json_object_set_new(o, "recompute", json_string(rc[l->recompute % 3]));
		json_object_set_new(o, "cp_algo", json_string(l->cp_algo == PL_CP_ULYSSES ?
							      "ulysses" : "ring"));
		json_object_set_new(o, "gbs", json_integer(l->gbs));
		json_object_set_new(o, "total_gb_per_gpu", json_real(c->plan.total_gb_per_gpu));
		json_object_set_new(o, "step", step_json(&c->plan));
		json_array_append_new(cands, o);
	}
	return json_pack("{s:I, s:I, s:I, s:f, s:b, s:f, s:b, s:s, s:o}", "chosen",
			 (json_int_t)j->r.choice_index, "considered",
			 (json_int_t)j->r.choice->considered, "fitting", (json_int_t)j->r.choice->fitting,
			 "gpu_memory_gb", j->gpu_gb, "gpu_memory_nominal", j->gpu_gb_nominal,
			 "usable_gb", j->usable_gb, "gbs_chosen", j->gbs_chosen, "why", j->r.choice->why,
			 "candidates", cands);
}

static json_t *
plan_json(const struct job *j)
{
	const struct plan *p = &j->r.plan;
	const struct pl_model *md = &j->r.layout.model;
	json_t *warn = json_array(), *secs = json_object(), *root;
	int i;

	for (i = 0; i < p->nwarnings; i++)
		json_array_append_new(warn, json_string(p->warnings[i]));
	if (!j->r.place_ok)
		json_array_append_new(warn, json_pack("s+", "placement refused: ", j->r.place_error));
	for (i = 0; i < PL_NAXES; i++)
		json_object_set_new(secs, pl_axis_name(i),
				    json_pack("{s:s, s:f}", "link", topo_link_name(p->comm_link[i]),
					      "seconds", p->comm_seconds[i]));
	root = json_pack("{s:o, s:I, s:I, s:{s:s, s:f, s:I, s:I, s:I, s:I, s:b, s:I, s:I, s:I}}",
			 "layout", layout_json(&j->r.layout), "world", (json_int_t)j->r.world,
			 "nodes", (json_int_t)j->nnodes,
			 "model", "name", md->name, "params", md->params,
			 "hidden", (json_int_t)md->hidden, "layers", (json_int_t)md->layers,
			 "heads", (json_int_t)md->heads, "vocab", (json_int_t)md->vocab,
			 "assumed", !j->r.layout.have_model, "seq", (json_int_t)j->r.layout.seq,
			 "mbs", (json_int_t)j->r.layout.mbs, "zero", (json_int_t)j->r.layout.zero);
	json_object_set_new(root, "memory",
			    json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}",
				      "state_gb_per_gpu", p->state_gb_per_gpu,
				      "activation_gb_per_gpu", p->activation_gb_per_gpu,
				      "logits_gb_per_gpu", p->logits_gb_per_gpu,
				      "embedding_gb_per_gpu", p->embedding_gb_per_gpu,
				      "total_gb_per_gpu", p->total_gb_per_gpu,
				      "gpu_memory_gb", j->r.pctx.gpu_memory_gb));
	json_object_set_new(root, "communication",
			    json_pack("{s:f, s:f, s:f, s:f, s:f, s:o}",
				      "tp_bytes_per_step", p->tp_bytes_per_step,
				      "pp_bytes_per_step", p->pp_bytes_per_step,
				      "dp_bytes_per_step", p->dp_bytes_per_step,
				      "cp_bytes_per_step", p->cp_bytes_per_step,
				      "ep_bytes_per_step", p->ep_bytes_per_step,
				      "seconds", secs));
	json_object_set_new(root, "step", step_json(p));
	if (j->r.choice)
		json_object_set_new(root, "auto", auto_json(j));
	json_object_set_new(root, "bubble_fraction", json_real(p->bubble_fraction));
	json_object_set_new(root, "micro_batches", json_integer(p->micro_batches));
	json_object_set_new(root, "grad_accum_steps", json_integer(p->grad_accum_steps));
	json_object_set_new(root, "global_batch", json_integer(p->global_batch));
	json_object_set_new(root, "placement", j->r.place_ok ?
			    json_pack("{s:o, s:o, s:s}", "cost", cost_json(&j->r.place.cost),
				      "baseline_cost", cost_json(&j->r.place.baseline),
				      "strategy", j->r.place.strategy) : json_null());
	json_object_set_new(root, "warnings", warn);
	return root;
}

static int
print_json(json_t *root)
{
	int rv = 0;

	if (!root || json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
				JSON_REAL_PRECISION(12)) < 0) {
		ctl_error("cannot write JSON");
		rv = 1;
	}
	fputc('\n', stdout);
	json_decref(root);
	return rv;
}

/*
 * What a candidate is beyond its sizes, in two cells: the schedule
 * ("vpp4,sp") and the rest ("zero=1,selective,ulysses").
 */
static void
variant_text(const struct pl_layout *l, int row, char *buf, size_t size)
{
	static const char *const rc[] = { "", ",selective", ",full" };

	if (row == 0)
		snprintf(buf, size, "vpp%ld%s", l->vpp, l->sp ? ",sp" : "");
	else
		snprintf(buf, size, "zero=%d%s%s", l->zero, rc[l->recompute % 3],
			 l->size[PL_CP] > 1 && l->cp_algo == PL_CP_ULYSSES ? ",ulysses" : "");
}

/* The candidates side by side, one column each, then why the first won. */
static void
print_auto(const struct job *j)
{
	const struct plan_auto_result *a = j->r.choice;
	char buf[PLAN_AUTO_TOP][48];
	size_t i;
	int ax;

	printf("auto         %ld layouts considered, %ld fit %.1f GB (%.0f GB%s, less headroom); "
	       "the best %zu:\n", a->considered, a->fitting, j->usable_gb, j->gpu_gb,
	       j->gpu_gb_nominal ? " nominal" : "", a->n);
	if (j->gbs_chosen && a->n > 0)
		printf("             gbs=%ld chosen by the planner for all (pin gbs= for yours)\n",
		       a->top[0].layout.gbs);
	printf("%-13s", "");
	for (i = 0; i < a->n; i++)
		printf(" %-24s", (snprintf(buf[i], 48, "#%zu%s", i + 1,
					   i == j->r.choice_index ? " chosen" : ""), buf[i]));
	printf("\n%-13s", "sizes");
	for (i = 0; i < a->n; i++) {
		const struct pl_layout *l = &a->top[i].layout;

		snprintf(buf[i], 48, "tp%ld,cp%ld,pp%ld,dp%ld", l->size[PL_TP], l->size[PL_CP],
			 l->size[PL_PP], l->size[PL_DP]);
		printf(" %-24s", buf[i]);
	}
	for (ax = 0; ax < 2; ax++) {
		printf("\n%-13s", ax == 0 ? "schedule" : "state, cp");
		for (i = 0; i < a->n; i++) {
			variant_text(&a->top[i].layout, ax, buf[i], 48);
			printf(" %-24s", buf[i]);
		}
	}
	printf("\n%-13s", "memory GB");
	for (i = 0; i < a->n; i++)
		printf(" %-24.1f", a->top[i].plan.total_gb_per_gpu);
	printf("\n%-13s", "compute s");
	for (i = 0; i < a->n; i++)
		printf(" %-24.3f", a->top[i].plan.compute_seconds);
	for (ax = 0; ax < PL_NAXES; ax++) {
		char label[24];

		if (ax == PL_EP)
			continue;
		snprintf(label, sizeof(label), "%s exposed s", pl_axis_name(ax));
		printf("\n%-13s", label);
		for (i = 0; i < a->n; i++) {
			const struct plan *p = &a->top[i].plan;

			snprintf(buf[i], 48, "%.3f (%s)", p->exposed_seconds[ax],
				 topo_link_name(p->comm_link[ax]));
			printf(" %-24s", buf[i]);
		}
	}
	printf("\n%-13s", "bubble s");
	for (i = 0; i < a->n; i++) {
		snprintf(buf[i], 48, "%.3f (%.1f %%)", a->top[i].plan.bubble_seconds,
			 100.0 * a->top[i].plan.bubble_fraction);
		printf(" %-24s", buf[i]);
	}
	printf("\n%-13s", "step s");
	for (i = 0; i < a->n; i++)
		printf(" %-24.3f", a->top[i].plan.step_seconds);
	if (j->r.choice_index == 0) {
		printf("\nwhy          %s\n", a->why);
	} else {
		char text[PROTO_CHOICE_MAX];

		svc_choice_text(&j->r, text, sizeof(text));
		printf("\nwhy          %s\n", text);
	}
	printf("             (links by the NVLink domain rule; the chosen layout is placed on "
	       "the step's nodes below)\n");
}

static void
print_plan(const struct job *j)
{
	const struct plan *p = &j->r.plan;
	const struct pl_layout *l = &j->r.layout;
	const struct pl_model *md = &l->model;
	static const char *const rc_name[] = { "none", "selective", "full" };
	char b1[32], b2[32], b3[32], b4[32];
	int i;

	printf("layout       tp%ld cp%ld ep%ld pp%ld dp%ld, order %s\n", l->size[PL_TP],
	       l->size[PL_CP], l->size[PL_EP], l->size[PL_PP], l->size[PL_DP], l->order_name);
	printf("world        %ld GPUs on %ld nodes, largest NVLink domain %ld GPUs\n", j->r.world,
	       j->nnodes, j->r.pctx.domain_gpus);
	printf("model        %s%s: %.1fB params, hidden %ld, %ld layers, %ld heads, vocab %ld\n",
	       md->name, l->have_model ? "" : " (assumed; give model= for yours)", md->params / 1e9,
	       md->hidden, md->layers, md->heads, md->vocab);
	printf("batch        seq %ld, mbs %ld, %ld micro-batches, grad accum %ld, global batch %ld\n",
	       l->seq, l->mbs, p->micro_batches, p->grad_accum_steps, p->global_batch);
	printf("schedule     %s%s%s, ZeRO %d, recompute %s%s%s\n",
	       l->size[PL_PP] > 1 ? (l->vpp > 1 ? "interleaved 1F1B, vpp " : "1F1B") : "no pipeline",
	       l->size[PL_PP] > 1 && l->vpp > 1 ? (snprintf(b1, sizeof(b1), "%ld", l->vpp), b1) : "",
	       l->size[PL_TP] > 1 ? (l->sp ? ", sequence parallel" : ", no sequence parallelism") : "",
	       l->zero, rc_name[l->recompute % 3],
	       l->size[PL_CP] > 1 ? ", CP " : "",
	       l->size[PL_CP] > 1 ? (l->cp_algo == PL_CP_ULYSSES ? "all-to-all (Ulysses)" :
				     "ring attention") : "");
	printf("memory/GPU   state %.2f GB + activations %.2f GB + logits %.2f GB + embeddings %.2f GB = %.2f GB",
	       p->state_gb_per_gpu, p->activation_gb_per_gpu, p->logits_gb_per_gpu,
	       p->embedding_gb_per_gpu, p->total_gb_per_gpu);
	if (j->r.pctx.gpu_memory_gb > 0)
		printf(" of %.0f GB", j->r.pctx.gpu_memory_gb);
	printf("\n");
	printf("traffic      per GPU per step:\n");
	for (i = 0; i < PL_NAXES; i++) {
		double bytes = plan_axis_bytes(p, i);

		if (bytes <= 0)
			continue;
		printf("  %-10s %12s  on %-6s ~%.3f s\n", pl_axis_name(i),
		       ctl_bytes(bytes, b1, sizeof(b1)), topo_link_name(p->comm_link[i]),
		       p->comm_seconds[i]);
	}
	printf("bubble       %.1f %%\n", p->bubble_fraction * 100.0);
	if (p->step_seconds >= 0)
		printf("step time    compute %.3f s + exposed communication %.3f s + bubble %.3f s = "
		       "%.3f s (%.0f TFLOP/s%s at %.0f %%)\n", p->compute_seconds,
		       p->exposed_comm_seconds, p->bubble_seconds, p->step_seconds, p->peak_tflops,
		       p->peak_nominal ? " nominal" : "", 100.0 * p->efficiency);
	else
		printf("step time    unknown (a link class the layout uses has no bandwidth)\n");
	if (j->r.place_ok)
		printf("placement    cross-node %s, cross-switch %s per step (Slurm block order: %s, %s)\n"
		       "             %s\n",
		       ctl_bytes(j->r.place.cost.cross_node_bytes, b1, sizeof(b1)),
		       ctl_bytes(j->r.place.cost.cross_switch_bytes, b2, sizeof(b2)),
		       ctl_bytes(j->r.place.baseline.cross_node_bytes, b3, sizeof(b3)),
		       ctl_bytes(j->r.place.baseline.cross_switch_bytes, b4, sizeof(b4)),
		       j->r.place.strategy);
	if (p->nwarnings == 0 && j->r.place_ok)
		printf("warnings     none\n");
	else
		printf("warnings\n");
	for (i = 0; i < p->nwarnings; i++)
		printf("  - %s\n", p->warnings[i]);
	if (!j->r.place_ok)
		printf("  - placement refused: %s\n", j->r.place_error);
}

enum { OPT_LAYOUT = 1000, OPT_TOPOLOGY, OPT_NODES, OPT_GPN, OPT_TPN, OPT_GPUMEM,
	OPT_PREVIOUS, OPT_JSON, OPT_SVG, OPT_HEADROOM, OPT_EFFICIENCY, OPT_PEAK, OPT_HELP };

static const struct option plan_opts[] = {
	{ "layout", required_argument, NULL, OPT_LAYOUT },
	{ "topology", required_argument, NULL, OPT_TOPOLOGY },
	{ "nodes", required_argument, NULL, OPT_NODES },
	{ "gpus-per-node", required_argument, NULL, OPT_GPN },
	{ "tasks-per-node", required_argument, NULL, OPT_TPN },
	{ "gpu-mem", required_argument, NULL, OPT_GPUMEM },
	{ "previous", required_argument, NULL, OPT_PREVIOUS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "svg", required_argument, NULL, OPT_SVG },
	{ "headroom", required_argument, NULL, OPT_HEADROOM },
	{ "efficiency", required_argument, NULL, OPT_EFFICIENCY },
	{ "peak-tflops", required_argument, NULL, OPT_PEAK },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 }
};

struct args {
	const char *layout, *topology, *nodes, *previous, *svg;
	long gpn, tpn;
	double gpu_mem;
	bool json;
	struct auto_opts ao;
};

/* A number in (lo, hi] for option name, or -1 after a message. */
static double
parse_real(const char *name, const char *arg, double lo, double hi, const char *example)
{
	char *end = NULL;
	double v = strtod(arg, &end);

	if (end == arg || *end || !(v > lo) || v > hi) {
		ctl_error("%s=%s: expected %s", name, ctl_clip(arg), example);
		return -1;
	}
	return v;
}

static int
parse_args(int argc, char **argv, struct args *a, void (*help)(void))
{
	int c;

	memset(a, 0, sizeof(*a));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", plan_opts, NULL)) != -1) {
		switch (c) {
		case OPT_LAYOUT: a->layout = optarg; break;
		case OPT_TOPOLOGY: a->topology = optarg; break;
		case OPT_NODES: a->nodes = optarg; break;
		case OPT_PREVIOUS: a->previous = optarg; break;
		case OPT_SVG: a->svg = optarg; break;
		case OPT_JSON: a->json = true; break;
		case OPT_GPN:
			if ((a->gpn = ctl_parse_count("--gpus-per-node", optarg, 4096)) < 0)
				return 2;
			break;
		case OPT_TPN:
			if ((a->tpn = ctl_parse_count("--tasks-per-node", optarg, 4096)) < 0)
				return 2;
			break;
		case OPT_GPUMEM: {
			char *end = NULL;

			a->gpu_mem = strtod(optarg, &end);
			if (end == optarg || *end || !(a->gpu_mem > 0) || a->gpu_mem > 1e6) {
				ctl_error("--gpu-mem=%s: expected GB per GPU, e.g. 80",
					  ctl_clip(optarg));
				return 2;
			}
			break;
		}
		case OPT_HEADROOM:
			if ((a->ao.headroom = parse_real("--headroom", optarg, 0, 0.95,
							 "a fraction of GPU memory to keep "
							 "free, above 0 and at most 0.95, "
							 "e.g. 0.1")) < 0)
				return 2;
			break;
		case OPT_EFFICIENCY:
			if ((a->ao.efficiency = parse_real("--efficiency", optarg, 0, 1,
							   "the fraction of peak a step "
							   "achieves, above 0 and at most 1, "
							   "e.g. 0.4")) < 0)
				return 2;
			break;
		case OPT_PEAK:
			if ((a->ao.peak_tflops = parse_real("--peak-tflops", optarg, 0, 1e6,
							    "dense TFLOP/s per GPU, e.g. "
							    "989")) < 0)
				return 2;
			break;
		case OPT_HELP:
			help();
			return -1;
		default:
			ctl_error("%s: unknown or incomplete option '%s' (see '%s --help')", argv[0],
				  ctl_clip(argv[optind - 1]), argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		ctl_error("%s: unexpected argument '%s'", argv[0], ctl_clip(argv[optind]));
		return 2;
	}
	if (!a->layout) {
		ctl_error("%s: --layout SPEC is required (e.g. --layout tp8,pp4)", argv[0]);
		return 2;
	}
	return 0;
}

static int plan_exec(int argc, char **argv);
static int place_exec(int argc, char **argv);

const struct ctl_cmd ctl_cmd_plan = {
	"plan",
	"--layout SPEC (--topology MAP [--nodes HOSTLIST] | --nodes N --gpus-per-node G)\n"
	"[--tasks-per-node N] [--gpu-mem GB] [--previous SPEC] [--json] [--svg FILE]\n"
	"[--headroom F] [--efficiency F] [--peak-tflops T]",
	"memory, traffic, bubble, step time and warnings for a layout",
	"Memory per GPU, bytes each parallel axis moves per step, the pipeline bubble,\n"
	"the estimated step time, the batch arithmetic, the placement's network cost\n"
	"against Slurm's block order, and the warnings that matter.  --previous compares\n"
	"with the layout this one replaces (a dp change changes the global batch).\n"
	"--svg draws the placement (--svg - writes the picture alone to stdout).\n"
	"With SPEC auto,... (e.g. auto,model=70b,tp8) the planner chooses the sizes\n"
	"the pins leave open: the best five side by side and\n"
	"why the first won; --headroom keeps that fraction of GPU memory free (0.1),\n"
	"--efficiency and --peak-tflops set the compute model (0.4 of 989, an H100).\n"
	"Exit status: 0 planned (warnings included), 1 bad layout or input or a\n"
	"placement refused (the plan is still shown), 2 usage.\n",
	plan_exec,
	NULL
};

const struct ctl_cmd ctl_cmd_place = {
	"place",
	"--layout SPEC --topology MAP --nodes HOSTLIST\n"
	"[--tasks-per-node N] [--gpus-per-node G] [--json]",
	"each Slurm task's framework rank, GPU, coordinates and NIC",
	"One row per Slurm task (SLURM_PROCID, block distribution over HOSTLIST in the\n"
	"order given): its framework RANK, LOCAL_RANK (the GPU it must use), node,\n"
	"coordinates and closest NIC, then the network cost against Slurm's block order.\n"
	"MAP is a cluster map (" CTL_PROG " topo build) or a Slurm topology.conf or\n"
	"topology.yaml with --gpus-per-node G.  Tasks per node default to the node's\n"
	"GPUs.\n",
	place_exec,
	NULL
};

static void
plan_help(void)
{
	ctl_cmd_help(&ctl_cmd_plan, NULL);
}

static int
plan_exec(int argc, char **argv)
{
	struct args a;
	struct job j;
	int rv;

	rv = parse_args(argc, argv, &a, plan_help);
	if (rv)
		return rv < 0 ? 0 : rv;
	memset(&j, 0, sizeof(j));
	rv = job_run(&j, a.layout, a.topology, a.nodes, a.gpn, a.tpn, a.gpu_mem, a.previous,
		     false, &a.ao);
	if (rv == 0 && a.svg) {
		if (!j.r.place_ok) {
			ctl_error("--svg %s: nothing to draw: %s", ctl_clip_path(a.svg), j.r.place_error);
			rv = 1;
		} else if (ctl_svg_write(a.svg, &j.r.layout, j.map, j.nodes, j.nnodes, &j.r.place) < 0) {
			rv = 1;
		}
	}
	/* --svg - puts the picture alone on stdout, as topo show does. */
	if (rv == 0 && !(a.svg && strcmp(a.svg, "-") == 0)) {
		if (a.json) {
			rv = print_json(plan_json(&j));
		} else {
			if (j.r.choice)
				print_auto(&j);
			print_plan(&j);
		}
		/* The plan is shown, but the layout cannot run here: said on
		 * stderr too, as every refusal is. */
		if (rv == 0 && !j.r.place_ok) {
			ctl_error("--layout=%s: placement refused: %s", ctl_clip(a.layout),
				  j.r.place_error);
			rv = 1;
		}
	}
	job_free(&j);
	return rv;
}

static void
place_help(void)
{
	ctl_cmd_help(&ctl_cmd_place, NULL);
}

static json_t *
place_json(const struct job *j)
{
	json_t *tasks = json_array();
	long i;

	for (i = 0; i < j->r.place.ntasks; i++) {
		const struct place_task *t = &j->r.place.tasks[i];

		json_array_append_new(tasks, json_pack(
			"{s:I, s:s, s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:s?}",
			"procid", (json_int_t)t->procid, "node", j->nodes[t->node].name,
			"rank", (json_int_t)t->rank, "local_rank", t->local_rank,
			"local_id", (json_int_t)t->local_id,
			"tp", (json_int_t)t->co.c[PL_TP], "cp", (json_int_t)t->co.c[PL_CP],
			"ep", (json_int_t)t->co.c[PL_EP], "dp", (json_int_t)t->co.c[PL_DP],
			"pp", (json_int_t)t->co.c[PL_PP], "nic", t->nic_name));
	}
	return json_pack("{s:o, s:I, s:o, s:o, s:o, s:s}", "layout", layout_json(&j->r.layout),
			 "world", (json_int_t)j->r.world, "tasks", tasks,
			 "cost", cost_json(&j->r.place.cost),
			 "baseline_cost", cost_json(&j->r.place.baseline),
			 "strategy", j->r.place.strategy);
}

static void
print_place(const struct job *j)
{
	char b1[32], b2[32], b3[32], b4[32];
	long i;

	printf("%6s  %-16s %6s %5s %4s %4s %4s %4s %4s  %s\n", "procid", "node", "rank",
	       "local", "tp", "cp", "ep", "dp", "pp", "nic");
	for (i = 0; i < j->r.place.ntasks; i++) {
		const struct place_task *t = &j->r.place.tasks[i];

		printf("%6ld  %-16s %6ld %5d %4ld %4ld %4ld %4ld %4ld  %s\n", t->procid,
		       j->nodes[t->node].name, t->rank, t->local_rank, t->co.c[PL_TP],
		       t->co.c[PL_CP], t->co.c[PL_EP], t->co.c[PL_DP], t->co.c[PL_PP],
		       t->nic_name ? t->nic_name : "-");
	}
	printf("cost: cross-node %s, cross-switch %s per step; Slurm block order: %s, %s\n",
	       ctl_bytes(j->r.place.cost.cross_node_bytes, b1, sizeof(b1)),
	       ctl_bytes(j->r.place.cost.cross_switch_bytes, b2, sizeof(b2)),
	       ctl_bytes(j->r.place.baseline.cross_node_bytes, b3, sizeof(b3)),
	       ctl_bytes(j->r.place.baseline.cross_switch_bytes, b4, sizeof(b4)));
	printf("strategy: %s\n", j->r.place.strategy);
}

static int
place_exec(int argc, char **argv)
{
	struct args a;
	struct job j;
	int rv;

	rv = parse_args(argc, argv, &a, place_help);
	if (rv)
		return rv < 0 ? 0 : rv;
	if (!a.topology || !a.nodes) {
		ctl_error("place: --topology MAP and --nodes HOSTLIST are required");
		return 2;
	}
	if (a.svg || a.previous || a.gpu_mem > 0 || a.ao.headroom > 0 || a.ao.efficiency > 0 ||
	    a.ao.peak_tflops > 0) {
		ctl_error("place: --svg, --previous, --gpu-mem, --headroom, --efficiency and "
			  "--peak-tflops belong to 'plan'");
		return 2;
	}
	memset(&j, 0, sizeof(j));
	rv = job_run(&j, a.layout, a.topology, a.nodes, a.gpn, a.tpn, 0, NULL, true, &a.ao);
	if (rv == 0) {
		if (a.json)
			rv = print_json(place_json(&j));
		else
			print_place(&j);
	}
	job_free(&j);
	return rv;
}
