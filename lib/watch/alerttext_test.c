/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "alerttext.h"
#include "tap.h"

struct tcase {
	const char *name, *in, *want;
};

static const struct tcase clean_cases[] = {
	{ "plain text as it is", "TP group 0 of PP stage 1", "TP group 0 of PP stage 1" },
	{ "a Slack page to a channel", "<!channel>", "\\x3c!channel\\x3e" },
	{ "a Slack link", "<https://evil.example|click>", "\\x3chttps://evil.example|click\\x3e" },
	{ "an HTML entity", "a &amp; b", "a \\x26amp; b" },
	{ "a new line and a tab", "a\nb\tc", "a\\x0ab\\x09c" },
	{ "UTF-8 bytes", "\xc3\xa9t\xc3\xa9", "\\xc3\\xa9t\\xc3\\xa9" },
	{ "DEL", "x\x7fy", "x\\x7fy" },
	{ "empty", "", "" },
	{ "NULL", NULL, "" },
};

static const struct tcase url_cases[] = {
	{ "user and password", "http://ops:s3cret@am.example:9093/api/v2/alerts",
	  "http://am.example:9093" },
	{ "a Slack webhook's token in its path",
	  "https://hooks.slack.com/services/T000/B000/XXXXXXXX", "https://hooks.slack.com" },
	{ "a token in the query", "http://127.0.0.1:8080/hook?token=abc#frag", "http://127.0.0.1:8080" },
	{ "a password holding an @", "http://u:p@ss@host:1/", "http://host:1" },
	{ "a password holding a raw slash", "http://u:s3/cret@host/x", "http://(hidden)" },
	{ "a port that is no number", "http://host:abc/x", "http://(hidden)" },
	{ "IPv6", "http://[::1]:9093/api", "http://[::1]:9093" },
	{ "no path", "http://am:9093", "http://am:9093" },
	{ "not a URL", "am.example:9093", "(not a URL)" },
	{ "no scheme", "://x", "(not a URL)" },
	{ "NULL", NULL, "(not a URL)" },
};

int
main(void)
{
	char out[64], small[8];
	size_t i;
	size_t nc = sizeof(clean_cases) / sizeof(clean_cases[0]);
	size_t nu = sizeof(url_cases) / sizeof(url_cases[0]);

	plan((int)(nc + nu) + 4);
	for (i = 0; i < nc; i++)
		is_str(alerttext_clean(out, sizeof(out), clean_cases[i].in), clean_cases[i].want,
		   "clean: %s", clean_cases[i].name);
	for (i = 0; i < nu; i++)
		is_str(alerttext_url_public(out, sizeof(out), url_cases[i].in), url_cases[i].want,
		   "url: %s", url_cases[i].name);
	/* Cut on a whole character: never half an escape. */
	is_str(alerttext_clean(small, sizeof(small), "abcd<ef"), "abcd", "an escape that does not fit "
	   "is left out whole");
	is_str(alerttext_clean(small, sizeof(small), "abcdefghij"), "abcdefg", "plain text cut to fit");
	is_str(alerttext_clean(small, 5, "<<"), "\\x3c", "one escape fits in 5 bytes");
	is_str(alerttext_url_public(small, sizeof(small), "http://ops:pw@a-long-host/"), "http://",
	   "a public URL cut to fit shows no secret");
	return done_testing();
}
