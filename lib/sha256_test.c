/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SHA-256 against the standard's examples (FIPS 180-4's example messages,
 * published by NIST: "", "abc", the 448- and 896-bit messages, one million
 * 'a'), messages whose length sits at each padding boundary (55, 56, 57,
 * 63, 64, 65 and 127-129 bytes), and streaming in every chunk size from 1
 * to 130 bytes against the one-shot digest: each through the portable
 * code and through the CPU's SHA instructions (skipped where it has none),
 * and the two paths against each other on every length up to 1000 bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "tap.h"

#define M448 "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
#define M896 "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno" \
	"ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"

static const struct {
	const char *msg;
	const char *hex;
} examples[] = {
	{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ M448, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ M896, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
};

#define MILLION_A "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

/* Byte i of the boundary messages: (7 i + 3) mod 256. */
static const struct {
	size_t len;
	const char *hex;
} bounds[] = {
	{ 55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b" },
	{ 56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27" },
	{ 57, "35df609437dcfea3279283ab79fd554e2bf78f8f7ae2de532d8ee300b09e8f73" },
	{ 63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055" },
	{ 64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241" },
	{ 65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e" },
	{ 127, "a8d23e75d936f303d248888d9b165ee543f4cbafcad3c9dd2a79bd84faa11d07" },
	{ 128, "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6" },
	{ 129, "307f8fc2c1622b92762e818d39a185d4d667ad49a4b07ceae1f4afa008a93ec4" },
};

#define NEX	(sizeof(examples) / sizeof(examples[0]))
#define NBOUND	(sizeof(bounds) / sizeof(bounds[0]))
#define MAXCHUNK 130
/* Checks per path: the examples, the million, the boundaries, streaming. */
#define NPATH	((int)NEX + 2 + (int)NBOUND + 2)

static int hw;			/* the path under test: 1 the SHA instructions */
static const char *path = "portable";

static void
init(struct sha256_ctx *c)
{
	sha256_init(c);
	c->hw = hw;
}

/* The lowercase hex digest of n bytes through the path under test. */
static char *
hex_of(const void *m, size_t n, char hex[SHA256_HEX_LEN])
{
	uint8_t d[SHA256_BYTES];
	struct sha256_ctx c;

	init(&c);
	sha256_update(&c, m, n);
	sha256_final(&c, d);
	return sha256_hex(d, hex);
}

static void
t_examples(void)
{
	char hex[SHA256_HEX_LEN];
	size_t i;

	for (i = 0; i < NEX; i++)
		is_str(hex_of(examples[i].msg, strlen(examples[i].msg), hex), examples[i].hex,
		       "%s: FIPS 180-4 example: %zu-bit message", path, 8 * strlen(examples[i].msg));
}

/* One million 'a', fed as 1000 updates of 1000 bytes (the NIST long
 * message), and in one call. */
static void
t_million(void)
{
	char *a = malloc(1000000), hex[SHA256_HEX_LEN];
	uint8_t d[SHA256_BYTES];
	struct sha256_ctx c;
	int i;

	if (!a) {
		ok(0, "one million 'a': out of memory");
		ok(0, "one million 'a' in one call: out of memory");
		return;
	}
	memset(a, 'a', 1000000);
	init(&c);
	for (i = 0; i < 1000; i++)
		sha256_update(&c, a, 1000);
	sha256_final(&c, d);
	is_str(sha256_hex(d, hex), MILLION_A, "%s: one million 'a' in 1000-byte updates", path);
	is_str(hex_of(a, 1000000, hex), MILLION_A, "%s: one million 'a' in one call", path);
	free(a);
}

static void
t_bounds(void)
{
	uint8_t m[129];
	char hex[SHA256_HEX_LEN];
	size_t i;

	for (i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)(7 * i + 3);
	for (i = 0; i < NBOUND; i++)
		is_str(hex_of(m, bounds[i].len, hex), bounds[i].hex, "%s: %zu bytes (padding boundary)",
		       path, bounds[i].len);
}

/*
 * Every chunk size from 1 to MAXCHUNK over a 1000-byte message (and its
 * first 0..200 bytes for a few sizes): the streamed digest is the
 * one-shot one.  Empty updates in between change nothing.
 */
static void
t_stream(void)
{
	uint8_t m[1000], one[SHA256_BYTES], got[SHA256_BYTES];
	struct sha256_ctx c;
	size_t i, k, len, bad = 0, badlen = 0;

	for (i = 0; i < sizeof(m); i++)
		m[i] = (uint8_t)(i * 131 + (i >> 3));
	init(&c);
	sha256_update(&c, m, sizeof(m));
	sha256_final(&c, one);
	for (k = 1; k <= MAXCHUNK; k++) {
		init(&c);
		for (i = 0; i < sizeof(m); i += k) {
			sha256_update(&c, m + i, sizeof(m) - i < k ? sizeof(m) - i : k);
			sha256_update(&c, NULL, 0);
		}
		sha256_final(&c, got);
		if (memcmp(got, one, sizeof(one)) != 0) {
			if (!bad)
				diag("  chunks of %zu bytes differ", k);
			bad++;
		}
	}
	ok(bad == 0, "%s: 1000 bytes streamed in chunks of 1..%d bytes: the one-shot digest "
	   "(%zu differ)", path, MAXCHUNK, bad);
	/* Each length 0..200, split at every 3rd, 7th and 64th byte. */
	for (len = 0; len <= 200; len++) {
		const size_t sizes[] = { 3, 7, 64 };

		init(&c);
		sha256_update(&c, m, len);
		sha256_final(&c, one);
		for (k = 0; k < 3; k++) {
			init(&c);
			for (i = 0; i < len; i += sizes[k])
				sha256_update(&c, m + i, len - i < sizes[k] ? len - i : sizes[k]);
			sha256_final(&c, got);
			badlen += memcmp(got, one, sizeof(one)) != 0;
		}
	}
	ok(badlen == 0, "%s: every length 0..200 streamed in 3-, 7- and 64-byte chunks: the one-shot "
	   "digest (%zu differ)", path, badlen);
}

/* The hex form: lowercase, 64 digits, NUL-terminated, the digest's bytes
 * in order. */
static void
t_hex(void)
{
	uint8_t d[SHA256_BYTES];
	char hex[SHA256_HEX_LEN + 1];
	int i;

	for (i = 0; i < SHA256_BYTES; i++)
		d[i] = (uint8_t)(i * 8 + (i & 1 ? 0xf0 : 0x0a));
	memset(hex, 'X', sizeof(hex));
	sha256_hex(d, hex);
	is_str(hex, "0af81a082a183a284a385a486a587a688a789a88aa98baa8cab8dac8ead8fae8",
	       "hex: lowercase, two digits a byte, in byte order");
	is_int(hex[64], 0, "hex: ends in NUL after 64 digits");
	is_int(hex[65], 'X', "hex: writes nothing past SHA256_HEX_LEN");
}

/* Every length 0..1000 of a pseudo-random message, both paths, and the
 * one-shot call (whichever path it takes). */
static void
t_paths_agree(void)
{
	static uint8_t m[1000];
	uint8_t a[SHA256_BYTES], b[SHA256_BYTES], o[SHA256_BYTES];
	struct sha256_ctx c;
	uint32_t x = 2463534242u;
	size_t i, len, bad = 0;

	for (i = 0; i < sizeof(m); i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		m[i] = (uint8_t)x;
	}
	for (len = 0; len <= sizeof(m); len++) {
		sha256_init(&c);
		c.hw = 0;
		sha256_update(&c, m, len);
		sha256_final(&c, a);
		sha256_init(&c);
		c.hw = 1;
		sha256_update(&c, m, len);
		sha256_final(&c, b);
		sha256_sum(m, len, o);
		bad += memcmp(a, b, sizeof(a)) != 0 || memcmp(a, o, sizeof(a)) != 0;
	}
	ok(bad == 0, "portable and SHA instructions agree on every length 0..1000 (%zu differ)", bad);
}

static void
run_path(void)
{
	t_examples();
	t_million();
	t_bounds();
	t_stream();
}

int
main(void)
{
	int i;

	plan(2 * NPATH + 3 + 1);
	diag("this CPU %s the SHA instructions", sha256_hw() ? "has" : "does not have");
	run_path();
	hw = 1;
	path = "SHA instructions";
	if (sha256_hw())
		run_path();
	else
		for (i = 0; i < NPATH; i++)
			ok(1, "SHA instructions # SKIP this CPU has none");
	t_hex();
	if (sha256_hw())
		t_paths_agree();
	else
		ok(1, "paths agree # SKIP this CPU has no SHA instructions");
	return done_testing();
}
