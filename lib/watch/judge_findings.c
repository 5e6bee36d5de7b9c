/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The judge's faults: exits, lost nodes, hangs and stalls (see judge.h). */
#include <string.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "judge_int.h"

/* detect.c's victim rule: 2 when the rank is stuck on the GPU in another
 * communicator (or at a mismatch there), 1 when it waits in another on a member that lags, else 0. */
static int
victim(const struct round *r, const struct js_entry *e)
{
	int stuck = r->s->nstuck[e->ix] - !!(e->flags & (E_STUCK | E_MISM));
	int held = r->s->nheld[e->ix] - !!(e->flags & E_HELD);

	return stuck > 0 ? 2 : held > 0 ? 1 : 0;
}

struct judge_finding *
js_finding_new(struct round *r, enum judge_kind kind)
{
	struct judge_finding *f = r->count < r->max ? &r->out[r->count] : &r->sink;

	r->count++;
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->evidence = DETECT_OBSERVED;
	f->node = -1;
	f->exit_status = -1;
	return f;
}

/* The name of group g (judge_group_name on its members, lowest rank
 * first). */
static void
group_label(struct round *r, size_t g, char *out, size_t size)
{
	const struct js_group *gr = &r->s->grp[g];
	const struct detect_comm *c = ent_full(r, &r->s->ent[gr->first]);
	size_t i;

	for (i = 0; i < gr->n; i++)
		memcpy(r->s->co[i], r->rk[r->s->ent[gr->first + i].ix].co, sizeof(r->s->co[i]));
	judge_group_name(r->st, (const uint32_t (*)[JUDGE_NAXES])r->s->co, gr->n, c->name, out,
			 size);
}

/* A finding about group g: its name, communicator, text started. */
struct judge_finding *
js_group_finding(struct round *r, enum judge_kind kind, size_t g, struct line *l)
{
	struct judge_finding *f = js_finding_new(r, kind);
	const struct detect_comm *c = ent_full(r, &r->s->ent[r->s->grp[g].first]);

	group_label(r, g, f->group, sizeof(f->group));
	f->comm_hash = c->hash;
	rules_text_copy(f->comm, sizeof(f->comm), c->name, sizeof(c->name));
	l->b = f->text;
	l->size = sizeof(f->text);
	l->len = 0;
	js_put(l, "%s: ", f->group);
	return f;
}

/* Add culprit entry i to f (ranks ascend: the entries do). */
void
js_add_culprit(struct round *r, struct judge_finding *f, uint32_t *ix, size_t i)
{
	const struct js_entry *e = &r->s->ent[i];

	if (f->nculprits < JUDGE_MAX_CULPRITS) {
		ix[f->nculprits] = e->ix;
		f->culprits[f->nculprits++] = e->rank;
	}
	if (!f->ncul_total)
		f->node = (int32_t)r->rk[e->ix].node;
	f->ncul_total++;
}

/* "AllReduce #4412", or "collective 4413" when its func is unknown. */
static void
put_coll(struct line *l, const struct judge_finding *f)
{
	if (f->func[0])
		js_put(l, "%s #%llu", f->func, (unsigned long long)f->seq);
	else
		js_put(l, "collective %llu", (unsigned long long)f->colls);
}

/* Whether input rank ix's process tree made progress within the hang
 * threshold (sampled by its node: detect_proc). */
static int
tree_progress(const struct round *r, uint32_t ix)
{
	return rules_progress(&r->rk[ix].st.proc, r->now, r->p->hang_threshold_ns);
}

/* What a tree does, for the lines: "1.9 cores, writing 310 MB/s". */
static void
put_doing(struct line *l, const struct detect_proc *p)
{
	const char *sep = "";

	if (p->cpu_milli >= 10) {
		js_put(l, "%.1f cores", (double)p->cpu_milli / 1000.0);
		sep = ", ";
	}
	if (p->read_bps >= 100000) {
		js_put(l, "%sreading %.1f MB/s", sep, (double)p->read_bps / 1e6);
		sep = ", ";
	}
	if (p->write_bps >= 100000) {
		js_put(l, "%swriting %.1f MB/s", sep, (double)p->write_bps / 1e6);
		sep = ", ";
	}
	if (!*sep)
		js_put(l, "a little CPU or I/O");
}

/* What the first culprit's tree says beside a not-entered finding: busy
 * past busy_threshold, or stuck in the kernel (D state past the
 * threshold, with its wchan). */
static void
put_tree(const struct round *r, struct line *l, uint32_t ix)
{
	const struct detect_proc *p = &r->rk[ix].st.proc;

	if (tree_progress(r, ix)) {
		js_put(l, "; busy outside NCCL past busy_threshold: ");
		put_doing(l, p);
	} else if (p->state == 'D' && p->dstate_ns &&
		   rules_age(r->now, p->dstate_ns) > r->p->hang_threshold_ns) {
		js_put(l, "; stuck in the kernel: D state for ");
		js_put_secs(l, rules_age(r->now, p->dstate_ns));
		if (p->wchan[0]) {
			char w[DETECT_WCHAN_LEN];

			rules_text_copy(w, sizeof(w), p->wchan, sizeof(p->wchan));
			js_put(l, " in %s", w);
		}
	}
}

/*
 * One finding per rank busy outside NCCL (E_BUSY): its smallest group,
 * the collective its peers wait in longest, for how long, and what its
 * process tree does.  A warning: it may be a checkpoint, a compile or
 * data loading.
 */
static void
busy_findings(struct round *r)
{
	size_t i, j;

	for (i = 0; i < r->nent; i++) {
		const struct js_entry *e = &r->s->ent[i], *best = e;
		const struct judge_rank *jr;
		struct judge_finding *f;
		const struct js_hot *pc;
		const struct detect_comm *pcf;
		struct line l;
		uint32_t ix;

		if (!(e->flags & E_BUSY) || r->s->culprit[e->ix] == 2)
			continue;
		r->s->culprit[e->ix] = 2;
		/* the collective its peers have waited in longest */
		for (j = i + 1; j < r->nent; j++) {
			const struct js_entry *o = &r->s->ent[j];

			if ((o->flags & E_BUSY) && o->ix == e->ix &&
			    ent_comm(r, &r->s->ent[o->pc])->enter_ns <
			    ent_comm(r, &r->s->ent[best->pc])->enter_ns)
				best = o;
		}
		jr = &r->rk[e->ix];
		pc = ent_comm(r, &r->s->ent[best->pc]);
		pcf = ent_full(r, &r->s->ent[best->pc]);
		f = js_finding_new(r, JUDGE_BUSY);
		l.b = f->text;
		l.size = sizeof(f->text);
		l.len = 0;
		if (r->s->rgrp[e->ix] != UINT32_MAX)
			group_label(r, r->s->rgrp[e->ix], f->group, sizeof(f->group));
		else
			rules_text_copy(f->group, sizeof(f->group), "world", 6);
		f->comm_hash = pcf->hash;
		rules_text_copy(f->comm, sizeof(f->comm), pcf->name, sizeof(pcf->name));
		rules_text_copy(f->func, sizeof(f->func), pcf->func, sizeof(pcf->func));
		f->seq = pcf->seq;
		f->colls = pc->colls;
		ix = e->ix;
		js_add_culprit(r, f, &ix, (size_t)(e - r->s->ent));
		f->since_ns = pc->enter_ns;
		f->for_ns = rules_age(r->now, pc->enter_ns);
		js_put(&l, "%s: rank ", f->group);
		js_put_where(&l, r->st, jr);
		js_put(&l, " busy outside NCCL for ");
		js_put_secs(&l, f->for_ns);
		js_put(&l, ": ");
		put_doing(&l, &jr->st.proc);
		js_put(&l, "; its peers wait in %s ", f->comm);
		put_coll(&l, f);
		js_put(&l, " (a checkpoint, a compile, data loading?)");
	}
}

/* One finding per collective that the named laggers of group g did not
 * enter (the colls of the peer each lags). */
static void
lag_findings(struct round *r, size_t g)
{
	const struct js_group *gr = &r->s->grp[g];
	uint64_t done_below = 0;

	for (;;) {
		uint64_t target = UINT64_MAX;
		const struct js_hot *pc = NULL;
		const struct detect_comm *pcf = NULL;
		struct judge_finding *f;
		uint32_t ix[JUDGE_MAX_CULPRITS];
		struct line l;
		size_t i;

		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];
			uint64_t t = ent_comm(r, &r->s->ent[e->pc])->colls;

			if ((e->flags & E_NAMED) && t > done_below && t < target)
				target = t;
		}
		if (target == UINT64_MAX)
			return;
		f = js_group_finding(r, JUDGE_NOT_ENTERED, g, &l);
		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];
			const struct js_hot *p = ent_comm(r, &r->s->ent[e->pc]);

			if (!(e->flags & E_NAMED) || p->colls != target)
				continue;
			js_add_culprit(r, f, ix, i);
			if (!pc || p->enter_ns < pc->enter_ns) {
				pc = p;
				pcf = ent_full(r, &r->s->ent[e->pc]);
			}
		}
		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_entry *e = &r->s->ent[i];

			if ((e->flags & E_WAITING) && ent_comm(r, e)->colls >= target)
				f->npeers_waiting++;
		}
		rules_text_copy(f->func, sizeof(f->func), pcf->func, sizeof(pcf->func));
		f->seq = pcf->seq;
		f->colls = target;
		f->since_ns = pc->enter_ns;
		f->for_ns = rules_age(r->now, pc->enter_ns);
		js_put_culprits(&l, r->st, r->rk, ix, f->nculprits, f->ncul_total);
		js_put(&l, " never entered ");
		put_coll(&l, f);
		js_put(&l, "; %zu peer%s waiting ", f->npeers_waiting, f->npeers_waiting == 1 ? "" : "s");
		js_put_secs(&l, f->for_ns);
		put_tree(r, &l, ix[0]);
		if (r->lag_cycle) {
			f->evidence = DETECT_INFERRED;
			js_put(&l, "; inferred: each waits on another elsewhere (a cycle)");
		}
		done_below = target;
	}
}

/*
 * detect.c's naming of laggers over the whole step: those held by their
 * own wait elsewhere are left out (stuck there on the GPU, always; waiting
 * there on a lagger, unless every lagger not stuck is held so: a cycle).
 */
void
js_not_entered(struct round *r)
{
	size_t i, g;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		size_t found = 0, named = 0;

		for (i = 0; i < r->nent; i++) {
			struct js_entry *e = &r->s->ent[i];
			int held;

			if (!(e->flags & E_LAGGER))
				continue;
			held = victim(r, e);
			found += held != 2;
			if (held == 2 || (pass == 0 && held))
				continue;
			/* busy outside NCCL, not past busy_threshold: a
			 * warning of its own (busy_findings) */
			if (rules_busy(&r->rk[e->ix].st.proc, ent_comm(r, &r->s->ent[e->pc])->enter_ns,
				       r->now, r->p->hang_threshold_ns, r->p->busy_threshold_ns))
				e->flags |= E_BUSY;
			else
				e->flags |= E_NAMED;
			r->s->culprit[e->ix] = 1;
			named++;
		}
		if (named || !found) {
			r->lag_cycle = pass == 1 && named;
			break;
		}
	}
	for (g = 0; g < r->ngrp; g++)
		lag_findings(r, g);
	busy_findings(r);
}

/* How many live members of group gr completed its target-th collective
 * (none of those whose kernels still run there). */
static size_t
npeers_done(const struct round *r, const struct js_group *gr, uint64_t target)
{
	size_t i, n = 0;

	for (i = gr->first; i < gr->first + gr->n; i++) {
		const struct js_hot *c = ent_comm(r, &r->s->ent[i]);

		n += !c->exited && c->done >= target;
	}
	return n;
}

/*
 * What a stuck finding of group gr on its target-th collective rests on:
 * observed when a live member not named completed it (the named kernels
 * run where a peer's ended); inferred when a named kernel is a p2p
 * transfer (its other end waits as it does), when no member completed it
 * (any of them may hold the rest), or by the never-silent rule.  *why says
 * which, for the text.
 */
static int
stuck_evidence(const struct round *r, const struct js_group *gr, uint64_t target, int fallback,
	       const char **why)
{
	size_t i;

	*why = "nothing else explains the hang";
	if (fallback)
		return DETECT_INFERRED;
	for (i = gr->first; i < gr->first + gr->n; i++) {
		const struct js_hot *c = ent_comm(r, &r->s->ent[i]);

		if ((r->s->ent[i].flags & E_NAMED) && c->done + 1 == target &&
		    (c->flags & DETECT_P2P)) {
			*why = "a p2p transfer, whose other end waits as it does";
			return DETECT_INFERRED;
		}
	}
	*why = "no member completed it, any of them may hold the rest";
	return npeers_done(r, gr, target) ? DETECT_OBSERVED : DETECT_INFERRED;
}

/* The finding of the earliest collective stuck on the GPU in group g,
 * naming the members whose kernels still run there (E_NAMED set by the
 * caller); fallback: named by the never-silent rule.  Members stuck in a
 * later one wait on those: a collective cannot complete before its
 * members have completed the one before it. */
static void
stuck_findings(struct round *r, size_t g, int fallback)
{
	const struct js_group *gr = &r->s->grp[g];
	uint64_t target = UINT64_MAX, quiet = 0;
	const char *why;
	struct judge_finding *f;
	uint32_t ix[JUDGE_MAX_CULPRITS];
	struct line l;
	size_t i;

	for (i = gr->first; i < gr->first + gr->n; i++)
		if ((r->s->ent[i].flags & E_NAMED) && ent_comm(r, &r->s->ent[i])->done + 1 < target)
			target = ent_comm(r, &r->s->ent[i])->done + 1;
	if (target == UINT64_MAX)
		return;
	f = js_group_finding(r, JUDGE_GPU_STUCK, g, &l);
	f->colls = target;
	for (i = gr->first; i < gr->first + gr->n; i++) {
		const struct js_entry *e = &r->s->ent[i];
		const struct js_hot *c = ent_comm(r, e);

		if (!(e->flags & E_NAMED) || c->done + 1 != target) {
			f->npeers_waiting++;
			continue;
		}
		js_add_culprit(r, f, ix, i);
		if (rules_age(r->now, c->progress_ns) > quiet) {
			quiet = rules_age(r->now, c->progress_ns);
			f->since_ns = c->progress_ns;
		}
		if (!f->func[0] && c->colls == target) {
			const struct detect_comm *cf = ent_full(r, e);

			rules_text_copy(f->func, sizeof(f->func), cf->func, sizeof(cf->func));
			f->seq = cf->seq;
		}
	}
	f->for_ns = quiet;
	put_coll(&l, f);
	js_put(&l, " stuck on the GPU ");
	js_put_secs(&l, f->for_ns);
	js_put(&l, ", kernels still running on ");
	js_put_culprits(&l, r->st, r->rk, ix, f->nculprits, f->ncul_total);
	f->evidence = stuck_evidence(r, gr, target, fallback, &why);
	if (f->evidence == DETECT_INFERRED)
		js_put(&l, "; inferred: %s", why);
	else
		js_put(&l, " where %zu of its peers completed it", npeers_done(r, gr, target));
}

/* Whether a live member of group gr is in none of gr's collectives but in
 * flight past the threshold in another communicator: gr's stuck kernels
 * wait on a rank held elsewhere (a pipeline stage whose TP group waits on
 * a rank stuck in its own transfer), the effect of a cause there. */
static int
member_held_elsewhere(const struct round *r, const struct js_group *gr)
{
	size_t i;

	for (i = gr->first; i < gr->first + gr->n; i++) {
		const struct js_entry *e = &r->s->ent[i];

		if (ent_comm(r, e)->exited || (e->flags & (E_WAITING | E_STUCK)))
			continue;
		if (r->s->nbusy[e->ix] > 0)
			return 1;
	}
	return 0;
}

/* Whether every communicator of input rank ix has been quiet for the hang
 * threshold (rules_quiet). */
static int
quiet_rank(const struct round *r, uint32_t ix)
{
	size_t i;

	for (i = 0; i < r->nent; i++) {
		const struct js_hot *h = ent_comm(r, &r->s->ent[i]);

		if (r->s->ent[i].ix == ix &&
		    !rules_quiet(h->flags, h->colls, h->enter_ns, h->progress_ns, r->now,
				 r->p->hang_threshold_ns))
			return 0;
	}
	return 1;
}

/* Whether the stuck entry i of group gr is a p2p operation whose peer
 * moved within the threshold (not quiet: rules_quiet) while a cause was
 * named within the threshold: the pipeline refills after that cause went
 * (a rank back from a pause; its stage computes before its send), and the
 * transfer only waits on a stage that works; the never-silent rule leaves
 * it. */
static int
p2p_peer_moving(const struct round *r, const struct js_group *gr, size_t i)
{
	const struct js_hot *c = ent_comm(r, &r->s->ent[i]);
	size_t j;

	if (!(c->flags & DETECT_P2P) || !r->s->found_ns ||
	    rules_age(r->now, r->s->found_ns) > r->p->hang_threshold_ns)
		return 0;
	for (j = gr->first; j < gr->first + gr->n; j++) {
		const struct js_entry *p = &r->s->ent[j];

		if (j != i && ent_comm(r, p)->rank == c->p2p_peer)
			return !ent_comm(r, p)->exited && !quiet_rank(r, p->ix);
	}
	return 0;
}

/*
 * The p2p rule (judge.h) for the stuck entry i of group gr: 1 when it
 * waits in a p2p operation on a peer that is in flight with another peer
 * (itself waiting) or in no p2p operation of gr (missing: it never posted
 * its part), the effect of a cause elsewhere, or in flight in the same
 * transfer but not stuck (that end moves: not this round); 0 when its peer
 * is stuck in the same transfer (*mate set to the peer's entry), or
 * nothing is known of its p2p operations.
 */
static int
p2p_effect(const struct round *r, const struct js_group *gr, size_t i, uint32_t *mate)
{
	const struct js_hot *c = ent_comm(r, &r->s->ent[i]);
	size_t j;

	*mate = UINT32_MAX;
	if ((c->flags & (DETECT_P2P | DETECT_GPU)) != (DETECT_P2P | DETECT_GPU) ||
	    c->colls > c->done)
		return 0;
	for (j = gr->first; j < gr->first + gr->n; j++) {
		const struct js_entry *e = &r->s->ent[j];
		const struct js_hot *pc = ent_comm(r, e);

		if (j == i || pc->rank != c->p2p_peer)
			continue;
		if (ent_comm(r, e)->exited || !(pc->flags & DETECT_P2P) ||
		    pc->p2p_peer != c->rank)
			return 1;
		if (!(e->flags & E_STUCK))
			return 1;	/* its other end moves: read skew, or it
					 * posts only now (never-silent's grace) */
		*mate = (uint32_t)j;
		return 0;
	}
	return 1;
}

/* Whether a member of group gr is named this round by the lag rule (a
 * lagger, busy or not: js_not_entered): the stuck kernels of its peers
 * wait on it. */
static int
group_culprit(const struct round *r, const struct js_group *gr)
{
	size_t i;

	for (i = gr->first; i < gr->first + gr->n; i++)
		if (r->s->culprit[r->s->ent[i].ix])
			return 1;
	return 0;
}

/* Whether a live member of group gr completed, a moment ago, a collective
 * a stuck member's kernel still runs (rules_just_completed): read skew
 * between two records or two nodes' summaries, not a stuck kernel yet. */
static int
group_just_moved(const struct round *r, const struct js_group *gr)
{
	size_t i, j;

	for (i = gr->first; i < gr->first + gr->n; i++) {
		const struct js_hot *s = ent_comm(r, &r->s->ent[i]);

		if (!(r->s->ent[i].flags & E_STUCK))
			continue;
		for (j = gr->first; j < gr->first + gr->n; j++) {
			const struct js_hot *m = ent_comm(r, &r->s->ent[j]);

			if (j != i && !m->exited &&
			    rules_just_completed(m->flags, m->done, s->done, m->progress_ns, r->now,
						 end_grace(r->p)))
				return 1;
		}
	}
	return 0;
}

/* Whether an entry of group gr has flag. */
static int
group_any(const struct round *r, const struct js_group *gr, uint16_t flag)
{
	size_t i;

	for (i = gr->first; i < gr->first + gr->n; i++)
		if (r->s->ent[i].flags & flag)
			return 1;
	return 0;
}

/* Stuck kernels where the group has no cause of its own (a member that
 * exited or lags, members missing while a node is lost, a member held in
 * another communicator); when nothing at all was found and no rank
 * exited, every stuck kernel. */
void
js_gpu_stuck_all(struct round *r)
{
	size_t i, g;
	int pass;

	for (i = 0; i < r->nent; i++)
		r->s->ent[i].flags &= (uint16_t)~E_NAMED;
	for (pass = 0; pass < 2; pass++) {
		size_t before = r->count;

		/* Never silent, unless an exit explains the waits (one named,
		 * one in its grace, or the step being ended), ranks are
		 * missing (a node lost, late or unheard: the waits may be on
		 * them, and a lost node has its own finding), or the causes
		 * named a moment ago have just gone (a rank aborting on its
		 * timeout: its exit comes next); and only for kernels stuck a
		 * grace past the threshold. */
		if (pass == 1 && (r->count > 0 || r->any_exit || r->any_lost ||
				  (r->s->found_ns && rules_age(r->now, r->s->found_ns) <= end_grace(r->p))))
			break;
		for (g = 0; g < r->ngrp; g++) {
			const struct js_group *gr = &r->s->grp[g];

			if (!group_any(r, gr, E_STUCK) || group_just_moved(r, gr))
				continue;	/* (most groups: nothing below to do) */
			if (pass == 0 && (gr->any_exited || gr->any_lagger ||
					  (gr->missing && r->any_lost) || gr->unwatched ||
					  member_held_elsewhere(r, gr) || group_culprit(r, gr)))
				continue;
			for (i = gr->first; i < gr->first + gr->n; i++) {
				uint32_t mate;

				if (!(r->s->ent[i].flags & E_STUCK))
					continue;
				if (pass == 1) {
					/* a grace past the threshold: the cause (a rank
					 * its peers wait for elsewhere) crosses it a
					 * round or so after the stages it holds */
					if (rules_age(r->now, ent_comm(r, &r->s->ent[i])->progress_ns) >
						    r->p->hang_threshold_ns + end_grace(r->p) &&
					    !p2p_peer_moving(r, gr, i))
						r->s->ent[i].flags |= E_NAMED;
					continue;
				}
				if (p2p_effect(r, gr, i, &mate))
					continue;
				r->s->ent[i].flags |= E_NAMED;
				if (mate != UINT32_MAX)
					r->s->ent[mate].flags |= E_NAMED;
			}
			stuck_findings(r, g, pass == 1);
		}
		if (r->count > before) {
			r->fallback = pass == 1;
			break;
		}
	}
}

/* An exit, for the step's-end rule (judge.h): rules.h's class of its
 * status, an exit with no status yet counted as ended by signal. */
static enum rules_exit
exit_class(const struct detect_rank *d)
{
	return d->exit_known ? rules_exit_class(d->exit_status) : RULES_EXIT_ENDED;
}

/* The signal of an exit ended by signal, 0 when its status is not known. */
static int
exit_signal(const struct detect_rank *d)
{
	return d->exit_known ? rules_exit_signal(d->exit_status) : 0;
}

/* An exited rank: st its wait status, -1 unknown. */
static void
exit_finding(struct round *r, uint32_t ix, int st)
{
	const struct judge_rank *jr = &r->rk[ix];
	struct judge_finding *f = js_finding_new(r, JUDGE_EXITED);
	struct line l = { f->text, sizeof(f->text), 0 };

	f->culprits[0] = jr->st.rank;
	f->nculprits = f->ncul_total = 1;
	f->node = (int32_t)jr->node;
	f->exit_status = st;
	f->since_ns = jr->st.exit_ns;
	f->for_ns = jr->st.exit_ns ? rules_age(r->now, jr->st.exit_ns) : 0;
	if (r->s->rgrp[ix] != UINT32_MAX)
		group_label(r, r->s->rgrp[ix], f->group, sizeof(f->group));
	else
		rules_text_copy(f->group, sizeof(f->group), "world", 6);
	js_put(&l, "%s: rank ", f->group);
	js_put_where(&l, r->st, jr);
	if (st < 0)
		js_put(&l, " exited (status unknown)");
	else if (WIFSIGNALED(st))
		js_put(&l, " was killed by signal %d", WTERMSIG(st));
	else
		js_put(&l, " exited with status %d", WEXITSTATUS(st));
	js_put(&l, st < 0 || rules_exit_class(st) != RULES_EXIT_ZERO ?
	    "; its peers will wait on it" :
	    "; a live peer waits on it at a collective it never reached");
}

/* The note of a step being ended by signal (judge_state_end). */
static void
end_note(struct round *r, uint32_t nterm, uint32_t nexited, int sig, uint64_t since)
{
	struct judge_end *e = &r->s->end;
	struct line l = { e->text, sizeof(e->text), 0 };
	uint32_t world = r->st->world ? r->st->world : (uint32_t)r->n;

	e->ending = 1;
	e->nsignaled = nterm;
	e->nexited = nexited;
	e->sig = sig;
	e->since_ns = since;
	js_put(&l, "step cancelled/ended by signal: %u of %u ranks ended by a termination signal",
	    nterm, world);
	if (sig > 0)
		js_put(&l, " (the first by signal %d)", sig);
	js_put(&l, "; no rank named");
}

/* Per input rank: exited, and in one of its groups a live member waits
 * past the threshold at a collective it never reached (the exit rule for
 * an exit 0, rules.h). */
static void
mark_awaited(struct round *r)
{
	size_t g, i, j;

	memset(r->s->awaited, 0, r->n);
	for (g = 0; g < r->ngrp; g++) {
		const struct js_group *gr = &r->s->grp[g];

		if (!gr->any_exited)
			continue;
		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_hot *x = ent_comm(r, &r->s->ent[i]);

			if (!x->exited || r->s->awaited[r->s->ent[i].ix])
				continue;
			for (j = gr->first; j < gr->first + gr->n; j++) {
				const struct js_hot *m = ent_comm(r, &r->s->ent[j]);

				if (!m->exited && rules_exit0_awaited(x->colls, m->flags, m->colls, m->done,
								      m->enter_ns, r->now,
								      r->p->hang_threshold_ns)) {
					r->s->awaited[r->s->ent[i].ix] = 1;
					break;
				}
			}
		}
	}
}

/*
 * The exits, by the step's-end rule (judge.h): the step ending by signal
 * names nobody; otherwise the first cause is named (the failures within
 * the grace of it), and what follows it is the step coming down.  An exit
 * 0 is a cause only when a live peer waits for it (mark_awaited).
 */
void
js_exits(struct round *r)
{
	struct js_wait *w = r->s->wt;
	uint64_t grace = end_grace(r->p);
	uint64_t t_term = UINT64_MAX, t_fail = UINT64_MAX, t0 = UINT64_MAX;
	uint32_t world = r->st->world ? r->st->world : (uint32_t)r->n;
	uint32_t nterm = 0;
	size_t i, nx = 0, nrun = 0;
	int pass, sig = 0;

	memset(&r->s->end, 0, sizeof(r->s->end));
	for (i = 0; i < r->n; i++) {
		const struct detect_rank *d = &r->rk[i].st;

		if (!r->rk[i].present)
			continue;
		if (!d->exited) {
			nrun++;
			continue;
		}
		w[nx].t = (uint64_t)d->rank;
		w[nx++].e = (uint32_t)i;
		r->any_exit = 1;
		switch (exit_class(d)) {
		case RULES_EXIT_ENDED:
			nterm++;
			if (d->exit_ns < t_term || t_term == UINT64_MAX) {
				t_term = d->exit_ns;
				sig = exit_signal(d);
			}
			break;
		case RULES_EXIT_FAILED:
			if (d->exit_ns < t_fail)
				t_fail = d->exit_ns;
			break;
		case RULES_EXIT_ZERO:
			break;
		}
	}
	if (2 * (uint64_t)nterm > world && (t_fail == UINT64_MAX || t_fail > t_term)) {
		end_note(r, nterm, (uint32_t)nx, sig, t_term);
		return;
	}
	mark_awaited(r);
	qsort(w, nx, sizeof(*w), js_wait_cmp);
	/* Which exits are causes: a failure at once, an end by signal after
	 * the grace, exit 0 when a live peer waits for it. */
	for (i = 0; i < nx; i++) {
		const struct detect_rank *d = &r->rk[w[i].e].st;
		uint64_t gone = d->exit_ns ? rules_age(r->now, d->exit_ns) : UINT64_MAX;
		enum rules_exit c = exit_class(d);
		int cause;

		cause = c == RULES_EXIT_FAILED || (c == RULES_EXIT_ENDED && gone > grace) ||
			(c == RULES_EXIT_ZERO && nrun && r->s->awaited[w[i].e]);
		/* An exit while a hang is named is its effect: the peers'
		 * timeouts (NCCL's watchdog) aborting them. */
		if (r->s->hang_first_ns && d->exit_ns >= r->s->hang_first_ns &&
		    d->exit_ns <= r->s->hang_last_ns + grace)
			cause = 0;
		w[i].t = cause ? 1 : 0;
		if (cause && d->exit_ns < t0)
			t0 = d->exit_ns;
	}
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < nx; i++) {
			const struct detect_rank *d = &r->rk[w[i].e].st;
			enum rules_exit c = exit_class(d);

			if (!w[i].t || (c == RULES_EXIT_ZERO) != (pass == 1))
				continue;
			/* Within the grace of the first cause; a kill or exit 0
			 * after a failure is the step coming down. */
			if ((d->exit_ns > t0 && d->exit_ns - t0 > grace) ||
			    (c != RULES_EXIT_FAILED && t_fail != UINT64_MAX && d->exit_ns > t_fail))
				continue;
			exit_finding(r, w[i].e, d->exit_known ? d->exit_status : -1);
		}
}

/* The line of the step's leader lost, as the node acting for it sees it:
 * which nodes' summaries come to it (heard, not lost: the followers that
 * failed over, and its own), and that the nodes it never heard from are
 * not judged. */
static void
leader_lost(const struct round *r, const struct judge_node *nd, struct line *l)
{
	size_t k, nf = 0, nu = 0, shown = 0;

	js_put(l, "world: the step's leader %s unreachable; acting for it, ",
	       nd->name && nd->name[0] ? nd->name : "(name unknown)");
	for (k = 0; k < r->st->nnodes; k++) {
		const struct judge_node *o = &r->st->nodes[k];

		nu += o->unheard;
		nf += !o->lost && o->last_ns;
	}
	js_put(l, "summaries come here from %zu node%s", nf, nf == 1 ? "" : "s");
	for (k = 0; k < r->st->nnodes && nf; k++) {
		const struct judge_node *o = &r->st->nodes[k];

		if (o->lost || !o->last_ns)
			continue;
		if (shown == 3) {
			js_put(l, ", ...");
			break;
		}
		js_put(l, "%s%s", shown ? ", " : " (", o->name && o->name[0] ? o->name : "?");
		shown++;
	}
	js_put(l, "%s", shown ? ")" : "");
	if (nu)
		js_put(l, "; %zu not heard from, not judged", nu);
}

void
js_nodes_lost(struct round *r)
{
	size_t k, i;

	for (k = 0; k < r->st->nnodes; k++) {
		const struct judge_node *nd = &r->st->nodes[k];
		struct judge_finding *f;
		struct line l;
		size_t nr = 0;

		if (nd->lost || nd->late)
			r->any_lost = 1;	/* a late node's ranks missing, as a lost one's */
		if (!nd->lost)
			continue;
		if (nd->unheard)
			continue;
		for (i = 0; i < r->n; i++)
			nr += r->rk[i].node == k;
		f = js_finding_new(r, JUDGE_NODE_LOST);
		l.b = f->text;
		l.size = sizeof(f->text);
		l.len = 0;
		rules_text_copy(f->group, sizeof(f->group), "world", 6);
		f->node = (int32_t)k;
		f->since_ns = nd->last_ns;
		f->for_ns = nd->last_ns ? rules_age(r->now, nd->last_ns) : 0;
		if (nd->leader) {
			leader_lost(r, nd, &l);
			continue;
		}
		if (nd->name && nd->name[0])
			js_put(&l, "world: node %s lost: ", nd->name);
		else
			js_put(&l, "world: node %zu (name unknown) lost: ", k);
		if (nd->last_ns) {
			js_put(&l, "no summary for ");
			js_put_secs(&l, f->for_ns);
		} else {
			js_put(&l, "no summary yet");
		}
		js_put(&l, "; its %zu rank%s unknown", nr, nr == 1 ? "" : "s");
	}
}

/*
 * Every present live rank that has run a collective is idle outside NCCL:
 * nothing in flight or entered and not completed (the GPU part says so)
 * in any communicator, nothing busy; the last of their activity longer
 * ago than the stall threshold.
 */
void
js_stalled(struct round *r)
{
	uint64_t last = r->stall_last;
	size_t nr = r->stall_nr;
	struct judge_finding *f;
	struct line l;

	if (r->no_stall || !nr || rules_age(r->now, last) <= r->p->stall_threshold_ns)
		return;
	f = js_finding_new(r, JUDGE_STALLED);
	l.b = f->text;
	l.size = sizeof(f->text);
	l.len = 0;
	rules_text_copy(f->group, sizeof(f->group), "world", 6);
	f->since_ns = last;
	f->for_ns = rules_age(r->now, last);
	js_put(&l, "world: all %zu ranks idle outside NCCL for ", nr);
	js_put_secs(&l, f->for_ns);
	js_put(&l, ", none in a collective (a checkpoint, a stuck file system?)");
}

/* "AllGather (4194304 x ncclInt8)", " root 3" for a rooted one. */
static void
put_sig(struct line *l, const struct detect_sig *g)
{
	js_put(l, "%s (%llu x %s", g->func, (unsigned long long)g->count,
	       g->dtype[0] ? g->dtype : "?");
	if (!strcmp(g->func, "Broadcast") || !strcmp(g->func, "Reduce"))
		js_put(l, ", root %d", g->root);
	js_put(l, ")");
}

/*
 * The mismatch rule (judge.h) on group g: at the position its earliest
 * waiting member waits in, the live members' signatures; when they are not
 * all alike, one finding naming those whose signature is not the
 * majority's (all there on a tie).  Its members there count as stuck
 * (E_MISM: the victim rule leaves their waits elsewhere out), and the
 * culprits as named (their groups' stuck kernels are the effect).
 */
static void
mismatch_group(struct round *r, size_t g)
{
	const struct js_group *gr = &r->s->grp[g];
	uint64_t pos = UINT64_MAX, since = UINT64_MAX;
	uint32_t ent[JUDGE_MAX_CULPRITS], ix[JUDGE_MAX_CULPRITS];
	size_t i, m = 0, major, kinds, nodd = 0;
	struct judge_finding *f;
	struct line l;
	int tie;

	if (gr->missing || gr->any_exited || !group_any(r, gr, E_WAITING))
		return;
	for (i = gr->first; i < gr->first + gr->n; i++)
		if ((r->s->ent[i].flags & E_WAITING) && ent_comm(r, &r->s->ent[i])->colls < pos)
			pos = ent_comm(r, &r->s->ent[i])->colls;
	for (i = gr->first; i < gr->first + gr->n; i++) {
		const struct js_entry *e = &r->s->ent[i];
		const struct detect_comm *c = ent_full(r, e);

		if (ent_comm(r, e)->colls != pos || !c->func[0])
			continue;
		detect_sig_of(c, &r->s->sig[m]);
		r->s->sigp[m] = &r->s->sig[m];
		r->s->wt[m].e = (uint32_t)i;
		m++;
		if (ent_comm(r, e)->enter_ns < since)
			since = ent_comm(r, e)->enter_ns;
	}
	if (m < 2 || (kinds = rules_sig_split(r->s->sigp, m, &major)) < 2)
		return;
	tie = major == SIZE_MAX;
	f = js_group_finding(r, JUDGE_MISMATCH, g, &l);
	f->colls = pos;
	f->since_ns = since;
	f->for_ns = rules_age(r->now, since);
	for (i = 0; i < m; i++) {
		struct js_entry *e = &r->s->ent[r->s->wt[i].e];

		if (!(e->flags & E_STUCK) && r->s->nstuck[e->ix] < 255) {
			e->flags |= E_MISM;
			r->s->nstuck[e->ix]++;
		}
		if (!tie && rules_sig_same(r->s->sigp[i], r->s->sigp[major])) {
			f->nalike++;
			continue;
		}
		if (!nodd++) {
			f->sig = *r->s->sigp[i];
			rules_text_copy(f->func, sizeof(f->func), f->sig.func, sizeof(f->sig.func));
			f->seq = ent_full(r, e)->seq;
		}
		if (nodd <= JUDGE_MAX_CULPRITS)
			ent[nodd - 1] = r->s->wt[i].e;
		r->s->culprit[e->ix] = 1;
	}
	/* the culprits in rank order (the entries ascend by rank) */
	for (i = 0; i < nodd && i < JUDGE_MAX_CULPRITS; i++)
		js_add_culprit(r, f, ix, ent[i]);
	f->ncul_total = nodd;
	if (tie) {
		for (i = 0; i < m && rules_sig_same(r->s->sigp[i], &f->sig); i++)
			;
		f->sig_peers = *r->s->sigp[i < m ? i : 0];
	} else {
		f->sig_peers = *r->s->sigp[major];
	}
	js_put(&l, "collective mismatch at collective %llu: ", (unsigned long long)pos);
	js_put_culprits(&l, r->st, r->rk, ix, f->nculprits, f->ncul_total);
	if (tie) {
		js_put(&l, " disagree: ");
		put_sig(&l, &f->sig);
		js_put(&l, " vs ");
		put_sig(&l, &f->sig_peers);
		js_put(&l, "%s (no majority)", kinds > 2 ? " and more" : "");
	} else {
		js_put(&l, " called ");
		put_sig(&l, &f->sig);
		js_put(&l, " where %zu peer%s called ", f->nalike, f->nalike == 1 ? "" : "s");
		put_sig(&l, &f->sig_peers);
	}
	js_put(&l, "; waiting ");
	js_put_secs(&l, f->for_ns);
}

void
js_mismatch(struct round *r)
{
	size_t g;

	for (g = 0; g < r->ngrp; g++)
		mismatch_group(r, g);
}

/* Whether input rank ix is in a collective of one of its communicators:
 * entered and, as its GPU part says, not completed (past the threshold or
 * not: a rank that waits a moment less than its neighbour is still in
 * NCCL); without the GPU part nothing tells, and it counts as in one. */
static int
in_some_coll(const struct round *r, uint32_t ix)
{
	size_t i;

	for (i = 0; i < r->nent; i++) {
		const struct js_hot *h = ent_comm(r, &r->s->ent[i]);

		if (r->s->ent[i].ix == ix &&
		    (!(h->flags & DETECT_GPU) ? h->colls > 0 : h->colls > h->done))
			return 1;
	}
	return 0;
}

/* Whether input rank ix is idle outside NCCL as its record shows it: in
 * no communicator waiting past the threshold or stuck, in no collective at
 * all, the one entry e of it with no p2p operation in flight, and none of
 * its communicators moved within the threshold. */
static int
idle_peer(const struct round *r, const struct js_entry *e)
{
	const struct js_hot *h = ent_comm(r, e);

	return !h->exited && !(h->flags & DETECT_P2P) && !(e->flags & (E_WAITING | E_STUCK)) &&
	       r->s->nbusy[e->ix] == 0 && !r->s->culprit[e->ix] && !in_some_coll(r, e->ix) &&
	       quiet_rank(r, e->ix);
}

/* Whether input rank ix lags a live member of one of its groups that has
 * entered more collectives and has not completed them (any wait, past the
 * threshold or not): the lag rule names it there, a round or so on, in
 * the group of its own collectives. */
static int
awaited_in_coll(const struct round *r, uint32_t ix)
{
	size_t i, j;

	for (i = 0; i < r->nent; i++) {
		const struct js_entry *e = &r->s->ent[i];
		const struct js_group *gr;

		if (e->ix != ix)
			continue;
		gr = &r->s->grp[e->group];
		for (j = gr->first; j < gr->first + gr->n; j++) {
			const struct js_hot *m = ent_comm(r, &r->s->ent[j]);

			if (!m->exited && m->colls > ent_comm(r, e)->colls &&
			    (!(m->flags & DETECT_GPU) || m->done < m->colls))
				return 1;
		}
	}
	return 0;
}

/*
 * The unposted rule (rules.h) on group g: a member whose p2p operation is
 * stuck on the GPU waits on a neighbour that never posted its part and is
 * idle outside NCCL: that neighbour is named (its own record shows it
 * posted fewer), as a hang, or busy when its process tree makes progress
 * (rules_busy).  Its peer's stuck kernel is the effect (culprit marked).
 * Left to the lag rule when a member of its collectives waits on it too
 * (one finding for one culprit: a stopped stage's TP peers wait on it as
 * its downstream stage's receive does).
 */
static void
unposted_group(struct round *r, size_t g)
{
	const struct js_group *gr = &r->s->grp[g];
	size_t i, j;

	for (i = gr->first; i < gr->first + gr->n; i++) {
		const struct js_entry *e = &r->s->ent[i];
		const struct js_hot *c = ent_comm(r, e);
		const struct detect_comm *cf = ent_full(r, e);
		const struct js_entry *pe = NULL;
		struct judge_finding *f;
		uint32_t ix[1];
		struct line l;
		int busy;

		if (!(e->flags & E_STUCK) || !(c->flags & DETECT_P2P) || c->exited ||
		    c->colls > c->done)
			continue;
		for (j = gr->first; j < gr->first + gr->n && !pe; j++)
			if (j != i && ent_comm(r, &r->s->ent[j])->rank == c->p2p_peer)
				pe = &r->s->ent[j];
		if (!pe || !idle_peer(r, pe) || !rules_p2p_unposted(cf, ent_full(r, pe)) ||
		    awaited_in_coll(r, pe->ix))
			continue;
		busy = rules_busy(&r->rk[pe->ix].st.proc, c->progress_ns, r->now,
				  r->p->hang_threshold_ns, r->p->busy_threshold_ns);
		r->s->culprit[pe->ix] = busy ? 2 : 1;
		f = js_group_finding(r, busy ? JUDGE_BUSY : JUDGE_NOT_ENTERED, g, &l);
		rules_text_copy(f->func, sizeof(f->func), (c->flags & DETECT_SEND) ? "Recv" : "Send",
				5);
		js_add_culprit(r, f, ix, (size_t)(pe - r->s->ent));
		f->npeers_waiting = 1;
		f->since_ns = c->progress_ns;
		f->for_ns = rules_age(r->now, c->progress_ns);
		js_put_culprits(&l, r->st, r->rk, ix, 1, 1);
		js_put(&l, " never posted the %s that rank %lld waits for in its %s, ", f->func,
		       (long long)e->rank, (c->flags & DETECT_SEND) ? "Send" : "Recv");
		js_put_secs(&l, f->for_ns);
		if (busy) {
			js_put(&l, "; busy outside NCCL: ");
			put_doing(&l, &r->rk[pe->ix].st.proc);
		} else {
			js_put(&l, "; it is in no NCCL operation");
			put_tree(r, &l, ix[0]);
		}
	}
}

void
js_p2p_unposted(struct round *r)
{
	size_t g;

	for (g = 0; g < r->ngrp; g++)
		unposted_group(r, g);
}

/* Whether every live member of group gr waits there past the threshold
 * (in a collective or stuck on the GPU), none lagging another. */
static int
group_all_wait(const struct round *r, const struct js_group *gr)
{
	size_t i;

	if (gr->any_exited || gr->any_lagger)
		return 0;
	for (i = gr->first; i < gr->first + gr->n; i++)
		if (!(r->s->ent[i].flags & (E_WAITING | E_STUCK)))
			return 0;
	return 1;
}

/*
 * The unwatched rule (judge.h) on group g, whose live members all wait:
 * the ranks in no group at all (their nodes sent no usable record of
 * them: refused, never written, the hook off) whose coordinates agree with
 * the members' on every axis the members share.  When there are exactly
 * as many as the group misses, they are its missing members and the only
 * ones not seen waiting: one inferred not-entered finding naming them.
 */
static void
unwatched_group(struct round *r, size_t g, size_t nunw)
{
	struct js_group *gr = &r->s->grp[g];
	const struct judge_rank *r0 = &r->rk[r->s->ent[gr->first].ix];
	int vary[JUDGE_NAXES] = { 0 };
	uint32_t ix[JUDGE_MAX_CULPRITS];
	const struct js_hot *pc = NULL;
	const struct detect_comm *pcf = NULL;
	struct judge_finding *f;
	size_t i, a, k, nmiss = 0, nnew = 0, want;
	struct line l;

	want = (size_t)ent_comm(r, &r->s->ent[gr->first])->nranks - gr->n;
	for (i = gr->first + 1; i < gr->first + gr->n; i++)
		for (a = 0; a < JUDGE_NAXES; a++)
			vary[a] |= r->rk[r->s->ent[i].ix].co[a] != r0->co[a];
	for (k = 0; k < nunw; k++) {
		const struct judge_rank *q = &r->rk[r->s->unw[k]];

		for (a = 0; a < JUDGE_NAXES && (vary[a] || q->co[a] == r0->co[a]); a++)
			;
		if (a < JUDGE_NAXES)
			continue;
		nnew += !r->s->culprit[r->s->unw[k]];
		if (nmiss++ < JUDGE_MAX_CULPRITS)
			ix[nmiss - 1] = r->s->unw[k];
	}
	if (nmiss != want)
		return;
	gr->unwatched = 1;	/* its stuck kernels wait on them */
	if (!nnew)
		return;		/* named already, in another of their groups */
	/* where they wait: the earliest collective one of them is in, else
	 * their p2p transfers (a pipeline group) */
	for (i = gr->first; i < gr->first + gr->n; i++) {
		const struct js_hot *c = ent_comm(r, &r->s->ent[i]);

		if (c->colls > c->done && (!pc || c->colls < pc->colls ||
					   (c->colls == pc->colls && c->enter_ns < pc->enter_ns))) {
			pc = c;
			pcf = ent_full(r, &r->s->ent[i]);
		}
	}
	f = js_group_finding(r, JUDGE_NOT_ENTERED, g, &l);
	/* one alert whichever of their groups names them first */
	f->comm_hash = 0;
	f->evidence = DETECT_INFERRED;
	if (pc) {
		rules_text_copy(f->func, sizeof(f->func), pcf->func, sizeof(pcf->func));
		f->seq = pcf->seq;
		f->colls = pc->colls;
		f->since_ns = pc->enter_ns;
	} else {
		for (i = gr->first; i < gr->first + gr->n; i++) {
			const struct js_hot *c = ent_comm(r, &r->s->ent[i]);

			if (!f->since_ns || c->progress_ns < f->since_ns)
				f->since_ns = c->progress_ns;
		}
	}
	f->for_ns = rules_age(r->now, f->since_ns);
	f->npeers_waiting = gr->n;
	f->ncul_total = nmiss;
	for (k = 0; k < nmiss && k < JUDGE_MAX_CULPRITS; k++) {
		f->culprits[k] = r->rk[ix[k]].st.rank;
		r->s->culprit[ix[k]] = 1;
	}
	f->nculprits = (uint32_t)(nmiss < JUDGE_MAX_CULPRITS ? nmiss : JUDGE_MAX_CULPRITS);
	f->node = (int32_t)r->rk[ix[0]].node;
	js_put_culprits(&l, r->st, r->rk, ix, f->nculprits, f->ncul_total);
	js_put(&l, " unwatched (its node has no usable record of %s) while %zu peer%s ha%s "
	       "waited ", nmiss == 1 ? "it" : "them", f->npeers_waiting,
	       f->npeers_waiting == 1 ? "" : "s", f->npeers_waiting == 1 ? "s" : "ve");
	js_put_secs(&l, f->for_ns);
	if (pc) {
		js_put(&l, " in ");
		put_coll(&l, f);
	} else {
		js_put(&l, " in p2p transfers");
	}
	put_tree(r, &l, ix[0]);
	js_put(&l, "; inferred: the only member%s not seen waiting", nmiss == 1 ? "" : "s");
}

/* Whether a member of group gr is in one of its collectives (entered, not
 * completed). */
static int
group_in_coll(const struct round *r, const struct js_group *gr)
{
	size_t i;

	for (i = gr->first; i < gr->first + gr->n; i++)
		if (ent_comm(r, &r->s->ent[i])->colls > ent_comm(r, &r->s->ent[i])->done)
			return 1;
	return 0;
}

void
js_unwatched(struct round *r)
{
	size_t i, g, nunw = 0;
	int pass;

	if (r->any_lost)
		return;		/* missing members may be a lost node's */
	memset(r->s->seen, 0, r->n);
	for (i = 0; i < r->nent; i++)
		r->s->seen[r->s->ent[i].ix] = 1;
	for (i = 0; i < r->n; i++)
		if (r->rk[i].present && !r->rk[i].st.exited && !r->s->seen[i])
			r->s->unw[nunw++] = (uint32_t)i;
	if (!nunw)
		return;
	/* the groups waiting in a collective first (their text names it),
	 * then those waiting in p2p transfers only */
	for (pass = 0; pass < 2; pass++)
		for (g = 0; g < r->ngrp; g++) {
			const struct js_group *gr = &r->s->grp[g];

			if (gr->unwatched || !gr->missing || gr->n < 2 || group_culprit(r, gr) ||
			    !group_all_wait(r, gr) || group_in_coll(r, gr) != (pass == 0))
				continue;
			unwatched_group(r, g, nunw);
		}
}
