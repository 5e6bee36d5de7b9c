/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

int
buf_reserve(struct buf *b, size_t n)
{
	size_t want, cap;
	char *p;

	if (b->bad)
		return -1;
	if (n > SIZE_MAX - b->len - 1 || (b->max && b->len + n > b->max)) {
		b->bad = true;
		return -1;
	}
	want = b->len + n + 1;
	if (want <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	p = realloc(b->s, cap);
	if (!p) {
		b->bad = true;
		return -1;
	}
	b->s = p;
	b->cap = cap;
	b->s[b->len] = '\0';
	return 0;
}

int
buf_add(struct buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

int
buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->bad)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf_reserve(b, (size_t)n) < 0) {
		b->bad = true;
		return -1;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

const char *
buf_str(const struct buf *b)
{
	return b->s && !b->bad ? b->s : "";
}

char *
buf_take(struct buf *b)
{
	char *s;

	if (b->bad) {
		buf_free(b);
		return NULL;
	}
	if (!b->s && buf_reserve(b, 0) < 0)
		return NULL;
	s = b->s;
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

void
buf_free(struct buf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
	b->bad = false;
}
