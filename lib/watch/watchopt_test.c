/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <string.h>

#include "tap.h"
#include "watchopt.h"

struct good {
	const char *s;
	bool off;
	uint32_t hang_s, busy_s;
	int slow;
};

static const struct good goods[] = {
	{ "yes", false, 0, 0, -1 },
	{ "no", true, 0, 0, -1 },
	{ "hang=10m,busy=2h,slow=off", false, 600, 7200, 0 },
	{ "hang=90", false, 90, 0, -1 },
	{ "hang=90s", false, 90, 0, -1 },
	{ "busy=1d", false, 0, 86400, -1 },
	{ "slow=on", false, 0, 0, 1 },
	{ "busy=30d,hang=5", false, 5, 2592000, -1 },
};

struct bad {
	const char *s, *want;
};

static const struct bad bads[] = {
	{ "", "empty: want yes, no or hang=DURATION" },
	{ "maybe", "'maybe' has no value" },
	{ "hang=", "hang=: want a duration of 1 s to 30 days" },
	{ "hang=0", "hang=0: want a duration" },
	{ "hang=10x", "hang=10x: want a duration" },
	{ "hang=31d", "hang=31d: want a duration of 1 s to 30 days" },
	{ "hang=-5", "hang=-5: want a duration" },
	{ "hang=9999999999", "want a duration" },
	{ "slow=no", "slow=no: want slow=on or slow=off" },
	{ "threshold=5", "unknown key 'threshold' (accepted: hang, busy, slow; or yes, no)" },
	{ "hang=5,", "a ',' with nothing after it" },
	{ ",hang=5", "'' has no value" },
};

int
main(void)
{
	struct watchopt o;
	pl_err_t err;
	size_t i;

	plan((int)(sizeof(goods) / sizeof(goods[0]) + sizeof(bads) / sizeof(bads[0])) + 2);
	for (i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		const struct good *g = &goods[i];

		pl_err_clear(&err);
		ok(watchopt_parse(g->s, &o, &err) == 0 && o.off == g->off && o.hang_s == g->hang_s &&
		   o.busy_s == g->busy_s && o.slow == g->slow, "%s: off %d, hang %u s, busy %u s, "
		   "slow %d (%s)", g->s, g->off, g->hang_s, g->busy_s, g->slow, err.text);
	}
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		pl_err_clear(&err);
		ok(watchopt_parse(bads[i].s, &o, &err) < 0 && strstr(err.text, bads[i].want),
		   "'%s' refused: %s", bads[i].s, err.text);
	}
	watchopt_parse("yes", &o, &err);
	ok(!watchopt_any(&o), "yes asks for nothing beyond the site's");
	watchopt_parse("slow=off", &o, &err);
	ok(watchopt_any(&o), "slow=off asks for something");
	return done_testing();
}
