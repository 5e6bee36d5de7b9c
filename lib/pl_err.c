/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>

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
