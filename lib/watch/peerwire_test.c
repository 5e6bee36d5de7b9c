/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The peer wire's rules: where a node's peer listener is (map address and
 * port, name and default port, IPv6 in brackets, no map at all), what a
 * credential covers, the 421 body written and read back, the refusals'
 * names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "peerwire.h"
#include "tap.h"
#include "topo.h"

static struct topo_map *
sample(void)
{
	struct topo_map *m = topo_new();

	if (!m)
		return NULL;
	topo_add_node(m, "gpu01", NULL);	/* address and port */
	topo_add_node(m, "gpu02", NULL);	/* an IPv6 address, no port */
	topo_add_node(m, "gpu03", NULL);	/* a port, no address */
	topo_add_node(m, "gpu04", NULL);	/* neither */
	topo_set_node_addr(m, 0, "10.1.0.1", NULL);
	topo_set_node_port(m, 0, 19001, NULL);
	topo_set_node_addr(m, 1, "fd00::2", NULL);
	topo_set_node_port(m, 2, 19003, NULL);
	topo_index(m, NULL);
	return m;
}

static void
url_is(const struct topo_map *m, const char *name, int port, const char *path, const char *want,
       const char *what)
{
	struct buf b = BUF_INIT;

	peerwire_url(&b, m, name, port, path);
	is_str(buf_str(&b), want, "%s", what);
	buf_free(&b);
}

static void
test_url(void)
{
	struct topo_map *m = sample();

	ok(m != NULL, "a map of four nodes");
	url_is(m, "gpu01", PEERWIRE_PORT, PEERWIRE_PATH_SUMMARY,
	       "http://10.1.0.1:19001/v1/peer/summary", "the map's address and port");
	url_is(m, "gpu02", PEERWIRE_PORT, PEERWIRE_PATH_BATCH, "http://[fd00::2]:6830/v1/peer/batch",
	       "an IPv6 address in brackets, the default port");
	url_is(m, "gpu03", 7000, "", "http://gpu03:19003", "the map's port, the node's name");
	url_is(m, "gpu04", 7000, NULL, "http://gpu04:7000", "neither: the name and the port given");
	url_is(m, "gpu99", PEERWIRE_PORT, PEERWIRE_PATH_RELAY, "http://gpu99:6830/v1/peer/relay",
	       "a node the map lacks");
	url_is(NULL, "gpu01", PEERWIRE_PORT, "", "http://gpu01:6830", "no map at all");
	url_is(NULL, "fd00::9", 1, "", "http://[fd00::9]:1", "a name that is an IPv6 address");
	topo_free(m);
}

static void
test_payload(void)
{
	char hex[SHA256_HEX_LEN];
	struct buf b = BUF_INIT;

	is_str(peerwire_post_payload("abc", 3, hex),
	       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	       "a POST's credential covers the SHA-256 of its body, in lowercase hex");
	is_str(peerwire_post_payload("", 0, hex),
	       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	       "an empty body too");
	peerwire_get_payload(&b, "/v1/watch/step?job=7&step=0");
	is_str(buf_str(&b), "GET /v1/watch/step?job=7&step=0",
	       "a GET's credential covers its request line");
	buf_free(&b);
	{
		char out[PEERWIRE_REPLY_LEN];

		is_str(peerwire_reply_payload("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca4959"
					      "91b7852b855", "abc", 3, out),
		       "REPLY e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 "
		       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		       "a 200's credential covers the request's checksum and its own body's");
		is_int((long long)strlen(out), PEERWIRE_REPLY_LEN - 1, "and fills its buffer exactly");
	}
	is_str(PEERWIRE_HEADER, "X-PL-Munge", "the credential's header");
	is_int(PEERWIRE_PORT, 6830, "the default peer port");
}

static void
misdirected_is(bool relay, bool acting, const char *want_text, const char *what)
{
	char leader[64];
	bool back = !acting;
	pl_err_t err;
	json_t *o;

	pl_err_clear(&err);
	o = peerwire_misdirected(42, 1, "gpu03", "gpu01", relay, acting, &err);
	ok(o != NULL, "%s: a body", what);
	is_str(err.text, want_text, "%s: the message", what);
	is_str(json_string_value(json_object_get(o, "error")), want_text, "%s: in the body", what);
	ok(peerwire_misdirected_parse(o, leader, sizeof(leader), &back) == 0 &&
	   strcmp(leader, "gpu01") == 0 && back == acting, "%s: read back", what);
	json_decref(o);
}

static void
test_misdirected(void)
{
	char leader[8];
	bool acting = false;
	json_t *o;

	misdirected_is(false, false, "job 42.1: not led here (gpu03): ask its leader, gpu01",
		       "the leader");
	misdirected_is(false, true, "job 42.1: not led here (gpu03): ask its acting leader, gpu01",
		       "an acting leader");
	misdirected_is(true, false, "job 42.1: not led here (gpu03): ask its relay, gpu01",
		       "a relay");
	o = json_pack("{s:s}", "error", "x");
	ok(peerwire_misdirected_parse(o, leader, sizeof(leader), &acting) < 0,
	   "a body without leader is not a 421's");
	json_decref(o);
	o = json_pack("{s:s, s:s}", "leader", "gpu01", "acting", "no");
	ok(peerwire_misdirected_parse(o, leader, sizeof(leader), &acting) < 0,
	   "acting must be a boolean");
	json_decref(o);
	o = json_pack("{s:s, s:b}", "leader", "a-very-long-node-name", "acting", 0);
	ok(peerwire_misdirected_parse(o, leader, sizeof(leader), &acting) < 0,
	   "a leader that does not fit is refused");
	json_decref(o);
	o = json_pack("{s:s, s:b}", "leader", "", "acting", 0);
	ok(peerwire_misdirected_parse(o, leader, sizeof(leader), &acting) < 0,
	   "an empty leader is refused");
	json_decref(o);
}

static void
test_refusals(void)
{
	static const char *const want[PEERWIRE_NREFUSE] = {
		"request", "unauthenticated", "replayed", "expired", "credential", "uid",
		"checksum", "summary", "step", "stale", "busy", "origin", "munged",
	};
	int r, same = 1;

	for (r = 0; r < PEERWIRE_NREFUSE; r++)
		same &= strcmp(peerwire_refusal_name((enum peerwire_refusal)r), want[r]) == 0;
	ok(same, "every refusal has its name");
	is_str(peerwire_refusal_name(PEERWIRE_NREFUSE), "?", "past the end: ?");
}

/* What reads as a credential (checked before a body is looked at). */
static void
test_cred_shape(void)
{
	static const struct {
		const char *v;
		bool want;
		const char *name;
	} cases[] = {
		{ "MUNGE:AwQFAAC3+Xq/abc=:", true, "munge's form" },
		{ "MUNGE:AwQF AAC=:", false, "a space inside" },
		{ "MUNGE:AwQFAAC=", false, "no closing colon" },
		{ "MUNGE::", false, "no base64" },
		{ "munge:AwQF:", false, "the prefix in lower case" },
		{ "AwQFAAC=:", false, "no prefix" },
		{ "MUNGE:AwQ:F:", false, "a colon inside" },
		{ "", false, "empty" },
		{ NULL, false, "none" },
	};
	char big[PEERWIRE_CRED_MAX + 8];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ok(peerwire_cred_shape(cases[i].v) == cases[i].want, "credential shape: %s: %s",
		   cases[i].name, cases[i].want ? "taken" : "refused");
	memset(big, 'A', sizeof(big));
	memcpy(big, "MUNGE:", 6);
	big[PEERWIRE_CRED_MAX - 1] = ':';
	big[PEERWIRE_CRED_MAX] = '\0';
	ok(peerwire_cred_shape(big), "credential shape: %d bytes: taken", PEERWIRE_CRED_MAX);
	big[PEERWIRE_CRED_MAX - 1] = 'A';
	big[PEERWIRE_CRED_MAX] = ':';
	big[PEERWIRE_CRED_MAX + 1] = '\0';
	ok(!peerwire_cred_shape(big), "credential shape: %d bytes: refused", PEERWIRE_CRED_MAX + 1);
}

int
main(void)
{
	plan(31 + 13);
	test_url();
	test_payload();
	test_misdirected();
	test_refusals();
	test_cred_shape();
	return done_testing();
}
