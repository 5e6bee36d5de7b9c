/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A placement answer checked against the step it was asked for.  The
 * parser (lib/proto.c) only checks that the JSON has the right shape; an
 * answer can still be valid JSON and wrong for this step: other nodes,
 * other task counts, a rank twice, an index past the end of an array the
 * plugin is about to read.  Every field the plugin uses is checked here,
 * once, before any of them is used.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "spk_answer.h"

/* LOCAL_RANK is a GPU index on the node. */
#define MAX_GPU_INDEX 65535

struct seen {
	unsigned char *rank;	/* world flags */
	unsigned char *procid;	/* world flags */
	long *node_tasks;	/* tasks met per node */
	long *node_min;		/* the lowest rank met per node, world if none */
};

static void
seen_free(struct seen *s)
{
	free(s->rank);
	free(s->procid);
	free(s->node_tasks);
	free(s->node_min);
}

static int
seen_init(struct seen *s, long world, long nnodes, pl_err_t *err)
{
	long i;

	s->rank = calloc((size_t)world, 1);
	s->procid = calloc((size_t)world, 1);
	s->node_tasks = calloc((size_t)nnodes, sizeof(long));
	s->node_min = calloc((size_t)nnodes, sizeof(long));
	if (!s->rank || !s->procid || !s->node_tasks || !s->node_min)
		return pl_err_set(err, "out of memory checking the placement");
	for (i = 0; i < nnodes; i++)
		s->node_min[i] = world;
	return 0;
}

/* The nodes in the order sent, with their task counts; world their sum. */
static int
check_nodes(const struct proto_placement *p, const char *const *names, const long *ntasks,
	    long nnodes, pl_err_t *err)
{
	long i, sum = 0;

	if (p->nnodes != nnodes || (nnodes > 0 && !p->nodes))
		return pl_err_set(err, "placement lists %ld nodes, the step has %ld", p->nnodes,
				  nnodes);
	for (i = 0; i < nnodes; i++) {
		char a[PL_CLIP_BUF], b[PL_CLIP_BUF];

		if (strcmp(p->nodes[i].name, names[i]) != 0)
			return pl_err_set(err, "placement nodes[%ld] is '%s', the step's node %ld is '%s'",
					  i, pl_clip(p->nodes[i].name, a, sizeof(a)), i,
					  pl_clip(names[i], b, sizeof(b)));
		if (p->nodes[i].ntasks != ntasks[i])
			return pl_err_set(err, "placement nodes[%ld] (%s) has %ld tasks, the step runs %ld there",
					  i, pl_clip(names[i], a, sizeof(a)), p->nodes[i].ntasks,
					  ntasks[i]);
		if (ntasks[i] < 0 || sum > LONG_MAX - ntasks[i])
			return pl_err_set(err, "step node %ld: task count %ld out of range", i,
					  ntasks[i]);
		sum += ntasks[i];
	}
	if (p->world != sum)
		return pl_err_set(err, "placement world is %ld, the step runs %ld tasks", p->world,
				  sum);
	if (p->master_node < 0 || p->master_node >= nnodes)
		return pl_err_set(err, "placement master_node %ld is not a node index 0..%ld",
				  p->master_node, nnodes - 1);
	for (i = 0; i < nnodes; i++)
		if (p->nodes[i].min_rank < 0 || p->nodes[i].min_rank > sum ||
		    (ntasks[i] > 0) != (p->nodes[i].min_rank < sum))
			return pl_err_set(err, "placement nodes[%ld] min_rank %ld out of range", i,
					  p->nodes[i].min_rank);
	return 0;
}

static int
check_task(const struct proto_placement *p, long k, const long *ntasks, long nnodes,
	   struct seen *s, pl_err_t *err)
{
	const struct proto_task *t = &p->tasks[k];
	int a;

	if (t->node < 0 || t->node >= nnodes)
		return pl_err_set(err, "placement tasks[%ld]: node %ld is not a node index 0..%ld", k,
				  t->node, nnodes - 1);
	if (t->rank < 0 || t->rank >= p->world)
		return pl_err_set(err, "placement tasks[%ld]: rank %ld is not in 0..%ld", k, t->rank,
				  p->world - 1);
	if (t->procid < 0 || t->procid >= p->world)
		return pl_err_set(err, "placement tasks[%ld]: procid %ld is not in 0..%ld", k,
				  t->procid, p->world - 1);
	if (t->local_id < 0 || t->local_id >= ntasks[t->node])
		return pl_err_set(err, "placement tasks[%ld]: local_id %ld is not in 0..%ld", k,
				  t->local_id, ntasks[t->node] - 1);
	if (t->local_rank < 0 || t->local_rank > MAX_GPU_INDEX)
		return pl_err_set(err, "placement tasks[%ld]: local_rank %d is not a GPU index", k,
				  t->local_rank);
	for (a = 0; a < PL_NAXES; a++)
		if (t->co[a] < 0 || t->co[a] >= (p->layout.size[a] > 0 ? p->layout.size[a] : 1))
			return pl_err_set(err, "placement tasks[%ld]: coordinate %d is %ld, outside the layout",
					  k, a, t->co[a]);
	if (s->rank[t->rank]++)
		return pl_err_set(err, "placement tasks[%ld]: rank %ld is given twice", k, t->rank);
	if (s->procid[t->procid]++)
		return pl_err_set(err, "placement tasks[%ld]: procid %ld is given twice", k,
				  t->procid);
	if (p->rank_nodes && p->rank_nodes[t->rank] != t->node)
		return pl_err_set(err, "placement tasks[%ld]: rank %ld on node %ld, rank_nodes says %ld",
				  k, t->rank, t->node, p->rank_nodes[t->rank]);
	s->node_tasks[t->node]++;
	if (t->rank < s->node_min[t->node])
		s->node_min[t->node] = t->rank;
	return 0;
}

static int
cmp_key(const void *a, const void *b)
{
	const long *x = a, *y = b;

	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Two tasks of one node must not share a local id or a GPU (sorted pairs:
 * an "all" view may hold every task of a large step). */
static int
check_node_local(const struct proto_placement *p, pl_err_t *err)
{
	long *key = malloc((size_t)p->ntasks * 2 * sizeof(long) + 1);
	long k;
	int pass, rv = -1;

	if (!key)
		return pl_err_set(err, "out of memory checking the placement");
	for (pass = 0; pass < 2; pass++) {
		for (k = 0; k < p->ntasks; k++) {
			key[2 * k] = p->tasks[k].node;
			key[2 * k + 1] = pass ? p->tasks[k].local_rank : p->tasks[k].local_id;
		}
		qsort(key, (size_t)p->ntasks, 2 * sizeof(long), cmp_key);
		for (k = 1; k < p->ntasks; k++)
			if (key[2 * k] == key[2 * k - 2] && key[2 * k + 1] == key[2 * k - 1]) {
				pl_err_set(err, "placement: two tasks on node %ld have %s %ld", key[2 * k],
					   pass ? "local_rank" : "local_id", key[2 * k + 1]);
				goto out;
			}
	}
	rv = 0;
out:
	free(key);
	return rv;
}

static int
check_rank_nodes(const struct proto_placement *p, long nnodes, const long *ntasks,
		 pl_err_t *err)
{
	long *count = calloc((size_t)nnodes + 1, sizeof(long));
	long r, i;
	int rv = -1;

	if (!count)
		return pl_err_set(err, "out of memory checking the placement");
	for (r = 0; r < p->world; r++) {
		long n = p->rank_nodes[r];

		if (n < 0 || n >= nnodes) {
			pl_err_set(err, "placement rank_nodes[%ld] = %ld is not a node index 0..%ld", r,
				   n, nnodes - 1);
			goto out;
		}
		if (count[n]++ == 0 && p->nodes[n].min_rank != r) {
			pl_err_set(err, "placement nodes[%ld] min_rank %ld, but its lowest rank is %ld",
				   n, p->nodes[n].min_rank, r);
			goto out;
		}
	}
	for (i = 0; i < nnodes; i++)
		if (count[i] != ntasks[i]) {
			pl_err_set(err, "placement rank_nodes puts %ld ranks on node %ld, the step runs %ld there",
				   count[i], i, ntasks[i]);
			goto out;
		}
	rv = 0;
out:
	free(count);
	return rv;
}

/* The tasks the view must hold: node index `only` (-1: every node). */
static int
check_tasks(const struct proto_placement *p, const long *ntasks, long nnodes, long only,
	    pl_err_t *err)
{
	struct seen s = { NULL, NULL, NULL, NULL };
	long want = only >= 0 ? ntasks[only] : p->world, k;
	int rv = -1;

	if (p->ntasks != want || (want > 0 && !p->tasks)) {
		pl_err_set(err, "placement lists %ld tasks, the view needs %ld", p->ntasks, want);
		return -1;
	}
	if (seen_init(&s, p->world, nnodes, err) < 0)
		goto out;
	for (k = 0; k < p->ntasks; k++) {
		if (check_task(p, k, ntasks, nnodes, &s, err) < 0)
			goto out;
		if (only >= 0 && p->tasks[k].node != only) {
			pl_err_set(err, "placement tasks[%ld] is on node %ld, not on the node asked for (%ld)",
				   k, p->tasks[k].node, only);
			goto out;
		}
	}
	for (k = 0; k < nnodes; k++)
		if ((only < 0 || k == only) && s.node_min[k] != p->nodes[k].min_rank) {
			pl_err_set(err, "placement nodes[%ld] min_rank %ld, but its lowest rank is %ld",
				   k, p->nodes[k].min_rank, s.node_min[k]);
			goto out;
		}
	if (check_node_local(p, err) < 0)
		goto out;
	rv = 0;
out:
	seen_free(&s);
	return rv;
}

int
spk_answer_check(const struct proto_placement *p, const char *const *names, const long *ntasks,
		long nnodes, const char *view, pl_err_t *err)
{
	long only = -1, i;

	if (!p || !view || nnodes <= 0 || !names || !ntasks)
		return pl_err_set(err, "no placement to check");
	if (check_nodes(p, names, ntasks, nnodes, err) < 0)
		return -1;
	if (strcmp(view, "hostfile") == 0) {
		if (!p->rank_nodes)
			return pl_err_set(err, "placement has no rank_nodes (needed to steer Slurm)");
		if (p->ntasks != 0 && p->ntasks != p->world)
			return pl_err_set(err, "placement lists %ld tasks for %ld ranks", p->ntasks,
					  p->world);
	} else if (strncmp(view, "node:", 5) == 0) {
		for (i = 0; i < nnodes && only < 0; i++)
			if (strcmp(names[i], view + 5) == 0)
				only = i;
		if (only < 0) {
			char v[PL_CLIP_BUF];

			return pl_err_set(err, "view '%s' names no node of the step",
					  pl_clip(view, v, sizeof(v)));
		}
	} else if (strcmp(view, "all") != 0) {
		char v[PL_CLIP_BUF];

		return pl_err_set(err, "view '%s': expected hostfile, node:NAME or all",
				  pl_clip(view, v, sizeof(v)));
	}
	if (p->rank_nodes && check_rank_nodes(p, nnodes, ntasks, err) < 0)
		return -1;
	if (p->ntasks == 0 && strcmp(view, "hostfile") == 0)
		return 0;
	return check_tasks(p, ntasks, nnodes, only, err);
}

/* An answer for an auto spec: the chosen layout keeps every pinned key. */
static int
auto_check(const struct proto_placement *p, const struct pl_layout *want, const char *spec,
	   pl_err_t *err)
{
	const struct pl_layout *got = &p->layout;
	char a[PL_CLIP_BUF], b[PL_CLIP_BUF];
	const char *key = NULL;
	int i;

	for (i = 0; i < PL_NAXES && !key; i++)
		if ((want->given & PL_GIVEN_AXIS(i)) && want->size[i] != got->size[i])
			key = pl_axis_name(i);
	if (!key && (want->given & PL_GIVEN_ZERO) && want->zero != got->zero)
		key = "zero";
	if (!key && (want->given & PL_GIVEN_GBS) && want->gbs != got->gbs)
		key = "gbs";
	if (!key && (want->given & PL_GIVEN_MBS) && want->mbs != got->mbs)
		key = "mbs";
	if (!key && (want->given & PL_GIVEN_RECOMPUTE) && want->recompute != got->recompute)
		key = "recompute";
	if (!key && (want->given & PL_GIVEN_VPP) && want->vpp != got->vpp)
		key = "vpp";
	if (!key && (want->given & PL_GIVEN_SP) && want->sp != got->sp)
		key = "sp";
	if (!key && (want->given & PL_GIVEN_CPALGO) && want->cp_algo != got->cp_algo)
		key = "cp_algo";
	for (i = 0; i < PL_NAXES && !key; i++)
		if (want->order[i] != got->order[i])
			key = "order";
	if (key)
		return pl_err_set(err, "placement is for layout '%s', which does not keep %s= of --parallel-layout=%s",
				  pl_clip(p->spec, a, sizeof(a)), key, pl_clip(spec, b, sizeof(b)));
	return 0;
}

int
spk_answer_layout_check(const struct proto_placement *p, const char *spec, pl_err_t *err)
{
	struct pl_layout want;
	char a[PL_CLIP_BUF], b[PL_CLIP_BUF];
	pl_err_t why;
	int i;

	pl_err_clear(&why);
	if (layout_parse(spec, &want, &why) < 0 ||
	    (!want.auto_layout && layout_resolve(&want, p->world, &why) < 0))
		return pl_err_set(err, "--parallel-layout=%s: %s", pl_clip(spec, a, sizeof(a)), why.text);
	if (want.auto_layout)
		return auto_check(p, &want, spec, err);
	for (i = 0; i < PL_NAXES; i++)
		if (want.size[i] != p->layout.size[i] || want.order[i] != p->layout.order[i])
			return pl_err_set(err, "placement is for layout '%s', not for --parallel-layout=%s",
					  pl_clip(p->spec, a, sizeof(a)), pl_clip(spec, b, sizeof(b)));
	return 0;
}
