/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nccl-tests all_reduce_perf text output, what it measures of a map's link
 * classes, and the runs that measure them (layoutctl bwtest).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "topo.h"
#include "topo_util.h"

#define NT_MAX_TOKENS 64
#define NT_FILE_LIMIT (64L * 1024 * 1024)

/* Column positions in a data row, from the header line. */
struct columns {
	int size;
	int busbw[2];		/* out-of-place, in-place; -1 absent */
	int need;		/* tokens a row must have */
};

struct ntparse {
	struct nccltests_result *r;
	struct columns col;
	char **hosts;
	int nhosts;
	int maxrank;
};

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Split a line in place on blanks; returns the token count. */
static int
tokenize(char *p, char **tok, int max)
{
	int n = 0;

	while (n < max) {
		while (is_space(*p))
			p++;
		if (!*p)
			break;
		tok[n++] = p;
		while (*p && !is_space(*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
	return n;
}

/* The standard layout, used until a header line says otherwise. */
static void
default_columns(struct columns *c)
{
	c->size = 0;
	c->busbw[0] = 7;
	c->busbw[1] = 11;
	c->need = 12;
}

/* A header names its columns: size count type redop root time algbw busbw ... */
static int
header_columns(struct columns *c, char **tok, int n)
{
	int i, nb = 0, size = -1, count = -1, type = -1;
	int busbw[2] = { -1, -1 };

	for (i = 0; i < n; i++) {
		if (strcmp(tok[i], "size") == 0 && size < 0)
			size = i;
		else if (strcmp(tok[i], "count") == 0 && count < 0)
			count = i;
		else if (strcmp(tok[i], "type") == 0 && type < 0)
			type = i;
		else if (strcmp(tok[i], "busbw") == 0 && nb < 2)
			busbw[nb++] = i;
	}
	if (size < 0 || count < 0 || type < 0 || nb == 0)
		return 0;
	c->size = size;
	c->busbw[0] = busbw[0];
	c->busbw[1] = busbw[1];
	c->need = (nb == 2 ? busbw[1] : busbw[0]) + 1;
	if (c->need <= size)
		c->need = size + 1;
	return 1;
}

static int
parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end || errno)
		return -1;
	*out = v;
	return 0;
}

static int
parse_bw(const char *s, double *out)
{
	char *end;
	double v;

	if ((*s < '0' || *s > '9') && *s != '.')
		return -1;
	v = strtod(s, &end);
	if (*end || !isfinite(v) || v < 0)
		return -1;
	*out = v;
	return 0;
}

/* `#  Rank  3 Group  0 Pid  6902 on HOST device  3 [..] NAME` */
static int
rank_line(struct ntparse *ps, char **tok, int n)
{
	long rank;
	int i, k;

	for (i = 0; i + 1 < n; i++)
		if (strcmp(tok[i], "Rank") == 0)
			break;
	if (i + 1 >= n || parse_long(tok[i + 1], &rank) < 0 || rank > 10000000)
		return 0;
	if (rank > ps->maxrank)
		ps->maxrank = (int)rank;
	for (; i + 1 < n; i++)
		if (strcmp(tok[i], "on") == 0)
			break;
	if (i + 1 >= n)
		return 0;
	for (k = 0; k < ps->nhosts; k++)
		if (strcmp(ps->hosts[k], tok[i + 1]) == 0)
			return 0;
	{
		char **h = realloc(ps->hosts, (size_t)(ps->nhosts + 1) * sizeof(*h));

		if (!h)
			return -1;
		ps->hosts = h;
		h[ps->nhosts] = strdup(tok[i + 1]);
		if (!h[ps->nhosts])
			return -1;
		ps->nhosts++;
	}
	return 0;
}

static void
data_row(struct ntparse *ps, char **tok, int n)
{
	const struct columns *c = &ps->col;
	double bw = -1, v;
	long size;
	int k;

	if (n < c->need || parse_long(tok[c->size], &size) < 0)
		return;
	for (k = 0; k < 2; k++)
		if (c->busbw[k] >= 0 && parse_bw(tok[c->busbw[k]], &v) == 0 && v > bw)
			bw = v;
	/* A row without a readable busbw (a cut-off paste) is skipped. */
	if (bw < 0)
		return;
	ps->r->nrows++;
	if (size > ps->r->max_bytes) {
		ps->r->max_bytes = size;
		ps->r->busbw_max = bw;
	} else if (size == ps->r->max_bytes && bw > ps->r->busbw_max) {
		ps->r->busbw_max = bw;
	}
}

static int
parse_line(struct ntparse *ps, char *line)
{
	char *tok[NT_MAX_TOKENS], *p = line, *avg;
	int n;

	while (is_space(*p))
		p++;
	if (*p == '#') {
		avg = strstr(p, "Avg bus bandwidth");
		if (avg) {
			char *colon = strchr(avg, ':');

			if (colon)
				ps->r->busbw_avg = strtod(colon + 1, NULL);
			if (!isfinite(ps->r->busbw_avg) || ps->r->busbw_avg < 0)
				ps->r->busbw_avg = 0;
			return 0;
		}
		n = tokenize(p + 1, tok, NT_MAX_TOKENS);
		if (n >= 2 && strcmp(tok[0], "Rank") == 0)
			return rank_line(ps, tok, n);
		header_columns(&ps->col, tok, n);
		return 0;
	}
	if (*p >= '0' && *p <= '9') {
		n = tokenize(p, tok, NT_MAX_TOKENS);
		data_row(ps, tok, n);
	}
	return 0;
}

/*
 * Fill *r from the all_reduce_perf output at path.  Column positions come
 * from the header line (the standard layout if there is none); rows that do
 * not parse are skipped.  Fails when the file has no result row.
 */
int
topo_read_nccltests(struct nccltests_result *r, const char *path, pl_err_t *err)
{
	struct ntparse ps;
	char *text = NULL, *line, *next, c[PL_CLIP_BUF];
	size_t len;
	int k, rv = -1;

	pl_clip_path(path, c, sizeof(c));
	memset(r, 0, sizeof(*r));
	memset(&ps, 0, sizeof(ps));
	ps.r = r;
	ps.maxrank = -1;
	default_columns(&ps.col);
	text = topo_util_read_file(path, NT_FILE_LIMIT, "nccl-tests output", &len, err);
	if (!text)
		goto out;
	for (line = text; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (parse_line(&ps, line) < 0) {
			pl_err_set(err, "%s: out of memory", c);
			goto out;
		}
	}
	if (r->nrows == 0) {
		pl_err_set(err, "%s: no result rows: is this all_reduce_perf output?", c);
		goto out;
	}
	r->nranks = ps.maxrank + 1;
	r->nnodes = ps.nhosts;
	for (k = 0; k < 2 && k < ps.nhosts; k++)
		snprintf(r->host[k], sizeof(r->host[k]), "%s", ps.hosts[k]);
	rv = 0;
out:
	for (k = 0; k < ps.nhosts; k++)
		free(ps.hosts[k]);
	free(ps.hosts);
	free(text);
	return rv;
}

int
topo_link_measured(struct topo_map *m, enum topo_link cls, const struct nccltests_result *r,
		   const char *label, pl_err_t *err)
{
	char c[PL_CLIP_BUF];

	if ((unsigned)cls >= TOPO_NLINKS)
		return pl_err_set(err, "%s: no such link class", pl_clip_path(label, c, sizeof(c)));
	if (!(r->busbw_max > 0))
		return pl_err_set(err, "%s: no positive bus bandwidth in the file",
				  pl_clip_path(label, c, sizeof(c)));
	m->link[cls].gbps = r->busbw_max;
	m->link[cls].measured = true;
	snprintf(m->link[cls].source, sizeof(m->link[cls].source),
		 "all_reduce_perf busbw at %ld bytes, %d ranks on %d nodes", r->max_bytes, r->nranks,
		 r->nnodes);
	return 0;
}

enum topo_link
topo_type_intra_class(const struct topo_nodetype *t)
{
	if (t && t->ngpus > 0 && topo_nodetype_islands(t) == 0)
		return TOPO_LINK_PCIE;
	return TOPO_LINK_NVLINK;
}

enum topo_link
topo_intra_class(const struct topo_map *m)
{
	int k, gpus = 0;

	if (m->link[TOPO_LINK_NVLINK].measured)
		return TOPO_LINK_NVLINK;
	if (m->link[TOPO_LINK_PCIE].measured)
		return TOPO_LINK_PCIE;
	for (k = 0; k < m->ntypes; k++) {
		if (m->types[k].ngpus > 0 && topo_nodetype_islands(&m->types[k]) > 0)
			return TOPO_LINK_NVLINK;
		gpus += m->types[k].ngpus;
	}
	return gpus > 0 ? TOPO_LINK_PCIE : TOPO_LINK_NVLINK;
}

/* The group node i measures "leaf" inside: its leaf switch, else its
 * block (after the switches), else -1. */
static long
leaf_group(const struct topo_map *m, long i)
{
	const struct topo_node *n = &m->nodes[i];

	if (n->sw >= 0)
		return n->sw;
	return n->block >= 0 ? m->nswitches + n->block : -1;
}

/* The lowest switch above both leaves a and b (a != b), or -1 when their
 * trees never join.  *level gets its level. */
static int
join_switch(const struct topo_map *m, int a, int b, int *level)
{
	int x, y, hops = 0;

	for (x = m->switches[a].parent; x >= 0 && hops < 1000; x = m->switches[x].parent, hops++)
		for (y = m->switches[b].parent; y >= 0; y = m->switches[y].parent)
			if (x == y) {
				*level = m->switches[x].level;
				return x;
			}
	return -1;
}

static long
cand_at(const long *cand, long k)
{
	return cand ? cand[k] : k;
}

/* The leaf run: the first two candidates in one group. */
static void
leaf_run(const struct topo_map *m, const long *cand, long ncand, struct topo_bwrun *r)
{
	long *first = NULL, k, ngroups = (long)m->nswitches + m->nblocks, nvl = 0;

	r->cls = TOPO_LINK_LEAF;
	first = malloc((size_t)(ngroups + 1) * sizeof(*first));
	if (!first) {
		snprintf(r->why, sizeof(r->why), "out of memory");
		return;
	}
	for (k = 0; k < ngroups; k++)
		first[k] = -1;
	for (k = 0; k < ncand; k++) {
		long i = cand_at(cand, k), g = leaf_group(m, i);

		/* Inside an NVLink block nodes talk over NVLink, which the
		 * intra-node run measures: the leaf class is not there. */
		if (g < 0 || (g >= m->nswitches && m->blocks[g - m->nswitches].nvlink)) {
			nvl += g >= 0;
			continue;
		}
		if (first[g] < 0 || first[g] == i) {
			first[g] = i;	/* a node listed twice is one node */
			continue;
		}
		r->nnodes = 2;
		r->node[0] = first[g];
		r->node[1] = i;
		break;
	}
	if (!r->nnodes)
		snprintf(r->why, sizeof(r->why), nvl ?
			 "nodes of one NVLink block talk over NVLink (the intra-node run measures it), and no leaf switch or network block holds two of the nodes" :
			 ngroups ? "no leaf switch or block holds two of the nodes" :
			 "the map has no switches or blocks");
	free(first);
}

/* Leaf switches and blocks. */
static long
leaf_groups(const struct topo_map *m)
{
	long n = m->nblocks;
	int k;

	for (k = 0; k < m->nswitches; k++)
		n += m->switches[k].level == 0;
	return n;
}

/* The spine run from node a: the candidate whose leaf joins a's lowest. */
static void
spine_run(const struct topo_map *m, const long *cand, long ncand, long a, struct topo_bwrun *r)
{
	long k, best = -1;
	int best_level = 0, best_via = -1, ga = (int)leaf_group(m, a);

	r->cls = TOPO_LINK_SPINE;
	r->via = -1;
	for (k = 0; ga >= 0 && k < ncand; k++) {
		long i = cand_at(cand, k), g = leaf_group(m, i);
		int level = 0, via;

		if (g < 0 || g == ga)
			continue;
		if (ga >= m->nswitches || g >= m->nswitches) {
			/* Blocks: any two blocks are joined by the network above them. */
			if (ga < m->nswitches || g < m->nswitches)
				continue;
			best = i;
			break;
		}
		via = join_switch(m, ga, (int)g, &level);
		if (via >= 0 && (best < 0 || level < best_level)) {
			best = i;
			best_level = level;
			best_via = via;
		}
	}
	if (best < 0) {
		if (ga < 0)
			snprintf(r->why, sizeof(r->why), "the map has no switches or blocks");
		else if (leaf_groups(m) <= 1)
			snprintf(r->why, sizeof(r->why), "the map has one leaf (%s) and no spine",
				 ga < m->nswitches ? m->switches[ga].name : m->blocks[ga - m->nswitches].name);
		else
			snprintf(r->why, sizeof(r->why),
				 "no node under another leaf that a switch above %s reaches",
				 ga < m->nswitches ? m->switches[ga].name : m->blocks[ga - m->nswitches].name);
		return;
	}
	r->nnodes = 2;
	r->node[0] = a;
	r->node[1] = best;
	r->via = best_via;
}

int
topo_bwtest_runs(const struct topo_map *m, const long *cand, long ncand,
		 struct topo_bwrun runs[TOPO_BW_NRUNS], pl_err_t *err)
{
	long a, k;

	memset(runs, 0, TOPO_BW_NRUNS * sizeof(*runs));
	for (k = 0; k < TOPO_BW_NRUNS; k++)
		runs[k].via = -1;
	if (!cand)
		ncand = m->nnodes;
	if (ncand <= 0)
		return pl_err_set(err, "no nodes to measure on");
	leaf_run(m, cand, ncand, &runs[TOPO_BW_LEAF]);
	/* Without a leaf pair, the first node under any leaf still can reach
	 * another leaf. */
	a = runs[TOPO_BW_LEAF].nnodes ? runs[TOPO_BW_LEAF].node[0] : -1;
	for (k = 0; a < 0 && k < ncand; k++)
		if (leaf_group(m, cand_at(cand, k)) >= 0)
			a = cand_at(cand, k);
	if (a < 0)
		a = cand_at(cand, 0);
	runs[TOPO_BW_INTRA].cls = topo_type_intra_class(topo_node_type(m, a));
	runs[TOPO_BW_INTRA].nnodes = 1;
	runs[TOPO_BW_INTRA].node[0] = a;
	spine_run(m, cand, ncand, a, &runs[TOPO_BW_SPINE]);
	return 0;
}
