/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reader for NCCL topology XML (the NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE
 * format): <system> holds <cpu numaid=..> elements, which hold nested
 * <pci busid=.. class=..> elements (bridges and switches, then devices),
 * a GPU as <gpu dev=..> under its <pci> with <nvlink target=.. count=..
 * tclass=..> children, and a NIC as <nic><net name=.. speed=.. port=..>.
 * Hand-written files often give only the <pci> elements with a class, so a
 * GPU-class or NIC-class <pci> with no <gpu>/<nic> inside counts too.
 *
 * The format is a small XML subset, so this file carries its own tokenizer
 * rather than a dependency: elements, attributes in either quote, comments,
 * the XML declaration, and the five predefined entities.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"
#include "topo_util.h"

#define NCCL_MAX_BYTES (16L << 20)
#define NCCL_MAX_DEPTH 32
#define NCCL_MAX_ATTRS 32
#define NCCL_MAX_NAME 64
#define NCCL_MAX_VALUE 256
#define NCCL_MAX_DEV 65536

/* PCI class codes as NCCL writes them: base class in the top byte. */
#define CLASS_DISPLAY 0x03
#define CLASS_NETWORK 0x02
#define CLASS_NVSWITCH 0x068000
#define CLASS_CPU_LINK 0x068001

/* ---- tokenizer ---- */

struct xml_attr {
	char name[NCCL_MAX_NAME];
	char value[NCCL_MAX_VALUE];
};

struct xml_tag {
	char name[NCCL_MAX_NAME];
	bool close;		/* </name> */
	bool empty;		/* <name .../> */
	int nattr;
	struct xml_attr attr[NCCL_MAX_ATTRS];
	int line;
};

struct xml {
	const char *label;
	const char *p;
	int line;
	pl_err_t *err;
};

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool
is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == ':';
}

/* Step over text up to the terminator; -1 if the input ends first. */
static int
skip_past(struct xml *x, const char *end)
{
	size_t n = strlen(end);

	while (*x->p) {
		if (strncmp(x->p, end, n) == 0) {
			x->p += n;
			return 0;
		}
		if (*x->p == '\n')
			x->line++;
		x->p++;
	}
	return -1;
}

static void
skip_space(struct xml *x)
{
	while (is_space(*x->p)) {
		if (*x->p == '\n')
			x->line++;
		x->p++;
	}
}

static int
read_name(struct xml *x, char *dst, const char *what)
{
	size_t n = 0;

	while (is_name_char(*x->p)) {
		if (n + 1 >= NCCL_MAX_NAME)
			return pl_err_set(x->err, "%s:%d: %s name longer than %d characters",
					  x->label, x->line, what, NCCL_MAX_NAME - 1);
		dst[n++] = *x->p++;
	}
	dst[n] = '\0';
	if (n == 0) {
		char c[PL_CLIP_BUF];

		return pl_err_set(x->err, "%s:%d: expected a %s name, found '%s'",
				  x->label, x->line, what, *x->p ? pl_clipn(x->p, 1, c, sizeof(c)) : "?");
	}
	return 0;
}

/* Append one character, decoding &amp; &lt; &gt; &quot; &apos; and &#N;. */
static int
read_char(struct xml *x, char *dst, size_t *n)
{
	static const struct {
		const char *ent;
		char c;
	} ents[] = {
		{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' },
		{ "&quot;", '"' }, { "&apos;", '\'' },
	};
	char c = *x->p;
	size_t i;

	if (c == '&') {
		for (i = 0; i < sizeof(ents) / sizeof(ents[0]); i++) {
			size_t len = strlen(ents[i].ent);

			if (strncmp(x->p, ents[i].ent, len) == 0) {
				c = ents[i].c;
				x->p += len - 1;
				break;
			}
		}
		if (i == sizeof(ents) / sizeof(ents[0]) && x->p[1] == '#') {
			char *end;
			long v = strtol(x->p + 2, &end, 10);

			if (*end != ';' || v <= 0 || v > 127)
				return pl_err_set(x->err, "%s:%d: unsupported character reference (accepted: &amp; &lt; &gt; &quot; &apos; and &#1; to &#127;)",
						  x->label, x->line);
			c = (char)v;
			x->p = end;
		}
	}
	if (c == '\n')
		x->line++;
	if (*n + 1 >= NCCL_MAX_VALUE)
		return pl_err_set(x->err, "%s:%d: attribute value longer than %d characters",
				  x->label, x->line, NCCL_MAX_VALUE - 1);
	dst[(*n)++] = c;
	x->p++;
	return 0;
}

static int
read_attr(struct xml *x, struct xml_tag *tag)
{
	struct xml_attr *a;
	char quote;
	size_t n = 0;

	if (tag->nattr == NCCL_MAX_ATTRS)
		return pl_err_set(x->err, "%s:%d: <%s> has more than %d attributes",
				  x->label, x->line, tag->name, NCCL_MAX_ATTRS);
	a = &tag->attr[tag->nattr];
	if (read_name(x, a->name, "attribute") < 0)
		return -1;
	skip_space(x);
	if (*x->p != '=')
		return pl_err_set(x->err, "%s:%d: <%s>: attribute '%s' has no '=value'",
				  x->label, x->line, tag->name, a->name);
	x->p++;
	skip_space(x);
	quote = *x->p;
	if (quote != '"' && quote != '\'')
		return pl_err_set(x->err, "%s:%d: <%s>: value of '%s' is not quoted",
				  x->label, x->line, tag->name, a->name);
	x->p++;
	while (*x->p != quote) {
		if (!*x->p || *x->p == '<')
			return pl_err_set(x->err, "%s:%d: <%s>: value of '%s' is not closed",
					  x->label, x->line, tag->name, a->name);
		if (read_char(x, a->value, &n) < 0)
			return -1;
	}
	a->value[n] = '\0';
	x->p++;
	tag->nattr++;
	return 0;
}

/*
 * The next start or end tag; returns 1 with *tag filled, 0 at the end of
 * input, -1 on malformed input.  Text, comments, the declaration,
 * processing instructions and DOCTYPE are skipped.
 */
static int
next_tag(struct xml *x, struct xml_tag *tag)
{
	for (;;) {
		while (*x->p && *x->p != '<') {
			if (*x->p == '\n')
				x->line++;
			x->p++;
		}
		if (!*x->p)
			return 0;
		if (strncmp(x->p, "<!--", 4) == 0) {
			int line = x->line;

			x->p += 4;
			if (skip_past(x, "-->") < 0)
				return pl_err_set(x->err, "%s:%d: comment is never closed with -->",
						  x->label, line);
			continue;
		}
		if (strncmp(x->p, "<?", 2) == 0 || strncmp(x->p, "<!", 2) == 0) {
			int line = x->line;

			if (skip_past(x, x->p[1] == '?' ? "?>" : ">") < 0)
				return pl_err_set(x->err, "%s:%d: declaration is never closed",
						  x->label, line);
			continue;
		}
		break;
	}
	memset(tag, 0, sizeof(*tag));
	tag->line = x->line;
	x->p++;
	if (*x->p == '/') {
		tag->close = true;
		x->p++;
	}
	if (read_name(x, tag->name, "element") < 0)
		return -1;
	for (;;) {
		skip_space(x);
		if (*x->p == '>') {
			x->p++;
			return 1;
		}
		if (!tag->close && x->p[0] == '/' && x->p[1] == '>') {
			tag->empty = true;
			x->p += 2;
			return 1;
		}
		if (!*x->p)
			return pl_err_set(x->err, "%s:%d: <%s%s> is cut off at the end of the file",
					  x->label, tag->line, tag->close ? "/" : "", tag->name);
		if (tag->close)
			return pl_err_set(x->err, "%s:%d: </%s> has junk before '>'",
					  x->label, x->line, tag->name);
		if (read_attr(x, tag) < 0)
			return -1;
	}
}

static const char *
attr(const struct xml_tag *tag, const char *name)
{
	int i;

	for (i = 0; i < tag->nattr; i++)
		if (strcmp(tag->attr[i].name, name) == 0)
			return tag->attr[i].value;
	return NULL;
}

/* ---- the topology ---- */

enum elem {
	E_SYSTEM,
	E_CPU,
	E_PCI,
	E_GPU,
	E_NIC,
	E_OTHER
};

struct frame {
	enum elem kind;
	char name[NCCL_MAX_NAME];
	int id;			/* unique per element, for common ancestry */
	int numa;		/* E_CPU */
	char busid[TOPO_PCI];	/* E_PCI, lower case; "" if too long or absent */
	long cls;		/* E_PCI; -1 absent */
	bool has_gpu, has_net;	/* E_PCI: a <gpu> / <net> inside */
	int line;
};

struct link {
	char target[TOPO_PCI];
	long tclass;		/* -1 absent */
};

/* A GPU or NIC with where it sits. */
struct dev {
	int dev;		/* dev attribute; -1 absent */
	char busid[TOPO_PCI];
	int numa;
	int chain[NCCL_MAX_DEPTH];	/* ids of the enclosing cpu/pci elements, above its own pci */
	int nchain;
	/* NICs */
	char name[TOPO_NAME];
	int port;
	double gbps;
	/* GPUs */
	struct link *links;
	int nlinks;
	int line;
};

struct nccl {
	const char *label;	/* the path, clipped */
	char label_buf[PL_CLIP_BUF];
	pl_err_t *err;
	struct frame stack[NCCL_MAX_DEPTH];
	int depth;
	int next_id;
	struct dev *gpus;
	int ngpus, capgpus;
	struct dev *nics;
	int nnics, capnics;
};

static void
lower_busid(char *dst, const char *src)
{
	size_t i, n = strlen(src);

	if (n >= TOPO_PCI) {
		dst[0] = '\0';
		return;
	}
	for (i = 0; i <= n; i++)
		dst[i] = src[i] >= 'A' && src[i] <= 'Z' ? (char)(src[i] - 'A' + 'a') : src[i];
}

/* Whole-string integer in [lo, hi] with the given base; -1 error. */
static int
parse_long(const char *s, int base, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, base);
	if (end == s || *end || errno || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int
bad_attr(struct nccl *n, const struct xml_tag *tag, const char *name, const char *value,
	 const char *want)
{
	char c[PL_CLIP_BUF];

	return pl_err_set(n->err, "%s:%d: <%s %s=\"%s\">: expected %s",
			  n->label, tag->line, tag->name, name, pl_clip(value, c, sizeof(c)), want);
}

/* An optional integer attribute: *out stays as it was when absent. */
static int
int_attr(struct nccl *n, const struct xml_tag *tag, const char *name, int base,
	 long lo, long hi, long *out)
{
	const char *v = attr(tag, name);

	if (!v)
		return 0;
	if (parse_long(v, base, lo, hi, out) < 0) {
		char want[96];

		snprintf(want, sizeof(want), "%s from %ld to %ld",
			 base == 16 ? "a hex number" : "a number", lo, hi);
		return bad_attr(n, tag, name, v, want);
	}
	return 0;
}

static struct dev *
new_dev(struct nccl *n, struct dev **arr, int *len, int *cap, int line)
{
	struct dev *d;

	if (*len == *cap) {
		int want = *cap ? *cap * 2 : 8;

		if (want > 1 << 20 || !(d = realloc(*arr, (size_t)want * sizeof(*d)))) {
			pl_err_set(n->err, "%s:%d: out of memory (or too many devices)", n->label, line);
			return NULL;
		}
		*arr = d;
		*cap = want;
	}
	d = &(*arr)[(*len)++];
	memset(d, 0, sizeof(*d));
	d->dev = -1;
	d->numa = -1;
	d->line = line;
	return d;
}

/*
 * Where a device sits: its NUMA node, the bus id of its innermost <pci>, and
 * the chain of cpu/pci elements above that <pci>, which is what closeness
 * compares.
 */
static void
place_dev(struct nccl *n, struct dev *d)
{
	int i, pci = -1;

	for (i = n->depth - 1; i >= 0 && pci < 0; i--)
		if (n->stack[i].kind == E_PCI)
			pci = i;
	if (pci >= 0)
		strcpy(d->busid, n->stack[pci].busid);
	d->nchain = 0;
	for (i = 0; i < n->depth; i++) {
		if (n->stack[i].kind == E_CPU)
			d->numa = n->stack[i].numa;
		if (pci >= 0 && i >= pci)
			continue;
		if (n->stack[i].kind == E_CPU || n->stack[i].kind == E_PCI)
			d->chain[d->nchain++] = n->stack[i].id;
	}
}

static struct frame *
innermost_pci(struct nccl *n)
{
	int i;

	for (i = n->depth - 1; i >= 0; i--)
		if (n->stack[i].kind == E_PCI)
			return &n->stack[i];
	return NULL;
}

static int
open_gpu(struct nccl *n, const struct xml_tag *tag)
{
	struct frame *pci = innermost_pci(n);
	struct dev *d = new_dev(n, &n->gpus, &n->ngpus, &n->capgpus, tag->line);
	long dev = -1;

	if (!d)
		return -1;
	if (int_attr(n, tag, "dev", 10, 0, NCCL_MAX_DEV, &dev) < 0)
		return -1;
	d->dev = (int)dev;
	place_dev(n, d);
	if (pci)
		pci->has_gpu = true;
	return 0;
}

static int
add_nvlink(struct nccl *n, const struct xml_tag *tag)
{
	struct dev *g;
	struct link *l;
	const char *target = attr(tag, "target");
	long count = 1, tclass = -1;

	/* An nvlink outside a gpu says nothing about one of ours. */
	if (n->depth == 0 || n->stack[n->depth - 1].kind != E_GPU || n->ngpus == 0)
		return 0;
	if (!target)
		return pl_err_set(n->err, "%s:%d: <nvlink> has no target (the bus id of the far end)",
				  n->label, tag->line);
	if (int_attr(n, tag, "count", 10, 0, 1 << 20, &count) < 0 ||
	    int_attr(n, tag, "tclass", 16, 0, 0xffffff, &tclass) < 0)
		return -1;
	if (count == 0)
		return 0;
	g = &n->gpus[n->ngpus - 1];
	l = realloc(g->links, (size_t)(g->nlinks + 1) * sizeof(*l));
	if (!l)
		return pl_err_set(n->err, "%s:%d: out of memory", n->label, tag->line);
	g->links = l;
	lower_busid(l[g->nlinks].target, target);
	l[g->nlinks].tclass = tclass;
	g->nlinks++;
	return 0;
}

static int
add_net(struct nccl *n, const struct xml_tag *tag)
{
	struct frame *pci = innermost_pci(n);
	struct dev *d;
	const char *name = attr(tag, "name"), *speed = attr(tag, "speed");
	long dev = -1, port = 0;

	d = new_dev(n, &n->nics, &n->nnics, &n->capnics, tag->line);
	if (!d)
		return -1;
	if (int_attr(n, tag, "dev", 10, 0, NCCL_MAX_DEV, &dev) < 0 ||
	    int_attr(n, tag, "port", 10, 0, 1 << 16, &port) < 0)
		return -1;
	if (name && strlen(name) >= TOPO_NAME)
		return bad_attr(n, tag, "name", name, "a NIC name shorter than 64 characters");
	if (speed) {
		char *end;
		double mbps;

		errno = 0;
		mbps = strtod(speed, &end);
		if (end == speed || *end || errno || !(mbps >= 0 && mbps < 1e9))
			return bad_attr(n, tag, "speed", speed, "a speed in Mbit/s");
		d->gbps = mbps / 1000.0;
	}
	d->dev = (int)dev;
	d->port = (int)port;
	if (name)
		strcpy(d->name, name);
	place_dev(n, d);
	if (pci)
		pci->has_net = true;
	return 0;
}

/* A GPU- or NIC-class <pci> that had no <gpu> or <net> inside is one too. */
static int
close_pci(struct nccl *n, const struct frame *f)
{
	struct dev *d;
	long base = f->cls >= 0 ? (f->cls >> 16) & 0xff : -1;

	if (base == CLASS_DISPLAY && !f->has_gpu)
		d = new_dev(n, &n->gpus, &n->ngpus, &n->capgpus, f->line);
	else if (base == CLASS_NETWORK && !f->has_net)
		d = new_dev(n, &n->nics, &n->nnics, &n->capnics, f->line);
	else
		return 0;
	if (!d)
		return -1;
	/* place_dev() wants the <pci> itself on the stack. */
	n->depth++;
	place_dev(n, d);
	n->depth--;
	return 0;
}

static int
open_elem(struct nccl *n, const struct xml_tag *tag)
{
	struct frame *f;
	const char *v;

	if (n->depth == 0 && strcmp(tag->name, "system") != 0) {
		if (strcmp(tag->name, "graphs") == 0)
			return pl_err_set(n->err, "%s: this is an NCCL graph file (<graphs>), not a topology file (<system>)",
					  n->label);
		return pl_err_set(n->err, "%s:%d: root element is <%s>; expected <system> (an NCCL topology file)",
				  n->label, tag->line, tag->name);
	}
	if (n->depth == NCCL_MAX_DEPTH)
		return pl_err_set(n->err, "%s:%d: elements nest deeper than %d", n->label, tag->line,
				  NCCL_MAX_DEPTH);
	f = &n->stack[n->depth];
	memset(f, 0, sizeof(*f));
	strcpy(f->name, tag->name);
	f->id = n->next_id++;
	f->numa = -1;
	f->cls = -1;
	f->line = tag->line;
	if (n->depth == 0)
		f->kind = E_SYSTEM;
	else if (strcmp(tag->name, "cpu") == 0)
		f->kind = E_CPU;
	else if (strcmp(tag->name, "pci") == 0)
		f->kind = E_PCI;
	else if (strcmp(tag->name, "gpu") == 0)
		f->kind = E_GPU;
	else if (strcmp(tag->name, "nic") == 0)
		f->kind = E_NIC;
	else
		f->kind = E_OTHER;
	if (f->kind == E_CPU) {
		long numa = -1;

		if (int_attr(n, tag, "numaid", 10, 0, 1 << 20, &numa) < 0)
			return -1;
		f->numa = (int)numa;
	}
	if (f->kind == E_PCI) {
		if ((v = attr(tag, "busid")))
			lower_busid(f->busid, v);
		if (int_attr(n, tag, "class", 16, 0, 0xffffff, &f->cls) < 0)
			return -1;
	}
	/* Devices are placed from the stack as it is above their own element. */
	if (f->kind == E_GPU && open_gpu(n, tag) < 0)
		return -1;
	if (strcmp(tag->name, "nvlink") == 0 && add_nvlink(n, tag) < 0)
		return -1;
	if (strcmp(tag->name, "net") == 0 && add_net(n, tag) < 0)
		return -1;
	n->depth++;
	return 0;
}

static int
close_elem(struct nccl *n, const char *name, int line)
{
	struct frame *f;

	if (n->depth == 0)
		return pl_err_set(n->err, "%s:%d: </%s> closes nothing", n->label, line, name);
	f = &n->stack[n->depth - 1];
	if (strcmp(f->name, name) != 0)
		return pl_err_set(n->err, "%s:%d: </%s> closes <%s> opened at line %d",
				  n->label, line, name, f->name, f->line);
	n->depth--;
	if (f->kind == E_PCI)
		return close_pci(n, f);
	return 0;
}

static int
parse(struct nccl *n, const char *text)
{
	struct xml x = { n->label, text, 1, n->err };
	struct xml_tag *tag = malloc(sizeof(*tag));
	bool root_seen = false;
	int rv = -1, r;

	if (!tag)
		return pl_err_set(n->err, "%s: out of memory", n->label);
	while ((r = next_tag(&x, tag)) > 0) {
		if (!tag->close && n->depth == 0 && root_seen) {
			pl_err_set(n->err, "%s:%d: a second root element <%s> after </system>",
				   n->label, tag->line, tag->name);
			goto out;
		}
		if (tag->close) {
			if (close_elem(n, tag->name, tag->line) < 0)
				goto out;
			continue;
		}
		root_seen = true;
		if (open_elem(n, tag) < 0)
			goto out;
		if (tag->empty && close_elem(n, tag->name, tag->line) < 0)
			goto out;
	}
	if (r < 0)
		goto out;
	if (!root_seen) {
		pl_err_set(n->err, "%s: no elements; expected an NCCL topology (<system> ... </system>)",
			   n->label);
		goto out;
	}
	if (n->depth > 0) {
		pl_err_set(n->err, "%s: <%s> opened at line %d is never closed (truncated file?)",
			   n->label, n->stack[n->depth - 1].name, n->stack[n->depth - 1].line);
		goto out;
	}
	rv = 0;
out:
	free(tag);
	return rv;
}

/* ---- building the node type ---- */

static int
cmp_busid(const struct dev *a, const struct dev *b)
{
	return strcmp(a->busid, b->busid);
}

/* GPUs with a dev number by it, the others after them in bus order. */
static int
cmp_gpu(const void *pa, const void *pb)
{
	const struct dev *a = pa, *b = pb;

	if ((a->dev >= 0) != (b->dev >= 0))
		return a->dev >= 0 ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	return cmp_busid(a, b);
}

/* NICs by NCCL's net dev number, those without one after them in bus order. */
static int
cmp_nic(const void *pa, const void *pb)
{
	const struct dev *a = pa, *b = pb;
	int c;

	if ((a->dev >= 0) != (b->dev >= 0))
		return a->dev >= 0 ? -1 : 1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	c = cmp_busid(a, b);
	if (c)
		return c;
	return a->port - b->port;
}

/*
 * GPU numbers: dev where given (each once), and the lowest unused numbers in
 * bus order for GPUs listed only by class.
 */
static int
number_gpus(struct nccl *n)
{
	bool *used = NULL;
	int g, next = 0, rv = -1;

	if (n->ngpus == 0)
		return 0;
	qsort(n->gpus, (size_t)n->ngpus, sizeof(*n->gpus), cmp_gpu);
	used = calloc((size_t)NCCL_MAX_DEV + 1, sizeof(*used));
	if (!used)
		return pl_err_set(n->err, "%s: out of memory", n->label);
	for (g = 0; g < n->ngpus; g++) {
		struct dev *d = &n->gpus[g];

		if (d->dev < 0)
			continue;
		if (used[d->dev]) {
			pl_err_set(n->err, "%s:%d: <gpu dev=\"%d\"> appears twice", n->label, d->line,
				   d->dev);
			goto out;
		}
		used[d->dev] = true;
	}
	for (g = 0; g < n->ngpus; g++) {
		if (n->gpus[g].dev >= 0)
			continue;
		while (next <= NCCL_MAX_DEV && used[next])
			next++;
		if (next > NCCL_MAX_DEV) {
			pl_err_set(n->err, "%s: too many GPUs", n->label);
			goto out;
		}
		n->gpus[g].dev = next;
		used[next] = true;
	}
	qsort(n->gpus, (size_t)n->ngpus, sizeof(*n->gpus), cmp_gpu);
	rv = 0;
out:
	free(used);
	return rv;
}

static int
find_gpu_bus(const struct nccl *n, const char *busid)
{
	int g;

	if (!*busid)
		return -1;
	for (g = 0; g < n->ngpus; g++)
		if (strcmp(n->gpus[g].busid, busid) == 0)
			return g;
	return -1;
}

/* Islands: GPUs joined by nvlinks, directly or through the NVSwitches. */
static void
link_gpus(const struct nccl *n, int *up, bool *linked)
{
	int hub = n->ngpus, g, k;

	for (g = 0; g <= n->ngpus; g++)
		up[g] = g;
	for (g = 0; g < n->ngpus; g++) {
		const struct dev *d = &n->gpus[g];

		for (k = 0; k < d->nlinks; k++) {
			const struct link *l = &d->links[k];
			int peer = find_gpu_bus(n, l->target);

			/* Some VM images list a GPU's links as going to itself. */
			if (*d->busid && strcmp(l->target, d->busid) == 0)
				continue;
			if (l->tclass == CLASS_CPU_LINK)
				continue;
			if (peer >= 0) {
				topo_util_join(up, g, peer);
				linked[g] = linked[peer] = true;
			} else if (l->tclass < 0 || l->tclass == CLASS_NVSWITCH) {
				topo_util_join(up, g, hub);
				linked[g] = true;
			} else {
				/* A GPU this file does not list: linked, but to no one we know. */
				linked[g] = true;
			}
		}
	}
}

/* Shared cpu/pci ancestors; more is closer. */
static int
closeness(const struct dev *a, const struct dev *b)
{
	int i = 0;

	while (i < a->nchain && i < b->nchain && a->chain[i] == b->chain[i])
		i++;
	return i;
}

static int
fill(struct topo_nodetype *t, struct nccl *n)
{
	struct topo_util_fill f;
	int g, k;

	if (number_gpus(n) < 0)
		return -1;
	if (n->nnics > 0)
		qsort(n->nics, (size_t)n->nnics, sizeof(*n->nics), cmp_nic);
	/* One union-find node past the GPUs: the NVSwitch hub. */
	if (topo_util_fill_begin(t, n->ngpus, n->nnics, n->ngpus + 1, &f, n->label, n->err) < 0)
		return -1;
	for (k = 0; k < n->nnics; k++) {
		struct topo_nic *nic = &t->nics[k];
		const struct dev *d = &n->nics[k];

		strcpy(nic->name, d->name);
		nic->port = d->port;
		nic->numa = d->numa;
		strcpy(nic->pci, d->busid);
		nic->gbps = d->gbps;
	}
	for (g = 0; g < n->ngpus; g++) {
		struct topo_gpu *gpu = &t->gpus[g];
		const struct dev *d = &n->gpus[g];

		gpu->index = d->dev;
		gpu->numa = d->numa;
		strcpy(gpu->pci, d->busid);
		for (k = 0; k < n->nnics; k++)
			f.score[g * n->nnics + k] = closeness(d, &n->nics[k]);
	}
	link_gpus(n, f.up, f.linked);
	topo_util_fill_end(t, &f);
	return 0;
}

/*
 * Fill *t (zeroed by the caller) from an NCCL topology XML file.  GPUs come
 * from <gpu> elements and GPU-class <pci> elements; NICs from <net> elements
 * and NIC-class <pci> elements (those have no name).  Returns 0, or -1 with
 * err naming the file and line; *t is left empty on error.
 */
int
topo_read_nccl_xml(struct topo_nodetype *t, const char *path, pl_err_t *err)
{
	struct nccl n;
	char *text = NULL;
	size_t len;
	int rv = -1, g;

	memset(&n, 0, sizeof(n));
	n.label = pl_clip_path(path, n.label_buf, sizeof(n.label_buf));
	n.err = err;
	text = topo_util_read_file(path, NCCL_MAX_BYTES, "an NCCL topology file", &len, err);
	if (!text)
		goto out;
	if (strlen(text) != len) {
		pl_err_set(err, "%s: holds NUL bytes; not an NCCL topology file", n.label);
		goto out;
	}
	if (parse(&n, text) < 0 || fill(t, &n) < 0) {
		topo_nodetype_clear(t);
		goto out;
	}
	rv = 0;
out:
	for (g = 0; g < n.ngpus; g++)
		free(n.gpus[g].links);
	free(n.gpus);
	free(n.nics);
	free(text);
	return rv;
}
