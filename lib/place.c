/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Placement.  The framework numbers ranks as a mixed-radix number over its
 * axes (order.c).  We walk the step's GPU slots in topology order (NVLink
 * domain, then leaf switch, then Slurm order; GPUs inside a node by NVLink
 * island and NUMA node) and hand them ranks in an order where TP varies
 * fastest and the other axes follow by how many bytes they move.  Each
 * consecutive run of tp slots then lies inside one NVLink domain, and heavier
 * axes stay under fewer switches.  A few such candidates are costed, Slurm's
 * own block order among them, and the cheapest valid one wins: the result is
 * never worse than what users get without us.  Everything is O(N log N) in
 * the number of tasks (one sort of the nodes, one sort of each node type's
 * GPUs, linear passes otherwise).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"

/* One node of the step, resolved against the map. */
struct snode {
	long in;		/* index into the caller's nodes[] */
	long map;		/* index into the map's nodes */
	long first_slot;	/* its first slot in topology order */
	long ntasks;
	long procid0;		/* block distribution: first procid */
	long domain;		/* NVLink domain id (block index + nnodes, or own index) */
	long leaf, leaf2;	/* leaf switch ids for the cost; -1 unknown */
	long key1, key2;	/* sort keys */
	const struct topo_nodetype *type;
	int *gpu_order;		/* the type's GPU positions, best first (shared per type) */
};

struct ctx {
	const struct pl_layout *l;
	const struct topo_map *m;
	const struct place_node *in;
	long nin;
	long world;
	struct snode *sn;	/* in Slurm order */
	long *topo_order;	/* positions in sn[], topology order */
	int **type_orders;	/* per map type */
	struct pl_digits dg;
	double bytes[PL_NAXES];
	pl_err_t *err;
};

/* ---- GPU order inside a node ---- */

/* Sort keys travel with the item: no shared state, so placement is
 * reentrant (qsort has no context argument in C11 or POSIX 2008). */
struct gpu_key {
	long island, numa, index;
	int pos;
};

static int
gpu_cmp(const void *a, const void *b)
{
	const struct gpu_key *x = a, *y = b;

	/* NVLink islands first (no island last), then NUMA, then CUDA index. */
	if (x->island != y->island)
		return x->island < y->island ? -1 : 1;
	if (x->numa != y->numa)
		return x->numa < y->numa ? -1 : 1;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static int *
make_gpu_order(const struct topo_nodetype *t)
{
	int n = t->ngpus > 0 ? t->ngpus : 1, i;
	struct gpu_key *k = calloc((size_t)n, sizeof(*k));
	int *o = malloc((size_t)n * sizeof(*o));

	if (!k || !o) {
		free(k);
		free(o);
		return NULL;
	}
	for (i = 0; i < t->ngpus; i++) {
		k[i].island = t->gpus[i].island < 0 ? INT32_MAX : t->gpus[i].island;
		k[i].numa = t->gpus[i].numa;
		k[i].index = t->gpus[i].index;
		k[i].pos = i;
	}
	qsort(k, (size_t)t->ngpus, sizeof(*k), gpu_cmp);
	for (i = 0; i < t->ngpus; i++)
		o[i] = k[i].pos;
	free(k);
	return o;
}

/* ---- repeated nodes ---- */

struct name_key {
	const char *name;
	long in;
};

static int
name_cmp(const void *a, const void *b)
{
	const struct name_key *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return (x->in > y->in) - (x->in < y->in);
}

int
place_check_nodes(const struct place_node *nodes, long nnodes, pl_err_t *err)
{
	struct name_key *k;
	long i, first = -1, second = -1;
	char clip[PL_CLIP_BUF];

	if (nnodes < 2)
		return 0;
	k = malloc((size_t)nnodes * sizeof(*k));
	if (!k)
		return pl_err_set(err, "out of memory checking %ld nodes", nnodes);
	for (i = 0; i < nnodes; i++) {
		k[i].name = nodes[i].name ? nodes[i].name : "";
		k[i].in = i;
	}
	qsort(k, (size_t)nnodes, sizeof(*k), name_cmp);
	/* Name the repeat met first in the caller's order. */
	for (i = 1; i < nnodes; i++)
		if (strcmp(k[i - 1].name, k[i].name) == 0 && (second < 0 || k[i].in < second)) {
			first = k[i - 1].in;
			second = k[i].in;
		}
	free(k);
	if (second >= 0)
		return pl_err_set(err, "node '%s' is listed twice in the step (positions %ld and %ld of %ld): each node may appear once",
				  pl_clip(nodes[second].name, clip, sizeof(clip)), first + 1,
				  second + 1, nnodes);
	return 0;
}

/* ---- node order ---- */

/* Depth-first preorder number of every switch: leaves under one spine get
 * neighbouring numbers, so sorting by it keeps subtrees together. */
static long *
switch_preorder(const struct topo_map *m)
{
	long *pre = malloc((size_t)(m->nswitches + 1) * sizeof(*pre));
	long *first = malloc((size_t)(m->nswitches + 1) * sizeof(*first));
	long *next = malloc((size_t)(m->nswitches + 1) * sizeof(*next));
	long *stack = malloc((size_t)(m->nswitches + 1) * sizeof(*stack));
	long i, n = 0, top;

	if (!pre || !first || !next || !stack) {
		free(pre);
		pre = NULL;
		goto out;
	}
	for (i = 0; i < m->nswitches; i++) {
		pre[i] = -1;
		first[i] = -1;
		next[i] = -1;
	}
	/* Children lists in file order: insert from the back. */
	for (i = m->nswitches - 1; i >= 0; i--) {
		long p = m->switches[i].parent;

		if (p >= 0 && p < m->nswitches) {
			next[i] = first[p];
			first[p] = i;
		}
	}
	for (i = 0; i < m->nswitches; i++) {
		if (m->switches[i].parent >= 0)
			continue;
		top = 0;
		stack[top++] = i;
		while (top > 0) {
			long sw = stack[--top], ch, cnt = 0, k;

			pre[sw] = n++;
			/* Children go on the stack last-first, so the first pops first. */
			for (ch = first[sw]; ch >= 0; ch = next[ch])
				cnt++;
			for (ch = first[sw], k = cnt - 1; ch >= 0; ch = next[ch], k--)
				stack[top + k] = ch;
			top += cnt;
		}
	}
	/* Switches in a cycle (bad input the reader should have refused). */
	for (i = 0; i < m->nswitches; i++)
		if (pre[i] < 0)
			pre[i] = n++;
out:
	free(first);
	free(next);
	free(stack);
	return pre;
}

struct node_key {
	long key1, key2, in;
};

static int
node_cmp(const void *a, const void *b)
{
	const struct node_key *x = a, *y = b;

	if (x->key1 != y->key1)
		return x->key1 < y->key1 ? -1 : 1;
	if (x->key2 != y->key2)
		return x->key2 < y->key2 ? -1 : 1;
	return (x->in > y->in) - (x->in < y->in);
}

/* c->topo_order: the step's nodes sorted by (key1, key2, Slurm order). */
static int
sort_nodes(struct ctx *c)
{
	struct node_key *k;
	long i;

	if (c->nin <= 0)
		return 0;
	k = calloc((size_t)c->nin, sizeof(*k));
	if (!k)
		return pl_err_set(c->err, "out of memory");
	for (i = 0; i < c->nin; i++) {
		k[i].key1 = c->sn[i].key1;
		k[i].key2 = c->sn[i].key2;
		k[i].in = i;
	}
	qsort(k, (size_t)c->nin, sizeof(*k), node_cmp);
	for (i = 0; i < c->nin; i++)
		c->topo_order[i] = k[i].in;
	free(k);
	return 0;
}

static int
resolve_nodes(struct ctx *c)
{
	const struct topo_map *m = c->m;
	long *pre = NULL, *block_key = NULL;
	long i, procid = 0;
	int rv = -1;

	if (!m->hash) {
		pl_err_set(c->err, "the topology map has no node index");
		return -1;
	}
	pre = switch_preorder(m);
	block_key = malloc((size_t)(m->nblocks + 1) * sizeof(*block_key));
	c->type_orders = calloc((size_t)m->ntypes + 1, sizeof(*c->type_orders));
	if (!pre || !block_key || !c->type_orders) {
		pl_err_set(c->err, "out of memory");
		goto out;
	}
	for (i = 0; i < m->nblocks; i++)
		block_key[i] = INT64_MAX;
	for (i = 0; i < c->nin; i++) {
		struct snode *s = &c->sn[i];
		const struct topo_node *tn;
		char clip[PL_CLIP_BUF];
		long ti;

		s->in = i;
		s->ntasks = c->in[i].ntasks;
		s->procid0 = procid;
		if (s->ntasks <= 0) {
			pl_err_set(c->err, "node '%s' runs %ld tasks: every step node needs at least one",
				   pl_clip(c->in[i].name, clip, sizeof(clip)), s->ntasks);
			goto out;
		}
		procid += s->ntasks;
		s->map = topo_find_node(m, c->in[i].name);
		if (s->map < 0) {
			pl_err_set(c->err, "node '%s' is not in the topology map%s%s%s (%ld nodes): rebuild the map with this node",
				   pl_clip(c->in[i].name, clip, sizeof(clip)), m->name[0] ? " '" : "", m->name,
				   m->name[0] ? "'" : "", m->nnodes);
			goto out;
		}
		tn = &m->nodes[s->map];
		s->type = topo_node_type(m, s->map);
		if (!s->type || s->type->ngpus == 0) {
			pl_err_set(c->err, "node '%s' has no GPUs in the topology map", tn->name);
			goto out;
		}
		if (s->ntasks > s->type->ngpus) {
			pl_err_set(c->err, "node '%s' runs %ld tasks but has %d GPUs: one task per GPU",
				   tn->name, s->ntasks, s->type->ngpus);
			goto out;
		}
		ti = tn->type >= 0 ? tn->type : m->default_type;
		if (!c->type_orders[ti]) {
			c->type_orders[ti] = make_gpu_order(s->type);
			if (!c->type_orders[ti]) {
				pl_err_set(c->err, "out of memory");
				goto out;
			}
		}
		s->gpu_order = c->type_orders[ti];
		s->leaf = tn->sw >= 0 ? pre[tn->sw] : -1;
		s->leaf2 = tn->sw2 >= 0 ? pre[tn->sw2] : -1;
		if (tn->block >= 0 && m->blocks[tn->block].nvlink)
			s->domain = c->nin + tn->block;
		else
			s->domain = i;
		/* A block sorts where its first-placed member's leaf is. */
		if (tn->block >= 0 && s->leaf < block_key[tn->block])
			block_key[tn->block] = s->leaf;
	}
	if (procid != c->world) {
		pl_err_set(c->err, "the step runs %ld tasks but the layout's world size is %ld",
			   procid, c->world);
		goto out;
	}
	for (i = 0; i < c->nin; i++) {
		struct snode *s = &c->sn[i];
		long b = m->nodes[s->map].block;

		s->key1 = b >= 0 ? block_key[b] : s->leaf;
		s->key2 = b;
		/* Without switch or block information the cost has nothing to
		 * tell leaves apart; blocks stand in for leaves then. */
		if (s->leaf < 0 && b >= 0)
			s->leaf = m->nswitches + b;
	}
	if (sort_nodes(c) < 0)
		goto out;
	rv = 0;
out:
	free(pre);
	free(block_key);
	return rv;
}

/* Every NVLink domain must hold whole TP groups, in topology order. */
static int
check_domains(struct ctx *c)
{
	long tp = c->l->size[PL_TP], i = 0, slot = 0;

	while (i < c->nin) {
		const struct snode *s = &c->sn[c->topo_order[i]];
		long dom = s->domain, count = 0, j = i, gpus = 0;

		while (j < c->nin && c->sn[c->topo_order[j]].domain == dom) {
			struct snode *t = &c->sn[c->topo_order[j]];

			t->first_slot = slot + count;
			count += t->ntasks;
			gpus += t->type->ngpus;
			j++;
		}
		if (count % tp != 0) {
			const char *name = c->m->nodes[s->map].name;
			const char *block = dom >= c->nin ? c->m->blocks[dom - c->nin].name : NULL;

			if (tp > gpus && block)
				return pl_err_set(c->err,
						  "tp=%ld exceeds the %ld GPUs of NVLink block '%s' in this step (node %s)",
						  tp, gpus, block, name);
			if (tp > gpus)
				return pl_err_set(c->err,
						  "tp=%ld exceeds the %ld GPUs per NVLink domain of node %s",
						  tp, gpus, name);
			if (block)
				return pl_err_set(c->err,
						  "the step runs %ld tasks in NVLink block '%s', not a multiple of tp=%ld: a TP group would leave the block",
						  count, block, tp);
			return pl_err_set(c->err,
					  "node %s runs %ld tasks, not a multiple of tp=%ld: a TP group would span nodes",
					  name, count, tp);
		}
		slot += count;
		i = j;
	}
	return 0;
}

/* ---- cost ---- */

static int
same_leaf(const struct snode *a, const struct snode *b)
{
	if (a->leaf < 0 && b->leaf < 0)
		return 1;
	return a->leaf == b->leaf || (a->leaf2 >= 0 && a->leaf2 == b->leaf) ||
	       (b->leaf2 >= 0 && (b->leaf2 == a->leaf || b->leaf2 == a->leaf2));
}

/*
 * One ring or chain over the nodes of a group, visiting nodes in the order
 * their first member appears (as NCCL orders its rings by rank).  Each edge
 * between two nodes is charged `bytes`; a ring also closes back.
 */
static void
charge_walk(const struct snode *sn, const long *nodes, long k, int ring, double bytes,
	    struct place_cost *cost)
{
	long i, edges = ring ? k : k - 1;

	if (k < 2)
		return;
	for (i = 0; i < edges; i++) {
		const struct snode *a = &sn[nodes[i]], *b = &sn[nodes[(i + 1) % k]];

		cost->cross_node_bytes += bytes;
		if (!same_leaf(a, b))
			cost->cross_switch_bytes += bytes;
	}
}

/* Cost of one digit's groups (members differ in that digit only). */
static void
cost_digit(const struct snode *sn, const long *rank_node, long world, long size,
	   long stride, int ring, double bytes, long *stamp, long *buf, struct place_cost *cost)
{
	long base, i;

	if (size < 2 || bytes <= 0)
		return;
	for (base = 0; base < world; base++) {
		long k = 0;

		if ((base / stride) % size != 0)
			continue;
		/* The stamp marks nodes already seen in this group. */
		for (i = 0; i < size; i++) {
			long n = rank_node[base + i * stride];

			if (stamp[n] != base) {
				stamp[n] = base;
				buf[k++] = n;
			}
		}
		charge_walk(sn, buf, k, ring, bytes, cost);
	}
}

/* EP all-to-all: each member sends bytes spread evenly over its ep-1 peers. */
static int
cost_ep(const struct ctx *c, const long *rank_node, struct place_cost *cost)
{
	struct pl_groups g;
	long gi, i, j, ep = c->l->size[PL_EP];
	double share;

	if (ep < 2 || c->bytes[PL_EP] <= 0)
		return 0;
	if (order_groups(c->l, "ep", &g, c->err) < 0)
		return -1;
	share = c->bytes[PL_EP] / (double)(ep - 1);
	for (gi = 0; gi < g.ngroups; gi++) {
		const long *r = &g.ranks[gi * g.group_size];

		/* ep is small (tens): the pairwise pass is cheap. */
		for (i = 0; i < g.group_size; i++)
			for (j = 0; j < g.group_size; j++) {
				const struct snode *a = &c->sn[rank_node[r[i]]];
				const struct snode *b = &c->sn[rank_node[r[j]]];

				if (i == j || a == b)
					continue;
				cost->cross_node_bytes += share;
				if (!same_leaf(a, b))
					cost->cross_switch_bytes += share;
			}
	}
	order_groups_free(&g);
	return 0;
}

static int
cost_of(const struct ctx *c, const long *rank_node, struct place_cost *cost)
{
	long *stamp = malloc((size_t)(c->nin + 1) * sizeof(*stamp));
	long *buf = malloc((size_t)(c->world + 1) * sizeof(*buf));
	int i, rv = -1;

	memset(cost, 0, sizeof(*cost));
	if (!stamp || !buf) {
		pl_err_set(c->err, "out of memory");
		goto out;
	}
	for (i = 0; i < c->dg.n; i++) {
		enum pl_axis a = c->dg.axis[i];
		long j;

		for (j = 0; j < c->nin; j++)
			stamp[j] = -1;
		cost_digit(c->sn, rank_node, c->world, c->dg.size[i], c->dg.stride[i],
			   a != PL_PP, c->bytes[a], stamp, buf, cost);
	}
	if (cost_ep(c, rank_node, cost) < 0)
		goto out;
	rv = 0;
out:
	free(stamp);
	free(buf);
	return rv;
}

/* ---- candidates ---- */

/*
 * Fill slot -> rank: the k-th slot in topology order gets the rank whose
 * digits, read in `prio` order (fastest first), spell k.
 */
static void
sequence(const struct ctx *c, const int *prio, long *slot_rank)
{
	long k;

	for (k = 0; k < c->world; k++) {
		long rem = k, rank = 0;
		int i;

		for (i = 0; i < c->dg.n; i++) {
			int d = prio[i];

			rank += (rem % c->dg.size[d]) * c->dg.stride[d];
			rem /= c->dg.size[d];
		}
		slot_rank[k] = rank;
	}
}

/* Digit positions: tp first, then by bytes (heavier first), ties cp, pp, dp. */
static void
traffic_priority(const struct ctx *c, int *prio)
{
	static const enum pl_axis tie[] = { PL_TP, PL_CP, PL_PP, PL_DP, PL_EP };
	int n = 0, i, j;

	for (i = 0; i < 5; i++)
		for (j = 0; j < c->dg.n; j++)
			if (c->dg.axis[j] == tie[i])
				prio[n++] = j;
	/* Stable insertion sort on bytes, TP pinned first. */
	for (i = 2; i < n; i++) {
		int d = prio[i];

		for (j = i; j > 1 && c->bytes[c->dg.axis[prio[j - 1]]] < c->bytes[c->dg.axis[d]]; j--)
			prio[j] = prio[j - 1];
		prio[j] = d;
	}
}

/* rank -> step node for a slot -> rank assignment in topology order. */
static void
rank_nodes_topo(const struct ctx *c, const long *slot_rank, long *rank_node)
{
	long i, j;

	for (i = 0; i < c->nin; i++) {
		const struct snode *s = &c->sn[c->topo_order[i]];

		for (j = 0; j < s->ntasks; j++)
			rank_node[slot_rank[s->first_slot + j]] = c->topo_order[i];
	}
}

/* The procid of local task j of step node s. */
static long
procid_of(const struct ctx *c, const struct snode *s, long j)
{
	return c->in[s->in].tids ? c->in[s->in].tids[j] : s->procid0 + j;
}

/* Whether every TP group of a rank -> node assignment stays in one NVLink domain. */
static int
tp_in_domains(const struct ctx *c, const long *rank_node)
{
	long r, size = 1, stride = 1;
	int i;

	for (i = 0; i < c->dg.n; i++)
		if (c->dg.axis[i] == PL_TP) {
			size = c->dg.size[i];
			stride = c->dg.stride[i];
		}
	for (r = 0; r < c->world; r++) {
		long first = r - ((r / stride) % size) * stride;

		if (c->sn[rank_node[r]].domain != c->sn[rank_node[first]].domain)
			return 0;
	}
	return 1;
}

static int
better(const struct place_cost *a, const struct place_cost *b)
{
	/* Compare with a relative slack so float noise cannot flip a tie. */
	double eps = 1e-9 * (b->cross_switch_bytes + b->cross_node_bytes + 1.0);

	if (a->cross_switch_bytes < b->cross_switch_bytes - eps)
		return 1;
	if (a->cross_switch_bytes > b->cross_switch_bytes + eps)
		return 0;
	return a->cross_node_bytes < b->cross_node_bytes - eps;
}

static int
fill_result(struct ctx *c, const long *slot_rank, int baseline, struct place_result *out)
{
	long i, j;

	for (i = 0; i < c->nin; i++) {
		const struct snode *s = &c->sn[c->topo_order[i]];

		for (j = 0; j < s->ntasks; j++) {
			long procid = procid_of(c, s, j);
			long rank;
			struct place_task *t;
			const struct topo_gpu *g = &s->type->gpus[s->gpu_order[j]];

			/* baseline_rank_node() has checked the ids: each of
			 * 0..world-1 exactly once. */
			rank = baseline ? procid : slot_rank[s->first_slot + j];
			t = &out->tasks[procid];
			t->procid = procid;
			t->rank = rank;
			t->node = s->in;
			t->local_id = j;
			t->local_rank = g->index;
			t->nic = g->nic;
			t->nic_name = g->nic >= 0 && g->nic < s->type->nnics ?
				      s->type->nics[g->nic].name : NULL;
			if (order_coords(c->l, rank, &t->co, c->err) < 0)
				return -1;
			out->rank_procid[rank] = procid;
		}
	}
	return 0;
}

static void
ctx_free(struct ctx *c)
{
	long i;

	if (c->type_orders)
		for (i = 0; i <= c->m->ntypes; i++)
			free(c->type_orders[i]);
	free(c->type_orders);
	free(c->sn);
	free(c->topo_order);
}

/*
 * The baseline's rank -> node (RANK = SLURM_PROCID).  This is also where the
 * caller's task ids are checked: every id in 0..world-1 exactly once.
 */
static int
baseline_rank_node(const struct ctx *c, long *rank_node)
{
	char c1[PL_CLIP_BUF], c2[PL_CLIP_BUF];
	long i, j;

	for (i = 0; i < c->world; i++)
		rank_node[i] = -1;
	for (i = 0; i < c->nin; i++)
		for (j = 0; j < c->sn[i].ntasks; j++) {
			long p = procid_of(c, &c->sn[i], j);

			if (p < 0 || p >= c->world)
				return pl_err_set(c->err, "node '%s': task id %ld is out of range 0..%ld",
						  pl_clip(c->in[i].name, c1, sizeof(c1)), p,
						  c->world - 1);
			if (rank_node[p] >= 0)
				return pl_err_set(c->err, "task id %ld is listed twice (nodes '%s' and '%s')",
						  p, pl_clip(c->in[rank_node[p]].name, c1, sizeof(c1)),
						  pl_clip(c->in[i].name, c2, sizeof(c2)));
			rank_node[p] = i;
		}
	return 0;
}

int
place_compute(const struct pl_layout *l, const struct topo_map *m,
	      const struct place_node *nodes, long nnodes,
	      const double *axis_bytes, struct place_result *out, pl_err_t *err)
{
	static const double default_bytes[PL_NAXES] = {
		[PL_TP] = 8, [PL_CP] = 4, [PL_PP] = 2, [PL_DP] = 1, [PL_EP] = 3,
	};
	struct ctx c;
	long *slot_rank = NULL, *best_slots = NULL, *rank_node = NULL;
	struct place_cost cost;
	int prio[PL_NAXES], ident[PL_NAXES], i, rv = -1, best_base = 0, base_valid;
	long r, k;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.l = l;
	c.m = m;
	c.in = nodes;
	c.nin = nnodes;
	c.err = err;
	c.world = 1;
	for (i = 0; i < PL_NAXES; i++)
		if (i != PL_EP)
			c.world *= l->size[i];
	if (nnodes <= 0)
		return pl_err_set(err, "the step has no nodes");
	if (place_check_nodes(nodes, nnodes, err) < 0)
		return -1;
	for (i = 0; i < PL_NAXES; i++)
		c.bytes[i] = axis_bytes ? axis_bytes[i] : default_bytes[i];
	order_digits(l, &c.dg);
	c.sn = calloc((size_t)nnodes, sizeof(*c.sn));
	c.topo_order = calloc((size_t)nnodes, sizeof(*c.topo_order));
	slot_rank = malloc((size_t)c.world * sizeof(*slot_rank));
	best_slots = malloc((size_t)c.world * sizeof(*best_slots));
	rank_node = malloc((size_t)c.world * sizeof(*rank_node));
	out->tasks = calloc((size_t)c.world, sizeof(*out->tasks));
	out->rank_procid = malloc((size_t)c.world * sizeof(*out->rank_procid));
	if (!c.sn || !c.topo_order || !slot_rank || !best_slots || !rank_node ||
	    !out->tasks || !out->rank_procid) {
		pl_err_set(err, "out of memory placing %ld tasks", c.world);
		goto out;
	}
	if (resolve_nodes(&c) < 0 || check_domains(&c) < 0)
		goto out;

	/* The baseline: Slurm's block order with RANK = SLURM_PROCID.  It is
	 * also candidate 3, when its TP groups stay in their domains. */
	if (baseline_rank_node(&c, rank_node) < 0 || cost_of(&c, rank_node, &out->baseline) < 0)
		goto out;
	base_valid = tp_in_domains(&c, rank_node);

	/* Candidate 1: axes by traffic over topology order. */
	traffic_priority(&c, prio);
	sequence(&c, prio, best_slots);
	rank_nodes_topo(&c, best_slots, rank_node);
	if (cost_of(&c, rank_node, &out->cost) < 0)
		goto out;
	snprintf(out->strategy, sizeof(out->strategy), "topology order, axes by traffic");
	for (i = 0; i < c.dg.n; i++) {
		size_t len = strlen(out->strategy);

		snprintf(out->strategy + len, sizeof(out->strategy) - len, "%s%s",
			 i ? "-" : ": ", pl_axis_name(c.dg.axis[prio[i]]));
	}

	/* Candidate 2: the framework's own order over topology order. */
	for (i = 0; i < c.dg.n; i++)
		ident[i] = i;
	sequence(&c, ident, slot_rank);
	rank_nodes_topo(&c, slot_rank, rank_node);
	if (cost_of(&c, rank_node, &cost) < 0)
		goto out;
	if (tp_in_domains(&c, rank_node) && better(&cost, &out->cost)) {
		out->cost = cost;
		memcpy(best_slots, slot_rank, (size_t)c.world * sizeof(*slot_rank));
		snprintf(out->strategy, sizeof(out->strategy), "topology order, framework order");
	}

	/* Candidate 3: the baseline itself. */
	if (base_valid && better(&out->baseline, &out->cost)) {
		out->cost = out->baseline;
		best_base = 1;
		snprintf(out->strategy, sizeof(out->strategy), "Slurm block order (already best)");
	}

	for (r = 0; r < c.world; r++) {
		out->tasks[r].procid = -1;
		out->rank_procid[r] = -1;
	}
	if (fill_result(&c, best_slots, best_base, out) < 0)
		goto out;
	for (k = 0; k < c.world; k++)
		if (out->rank_procid[k] < 0) {
			pl_err_set(err, "no task was given rank %ld (task ids are not 0..%ld)", k,
				   c.world - 1);
			goto out;
		}
	out->ntasks = c.world;
	rv = 0;
out:
	if (rv < 0)
		place_result_free(out);
	free(slot_rank);
	free(best_slots);
	free(rank_node);
	ctx_free(&c);
	return rv;
}

void
place_result_free(struct place_result *r)
{
	if (!r)
		return;
	free(r->tasks);
	free(r->rank_procid);
	r->tasks = NULL;
	r->rank_procid = NULL;
	r->ntasks = 0;
}
