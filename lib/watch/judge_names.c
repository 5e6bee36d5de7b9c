/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The judge's text: lines for people and group names (see judge.h). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "judge_int.h"

void __attribute__((format(printf, 2, 3)))
js_put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (l->len + 1 >= l->size)
		return;
	va_start(ap, fmt);
	k = vsnprintf(l->b + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	if ((size_t)k >= l->size - l->len) {
		l->len = l->size - 1;
		if (l->size >= 4)
			memcpy(l->b + l->size - 4, "...", 4);
		return;
	}
	l->len += (size_t)k;
}

void
js_put_secs(struct line *l, uint64_t ns)
{
	double s = (double)ns / 1e9;

	if (s < 10)
		js_put(l, "%.1f s", s);
	else
		js_put(l, "%.0f s", s);
}

const char *
js_node_name(const struct judge_step *st, uint32_t node)
{
	if (node < st->nnodes && st->nodes[node].name && st->nodes[node].name[0])
		return st->nodes[node].name;
	return "an unknown node";
}

/* "13 on node2 GPU 5" */
void
js_put_where(struct line *l, const struct judge_step *st, const struct judge_rank *r)
{
	js_put(l, "%lld on %s", (long long)r->st.rank, js_node_name(st, r->node));
	if (r->gpu >= 0)
		js_put(l, " GPU %d", (int)r->gpu);
}

/* "rank 13 on node2 GPU 5" or "ranks 13 on node2 GPU 5, 14 on ... and 3
 * more": the first few culprits of a finding, described. */
void
js_put_culprits(struct line *l, const struct judge_step *st, const struct judge_rank *ranks,
	     const uint32_t *ix, size_t n, size_t total)
{
	size_t i, show = n < 3 ? n : 3;

	js_put(l, total == 1 ? "rank " : "ranks ");
	for (i = 0; i < show; i++) {
		if (i)
			js_put(l, i + 1 == show && total == show ? " and " : ", ");
		js_put_where(l, st, &ranks[ix[i]]);
	}
	if (total > show)
		js_put(l, " and %zu more", total - show);
}

/* ---- group names ------------------------------------------------------ */

static const char *const ax_word[NAX6] = { "tp", "cp", "ep", "dp", "pp", "edp" };
static const char *const ax_upper[NAX6] = { "TP", "CP", "EP", "DP", "PP", "EDP" };

/* The axes (bit 1 << axis, AX_EDP included) a name spans, 1 << NAX6 for
 * "world", 0 when the name is not made of those words. */
unsigned
js_name_axes(const char *name)
{
	char w[8];
	unsigned mask = 0;
	size_t i = 0, k;

	if (!name || !*name)
		return 0;
	for (;;) {
		size_t len = 0;

		while (name[i] && name[i] != '-' && name[i] != '_') {
			if (len + 1 >= sizeof(w))
				return 0;
			w[len++] = (char)tolower((unsigned char)name[i++]);
		}
		w[len] = '\0';
		if (strcmp(w, "world") == 0) {
			mask |= 1u << NAX6;
		} else {
			for (k = 0; k < NAX6 && strcmp(w, ax_word[k]) != 0; k++)
				;
			if (k == NAX6)
				return 0;
			mask |= 1u << k;
		}
		if (!name[i])
			break;
		i++;
	}
	return mask;
}

/* A member's coordinate on axis a of six (expert dp derived). */
static uint32_t
coord6(const struct judge_step *st, const uint32_t *co, int a)
{
	uint32_t ep = st->size[JUDGE_EP] ? st->size[JUDGE_EP] : 1;

	if (a == AX_EDP)
		return (co[JUDGE_CP] + st->size[JUDGE_CP] * co[JUDGE_DP]) / ep;
	return co[a];
}

static uint32_t
size6(const struct judge_step *st, int a)
{
	uint32_t ep = st->size[JUDGE_EP] ? st->size[JUDGE_EP] : 1;

	if (a == AX_EDP)
		return st->size[JUDGE_CP] * st->size[JUDGE_DP] / ep;
	return st->size[a] ? st->size[a] : 1;
}

static const int dense[] = { JUDGE_TP, JUDGE_CP, JUDGE_DP, JUDGE_PP };
static const int expert[] = { JUDGE_TP, JUDGE_EP, AX_EDP, JUDGE_PP };

/* The axes a group of n members spans (bits as name_axes'): its name's,
 * else its coordinates'. */
unsigned
js_group_span(const struct judge_step *st, const uint32_t (*co)[JUDGE_NAXES], size_t n,
	   const char *name)
{
	unsigned span = js_name_axes(name);
	const int *axes;
	size_t i;
	int k;

	if (span)
		return span;
	/* From the coordinates: expert axes when ep differs. */
	for (i = 1; i < n; i++)
		if (co[i][JUDGE_EP] != co[0][JUDGE_EP])
			span |= 1u << JUDGE_EP;
	axes = span ? expert : dense;
	for (k = 0; k < 4; k++)
		for (i = 1; i < n; i++)
			if (coord6(st, co[i], axes[k]) != coord6(st, co[0], axes[k]))
				span |= 1u << axes[k];
	return span;
}

void
judge_group_name(const struct judge_step *st, const uint32_t (*co)[JUDGE_NAXES], size_t n,
		 const char *name, char *out, size_t size)
{
	struct line l = { out, size, 0 };
	unsigned span, big = 0;
	const int *axes;
	uint64_t index = 0, stride = 1;
	int k, first = 1;

	if (!size)
		return;
	out[0] = '\0';
	if (!n)
		return;
	span = js_group_span(st, co, n, name);
	axes = span & (1u << JUDGE_EP | 1u << AX_EDP) ? expert : dense;
	for (k = 0; k < 4; k++)
		if (size6(st, axes[k]) > 1)
			big |= 1u << axes[k];
	if ((span & (1u << NAX6)) || (big && (span & big) == big)) {
		js_put(&l, "world");
		return;
	}
	if (!span) {
		/* One member, or members that agree on every coordinate. */
		js_put(&l, "group of %zu rank%s", n, n == 1 ? "" : "s");
		return;
	}
	for (k = 0; k < NAX6; k++) {
		static const int shown[NAX6] = { JUDGE_TP, JUDGE_CP, JUDGE_EP, AX_EDP, JUDGE_DP,
						 JUDGE_PP };

		if (span & (1u << shown[k])) {
			js_put(&l, "%s%s", first ? "" : "-", ax_upper[shown[k]]);
			first = 0;
		}
	}
	for (k = 0; k < 3; k++) {
		if (span & (1u << axes[k]))
			continue;
		index += coord6(st, co[0], axes[k]) * stride;
		stride *= size6(st, axes[k]);
	}
	js_put(&l, " group %llu", (unsigned long long)index);
	if (!(span & (1u << JUDGE_PP)) && size6(st, JUDGE_PP) > 1)
		js_put(&l, " of PP stage %u", co[0][JUDGE_PP]);
}
