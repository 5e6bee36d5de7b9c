/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * From Slurm's step layout to a placement request, with no limit on the
 * step's size: every array is sized from the layout itself.
 */
#include <stdlib.h>
#include <string.h>

#include "hosts.h"
#include "spk_request.h"

void
spk_step_free(struct spk_step *s)
{
	long n;

	if (!s)
		return;
	for (n = 0; s->names && n < s->nnodes; n++)
		free(s->names[n]);
	for (n = 0; s->tids && n < s->nnodes; n++)
		free(s->tids[n]);
	free(s->names);
	free(s->tids);
	free(s->ntasks);
	memset(s, 0, sizeof(*s));
}

int
spk_step_init(struct spk_step *s, const char *nodelist, long nnodes, const uint16_t *tasks,
	     uint32_t *const *tids, pl_err_t *err)
{
	struct hosts h = { 0, NULL };
	char clip[PL_CLIP_BUF];
	long n, i;
	int rv = -1;

	memset(s, 0, sizeof(*s));
	if (!nodelist || nnodes <= 0 || !tasks || !tids)
		return pl_err_set(err, "the step layout has no nodes");
	if (hosts_expand(&h, nodelist, nnodes, err) < 0)
		goto out;
	if (h.n != nnodes) {
		pl_err_set(err, "the step's node list '%s' names %ld nodes, its layout %ld",
			   pl_clip(nodelist, clip, sizeof(clip)), h.n, nnodes);
		goto out;
	}
	s->ntasks = calloc((size_t)nnodes, sizeof(*s->ntasks));
	s->tids = calloc((size_t)nnodes, sizeof(*s->tids));
	if (!s->ntasks || !s->tids) {
		pl_err_set(err, "out of memory for a step of %ld nodes", nnodes);
		goto out;
	}
	s->names = h.names;
	s->nnodes = nnodes;
	h.names = NULL;
	h.n = 0;
	for (n = 0; n < nnodes; n++) {
		s->ntasks[n] = tasks[n];
		s->tids[n] = calloc((size_t)tasks[n] + 1, sizeof(long));
		if (!s->tids[n] || (tasks[n] > 0 && !tids[n])) {
			pl_err_set(err, "out of memory for a step of %ld nodes", nnodes);
			goto out;
		}
		for (i = 0; i < tasks[n]; i++)
			s->tids[n][i] = tids[n][i];
		s->world += tasks[n];
	}
	rv = 0;
out:
	hosts_free(&h);
	if (rv < 0)
		spk_step_free(s);
	return rv;
}

long
spk_step_find(const struct spk_step *s, const char *name)
{
	long n;

	for (n = 0; name && n < s->nnodes; n++)
		if (strcmp(s->names[n], name) == 0)
			return n;
	return -1;
}

int
spk_request_build(struct proto_request *req, const char *spec, const struct spk_step *s,
		 bool with_tids, long job_id, long step_id, long uid, const char *view,
		 pl_err_t *err)
{
	struct place_node *nodes = calloc((size_t)s->nnodes + 1, sizeof(*nodes));
	long n;
	int rv;

	memset(req, 0, sizeof(*req));
	if (!nodes)
		return pl_err_set(err, "out of memory for a request of %ld nodes", s->nnodes);
	for (n = 0; n < s->nnodes; n++) {
		nodes[n].name = s->names[n];
		nodes[n].ntasks = s->ntasks[n];
		nodes[n].tids = with_tids ? s->tids[n] : NULL;
	}
	rv = proto_request_init(req, spec, nodes, s->nnodes, job_id, step_id, view, err);
	if (rv == 0)
		req->uid = uid;
	free(nodes);
	return rv;
}
