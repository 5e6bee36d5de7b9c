/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the fuzz targets share: the input as a C string, as an argv, or as
 * a file for the readers that only take a path, and a check that stops the
 * run (abort, so libFuzzer saves the input) when an invariant breaks.
 */
#ifndef PL_FUZZ_H
#define PL_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* The libFuzzer entry point every target defines. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* data as a NUL-terminated string (cut at its first NUL byte); caller frees. */
char *fuzz_text(const uint8_t *data, size_t size);

/*
 * data split at NUL bytes into an argv of *argc strings, with `first`
 * (when not NULL) as argv[0] and a NULL after the last.  Caller frees
 * with fuzz_argv_free().
 */
char **fuzz_argv(const uint8_t *data, size_t size, const char *first, int *argc);
void fuzz_argv_free(char **argv);

/* The path of a file that now holds exactly data (one file per process,
 * rewritten on each call). */
const char *fuzz_file(const uint8_t *data, size_t size);

/* Abort with the message when cond is false: libFuzzer keeps the input. */
#define FUZZ_ASSERT(cond, ...) fuzz_assert((cond) != 0, #cond, __FILE__, __LINE__, __VA_ARGS__)
void fuzz_assert(int ok, const char *what, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif
