/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * srun, sbatch and salloc.  Everything happens in the option callback: it
 * runs before the allocation exists (so a refusal costs nothing: srun exits
 * 255 and no node is touched), and it is the last moment at which a
 * SLURM_HOSTFILE set in srun's environment still steers Slurm's own task
 * placement.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hosts.h"
#include "layout.h"
#include "spk_answer.h"
#include "spk_bounds.h"
#include "spk_context.h"
#include "spk_shape.h"
#include "plan.h"
#include "service.h"

#define ERR(...) slurm_error(PLUGIN_NAME ": " __VA_ARGS__)

/* The local context's own state. */
static struct {
	char hostfile[PATH_MAX];	/* ours to delete at exit */
} ctx;

/*
 * An auto spec before the step exists: is there any layout of the step's
 * tasks that fits the cluster's bounds (its largest NVLink domain, its
 * smallest GPU memory)?  None refuses before the allocation.  The layout
 * itself is chosen by layoutd on the step's nodes, which know their
 * domain and memory exactly; what the bounds pick is said in verbose mode
 * as the likely choice.
 */
static int
choose(const struct spk_opts *o, const struct spk_shape *s, const struct pl_layout *l,
       const struct plan_ctx *pc, const char *spec)
{
	struct plan_auto_result *r;
	char best[PL_CLIP_BUF];
	pl_err_t err;
	int rv = -1;

	r = calloc(1, sizeof(*r));
	if (!r) {
		/* Not a reason to refuse: the nodes choose and check anyway. */
		slurm_info(PLUGIN_NAME ": --parallel-layout=%s: out of memory to check the auto layout here",
			   spec);
		return 0;
	}
	pl_err_clear(&err);
	if (plan_auto(l, pc, r, &err) < 0) {
		ERR("--parallel-layout=%s: %s (the step runs %ld tasks)", spec, err.text, s->ntasks);
		goto out;
	}
	layout_format(&r->top[0].layout, best, sizeof(best));
	if (o->verbose)
		slurm_info(PLUGIN_NAME ": %s over %ld tasks: the cluster's bounds pick %s (%.1f GB per GPU, estimated %.3g s a step; %ld of %ld layouts fit); the step's nodes decide",
			   spec, s->ntasks, best, r->top[0].plan.total_gb_per_gpu,
			   r->top[0].plan.step_seconds, r->fitting, r->considered);
	rv = 0;
out:
	free(r);
	return rv;
}

/*
 * Check the spec against the step's task count and the cluster before
 * anything is allocated; print the planner's warnings.  -1 refuses.
 */
static int
validate(const struct spk_opts *o, const struct spk_shape *s)
{
	const char *map = o->conf.map;
	struct pl_layout l;
	struct spk_bounds b;
	bool have_bounds = false;
	struct plan_ctx pc;
	struct plan p;
	pl_err_t err;
	long domain = 0;
	double mem = 0;
	int i, rv = -1;

	char spec[PL_CLIP_BUF];

	pl_clip(o->spec, spec, sizeof(spec));
	pl_err_clear(&err);
	if (layout_parse(o->spec, &l, &err) < 0) {
		ERR("--parallel-layout=%s: %s", spec, err.text);
		return -1;
	}
	/* The largest NVLink domain and the smallest GPU memory anywhere in
	 * the map: before the allocation we do not know which nodes the step
	 * gets. */
	if (map[0]) {
		have_bounds = spk_bounds_load(map, &b, &err) == 0;
		if (!have_bounds) {
			/* Validation is best effort; the step still gets placed
			 * (by layoutd) or refused on the nodes. */
			slurm_info(PLUGIN_NAME ": cannot read the map for validation: %s",
				   err.text);
			pl_err_clear(&err);
		} else {
			domain = b.domain;
			mem = b.gpu_memory_gb;
		}
	}
	if (domain > 0 && l.size[PL_TP] > domain) {
		ERR("--parallel-layout=%s: tp=%ld exceeds the %ld GPUs of the largest NVLink domain in the cluster map (%s)",
		    spec, l.size[PL_TP], domain, map);
		goto out;
	}
	if (s->ntasks <= 0) {
		rv = 0;		/* nothing more to check before the step exists */
		goto out;
	}
	plan_ctx_default(&pc, s->nnodes > 0 ? s->nnodes : 1, 1);
	pc.world = s->ntasks;
	pc.domain_gpus = domain;
	pc.gpu_memory_gb = mem;
	if (have_bounds)
		memcpy(pc.link, b.link, sizeof(pc.link));
	if (l.auto_layout) {
		rv = choose(o, s, &l, &pc, spec);
		goto out;
	}
	if (layout_resolve(&l, s->ntasks, &err) < 0) {
		ERR("--parallel-layout=%s: %s (the step runs %ld tasks)", spec, err.text, s->ntasks);
		goto out;
	}
	if (s->ntasks_per_node > 0 && l.size[PL_TP] > s->ntasks_per_node) {
		ERR("--parallel-layout=%s: tp=%ld does not fit %ld tasks per node",
		    spec, l.size[PL_TP], s->ntasks_per_node);
		goto out;
	}
	if (plan_compute(&l, &pc, &p, &err) < 0) {
		if (l.have_model) {
			ERR("--parallel-layout=%s: %s", spec, err.text);
			goto out;
		}
	} else {
		for (i = 0; i < p.nwarnings; i++)
			slurm_info(PLUGIN_NAME ": warning: %s", p.warnings[i]);
		if (o->verbose)
			slurm_info(PLUGIN_NAME ": %s over %ld tasks: %.1f GB per GPU, bubble %.1f %%, %ld micro-batches",
				   spec, s->ntasks, p.total_gb_per_gpu, p.bubble_fraction * 100.0,
				   p.micro_batches);
	}
	rv = 0;
out:
	return rv;
}

/* The hostfile: one line per rank, the node it must start on. */
static int
write_hostfile(const struct proto_placement *p)
{
	FILE *f = NULL;
	long i;
	int fd;

	snprintf(ctx.hostfile, sizeof(ctx.hostfile), SPK_HOSTFILE_PREFIX "XXXXXX");
	fd = mkstemp(ctx.hostfile);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		slurm_info(PLUGIN_NAME ": not steering: cannot write a hostfile: %s", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(ctx.hostfile);
		}
		ctx.hostfile[0] = '\0';
		return -1;
	}
	for (i = 0; i < p->world; i++)
		fprintf(f, "%s\n", p->nodes[p->rank_nodes[i]].name);
	if (fclose(f) != 0) {
		unlink(ctx.hostfile);
		ctx.hostfile[0] = '\0';
		return -1;
	}
	return 0;
}

/*
 * Inside an allocation, write a hostfile with the node of each rank and
 * point srun at it: Slurm then starts task r where rank r belongs, so
 * SLURM_PROCID == RANK for every tool.  Leaves Slurm alone (env remap in
 * task_init instead) whenever the step's shape is not certain, and when
 * the answer does not fit the step (then the nodes place, or refuse).
 */
static void
steer(const struct spk_opts *o, const struct spk_shape *s)
{
	const char *alloc = getenv("SLURM_JOB_NODELIST");
	struct hosts h = { 0, NULL };
	struct place_node *nodes = NULL;
	struct proto_request req;
	struct proto_placement p;
	char from[PATH_MAX + 256];
	long *ntasks = NULL;
	pl_err_t err;
	long i, per;

	memset(&p, 0, sizeof(p));
	memset(&req, 0, sizeof(req));
	pl_err_clear(&err);
	if (!o->conf.reorder || !alloc || !getenv("SLURM_JOB_ID") || getenv("SLURM_HOSTFILE") ||
	    s->nodelist || s->steer_blockers || !s->complete || s->ntasks <= 0 || s->nnodes <= 0 ||
	    s->ntasks % s->nnodes != 0)
		return;
	per = s->ntasks / s->nnodes;
	if (s->ntasks_per_node > 0 && s->ntasks_per_node != per)
		return;
	if (hosts_expand(&h, alloc, 0, &err) < 0 || h.n < s->nnodes)
		goto out;
	nodes = calloc((size_t)s->nnodes, sizeof(*nodes));
	ntasks = calloc((size_t)s->nnodes, sizeof(*ntasks));
	if (!nodes || !ntasks)
		goto out;
	for (i = 0; i < s->nnodes; i++) {
		nodes[i].name = h.names[i];
		nodes[i].ntasks = ntasks[i] = per;
	}
	if (proto_request_init(&req, o->spec, nodes, s->nnodes,
			       strtol(getenv("SLURM_JOB_ID"), NULL, 10), -1, "hostfile", &err) < 0 ||
	    spk_query(&o->conf, getenv("SLURMD_NODENAME"), &req, &p, from, sizeof(from), &err) < 0 ||
	    spk_answer_check(&p, (const char *const *)h.names, ntasks, s->nnodes, "hostfile",
			    &err) < 0 ||
	    spk_answer_layout_check(&p, o->spec, &err) < 0) {
		/* task_init will place (or refuse) with the exact layout. */
		slurm_info(PLUGIN_NAME ": not steering Slurm's placement: %s", err.text);
		goto out;
	}
	if (write_hostfile(&p) < 0)
		goto out;
	setenv("SLURM_HOSTFILE", ctx.hostfile, 1);
	/* Tells the nodes that Slurm was steered, so they verify it. */
	setenv("PARALLEL_LAYOUT_STEERED", "1", 1);
	if (o->verbose && p.choice[0])
		slurm_info(PLUGIN_NAME ": %s", p.choice);
	if (o->verbose)
		slurm_info(PLUGIN_NAME ": steering Slurm: task r starts on the node of rank r (%s)",
			   from);
out:
	proto_placement_free(&p);
	proto_request_free(&req);
	free(nodes);
	free(ntasks);
	hosts_free(&h);
}

int
spk_local_option(struct spk_opts *o)
{
	struct spk_shape s;

	if (!o->conf_ok) {
		ERR("plugstack.conf: %s", o->conf_err.text);
		return -1;
	}
	if (spank_context() != S_CTX_LOCAL)
		return validate(o, &(struct spk_shape){ 0 }) < 0 ? -1 : 0;
	/* Inherited from an outer srun (a task that runs srun): not ours. */
	unsetenv("PARALLEL_LAYOUT_STEERED");
	if (spk_shape_self(o->release ? o->release :
			  spk_release_nearest(o->slurm_major, o->slurm_minor), &s) < 0)
		memset(&s, 0, sizeof(s));
	o->verbose |= s.verbose;
	if (!o->release || !o->release->hostfile_steer) {
		/* The counts are read with the nearest release's table, for
		 * validation; Slurm's placement is left alone. */
		s.complete = false;
		if (o->verbose) {
			char note[512];

			spk_release_unknown_note(o->slurm_version, note, sizeof(note));
			slurm_info(PLUGIN_NAME ": %s", note);
		}
	} else if (o->verbose) {
		slurm_info(PLUGIN_NAME ": Slurm %s: srun's options and behaviours of release %s",
			   o->slurm_version, o->release->name);
	}
	if (s.invalid[0]) {
		ERR("--parallel-layout: the step's shape: %s", s.invalid);
		return -1;
	}
	if (validate(o, &s) < 0)
		return -1;
	steer(o, &s);
	return 0;
}

void
spk_local_exit(void)
{
	if (ctx.hostfile[0]) {
		unlink(ctx.hostfile);
		ctx.hostfile[0] = '\0';
	}
}
