/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The ring of recorded steps (layoutd_steps.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "layoutd_steps.h"

struct ld_steps *
ld_steps_new(void)
{
	return calloc(1, sizeof(struct ld_steps));
}

void
ld_steps_free(struct ld_steps *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < LD_STEPS; i++)
		free(s->ring[i].spec);
	free(s);
}

int
ld_steps_add(struct ld_steps *s, const struct ld_step *st)
{
	struct ld_step *slot = &s->ring[s->head];
	char *spec = strdup(st->spec ? st->spec : "");

	if (!spec)
		return -1;
	free(slot->spec);
	*slot = *st;
	slot->spec = spec;
	s->head = (s->head + 1) % LD_STEPS;
	if (s->n < LD_STEPS)
		s->n++;
	s->recorded++;
	return 0;
}

static json_t *
step_json(const struct ld_step *s)
{
	char stamp[32] = "";
	struct tm tm;

	if (gmtime_r(&s->time, &tm))
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{s:I, s:I, s:I, s:s, s:I, s:I, s:s, s:s, s:i, s:f}",
			 "job_id", (json_int_t)s->job_id, "step_id", (json_int_t)s->step_id,
			 "uid", (json_int_t)s->uid, "spec", s->spec ? s->spec : "",
			 "world", (json_int_t)s->world, "nnodes", (json_int_t)s->nnodes,
			 "strategy", s->strategy, "time", stamp, "status", s->status, "ms", s->ms);
}

json_t *
ld_steps_json(const struct ld_steps *s, bool all, long uid)
{
	json_t *arr = json_array();
	long k;

	for (k = 0; arr && k < s->n; k++) {
		const struct ld_step *st = &s->ring[(s->head - 1 - k + 2 * LD_STEPS) % LD_STEPS];

		if (!all && (st->uid < 0 || st->uid != uid))
			continue;
		if (json_array_append_new(arr, step_json(st)) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}
