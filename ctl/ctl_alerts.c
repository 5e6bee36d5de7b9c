/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `layoutctl alerts`: the open and the recently resolved alerts of the
 * steps a layoutd leads (GET /v1/alerts), as a table or as the daemon's
 * JSON.  Alerts live on the step's leader, the layoutd of the node of rank
 * 0 (or the node acting for it), so --socket names that daemon from any
 * host (http://HOST:PORT with tcp_access trusted).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "client.h"
#include "ctl.h"

#define ALERTS_TIMEOUT_MS 5000L

static int alerts_exec(int argc, char **argv);

const struct ctl_cmd ctl_cmd_alerts = {
	"alerts",
	"[JOBID[.STEP]] [--json] [--socket PATH|http://HOST:PORT] [--timeout MS]",
	"list the open and recent alerts of the steps a layoutd leads",
	"List the alerts of the watched steps a layoutd leads (GET /v1/alerts): the\n"
	"open ones first (since when, severity, alertname, job.step, culprit ranks and\n"
	"nodes, the one-line summary), then the last resolved ones, then what was\n"
	"delivered to Alertmanager and the webhooks (sent, failed, dropped).  A step's\n"
	"alerts are kept by its leader, the layoutd of the node that hosts rank 0\n"
	"(or the node acting for it); the default socket is this node's daemon.\n"
	"JOBID[.STEP] shows only that job (or step).  Users see only their own jobs.\n"
	"--json prints the daemon's answer (filtered by JOBID when given).\n"
	"Exit status: 0 shown, 1 no answer, 2 usage.\n",
	alerts_exec,
	NULL
};

static void
alerts_help(void)
{
	ctl_cmd_help(&ctl_cmd_alerts, NULL);
}

/* JOBID or JOBID.STEP (step -1: every step). */
static int
parse_jobstep(const char *s, long *job, long *step)
{
	char *end = NULL;

	errno = 0;
	*job = strtol(s, &end, 10);
	if (errno || end == s || *job < 0 || !(*s >= '0' && *s <= '9'))
		return -1;
	*step = -1;
	if (*end == '.') {
		const char *p = end + 1;

		if (!(*p >= '0' && *p <= '9'))
			return -1;
		*step = strtol(p, &end, 10);
		if (errno || end == p || *step < 0)
			return -1;
	}
	return *end ? -1 : 0;
}

static const char *
str(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v && *v ? v : "-";
}

/* Keep only job's alerts (step -1: all its steps) in arr. */
static void
keep_job(json_t *arr, long job, long step)
{
	size_t i = 0;

	while (i < json_array_size(arr)) {
		json_t *a = json_array_get(arr, i);

		if (json_integer_value(json_object_get(a, "job_id")) == job &&
		    (step < 0 || json_integer_value(json_object_get(a, "step_id")) == step))
			i++;
		else
			json_array_remove(arr, i);
	}
}

/* "2026-12-01T12:17:09.123Z" as "2026-12-01 12:17:09Z". */
static void
short_time(const char *iso, char *buf, size_t size)
{
	if (strlen(iso) >= 19 && iso[10] == 'T')
		snprintf(buf, size, "%.10s %.8sZ", iso, iso + 11);
	else
		snprintf(buf, size, "%s", iso);
}

static void
print_rows(json_t *arr, bool resolved)
{
	json_t *a;
	size_t i;

	printf("%-20s %-9s %-25s %-10s %-12s %-12s %s\n", resolved ? "RESOLVED" : "SINCE",
	       "SEVERITY", "ALERT", "JOB", "RANKS", "NODES", "SUMMARY");
	json_array_foreach(arr, i, a) {
		json_t *l = json_object_get(a, "labels");
		char t[40], job[48];

		short_time(str(a, resolved ? "resolved_at" : "starts_at"), t, sizeof(t));
		snprintf(job, sizeof(job), "%lld.%lld",
			 (long long)json_integer_value(json_object_get(a, "job_id")),
			 (long long)json_integer_value(json_object_get(a, "step_id")));
		printf("%-20s %-9s %-25s %-10s %-12s %-12s %s\n", t, str(a, "severity"),
		       str(a, "alertname"), job, ctl_clip(str(l, "rank")), ctl_clip(str(l, "node")),
		       str(a, "text"));
	}
}

static void
print_alerts(json_t *root, json_t *open, json_t *recent)
{
	static const char *const rcv[] = { "alertmanager", "webhook" };
	json_t *targets = json_object_get(root, "targets"), *t, *c;
	size_t i;
	int k;

	printf("open alerts: %zu\n", json_array_size(open));
	if (json_array_size(open))
		print_rows(open, false);
	printf("\nrecently resolved: %zu\n", json_array_size(recent));
	if (json_array_size(recent))
		print_rows(recent, true);
	printf("\ndelivery (re-sent every %lld s while firing, %lld retries):\n",
	       (long long)json_integer_value(json_object_get(root, "resend_s")),
	       (long long)json_integer_value(json_object_get(root, "retries")));
	if (json_array_size(targets) == 0)
		printf("  no alertmanager_url or webhook_url configured\n");
	json_array_foreach(targets, i, t)
		printf("  %-12s %s\n", str(t, "receiver"), ctl_clip_path(str(t, "url")));
	for (k = 0; k < 2; k++) {
		c = json_object_get(root, rcv[k]);
		printf("  %-12s sent %lld, failed %lld, dropped %lld, retried %lld\n", rcv[k],
		       (long long)json_integer_value(json_object_get(c, "sent")),
		       (long long)json_integer_value(json_object_get(c, "failed")),
		       (long long)json_integer_value(json_object_get(c, "dropped")),
		       (long long)json_integer_value(json_object_get(c, "retried")));
	}
	c = json_object_get(root, "queue");
	printf("  queue        %lld of %lld\n",
	       (long long)json_integer_value(json_object_get(c, "length")),
	       (long long)json_integer_value(json_object_get(c, "max")));
	c = json_object_get(root, "drain");
	if (json_is_true(json_object_get(c, "enabled")))
		printf("  drain        on, at most %lld an hour: %lld started, %lld ok, %lld failed, "
		       "%lld rate-limited\n",
		       (long long)json_integer_value(json_object_get(c, "max_per_hour")),
		       (long long)json_integer_value(json_object_get(c, "started")),
		       (long long)json_integer_value(json_object_get(c, "ok")),
		       (long long)json_integer_value(json_object_get(c, "failed")),
		       (long long)json_integer_value(json_object_get(c, "rate_limited")));
	else
		printf("  drain        off\n");
}

static int
alerts_exec(int argc, char **argv)
{
	const char *sock = NULL, *jobarg = NULL;
	char sockbuf[4096];
	long timeout = ALERTS_TIMEOUT_MS, job = -1, step = -1;
	bool json = false;
	struct client_reply r;
	json_t *root = NULL, *open, *recent;
	pl_err_t err;
	int i, rv = 1;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i], *val = NULL;

		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			alerts_help();
			return 0;
		} else if (strcmp(arg, "--json") == 0) {
			json = true;
		} else if (strcmp(arg, "--socket") == 0 || strncmp(arg, "--socket=", 9) == 0 ||
			   strcmp(arg, "--timeout") == 0 || strncmp(arg, "--timeout=", 10) == 0) {
			bool is_sock = arg[2] == 's';
			const char *eq = strchr(arg, '=');

			val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!val || !*val) {
				ctl_error("alerts: %s needs a value (see '" CTL_PROG " alerts --help')",
					  is_sock ? "--socket" : "--timeout");
				return 2;
			}
			if (is_sock)
				sock = val;
			else if ((timeout = ctl_parse_count("--timeout", val, 3600000)) < 0)
				return 2;
		} else if (arg[0] == '-') {
			ctl_error("alerts: unknown option '%s' (see '" CTL_PROG " alerts --help')",
				  ctl_clip(arg));
			return 2;
		} else if (!jobarg) {
			jobarg = arg;
			if (parse_jobstep(arg, &job, &step) < 0) {
				ctl_error("alerts: '%s': expected JOBID or JOBID.STEP (whole numbers, "
					  "e.g. 1234 or 1234.0)", ctl_clip(arg));
				return 2;
			}
		} else {
			ctl_error("alerts: unexpected argument '%s'", ctl_clip(arg));
			return 2;
		}
	}
	if (!sock) {
		if (ctl_default_socket("alerts", sockbuf, sizeof(sockbuf)) < 0)
			return 2;
		sock = sockbuf;
	}
	pl_err_clear(&err);
	memset(&r, 0, sizeof(r));
	if (client_request(sock, "GET", "/v1/alerts", NULL, timeout, &r, &err) < 0) {
		ctl_error("alerts: layoutd does not answer: %s", err.text);
		return 1;
	}
	if (r.status != 200) {
		json_t *e = r.body ? json_loads(r.body, 0, NULL) : NULL;
		const char *msg = json_string_value(json_object_get(e, "error"));

		ctl_error("alerts: layoutd answered %ld: %s", r.status, msg ? msg : "no message");
		json_decref(e);
		goto out;
	}
	root = r.body ? json_loads(r.body, 0, NULL) : NULL;
	open = json_object_get(root, "open");
	recent = json_object_get(root, "recent");
	if (!json_is_array(open) || !json_is_array(recent)) {
		ctl_error("alerts: %s: the answer is not a layoutd alert list (an older layoutd?)",
			  ctl_clip_path(sock));
		goto out;
	}
	if (job >= 0) {
		keep_job(open, job, step);
		keep_job(recent, job, step);
	}
	if (json) {
		if (json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
			goto out;
		fputc('\n', stdout);
	} else {
		print_alerts(root, open, recent);
	}
	rv = 0;
out:
	json_decref(root);
	free(r.body);
	return rv;
}
