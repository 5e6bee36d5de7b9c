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

/*
 * The same, returning status instead of -1: for a caller that answers with
 * a status code (an HTTP handler writes `return pl_err_status(err, 422,
 * ...)`).  err may be NULL.
 */
int pl_err_status(pl_err_t *err, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Nonzero when a message is recorded. */
int pl_err_isset(const pl_err_t *err);

/* How much of an input a message echoes (PL_CLIP_MAX characters, then
 * "...(N bytes)"). */
#define PL_CLIP_MAX 64
/* A file name keeps more, and its end (the part that names the file). */
#define PL_CLIP_PATH_MAX 160
#define PL_CLIP_BUF (4 * PL_CLIP_PATH_MAX + 32)

/*
 * An input made fit to echo in a message or a log line: at most
 * PL_CLIP_MAX characters, the rest summarised as "...(N bytes)", and
 * control or non-ASCII bytes written as \xHH (so a newline cannot forge a
 * log line).  s NULL gives "(null)".  Writes into buf (PL_CLIP_BUF bytes
 * is always enough) and returns it.
 */
const char *pl_clip(const char *s, char *buf, size_t size);

/* The same for n bytes of s that need not end in NUL. */
const char *pl_clipn(const char *s, size_t n, char *buf, size_t size);

/* A file name made fit to echo: escaped like pl_clip, whole up to
 * PL_CLIP_PATH_MAX characters, else "..." and its last characters. */
const char *pl_clip_path(const char *path, char *buf, size_t size);

#endif
