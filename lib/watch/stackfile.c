/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The culprit's stacks, the pure parts (stackfile.h): which findings,
 * where the file is, the leader's request, the header, the output cap.
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "alerts.h"
#include "stackfile.h"

#define RANK_MAX INT64_C(2147483647)

bool
stackfile_kind(enum judge_kind k)
{
	if (k == JUDGE_EXITED || k == JUDGE_NODE_LOST || judge_kind_advice(k))
		return false;
	return strcmp(alert_kind_severity(k), "critical") == 0;
}

bool
stackfile_wanted(const struct judge_finding *f)
{
	return stackfile_kind(f->kind) && strcmp(alert_severity(f), "critical") == 0;
}

/* A node name as it goes into a path: letters, digits, '.', '_', '-', not
 * starting with '.'. */
static bool
plain_node(const char *s)
{
	if (!*s || *s == '.')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' && *s != '-')
			return false;
	return true;
}

int
stackfile_path(char *out, size_t n, const char *pattern, const char *node, uint64_t job,
	       uint64_t step, int64_t rank, pl_err_t *err)
{
	struct buf b = BUF_INIT;
	const char *p;
	int rv = -1;

	if (pattern[0] != '/') {
		pl_err_set(err, "state_dir %s: want an absolute path (%%n the node's name)", pattern);
		goto out;
	}
	if (!plain_node(node)) {
		pl_err_set(err, "node '%.64s': want a plain name (letters, digits, '.', '_', '-')",
			    node);
		goto out;
	}
	for (p = pattern; *p; p++) {
		if (*p != '%') {
			buf_add(&b, p, 1);
			continue;
		}
		p++;
		if (*p == 'n') {
			buf_adds(&b, node);
		} else if (*p == '%') {
			buf_adds(&b, "%");
		} else {
			pl_err_set(err, "state_dir %s: '%%%c' is not %%n (the node's name) or %%%%",
				   pattern, *p ? *p : ' ');
			goto out;
		}
	}
	buf_printf(&b, "/%" PRIu64 ".%" PRIu64, job, step);
	if (rank >= 0)
		buf_printf(&b, "/" STACKFILE_NAME "%" PRId64 ".txt", rank);
	if (b.bad || b.len >= n) {
		pl_err_set(err, "state_dir %s: the path of job %" PRIu64 ".%" PRIu64 "'s stacks "
			   "on node %s is longer than %zu bytes", pattern, job, step, node, n - 1);
		goto out;
	}
	memcpy(out, buf_str(&b), b.len + 1);
	rv = 0;
out:
	buf_free(&b);
	return rv;
}

/* src as printable ASCII into dst (size bytes): any other byte is '?'. */
static void
printable(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < size; i++)
		dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	dst[i] = '\0';
}

json_t *
stackfile_req_json(const struct stackfile_req *r, size_t n)
{
	json_t *a = json_array(), *o;
	size_t i;

	for (i = 0; a && i < n; i++) {
		o = json_pack("{s:I, s:I, s:I, s:s, s:s}", "job", (json_int_t)r[i].job,
			      "step", (json_int_t)r[i].step, "rank", (json_int_t)r[i].rank,
			      "kind", judge_kind_name(r[i].kind), "text", r[i].text);
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The kind whose judge name is s, or 0. */
static enum judge_kind
kind_named(const char *s)
{
	int k;

	for (k = 1; k <= JUDGE_KIND_MAX; k++)
		if (strcmp(judge_kind_name((enum judge_kind)k), s) == 0)
			return (enum judge_kind)k;
	return (enum judge_kind)0;
}

/* An integer member of o within lo..hi into *v; -1 when it is not. */
static int
int_member(const json_t *o, const char *key, json_int_t lo, json_int_t hi, json_int_t *v)
{
	const json_t *x = json_object_get(o, key);

	if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) > hi)
		return -1;
	*v = json_integer_value(x);
	return 0;
}

static int
req_item(const json_t *o, size_t i, struct stackfile_req *r, pl_err_t *err)
{
	const char *kind, *text;
	json_int_t job, step, rank;
	enum judge_kind k;

	if (!json_is_object(o))
		return pl_err_set(err, "capture item %zu: want an object {job, step, rank, kind, "
				  "text}", i);
	if (int_member(o, "job", 0, INT64_MAX, &job) < 0 ||
	    int_member(o, "step", 0, INT64_MAX, &step) < 0 ||
	    int_member(o, "rank", 0, RANK_MAX, &rank) < 0)
		return pl_err_set(err, "capture item %zu: want integers job and step >= 0 and "
				  "rank 0 to %" PRId64, i, RANK_MAX);
	kind = json_string_value(json_object_get(o, "kind"));
	k = kind ? kind_named(kind) : (enum judge_kind)0;
	if (!k || !stackfile_kind(k))
		return pl_err_set(err, "capture item %zu: kind %.40s%s: want not-entered or "
				  "gpu-stuck (a critical finding with a live culprit)", i,
				  kind ? kind : "(none)", kind && strlen(kind) > 40 ? "..." : "");
	text = json_string_value(json_object_get(o, "text"));
	if (!text || strlen(text) >= sizeof(r->text))
		return pl_err_set(err, "capture item %zu: want a string text of less than %zu "
				  "bytes", i, sizeof(r->text));
	r->job = (uint64_t)job;
	r->step = (uint64_t)step;
	r->rank = (int64_t)rank;
	r->kind = k;
	printable(r->text, sizeof(r->text), text);
	return 0;
}

int
stackfile_req_parse(const json_t *a, struct stackfile_req *out, size_t max, size_t *n,
		    pl_err_t *err)
{
	size_t i;

	*n = 0;
	if (!json_is_array(a))
		return pl_err_set(err, "capture: want an array of {job, step, rank, kind, text}");
	if (json_array_size(a) > max)
		return pl_err_set(err, "capture: %zu items: want at most %zu", json_array_size(a),
				  max);
	for (i = 0; i < json_array_size(a); i++)
		if (req_item(json_array_get(a, i), i, &out[i], err) < 0)
			return -1;
	*n = i;
	return 0;
}

void
stackfile_header(struct buf *b, const struct stackfile_head *h)
{
	char text[JUDGE_TEXT_LEN], node[80], tool[1024], status[1024], when[40];
	time_t t = (time_t)(h->when_real_ns / 1000000000u);
	struct tm tm;

	printable(text, sizeof(text), h->text ? h->text : "");
	printable(node, sizeof(node), h->node ? h->node : "");
	printable(tool, sizeof(tool), h->tool ? h->tool : "none");
	printable(status, sizeof(status), h->status ? h->status : "");
	if (!gmtime_r(&t, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(when, sizeof(when), "?");
	buf_printf(b, "# parallel-layout: the stacks of a critical finding's culprit\n"
		   "node: %s\nstep: %" PRIu64 ".%" PRIu64 "\nrank: %" PRId64 "\npid: %ld\n"
		   "finding: %s: %s\nwhen: %s\ntool: %s\nstatus: %s\n\n", node, h->job, h->step,
		   h->rank, h->pid, judge_kind_name(h->kind), text, when, tool, status);
}

void
stackfile_out_init(struct stackfile_out *o, size_t max)
{
	memset(o, 0, sizeof(*o));
	o->max = max ? max : STACKFILE_OUT_MAX;
}

void
stackfile_out_add(struct stackfile_out *o, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t room = o->max > o->b.len ? o->max - o->b.len : 0;
	size_t i, m = 0, k = n < room ? n : room;
	char chunk[512];

	for (i = 0; i < k; i++) {
		chunk[m++] = s[i] == '\n' || s[i] == '\t' || (s[i] >= 0x20 && s[i] != 0x7f) ?
			     (char)s[i] : '?';
		if (m == sizeof(chunk) || i + 1 == k) {
			buf_add(&o->b, chunk, m);
			m = 0;
		}
	}
	o->cut += n - k;
}

void
stackfile_out_end(struct stackfile_out *o)
{
	size_t keep = o->b.len;

	if (!o->cut)
		return;
	while (keep > 0 && o->b.s[keep - 1] != '\n')
		keep--;
	o->cut += o->b.len - keep;
	o->b.len = keep;
	if (o->b.s)
		o->b.s[keep] = '\0';
	buf_printf(&o->b, "[%zu bytes more cut: a stack file keeps %zu bytes of output]\n",
		   o->cut, o->max);
}

void
stackfile_out_free(struct stackfile_out *o)
{
	buf_free(&o->b);
}
