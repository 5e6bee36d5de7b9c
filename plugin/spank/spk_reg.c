/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A node's task registrations in one message (spk_reg.h).
 */
#include <stdlib.h>
#include <string.h>

#include "spk_reg.h"

#define HEAD "{\"tasks\":["
#define TAIL "]}"

/* Append n bytes of s and a NUL; -1 when out of memory (nothing added). */
static int
add(struct spk_reg *r, const char *s, size_t n)
{
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		char *b;

		while (cap < r->len + n + 1)
			cap *= 2;
		b = realloc(r->body, cap);
		if (!b)
			return -1;
		r->body = b;
		r->cap = cap;
	}
	memcpy(r->body + r->len, s, n);
	r->len += n;
	r->body[r->len] = '\0';
	return 0;
}

int
spk_reg_init(struct spk_reg *r, uint32_t want)
{
	memset(r, 0, sizeof(*r));
	r->want = want;
	r->at = calloc(want ? want : 1, sizeof(*r->at));
	return r->at ? 0 : -1;
}

int
spk_reg_add(struct spk_reg *r, const char *task)
{
	size_t mark = r->len;

	if (r->seen >= r->want)
		return 1;
	if (task) {
		if (add(r, r->n ? "," : HEAD, r->n ? 1 : sizeof(HEAD) - 1) < 0)
			return -1;
		r->at[r->n] = r->len;
		if (add(r, task, strlen(task)) < 0) {
			r->len = mark;
			r->body[mark] = '\0';
			return -1;
		}
		r->n++;
	}
	if (++r->seen < r->want)
		return 0;
	r->tasks_end = r->len;
	if (r->n && add(r, TAIL, sizeof(TAIL) - 1) < 0) {
		r->seen--;
		return -1;
	}
	return 1;
}

const char *
spk_reg_body(const struct spk_reg *r)
{
	return r->n && r->seen == r->want ? r->body : NULL;
}

const char *
spk_reg_cut(struct spk_reg *r, uint32_t i)
{
	size_t end;

	if (i >= r->n)
		return NULL;
	/* the next one's comma, or where the last one ends */
	end = i + 1 < r->n ? r->at[i + 1] - 1 : r->seen == r->want ? r->tasks_end : r->len;
	r->body[end] = '\0';
	return r->body + r->at[i];
}

int
spk_reg_send(struct spk_reg *r, const char *sock, long timeout_ms, struct client_reply *rep,
	     bool *alone, pl_err_t *err)
{
	const char *body = spk_reg_body(r);
	uint32_t i;
	int rc;

	*alone = false;
	rep->status = 0;
	rep->body = NULL;
	if (!body)
		return 0;
	rc = client_request(sock, "POST", "/v1/watch/tasks", body, timeout_ms, rep, err);
	if (rc < 0 || rep->status != 400)
		return rc;
	*alone = true;
	for (i = 0; i < r->n; i++) {
		free(rep->body);
		rep->body = NULL;
		rc = client_request(sock, "POST", "/v1/watch/tasks", spk_reg_cut(r, i), timeout_ms,
				    rep, err);
		if (rc < 0)
			break;
	}
	return rc;
}

void
spk_reg_free(struct spk_reg *r)
{
	free(r->body);
	free(r->at);
	memset(r, 0, sizeof(*r));
}
