/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The alert state machine as a table of cases: each case is a run of
 * rounds, each round a time, the step, the findings written as short
 * words and the events it must give, derived by hand from the rules in
 * alerts.h.  A finding is KIND[:cHASH][:RANK,RANK...][@NODE][#SEQ][/TOTAL]
 * with KIND one of exit, lost, hang, stuck, stalled, slow; an event is
 * F (fire), S (re-send), R (resolve), O (overflow) or H (handed over) and the finding's
 * word without seq; X is a finding suppressed, its step at its own limits.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "tap.h"

#define S	1000000000ULL
#define RESEND	(60 * S)

static const struct {
	const char *word;
	enum judge_kind kind;
} kinds[] = {
	{ "exit", JUDGE_EXITED }, { "lost", JUDGE_NODE_LOST }, { "hang", JUDGE_NOT_ENTERED },
	{ "stuck", JUDGE_GPU_STUCK }, { "stalled", JUDGE_STALLED }, { "slow", JUDGE_SLOW },
};

static const char *
kind_word(enum judge_kind k)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == k)
			return kinds[i].word;
	return "?";
}

/* One finding from its word. */
static void
finding(const char *w, struct judge_finding *f)
{
	char buf[128], *p, *q;
	size_t i;

	memset(f, 0, sizeof(*f));
	f->node = -1;
	snprintf(buf, sizeof(buf), "%s", w);
	p = buf + strcspn(buf, ":@#/");
	q = p;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strncmp(buf, kinds[i].word, (size_t)(p - buf)) == 0 &&
		    strlen(kinds[i].word) == (size_t)(p - buf))
			f->kind = kinds[i].kind;
	while (*q) {
		char c = *q++;
		char *end;

		if (c == ':' && *q == 'c') {
			f->comm_hash = strtoull(q + 1, &end, 16);
			snprintf(f->comm, sizeof(f->comm), "comm%" PRIx64, f->comm_hash);
		} else if (c == ':') {
			end = q;
			do {
				f->culprits[f->nculprits++] = strtoll(end, &end, 10);
			} while (*end == ',' && end++);
			f->ncul_total = f->nculprits;
		} else if (c == '@') {
			f->node = (int32_t)strtol(q, &end, 10);
		} else if (c == '#') {
			f->seq = strtoull(q, &end, 10);
		} else if (c == '/') {
			f->ncul_total = strtoull(q, &end, 10);
		} else {
			break;
		}
		q = end;
	}
	if (f->kind != JUDGE_NODE_LOST && f->nculprits)
		f->node = 0;
	snprintf(f->text, sizeof(f->text), "%s", w);
}

/* The events of a round, as words. */
struct got {
	char text[1024];
	size_t len;
	uint64_t starts[16];
	size_t nstarts;
};

static void
on_event(void *arg, enum alert_action what, const struct alert *a)
{
	static const char act[] = "?FSROHX";
	struct got *g = arg;
	size_t i;

	g->len += (size_t)snprintf(g->text + g->len, sizeof(g->text) - g->len, "%s%c %s",
				   g->len ? " " : "", act[what], kind_word(a->key.kind));
	if (a->key.comm_hash)
		g->len += (size_t)snprintf(g->text + g->len, sizeof(g->text) - g->len,
					   ":c%" PRIx64, a->key.comm_hash);
	for (i = 0; i < a->key.nranks; i++)
		g->len += (size_t)snprintf(g->text + g->len, sizeof(g->text) - g->len, "%c%" PRId64,
					   i ? ',' : ':', a->key.ranks[i]);
	if (a->key.node >= 0)
		g->len += (size_t)snprintf(g->text + g->len, sizeof(g->text) - g->len, "@%d",
					   (int)a->key.node);
	if (a->key.ncul_total > a->key.nranks)
		g->len += (size_t)snprintf(g->text + g->len, sizeof(g->text) - g->len, "/%" PRIu64,
					   a->key.ncul_total);
	if (g->nstarts < 16)
		g->starts[g->nstarts++] = a->starts_ns;
}

struct round {
	unsigned t;		/* seconds */
	unsigned step;		/* of job 7; 99 ends step 0 */
	const char *findings;	/* words, blank-separated */
	const char *events;
};

#define END_STEP 99
#define HAND_OVER 98	/* step 0 handed over (alerts_hand_over) */

static const struct {
	const char *name;
	size_t max_open;
	struct round r[8];
} cases[] = {
	{ "a hang fires once, is quiet until resend is due, re-sent, then resolved", 16, {
		{ 10, 0, "hang:c1:13#40", "F hang:c1:13" },
		{ 11, 0, "hang:c1:13#40", "" },
		{ 69, 0, "hang:c1:13#40", "" },
		{ 70, 0, "hang:c1:13#40", "S hang:c1:13" },
		{ 71, 0, "", "R hang:c1:13" },
		{ 72, 0, "", "" },
	} },
	{ "two findings fire in their order; one goes, the other stays", 16, {
		{ 1, 0, "exit:5 hang:c2:13,14", "F exit:5 F hang:c2:13,14" },
		{ 2, 0, "hang:c2:13,14", "R exit:5" },
	} },
	{ "culprits in another order are the same alert", 16, {
		{ 1, 0, "hang:c2:14,13", "F hang:c2:13,14" },
		{ 2, 0, "hang:c2:13,14", "" },
	} },
	{ "another collective of the same communicator, same culprits: the same alert", 16, {
		{ 1, 0, "stuck:c3:2#7", "F stuck:c3:2" },
		{ 5, 0, "stuck:c3:2#8", "" },
	} },
	{ "a culprit more is a new alert: the new fires, the old resolves", 16, {
		{ 1, 0, "hang:c1:13", "F hang:c1:13" },
		{ 2, 0, "hang:c1:13,14", "F hang:c1:13,14 R hang:c1:13" },
	} },
	{ "more culprits in all than listed is another alert", 16, {
		{ 1, 0, "hang:c1:1,2", "F hang:c1:1,2" },
		{ 2, 0, "hang:c1:1,2/40", "F hang:c1:1,2/40 R hang:c1:1,2" },
	} },
	{ "another communicator with the same culprit is another alert", 16, {
		{ 1, 0, "hang:c1:3 hang:c2:3", "F hang:c1:3 F hang:c2:3" },
	} },
	{ "a lost node is keyed by the node", 16, {
		{ 1, 0, "lost@1", "F lost@1" },
		{ 2, 0, "lost@2", "F lost@2 R lost@1" },
	} },
	{ "a round of one step leaves another step's alerts alone", 16, {
		{ 1, 0, "hang:c1:3", "F hang:c1:3" },
		{ 2, 1, "stalled", "F stalled" },
		{ 3, 1, "", "R stalled" },
		{ 4, 0, "hang:c1:3", "" },
	} },
	{ "the same fingerprint twice in a round is one alert", 16, {
		{ 1, 0, "slow:c4:6 slow:c4:6", "F slow:c4:6" },
		{ 61, 0, "slow:c4:6 slow:c4:6", "S slow:c4:6" },
	} },
	{ "a full table: a new alert overflows, counted, not kept", 2, {
		{ 1, 0, "exit:1 exit:2 exit:3", "F exit:1 F exit:2 O exit:3" },
		{ 2, 0, "exit:1 exit:2 exit:3", "O exit:3" },
		{ 3, 0, "exit:2 exit:3", "O exit:3 R exit:1" },
		{ 4, 0, "exit:2 exit:3", "F exit:3" },
	} },
	{ "a full table: a resolve frees room only after the round's findings", 2, {
		{ 1, 0, "exit:1 exit:2", "F exit:1 F exit:2" },
		{ 2, 0, "exit:3", "O exit:3 R exit:1 R exit:2" },
		{ 3, 0, "exit:3", "F exit:3" },
	} },
	{ "a step that ends resolves all its alerts, and only its", 16, {
		{ 1, 0, "exit:1 stalled", "F exit:1 F stalled" },
		{ 1, 1, "exit:1", "F exit:1" },
		{ 2, END_STEP, "", "R exit:1 R stalled" },
		{ 3, 1, "exit:1", "" },
	} },
	{ "handed over: the lost node resolved, the others left unresolved, another step kept",
	  16, {
		{ 1, 0, "hang:c1:13 lost@0 exit:5", "F hang:c1:13 F lost@0 F exit:5" },
		{ 2, 1, "stalled", "F stalled" },
		{ 3, HAND_OVER, "", "H hang:c1:13 R lost@0 H exit:5" },
		{ 4, 1, "stalled", "" },
		{ 5, 0, "hang:c1:13", "F hang:c1:13" },
	} },
	{ "a resend is due per alert, from its own last send", 16, {
		{ 0, 0, "exit:1", "F exit:1" },
		{ 30, 0, "exit:1 exit:2", "F exit:2" },
		{ 60, 0, "exit:1 exit:2", "S exit:1" },
		{ 90, 0, "exit:1 exit:2", "S exit:2" },
		{ 120, 0, "exit:1", "S exit:1 R exit:2" },
	} },
};

static void
run_case(size_t c)
{
	struct judge_finding f[8];
	struct alerts *t;
	struct got g;
	pl_err_t err;
	size_t r;
	int good = 1;

	pl_err_clear(&err);
	t = alerts_new(cases[c].max_open, &err);
	if (!ok(t != NULL, "%s: a table", cases[c].name))
		return;
	for (r = 0; r < 8 && cases[c].r[r].findings; r++) {
		const struct round *rd = &cases[c].r[r];
		char words[256], *w, *save = NULL;
		size_t n = 0;

		snprintf(words, sizeof(words), "%s", rd->findings);
		for (w = strtok_r(words, " ", &save); w && n < 8; w = strtok_r(NULL, " ", &save))
			finding(w, &f[n++]);
		memset(&g, 0, sizeof(g));
		if (rd->step == END_STEP)
			alerts_end_step(t, 7, 0, rd->t * S, on_event, &g);
		else if (rd->step == HAND_OVER)
			alerts_hand_over(t, 7, 0, rd->t * S, on_event, &g);
		else
			alerts_update(t, 7, rd->step, f, n, rd->t * S, RESEND, on_event, &g);
		if (strcmp(g.text, rd->events) != 0) {
			diag("  round %zu at %u s: got '%s', want '%s'", r, rd->t, g.text, rd->events);
			good = 0;
		}
	}
	ok(good, "%s", cases[c].name);
	alerts_free(t);
}

/* The ring of resolved alerts, the counters, starts_ns, the open list. */
static void
bookkeeping(void)
{
	struct judge_finding f;
	struct alerts_stats st;
	struct alerts *t;
	struct got g;
	const struct alert *a;
	pl_err_t err;
	int i, newest_first = 1;

	pl_err_clear(&err);
	t = alerts_new(4, &err);
	memset(&g, 0, sizeof(g));
	for (i = 0; i < 105; i++) {
		finding("exit:1", &f);
		f.culprits[0] = i;
		alerts_update(t, 7, 0, &f, 1, (uint64_t)(i + 1) * S, RESEND, on_event, &g);
		g.len = 0;
	}
	alerts_update(t, 7, 0, NULL, 0, 200 * S, RESEND, on_event, &g);
	is_int(alerts_nrecent(t), ALERTS_RECENT, "105 resolved: the last %d are kept", ALERTS_RECENT);
	for (i = 0; i < ALERTS_RECENT; i++) {
		a = alerts_recent(t, (size_t)i);
		if (!a || a->key.ranks[0] != 104 - i)
			newest_first = 0;
	}
	ok(newest_first && alerts_recent(t, ALERTS_RECENT) == NULL,
	   "newest first: rank 104 down to 5, and nothing past the end");
	a = alerts_recent(t, 0);
	ok(a && a->resolved_ns == 200 * S && a->fired_ns == 105 * S && a->sends == 1,
	   "the newest resolved at 200 s, fired at 105 s, sent once");
	alerts_stats(t, &st);
	ok(st.fired == 105 && st.resolved == 105 && st.resent == 0 && st.overflow == 0,
	   "counters: 105 fired, 105 resolved (%" PRIu64 ", %" PRIu64 ")", st.fired, st.resolved);
	is_int(alerts_nopen(t), 0, "nothing open after the empty round");

	/* startsAt: the finding's since, unless that lies ahead. */
	finding("hang:c1:3", &f);
	f.since_ns = 250 * S;
	memset(&g, 0, sizeof(g));
	alerts_update(t, 7, 0, &f, 1, 300 * S, RESEND, on_event, &g);
	finding("hang:c1:4", &f);
	f.since_ns = 400 * S;
	alerts_update(t, 7, 1, &f, 1, 300 * S, RESEND, on_event, &g);
	ok(g.nstarts == 2 && g.starts[0] == 250 * S && g.starts[1] == 300 * S,
	   "starts_ns: since_ns 250 s at 300 s, and now for a since_ns ahead of now");
	ok(alerts_nopen(t) == 2 && alerts_open(t, 0)->key.step_id == 0 &&
	   alerts_open(t, 1)->key.step_id == 1 && alerts_open(t, 2) == NULL,
	   "open alerts in the order they fired");
	/* The latest finding is kept. */
	finding("hang:c1:3#99", &f);
	snprintf(f.text, sizeof(f.text), "later text");
	alerts_update(t, 7, 0, &f, 1, 301 * S, RESEND, on_event, &g);
	a = alerts_open(t, 0);
	ok(a && a->f.seq == 99 && strcmp(a->f.text, "later text") == 0 &&
	   a->starts_ns == 250 * S && a->last_seen_ns == 301 * S && a->last_sent_ns == 300 * S,
	   "a still-open alert keeps the latest finding, its start and its last send");
	alerts_free(t);
	ok(alerts_new(0, &err) == NULL && strstr(err.text, "out of range") != NULL,
	   "a table of 0 is refused: %s", err.text);
}

static void
keys(void)
{
	struct judge_finding f;
	struct alert_key a, b;

	finding("hang:c1:13,14", &f);
	alert_key_of(&f, 7, 0, &a);
	finding("hang:c1:14,13#5", &f);
	alert_key_of(&f, 7, 0, &b);
	ok(alert_key_hash(&a) == alert_key_hash(&b), "the fingerprint does not depend on order or seq");
	alert_key_of(&f, 7, 1, &b);
	ok(alert_key_hash(&a) != alert_key_hash(&b), "nor is it the same for another step");
	/* FNV-1a 64 over the little-endian u64s kind 3, job 7, step 0,
	 * hash 1, node -1, total 2, n 2, ranks 13, 14 (worked out apart
	 * from this code, in Python). */
	is_int(alert_key_hash(&a) == UINT64_C(0xdf254b2f0f08bcdb), 1,
	       "the fingerprint of hang c1 13,14 of 7.0 is df254b2f0f08bcdb (%016" PRIx64 ")",
	       alert_key_hash(&a));
	f.evidence = DETECT_INFERRED;
	alert_key_of(&f, 7, 0, &b);
	ok(alert_key_hash(&a) != alert_key_hash(&b) && b.evidence == DETECT_INFERRED,
	   "the same culprits inferred are another alert (its severity differs)");
	f.evidence = DETECT_OBSERVED;
	finding("lost@3", &f);
	alert_key_of(&f, 7, 0, &a);
	ok(a.node == 3 && a.nranks == 0 && a.comm_hash == 0, "node-lost keys its node");
	finding("exit:4", &f);
	f.node = 2;
	alert_key_of(&f, 7, 0, &a);
	ok(a.node == -1, "other kinds do not key the first culprit's node");
	is_str(alert_name(JUDGE_NOT_ENTERED), "ParallelLayoutHang", "alertname of not-entered");
	ok(strcmp(alert_name(JUDGE_GPU_STUCK), "ParallelLayoutGpuStuck") == 0 &&
	   strcmp(alert_name(JUDGE_EXITED), "ParallelLayoutRankExited") == 0 &&
	   strcmp(alert_name(JUDGE_SLOW), "ParallelLayoutSlowRank") == 0 &&
	   strcmp(alert_name(JUDGE_STALLED), "ParallelLayoutJobStalled") == 0 &&
	   strcmp(alert_name(JUDGE_NODE_LOST), "ParallelLayoutNodeLost") == 0,
	   "alertnames of the other kinds");
	ok(strcmp(alert_kind_severity(JUDGE_NOT_ENTERED), "critical") == 0 &&
	   strcmp(alert_kind_severity(JUDGE_GPU_STUCK), "critical") == 0 &&
	   strcmp(alert_kind_severity(JUDGE_EXITED), "critical") == 0 &&
	   strcmp(alert_kind_severity(JUDGE_NODE_LOST), "critical") == 0 &&
	   strcmp(alert_kind_severity(JUDGE_SLOW), "warning") == 0 &&
	   strcmp(alert_kind_severity(JUDGE_STALLED), "warning") == 0,
	   "severity: critical for hang, stuck, exited, lost; warning for slow, stalled");
	ok(strcmp(alert_name(JUDGE_TP_NETWORK), "ParallelLayoutTPOverNetwork") == 0 &&
	   strcmp(alert_name(JUDGE_FSDP_ROOT), "ParallelLayoutFSDPRootOnly") == 0 &&
	   strcmp(alert_kind_severity(JUDGE_TP_NETWORK), "warning") == 0 &&
	   strcmp(alert_kind_severity(JUDGE_FSDP_ROOT), "warning") == 0 &&
	   strcmp(alert_name(JUDGE_PP_BUBBLE), "ParallelLayoutPipelineBubble") == 0 &&
	   strcmp(alert_kind_severity(JUDGE_PP_BUBBLE), "warning") == 0,
	   "the advice is a warning, never critical (TPOverNetwork, FSDPRootOnly, "
	   "PipelineBubble)");
	{
		struct judge_finding g;

		memset(&g, 0, sizeof(g));
		g.kind = JUDGE_GPU_STUCK;
		g.evidence = DETECT_OBSERVED;
		ok(strcmp(alert_severity(&g), "critical") == 0, "an observed stuck kernel: critical");
		g.evidence = DETECT_INFERRED;
		ok(strcmp(alert_severity(&g), "warning") == 0,
		   "the same inferred: a warning (a page rests on what the culprit's record shows)");
		g.kind = JUDGE_NOT_ENTERED;
		ok(strcmp(alert_severity(&g), "warning") == 0, "an inferred hang: a warning");
	}
}

/* A step that makes a new alert every round (a communicator hash changed
 * each round, as a forged record can): at its own limits it fires no
 * more, says so once, and another job's alert still fires. */
static int
churn(struct alerts *t, unsigned rounds, uint64_t t0, struct got *g)
{
	struct judge_finding f;
	struct alerts_stats before, after;
	unsigned i;

	alerts_stats(t, &before);
	for (i = 0; i < rounds; i++) {
		finding("hang:c1:1", &f);
		f.comm_hash = 0x100 + i;
		alerts_update(t, 7, 0, &f, 1, t0 + (uint64_t)i * S, RESEND, on_event, g);
	}
	alerts_stats(t, &after);
	return (int)(after.fired - before.fired);
}

static void
step_limits(void)
{
	struct judge_finding f[6];
	struct alerts_stats st;
	struct alerts *t;
	struct got g;
	pl_err_t err;
	size_t i;
	int fired;

	pl_err_clear(&err);
	t = alerts_new(64, &err);
	memset(&g, 0, sizeof(g));
	is_int(churn(t, 20, S, &g), 20, "no step limits (as before): 20 rounds of a new "
	       "communicator fire 20 alerts");
	alerts_end_step(t, 7, 0, 30 * S, on_event, &g);
	alerts_free(t);

	t = alerts_new(64, &err);
	alerts_set_step_limits(t, 4, 8);
	memset(&g, 0, sizeof(g));
	fired = churn(t, 20, S, &g);
	alerts_stats(t, &st);
	ok(fired == 4 && st.suppressed == 16,
	   "limits 4 open, 8 an hour: 20 rounds of a new communicator fire 4, suppress 16 "
	   "(%d, %" PRIu64 ")", fired, st.suppressed);
	ok(strstr(g.text, "X hang:c104:1") && !strstr(strstr(g.text, "X hang") + 1, "X hang"),
	   "the first suppressed finding is said once: %s", g.text + (g.len > 60 ? g.len - 60 : 0));
	finding("exit:3", &f[0]);
	memset(&g, 0, sizeof(g));
	alerts_update(t, 8, 0, f, 1, 21 * S, RESEND, on_event, &g);
	is_str(g.text, "F exit:3", "another job's alert fires meanwhile");
	/* The bucket refills at 8 an hour: one fire per 450 s. */
	memset(&g, 0, sizeof(g));
	is_int(churn(t, 1, 400 * S, &g), 0, "400 s on: still nothing fires");
	is_int(churn(t, 1, 480 * S, &g), 1, "480 s on (450 s a fire): one more fires");
	alerts_end_step(t, 7, 0, 500 * S, on_event, &g);
	/* The open bound: six findings at once, four fire. */
	for (i = 0; i < 6; i++) {
		finding("exit:1", &f[i]);
		f[i].culprits[0] = (int64_t)i;
	}
	memset(&g, 0, sizeof(g));
	alerts_update(t, 7, 0, f, 6, 501 * S, RESEND, on_event, &g);
	is_str(g.text, "F exit:0 F exit:1 F exit:2 F exit:3 X exit:4",
	       "a step's fifth open alert is suppressed, said once (after the step ended, its "
	       "bucket is new)");
	memset(&g, 0, sizeof(g));
	alerts_update(t, 7, 0, f + 1, 5, 502 * S, RESEND, on_event, &g);
	is_str(g.text, "R exit:0", "one resolves; the one suppressed does not fire in its place "
	       "while the bucket is empty");
	alerts_free(t);
}

int
main(void)
{
	size_t c, nc = sizeof(cases) / sizeof(cases[0]);

	plan((int)(2 * nc) + 9 + 9 + 4 + 8);
	for (c = 0; c < nc; c++)
		run_case(c);
	bookkeeping();
	keys();
	step_limits();
	return done_testing();
}
