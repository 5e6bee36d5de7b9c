/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the judge's files share (judge.h is the API): the state, the
 * round's context, and the passes judge_run() calls in turn.  Private to
 * judge*.c.
 */
#ifndef PL_WATCH_JUDGE_INT_H
#define PL_WATCH_JUDGE_INT_H

#include <stdint.h>
#include <string.h>

#include "judge.h"
#include "rules.h"

/* js_entry.flags */
#define E_WAITING	0x01u	/* in its last collective past the threshold */
#define E_LAGGER	0x02u	/* a waiting peer entered more */
#define E_HELD		0x04u	/* waits here on a member that lags */
#define E_STUCK		0x08u	/* kernels in flight, quiet past the threshold */
#define E_NAMED		0x10u	/* named in a finding this round */
#define E_JUDGED	0x20u	/* its group was judged for slowness */
#define E_BUSY		0x40u	/* a lagger busy outside NCCL (JUDGE_BUSY) */
#define E_MISM		0x80u	/* at the position of a mismatch, not stuck
				 * (counted in nstuck all the same) */

/* One (rank, communicator) of the round. */
struct js_entry {
	uint64_t hash;
	int64_t rank;		/* global rank (the sort key after hash) */
	uint32_t ix;		/* index into the input ranks */
	uint16_t comm;		/* index into the rank's comm[] */
	uint16_t flags;		/* E_* */
	uint32_t group;		/* index into the groups */
	uint32_t pc;		/* E_LAGGER: the waiting peer it lags (entry) */
	double lead, excess;	/* the slow-rank rule, when E_JUDGED */
};

/*
 * What the passes read of an entry's communicator (and of its rank),
 * copied once a round by js_build() into hot[], in the entries' order.  The
 * passes go over the entries again and again, and the rank records the
 * fields come from are 6.4 KB apiece, tens of MB for a large step: reading
 * them there was a cache miss per field and pass, most of the judge's
 * time.  The texts (name, func) are read where they are, by the few
 * entries a finding names (ent_full).
 */
struct js_hot {
	uint64_t hash, colls, done, enter_ns, progress_ns, ch_inflight;
	uint64_t wait_sum_ns, gap_sum_ns;
	int32_t rank, nranks, p2p_peer;
	uint32_t flags, nwait;
	uint32_t exited;	/* the rank's: 1 it ended */
};

/* What places an entry in the sort. */
struct js_key {
	uint64_t hash;
	int64_t rank;
	uint32_t ix;
	uint32_t comm;
};

/* The members of one communicator: entries [first, first + n). */
struct js_group {
	uint32_t first, n;
	uint64_t min_live_colls;
	int any_exited, any_lagger, missing;
	int unwatched;		/* its missing members were named unwatched */
};

/* The slow-rank rule's memory of one global rank. */
struct js_slow {
	uint64_t since_ns;	/* when it first qualified (streak) */
	uint64_t mark_hash;	/* the communicator of the last counted round */
	uint64_t mark_done;	/* and its completions then */
	uint64_t name_hash;	/* named: the communicator of its finding */
	uint32_t rounds;	/* counted rounds in the streak */
	uint32_t named;
	/* This round: */
	double lead;		/* its score: its largest lead when it
				 * qualifies, else 0 */
	double cost;		/* its largest lead */
	uint32_t best;		/* the entry of that, UINT32_MAX not judged */
	uint32_t name_ent;	/* the entry of name_hash, UINT32_MAX none */
	double ev;		/* its positive leads, added */
	double busy_lead;	/* its lead in its busiest communicator */
	uint64_t busy_done;	/* that one's completions */
	double held_by;		/* its largest excess: it waits on a member
				 * somewhere by that share of a cycle */
	uint8_t held;		/* that reaches the margin */
	uint8_t explained;	/* a pipeline peer is held or leads more */
	uint8_t pad[6];
};

/* One rank's smoothed lead and excess in one of its communicators (by
 * slot), updated in rounds with new completions. */
struct js_smooth {
	uint64_t hash;		/* 0: nothing yet */
	uint64_t done;		/* completions at the last update */
	double lead, excess;
};

/* The pipeline-bubble rule's window of one global rank in its PP group:
 * the p2p time when the window began, and the idle share of the last
 * window that closed. */
struct js_bubble {
	uint64_t hash;		/* its PP communicator, 0 none yet */
	uint64_t wait0, span0;
	double idle;
	int have;		/* idle is measured */
	/* The micro-batches per step: its forward transfers (sends to its
	 * next stage; the last stage's receives from its previous) and its
	 * DP group's bursts (the steps) when the window began, and over the
	 * last window that closed, their ratio. */
	uint64_t fwd0, steps0;
	uint64_t steps_now;	/* this round's bursts of its DP group, 0 none */
	uint32_t mb;		/* measured, 0 not */
	uint32_t pad;
};

/* Sorting scratch: a key and an entry (or rank) index. */
struct js_wait {
	uint64_t t;
	uint32_t e;
};

struct js_val {
	double v;
	uint32_t i;
};

/* Everything a round needs, sized once for the world: a rank has at most
 * PLW_MAX_COMMS entries, a group at most one per rank. */
struct judge_state {
	uint32_t world;
	size_t cap;		/* entries: world * PLW_MAX_COMMS */
	struct js_entry *ent;
	struct js_group *grp;
	struct js_wait *wt;	/* a group's waiting members; exits */
	struct js_val *vw, *vc;	/* a group's mean waits and cycles */
	struct js_val *vt;	/* sort_vals' scratch */
	uint32_t *pw, *pc;	/* a member's place among them */
	uint32_t (*co)[JUDGE_NAXES]; /* a group's coordinates */
	uint32_t *rgrp;		/* per input rank: its smallest group */
	uint8_t *nstuck, *nheld; /* per input rank: entries flagged so */
	uint8_t *nbusy;		/* per input rank: entries waiting or stuck */
	uint8_t *culprit;	/* per input rank: named by an exit or a lag
				 * this round */
	uint8_t *awaited;	/* per input rank: exited, and a live peer
				 * waits for it (rules_exit0_awaited) */
	uint8_t *seen;		/* per input rank: in some group this round */
	uint32_t *unw;		/* the live ranks in no group (js_unwatched) */
	struct detect_sig *sig;	/* a group's members' signatures */
	const struct detect_sig **sigp;	/* and pointers to them */
	struct js_slow *slow;	/* per global rank */
	struct js_smooth *sm;	/* per slot and global rank */
	struct js_bubble *bub;	/* per global rank */
	/* the last round's entries in input order and where the sort put
	 * each: a round with the same entries (most rounds of a healthy
	 * step) takes that order again instead of sorting */
	struct js_key *nat;
	uint32_t *perm;
	struct js_entry *tmp;
	struct js_hot *hot;	/* per entry, this round (js_build) */
	struct js_hot *hot_in;	/* the same in input order, before the sort */
	size_t nnat;
	struct judge_end end;	/* the last round's note on the step's end */
	uint64_t found_ns;	/* the last round with a finding (not by the
				 * never-silent rule), 0 none */
	uint64_t hang_first_ns;	/* the rounds with a hang finding (not
				 * entered, GPU stuck): the first and */
	uint64_t hang_last_ns;	/* the last of them, 0 none */
};

/* Appending to a fixed line; a line cut short ends in "...". */
struct line {
	char *b;
	size_t size, len;
};

/* The round's context: what every pass reads. */
struct round {
	const struct judge_step *st;
	const struct judge_rank *rk;
	size_t n;
	uint64_t now;
	const struct judge_params *p;
	struct judge_state *s;
	size_t nent, ngrp;
	struct judge_finding *out;
	size_t max, count;
	struct judge_finding sink;	/* findings past max */
	int any_lost;
	int any_exit;		/* a present rank exited (named or not) */
	int fallback;		/* the never-silent rule named the stuck kernels */
	int lag_cycle;		/* the laggers were named in a cycle of waits */
	/* js_stalled()'s evidence, gathered by js_build() on its way through the
	 * ranks: no_stall when a live rank is in a collective (or its state
	 * says nothing), else how many live ranks ran any and when the last
	 * one was seen */
	int no_stall;
	size_t stall_nr;
	uint64_t stall_last;
};

#define AX_EDP	JUDGE_NAXES		/* a sixth axis: expert dp */
#define NAX6	(JUDGE_NAXES + 1)

/* The step's-end grace (judge.h): end_grace_ns, at least
 * DETECT_EXIT_GRACE_NS. */
static inline uint64_t
end_grace(const struct judge_params *p)
{
	return p->end_grace_ns > DETECT_EXIT_GRACE_NS ? p->end_grace_ns : DETECT_EXIT_GRACE_NS;
}

/* Entry e's hot copy (e points into s->ent). */
static inline const struct js_hot *
ent_comm(const struct round *r, const struct js_entry *e)
{
	return &r->s->hot[e - r->s->ent];
}

/* Entry e's communicator itself, texts included. */
static inline const struct detect_comm *
ent_full(const struct round *r, const struct js_entry *e)
{
	return &r->rk[e->ix].st.comm[e->comm];
}

/* judge_names.c: lines for people, group names */
void js_put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void js_put_secs(struct line *l, uint64_t ns);
const char *js_node_name(const struct judge_step *st, uint32_t node);
void js_put_where(struct line *l, const struct judge_step *st, const struct judge_rank *r);
void js_put_culprits(struct line *l, const struct judge_step *st, const struct judge_rank *ranks,
		     const uint32_t *ix, size_t n, size_t total);
unsigned js_name_axes(const char *name);
unsigned js_group_span(const struct judge_step *st, const uint32_t (*co)[JUDGE_NAXES], size_t n,
		       const char *name);

/* judge_round.c: the round's entries, groups and flags */
int js_wait_cmp(const void *a, const void *b);
void js_build(struct round *r);
void js_mark_state(struct round *r);
void js_mark_laggers(struct round *r, size_t g);
void js_count_flags(struct round *r);
void js_smallest_groups(struct round *r);

/* judge_findings.c: making findings; the faults */
struct judge_finding *js_finding_new(struct round *r, enum judge_kind kind);
struct judge_finding *js_group_finding(struct round *r, enum judge_kind kind, size_t g,
				       struct line *l);
void js_add_culprit(struct round *r, struct judge_finding *f, uint32_t *ix, size_t i);
void js_exits(struct round *r);
void js_nodes_lost(struct round *r);
void js_mismatch(struct round *r);
void js_not_entered(struct round *r);
void js_p2p_unposted(struct round *r);
void js_unwatched(struct round *r);
void js_gpu_stuck_all(struct round *r);
void js_stalled(struct round *r);

/* judge_slow.c */
void js_slow_rule(struct round *r);

/* judge_advice.c */
void js_tp_network(struct round *r);
void js_fsdp_root(struct round *r);
void js_pp_bubble(struct round *r);

#endif
