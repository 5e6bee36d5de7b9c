/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A minimal TAP producer for the unit tests (read by automake's
 * tap-driver.sh).  Header-only so each test is one file.
 */
#ifndef PL_TAP_H
#define PL_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n;
static int tap_failed;
static int tap_planned = -1;	/* checks declared by plan(); -1 none */

/*
 * Declare up front how many checks will run.  The plan is printed first, so
 * a check that never runs (an early return, a loop cut short by a bug) makes
 * the TAP driver fail the file instead of shrinking "whatever ran".
 */
static inline void
plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline void __attribute__((format(printf, 2, 0)))
tap_vok(int cond, const char *fmt, va_list ap)
{
	++tap_n;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	vprintf(fmt, ap);
	printf("\n");
	if (!cond)
		++tap_failed;
	fflush(stdout);
}

static inline int __attribute__((format(printf, 2, 3)))
ok(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vok(cond, fmt, ap);
	va_end(ap);
	return cond;
}

static inline void __attribute__((format(printf, 1, 2)))
diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

#define is_int(got, want, ...) do { \
	long long tap_g_ = (long long)(got), tap_w_ = (long long)(want); \
	if (!ok(tap_g_ == tap_w_, __VA_ARGS__)) \
		diag("  got %lld, want %lld", tap_g_, tap_w_); \
} while (0)

#define is_str(got, want, ...) do { \
	const char *tap_g_ = (got), *tap_w_ = (want); \
	int tap_c_ = tap_g_ && tap_w_ ? strcmp(tap_g_, tap_w_) == 0 : tap_g_ == tap_w_; \
	if (!ok(tap_c_, __VA_ARGS__)) \
		diag("  got '%s', want '%s'", tap_g_ ? tap_g_ : "(null)", tap_w_ ? tap_w_ : "(null)"); \
} while (0)

/* Relative tolerance for doubles (absolute near zero). */
#define is_double(got, want, tol, ...) do { \
	double tap_g_ = (got), tap_w_ = (want), tap_t_ = (tol); \
	double tap_s_ = fabs(tap_w_) > 1.0 ? fabs(tap_w_) : 1.0; \
	if (!ok(fabs(tap_g_ - tap_w_) <= tap_t_ * tap_s_, __VA_ARGS__)) \
		diag("  got %.12g, want %.12g", tap_g_, tap_w_); \
} while (0)

/* Substring match, for error messages. */
#define like(got, needle, ...) do { \
	const char *tap_g_ = (got), *tap_w_ = (needle); \
	if (!ok(tap_g_ && strstr(tap_g_, tap_w_) != NULL, __VA_ARGS__)) \
		diag("  '%s' does not contain '%s'", tap_g_ ? tap_g_ : "(null)", tap_w_); \
} while (0)

/* End the file: the exit status is 1 when a check failed or the count
 * differs from plan(). */
static inline int
done_testing(void)
{
	if (tap_planned < 0) {
		printf("1..%d\n", tap_n);
	} else if (tap_n != tap_planned) {
		diag("planned %d checks, ran %d", tap_planned, tap_n);
		return 1;
	}
	return tap_failed ? 1 : 0;
}

#endif
