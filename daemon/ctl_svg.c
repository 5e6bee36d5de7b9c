/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An SVG of a placement for design reviews: one row per node (labelled with
 * its leaf switch), one cell per GPU, filled by TP group, labelled with the
 * rank, PP stage and DP replica.  Plain SVG 1.1, no script, no fonts beyond
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

/* A colour per TP group: golden-angle hues keep neighbours apart. */
static void
group_colour(long g, char *buf, size_t size)
{
	double h = (double)((g * 137508L) % 360000L) / 1000.0;

	snprintf(buf, size, "hsl(%.0f,65%%,%d%%)", h, g % 2 ? 72 : 82);
}

static void
xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

int
ctl_svg_write(const char *path, const struct pl_layout *l, const struct topo_map *m,
	      const struct place_node *nodes, long nnodes, const struct place_result *r)
{
	long i, maxg = 1;
	FILE *f = NULL;
	char spec[256], col[48];
	int rv = -1;

	for (i = 0; i < nnodes; i++)
		if (nodes[i].ntasks > maxg)
			maxg = nodes[i].ntasks;
	f = fopen(path, "w");
	if (!f) {
		ctl_error("--svg %s: %s", path, strerror(errno));
		goto out;
	}
	layout_format(l, spec, sizeof(spec));
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%ld\" height=\"%ld\" "
		"font-family=\"sans-serif\">\n",
		LABEL_W + maxg * CELL_W + 20, TOP + nnodes * CELL_H + 40);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"10\" y=\"24\" font-size=\"16\" font-weight=\"bold\">");
	xml_text(f, spec);
	fprintf(f, " on %ld nodes, %ld GPUs</text>\n", nnodes, r->ntasks);
	fprintf(f, "<text x=\"10\" y=\"46\" font-size=\"12\">colour = TP group; "
		"cells: rank, pp stage, dp replica; cross-switch %.3g GB/step "
		"(Slurm block order %.3g GB)</text>\n",
		r->cost.cross_switch_bytes / 1e9, r->baseline.cross_switch_bytes / 1e9);
	for (i = 0; i < nnodes; i++) {
		long mi = topo_find_node(m, nodes[i].name);
		const struct topo_node *tn = mi >= 0 ? &m->nodes[mi] : NULL;
		long y = TOP + i * CELL_H;

		fprintf(f, "<text x=\"10\" y=\"%ld\" font-size=\"13\" font-weight=\"bold\">", y + 24);
		xml_text(f, nodes[i].name);
		fprintf(f, "</text>\n");
		if (tn && (tn->sw >= 0 || tn->block >= 0)) {
			fprintf(f, "<text x=\"10\" y=\"%ld\" font-size=\"11\" fill=\"#555\">", y + 42);
			xml_text(f, tn->sw >= 0 ? m->switches[tn->sw].name : m->blocks[tn->block].name);
			fprintf(f, "</text>\n");
		}
	}
	for (i = 0; i < r->ntasks; i++) {
		const struct place_task *t = &r->tasks[i];
		long x = LABEL_W + t->local_id * CELL_W, y = TOP + t->node * CELL_H;
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
	fprintf(f, "</svg>\n");
	if (fclose(f) != 0) {
		f = NULL;
		ctl_error("--svg %s: %s", path, strerror(errno));
		goto out;
	}
	f = NULL;
	rv = 0;
out:
	if (f)
		fclose(f);
	return rv;
}
