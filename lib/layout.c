/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The --parallel-layout= spec: parsing, checking against a world size and
 * writing back in canonical form.  Everything a user can mistype is reported
 * with the token as typed and the accepted alternatives, because the message
 * ends up on the terminal of someone who just ran srun.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "order.h"

/* Sizes above this are typos, and keep every product of sizes in a long. */
#define SIZE_MAX_AXIS 1048576L
/* The longest spec accepted; real ones are a few dozen bytes. */
#define SPEC_MAX 4096
/* Tokens are quoted up to this many bytes in messages. */
#define QUOTE_MAX 64
/* A world this large would not be enumerated in reasonable memory. */
#define WORLD_MAX 16777216L

#define DEFAULT_SEQ 4096
#define DEFAULT_MBS 1

static const char *const axis_names[PL_NAXES] = {
	[PL_TP] = "tp",
	[PL_CP] = "cp",
	[PL_EP] = "ep",
	[PL_DP] = "dp",
	[PL_PP] = "pp",
};

/*
 * Llama 2 (7b, 13b, 70b) and Llama 3.1 (405b) shapes.  The parameter counts
 * are the round marketing numbers on purpose: planners quote them.
 */
static const struct pl_model presets[] = {
	{ "7b", 7e9, 4096, 32, 32, 32000 },
	{ "13b", 13e9, 5120, 40, 40, 32000 },
	{ "70b", 70e9, 8192, 80, 64, 32000 },
	{ "405b", 405e9, 16384, 126, 128, 128256 },
};
#define NPRESETS (sizeof(presets) / sizeof(presets[0]))

#define ORDER_ACCEPTED "megatron, megatron-tp-pp-dp, torchtitan, " \
	"or each of tp, cp, ep, dp, pp once joined by '-', innermost first, " \
	"e.g. tp-cp-ep-dp-pp"

enum key_id {
	K_TP, K_CP, K_EP, K_DP, K_PP,
	K_ORDER, K_MODEL, K_PARAMS, K_HIDDEN, K_LAYERS, K_HEADS, K_VOCAB,
	K_SEQ, K_MBS, K_GBS, K_ZERO, K_RECOMPUTE, K_OPTIMIZER,
	K_AUTO, K_VPP, K_SP, K_CPALGO,
	K_NKEYS
};

enum key_type {
	T_SIZE,		/* a parallel size, compact or key=value; dp also "auto" */
	T_INT,		/* a bounded integer, compact or key=value */
	T_PARAMS,	/* a parameter count with optional suffix */
	T_WORD,		/* key=value only, value from a fixed list */
	T_FLAG,		/* the bare key; sp also takes =on|off */
};

struct key_def {
	const char *name;
	enum key_type type;
	long min;
	long max;
	const char *example;	/* what a correct token looks like */
	const char *accepted;	/* the values it takes, for messages */
};

static const struct key_def keys[K_NKEYS] = {
	[K_TP] = { "tp", T_SIZE, 1, SIZE_MAX_AXIS, "tp8",
	    "a positive integer up to 1048576" },
	[K_CP] = { "cp", T_SIZE, 1, SIZE_MAX_AXIS, "cp2",
	    "a positive integer up to 1048576" },
	[K_EP] = { "ep", T_SIZE, 1, SIZE_MAX_AXIS, "ep8",
	    "a positive integer up to 1048576" },
	[K_DP] = { "dp", T_SIZE, 1, SIZE_MAX_AXIS, "dp4 or dp=auto",
	    "a positive integer up to 1048576, or auto" },
	[K_PP] = { "pp", T_SIZE, 1, SIZE_MAX_AXIS, "pp4",
	    "a positive integer up to 1048576" },
	[K_ORDER] = { "order", T_WORD, 0, 0, "order=megatron",
	    ORDER_ACCEPTED },
	[K_MODEL] = { "model", T_WORD, 0, 0, "model=70b",
	    "7b, 13b, 70b, 405b" },
	[K_PARAMS] = { "params", T_PARAMS, 0, 0, "params=7e9",
	    "a count such as 7e9, 7000000000, 7b, 70B or 1.5t" },
	[K_HIDDEN] = { "hidden", T_INT, 1, 1L << 20, "hidden=8192",
	    "a positive integer" },
	[K_LAYERS] = { "layers", T_INT, 1, 1L << 20, "layers=80",
	    "a positive integer" },
	[K_HEADS] = { "heads", T_INT, 1, 1L << 20, "heads=64",
	    "a positive integer" },
	[K_VOCAB] = { "vocab", T_INT, 1, 1L << 24, "vocab=32000",
	    "a positive integer" },
	[K_SEQ] = { "seq", T_INT, 1, 1L << 26, "seq=4096",
	    "a positive integer" },
	[K_MBS] = { "mbs", T_INT, 1, SIZE_MAX_AXIS, "mbs=1",
	    "a positive integer" },
	[K_GBS] = { "gbs", T_INT, 0, 1L << 30, "gbs=1024",
	    "0 (not pinned) or a positive integer" },
	[K_ZERO] = { "zero", T_INT, 0, 3, "zero=1",
	    "0, 1, 2 or 3" },
	[K_RECOMPUTE] = { "recompute", T_WORD, 0, 0, "recompute=selective",
	    "none, selective, full" },
	[K_OPTIMIZER] = { "optimizer", T_WORD, 0, 0, "optimizer=adam",
	    "adam, sgd" },
	[K_AUTO] = { "auto", T_FLAG, 0, 0, "auto,model=70b",
	    "the bare word auto" },
	[K_VPP] = { "vpp", T_INT, 1, 1024, "vpp=2",
	    "a positive integer up to 1024" },
	[K_SP] = { "sp", T_FLAG, 0, 0, "sp or sp=off",
	    "sp, sp=on, sp=off" },
	[K_CPALGO] = { "cp_algo", T_WORD, 0, 0, "cp_algo=ulysses",
	    "ring, ulysses" },
};

#define KEYS_ACCEPTED "tp, cp, ep, dp, pp, order, model, params, hidden, " \
	"layers, heads, vocab, seq, mbs, gbs, zero, recompute, optimizer, " \
	"auto, vpp, sp, cp_algo"

/* What the token loop collects before defaults and presets are applied. */
struct parse_state {
	const char *seen[K_NKEYS];	/* the token that set each key */
	long ival[K_NKEYS];
	double params;
	const struct pl_model *preset;
};

const char *
pl_axis_name(enum pl_axis a)
{
	if ((int)a < 0 || a >= PL_NAXES)
		return "?";
	return axis_names[a];
}

const struct pl_model *
layout_model_preset(const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < NPRESETS; i++)
		if (strcmp(presets[i].name, name) == 0)
			return &presets[i];
	return NULL;
}

/* Quote a token for a message: cut short so a huge one still fits, and
 * escaped (pl_clip). */
static const char *
quote(char *buf, size_t size, const char *tok)
{
	return pl_clip(tok, buf, size);
}

/* Saturating product, so that absurd sizes compare as "too big". */
static long
mul_sat(long a, long b)
{
	if (a <= 0 || b <= 0)
		return 0;
	if (a > LONG_MAX / b)
		return LONG_MAX;
	return a * b;
}

static int
ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static bool
is_lower(int c)
{
	return c >= 'a' && c <= 'z';
}

static bool
is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Levenshtein distance of two short strings; large for long ones. */
static int
edit_distance(const char *a, const char *b)
{
	int prev[33], cur[33];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > 32 || lb > 32)
		return 99;
	for (j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (i = 1; i <= la; i++) {
		cur[0] = (int)i;
		for (j = 1; j <= lb; j++) {
			int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			int del = prev[j] + 1;
			int ins = cur[j - 1] + 1;
			int m = sub < del ? sub : del;

			cur[j] = m < ins ? m : ins;
		}
		memcpy(prev, cur, sizeof(prev));
	}
	return prev[lb];
}

/*
 * The closest known key, or NULL.  A case-insensitive match always counts;
 * otherwise the distance must be at most 2 and below the typed length, so
 * that "x" does not "mean" tp.
 */
static const char *
suggest_key(const char *typed)
{
	char low[33];
	size_t i, n = strlen(typed);
	int best = 3, k;
	const char *hit = NULL;

	if (n == 0 || n > 32)
		return NULL;
	for (i = 0; i <= n; i++)
		low[i] = (char)ascii_lower((unsigned char)typed[i]);
	for (k = 0; k < K_NKEYS; k++)
		if (strcmp(low, keys[k].name) == 0)
			return keys[k].name;
	for (k = 0; k < K_NKEYS; k++) {
		int d = edit_distance(typed, keys[k].name);

		if (d < best && d < (int)n) {
			best = d;
			hit = keys[k].name;
		}
	}
	return hit;
}

static int
find_key(const char *name)
{
	int k;

	for (k = 0; k < K_NKEYS; k++)
		if (strcmp(keys[k].name, name) == 0)
			return k;
	return -1;
}

/*
 * Decimal digits only: no sign, no blanks, no hex.  Returns 0, 1 when the
 * value does not fit a long, -1 when it is not a number.
 */
static int
parse_digits(const char *s, long *out)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (!is_digit((unsigned char)*s))
			return -1;
		if (v > (LONG_MAX - (*s - '0')) / 10)
			return 1;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return 0;
}

/*
 * A parameter count: digits[.digits][e[+-]digits] or digits[.digits] with a
 * k/m/b/t suffix (either case).  Computed by hand rather than with strtod so
 * that the locale's decimal point, hex floats, inf and nan never get in.
 */
static int
parse_params(const char *s, double *out)
{
	double v = 0, scale = 1;
	int ndig = 0, exp = 0, esign = 1, edig = 0;

	for (; is_digit((unsigned char)*s); s++, ndig++)
		v = v * 10 + (*s - '0');
	if (ndig == 0)
		return -1;
	if (*s == '.') {
		s++;
		for (; is_digit((unsigned char)*s); s++, ndig++) {
			scale /= 10;
			v += (*s - '0') * scale;
		}
	}
	if (ndig > 30)
		return -1;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			esign = *s++ == '-' ? -1 : 1;
		for (; is_digit((unsigned char)*s); s++, edig++)
			if (exp < 1000)
				exp = exp * 10 + (*s - '0');
		if (edig == 0)
			return -1;
	} else if (*s) {
		switch (ascii_lower((unsigned char)*s)) {
		case 'k': exp = 3; break;
		case 'm': exp = 6; break;
		case 'b': exp = 9; break;
		case 't': exp = 12; break;
		default: return -1;
		}
		s++;
	}
	if (*s)
		return -1;
	if (esign > 0 && exp > 30)
		return 1;
	while (exp-- > 0)
		v = esign > 0 ? v * 10 : v / 10;
	if (v > 1e15)
		return 1;
	*out = (double)(long long)(v + 0.5);
	return *out >= 1 ? 0 : -1;
}

static int
parse_order(const char *tok, const char *val, struct pl_layout *out,
	    pl_err_t *err)
{
	static const enum pl_axis megatron[PL_NAXES] =
		{ PL_TP, PL_CP, PL_EP, PL_DP, PL_PP };
	static const enum pl_axis tppdp[PL_NAXES] =
		{ PL_TP, PL_CP, PL_EP, PL_PP, PL_DP };
	char q[PL_CLIP_BUF], part[16];
	const char *p = val;
	bool seen[PL_NAXES] = { false };
	int n = 0, a;

	out->order_kind = PL_ORDER_MEGATRON;
	if (strcmp(val, "megatron") == 0 || strcmp(val, "torchtitan") == 0) {
		/*
		 * torchtitan's mesh ("pp","dp","cp","tp") is row-major with tp
		 * fastest: the same digits as Megatron's default, only its
		 * group enumeration differs (order.c).
		 */
		memcpy(out->order, megatron, sizeof(megatron));
		if (val[0] == 't')
			out->order_kind = PL_ORDER_TORCHTITAN;
		snprintf(out->order_name, sizeof(out->order_name), "%s", val);
		return 0;
	}
	if (strcmp(val, "megatron-tp-pp-dp") == 0) {
		memcpy(out->order, tppdp, sizeof(tppdp));
		snprintf(out->order_name, sizeof(out->order_name), "%s", val);
		return 0;
	}
	quote(q, sizeof(q), tok);
	while (*p) {
		size_t len = strcspn(p, "-");

		if (len == 0)
			return pl_err_set(err, "'%s': empty axis name in order "
					  "(accepted: %s)", q, ORDER_ACCEPTED);
		if (len >= sizeof(part))
			len = sizeof(part) - 1;
		memcpy(part, p, len);
		part[len] = '\0';
		for (a = 0; a < PL_NAXES; a++)
			if (strcmp(part, axis_names[a]) == 0)
				break;
		if (a == PL_NAXES)
			return pl_err_set(err, "'%s': unknown axis '%s' in order "
					  "(accepted: %s)", q, part,
					  ORDER_ACCEPTED);
		if (seen[a])
			return pl_err_set(err, "'%s': %s appears twice in order "
					  "(accepted: %s)", q, part,
					  ORDER_ACCEPTED);
		seen[a] = true;
		out->order[n++] = (enum pl_axis)a;
		p += strcspn(p, "-");
		if (*p == '-') {
			p++;
			if (!*p)
				return pl_err_set(err, "'%s': empty axis name "
						  "in order (accepted: %s)", q,
						  ORDER_ACCEPTED);
		}
	}
	for (a = 0; a < PL_NAXES; a++)
		if (!seen[a])
			return pl_err_set(err, "'%s': %s is missing from order "
					  "(accepted: %s)", q, axis_names[a],
					  ORDER_ACCEPTED);
	/* A spelled-out preset gets the preset's name, so output is unique. */
	if (memcmp(out->order, megatron, sizeof(megatron)) == 0)
		snprintf(out->order_name, sizeof(out->order_name), "megatron");
	else if (memcmp(out->order, tppdp, sizeof(tppdp)) == 0)
		snprintf(out->order_name, sizeof(out->order_name),
			 "megatron-tp-pp-dp");
	else
		snprintf(out->order_name, sizeof(out->order_name), "%s", val);
	return 0;
}

static int
parse_word(int k, const char *tok, const char *val, struct pl_layout *out,
	   struct parse_state *st, pl_err_t *err)
{
	char q[PL_CLIP_BUF], low[8];
	size_t i;

	quote(q, sizeof(q), tok);
	switch (k) {
	case K_ORDER:
		return parse_order(tok, val, out, err);
	case K_MODEL:
		for (i = 0; i < sizeof(low) - 1 && val[i]; i++)
			low[i] = (char)ascii_lower((unsigned char)val[i]);
		low[i] = '\0';
		st->preset = val[i] ? NULL : layout_model_preset(low);
		if (!st->preset)
			return pl_err_set(err, "'%s': unknown model (accepted: "
					  "7b, 13b, 70b, 405b, or params=, "
					  "hidden=, layers=, heads=, vocab=)",
					  q);
		return 0;
	case K_RECOMPUTE:
		if (strcmp(val, "none") == 0)
			out->recompute = PL_RECOMPUTE_NONE;
		else if (strcmp(val, "selective") == 0)
			out->recompute = PL_RECOMPUTE_SELECTIVE;
		else if (strcmp(val, "full") == 0)
			out->recompute = PL_RECOMPUTE_FULL;
		else
			return pl_err_set(err, "'%s': recompute must be none, "
					  "selective or full", q);
		return 0;
	case K_OPTIMIZER:
		if (strcmp(val, "adam") == 0)
			out->optimizer = PL_OPT_ADAM;
		else if (strcmp(val, "sgd") == 0)
			out->optimizer = PL_OPT_SGD;
		else
			return pl_err_set(err, "'%s': optimizer must be adam or "
					  "sgd", q);
		return 0;
	case K_CPALGO:
		if (strcmp(val, "ring") == 0)
			out->cp_algo = PL_CP_RING;
		else if (strcmp(val, "ulysses") == 0)
			out->cp_algo = PL_CP_ULYSSES;
		else
			return pl_err_set(err, "'%s': cp_algo must be ring (ring "
					  "attention) or ulysses (all-to-all)", q);
		return 0;
	}
	return pl_err_set(err, "'%s': internal error: key %d", q, k);
}

static int
parse_value(int k, const char *tok, const char *val, struct pl_layout *out,
	    struct parse_state *st, pl_err_t *err)
{
	const struct key_def *kd = &keys[k];
	char q[PL_CLIP_BUF];
	long v = 0;
	int rc;

	quote(q, sizeof(q), tok);
	switch (kd->type) {
	case T_WORD:
		return parse_word(k, tok, val, out, st, err);
	case T_FLAG:
		if (!*val) {
			st->ival[k] = 1;
			return 0;
		}
		if (k == K_SP && (strcmp(val, "on") == 0 || strcmp(val, "off") == 0)) {
			st->ival[k] = val[1] == 'n';
			return 0;
		}
		return pl_err_set(err, "'%s': %s takes %s (e.g. %s)", q, kd->name,
				  k == K_SP ? "no value, on or off" : "no value",
				  kd->example);
	case T_PARAMS:
		rc = parse_params(val, &st->params);
		if (rc > 0)
			return pl_err_set(err, "'%s': params is too large "
					  "(at most 1e15)", q);
		if (rc < 0)
			return pl_err_set(err, "'%s': params must be a positive "
					  "number such as 7e9, 7000000000, "
					  "7b, 70B or 1.5t", q);
		return 0;
	case T_SIZE:
		if (k == K_DP && strcmp(val, "auto") == 0) {
			st->ival[k] = 0;
			return 0;
		}
		/* fall through */
	case T_INT:
		rc = parse_digits(val, &v);
		if (rc < 0 || (rc == 0 && v < kd->min)) {
			if (k == K_ZERO)
				return pl_err_set(err, "'%s': zero must be 0, "
						  "1, 2 or 3", q);
			return pl_err_set(err, "'%s': %s must be a %s integer "
					  "(e.g. %s)", q, kd->name,
					  kd->min > 0 ? "positive" :
					  "non-negative", kd->example);
		}
		if (rc > 0 || v > kd->max) {
			if (k == K_ZERO)
				return pl_err_set(err, "'%s': zero must be 0, "
						  "1, 2 or 3", q);
			return pl_err_set(err, "'%s': %s is too large (at most "
					  "%ld)", q, kd->name, kd->max);
		}
		st->ival[k] = v;
		return 0;
	}
	return pl_err_set(err, "'%s': internal error", q);
}

/* Report a key nobody knows, with a guess when one is close. */
static int
unknown_key(const char *q, const char *key, pl_err_t *err)
{
	const char *hint = suggest_key(key);
	char qk[PL_CLIP_BUF];

	quote(qk, sizeof(qk), key);
	if (hint)
		return pl_err_set(err, "'%s': unknown key '%s', did you mean "
				  "'%s'? (accepted: %s)", q, qk, hint,
				  KEYS_ACCEPTED);
	return pl_err_set(err, "'%s': unknown key '%s' (accepted: %s)", q, qk,
			  KEYS_ACCEPTED);
}

/* One comma-free token; tok is writable (the '=' is cut). */
static int
parse_token(char *tok, struct pl_layout *out, struct parse_state *st,
	    pl_err_t *err)
{
	char q[PL_CLIP_BUF], q2[PL_CLIP_BUF], keybuf[PL_CLIP_BUF];
	char *eq = strchr(tok, '=');
	const char *val;
	size_t klen;
	int k, rc;

	quote(q, sizeof(q), tok);
	if (eq) {
		klen = (size_t)(eq - tok);
		val = eq + 1;
	} else {
		for (klen = 0; is_lower((unsigned char)tok[klen]); klen++)
			;
		val = tok + klen;
	}
	if (klen == 0 && !eq) {
		/* "TP8": quote the letters before the digits as the key. */
		for (klen = 0; tok[klen] && !is_digit((unsigned char)tok[klen]);
		     klen++)
			;
	}
	if (klen == 0)
		return pl_err_set(err, "'%s': missing key before the value "
				  "(accepted keys: %s)", q, KEYS_ACCEPTED);
	if (klen >= sizeof(keybuf))
		klen = sizeof(keybuf) - 1;
	memcpy(keybuf, tok, klen);
	keybuf[klen] = '\0';
	k = find_key(keybuf);
	if (k < 0)
		return unknown_key(q, keybuf, err);
	if (st->seen[k])
		return pl_err_set(err, "'%s': %s is given twice (also as '%s')",
				  q, keys[k].name,
				  quote(q2, sizeof(q2), st->seen[k]));
	if (!*val && keys[k].type != T_FLAG)
		return pl_err_set(err, "'%s': %s needs a value, e.g. %s "
				  "(accepted: %s)", q, keys[k].name,
				  keys[k].example, keys[k].accepted);
	if (eq && !*val)
		return pl_err_set(err, "'%s': %s needs a value after '=' or none "
				  "at all, e.g. %s", q, keys[k].name, keys[k].example);
	if (!eq && keys[k].type != T_SIZE && keys[k].type != T_INT &&
	    keys[k].type != T_FLAG)
		return pl_err_set(err, "'%s': write %s as key=value (e.g. %s)",
				  q, keys[k].name, keys[k].example);
	rc = parse_value(k, tok, val, out, st, err);
	if (rc == 0)
		st->seen[k] = tok;
	return rc;
}

/*
 * Bytes a spec may not contain, found before splitting.  The message quotes
 * only what precedes the byte, so no raw control or UTF-8 byte reaches the
 * user's terminal.
 */
static int
check_bytes(const char *spec, size_t len, pl_err_t *err)
{
	char q[PL_CLIP_BUF], after[PL_CLIP_BUF + 16], head[QUOTE_MAX + 1];
	const char *what = NULL;
	size_t i;

	for (i = 0; i < len && !what; i++) {
		unsigned char c = (unsigned char)spec[i];

		if (c >= 0x80)
			what = "non-ASCII byte";
		else if (c == ' ' || (c >= '\t' && c <= '\r'))
			what = "whitespace";
		else if (c < 0x20 || c == 0x7f)
			what = "control byte";
	}
	if (!what)
		return 0;
	i--;
	after[0] = '\0';
	if (i > 0) {
		size_t n = i < sizeof(head) - 1 ? i : sizeof(head) - 1;

		memcpy(head, spec + i - n, n);
		head[n] = '\0';
		snprintf(after, sizeof(after), " after '%s%s'",
			 n < i ? "..." : "", quote(q, sizeof(q), head));
	}
	return pl_err_set(err, "%s 0x%02X at position %zu%s (the spec is "
			  "plain ASCII with items separated by commas only, "
			  "e.g. tp8,pp4)", what, (unsigned char)spec[i], i + 1,
			  after);
}

/*
 * Default model fields for a spec that named some but no preset: the 7b
 * shape, and when params= was not given an estimate of 12*L*h^2 (attention
 * and MLP blocks) plus 2*V*h (untied embedding and output layer).
 */
static void
apply_model(struct pl_layout *out, const struct parse_state *st)
{
	struct pl_model *m = &out->model;
	static const int fields[] = { K_HIDDEN, K_LAYERS, K_HEADS, K_VOCAB };
	size_t i;

	*m = st->preset ? *st->preset : presets[0];
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (st->seen[fields[i]])
			out->have_model = true;
	if (st->seen[K_MODEL] || st->seen[K_PARAMS])
		out->have_model = true;
	if (st->seen[K_HIDDEN])
		m->hidden = st->ival[K_HIDDEN];
	if (st->seen[K_LAYERS])
		m->layers = st->ival[K_LAYERS];
	if (st->seen[K_HEADS])
		m->heads = st->ival[K_HEADS];
	if (st->seen[K_VOCAB])
		m->vocab = st->ival[K_VOCAB];
	if (!st->preset && out->have_model) {
		snprintf(m->name, sizeof(m->name), "custom");
		m->params = 12.0 * (double)m->layers * (double)m->hidden *
			    (double)m->hidden +
			    2.0 * (double)m->vocab * (double)m->hidden;
	}
	if (st->seen[K_PARAMS])
		m->params = st->params;
}

static void
layout_defaults(struct pl_layout *out)
{
	static const enum pl_axis megatron[PL_NAXES] =
		{ PL_TP, PL_CP, PL_EP, PL_DP, PL_PP };
	int a;

	memset(out, 0, sizeof(*out));
	for (a = 0; a < PL_NAXES; a++)
		out->size[a] = 1;
	out->size[PL_DP] = 0;
	out->dp_auto = true;
	memcpy(out->order, megatron, sizeof(megatron));
	out->order_kind = PL_ORDER_MEGATRON;
	snprintf(out->order_name, sizeof(out->order_name), "megatron");
	out->model = presets[0];
	out->seq = DEFAULT_SEQ;
	out->mbs = DEFAULT_MBS;
	out->vpp = 1;
	out->cp_algo = PL_CP_RING;
}

/*
 * The checks of vpp and Ulysses that need no world size.  Sizes the planner
 * is still to choose (0) are skipped: plan_auto keeps only what passes.
 */
static int
check_variants(const struct pl_layout *l, const struct parse_state *st, pl_err_t *err)
{
	long pp = l->size[PL_PP], tp = l->size[PL_TP], cp = l->size[PL_CP];
	char q[PL_CLIP_BUF];

	if (l->vpp > 1) {
		quote(q, sizeof(q), st->seen[K_VPP]);
		if (pp == 1)
			return pl_err_set(err, "'%s': vpp=%ld needs pp > 1 (the "
					  "interleaved schedule splits each pipeline "
					  "rank's layers into vpp chunks; accepted: "
					  "vpp=1, or pp of 2 or more)", q, l->vpp);
		/* (layers + 2): Megatron-Core's split that counts the
		 * embedding and the loss as a layer each (plan.c) */
		if (pp > 1 && l->have_model && l->model.layers % (pp * l->vpp) != 0 &&
		    (pp <= 2 || (l->model.layers + 2) % (pp * l->vpp) != 0))
			return pl_err_set(err, "'%s': neither layers=%ld nor layers+2 "
					  "(the embedding and the loss counted as a "
					  "layer each) divide by pp*vpp = %ld*%ld "
					  "(accepted: a vpp dividing layers/pp or, for "
					  "pp > 2, (layers+2)/pp)", q, l->model.layers,
					  pp, l->vpp);
	}
	if (l->cp_algo == PL_CP_ULYSSES && l->have_model && tp > 0 && cp > 0 &&
	    l->model.heads % (tp * cp) != 0) {
		quote(q, sizeof(q), st->seen[K_CPALGO]);
		return pl_err_set(err, "'%s': heads=%ld do not divide by tp*cp = "
				  "%ld*%ld (Ulysses gives each of the tp*cp ranks "
				  "whole heads; accepted: cp_algo=ring, or tp*cp "
				  "dividing %ld)", q, l->model.heads, tp, cp,
				  l->model.heads);
	}
	return 0;
}

/* Fold what the tokens said into the layout and check combinations. */
static int
finish(struct pl_layout *l, const struct parse_state *st, pl_err_t *err)
{
	int a;

	/* The size keys are numbered like the axes. */
	_Static_assert(K_TP == (int)PL_TP && K_CP == (int)PL_CP &&
		       K_EP == (int)PL_EP && K_DP == (int)PL_DP &&
		       K_PP == (int)PL_PP, "key and axis numbers differ");
	l->auto_layout = st->seen[K_AUTO] != NULL;
	for (a = 0; a < PL_NAXES; a++) {
		if (st->seen[a])
			l->size[a] = st->ival[a];
		if (st->seen[a] && st->ival[a] > 0)
			l->given |= PL_GIVEN_AXIS(a);
		else if (l->auto_layout)
			l->size[a] = 0;
	}
	l->dp_auto = !st->seen[K_DP] || st->ival[K_DP] == 0;
	if (st->seen[K_VPP]) {
		l->vpp = st->ival[K_VPP];
		l->given |= PL_GIVEN_VPP;
	}
	if (st->seen[K_SP]) {
		l->sp = st->ival[K_SP] != 0;
		l->given |= PL_GIVEN_SP;
	}
	if (st->seen[K_CPALGO])
		l->given |= PL_GIVEN_CPALGO;
	if (st->seen[K_RECOMPUTE])
		l->given |= PL_GIVEN_RECOMPUTE;
	if (st->seen[K_SEQ]) {
		l->seq = st->ival[K_SEQ];
		l->have_seq = true;
	}
	if (st->seen[K_MBS]) {
		l->mbs = st->ival[K_MBS];
		l->given |= PL_GIVEN_MBS;
	}
	if (st->seen[K_GBS]) {
		l->gbs = st->ival[K_GBS];
		l->given |= PL_GIVEN_GBS;
	}
	if (st->seen[K_ZERO]) {
		l->zero = (int)st->ival[K_ZERO];
		l->given |= PL_GIVEN_ZERO;
	}
	apply_model(l, st);
	if (check_variants(l, st, err) < 0)
		return -1;
	if (l->order_kind == PL_ORDER_TORCHTITAN && l->size[PL_EP] > 1) {
		/*
		 * torchtitan lays its expert mesh out differently from one
		 * release to the next (ep folded into dp_shard*cp with tp
		 * innermost, then later an ep dimension of its own), so no
		 * single answer would be right.
		 */
		char q[PL_CLIP_BUF];

		pl_err_set(err, "'%s': ep%ld is not supported with "
			   "order=torchtitan (its expert mesh layout differs "
			   "between releases); use order=megatron or ep1",
			   quote(q, sizeof(q), st->seen[K_EP]), l->size[PL_EP]);
		return -1;
	}
	return 0;
}

int
layout_parse(const char *spec, struct pl_layout *out, pl_err_t *err)
{
	struct parse_state st;
	struct pl_layout l;
	char *copy = NULL, *p;
	size_t len, pos = 0;
	int rv = -1;

	layout_defaults(&l);
	memset(&st, 0, sizeof(st));
	if (!spec || !*spec) {
		pl_err_set(err, "empty layout spec (expected comma-separated "
			   "items such as tp8,pp4)");
		goto out;
	}
	len = strlen(spec);
	if (len > SPEC_MAX) {
		pl_err_set(err, "layout spec is %zu bytes long (at most %d "
			   "accepted)", len, SPEC_MAX);
		goto out;
	}
	if (check_bytes(spec, len, err) < 0)
		goto out;
	copy = strdup(spec);
	if (!copy) {
		pl_err_set(err, "out of memory");
		goto out;
	}
	p = copy;
	for (;;) {
		size_t n = strcspn(p, ",");
		bool last = p[n] == '\0';
		char q[PL_CLIP_BUF];

		if (n == 0) {
			pl_err_set(err, "'%s': empty item at position %zu "
				   "(doubled, leading or trailing comma?)",
				   quote(q, sizeof(q), spec), pos + 1);
			goto out;
		}
		p[n] = '\0';
		if (parse_token(p, &l, &st, err) < 0)
			goto out;
		if (last)
			break;
		p += n + 1;
		pos += n + 1;
	}
	if (finish(&l, &st, err) < 0)
		goto out;
	*out = l;
	rv = 0;
out:
	free(copy);
	return rv;
}

long
layout_model_parallel(const struct pl_layout *l)
{
	return mul_sat(mul_sat(l->size[PL_TP], l->size[PL_CP]),
		       l->size[PL_PP]);
}

long
layout_world(const struct pl_layout *l)
{
	return mul_sat(layout_model_parallel(l), l->size[PL_DP]);
}

long
layout_expert_dp(const struct pl_layout *l)
{
	long w = layout_world(l);
	long m = mul_sat(mul_sat(l->size[PL_TP], l->size[PL_EP]),
			 l->size[PL_PP]);

	if (w <= 0 || m <= 0 || w % m != 0)
		return 0;
	return w / m;
}

/* "tp8 x pp2": the named axes that are not 1, for messages. */
static void
describe(const struct pl_layout *l, const enum pl_axis *axes, int n,
	 char *buf, size_t size)
{
	size_t used = 0;
	int i, shown = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		int w;

		if (l->size[axes[i]] == 1 && !(i == n - 1 && shown == 0))
			continue;
		w = snprintf(buf + used, size - used, "%s%s%ld",
			     shown ? " x " : "", axis_names[axes[i]],
			     l->size[axes[i]]);
		if (w < 0 || (size_t)w >= size - used)
			return;
		used += (size_t)w;
		shown++;
	}
}

/* Megatron-Core's checks on the expert rank generator. */
static int
check_expert(const struct pl_layout *l, long world, pl_err_t *err)
{
	static const enum pl_axis eaxes[] = { PL_TP, PL_EP, PL_PP };
	long etp_ep_pp = mul_sat(mul_sat(l->size[PL_TP], l->size[PL_EP]),
				 l->size[PL_PP]);
	char d[96];
	long edp;

	describe(l, eaxes, 3, d, sizeof(d));
	if (world % etp_ep_pp != 0)
		return pl_err_set(err, "world size %ld is not a multiple of the "
				  "expert tp*ep*pp = %ld (%s; the expert "
				  "tensor parallel size is tp)", world,
				  etp_ep_pp, d);
	edp = world / etp_ep_pp;
	if (l->order_kind != PL_ORDER_MEGATRON)
		return pl_err_set(err, "ep%ld is not supported with order=%s "
				  "(use order=megatron or ep1)",
				  l->size[PL_EP], l->order_name);
	if (l->order[PL_NAXES - 1] != PL_PP && l->size[PL_PP] > 1 &&
	    edp != l->size[PL_DP])
		return pl_err_set(err, "order=%s with ep%ld: when pp is not the "
				  "outermost axis Megatron-Core requires the "
				  "expert data parallel size (%ld) to equal dp "
				  "(%ld), i.e. ep = cp (cp%ld); use "
				  "order=megatron or change ep",
				  l->order_name, l->size[PL_EP], edp,
				  l->size[PL_DP], l->size[PL_CP]);
	if (!order_pp_groups_agree(l))
		return pl_err_set(err, "order=%s with ep%ld: Megatron-Core "
				  "requires the expert and dense pipeline "
				  "groups to coincide and they do not (the pp "
				  "stride is tp*cp for dense ranks and tp*ep "
				  "for expert ranks in this order); use "
				  "order=megatron or ep = cp",
				  l->order_name, l->size[PL_EP]);
	return 0;
}

int
layout_resolve(struct pl_layout *l, long world, pl_err_t *err)
{
	static const enum pl_axis mp_axes[] = { PL_TP, PL_CP, PL_PP };
	static const enum pl_axis all_axes[] = { PL_TP, PL_CP, PL_PP, PL_DP };
	long mp, prod, dp;
	char d[128];
	int a;

	if (l->auto_layout)
		return pl_err_set(err, "auto: the layout is chosen by the planner "
				  "(plan_auto), not resolved as given; plan it with "
				  "layoutctl plan --layout auto,... or pin every size "
				  "and leave out auto");
	if (world <= 0)
		return pl_err_set(err, "world size %ld must be positive", world);
	if (world > WORLD_MAX)
		return pl_err_set(err, "world size %ld is above the supported "
				  "maximum %ld", world, WORLD_MAX);
	for (a = 0; a < PL_NAXES; a++)
		if (a != PL_DP && (l->size[a] < 1 || l->size[a] > SIZE_MAX_AXIS))
			return pl_err_set(err, "%s%ld is out of range (1 to "
					  "%ld)", axis_names[a], l->size[a],
					  SIZE_MAX_AXIS);
	mp = layout_model_parallel(l);
	describe(l, mp_axes, 3, d, sizeof(d));
	if (l->dp_auto) {
		if (world % mp != 0)
			return pl_err_set(err, "world size %ld is not a multiple "
					  "of tp*cp*pp = %ld (%s)", world, mp,
					  d);
		dp = world / mp;
	} else {
		dp = l->size[PL_DP];
		prod = mul_sat(mp, dp);
		if (prod != world) {
			describe(l, all_axes, 4, d, sizeof(d));
			return pl_err_set(err, "tp*cp*pp*dp = %ld (%s) does not "
					  "equal the world size %ld (leave dp "
					  "out or write dp=auto to derive it)",
					  prod, d, world);
		}
	}
	if (l->mbs < 1)
		return pl_err_set(err, "mbs=%ld must be positive", l->mbs);
	l->size[PL_DP] = dp;
	if (l->gbs > 0 && l->gbs % mul_sat(l->mbs, dp) != 0) {
		return pl_err_set(err, "gbs=%ld is not divisible by mbs*dp = %ld "
				  "(mbs=%ld, dp=%ld at world size %ld)", l->gbs,
				  mul_sat(l->mbs, dp), l->mbs, dp, world);
	}
	if (l->size[PL_EP] > 1 && check_expert(l, world, err) < 0)
		return -1;
	return 0;
}

/* snprintf into buf at *used, counting what would have been needed. */
static void __attribute__((format(printf, 4, 5)))
emit(char *buf, unsigned long size, size_t *used, const char *fmt, ...)
{
	va_list ap;
	size_t room = *used < size ? size - *used : 0;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? buf + *used : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used += (size_t)n;
}

/* The sizes: every one of a chosen layout (tp always, the rest when not
 * 1), only the given ones of an auto layout still to be chosen. */
static void
format_sizes(const struct pl_layout *l, char *buf, unsigned long size, size_t *used)
{
	static const enum pl_axis shown[] = { PL_CP, PL_EP, PL_PP };
	static const enum pl_axis all[] = { PL_TP, PL_CP, PL_EP, PL_PP, PL_DP };
	size_t i;

	if (l->auto_layout) {
		emit(buf, size, used, "auto");
		for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			if ((l->given & PL_GIVEN_AXIS(all[i])) && l->size[all[i]] > 0)
				emit(buf, size, used, ",%s%ld", axis_names[all[i]],
				     l->size[all[i]]);
		return;
	}
	emit(buf, size, used, "tp%ld", l->size[PL_TP]);
	for (i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
		if (l->size[shown[i]] != 1)
			emit(buf, size, used, ",%s%ld", axis_names[shown[i]],
			     l->size[shown[i]]);
	if (l->size[PL_DP] > 0)
		emit(buf, size, used, ",dp%ld", l->size[PL_DP]);
}

static void
format_model(const struct pl_layout *l, char *buf, unsigned long size, size_t *used)
{
	const struct pl_model *m = &l->model;
	const struct pl_model *p = layout_model_preset(m->name);

	if (!l->have_model)
		return;
	if (p)
		emit(buf, size, used, ",model=%s", p->name);
	if (!p || m->params != p->params)
		emit(buf, size, used, ",params=%.0f", m->params);
	if (!p || m->hidden != p->hidden)
		emit(buf, size, used, ",hidden=%ld", m->hidden);
	if (!p || m->layers != p->layers)
		emit(buf, size, used, ",layers=%ld", m->layers);
	if (!p || m->heads != p->heads)
		emit(buf, size, used, ",heads=%ld", m->heads);
	if (!p || m->vocab != p->vocab)
		emit(buf, size, used, ",vocab=%ld", m->vocab);
}

int
layout_format(const struct pl_layout *l, char *buf, unsigned long size)
{
	static const char *const recompute[] = { "none", "selective", "full" };
	/* an auto layout keeps a pin even at the default value */
	bool a = l->auto_layout;
	size_t used = 0;

	if (buf && size)
		buf[0] = '\0';
	else
		size = 0;
	format_sizes(l, buf, size, &used);
	emit(buf, size, &used, ",order=%s", l->order_name);
	format_model(l, buf, size, &used);
	if (l->seq != DEFAULT_SEQ)
		emit(buf, size, &used, ",seq=%ld", l->seq);
	if (l->mbs != DEFAULT_MBS || (a && (l->given & PL_GIVEN_MBS)))
		emit(buf, size, &used, ",mbs=%ld", l->mbs);
	if (l->gbs != 0 || (a && (l->given & PL_GIVEN_GBS)))
		emit(buf, size, &used, ",gbs=%ld", l->gbs);
	if (l->zero != 0 || (a && (l->given & PL_GIVEN_ZERO)))
		emit(buf, size, &used, ",zero=%d", l->zero);
	if ((l->recompute != PL_RECOMPUTE_NONE || (a && (l->given & PL_GIVEN_RECOMPUTE))) &&
	    (unsigned)l->recompute < sizeof(recompute) / sizeof(recompute[0]))
		emit(buf, size, &used, ",recompute=%s",
		     recompute[l->recompute]);
	if (l->optimizer == PL_OPT_SGD)
		emit(buf, size, &used, ",optimizer=sgd");
	if (l->vpp > 1 || (a && (l->given & PL_GIVEN_VPP)))
		emit(buf, size, &used, ",vpp=%ld", l->vpp > 0 ? l->vpp : 1);
	if (l->sp)
		emit(buf, size, &used, ",sp");
	else if (a && (l->given & PL_GIVEN_SP))
		emit(buf, size, &used, ",sp=off");
	if (l->cp_algo == PL_CP_ULYSSES)
		emit(buf, size, &used, ",cp_algo=ulysses");
	else if (a && (l->given & PL_GIVEN_CPALGO))
		emit(buf, size, &used, ",cp_algo=ring");
	return used > INT_MAX ? INT_MAX : (int)used;
}
