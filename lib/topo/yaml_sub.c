/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The YAML subset of yaml_sub.h.  The text is cut into lines first (each
 * with its indentation, comments and trailing blanks gone), then nested by
 * indentation in one recursive descent: a line "- ..." opens or continues a
 * sequence, a line "key: ..." a mapping, anything else is a scalar.
 */
#include <stdlib.h>
#include <string.h>

#include "yaml_sub.h"

struct yline {
	int no;		/* 1-based line number */
	int indent;	/* spaces before the content */
	char *s;	/* the content: comment and trailing blanks cut */
};

struct yparser {
	const char *label;
	pl_err_t *err;
	char *buf;		/* a copy of the text, cut into lines */
	struct yline *lines;
	long n, i;		/* lines, and the next one to read */
	int depth;
	char clip[PL_CLIP_BUF];
};

/* What the subset accepts, for the end of messages. */
#define YSUB_ACCEPTED "accepted: block mappings and sequences indented with spaces, " \
	"[a, b] on one line, plain or quoted scalars, # comments"

const char *
ysub_kind_name(enum ysub_kind k)
{
	switch (k) {
	case YSUB_SCALAR:
		return "a scalar";
	case YSUB_MAP:
		return "a mapping";
	case YSUB_SEQ:
		return "a sequence";
	default:
		return "nothing";
	}
}

void
ysub_free(struct ysub_node *n)
{
	long i;

	if (!n)
		return;
	for (i = 0; i < n->n; i++)
		ysub_free(n->kids[i]);
	free(n->kids);
	free(n->key);
	free(n->text);
	free(n);
}

const struct ysub_node *
ysub_get(const struct ysub_node *map, const char *key)
{
	long i;

	if (!map || map->kind != YSUB_MAP)
		return NULL;
	for (i = 0; i < map->n; i++)
		if (strcmp(map->kids[i]->key, key) == 0)
			return map->kids[i];
	return NULL;
}

/* Input text fit to echo in a message (pl_clip). */
static const char *
yp_clip(struct yparser *p, const char *s)
{
	return pl_clip(s, p->clip, sizeof(p->clip));
}

/* A new empty node; NULL (err set) when out of memory. */
static struct ysub_node *
node_new(struct yparser *p, enum ysub_kind kind, int line)
{
	struct ysub_node *n = calloc(1, sizeof(*n));

	if (!n) {
		pl_err_set(p->err, "%s: out of memory", p->label);
		return NULL;
	}
	n->kind = kind;
	n->line = line;
	return n;
}

/* Append kid to n (a mapping or sequence); kid is n's from then on, or
 * freed on error. */
static int
add_kid(struct yparser *p, struct ysub_node *n, struct ysub_node *kid)
{
	/* Grow at each power of two. */
	if ((n->n & (n->n - 1)) == 0) {
		struct ysub_node **k = realloc(n->kids, (size_t)(n->n ? 2 * n->n : 1) * sizeof(*k));

		if (!k) {
			ysub_free(kid);
			return pl_err_set(p->err, "%s: out of memory", p->label);
		}
		n->kids = k;
	}
	n->kids[n->n++] = kid;
	return 0;
}

/* Does the content s start a sequence item ("- ..." or a lone "-")? */
static bool
is_item(const char *s)
{
	return s[0] == '-' && (s[1] == ' ' || s[1] == '\0');
}

/* A character that starts YAML syntax outside the subset. */
static const char *
refused_indicator(char c)
{
	switch (c) {
	case '{':
		return "flow mappings ({...}); write the mapping on indented lines";
	case '&':
		return "anchors (&)";
	case '*':
		return "aliases (*)";
	case '!':
		return "tags (!)";
	case '|':
	case '>':
		return "block scalars (| and >)";
	case '%':
		return "directives (%)";
	case '@':
	case '`':
		return "reserved indicators (@ and `)";
	case '?':
		return "complex keys (?)";
	default:
		return NULL;
	}
}

/*
 * The quoted scalar at *pp (its opening quote), unescaped in place; *pp
 * moves past the closing quote.  Double quotes take \" \\ \/ \n and \t;
 * single quotes take '' for a quote.
 */
static int
quoted(struct yparser *p, int line, char **pp, char **out)
{
	char *r = *pp, *w = *pp, q = *r++;

	for (;;) {
		if (!*r)
			return pl_err_set(p->err, "%s:%d: a quoted scalar that does not end on its line (%s)",
					  p->label, line, YSUB_ACCEPTED);
		if (*r == q && q == '\'' && r[1] == '\'') {
			*w++ = '\'';
			r += 2;
		} else if (*r == q) {
			r++;
			break;
		} else if (*r == '\\' && q == '"') {
			switch (r[1]) {
			case '"': *w++ = '"'; break;
			case '\\': *w++ = '\\'; break;
			case '/': *w++ = '/'; break;
			case 'n': *w++ = '\n'; break;
			case 't': *w++ = '\t'; break;
			default:
				return pl_err_set(p->err, "%s:%d: an escape '\\%c' in a quoted scalar (accepted: \\\" \\\\ \\/ \\n \\t)",
						  p->label, line, r[1] ? r[1] : ' ');
			}
			r += 2;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	*out = *pp;
	*pp = r;
	return 0;
}

/* A scalar node holding a copy of text. */
static struct ysub_node *
scalar_node(struct yparser *p, int line, const char *text, bool q)
{
	struct ysub_node *n = node_new(p, YSUB_SCALAR, line);

	if (!n)
		return NULL;
	n->quoted = q;
	n->text = strdup(text);
	if (!n->text) {
		ysub_free(n);
		pl_err_set(p->err, "%s: out of memory", p->label);
		return NULL;
	}
	return n;
}

/* A flow sequence [a, "b", 3] of scalars, all on line `line`. */
static struct ysub_node *
flow_seq(struct yparser *p, int line, char *s)
{
	struct ysub_node *seq = node_new(p, YSUB_SEQ, line), *kid;
	char *r = s + 1, *text, sep;
	bool q;

	if (!seq)
		return NULL;
	seq->flow = true;
	for (;;) {
		while (*r == ' ')
			r++;
		if (*r == ']')
			break;
		if (!*r) {
			pl_err_set(p->err, "%s:%d: a flow sequence that does not close with ']' on its line (%s)",
				   p->label, line, YSUB_ACCEPTED);
			goto fail;
		}
		q = *r == '"' || *r == '\'';
		if (q) {
			if (quoted(p, line, &r, &text) < 0)
				goto fail;
			kid = scalar_node(p, line, text, true);
		} else {
			char *end;

			if (*r == '[' || refused_indicator(*r) || *r == ',') {
				pl_err_set(p->err, "%s:%d: '%c' inside a flow sequence (accepted: [a, b] of plain or quoted scalars)",
					   p->label, line, *r);
				goto fail;
			}
			text = r;
			while (*r && *r != ',' && *r != ']')
				r++;
			for (end = r; end > text && end[-1] == ' '; end--)
				;
			/* Cut the item for the copy, then put the byte back:
			 * the separator is read below. */
			sep = *end;
			*end = '\0';
			kid = scalar_node(p, line, text, false);
			*end = sep;
		}
		if (!kid || add_kid(p, seq, kid) < 0)
			goto fail;
		while (*r == ' ')
			r++;
		if (*r == ',') {
			r++;
			continue;
		}
		if (!*r) {
			pl_err_set(p->err, "%s:%d: a flow sequence that does not close with ']' on its line (%s)",
				   p->label, line, YSUB_ACCEPTED);
			goto fail;
		}
		if (*r != ']') {
			pl_err_set(p->err, "%s:%d: expected ',' or ']' in a flow sequence, found '%s' (accepted: [a, b] on one line)",
				   p->label, line, yp_clip(p, r));
			goto fail;
		}
	}
	r++;
	while (*r == ' ')
		r++;
	if (*r) {
		pl_err_set(p->err, "%s:%d: '%s' after a flow sequence's ']' (accepted: nothing but a comment)",
			   p->label, line, yp_clip(p, r));
		goto fail;
	}
	return seq;
fail:
	ysub_free(seq);
	return NULL;
}

/* The value written on a line after "key: " or "- ", or a line alone. */
static struct ysub_node *
inline_value(struct yparser *p, int line, char *s)
{
	const char *why = refused_indicator(*s);
	char *text;

	if (*s == '"' || *s == '\'') {
		if (quoted(p, line, &s, &text) < 0)
			return NULL;
		while (*s == ' ')
			s++;
		if (*s) {
			pl_err_set(p->err, "%s:%d: '%s' after a quoted scalar (accepted: nothing but a comment)",
				   p->label, line, yp_clip(p, s));
			return NULL;
		}
		return scalar_node(p, line, text, true);
	}
	if (*s == '[')
		return flow_seq(p, line, s);
	if (why && (*s != '?' || s[1] == ' ' || !s[1])) {
		pl_err_set(p->err, "%s:%d: '%s': not accepted: %s (%s)", p->label, line,
			   yp_clip(p, s), why, YSUB_ACCEPTED);
		return NULL;
	}
	if (is_item(s)) {
		pl_err_set(p->err, "%s:%d: '%s': a sequence item on the line of its key (accepted: the items on the lines below, each starting '- ')",
			   p->label, line, yp_clip(p, s));
		return NULL;
	}
	if (strstr(s, ": ") || s[strlen(s) - 1] == ':') {
		pl_err_set(p->err, "%s:%d: '%s': a second ':' on the line (accepted: one key per line; nest a mapping on indented lines, or quote a value that holds ': ')",
			   p->label, line, yp_clip(p, s));
		return NULL;
	}
	return scalar_node(p, line, s, false);
}

/* Does the content s start with "key:" (a mapping entry)? */
static bool
has_key(const char *s)
{
	const char *c;

	if (*s == '"' || *s == '\'') {
		for (c = s + 1; *c && *c != *s; c++)
			if (*s == '"' && *c == '\\' && c[1])
				c++;
		if (!*c)
			return false;
		for (c++; *c == ' '; c++)
			;
		return *c == ':' && (c[1] == ' ' || !c[1]);
	}
	if (*s == '[' || *s == '{')
		return false;
	for (c = s; (c = strchr(c, ':')) != NULL; c++)
		if (c[1] == ' ' || !c[1])
			return true;
	return false;
}

/*
 * Cut the line "key: value" into *key (caller frees) and *val (points into
 * the line; "" when the value is on the lines below).
 */
static int
split_key(struct yparser *p, struct yline *l, char **key, char **val)
{
	char *s = l->s, *k, *c;
	const char *why;

	if (*s == '"' || *s == '\'') {
		if (quoted(p, l->no, &s, &k) < 0)
			return -1;
		while (*s == ' ')
			s++;
		c = s;		/* has_key() saw the ':' here */
	} else {
		k = s;
		for (c = s; !(*c == ':' && (c[1] == ' ' || !c[1])); c++)
			;
		while (c > k && c[-1] == ' ')
			c--;
		why = refused_indicator(*k);
		if (why) {
			*c = '\0';
			return pl_err_set(p->err, "%s:%d: key '%s': not accepted: %s (%s)", p->label,
					  l->no, yp_clip(p, k), why, YSUB_ACCEPTED);
		}
		if (c == k)
			return pl_err_set(p->err, "%s:%d: an empty key before ':' (accepted: key: value)",
					  p->label, l->no);
		while (*c != ':')
			*c++ = '\0';
	}
	*c++ = '\0';
	while (*c == ' ')
		c++;
	*val = c;
	*key = strdup(k);
	if (!*key)
		return pl_err_set(p->err, "%s: out of memory", p->label);
	return 0;
}

/* A line indented where no open mapping or sequence is. */
static int
bad_indent(struct yparser *p)
{
	const struct yline *l = &p->lines[p->i];

	return pl_err_set(p->err, "%s:%d: bad indentation (%d spaces): the line is indented deeper than the entries before it, under a value that is complete (accepted: the indentation of a key or '- ' item above, or deeper only under a key with no value on its line; a scalar ends on its line)",
			  p->label, l->no, l->indent);
}

static struct ysub_node *parse_node(struct yparser *p, int indent);

/* The "- " items at indentation `indent`. */
static struct ysub_node *
parse_seq(struct yparser *p, int indent)
{
	struct ysub_node *seq = node_new(p, YSUB_SEQ, p->lines[p->i].no), *kid;

	if (!seq)
		return NULL;
	while (p->i < p->n && p->lines[p->i].indent == indent && is_item(p->lines[p->i].s)) {
		struct yline *l = &p->lines[p->i];
		char *c = l->s + 1;

		while (*c == ' ')
			c++;
		if (!*c) {
			int no = l->no;

			p->i++;
			if (p->i < p->n && p->lines[p->i].indent > indent)
				kid = parse_node(p, p->lines[p->i].indent);
			else
				kid = node_new(p, YSUB_NULL, no);
		} else {
			/* The item's content is a node indented at its column. */
			l->indent += (int)(c - l->s);
			l->s = c;
			kid = parse_node(p, l->indent);
		}
		if (!kid || add_kid(p, seq, kid) < 0)
			goto fail;
		if (p->i < p->n && p->lines[p->i].indent > indent) {
			bad_indent(p);
			goto fail;
		}
	}
	return seq;
fail:
	ysub_free(seq);
	return NULL;
}

/* The "key: value" entries at indentation `indent`. */
static struct ysub_node *
parse_map(struct yparser *p, int indent)
{
	struct ysub_node *map = node_new(p, YSUB_MAP, p->lines[p->i].no), *kid;
	const struct ysub_node *dup;
	char *key = NULL, *val = NULL;

	if (!map)
		return NULL;
	while (p->i < p->n && p->lines[p->i].indent == indent && !is_item(p->lines[p->i].s)) {
		struct yline *l = &p->lines[p->i];
		int no = l->no;

		if (!has_key(l->s)) {
			pl_err_set(p->err, "%s:%d: '%s': expected 'key: value' like the lines above (%s)",
				   p->label, no, yp_clip(p, l->s), YSUB_ACCEPTED);
			goto fail;
		}
		if (split_key(p, l, &key, &val) < 0)
			goto fail;
		dup = ysub_get(map, key);
		if (dup) {
			pl_err_set(p->err, "%s:%d: key '%s' is given twice in one mapping (first at line %d)",
				   p->label, no, yp_clip(p, key), dup->line);
			goto fail;
		}
		p->i++;
		if (*val)
			kid = inline_value(p, no, val);
		else if (p->i < p->n && p->lines[p->i].indent > indent)
			kid = parse_node(p, p->lines[p->i].indent);
		else if (p->i < p->n && p->lines[p->i].indent == indent && is_item(p->lines[p->i].s))
			kid = parse_seq(p, indent);
		else
			kid = node_new(p, YSUB_NULL, no);
		if (!kid)
			goto fail;
		kid->key = key;
		key = NULL;
		/* A mapping's value is found by its key's line. */
		kid->line = no;
		if (add_kid(p, map, kid) < 0)
			goto fail;
		if (p->i < p->n && p->lines[p->i].indent > indent) {
			bad_indent(p);
			goto fail;
		}
	}
	return map;
fail:
	free(key);
	ysub_free(map);
	return NULL;
}

/* The node at the current line, whose content starts at column indent. */
static struct ysub_node *
parse_node(struct yparser *p, int indent)
{
	struct yline *l = &p->lines[p->i];
	struct ysub_node *n;

	if (++p->depth > YSUB_MAX_DEPTH) {
		pl_err_set(p->err, "%s:%d: nested deeper than %d levels", p->label, l->no,
			   YSUB_MAX_DEPTH);
		return NULL;
	}
	if (is_item(l->s))
		n = parse_seq(p, indent);
	else if (has_key(l->s))
		n = parse_map(p, indent);
	else {
		p->i++;
		n = inline_value(p, l->no, l->s);
	}
	p->depth--;
	return n;
}

/*
 * Cut one line (in place): its indentation, and its content without the
 * comment and trailing blanks.  A tab outside quotes is refused: YAML
 * forbids it in indentation and the subset everywhere.
 */
static int
cut_line(struct yparser *p, int no, char *s, struct yline *out)
{
	char *c, q = 0;

	out->no = no;
	out->indent = 0;
	while (*s == ' ') {
		s++;
		out->indent++;
	}
	for (c = s; *c; c++) {
		if (q) {
			if (q == '"' && *c == '\\' && c[1])
				c++;
			else if (q == '\'' && *c == '\'' && c[1] == '\'')
				c++;
			else if (*c == q)
				q = 0;
			continue;
		}
		if (*c == '\t')
			return pl_err_set(p->err, "%s:%d: a tab character (accepted: spaces; YAML indents with spaces only)",
					  p->label, no);
		if ((*c == '"' || *c == '\'') && (c == s || c[-1] == ' ' || c[-1] == '[' || c[-1] == ','))
			q = *c;
		else if (*c == '#' && (c == s || c[-1] == ' '))
			break;
		else if ((unsigned char)*c < 0x20 && *c != '\r')
			return pl_err_set(p->err, "%s:%d: a control character (byte 0x%02x); not a text file",
					  p->label, no, (unsigned char)*c);
	}
	*c = '\0';
	while (c > s && (c[-1] == ' ' || c[-1] == '\r'))
		*--c = '\0';
	out->s = s;
	return 0;
}

/* Cut the copy of the text into content lines; document markers checked. */
static int
cut_lines(struct yparser *p)
{
	char *s = p->buf, *eol;
	long cap = 0;
	int no = 0;
	bool started = false, ended = false;

	for (; s; s = eol ? eol + 1 : NULL) {
		struct yline l;

		eol = strchr(s, '\n');
		if (eol)
			*eol = '\0';
		if (!*s && !eol)
			break;
		no++;
		if (cut_line(p, no, s, &l) < 0)
			return -1;
		if (!*l.s)
			continue;
		if (l.indent == 0 && strncmp(l.s, "---", 3) == 0 && (!l.s[3] || l.s[3] == ' ')) {
			if (started || ended)
				return pl_err_set(p->err, "%s:%d: a second document ('---') (accepted: one document)",
						  p->label, no);
			if (l.s[3])
				return pl_err_set(p->err, "%s:%d: '%s' after '---' (accepted: '---' alone on its line)",
						  p->label, no, yp_clip(p, l.s + 4));
			started = true;
			continue;
		}
		if (l.indent == 0 && strcmp(l.s, "...") == 0) {
			ended = true;
			continue;
		}
		if (ended)
			return pl_err_set(p->err, "%s:%d: text after the end of the document ('...') (accepted: one document)",
					  p->label, no);
		if (l.indent == 0 && l.s[0] == '%')
			return pl_err_set(p->err, "%s:%d: a directive '%s' (accepted: documents without %%YAML or %%TAG)",
					  p->label, no, yp_clip(p, l.s));
		started = true;
		if (p->n == cap) {
			struct yline *nl;

			cap = cap ? 2 * cap : 64;
			nl = realloc(p->lines, (size_t)cap * sizeof(*nl));
			if (!nl)
				return pl_err_set(p->err, "%s: out of memory", p->label);
			p->lines = nl;
		}
		p->lines[p->n++] = l;
	}
	return 0;
}

struct ysub_node *
ysub_parse(const char *text, const char *label, pl_err_t *err)
{
	struct yparser p;
	struct ysub_node *root = NULL;
	char lbuf[PL_CLIP_BUF];

	memset(&p, 0, sizeof(p));
	p.label = pl_clip(label ? label : "YAML", lbuf, sizeof(lbuf));
	p.err = err;
	p.buf = strdup(text ? text : "");
	if (!p.buf) {
		pl_err_set(err, "%s: out of memory", p.label);
		goto out;
	}
	if (cut_lines(&p) < 0)
		goto out;
	if (p.n == 0) {
		root = node_new(&p, YSUB_NULL, 1);
		goto out;
	}
	root = parse_node(&p, p.lines[0].indent);
	if (root && p.i < p.n) {
		if (p.lines[p.i].indent < p.lines[0].indent)
			pl_err_set(err, "%s:%d: indented less (%d spaces) than the document's first line %d (%d spaces)",
				   p.label, p.lines[p.i].no, p.lines[p.i].indent, p.lines[0].no,
				   p.lines[0].indent);
		else
			pl_err_set(err, "%s:%d: '%s' does not continue the %s that starts at line %d (accepted: one top-level mapping, sequence or scalar)",
				   p.label, p.lines[p.i].no, pl_clip(p.lines[p.i].s, p.clip, sizeof(p.clip)),
				   root->kind == YSUB_MAP ? "mapping" : root->kind == YSUB_SEQ ? "sequence" : "scalar",
				   p.lines[0].no);
		ysub_free(root);
		root = NULL;
	}
out:
	free(p.lines);
	free(p.buf);
	return root;
}
