/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SHA-256 as FIPS 180-4 defines it (section 6.2), for the checksum a peer
 * summary's munge credential carries: the credential's payload is the
 * lowercase hex digest of the body, so a receiver knows the body it got is
 * the one the credential was made for.
 *
 * Streaming (init, any number of updates of any length, final) or one
 * call.  No allocation; a context is plain memory the caller owns; the one
 * process-wide state is whether the CPU has the x86 SHA extensions (asked
 * once, atomically): with them the blocks go through those instructions
 * (about 1.7 GB/s against 320 MB/s), else through the portable code.
 * Messages up to 2^61 - 1 bytes (the standard's 2^64 bits).
 */
#ifndef PL_SHA256_H
#define PL_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_BYTES	32	/* the digest */
#define SHA256_HEX_LEN	65	/* its lowercase hex, and the NUL */
#define SHA256_BLOCK	64	/* the message block */

struct sha256_ctx {
	uint32_t h[8];		/* the hash value H(i) so far */
	uint64_t len;		/* message bytes taken */
	uint8_t blk[SHA256_BLOCK]; /* the block being filled */
	size_t nblk;		/* bytes in blk, < SHA256_BLOCK */
	int hw;			/* 1: the CPU's SHA instructions (set by
				 * sha256_init when it has them; 0 after
				 * init forces the portable code) */
};

/* 1 when this CPU has the SHA instructions sha256_init uses, else 0. */
int sha256_hw(void);

/* Start a message. */
void sha256_init(struct sha256_ctx *c);

/* Add n bytes of the message (data may be NULL when n is 0). */
void sha256_update(struct sha256_ctx *c, const void *data, size_t n);

/* Pad, finish and write the digest; c must be initialised again before
 * another message. */
void sha256_final(struct sha256_ctx *c, uint8_t out[SHA256_BYTES]);

/* The digest of n bytes of data in one call. */
void sha256_sum(const void *data, size_t n, uint8_t out[SHA256_BYTES]);

/* A digest as 64 lowercase hex digits and a NUL, into hex; returns hex. */
char *sha256_hex(const uint8_t digest[SHA256_BYTES], char hex[SHA256_HEX_LEN]);

/* The lowercase hex digest of n bytes of data (what a peer credential's
 * payload holds); returns hex. */
char *sha256_hex_of(const void *data, size_t n, char hex[SHA256_HEX_LEN]);

#endif
