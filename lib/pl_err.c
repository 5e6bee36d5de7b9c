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
pl_err_isset(const pl_err_t *err)
{
	return err && err->text[0] != '\0';
}

const char *
pl_clipn(const char *s, size_t n, char *buf, size_t size)
{
	size_t i, o = 0, shown;

	if (!buf || size == 0)
		return "";
	if (!s) {
		snprintf(buf, size, "(null)");
		return buf;
	}
	shown = n > PL_CLIP_MAX ? PL_CLIP_MAX : n;
	for (i = 0; i < shown; i++) {
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
			return buf;
		}
		o += (size_t)w;
	}
	if (shown < n)
		snprintf(buf + o, size - o, "...(%zu bytes)", n);
	return buf;
}

const char *
pl_clip(const char *s, char *buf, size_t size)
{
	return pl_clipn(s, s ? strlen(s) : 0, buf, size);
}
