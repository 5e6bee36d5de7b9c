/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SHA-256 from FIPS 180-4 (see sha256.h); the section numbers are the standard's. */
#include <stdatomic.h>
#include <string.h>

#include "sha256.h"

/*
 * The x86 SHA extensions (SHA256RNDS2, SHA256MSG1, SHA256MSG2) do the
 * same rounds and message schedule in hardware, about five times faster
 * than the portable code: a leader checks every peer summary's digest, so
 * that is a few percent of a core on a large step.  Used when the CPU has
 * them (CPUID), else the portable compress() below; both give the same
 * digest (the test runs both).
 */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SHA_NI 1
#include <cpuid.h>
#include <immintrin.h>
#endif

/* 4.2.2: the first 32 bits of the fractional parts of the cube roots of
 * the first 64 primes. */
static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5,
	0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
	0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
	0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

/* 5.3.3: the first 32 bits of the fractional parts of the square roots of
 * the first 8 primes. */
static const uint32_t H0[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
};

/* 2.2.2 and 4.1.2 (n is never 0 here, so no shift by 32). */
static inline uint32_t
rotr(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static inline uint32_t
ch(uint32_t x, uint32_t y, uint32_t z)
{
	return (x & y) ^ (~x & z);
}

static inline uint32_t
maj(uint32_t x, uint32_t y, uint32_t z)
{
	return (x & y) ^ (x & z) ^ (y & z);
}

static inline uint32_t
big_sigma0(uint32_t x)
{
	return rotr(x, 2) ^ rotr(x, 13) ^ rotr(x, 22);
}

static inline uint32_t
big_sigma1(uint32_t x)
{
	return rotr(x, 6) ^ rotr(x, 11) ^ rotr(x, 25);
}

static inline uint32_t
small_sigma0(uint32_t x)
{
	return rotr(x, 7) ^ rotr(x, 18) ^ (x >> 3);
}

static inline uint32_t
small_sigma1(uint32_t x)
{
	return rotr(x, 17) ^ rotr(x, 19) ^ (x >> 10);
}

/* 6.2.2: one 512-bit block into the hash value.  The words of a block are
 * big-endian (3.1). */
static void
compress(uint32_t h[8], const uint8_t *m)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2;
	int t;

	for (t = 0; t < 16; t++)
		w[t] = (uint32_t)m[4 * t] << 24 | (uint32_t)m[4 * t + 1] << 16 |
		       (uint32_t)m[4 * t + 2] << 8 | (uint32_t)m[4 * t + 3];
	for (t = 16; t < 64; t++)
		w[t] = small_sigma1(w[t - 2]) + w[t - 7] + small_sigma0(w[t - 15]) + w[t - 16];
	a = h[0];
	b = h[1];
	c = h[2];
	d = h[3];
	e = h[4];
	f = h[5];
	g = h[6];
	hh = h[7];
	for (t = 0; t < 64; t++) {
		t1 = hh + big_sigma1(e) + ch(e, f, g) + K[t] + w[t];
		t2 = big_sigma0(a) + maj(a, b, c);
		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += hh;
}

#ifdef HAVE_SHA_NI
/*
 * n blocks with the SHA extensions.  The instructions keep the eight
 * working variables as two vectors, ABEF and CDGH (A in the top lane);
 * SHA256RNDS2 does two rounds with W+K of two words, SHA256MSG1 and
 * SHA256MSG2 the two halves of the schedule's recurrence for four words
 * (the W[t-7] term is added between them).
 */
__attribute__((target("sha,ssse3,sse4.1"))) static void
compress_ni(uint32_t h[8], const uint8_t *m, size_t n)
{
	/* Each 32-bit word of a block is big-endian. */
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i abef, cdgh, abef0, cdgh0, w[4], wk, t, u;
	int g;

	/* h[0..3] = A B C D and h[4..7] = E F G H, lane 0 first. */
	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)h), 0xb1);	/* B A D C */
	u = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(h + 4)), 0x1b); /* H G F E */
	abef = _mm_alignr_epi8(t, u, 8);	/* F E B A */
	cdgh = _mm_blend_epi16(u, t, 0xf0);	/* H G D C */
	for (; n > 0; n--, m += SHA256_BLOCK) {
		abef0 = abef;
		cdgh0 = cdgh;
		for (g = 0; g < 16; g++) {
			__m128i *x = &w[g & 3];

			if (g < 4) {
				*x = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(m + 16 * g)),
						      bswap);
			} else {
				/* W[t..t+3] from W[t-16..t-13], W[t-15..t-12],
				 * W[t-7..t-4] and W[t-4..t-1]. */
				t = _mm_sha256msg1_epu32(*x, w[(g + 1) & 3]);
				t = _mm_add_epi32(t, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
				*x = _mm_sha256msg2_epu32(t, w[(g + 3) & 3]);
			}
			wk = _mm_add_epi32(*x, _mm_loadu_si128((const __m128i *)(K + 4 * g)));
			cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
			wk = _mm_shuffle_epi32(wk, 0x0e);
			abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);
		}
		abef = _mm_add_epi32(abef, abef0);
		cdgh = _mm_add_epi32(cdgh, cdgh0);
	}
	t = _mm_shuffle_epi32(abef, 0x1b);	/* A B E F */
	u = _mm_shuffle_epi32(cdgh, 0xb1);	/* G H C D */
	_mm_storeu_si128((__m128i *)h, _mm_blend_epi16(t, u, 0xf0));
	_mm_storeu_si128((__m128i *)(h + 4), _mm_alignr_epi8(u, t, 8));
}

/* CPUID: SHA (leaf 7 EBX bit 29), SSSE3 and SSE4.1 (leaf 1 ECX bits 9
 * and 19).  Asked once per process (CPUID can cost a virtual machine an
 * exit): -1 not asked yet. */
static int
have_sha_ni(void)
{
	static _Atomic int known = -1;
	unsigned a, b, c, d;
	int v = atomic_load_explicit(&known, memory_order_relaxed);

	if (v >= 0)
		return v;
	v = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 9)) && (c & (1u << 19)) &&
	    __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29));
	atomic_store_explicit(&known, v, memory_order_relaxed);
	return v;
}
#endif

/* n whole blocks of p into the hash value. */
static void
blocks(struct sha256_ctx *c, const uint8_t *p, size_t n)
{
#ifdef HAVE_SHA_NI
	/* c->hw is the caller's to clear, never to claim what the CPU lacks. */
	if (c->hw && have_sha_ni()) {
		compress_ni(c->h, p, n);
		return;
	}
#endif
	for (; n > 0; n--, p += SHA256_BLOCK)
		compress(c->h, p);
}

int
sha256_hw(void)
{
#ifdef HAVE_SHA_NI
	return have_sha_ni();
#else
	return 0;
#endif
}

void
sha256_init(struct sha256_ctx *c)
{
	memcpy(c->h, H0, sizeof(c->h));
	c->len = 0;
	c->nblk = 0;
	c->hw = sha256_hw();
}

void
sha256_update(struct sha256_ctx *c, const void *data, size_t n)
{
	const uint8_t *p = data;

	if (n == 0)
		return;
	c->len += n;
	/* Top up a block begun by an earlier call. */
	if (c->nblk) {
		size_t k = SHA256_BLOCK - c->nblk;

		if (k > n)
			k = n;
		memcpy(c->blk + c->nblk, p, k);
		c->nblk += k;
		p += k;
		n -= k;
		if (c->nblk < SHA256_BLOCK)
			return;
		blocks(c, c->blk, 1);
		c->nblk = 0;
	}
	/* Whole blocks straight from the caller's memory. */
	if (n >= SHA256_BLOCK) {
		blocks(c, p, n / SHA256_BLOCK);
		p += n - n % SHA256_BLOCK;
		n %= SHA256_BLOCK;
	}
	if (n) {
		memcpy(c->blk, p, n);
		c->nblk = n;
	}
}

void
sha256_final(struct sha256_ctx *c, uint8_t out[SHA256_BYTES])
{
	/* 5.1.1: a 1 bit, zeros up to 448 mod 512 bits, the length in bits
	 * as a 64-bit big-endian number. */
	uint64_t bits = c->len << 3;
	int i;

	c->blk[c->nblk++] = 0x80;
	if (c->nblk > SHA256_BLOCK - 8) {
		memset(c->blk + c->nblk, 0, SHA256_BLOCK - c->nblk);
		blocks(c, c->blk, 1);
		c->nblk = 0;
	}
	memset(c->blk + c->nblk, 0, SHA256_BLOCK - 8 - c->nblk);
	for (i = 0; i < 8; i++)
		c->blk[SHA256_BLOCK - 1 - i] = (uint8_t)(bits >> (8 * i));
	blocks(c, c->blk, 1);
	/* 6.2.2: the digest is H(N) word by word, big-endian. */
	for (i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(c->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)c->h[i];
	}
	/* Nothing of the message stays behind in the context. */
	memset(c, 0, sizeof(*c));
}

void
sha256_sum(const void *data, size_t n, uint8_t out[SHA256_BYTES])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, data, n);
	sha256_final(&c, out);
}

char *
sha256_hex(const uint8_t digest[SHA256_BYTES], char hex[SHA256_HEX_LEN])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < SHA256_BYTES; i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 0xf];
	}
	hex[2 * SHA256_BYTES] = '\0';
	return hex;
}

char *
sha256_hex_of(const void *data, size_t n, char hex[SHA256_HEX_LEN])
{
	uint8_t d[SHA256_BYTES];

	sha256_sum(data, n, d);
	return sha256_hex(d, hex);
}
