/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The steps this node leads (watch/lead.c): the summaries of a step's
 * nodes taken in, the judge's rounds over them, the findings handed to
 * whoever registered for them, the step's view.  The peers (watch/peer.c)
 * feed it; it asks them one thing through the callback it was made with:
 * where this node's own summaries of a step go now.
 */
#ifndef PL_LAYOUTD_LEAD_H
#define PL_LAYOUTD_LEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "peerwire.h"
#include "pl_err.h"

struct ld;
struct ld_lead;			/* a step this node leads (private) */
struct ld_leads;
struct judge_finding;
struct detect_rank;
struct sum_header;
struct sum_rank_info;
struct judge_rank;
struct judge_step;

#define LD_PEER_NODE_LEN 64	/* a node name and its NUL (SUM_NODE_LEN) */

/*
 * A step as its leader sees it, for the findings callback.  Everything is
 * owned by the peer module and valid only during the call.
 */
struct ld_step_view {
	uint64_t job_id;
	uint64_t step_id;
	uint32_t uid;			/* the job's user */
	uint32_t world;
	uint32_t size[5];		/* tp, cp, ep, dp, pp */
	const char *self;		/* this node's name */
	const char *leader;		/* nodes[0] when the node order is known, else NULL */
	bool acting;			/* this node leads because nodes[0] cannot be reached */
	bool final;			/* the last call: this node no longer leads the step
					 * (it ended, or the leader is back); n is 0 */
	bool handover;			/* final, and the step runs on led elsewhere (this
					 * node acted for its leader, which answers again):
					 * its alerts go on there, not resolved here */
	const struct judge_step *step;	/* identity, layout, nodes with liveness (judge.h) */
	const struct judge_rank *ranks;	/* every rank known, in no particular order */
	size_t nranks;
	const struct ld_lead *owner;	/* private: for the lookups below */
};

/* The rank `rank` of the view (its node, GPU, NIC, coordinates, state), or
 * NULL when no summary named it. */
const struct judge_rank *ld_step_view_rank(const struct ld_step_view *v, int64_t rank);

/* The name of node index i of the view (judge_rank.node, judge_finding.node),
 * or "" when i is not one. */
const char *ld_step_view_node(const struct ld_step_view *v, int32_t i);

/*
 * Called on the leader (and acting leader) after every judge round of every
 * step it leads, with all the round's findings (n may be 0: nothing wrong),
 * at now_ns (CLOCK_MONOTONIC, the clock of every time in v and f); and once
 * more with v->final set and n 0 when it stops leading the step.
 */
typedef void (*ld_findings_cb)(struct ld *d, const struct ld_step_view *v,
			       const struct judge_finding *f, size_t n, uint64_t now_ns);

/* Why a summary (or a request on the peer listener) was refused: the peer
 * wire's reasons (lib/watch/peerwire.h). */
enum ld_peer_refusal {
	LD_REFUSE_REQUEST = PEERWIRE_REFUSE_REQUEST,
	LD_REFUSE_UNAUTH = PEERWIRE_REFUSE_UNAUTH,
	LD_REFUSE_REPLAYED = PEERWIRE_REFUSE_REPLAYED,
	LD_REFUSE_EXPIRED = PEERWIRE_REFUSE_EXPIRED,
	LD_REFUSE_CRED = PEERWIRE_REFUSE_CRED,
	LD_REFUSE_UID = PEERWIRE_REFUSE_UID,
	LD_REFUSE_CHECKSUM = PEERWIRE_REFUSE_CHECKSUM,
	LD_REFUSE_SUMMARY = PEERWIRE_REFUSE_SUMMARY,
	LD_REFUSE_STEP = PEERWIRE_REFUSE_STEP,
	LD_REFUSE_STALE = PEERWIRE_REFUSE_STALE,
	LD_REFUSE_BUSY = PEERWIRE_REFUSE_BUSY,
	LD_REFUSE_ORIGIN = PEERWIRE_REFUSE_ORIGIN,
	LD_REFUSE_MUNGED = PEERWIRE_REFUSE_MUNGED,
	LD_NREFUSE = PEERWIRE_NREFUSE
};

/* Where this node's own summaries of job.step go now (a node's name), or
 * NULL before the first: what the peers answer the leader. */
typedef const char *(*ld_lead_target_cb)(void *arg, uint64_t job, uint64_t step);

/* The steps d leads (its settings from d->cur->conf); target and arg are
 * the peers'.  NULL when out of memory.  ld_leads_free() lets every step
 * go without a last round. */
struct ld_leads *ld_leads_new(struct ld *d, ld_lead_target_cb target, void *arg);
void ld_leads_free(struct ld_leads *p);

/* Register the one findings callback (NULL: none). */
void ld_leads_set_findings_cb(struct ld_leads *p, ld_findings_cb cb);

/* The step job.step led here, or NULL. */
const struct ld_lead *ld_lead_find(const struct ld_leads *p, uint64_t job, uint64_t step);

/*
 * Who may speak for a summary's node (peer_check_origin): ok is called
 * with the summary's header and the step's lead here (NULL when none yet)
 * before anything is made of the summary; false refuses it (403, origin)
 * with why.
 */
struct ld_take_check {
	bool (*ok)(void *arg, const struct ld_lead *l, const struct sum_header *h, char *why,
		   size_t n);
	void *arg;
};

/* The place of node name in step l's node order, -1 when the order is
 * not known here or the node is not in it; the name at place i, and how
 * many there are. */
long ld_lead_node_index(const struct ld_lead *l, const char *name);
const char *ld_lead_node_name(const struct ld_lead *l, size_t i);
size_t ld_lead_nnodes(const struct ld_lead *l);

/*
 * One summary of len bytes from another node, come at recv_ns, checked by
 * chk when not NULL.  Returns the HTTP status (200, 403 its origin, 409
 * stale or not this step, 422 not a summary, 5xx) with err and *r the
 * refusal reason.
 */
int ld_lead_take(struct ld_leads *p, const void *data, size_t len, uint64_t recv_ns,
		 const struct ld_take_check *chk, enum ld_peer_refusal *r, pl_err_t *err);

/* The header of the summary ld_lead_take() took last (200): its node,
 * job and step, for the answer. */
const struct sum_header *ld_lead_last(const struct ld_leads *p);

/*
 * This node's own summary (header h, n ranks with their naming) handed to
 * the judge as structs, as the wire would carry them (sum_carry: the same
 * values and refusals, no bytes); target: this node is its own target, so
 * the step is led here.  The status as ld_lead_take.
 */
int ld_lead_take_own(struct ld_leads *p, const struct sum_header *h, const struct detect_rank *ranks,
		     const struct sum_rank_info *info, size_t n, uint64_t recv_ns, bool target,
		     enum ld_peer_refusal *r, pl_err_t *err);

/* Judge every step led here; let go of those no longer led here. */
void ld_lead_all(struct ld_leads *p, uint64_t now);

/* The steps led here for GET /v1/watch's peer part: every step when all,
 * else those of uid. */
json_t *ld_lead_json(const struct ld_leads *p, bool all, long uid);

/* Steps led here now, and nodes lost now over them. */
long ld_lead_count(const struct ld_leads *p);
long ld_lead_nodes_lost(const struct ld_leads *p);

/* The 404 of GET /v1/watch/step for a step not led here, and the same
 * words for another user's step wherever it is: a user learns nothing of
 * a step that is not theirs, not even that it runs or is led here.
 * Returns 404. */
int ld_lead_not_here(const struct ld *d, uint64_t job, uint64_t step, pl_err_t *err);

/*
 * GET /v1/watch/step of a step led here (see ld_peer_step_json): 200 with
 * *out (caller frees), 404 with err when uid may not see it, 500; or 0
 * when the step is not led here (*out NULL, err untouched).
 */
int ld_lead_step_json(const struct ld_leads *p, uint64_t job, uint64_t step, uint64_t from,
		      size_t count, bool all, long uid, json_t **out, pl_err_t *err);

#endif
