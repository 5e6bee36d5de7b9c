/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An SVG of a placement for design reviews: one row per node, labelled with
 * its leaf switch and grouped by it (a rule between groups), one cell per
 * GPU, filled by TP group and labelled with the rank, PP stage and DP
 * replica.  Plain SVG 1.1, no script, no fonts beyond
 * the generic families, so it pastes into any document.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

#define CELL_W 92
#define CELL_H 58
#define LABEL_W 170
#define TOP 64

/* Rows go in switch (or block) order so a leaf's nodes sit together. */
static const struct topo_map *row_map;
static const struct place_node *row_nodes;

static long
row_group(long i)
{
	long mi = topo_find_node(row_map, row_nodes[i].name);

	if (mi < 0)
		return -1;
	if (row_map->nodes[mi].sw >= 0)
		return row_map->nodes[mi].sw;
	return row_map->nodes[mi].block >= 0 ? row_map->nswitches + row_map->nodes[mi].block : -1;
}

static int
row_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b, gx = row_group(x), gy = row_group(y);

	if (gx != gy)
		return gx < gy ? -1 : 1;
	return (x > y) - (x < y);
}

/* A colour per TP group: golden-angle hues keep neighbours apart. */
static void
group_colour(long g, char *buf, size_t size)
{
	double h = (double)((g * 137508L) % 360000L) / 1000.0;

	snprintf(buf, size, "hsl(%.0f,65%%,%d%%)", h, g % 2 ? 72 : 82);
}

/* The length of the valid UTF-8 sequence at s, or 0 (overlong forms are
 * not looked for: they are still well-formed XML). */
static int
utf8_len(const unsigned char *s)
{
	int n = *s >= 0xf0 && *s <= 0xf4 ? 4 : *s >= 0xe0 ? 3 : *s >= 0xc2 && *s < 0xe0 ? 2 : 0;
	int k;

	for (k = 1; k < n; k++)
		if ((s[k] & 0xc0) != 0x80)
			return 0;
	return n;
}

void
ctl_xml_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	while (*p) {
		switch (*p) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if (*p >= 0x80 && (n = utf8_len(p)) > 0) {
				fwrite(p, 1, (size_t)n, f);
				p += n;
				continue;
			}
			/* XML 1.0 has no place for control bytes or broken UTF-8. */
			fputc(*p < 0x20 || *p >= 0x7f ? '?' : *p, f);
		}
		p++;
	}
}

int
ctl_svg_write(const char *path, const struct pl_layout *l, const struct topo_map *m,
	      const struct place_node *nodes, long nnodes, const struct place_result *r)
{
	long i, maxg = 1, width, *row = NULL, *order = NULL;
	FILE *f = NULL;
	char spec[256], col[48];
	int rv = -1;

	for (i = 0; i < nnodes; i++)
		if (nodes[i].ntasks > maxg)
			maxg = nodes[i].ntasks;
	row = calloc((size_t)nnodes, sizeof(*row));
	order = calloc((size_t)nnodes, sizeof(*order));
	if (!row || !order) {
		ctl_error("--svg %s: out of memory", ctl_clip_path(path));
		goto out;
	}
	for (i = 0; i < nnodes; i++)
		order[i] = i;
	row_map = m;
	row_nodes = nodes;
	qsort(order, (size_t)nnodes, sizeof(*order), row_cmp);
	for (i = 0; i < nnodes; i++)
		row[order[i]] = i;
	f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (!f) {
		ctl_error("--svg %s: %s", ctl_clip_path(path), strerror(errno));
		goto out;
	}
	layout_format(l, spec, sizeof(spec));
	/* Wide enough for the bold title line too (about 10 px a character). */
	width = LABEL_W + maxg * CELL_W + 20;
	if (((long)strlen(spec) + 32) * 10 > width)
		width = ((long)strlen(spec) + 32) * 10;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%ld\" height=\"%ld\" "
		"font-family=\"sans-serif\">\n",
		width, TOP + nnodes * CELL_H + 40);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"10\" y=\"24\" font-size=\"16\" font-weight=\"bold\">");
	ctl_xml_text(f, spec);
	fprintf(f, " on %ld nodes, %ld GPUs</text>\n", nnodes, r->ntasks);
	fprintf(f, "<text x=\"10\" y=\"46\" font-size=\"12\">colour = TP group; "
		"cells: rank, pp stage, dp replica; cross-switch %.3g GB/step "
		"(Slurm block order %.3g GB)</text>\n",
		r->cost.cross_switch_bytes / 1e9, r->baseline.cross_switch_bytes / 1e9);
	for (i = 0; i < nnodes; i++) {
		long mi = topo_find_node(m, nodes[i].name);
		const struct topo_node *tn = mi >= 0 ? &m->nodes[mi] : NULL;
		long y = TOP + row[i] * CELL_H;

		/* A rule above the first node of each switch or block. */
		if (row[i] > 0 && row_group(order[row[i] - 1]) != row_group(i))
			fprintf(f, "<line x1=\"6\" y1=\"%ld\" x2=\"%ld\" y2=\"%ld\" stroke=\"#888\" "
				"stroke-dasharray=\"4 3\"/>\n", y + 1, width - 6, y + 1);

		fprintf(f, "<text x=\"10\" y=\"%ld\" font-size=\"13\" font-weight=\"bold\">", y + 24);
		ctl_xml_text(f, nodes[i].name);
		fprintf(f, "</text>\n");
		if (tn && (tn->sw >= 0 || tn->block >= 0)) {
			fprintf(f, "<text x=\"10\" y=\"%ld\" font-size=\"11\" fill=\"#555\">", y + 42);
			ctl_xml_text(f, tn->sw >= 0 ? m->switches[tn->sw].name : m->blocks[tn->block].name);
			fprintf(f, "</text>\n");
		}
	}
	for (i = 0; i < r->ntasks; i++) {
		const struct place_task *t = &r->tasks[i];
		long x = LABEL_W + t->local_id * CELL_W, y = TOP + row[t->node] * CELL_H;
		long tpg = t->rank / l->size[PL_TP];

		group_colour(tpg, col, sizeof(col));
		fprintf(f, "<g><title>rank %ld: node %s GPU %d, tp %ld cp %ld ep %ld dp %ld pp %ld</title>"
			"<rect x=\"%ld\" y=\"%ld\" width=\"%d\" height=\"%d\" rx=\"6\" fill=\"%s\" "
			"stroke=\"#333\"/>\n",
			t->rank, nodes[t->node].name, t->local_rank, t->co.c[PL_TP], t->co.c[PL_CP],
			t->co.c[PL_EP], t->co.c[PL_DP], t->co.c[PL_PP], x, y + 4, CELL_W - 6,
			CELL_H - 8, col);
		fprintf(f, "<text x=\"%ld\" y=\"%ld\" font-size=\"13\" font-weight=\"bold\">r%ld</text>"
			"<text x=\"%ld\" y=\"%ld\" font-size=\"11\">pp%ld dp%ld</text>"
			"<text x=\"%ld\" y=\"%ld\" font-size=\"10\" fill=\"#333\">gpu%d tp%ld</text></g>\n",
			x + 6, y + 20, t->rank, x + 6, y + 35, t->co.c[PL_PP], t->co.c[PL_DP],
			x + 6, y + 48, t->local_rank, t->co.c[PL_TP]);
	}
	rv = ctl_svg_end(f, path);
	f = NULL;
out:
	if (f && f != stdout)
		fclose(f);
	free(row);
	free(order);
	return rv;
}

int
ctl_svg_end(FILE *f, const char *path)
{
	bool to_stdout = strcmp(path, "-") == 0;
	bool bad;
	int e;

	fprintf(f, "</svg>\n");
	errno = 0;
	bad = ferror(f) != 0;
	if (to_stdout)
		bad |= fflush(f) != 0;
	else
		bad |= fclose(f) != 0;
	e = errno;
	if (bad) {
		ctl_error("--svg %s: %s", ctl_clip_path(path), strerror(e ? e : EIO));
		return -1;
	}
	return 0;
}
