/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reader for the text of `nvidia-smi topo -m`: a header naming the GPU and
 * NIC columns and then the affinity columns, one row per device with one cell
 * per device column (X, NV<n>, PIX, PXB, PHB, NODE, SYS), a legend, and on
 * newer drivers a "NIC Legend" that names NIC0, NIC1, ...  Pastes from
 * issues and READMEs mix tabs and spaces, pad the X cell unevenly and keep
 * the underline codes of the header without their ESC byte, so cells are
 * found by splitting on blanks and counting, never by character position.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"
#include "topo_util.h"

/* Real output is a few kB; the cap only stops a wrong file from eating memory. */
#define NVSMI_MAX_BYTES (4L << 20)
#define NVSMI_MAX_COLS 1024

/* Cell codes, closest first; NV<n> is kept apart since it is not PCIe. */
enum rel {
	REL_X = 0,
	REL_PIX,
	REL_PXB,
	REL_PHB,
	REL_NODE,
	REL_SYS,
	REL_NV,
	REL_NONE		/* no row read yet */
};

enum aff {
	AFF_CPU,
	AFF_NUMA,
	AFF_GPUNUMA
};

struct legend {
	int nic;		/* the k of NICk */
	char name[TOPO_NAME];
};

struct nvsmi {
	const char *label;
	pl_err_t *err;
	int ncols;		/* device columns: GPUs first, then NICs */
	char (*col)[TOPO_NAME];
	int *nicnum;		/* k for a NICk column, else -1 */
	int ngpus;
	int naff;
	enum aff aff[8];
	enum rel *rel;		/* ncols x ncols, row-major */
	bool *seen;		/* a row was read for this column */
	int *numa;		/* per GPU, from NUMA Affinity */
	struct legend *legend;
	int nlegend;
	char clip[PL_CLIP_BUF];	/* an input echoed in a message (nv_clip) */
	char label_buf[PL_CLIP_BUF];	/* the label, clipped */
};

/* Input text fit to echo in a message (pl_clip). */
static const char *
nv_clip(struct nvsmi *p, const char *s)
{
	return pl_clip(s, p->clip, sizeof(p->clip));
}

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Drop terminal underline/reset codes such as ESC[4m and ESC[0m, and the
 * "[4m"/"[0m" left behind when a paste lost the ESC byte.  A '[' that does
 * not start such a code is kept.
 */
static void
strip_ansi(char *s)
{
	char *w = s;

	while (*s) {
		size_t p = *s == '\033' ? 1 : 0;

		if (s[p] == '[') {
			size_t q = p + 1;

			while (is_digit(s[q]) || s[q] == ';')
				q++;
			if (s[q] == 'm' && q > p + 1) {
				s += q + 1;
				continue;
			}
		}
		if (*s == '\033') {
			s++;
			continue;
		}
		*w++ = *s++;
	}
	*w = '\0';
}

/* Split s in place on blanks; returns the count, or -1 past max tokens. */
static int
split_blanks(char *s, char **tok, int max)
{
	int n = 0;

	for (;;) {
		while (is_blank(*s))
			s++;
		if (!*s)
			return n;
		if (n == max)
			return -1;
		tok[n++] = s;
		while (*s && !is_blank(*s))
			s++;
		if (*s)
			*s++ = '\0';
	}
}

/* One matrix cell; -1 if it is not one nvidia-smi writes. */
static int
parse_cell(const char *s)
{
	int nv;

	if (strcmp(s, "X") == 0)
		return REL_X;
	if (strcmp(s, "PIX") == 0)
		return REL_PIX;
	if (strcmp(s, "PXB") == 0)
		return REL_PXB;
	if (strcmp(s, "PHB") == 0)
		return REL_PHB;
	if (strcmp(s, "NODE") == 0)
		return REL_NODE;
	/* SOC is what drivers before NODE existed printed for SYS. */
	if (strcmp(s, "SYS") == 0 || strcmp(s, "SOC") == 0)
		return REL_SYS;
	nv = topo_util_numbered(s, "NV");
	if (nv > 0)
		return REL_NV;
	return -1;
}

static int
find_col(const struct nvsmi *p, const char *name)
{
	int i;

	for (i = 0; i < p->ncols; i++)
		if (strcmp(p->col[i], name) == 0)
			return i;
	return -1;
}

static int
add_col(struct nvsmi *p, const char *name, int lineno)
{
	if (strlen(name) >= TOPO_NAME)
		return pl_err_set(p->err, "%s:%d: column heading '%s' is longer than %d characters",
				  p->label, lineno, nv_clip(p, name), TOPO_NAME - 1);
	if (find_col(p, name) >= 0)
		return pl_err_set(p->err, "%s:%d: column '%s' appears twice in the header",
				  p->label, lineno, nv_clip(p, name));
	strcpy(p->col[p->ncols], name);
	p->nicnum[p->ncols] = topo_util_numbered(name, "NIC");
	p->ncols++;
	return 0;
}

/*
 * The affinity headings are several words each; match one at tok[*i] and
 * step past it.
 */
static int
add_affinity(struct nvsmi *p, char **tok, int ntok, int *i, int lineno)
{
	const char *a = tok[*i];
	const char *b = *i + 1 < ntok ? tok[*i + 1] : "";
	const char *c = *i + 2 < ntok ? tok[*i + 2] : "";
	enum aff kind;
	int used;

	if (strcmp(a, "CPU") == 0 && strcmp(b, "Affinity") == 0) {
		kind = AFF_CPU;
		used = 2;
	} else if (strcmp(a, "NUMA") == 0 && strcmp(b, "Affinity") == 0) {
		kind = AFF_NUMA;
		used = 2;
	} else if (strcmp(a, "GPU") == 0 && strcmp(b, "NUMA") == 0 && strcmp(c, "ID") == 0) {
		kind = AFF_GPUNUMA;
		used = 3;
	} else {
		return pl_err_set(p->err, "%s:%d: unknown column heading '%s' after the device columns (accepted: CPU Affinity, NUMA Affinity, GPU NUMA ID)",
				  p->label, lineno, nv_clip(p, a));
	}
	if (p->naff == (int)(sizeof(p->aff) / sizeof(p->aff[0])))
		return pl_err_set(p->err, "%s:%d: too many affinity columns", p->label, lineno);
	p->aff[p->naff++] = kind;
	*i += used;
	return 0;
}

static bool
is_affinity_word(const char *s)
{
	return strcmp(s, "CPU") == 0 || strcmp(s, "NUMA") == 0 || strcmp(s, "GPU") == 0;
}

static int
parse_header(struct nvsmi *p, char **tok, int ntok, int lineno)
{
	int i = 0, k;
	size_t n = (size_t)ntok;

	p->col = calloc(n, sizeof(*p->col));
	p->nicnum = calloc(n, sizeof(*p->nicnum));
	p->seen = calloc(n, sizeof(*p->seen));
	p->numa = calloc(n, sizeof(*p->numa));
	p->rel = calloc(n * n, sizeof(*p->rel));
	if (!p->col || !p->nicnum || !p->seen || !p->numa || !p->rel)
		return pl_err_set(p->err, "%s: out of memory for a %d-column matrix", p->label, ntok);
	while (i < ntok && !is_affinity_word(tok[i])) {
		int g = topo_util_numbered(tok[i], "GPU");

		if (g >= 0) {
			if (g != p->ngpus || p->ncols != p->ngpus)
				return pl_err_set(p->err, "%s:%d: column '%s' out of order (expected GPU%d; GPU columns come first, numbered from 0)",
						  p->label, lineno, nv_clip(p, tok[i]), p->ngpus);
			p->ngpus++;
		}
		if (add_col(p, tok[i], lineno) < 0)
			return -1;
		i++;
	}
	while (i < ntok)
		if (add_affinity(p, tok, ntok, &i, lineno) < 0)
			return -1;
	for (k = 0; k < p->ncols * p->ncols; k++)
		p->rel[k] = REL_NONE;
	for (k = 0; k < p->ncols; k++)
		p->numa[k] = -1;
	return 0;
}

static const char *
rel_accepted(void)
{
	return "X, NV<n>, PIX, PXB, PHB, NODE, SYS, SOC";
}

static int
parse_row(struct nvsmi *p, int r, char **tok, int ntok, int lineno)
{
	int ncells = ntok - 1, j;

	if (p->seen[r])
		return pl_err_set(p->err, "%s:%d: second row for '%s'", p->label, lineno, p->col[r]);
	p->seen[r] = true;
	if (ncells < p->ncols)
		return pl_err_set(p->err, "%s:%d: row '%s' has %d cells, expected %d (one per column %s..%s)",
				  p->label, lineno, p->col[r], ncells, p->ncols,
				  p->col[0], p->col[p->ncols - 1]);
	if (ncells > p->ncols + p->naff)
		return pl_err_set(p->err, "%s:%d: row '%s' has %d cells, expected at most %d (%d device columns and %d affinity columns)",
				  p->label, lineno, p->col[r], ncells, p->ncols + p->naff,
				  p->ncols, p->naff);
	for (j = 0; j < p->ncols; j++) {
		int c = parse_cell(tok[1 + j]);

		if (c < 0)
			return pl_err_set(p->err, "%s:%d: row '%s', column '%s': unknown cell '%s' (accepted: %s)",
					  p->label, lineno, p->col[r], p->col[j], nv_clip(p, tok[1 + j]),
					  rel_accepted());
		if ((c == REL_X) != (j == r))
			return pl_err_set(p->err, "%s:%d: row '%s', column '%s': '%s' where %s expected (X marks where a row meets its own column; are cells shifted?)",
					  p->label, lineno, p->col[r], p->col[j], nv_clip(p, tok[1 + j]),
					  j == r ? "X is" : "a link is");
		p->rel[r * p->ncols + j] = (enum rel)c;
	}
	for (j = p->ncols; j < ncells; j++)
		if (r < p->ngpus && p->aff[j - p->ncols] == AFF_NUMA)
			p->numa[r] = topo_util_numbered(tok[1 + j], "");
	return 0;
}

/* "NIC3: mlx5_3" in the NIC Legend. */
static int
parse_legend(struct nvsmi *p, char **tok, int ntok, int lineno)
{
	size_t len = strlen(tok[0]);
	struct legend *l;
	char num[16];
	int k;

	if (ntok != 2 || len < 5 || len >= sizeof(num) || tok[0][len - 1] != ':')
		return 0;
	memcpy(num, tok[0], len - 1);
	num[len - 1] = '\0';
	k = topo_util_numbered(num, "NIC");
	if (k < 0)
		return 0;
	if (strlen(tok[1]) >= TOPO_NAME)
		return pl_err_set(p->err, "%s:%d: NIC name '%s' is longer than %d characters",
				  p->label, lineno, nv_clip(p, tok[1]), TOPO_NAME - 1);
	l = realloc(p->legend, (size_t)(p->nlegend + 1) * sizeof(*l));
	if (!l)
		return pl_err_set(p->err, "%s: out of memory", p->label);
	p->legend = l;
	l[p->nlegend].nic = k;
	strcpy(l[p->nlegend].name, tok[1]);
	p->nlegend++;
	return 0;
}

/* Walk the lines: find the header, then rows and legend entries. */
static int
parse_lines(struct nvsmi *p, char *text)
{
	char **tok = NULL;
	char *line = text;
	int lineno = 0, rv = -1;
	bool header = false;

	tok = malloc((NVSMI_MAX_COLS + 16) * sizeof(*tok));
	if (!tok) {
		pl_err_set(p->err, "%s: out of memory", p->label);
		goto out;
	}
	while (line) {
		char *next = strchr(line, '\n');
		int ntok, r;

		if (next)
			*next++ = '\0';
		lineno++;
		strip_ansi(line);
		ntok = split_blanks(line, tok, NVSMI_MAX_COLS + 16);
		if (ntok < 0) {
			pl_err_set(p->err, "%s:%d: more than %d columns", p->label, lineno,
				   NVSMI_MAX_COLS);
			goto out;
		}
		line = next;
		if (ntok == 0)
			continue;
		if (!header) {
			bool gpu0 = false, x = false;
			int i;

			/* The header names GPU0; a row names it too but also has an X. */
			for (i = 0; i < ntok; i++) {
				gpu0 |= strcmp(tok[i], "GPU0") == 0;
				x |= strcmp(tok[i], "X") == 0;
			}
			if (gpu0 && !x) {
				if (parse_header(p, tok, ntok, lineno) < 0)
					goto out;
				header = true;
			}
			continue;
		}
		r = find_col(p, tok[0]);
		if (r >= 0) {
			if (parse_row(p, r, tok, ntok, lineno) < 0)
				goto out;
		} else if (parse_legend(p, tok, ntok, lineno) < 0) {
			goto out;
		}
	}
	if (!header) {
		pl_err_set(p->err, "%s: no `nvidia-smi topo -m` header (a line of column names starting with GPU0) found",
			   p->label);
		goto out;
	}
	rv = 0;
out:
	free(tok);
	return rv;
}

/* Closeness for topo_util_pick_nics(): PIX beats PXB beats PHB beats NODE beats SYS. */
static int
rel_score(enum rel r)
{
	return r >= REL_PIX && r <= REL_SYS ? REL_SYS + 1 - (int)r : -1;
}

static int
fill(struct topo_nodetype *t, const struct nvsmi *p)
{
	int nn = p->ncols - p->ngpus, g, n, l;
	struct topo_util_fill f;

	for (g = 0; g < p->ngpus; g++)
		if (!p->seen[g])
			return pl_err_set(p->err, "%s: no row for column %s (truncated paste?)",
					  p->label, p->col[g]);
	if (topo_util_fill_begin(t, p->ngpus, nn, p->ngpus, &f, p->label, p->err) < 0)
		return -1;
	for (n = 0; n < nn; n++) {
		struct topo_nic *nic = &t->nics[n];
		int c = p->ngpus + n, best = REL_NONE;

		if (p->nicnum[c] < 0)
			strcpy(nic->name, p->col[c]);
		for (l = 0; l < p->nlegend; l++)
			if (p->nicnum[c] >= 0 && p->legend[l].nic == p->nicnum[c])
				strcpy(nic->name, p->legend[l].name);
		/* NODE or closer means the NIC hangs off the GPU's NUMA node. */
		for (g = 0; g < p->ngpus; g++) {
			enum rel r = p->rel[g * p->ncols + c];

			if (r >= REL_PIX && r <= REL_NODE && (int)r < best && p->numa[g] >= 0) {
				best = r;
				nic->numa = p->numa[g];
			}
		}
	}
	for (g = 0; g < p->ngpus; g++) {
		t->gpus[g].numa = p->numa[g];
		for (n = 0; n < nn; n++)
			f.score[g * nn + n] = rel_score(p->rel[g * p->ncols + p->ngpus + n]);
	}
	/* Either row saying NV<n> is enough: pastes are not always symmetric. */
	for (g = 0; g < p->ngpus; g++)
		for (l = 0; l < p->ngpus; l++)
			if (l != g && (p->rel[g * p->ncols + l] == REL_NV ||
				       p->rel[l * p->ncols + g] == REL_NV)) {
				topo_util_join(f.up, g, l);
				f.linked[g] = f.linked[l] = true;
			}
	topo_util_fill_end(t, &f);
	return 0;
}

/*
 * Fill *t (zeroed by the caller) from the text of `nvidia-smi topo -m`;
 * label names the text in messages.  GPUs are numbered by their GPUk
 * columns; islands join GPUs linked by NV<n> cells; NICs come from the NIC
 * columns, named by the NIC Legend or by the heading itself.  Returns 0, or
 * -1 with err naming label:line; *t is left empty on error.
 */
int
topo_read_nvsmi_text(struct topo_nodetype *t, const char *text, const char *label,
		     pl_err_t *err)
{
	struct nvsmi p;
	char *copy = NULL;
	int rv = -1;

	memset(&p, 0, sizeof(p));
	p.label = pl_clip_path(label ? label : "nvidia-smi topo -m", p.label_buf, sizeof(p.label_buf));
	p.err = err;
	copy = strdup(text ? text : "");
	if (!copy) {
		pl_err_set(err, "%s: out of memory", p.label);
		goto out;
	}
	if (parse_lines(&p, copy) < 0)
		goto out;
	if (fill(t, &p) < 0) {
		topo_nodetype_clear(t);
		goto out;
	}
	rv = 0;
out:
	free(copy);
	free(p.col);
	free(p.nicnum);
	free(p.seen);
	free(p.numa);
	free(p.rel);
	free(p.legend);
	return rv;
}

/* topo_read_nvsmi_text() on the contents of a file. */
int
topo_read_nvsmi(struct topo_nodetype *t, const char *path, pl_err_t *err)
{
	char *text = NULL, c[PL_CLIP_BUF];
	size_t len;
	int rv = -1;

	text = topo_util_read_file(path, NVSMI_MAX_BYTES, "`nvidia-smi topo -m` output", &len,
				   err);
	if (!text)
		goto out;
	if (strlen(text) != len) {
		pl_err_set(err, "%s: holds NUL bytes; not `nvidia-smi topo -m` text",
			   pl_clip_path(path, c, sizeof(c)));
		goto out;
	}
	rv = topo_read_nvsmi_text(t, text, path, err);
out:
	free(text);
	return rv;
}
