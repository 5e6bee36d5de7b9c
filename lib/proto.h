/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon protocol: JSON over HTTP (a unix socket by default).
 *
 *   POST /v1/placement   request  {"spec", "nodes": [{"name", "ntasks", "tids"?}],
 *                                  "job_id"?, "step_id"?, "view"?, "uid"?}
 *                        response {"spec", "world", "layout", "map", "nodes",
 *                                  "master_node", "rank_nodes"?, "tasks",
 *                                  "cost", "baseline_cost", "strategy", "warnings"}
 *   errors               {"error": "message"} with a 4xx/5xx status
 *
 * view is "all" (default: every task and rank_nodes), "hostfile" (rank_nodes
 * only, what srun needs to steer Slurm) or "node:NAME" (that node's tasks,
 * what one slurmstepd needs).  The plugin's in-process fallback runs the
 * very same proto_answer() on the same map, so both paths give the same
 * placement.  A node listed twice is refused (400), naming it.  uid is
 * the job owner's uid (a non-negative integer), for the daemon to trust
 * only from a trusted caller.
 */
#ifndef PL_PROTO_H
#define PL_PROTO_H

#include <stdbool.h>

#include "layout.h"
#include "place.h"
#include "plan.h"
#include "topo.h"

#define PROTO_SPEC_MAX 4096
#define PROTO_CHOICE_MAX 768
#define PROTO_VIEW_MAX 96

struct proto_request {
	char spec[PROTO_SPEC_MAX];
	long job_id;		/* -1 unknown */
	long step_id;		/* -1 unknown */
	char view[PROTO_VIEW_MAX];
	long nnodes;
	struct place_node *nodes;	/* names and tids owned by the request */
	long uid;		/* the job owner's uid; -1 unknown (then not sent) */
};

/* The request JSON for a placement (no uid).  view NULL = "all".  Caller
 * frees; NULL when out of memory or a spec, view or name is too long. */
char *proto_request_json(const char *spec, const struct place_node *nodes, long nnodes,
			 long job_id, long step_id, const char *view);

/* The request JSON of req, uid included when >= 0 (proto_request_init,
 * set uid, then this).  Caller frees; NULL when out of memory or a name is
 * not UTF-8. */
char *proto_request_to_json(const struct proto_request *req);

/* Parse a request; strict (unknown keys are errors).  Free with proto_request_free(). */
int proto_request_parse(const char *text, struct proto_request *req, pl_err_t *err);
void proto_request_free(struct proto_request *req);

struct proto_task {
	long procid;
	long rank;
	long node;		/* index into nodes[] */
	long local_id;
	int local_rank;
	long co[PL_NAXES];
	char nic[TOPO_NAME];	/* "" none */
};

struct proto_node {
	char name[TOPO_NAME];
	long ntasks;
	long min_rank;		/* the lowest rank it hosts: nodes sorted by it give NODE_RANK */
	char nccl_topo_file[256];
};

struct proto_placement {
	char spec[PROTO_SPEC_MAX];
	char map[TOPO_NAME];		/* the map's name */
	struct pl_layout layout;	/* spec, resolved */
	long world;
	long nnodes;
	struct proto_node *nodes;
	long master_node;	/* index of the node that hosts rank 0 */
	long *rank_nodes;	/* rank -> node index; NULL when the view has none */
	long ntasks;
	struct proto_task *tasks;	/* the view's tasks, by procid */
	struct place_cost cost;
	struct place_cost baseline;
	char strategy[96];
	int nwarnings;
	char warnings[PLAN_MAX_WARNINGS][PLAN_WARNING_LEN];
	/* For an auto spec, how the layout was chosen (svc_choice_text); ""
	 * otherwise.  In the JSON as "auto", only when not empty. */
	char choice[PROTO_CHOICE_MAX];
};

/*
 * The struct-level calls: no JSON inside one process.  layoutd parses the
 * request once (proto_request_parse), answers it with proto_answer and
 * serializes with proto_placement_json; the plugin's in-process fallback
 * fills a request with proto_request_init and uses proto_answer's struct
 * as it is.
 */

/* Fill req from a step (names and tids are copied); uid is -1 (callers set
 * it afterwards).  view NULL = "all".  Returns 0, or -1 with err (a spec,
 * view or node name too long, out of memory; then req holds nothing to
 * free).  Free with proto_request_free(). */
int proto_request_init(struct proto_request *req, const char *spec,
		       const struct place_node *nodes, long nnodes, long job_id,
		       long step_id, const char *view, pl_err_t *err);

/*
 * Answer req on map m: *out holds the view's tasks (and rank_nodes for the
 * views that carry them).  Returns 0, or -1 with err saying why and *status
 * 400 (a bad request: unknown view, repeated node, ...) or 422 (a valid
 * request whose layout cannot be placed).  Caller frees *out with
 * proto_placement_free(), also after a failure.
 */
int proto_answer(const struct topo_map *m, const struct proto_request *req,
		 struct proto_placement *out, int *status, pl_err_t *err);

/* The response JSON of a placement, as proto_placement_parse() reads it
 * (compact, keys in the order above).  Caller frees; NULL when out of
 * memory or a string in p is not UTF-8. */
char *proto_placement_json(const struct proto_placement *p);

/* Parse a 200 response.  An {"error"} body fills err with its message. */
int proto_placement_parse(const char *text, struct proto_placement *p, pl_err_t *err);
void proto_placement_free(struct proto_placement *p);

/* The {"error": msg} body.  Caller frees. */
char *proto_error_json(const char *msg);

#endif
