/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The alert state machine (alerts.h).  Open alerts live in one array in
 * the order they fired, resolved ones in a ring of ALERTS_RECENT.  A
 * round compares each finding's fingerprint with the open alerts of its
 * step: linear, which is what a step's few findings against at most a few
 * thousand open alerts need.
 */
#include <stdlib.h>
#include <string.h>

#include "alerts.h"

/* A step's bucket of fires (alerts_set_step_limits). */
struct step_limit {
	uint64_t job_id, step_id;
	double tokens;			/* fires it may make now */
	uint64_t at_ns;			/* when tokens was last brought up to date */
	uint64_t suppressed;		/* its findings not fired */
	int used;
};

struct alerts {
	size_t max_open;
	size_t step_max_open;		/* 0: no bound */
	double fires_per_ns;		/* 0: no bound */
	struct step_limit *steps;	/* max_open of them: a step without
					 * open alerts gives its place up */
	size_t nopen;
	struct alert *open;		/* max_open of them */
	struct alert recent[ALERTS_RECENT];
	size_t nrecent;
	size_t recent_next;		/* where the next resolved one goes */
	struct alerts_stats st;
};

struct alerts *
alerts_new(size_t max_open, pl_err_t *err)
{
	struct alerts *t;

	if (max_open < 1 || max_open > ALERTS_MAX_OPEN) {
		pl_err_set(err, "open alerts: %zu is out of range (1 to %d)", max_open,
			   ALERTS_MAX_OPEN);
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t) {
		t->open = calloc(max_open, sizeof(*t->open));
		t->steps = calloc(max_open, sizeof(*t->steps));
	}
	if (!t || !t->open || !t->steps) {
		if (t) {
			free(t->open);
			free(t->steps);
		}
		free(t);
		pl_err_set(err, "out of memory for %zu open alerts", max_open);
		return NULL;
	}
	t->max_open = max_open;
	return t;
}

void
alerts_free(struct alerts *t)
{
	if (!t)
		return;
	free(t->open);
	free(t->steps);
	free(t);
}

void
alerts_set_step_limits(struct alerts *t, size_t max_open, unsigned long fires_per_hour)
{
	t->step_max_open = max_open;
	t->fires_per_ns = (double)fires_per_hour / 3600e9;
}

static size_t
step_nopen(const struct alerts *t, uint64_t job_id, uint64_t step_id)
{
	size_t i, n = 0;

	for (i = 0; i < t->nopen; i++)
		n += t->open[i].key.job_id == job_id && t->open[i].key.step_id == step_id;
	return n;
}

/* The step's bucket, or NULL. */
static struct step_limit *
step_find(struct alerts *t, uint64_t job_id, uint64_t step_id)
{
	size_t i;

	for (i = 0; i < t->max_open; i++)
		if (t->steps[i].used && t->steps[i].job_id == job_id &&
		    t->steps[i].step_id == step_id)
			return &t->steps[i];
	return NULL;
}

/* The step's bucket, brought up to now: found, or made in a free place
 * or one whose step has no alert open (it starts full); NULL when every
 * place holds a step with open alerts (then the table is full too). */
static struct step_limit *
step_limit(struct alerts *t, uint64_t job_id, uint64_t step_id, uint64_t now_ns)
{
	double cap = t->step_max_open ? (double)t->step_max_open : 64.0;
	struct step_limit *sl = step_find(t, job_id, step_id);
	size_t i;

	if (!sl) {
		for (i = 0; i < t->max_open && !sl; i++)
			if (!t->steps[i].used)
				sl = &t->steps[i];
		for (i = 0; i < t->max_open && !sl; i++)
			if (step_nopen(t, t->steps[i].job_id, t->steps[i].step_id) == 0)
				sl = &t->steps[i];
		if (!sl)
			return NULL;
		memset(sl, 0, sizeof(*sl));
		sl->used = 1;
		sl->job_id = job_id;
		sl->step_id = step_id;
		sl->tokens = cap;
		sl->at_ns = now_ns;
	}
	if (now_ns > sl->at_ns) {
		sl->tokens += (double)(now_ns - sl->at_ns) * t->fires_per_ns;
		if (sl->tokens > cap)
			sl->tokens = cap;
	}
	sl->at_ns = now_ns;
	return sl;
}

/* Whether a new alert of job.step may fire now; takes its fire from the
 * bucket when it may, counts it suppressed when not. */
static int
step_may_fire(struct alerts *t, uint64_t job_id, uint64_t step_id, uint64_t now_ns,
	      int *first)
{
	struct step_limit *sl;

	*first = 0;
	if (!t->step_max_open && t->fires_per_ns <= 0)
		return 1;
	sl = step_limit(t, job_id, step_id, now_ns);
	if (sl && (!t->step_max_open || step_nopen(t, job_id, step_id) < t->step_max_open) &&
	    (t->fires_per_ns <= 0 || sl->tokens >= 1.0)) {
		if (t->fires_per_ns > 0)
			sl->tokens -= 1.0;
		return 1;
	}
	t->st.suppressed++;
	if (sl)
		*first = sl->suppressed++ == 0;
	return 0;
}

/* A step gone from this table (ended, handed over): its bucket too. */
static void
step_forget(struct alerts *t, uint64_t job_id, uint64_t step_id)
{
	struct step_limit *sl = step_find(t, job_id, step_id);

	if (sl)
		sl->used = 0;
}

static int
cmp_rank(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

void
alert_key_of(const struct judge_finding *f, uint64_t job_id, uint64_t step_id,
	     struct alert_key *k)
{
	size_t n = f->nculprits < JUDGE_MAX_CULPRITS ? f->nculprits : JUDGE_MAX_CULPRITS;

	memset(k, 0, sizeof(*k));
	k->kind = f->kind;
	k->job_id = job_id;
	k->step_id = step_id;
	k->comm_hash = f->comm_hash;
	k->node = f->kind == JUDGE_NODE_LOST ? f->node : -1;
	k->evidence = f->evidence == DETECT_INFERRED ? DETECT_INFERRED : DETECT_OBSERVED;
	k->nranks = (uint32_t)n;
	k->ncul_total = f->ncul_total > n ? f->ncul_total : n;
	memcpy(k->ranks, f->culprits, n * sizeof(k->ranks[0]));
	qsort(k->ranks, n, sizeof(k->ranks[0]), cmp_rank);
}

static uint64_t
fnv_u64(uint64_t h, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

uint64_t
alert_key_hash(const struct alert_key *k)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	uint32_t i;

	h = fnv_u64(h, (uint64_t)k->kind);
	h = fnv_u64(h, k->job_id);
	h = fnv_u64(h, k->step_id);
	h = fnv_u64(h, k->comm_hash);
	h = fnv_u64(h, (uint64_t)(int64_t)k->node);
	h = fnv_u64(h, k->ncul_total);
	h = fnv_u64(h, k->nranks);
	for (i = 0; i < k->nranks; i++)
		h = fnv_u64(h, (uint64_t)k->ranks[i]);
	/* (observed keeps the fingerprints alerts had before evidence) */
	if (k->evidence == DETECT_INFERRED)
		h = fnv_u64(h, UINT64_C(0x696e666572726564));
	return h;
}

static int
same_key(const struct alert_key *a, const struct alert_key *b)
{
	return a->kind == b->kind && a->job_id == b->job_id && a->step_id == b->step_id &&
	       a->comm_hash == b->comm_hash && a->node == b->node &&
	       a->evidence == b->evidence && a->nranks == b->nranks &&
	       a->ncul_total == b->ncul_total &&
	       memcmp(a->ranks, b->ranks, a->nranks * sizeof(a->ranks[0])) == 0;
}

static struct alert *
find_open(struct alerts *t, const struct alert_key *k, uint64_t fp)
{
	size_t i;

	for (i = 0; i < t->nopen; i++)
		if (t->open[i].fp == fp && same_key(&t->open[i].key, k))
			return &t->open[i];
	return NULL;
}

/* Resolve open alert i (or hand it over): into the ring, out of the
 * array (order kept). */
static void
leave(struct alerts *t, size_t i, uint64_t now_ns, enum alert_action what, alert_emit emit,
      void *arg)
{
	struct alert *a = &t->open[i];

	a->resolved_ns = now_ns ? now_ns : 1;
	a->seen = 0;
	a->handed = what == ALERT_HANDOVER;
	if (a->handed)
		t->st.handed++;
	else
		t->st.resolved++;
	emit(arg, what, a);
	t->recent[t->recent_next] = *a;
	t->recent_next = (t->recent_next + 1) % ALERTS_RECENT;
	if (t->nrecent < ALERTS_RECENT)
		t->nrecent++;
	memmove(a, a + 1, (t->nopen - i - 1) * sizeof(*a));
	t->nopen--;
}

static void
resolve(struct alerts *t, size_t i, uint64_t now_ns, alert_emit emit, void *arg)
{
	leave(t, i, now_ns, ALERT_RESOLVE, emit, arg);
}

/* When a new alert of finding f starts: the finding's since, unless that
 * lies ahead of now. */
static uint64_t
start_of(const struct judge_finding *f, uint64_t now_ns)
{
	return f->since_ns && f->since_ns <= now_ns ? f->since_ns : now_ns;
}

/* A new finding not made an alert (what: OVERFLOW or SUPPRESSED), told
 * as the alert it would have been. */
static void
not_kept(const struct alert_key *k, uint64_t fp, const struct judge_finding *f, uint64_t now_ns,
	 enum alert_action what, alert_emit emit, void *arg)
{
	struct alert over;

	memset(&over, 0, sizeof(over));
	over.key = *k;
	over.fp = fp;
	over.f = *f;
	over.fired_ns = over.last_seen_ns = now_ns;
	over.starts_ns = start_of(f, now_ns);
	emit(arg, what, &over);
}

static void
one_finding(struct alerts *t, uint64_t job_id, uint64_t step_id, const struct judge_finding *f,
	    uint64_t now_ns, uint64_t resend_ns, alert_emit emit, void *arg)
{
	struct alert_key k;
	struct alert *a;
	uint64_t fp;
	int first;

	alert_key_of(f, job_id, step_id, &k);
	fp = alert_key_hash(&k);
	a = find_open(t, &k, fp);
	if (a) {
		a->f = *f;
		a->last_seen_ns = now_ns;
		if (a->seen)
			return;		/* a second finding of one alert this round */
		a->seen = 1;
		if (now_ns - a->last_sent_ns >= resend_ns) {
			a->last_sent_ns = now_ns;
			a->sends++;
			t->st.resent++;
			emit(arg, ALERT_RESEND, a);
		}
		return;
	}
	if (!step_may_fire(t, job_id, step_id, now_ns, &first)) {
		if (first)
			not_kept(&k, fp, f, now_ns, ALERT_SUPPRESSED, emit, arg);
		return;
	}
	if (t->nopen == t->max_open) {
		t->st.overflow++;
		not_kept(&k, fp, f, now_ns, ALERT_OVERFLOW, emit, arg);
		return;
	}
	a = &t->open[t->nopen++];
	memset(a, 0, sizeof(*a));
	a->key = k;
	a->fp = fp;
	a->f = *f;
	a->starts_ns = start_of(f, now_ns);
	a->fired_ns = a->last_seen_ns = a->last_sent_ns = now_ns;
	a->sends = 1;
	a->seen = 1;
	t->st.fired++;
	emit(arg, ALERT_FIRE, a);
}

void
alerts_update(struct alerts *t, uint64_t job_id, uint64_t step_id,
	      const struct judge_finding *f, size_t n, uint64_t now_ns, uint64_t resend_ns,
	      alert_emit emit, void *arg)
{
	size_t i;

	for (i = 0; i < t->nopen; i++)
		t->open[i].seen = 0;
	for (i = 0; i < n; i++)
		one_finding(t, job_id, step_id, &f[i], now_ns, resend_ns, emit, arg);
	i = 0;
	while (i < t->nopen) {
		struct alert *a = &t->open[i];

		if (a->key.job_id == job_id && a->key.step_id == step_id && !a->seen)
			resolve(t, i, now_ns, emit, arg);
		else
			i++;
	}
}

void
alerts_end_step(struct alerts *t, uint64_t job_id, uint64_t step_id, uint64_t now_ns,
		alert_emit emit, void *arg)
{
	size_t i = 0;

	while (i < t->nopen) {
		if (t->open[i].key.job_id == job_id && t->open[i].key.step_id == step_id)
			resolve(t, i, now_ns, emit, arg);
		else
			i++;
	}
	step_forget(t, job_id, step_id);
}

void
alerts_hand_over(struct alerts *t, uint64_t job_id, uint64_t step_id, uint64_t now_ns,
		 alert_emit emit, void *arg)
{
	size_t i = 0;

	while (i < t->nopen) {
		const struct alert *a = &t->open[i];

		if (a->key.job_id == job_id && a->key.step_id == step_id)
			leave(t, i, now_ns, a->key.kind == JUDGE_NODE_LOST ? ALERT_RESOLVE :
			      ALERT_HANDOVER, emit, arg);
		else
			i++;
	}
	step_forget(t, job_id, step_id);
}

size_t
alerts_nopen(const struct alerts *t)
{
	return t->nopen;
}

const struct alert *
alerts_open(const struct alerts *t, size_t i)
{
	return i < t->nopen ? &t->open[i] : NULL;
}

size_t
alerts_nrecent(const struct alerts *t)
{
	return t->nrecent;
}

const struct alert *
alerts_recent(const struct alerts *t, size_t i)
{
	if (i >= t->nrecent)
		return NULL;
	return &t->recent[(t->recent_next + ALERTS_RECENT - 1 - i) % ALERTS_RECENT];
}

void
alerts_stats(const struct alerts *t, struct alerts_stats *s)
{
	*s = t->st;
}

const char *
alert_name(enum judge_kind k)
{
	switch (k) {
	case JUDGE_EXITED: return "ParallelLayoutRankExited";
	case JUDGE_NODE_LOST: return "ParallelLayoutNodeLost";
	case JUDGE_NOT_ENTERED: return "ParallelLayoutHang";
	case JUDGE_GPU_STUCK: return "ParallelLayoutGpuStuck";
	case JUDGE_STALLED: return "ParallelLayoutJobStalled";
	case JUDGE_SLOW: return "ParallelLayoutSlowRank";
	case JUDGE_TP_NETWORK: return "ParallelLayoutTPOverNetwork";
	case JUDGE_FSDP_ROOT: return "ParallelLayoutFSDPRootOnly";
	case JUDGE_PP_BUBBLE: return "ParallelLayoutPipelineBubble";
	case JUDGE_BUSY: return "ParallelLayoutRankBusy";
	case JUDGE_MISMATCH: return "ParallelLayoutCollectiveMismatch";
	}
	return "ParallelLayoutUnknown";
}

const char *
alert_kind_severity(enum judge_kind k)
{
	return k == JUDGE_STALLED || k == JUDGE_SLOW || k == JUDGE_BUSY || judge_kind_advice(k) ?
	       "warning" : "critical";
}

const char *
alert_severity(const struct judge_finding *f)
{
	return f->evidence == DETECT_INFERRED ? "warning" : alert_kind_severity(f->kind);
}
