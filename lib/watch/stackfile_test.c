/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The culprit's stacks, the pure parts: which findings are captured, the
 * file's path from hostile patterns and names, the leader's request
 * there and back and every refusal of a hostile one, the header, and the
 * output cap at a line with what was cut.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stackfile.h"
#include "tap.h"

static pl_err_t err;

/* Whether a finding of kind k with evidence ev is captured. */
static bool
wanted_f(enum judge_kind k, int ev)
{
	struct judge_finding f;

	memset(&f, 0, sizeof(f));
	f.kind = k;
	f.evidence = ev;
	return stackfile_wanted(&f);
}

static void
wanted(void)
{
	ok(stackfile_kind(JUDGE_NOT_ENTERED) && stackfile_kind(JUDGE_GPU_STUCK) &&
	   wanted_f(JUDGE_NOT_ENTERED, DETECT_OBSERVED) && wanted_f(JUDGE_GPU_STUCK, DETECT_OBSERVED),
	   "not-entered and gpu-stuck are captured");
	ok(!wanted_f(JUDGE_NOT_ENTERED, DETECT_INFERRED) && !wanted_f(JUDGE_GPU_STUCK, DETECT_INFERRED),
	   "not when inferred (a warning): its culprit may be the wrong one");
	ok(!stackfile_kind(JUDGE_EXITED) && !stackfile_kind(JUDGE_NODE_LOST) &&
	   !wanted_f(JUDGE_EXITED, DETECT_OBSERVED),
	   "an exit and a lost node are not (nothing to attach to)");
	ok(!stackfile_kind(JUDGE_STALLED) && !stackfile_kind(JUDGE_SLOW) &&
	   !stackfile_kind(JUDGE_TP_NETWORK) && !stackfile_kind(JUDGE_FSDP_ROOT) &&
	   !stackfile_kind(JUDGE_PP_BUBBLE), "warnings and advice are not");
}

static void
path_is(const char *pattern, const char *node, int64_t rank, const char *want)
{
	char out[256];
	int rv;

	pl_err_clear(&err);
	rv = stackfile_path(out, sizeof(out), pattern, node, 1234, 5, rank, &err);
	ok(rv == 0 && strcmp(out, want) == 0, "path %s on %s rank %lld: %s (%s)", pattern, node,
	   (long long)rank, want, rv == 0 ? out : err.text);
}

static void
path_refused(const char *pattern, const char *node, size_t size, const char *needle)
{
	char out[256];
	int rv;

	pl_err_clear(&err);
	rv = stackfile_path(out, size, pattern, node, 1234, 5, 13, &err);
	ok(rv == -1 && strstr(err.text, needle), "path %s on '%s' refused: %s", pattern, node,
	   err.text);
}

static void
paths(void)
{
	path_is("/var/lib/parallel-layout", "node3", 13,
		"/var/lib/parallel-layout/1234.5/stack-rank13.txt");
	path_is("/lab/%n/state", "node3", 13, "/lab/node3/state/1234.5/stack-rank13.txt");
	path_is("/a%%b", "n-1.x_y", 0, "/a%b/1234.5/stack-rank0.txt");
	path_is("/s", "node3", -1, "/s/1234.5");
	path_refused("relative/%n", "node3", 256, "absolute");
	path_refused("/s/%x", "node3", 256, "'%x'");
	path_refused("/s/%", "node3", 256, "is not %n");
	path_refused("/s/%n", "../etc", 256, "plain name");
	path_refused("/s/%n", "a/b", 256, "plain name");
	path_refused("/s/%n", "", 256, "plain name");
	path_refused("/s/%n", "node3", 20, "longer than 19 bytes");
}

/* A request encoded, then parsed back whole. */
static void
req_round_trip(void)
{
	struct stackfile_req r[2], back[4];
	json_t *a;
	size_t n = 0;
	int rv;

	memset(r, 0, sizeof(r));
	r[0].job = 77;
	r[0].step = 0;
	r[0].rank = 13;
	r[0].kind = JUDGE_NOT_ENTERED;
	snprintf(r[0].text, sizeof(r[0].text), "rank 13 on node3 has not entered AllReduce");
	r[1] = r[0];
	r[1].rank = 5;
	r[1].kind = JUDGE_GPU_STUCK;
	a = stackfile_req_json(r, 2);
	pl_err_clear(&err);
	rv = a ? stackfile_req_parse(a, back, 4, &n, &err) : -1;
	ok(rv == 0 && n == 2 && back[0].job == 77 && back[0].step == 0 && back[0].rank == 13 &&
	   back[0].kind == JUDGE_NOT_ENTERED && strcmp(back[0].text, r[0].text) == 0 &&
	   back[1].rank == 5 && back[1].kind == JUDGE_GPU_STUCK, "a request of 2 items there and "
	   "back (%s)", rv == 0 ? "parsed" : err.text);
	json_decref(a);
}

static void
req_refused(const char *text, const char *needle, const char *what)
{
	struct stackfile_req out[2];
	json_t *a = json_loads(text, JSON_DECODE_ANY, NULL);
	size_t n = 99;
	int rv;

	pl_err_clear(&err);
	rv = a ? stackfile_req_parse(a, out, 2, &n, &err) : -2;
	ok(rv == -1 && n == 0 && strstr(err.text, needle), "%s: refused (%s)", what, err.text);
	json_decref(a);
}

static void
req_hostile(void)
{
	struct stackfile_req out[2];
	size_t n = 0;
	json_t *a;
	int rv;

	req_refused("{\"job\":1}", "want an array", "an object, not an array");
	req_refused("[1,2,3]", "3 items: want at most 2", "more items than taken");
	req_refused("[7]", "item 0: want an object", "an item not an object");
	req_refused("[{\"job\":-1,\"step\":0,\"rank\":1,\"kind\":\"not-entered\",\"text\":\"\"}]",
		    "want integers", "a negative job");
	req_refused("[{\"job\":1,\"step\":0,\"rank\":2147483648,\"kind\":\"not-entered\",\"text\":\"\"}]",
		    "rank 0 to 2147483647", "a rank past 2^31 - 1");
	req_refused("[{\"job\":1,\"step\":\"0\",\"rank\":1,\"kind\":\"not-entered\",\"text\":\"\"}]",
		    "want integers", "a step as a string");
	req_refused("[{\"job\":1,\"step\":0,\"rank\":1.5,\"kind\":\"not-entered\",\"text\":\"\"}]",
		    "want integers", "a rank as a real");
	req_refused("[{\"job\":1,\"step\":0,\"rank\":1,\"kind\":\"slow\",\"text\":\"\"}]",
		    "kind slow: want not-entered or gpu-stuck", "a warning's kind");
	req_refused("[{\"job\":1,\"step\":0,\"rank\":1,\"kind\":\"exited\",\"text\":\"\"}]",
		    "kind exited", "an exit");
	req_refused("[{\"job\":1,\"step\":0,\"rank\":1,\"text\":\"\"}]", "kind (none)", "no kind");
	req_refused("[{\"job\":1,\"step\":0,\"rank\":1,\"kind\":\"not-entered\"}]",
		    "want a string text", "no text");
	req_refused("[{\"job\":1,\"step\":0,\"rank\":1,\"kind\":\"not-entered\",\"text\":\"\"},5]",
		    "item 1", "a good item then a bad one: none taken");
	{
		char big[600];
		char body[800];

		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		snprintf(body, sizeof(body), "[{\"job\":1,\"step\":0,\"rank\":1,"
			 "\"kind\":\"gpu-stuck\",\"text\":\"%s\"}]", big);
		req_refused(body, "less than 256 bytes", "a text too long");
	}
	a = json_loads("[{\"job\":1,\"step\":2,\"rank\":3,\"kind\":\"gpu-stuck\","
		       "\"text\":\"a\\u001b[2Jb\\nc\",\"later\":true}]", 0, NULL);
	pl_err_clear(&err);
	rv = a ? stackfile_req_parse(a, out, 2, &n, &err) : -1;
	ok(rv == 0 && n == 1 && strcmp(out[0].text, "a?[2Jb?c") == 0,
	   "an unknown key is ignored, the text kept printable (%s)", rv == 0 ? out[0].text : err.text);
	json_decref(a);
}

static void
header(void)
{
	struct stackfile_head h;
	struct buf b = BUF_INIT;

	memset(&h, 0, sizeof(h));
	h.node = "node3";
	h.job = 77;
	h.step = 0;
	h.rank = 13;
	h.pid = 4242;
	h.kind = JUDGE_NOT_ENTERED;
	h.text = "rank 13\non node3";
	h.when_real_ns = UINT64_C(1764766800) * 1000000000u;
	h.tool = "eu-stack -p 4242";
	h.status = "exited 0";
	stackfile_header(&b, &h);
	ok(!b.bad && strcmp(buf_str(&b), "# parallel-layout: the stacks of a critical finding's "
			    "culprit\nnode: node3\nstep: 77.0\nrank: 13\npid: 4242\nfinding: "
			    "not-entered: rank 13?on node3\nwhen: 2025-12-03T13:00:00Z\ntool: "
			    "eu-stack -p 4242\nstatus: exited 0\n\n") == 0,
	   "the header: node, step, rank, pid, the finding, when, the tool and how it ended, "
	   "a newline in the text made '?':\n%s", buf_str(&b));
	buf_free(&b);
}

static void
cap(void)
{
	struct stackfile_out o;
	char line[100];
	int i;

	stackfile_out_init(&o, 1000);
	for (i = 0; i < 30; i++) {
		snprintf(line, sizeof(line), "#%-2d 0x0000000000401234 in sleep_us () at x.c:1\n", i);
		stackfile_out_add(&o, line, strlen(line));
	}
	stackfile_out_end(&o);
	ok(o.b.len < 1100 && o.cut > 0 && strstr(buf_str(&o.b), "#20 ") &&
	   !strstr(buf_str(&o.b), "#21 ") && strstr(buf_str(&o.b), "bytes more cut: a stack file "
						   "keeps 1000 bytes of output]\n"),
	   "30 lines of 47 bytes into a cap of 1000: 21 whole lines, then how many were cut "
	   "(%zu; %zu bytes)", o.cut, o.b.len);
	ok(o.cut == 9 * 47, "the count of what was cut counts the partial line too "
	   "(%zu)", o.cut);
	stackfile_out_free(&o);

	stackfile_out_init(&o, 0);
	stackfile_out_add(&o, "a\033b\0c\td\n", 8);
	stackfile_out_end(&o);
	ok(o.max == STACKFILE_OUT_MAX && o.cut == 0 && o.b.len == 8 &&
	   memcmp(o.b.s, "a?b?c\td\n", 8) == 0, "control bytes and NUL become '?', tab and "
	   "newline stay; nothing cut, no note");
	stackfile_out_free(&o);
}

int
main(void)
{
	wanted();
	paths();
	req_round_trip();
	req_hostile();
	header();
	cap();
	return done_testing();
}
