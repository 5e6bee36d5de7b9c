/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cluster's bandwidth map as an SVG for design reviews (`layoutctl topo
 * show MAP --svg FILE`): the intra/inter ratio at the top (GPU-to-GPU bus
 * bandwidth inside a node over that between nodes, under one leaf and
 * across the spine), the four link classes with their figures, measured
 * (and from what) or nominal, then the switch tree as nested boxes: spine
 * switches hold their leaves, leaves hold their nodes, those of one type
 * and block as one run ("gpu[001-128] ×128"), NVLink blocks are tinted.  Siblings of the same shape are drawn
 * twice and then summarised ("×18 more like leaf101"), so a 10,000-node
 * floor stays a page or two.  Same map, same bytes: nothing depends on
 * time, addresses or hashing order.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

#define FIG_W 1200
#define MARGIN 16
#define PAD 10
#define GAP 10
#define HDR 24
#define CHIP_H 20
#define LEAF_MIN_W 270
#define MAX_RUNS 6		/* a box shows at most this many runs of nodes */
#define TREE_Y 318		/* where the switch tree starts, below the head */
#define SHOW_ALIKE 2		/* siblings of one shape drawn before the rest are summarised */

static const char *const class_colour[TOPO_NLINKS] = { "#4c8c00", "#1f6fb4", "#c25400", "#7b3fa0" };
static const char *const class_what[TOPO_NLINKS] = {
	"GPU to GPU inside an NVLink domain",
	"GPU to GPU inside a node without NVLink",
	"node to node under one leaf switch (or block)",
	"node to node across leaf switches",
};

/* A run of a group's nodes with the same type and block (bm_init puts
 * them together). */
struct run {
	long first;		/* index into the group's node list */
	long n;
};

struct bm {
	const struct topo_map *m;
	FILE *f;		/* NULL while measuring */
	long ngroups;		/* switches, then blocks, then the loose nodes */
	long *gstart;		/* group g's nodes: gnodes[gstart[g] .. gstart[g + 1]) */
	long *gnodes;
	int *cstart;		/* switch s's child switches: clist[cstart[s] .. cstart[s + 1]) */
	int *clist;
	long *below;		/* nodes under group g */
	long *gpus;		/* GPUs under group g */
	long *also;		/* nodes drawn elsewhere that leaf g also holds (their sw2):
				 * "+N shared" */
	uint64_t *sig;		/* group g's shape */
	char **names;		/* scratch for hosts_compress, nnodes entries */
	int intra;		/* the intra-node class */
};

static long
node_group(const struct topo_map *m, long i)
{
	const struct topo_node *n = &m->nodes[i];

	if (n->sw >= 0)
		return n->sw;
	if (n->block >= 0)
		return m->nswitches + n->block;
	return (long)m->nswitches + m->nblocks;
}

static int
node_gpus(const struct topo_map *m, long i)
{
	const struct topo_nodetype *t = topo_node_type(m, i);

	return t ? t->ngpus : 0;
}

static uint64_t
fnv(uint64_t h, uint64_t v)
{
	int k;

	for (k = 0; k < 8; k++, v >>= 8)
		h = (h ^ (v & 0xff)) * 1099511628211ULL;
	return h;
}

static int
same_node_kind(const struct topo_map *m, long a, long b)
{
	return m->nodes[a].type == m->nodes[b].type && m->nodes[a].block == m->nodes[b].block;
}

/* The runs of group g into r (at most max; *total gets how many there are). */
static long
group_runs(const struct bm *b, long g, struct run *r, long max, long *total)
{
	long k, n = 0, lo = b->gstart[g], hi = b->gstart[g + 1];

	for (k = lo; k < hi; k++) {
		if (k > lo && same_node_kind(b->m, b->gnodes[k - 1], b->gnodes[k])) {
			if (n <= max)
				r[n - 1].n++;
			continue;
		}
		if (n < max) {
			r[n].first = k - lo;
			r[n].n = 1;
		}
		n++;
	}
	*total = n;
	return n < max ? n : max;
}

/* A group's shape: its runs' lengths, types and NVLink-ness (not names). */
static uint64_t
leaf_sig(const struct bm *b, long g)
{
	const struct topo_map *m = b->m;
	long k, lo = b->gstart[g], hi = b->gstart[g + 1];
	uint64_t h = fnv(14695981039346656037ULL, (uint64_t)(g >= m->nswitches) + 1);

	for (k = lo; k < hi; k++) {
		const struct topo_node *n = &m->nodes[b->gnodes[k]];
		int nvl = n->block >= 0 && m->blocks[n->block].nvlink;

		if (k > lo && same_node_kind(m, b->gnodes[k - 1], b->gnodes[k]))
			h = fnv(h, 1);
		else
			h = fnv(fnv(fnv(h, 2), (uint64_t)(n->type + 2)), (uint64_t)nvl);
	}
	return fnv(h, (uint64_t)(hi - lo));
}

/* qsort has no context argument in C11. */
static const struct topo_map *kind_map;

static const long *run_v;

static int
run_cmp(const void *pa, const void *pb)
{
	long a = run_v[((const struct run *)pa)->first], b = run_v[((const struct run *)pb)->first];

	return (a > b) - (a < b);
}

static int
kind_cmp(const void *pa, const void *pb)
{
	long a = *(const long *)pa, b = *(const long *)pb;
	const struct topo_node *x = &kind_map->nodes[a], *y = &kind_map->nodes[b];

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return (a > b) - (a < b);
}

/* The n nodes at v grouped by kind, kinds in the order they first appear,
 * nodes of a kind in map order. */
static int
kinds_in_order(long *v, long n)
{
	struct run *r;
	long k, nr = 0, o = 0, *tmp;

	if (n < 2)
		return 0;
	qsort(v, (size_t)n, sizeof(*v), kind_cmp);
	r = malloc((size_t)n * sizeof(*r));
	tmp = malloc((size_t)n * sizeof(*tmp));
	if (!r || !tmp) {
		free(r);
		free(tmp);
		return -1;
	}
	for (k = 0; k < n; k++) {
		if (k == 0 || !same_node_kind(kind_map, v[k - 1], v[k])) {
			r[nr].first = k;
			r[nr++].n = 0;
		}
		r[nr - 1].n++;
	}
	/* Each kind's first node is its lowest index: order the kinds by it. */
	run_v = v;
	qsort(r, (size_t)nr, sizeof(*r), run_cmp);
	for (k = 0; k < nr; k++) {
		memcpy(tmp + o, v + r[k].first, (size_t)r[k].n * sizeof(*v));
		o += r[k].n;
	}
	memcpy(v, tmp, (size_t)n * sizeof(*v));
	free(r);
	free(tmp);
	return 0;
}

static int bm_tree(struct bm *b);

static int
bm_init(struct bm *b, const struct topo_map *m)
{
	long i, g, *fill = NULL;

	memset(b, 0, sizeof(*b));
	b->m = m;
	b->ngroups = (long)m->nswitches + m->nblocks + 1;
	b->gstart = calloc((size_t)b->ngroups + 1, sizeof(*b->gstart));
	b->gnodes = calloc((size_t)m->nnodes + 1, sizeof(*b->gnodes));
	b->cstart = calloc((size_t)m->nswitches + 1, sizeof(*b->cstart));
	b->clist = calloc((size_t)m->nswitches + 1, sizeof(*b->clist));
	b->below = calloc((size_t)b->ngroups, sizeof(*b->below));
	b->gpus = calloc((size_t)b->ngroups, sizeof(*b->gpus));
	b->sig = calloc((size_t)b->ngroups, sizeof(*b->sig));
	b->also = calloc((size_t)b->ngroups, sizeof(*b->also));
	b->names = calloc((size_t)(m->nnodes > m->nswitches ? m->nnodes : m->nswitches) + 1,
			  sizeof(*b->names));
	fill = calloc((size_t)b->ngroups + 1, sizeof(*fill));
	if (!b->gstart || !b->gnodes || !b->cstart || !b->clist || !b->below || !b->gpus ||
	    !b->sig || !b->also || !b->names || !fill) {
		free(fill);
		return -1;
	}
	/* Nodes per group, in map order (a counting sort keeps it stable). */
	for (i = 0; i < m->nnodes; i++)
		b->gstart[node_group(m, i) + 1]++;
	for (g = 0; g < b->ngroups; g++)
		b->gstart[g + 1] += b->gstart[g];
	for (i = 0; i < m->nnodes; i++) {
		g = node_group(m, i);
		b->gnodes[b->gstart[g] + fill[g]++] = i;
		b->below[g]++;
		b->gpus[g] += node_gpus(m, i);
		if (m->nodes[i].sw2 >= 0)
			b->also[m->nodes[i].sw2]++;
	}
	free(fill);
	/* Inside a group, like nodes together (then in map order), so each
	 * kind is one run however the kinds interleave. */
	kind_map = m;
	for (g = 0; g < b->ngroups; g++)
		if (kinds_in_order(b->gnodes + b->gstart[g], b->gstart[g + 1] - b->gstart[g]) < 0)
			return -1;
	return bm_tree(b);
}

/* Child switches per switch (in index order), then each switch's counts
 * and shape from its children's, bottom up. */
static int
bm_tree(struct bm *b)
{
	const struct topo_map *m = b->m;
	int s, lvl, maxlevel = 0;
	long g;

	for (s = 0; s < m->nswitches; s++)
		if (m->switches[s].parent >= 0)
			b->cstart[m->switches[s].parent + 1]++;
	for (s = 0; s < m->nswitches; s++)
		b->cstart[s + 1] += b->cstart[s];
	{
		int *cf = calloc((size_t)m->nswitches + 1, sizeof(*cf));

		if (!cf)
			return -1;
		for (s = 0; s < m->nswitches; s++) {
			int p = m->switches[s].parent;

			if (p >= 0)
				b->clist[b->cstart[p] + cf[p]++] = s;
			if (m->switches[s].level > maxlevel)
				maxlevel = m->switches[s].level;
		}
		free(cf);
	}
	for (g = m->nswitches; g < b->ngroups; g++)
		b->sig[g] = leaf_sig(b, g);
	for (lvl = 0; lvl <= maxlevel; lvl++)
		for (s = 0; s < m->nswitches; s++) {
			int k;
			uint64_t h;

			if (m->switches[s].level != lvl)
				continue;
			h = b->cstart[s + 1] == b->cstart[s] ? leaf_sig(b, s) :
				fnv(14695981039346656037ULL, (uint64_t)lvl + 7);
			for (k = b->cstart[s]; k < b->cstart[s + 1]; k++) {
				int c = b->clist[k];

				b->below[s] += b->below[c];
				b->gpus[s] += b->gpus[c];
				h = fnv(h, b->sig[c]);
			}
			b->sig[s] = fnv(h, (uint64_t)b->below[s]);
		}
	b->intra = topo_intra_class(m);
	return 0;
}

static void
bm_free(struct bm *b)
{
	free(b->gstart);
	free(b->gnodes);
	free(b->cstart);
	free(b->clist);
	free(b->below);
	free(b->gpus);
	free(b->sig);
	free(b->also);
	free(b->names);
}

static int
is_leafish(const struct bm *b, long g)
{
	return g >= b->m->nswitches || b->cstart[g + 1] == b->cstart[g];
}

static const char *
group_name(const struct bm *b, long g)
{
	const struct topo_map *m = b->m;

	if (g < m->nswitches)
		return m->switches[g].name;
	if (g < (long)m->nswitches + m->nblocks)
		return m->blocks[g - m->nswitches].name;
	return "no switch or block";
}

/* UTF-8 code points in s. */
static long
cp_len(const char *s)
{
	long n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Text into the figure, cut to max characters (code points) with an
 * ellipsis. */
static void
text_cut(FILE *f, const char *s, long max)
{
	char buf[1024];
	const char *p;
	size_t k;
	long n = 0;

	for (p = s; *p; p++)
		n += ((unsigned char)*p & 0xc0) != 0x80;
	if (n <= max && strlen(s) < sizeof(buf)) {
		ctl_xml_text(f, s);
		return;
	}
	for (n = 0, k = 0; s[k] && k + 4 < sizeof(buf); k++) {
		if (((unsigned char)s[k] & 0xc0) != 0x80 && ++n > max - 1 && max > 1)
			break;
		buf[k] = s[k];
	}
	buf[k] = '\0';
	ctl_xml_text(f, buf);
	if (s[k])
		fputs("\xe2\x80\xa6", f);
}

/* Characters of 11 px sans-serif that fit in w pixels (6.2 px each, a
 * little more than DejaVu Sans and Liberation Sans take on average). */
static long
fits(long w)
{
	return w > 20 ? (w - 12) * 10 / 62 : 1;
}

static void
stroke(FILE *f, const struct topo_map *m, int cls, double width)
{
	if (m->link[cls].measured)
		fprintf(f, "stroke=\"%s\" stroke-width=\"%.1f\"", class_colour[cls], width);
	else
		fprintf(f, "stroke=\"#999\" stroke-width=\"%.1f\" stroke-dasharray=\"6 4\"", width);
}

/* The compact names of nodes gnodes[lo..lo+n); caller frees. */
static char *
compress_nodes(const struct bm *b, long lo, long n)
{
	struct hosts h;
	long k;

	for (k = 0; k < n; k++)
		b->names[k] = (char *)b->m->nodes[b->gnodes[lo + k]].name;
	h.n = n;
	h.names = b->names;
	return hosts_compress(&h);
}

/* The compact names of groups g[0..n); caller frees. */
static char *
compress_groups(const struct bm *b, const long *g, long n)
{
	struct hosts h;
	long k;

	for (k = 0; k < n; k++)
		b->names[k] = (char *)group_name(b, g[k]);
	h.n = n;
	h.names = b->names;
	return hosts_compress(&h);
}

static long
leaf_height(const struct bm *b, long g)
{
	struct run r[MAX_RUNS];
	long total, shown = group_runs(b, g, r, MAX_RUNS, &total);

	if (total > MAX_RUNS)
		shown = MAX_RUNS;	/* MAX_RUNS - 1 runs and a line for the rest */
	return HDR + shown * CHIP_H + 6;
}

/* One run of nodes as a chip. */
static int
draw_run(const struct bm *b, long g, const struct run *r, long x, long y, long w)
{
	const struct topo_map *m = b->m;
	long lo = b->gstart[g] + r->first, i = b->gnodes[lo];
	const struct topo_node *n = &m->nodes[i];
	const struct topo_nodetype *t = topo_node_type(m, i);
	char *names = compress_nodes(b, lo, r->n), suffix[256], count[32] = "";
	int cls = topo_type_intra_class(t);
	FILE *f = b->f;
	long room;

	if (!names)
		return -1;
	if (r->n > 1)
		snprintf(count, sizeof(count), " \xc3\x97%ld", r->n);
	snprintf(suffix, sizeof(suffix), "%s \xc2\xb7 %d GPUs%s%s%s%s", count,
		 t ? t->ngpus : 0, m->ntypes > 1 && t ? " \xc2\xb7 " : "", m->ntypes > 1 && t ? t->name : "",
		 n->block >= 0 && g < m->nswitches ? " \xc2\xb7 block " : "",
		 n->block >= 0 && g < m->nswitches ? m->blocks[n->block].name : "");
	fprintf(f, "<g><title>");
	ctl_xml_text(f, names);
	ctl_xml_text(f, suffix);
	fprintf(f, "; inside a node: %s</title>\n<rect x=\"%ld\" y=\"%ld\" width=\"%ld\" "
		"height=\"%d\" rx=\"3\" fill=\"%s\" ", topo_link_name(cls), x, y, w, CHIP_H - 4,
		n->block >= 0 && m->blocks[n->block].nvlink ? "#e4f2cc" : "#f6f6f6");
	stroke(f, m, cls, 1.0);
	fprintf(f, "/>\n<text x=\"%ld\" y=\"%ld\" font-size=\"11\">", x + 5, y + 12);
	/* The names give way first: the count and the GPUs always show. */
	room = fits(w) - cp_len(suffix);
	text_cut(f, names, room > 8 ? room : 8);
	text_cut(f, suffix, fits(w) - (room > 8 ? room : 8));
	fprintf(f, "</text></g>\n");
	free(names);
	return 0;
}

/* A leaf switch, a block or the loose nodes: a box of runs. */
static long
draw_leaf(const struct bm *b, long g, long x, long y, long w)
{
	const struct topo_map *m = b->m;
	struct run r[MAX_RUNS];
	long k, total, shown = group_runs(b, g, r, MAX_RUNS, &total), h = leaf_height(b, g), used;
	long nodes, gpus = 0;
	int block = g >= m->nswitches && g < (long)m->nswitches + m->nblocks;
	int nvl = block && m->blocks[g - m->nswitches].nvlink;
	char head[256], counts[128];
	FILE *f = b->f;

	if (!f)
		return h;
	if (total > MAX_RUNS)
		shown = MAX_RUNS - 1;
	fprintf(f, "<rect x=\"%ld\" y=\"%ld\" width=\"%ld\" height=\"%ld\" rx=\"5\" fill=\"%s\" ",
		x, y, w, h, nvl ? "#eef7e0" : "white");
	/* Nodes of one NVLink block talk over NVLink. */
	stroke(f, m, nvl ? TOPO_LINK_NVLINK : TOPO_LINK_LEAF, 1.5);
	fprintf(f, "/>\n");
	/* The counts show whole; a long name gives way. */
	/* Its own nodes (a switch above leaves may hold some too). */
	for (k = b->gstart[g]; k < b->gstart[g + 1]; k++)
		gpus += node_gpus(m, b->gnodes[k]);
	nodes = b->gstart[g + 1] - b->gstart[g];
	snprintf(counts, sizeof(counts), " \xc2\xb7 %ld node%s, %ld GPUs", nodes,
		 nodes == 1 ? "" : "s", gpus);
	if (b->also[g])
		snprintf(counts + strlen(counts), sizeof(counts) - strlen(counts), " (+%ld shared)",
			 b->also[g]);
	/* 12 px text: about 6.6 px a character, 7.2 in bold. */
	used = (w - 12 - cp_len(counts) * 66 / 10) * 10 / 72;
	used = used > 8 ? used : 8;
	snprintf(head, sizeof(head), "%s%s", nvl ? "NVLink block " : block ? "block " : "",
		 group_name(b, g));
	fprintf(f, "<text x=\"%ld\" y=\"%ld\" font-size=\"12\"><tspan font-weight=\"bold\">",
		x + 6, y + 16);
	text_cut(f, head, used);
	fprintf(f, "</tspan>");
	ctl_xml_text(f, counts);
	fprintf(f, "</text>\n");
	for (k = 0; k < shown; k++)
		if (draw_run(b, g, &r[k], x + 6, y + HDR + k * CHIP_H, w - 12) < 0)
			return -1;
	if (total > shown) {
		long rest = nodes - (r[shown - 1].first + r[shown - 1].n);

		fprintf(f, "<text x=\"%ld\" y=\"%ld\" font-size=\"11\" fill=\"#555\">"
			"\xe2\x80\xa6 %ld more runs, %ld nodes</text>\n",
			x + 8, y + HDR + shown * CHIP_H + 12, total - shown, rest);
	}
	return h;
}

/* Siblings of one shape summarised: "×N more like NAME". */
static long
draw_alike(const struct bm *b, const long *g, long n, long x, long y, long w, int leafish)
{
	long k, nodes = 0, gpus = 0, h = leafish ? HDR + 2 * 16 : HDR + 18;
	char line[512], *names;
	FILE *f = b->f;

	if (!f)
		return h;
	names = compress_groups(b, g, n);
	if (!names)
		return -1;
	for (k = 0; k < n; k++) {
		nodes += b->below[g[k]];
		gpus += b->gpus[g[k]];
	}
	fprintf(f, "<rect x=\"%ld\" y=\"%ld\" width=\"%ld\" height=\"%ld\" rx=\"5\" fill=\"#fafafa\" "
		"stroke=\"#bbb\" stroke-dasharray=\"2 3\"/>\n", x, y, w, h);
	snprintf(line, sizeof(line), "\xc3\x97%ld more like %s", n, group_name(b, g[-1]));
	fprintf(f, "<text x=\"%ld\" y=\"%ld\" font-size=\"12\" font-weight=\"bold\">", x + 6, y + 16);
	text_cut(f, line, fits(w) * 11 / 12);
	fprintf(f, "</text>\n<text x=\"%ld\" y=\"%ld\" font-size=\"11\">", x + 6, y + HDR + 10);
	if (leafish) {
		text_cut(f, names, fits(w));
		fprintf(f, "</text>\n<text x=\"%ld\" y=\"%ld\" font-size=\"11\">", x + 6, y + HDR + 26);
		snprintf(line, sizeof(line), "%ld nodes, %ld GPUs", nodes, gpus);
	} else {
		snprintf(line, sizeof(line), "%s: %ld nodes, %ld GPUs", names, nodes, gpus);
	}
	text_cut(f, line, fits(w));
	fprintf(f, "</text>\n");
	free(names);
	return h;
}

static long draw_set(const struct bm *b, const long *g, long n, long x, long y, long w,
		     int inner_first);

/* A switch above leaves: a box around its children. */
static long
draw_inner(const struct bm *b, int s, long x, long y, long w)
{
	const struct topo_map *m = b->m;
	long k, nk = b->cstart[s + 1] - b->cstart[s], h, used, own = 0, top = y + HDR + 4;
	long *kids = malloc((size_t)nk * sizeof(*kids) + 1);
	char head[256], tag[96];
	FILE *f = b->f;

	if (!kids)
		return -1;
	for (k = 0; k < nk; k++)
		kids[k] = b->clist[b->cstart[s] + k];
	/* Nodes a map puts on this switch itself: a box of their own first. */
	if (b->gstart[s + 1] > b->gstart[s])
		own = leaf_height(b, s) + GAP;
	/* Measure first so the box is drawn under its children. */
	{
		struct bm q = *b;

		q.f = NULL;
		h = draw_set(&q, kids, nk, x + PAD, top + own, w - 2 * PAD, 0);
	}
	if (h < 0) {
		free(kids);
		return -1;
	}
	h += HDR + 4 + PAD + own;
	if (f) {
		fprintf(f, "<rect x=\"%ld\" y=\"%ld\" width=\"%ld\" height=\"%ld\" rx=\"7\" "
			"fill=\"none\" ", x, y, w, h);
		stroke(f, m, TOPO_LINK_SPINE, 2.0);
		fprintf(f, "/>\n");
		snprintf(tag, sizeof(tag), "node to node across it: spine %.1f GB/s %s",
			 m->link[TOPO_LINK_SPINE].gbps,
			 m->link[TOPO_LINK_SPINE].measured ? "measured" : "nominal");
		fprintf(f, "<text x=\"%ld\" y=\"%ld\" font-size=\"13\"><tspan font-weight=\"bold\">",
			x + 8, y + 17);
		text_cut(f, m->switches[s].name, (w - 300) / 16);
		used = (long)strlen(m->switches[s].name);
		used = used < (w - 300) / 16 ? used : (w - 300) / 16;
		snprintf(head, sizeof(head), " \xc2\xb7 level-%d switch \xc2\xb7 %ld nodes, %ld GPUs below",
			 m->switches[s].level, b->below[s], b->gpus[s]);
		fprintf(f, "</tspan>");
		text_cut(f, head, (w - 300) / 8 - used);
		fprintf(f, "</text>\n<text x=\"%ld\" y=\"%ld\" font-size=\"11\" text-anchor=\"end\" "
			"fill=\"%s\">", x + w - 8, y + 17,
			m->link[TOPO_LINK_SPINE].measured ? class_colour[TOPO_LINK_SPINE] : "#777");
		ctl_xml_text(f, tag);
		fprintf(f, "</text>\n");
		if (own && draw_leaf(b, s, x + PAD, top, LEAF_MIN_W) < 0)
			h = -1;
		if (h >= 0 && draw_set(b, kids, nk, x + PAD, top + own, w - 2 * PAD, 0) < 0)
			h = -1;
	}
	free(kids);
	return h;
}

/*
 * Groups g[0..n) side by side: the leaf-like ones in a grid, and the
 * switches above leaves one under the other, after them (before them with
 * inner_first: the top level, where the trees come first).  A run of more than
 * SHOW_ALIKE + 2 siblings of one shape is drawn SHOW_ALIKE times and
 * summarised.  Returns the height used, or -1.
 */
static long
draw_set(const struct bm *b, const long *g, long n, long x, long y, long w, int inner_first)
{
	long k, j, used = 0, cols = (w + GAP) / (LEAF_MIN_W + GAP), col = 0, rowh = 0, cw, h;
	int pass;

	if (cols < 1)
		cols = 1;
	cw = (w - (cols - 1) * GAP) / cols;
	for (pass = 0; pass < 2; pass++) {
		for (k = 0; k < n; k = j) {
			int leafish = is_leafish(b, g[k]);
			long alike, draw_n, d;

			if (leafish != ((pass == 0) != inner_first) || b->below[g[k]] == 0) {
				j = k + 1;
				continue;
			}
			/* The run of like siblings from k (of this pass's kind). */
			for (j = k + 1; j < n && is_leafish(b, g[j]) == leafish &&
				     b->sig[g[j]] == b->sig[g[k]]; j++)
				;
			alike = j - k;
			/* A summary stands for three siblings at least. */
			draw_n = alike > SHOW_ALIKE + 2 ? SHOW_ALIKE : alike;
			for (d = 0; d <= draw_n; d++) {
				if (d == draw_n && draw_n == alike)
					break;
				if (leafish) {
					long cx = x + col * (cw + GAP);

					h = d < draw_n ? draw_leaf(b, g[k + d], cx, y + used, cw) :
						draw_alike(b, g + k + d, alike - d, cx, y + used, cw, 1);
					if (h < 0)
						return -1;
					rowh = h > rowh ? h : rowh;
					if (++col == cols) {
						used += rowh + GAP;
						col = 0;
						rowh = 0;
					}
				} else {
					h = d < draw_n ? draw_inner(b, (int)g[k + d], x, y + used, w) :
						draw_alike(b, g + k + d, alike - d, x, y + used, w, 0);
					if (h < 0)
						return -1;
					used += h + GAP;
				}
			}
		}
		if (col) {
			used += rowh + GAP;
			col = 0;
			rowh = 0;
		}
	}
	return used > 0 ? used - GAP : 0;
}

/* The top-level groups: root switches, blocks holding nodes of no switch,
 * and the nodes of neither.  Caller frees. */
static long *
roots(const struct bm *b, long *n)
{
	const struct topo_map *m = b->m;
	long g, k = 0, *r = malloc((size_t)b->ngroups * sizeof(*r));

	if (!r)
		return NULL;
	for (g = 0; g < b->ngroups; g++)
		if ((g >= m->nswitches || m->switches[g].parent < 0) && b->below[g] > 0)
			r[k++] = g;
	*n = k;
	return r;
}

/* Is there a switch above leaves, or more than one block? */
static int
has_spine(const struct topo_map *m)
{
	int s;

	for (s = 0; s < m->nswitches; s++)
		if (m->switches[s].level > 0)
			return 1;
	return m->nswitches == 0 && m->nblocks > 1;
}

void
ctl_bwmap_ratios(const struct topo_map *m, int *intra, double *leaf, double *spine)
{
	*intra = topo_intra_class(m);
	*leaf = m->link[TOPO_LINK_LEAF].gbps > 0 ?
		m->link[*intra].gbps / m->link[TOPO_LINK_LEAF].gbps : 0;
	*spine = has_spine(m) && m->link[TOPO_LINK_SPINE].gbps > 0 ?
		m->link[*intra].gbps / m->link[TOPO_LINK_SPINE].gbps : 0;
}

static void
ratio_text(char *buf, size_t size, double a, double b)
{
	if (b > 0)
		snprintf(buf, size, "%.2f\xc3\x97", a / b);
	else
		snprintf(buf, size, "n/a");
}

/* One figure of the ratio panel: "inside a node (nvlink)  450.0 GB/s  nominal". */
static void
figure_line(FILE *f, const struct topo_map *m, int cls, const char *what, long y)
{
	fprintf(f, "<text x=\"%d\" y=\"%ld\" font-size=\"13\">%s (%s): <tspan font-weight=\"bold\">"
		"%.1f GB/s</tspan> <tspan fill=\"%s\">%s</tspan></text>\n", MARGIN + 400, y, what,
		topo_link_name(cls), m->link[cls].gbps,
		m->link[cls].measured ? class_colour[cls] : "#777",
		m->link[cls].measured ? "measured" : "nominal");
}

static void
draw_head(const struct bm *b, long gpus, long nodes_total)
{
	const struct topo_map *m = b->m;
	const struct topo_linkclass *in = &m->link[b->intra], *leaf = &m->link[TOPO_LINK_LEAF],
		*spine = &m->link[TOPO_LINK_SPINE];
	int spined = has_spine(m), k, maxlevel = -1;
	char r1[32], r2[32];
	FILE *f = b->f;
	long y;

	for (k = 0; k < m->nswitches; k++)
		if (m->switches[k].level > maxlevel)
			maxlevel = m->switches[k].level;
	fprintf(f, "<text x=\"%d\" y=\"30\" font-size=\"20\" font-weight=\"bold\">Bandwidth map: ",
		MARGIN);
	ctl_xml_text(f, m->name);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"50\" font-size=\"12\" fill=\"#444\">%ld nodes, "
		"%ld GPUs; %d switches in %d levels; %d blocks</text>\n", MARGIN, nodes_total, gpus,
		m->nswitches, maxlevel + 1, m->nblocks);
	/* The ratio panel. */
	fprintf(f, "<rect x=\"%d\" y=\"62\" width=\"%d\" height=\"110\" rx=\"6\" fill=\"#f3f6fa\" "
		"stroke=\"#9ab\"/>\n", MARGIN, FIG_W - 2 * MARGIN);
	ratio_text(r1, sizeof(r1), in->gbps, leaf->gbps);
	ratio_text(r2, sizeof(r2), in->gbps, spine->gbps);
	fprintf(f, "<text x=\"%d\" y=\"96\" font-size=\"13\" fill=\"#333\">intra/inter "
		"(inside a node \xc3\xb7 between nodes)</text>\n", MARGIN + 12);
	fprintf(f, "<text id=\"ratio-leaf\" x=\"%d\" y=\"130\" font-size=\"30\" "
		"font-weight=\"bold\">%s</text>\n", MARGIN + 12, r1);
	if (!in->measured || !leaf->measured)
		fprintf(f, "<text x=\"%d\" y=\"128\" font-size=\"12\" fill=\"#777\">from %s</text>\n",
			MARGIN + 150, !in->measured && !leaf->measured ? "nominal figures" :
			"a nominal and a measured figure");
	if (spined)
		fprintf(f, "<text id=\"ratio-spine\" x=\"%d\" y=\"150\" font-size=\"13\">"
			"across the spine: <tspan font-weight=\"bold\">%s</tspan></text>\n",
			MARGIN + 12, r2);
	else
		fprintf(f, "<text id=\"ratio-spine\" x=\"%d\" y=\"150\" font-size=\"13\">"
			"no spine in this map</text>\n", MARGIN + 12);
	figure_line(f, m, b->intra, "inside a node", 84);
	figure_line(f, m, TOPO_LINK_LEAF, "between nodes, one leaf", 104);
	if (spined)
		figure_line(f, m, TOPO_LINK_SPINE, "between nodes, across the spine", 124);
	fprintf(f, "<text x=\"%d\" y=\"148\" font-size=\"11\" fill=\"#555\">all_reduce_perf bus "
		"bandwidth; %s</text>\n", MARGIN + 400,
		in->measured && leaf->measured && (!spined || spine->measured) ?
		"every figure measured" :
		"a nominal figure is a planning default, not a measurement: 'layoutctl bwtest' measures it");
	for (k = 0; k < m->nblocks && !m->blocks[k].nvlink; k++)
		;
	if (k < m->nblocks)
		fprintf(f, "<text x=\"%d\" y=\"164\" font-size=\"11\" fill=\"#555\">nodes of one "
			"NVLink block talk over NVLink (the nvlink class); leaf is node to node "
			"outside one</text>\n", MARGIN + 400);
	/* The link classes. */
	y = 198;
	fprintf(f, "<text x=\"%d\" y=\"%ld\" font-size=\"13\" font-weight=\"bold\">Link classes "
		"(a box's border is the class between the nodes inside it)</text>\n", MARGIN, y);
	for (k = 0; k < TOPO_NLINKS; k++) {
		const struct topo_linkclass *l = &m->link[k];

		y += 20;
		fprintf(f, "<line x1=\"%d\" y1=\"%ld\" x2=\"%d\" y2=\"%ld\" ", MARGIN, y - 4,
			MARGIN + 50, y - 4);
		stroke(f, m, k, 3.0);
		fprintf(f, "/>\n<text id=\"link-%s\" x=\"%d\" y=\"%ld\" font-size=\"12\">"
			"<tspan font-weight=\"bold\">%s</tspan> %.1f GB/s ", topo_link_name(k),
			MARGIN + 60, y, topo_link_name(k), l->gbps);
		if (l->measured) {
			fprintf(f, "<tspan fill=\"%s\">measured (", class_colour[k]);
			ctl_xml_text(f, l->source);
			fprintf(f, ")</tspan>");
		} else {
			fprintf(f, "<tspan fill=\"#777\">nominal</tspan>");
		}
		fprintf(f, " \xe2\x80\x94 %s</text>\n", class_what[k]);
	}
}

int
ctl_bwmap_write(const char *path, const struct topo_map *m)
{
	struct bm b;
	long n = 0, *top = NULL, h, gpus = 0, g;
	FILE *f = NULL;
	int rv = -1, to_stdout = strcmp(path, "-") == 0;

	if (bm_init(&b, m) < 0 || !(top = roots(&b, &n))) {
		ctl_error("--svg %s: out of memory", ctl_clip_path(path));
		goto out;
	}
	for (g = 0; g < b.ngroups; g++)
		if (g >= m->nswitches || m->switches[g].parent < 0)
			gpus += b.gpus[g];
	h = draw_set(&b, top, n, MARGIN, 0, FIG_W - 2 * MARGIN, 1);
	if (h < 0) {
		ctl_error("--svg %s: out of memory", ctl_clip_path(path));
		goto out;
	}
	f = to_stdout ? stdout : fopen(path, "w");
	if (!f) {
		ctl_error("--svg %s: %s", ctl_clip_path(path), strerror(errno));
		goto out;
	}
	b.f = f;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		"height=\"%ld\" viewBox=\"0 0 %d %ld\" font-family=\"sans-serif\">\n"
		"<title>Bandwidth map: ", FIG_W, TREE_Y + h + 30, FIG_W, TREE_Y + h + 30);
	ctl_xml_text(f, m->name);
	fprintf(f, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	draw_head(&b, gpus, m->nnodes);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">Switches and "
		"nodes (runs of like nodes in one box; tinted: NVLink block)</text>\n", MARGIN, TREE_Y - 14);
	if (draw_set(&b, top, n, MARGIN, TREE_Y, FIG_W - 2 * MARGIN, 1) < 0) {
		ctl_error("--svg %s: out of memory", ctl_clip_path(path));
		goto out;
	}
	rv = ctl_svg_end(f, path);
	f = NULL;
out:
	if (f && !to_stdout)
		fclose(f);
	free(top);
	bm_free(&b);
	return rv;
}
