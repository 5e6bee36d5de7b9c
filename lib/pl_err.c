/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pl_err.h"

void
pl_err_clear(pl_err_t *err)
{
	if (err)
		err->text[0] = '\0';
}

int
pl_err_set(pl_err_t *err, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->text[0] != '\0')
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return -1;
}

int
pl_err_status(pl_err_t *err, int status, const char *fmt, ...)
{
	va_list ap;

	if (!err || err->text[0] != '\0')
		return status;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return status;
}

int
pl_err_isset(const pl_err_t *err)
{
	return err && err->text[0] != '\0';
}

/* Escape n bytes of s into buf + o; returns the new offset (buf stays
 * NUL-terminated; stops when full). */
static size_t
escape(const char *s, size_t n, char *buf, size_t size, size_t o)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int w;

		if (c >= 0x20 && c < 0x7f && c != '\\')
			w = snprintf(buf + o, size - o, "%c", c);
		else if (c == '\\')
			w = snprintf(buf + o, size - o, "\\\\");
		else
			w = snprintf(buf + o, size - o, "\\x%02x", c);
		if (w < 0 || (size_t)w >= size - o) {
			buf[o] = '\0';
			return size;
		}
		o += (size_t)w;
	}
	return o;
}

const char *
pl_clip_path(const char *path, char *buf, size_t size)
{
	size_t n, o = 0;

	if (!buf || size == 0)
		return "";
	if (!path) {
		snprintf(buf, size, "(null)");
		return buf;
	}
	buf[0] = '\0';
	n = strlen(path);
	if (n > PL_CLIP_PATH_MAX) {
		o = (size_t)snprintf(buf, size, "...");
		if (o >= size)
			return buf;
		path += n - (PL_CLIP_PATH_MAX - 3);
		n = PL_CLIP_PATH_MAX - 3;
	}
	escape(path, n, buf, size, o);
	return buf;
}

const char *
pl_clipn(const char *s, size_t n, char *buf, size_t size)
{
	size_t o, shown;

	if (!buf || size == 0)
		return "";
	if (!s) {
		snprintf(buf, size, "(null)");
		return buf;
	}
	buf[0] = '\0';
	shown = n > PL_CLIP_MAX ? PL_CLIP_MAX : n;
	o = escape(s, shown, buf, size, 0);
	if (o < size && shown < n)
		snprintf(buf + o, size - o, "...(%zu bytes)", n);
	return buf;
}

const char *
pl_clip(const char *s, char *buf, size_t size)
{
	return pl_clipn(s, s ? strlen(s) : 0, buf, size);
}
