/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the fuzz targets share (see fuzz.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

char *
fuzz_text(const uint8_t *data, size_t size)
{
	size_t n = strnlen((const char *)data, size);
	char *s = malloc(n + 1);

	if (!s)
		abort();
	memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

char **
fuzz_argv(const uint8_t *data, size_t size, const char *first, int *argc)
{
	size_t i, n = 1, k = 0;
	char *copy, **slots, **argv;

	for (i = 0; i < size; i++)
		n += data[i] == '\0';
	/* slots[0] keeps the copy for fuzz_argv_free(); argv starts after it. */
	slots = calloc(n + 3, sizeof(*slots));
	copy = malloc(size + 1);
	if (!slots || !copy)
		abort();
	memcpy(copy, data, size);
	copy[size] = '\0';
	slots[0] = copy;
	argv = slots + 1;
	if (first)
		argv[k++] = (char *)first;
	argv[k++] = copy;
	for (i = 0; i < size; i++)
		if (copy[i] == '\0')
			argv[k++] = copy + i + 1;
	/* A trailing NUL ends the last argument; it does not start another. */
	if (size && data[size - 1] == '\0')
		k--;
	argv[k] = NULL;
	*argc = (int)k;
	return argv;
}

void
fuzz_argv_free(char **argv)
{
	if (!argv)
		return;
	free(argv[-1]);
	free(argv - 1);
}

static char file_path[256];

static void
file_remove(void)
{
	unlink(file_path);
}

const char *
fuzz_file(const uint8_t *data, size_t size)
{
	FILE *f;

	if (!file_path[0]) {
		const char *dir = getenv("TMPDIR");
		int fd;

		snprintf(file_path, sizeof(file_path), "%s/pl-fuzz-XXXXXX",
			 dir && *dir ? dir : "/tmp");
		fd = mkstemp(file_path);
		if (fd < 0) {
			perror(file_path);
			abort();
		}
		close(fd);
		atexit(file_remove);
	}
	f = fopen(file_path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
		perror(file_path);
		abort();
	}
	return file_path;
}

void
fuzz_assert(int ok, const char *what, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	fprintf(stderr, "%s:%d: invariant broken: %s: ", file, line, what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}
