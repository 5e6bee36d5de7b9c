/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Error reporting for lib/: a fixed buffer the caller owns, first error wins
 * (the shape of jansson's json_error_t).  lib/ never prints, logs or exits;
 * it returns -1 or NULL and fills one of these.
 */
#ifndef PL_ERR_H
#define PL_ERR_H

#include <stddef.h>

#define PL_ERR_TEXT 512

typedef struct pl_err {
	char text[PL_ERR_TEXT];
} pl_err_t;

/* Empty the error.  err may be NULL. */
void pl_err_clear(pl_err_t *err);

/*
 * Record a printf-style message unless one is already recorded.  err may be
 * NULL.  Always returns -1 so a caller can write `return pl_err_set(...)`.
 */
int pl_err_set(pl_err_t *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Nonzero when a message is recorded. */
int pl_err_isset(const pl_err_t *err);

#endif
