/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/buf (growable text), pl_clip (inputs made fit to echo) and pl_err_status. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pl_err.h"
#include "tap.h"

static void
test_buf(void)
{
	struct buf b = BUF_INIT;
	char *s;
	int i, rc = 0;

	is_str(buf_str(&b), "", "an empty buffer reads as \"\"");
	for (i = 0; i < 10000; i++)
		rc |= buf_printf(&b, "%d,", i % 10);
	is_int(rc, 0, "10000 appends");
	is_int(b.len, 20000, "length counted");
	ok(b.s[b.len] == '\0', "always NUL-terminated");
	ok(strncmp(b.s, "0,1,2,", 6) == 0, "content kept across growth");
	s = buf_take(&b);
	ok(s && strlen(s) == 20000 && !b.s && b.len == 0, "take hands the text over and empties");
	free(s);

	b.max = 8;
	is_int(buf_adds(&b, "12345678"), 0, "up to the limit");
	is_int(buf_adds(&b, "9"), -1, "past the limit refused");
	ok(b.bad, "and remembered");
	is_int(buf_adds(&b, ""), -1, "later calls are no-ops");
	ok(buf_take(&b) == NULL, "a bad buffer gives NULL");
	ok(!b.s && !b.bad, "and is freed");
	buf_free(&b);

	s = buf_take(&b);
	is_str(s, "", "take of an empty buffer gives \"\"");
	free(s);
}

static void
test_clip(void)
{
	char buf[PL_CLIP_BUF], big[5000];

	is_str(pl_clip("tp8,pp4", buf, sizeof(buf)), "tp8,pp4", "short input as is");
	is_str(pl_clip("a\nb\tc\\", buf, sizeof(buf)), "a\\x0ab\\x09c\\\\", "controls and backslash escaped");
	is_str(pl_clip("\xc3\xa9", buf, sizeof(buf)), "\\xc3\\xa9", "non-ASCII bytes escaped");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	pl_clip(big, buf, sizeof(buf));
	ok(strlen(buf) < 100, "a 4999-byte input is cut (%zu characters)", strlen(buf));
	like(buf, "...(4999 bytes)", "saying how long it was");
	memset(big, '\n', 200);
	pl_clipn(big, 200, buf, sizeof(buf));
	ok(strlen(buf) < sizeof(buf), "all-escaped input fits the buffer");
	is_str(pl_clip(NULL, buf, sizeof(buf)), "(null)", "NULL");
	pl_clip(big, buf, 8);
	ok(strlen(buf) < 8, "a small buffer is never overrun");

	is_str(pl_clip_path("/etc/parallel-layout/cluster.json", buf, sizeof(buf)),
	       "/etc/parallel-layout/cluster.json", "a path is kept whole");
	memset(big, 'd', 300);
	strcpy(big + 300, "/the-file-name.xml");
	pl_clip_path(big, buf, sizeof(buf));
	is_int(strlen(buf), PL_CLIP_PATH_MAX, "a long path is cut to %d characters", PL_CLIP_PATH_MAX);
	ok(strncmp(buf, "...", 3) == 0 && strstr(buf, "/the-file-name.xml"),
	   "keeping its end, the file's name");
	is_str(pl_clip_path("a\nb", buf, sizeof(buf)), "a\\x0ab", "a path is escaped too");
}

static void
test_err_status(void)
{
	pl_err_t e;
	char big[5000];

	pl_err_clear(&e);
	is_int(pl_err_status(&e, 422, "x=%d: want %s", 5, "1 to 4"), 422, "pl_err_status returns the status");
	is_str(e.text, "x=5: want 1 to 4", "and records the message");
	is_int(pl_err_status(&e, 409, "second"), 409, "a later call returns its own status");
	is_str(e.text, "x=5: want 1 to 4", "but the first message wins");
	is_int(pl_err_status(NULL, 500, "out of memory"), 500, "err may be NULL");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	pl_err_clear(&e);
	pl_err_status(&e, 400, "%s", big);
	is_int(strlen(e.text), PL_ERR_TEXT - 1, "a long message is cut to the buffer");
}

int
main(void)
{
	plan(31);
	test_buf();
	test_clip();
	test_err_status();
	return done_testing();
}
