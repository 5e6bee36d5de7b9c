/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The summary batch walk (sum_batch_check, sum_batch_next): the input is a
 * batch a relay sent.  What the check accepts walks to exactly its count of
 * items, each inside the input, and built again item by item with
 * sum_batch_add it gives back the very bytes that came; what it refuses,
 * the walk refuses too before reaching the end.  Each accepted item then
 * goes through sum_decode, as the leader does, which must not crash on it.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "summary.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf again = BUF_INIT;
	const void *s;
	size_t off = 0, sl;
	uint64_t hold;
	long count, seen = 0;
	int rv;
	pl_err_t err;

	pl_err_clear(&err);
	count = sum_batch_check(data, size, &err);
	FUZZ_ASSERT((count < 0) == (err.text[0] != '\0'), "a refusal says why, nothing else does");
	if (count < 0) {
		while ((rv = sum_batch_next(data, size, &off, &s, &sl, &hold, &err)) == 1)
			seen++;
		/* walked to a clean end: then the count it carries is not what it holds */
		FUZZ_ASSERT(rv < 0 || size < SUM_BATCH_HEADER_BYTES ||
			    (uint32_t)(data[12] | data[13] << 8 | data[14] << 16 |
				       (uint32_t)data[15] << 24) != (uint32_t)seen,
			    "a refused batch walks clean to its own count");
		return 0;
	}
	FUZZ_ASSERT(count >= 1 && count <= (long)SUM_BATCH_MAX_ITEMS, "count %ld", count);
	FUZZ_ASSERT(sum_batch_begin(&again, &err) == 0, "begin");
	while ((rv = sum_batch_next(data, size, &off, &s, &sl, &hold, &err)) == 1) {
		struct sum_header h;
		struct detect_rank *r;
		struct sum_rank_info *in;
		size_t n;
		pl_err_t e2;

		seen++;
		FUZZ_ASSERT((const uint8_t *)s >= data && (const uint8_t *)s + sl <= data + size,
			    "item %ld inside the input", seen);
		FUZZ_ASSERT(sl >= 1 && sl <= SUM_MAX_BYTES && hold <= SUM_MAX_AGE_NS, "item %ld "
			    "bounds", seen);
		FUZZ_ASSERT(sum_batch_add(&again, s, sl, hold, &err) == 0, "item %ld added again",
			    seen);
		pl_err_clear(&e2);
		if (sum_decode(s, sl, UINT64_MAX / 2, &h, &r, &in, &n, &e2) == 0) {
			free(r);
			free(in);
		}
	}
	FUZZ_ASSERT(rv == 0 && seen == count && off == size, "the walk ends at the count");
	FUZZ_ASSERT(again.len == size && memcmp(again.s, data, size) == 0,
		    "built again, the same bytes");
	buf_free(&again);
	return 0;
}
