/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A growable byte buffer, always NUL-terminated, for the readers, the
 * request builders and the clients.  An allocation failure (or passing the
 * optional size limit) is remembered in `bad` and makes every later call a
 * no-op, so a caller can append freely and check once at the end.
 */
#ifndef PL_BUF_H
#define PL_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct buf {
	char *s;		/* NULL until the first append; caller frees (buf_free) */
	size_t len;		/* bytes used, the NUL not counted */
	size_t cap;
	size_t max;		/* 0 = no limit; else len never exceeds it */
	bool bad;		/* out of memory, or the limit was passed */
};

#define BUF_INIT { NULL, 0, 0, 0, false }

/* Make room for n more bytes (and the NUL).  -1 (and bad set) on failure. */
int buf_reserve(struct buf *b, size_t n);

/* Append n bytes of p.  -1 (and bad set) on failure. */
int buf_add(struct buf *b, const void *p, size_t n);

/* Append a string. */
int buf_adds(struct buf *b, const char *s);

/* Append printf-style. */
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The text, "" while empty (never NULL); owned by b. */
const char *buf_str(const struct buf *b);

/* Hand the text over: caller frees; b is empty afterwards.  NULL when b is
 * bad (and then b is freed) or out of memory. */
char *buf_take(struct buf *b);

/* Free and reset (keeps max). */
void buf_free(struct buf *b);

#endif
