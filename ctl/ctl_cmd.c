/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutctl's command table, shaped like tmux's cmd_table: each command is
 * an entry (name, usage, summary, help, handler) defined beside its
 * handler; the top-level usage, each command's --help and the dispatch
 * all come from the entries.
 */
#include "config.h"

#include <string.h>

#include "ctl.h"

static const struct ctl_cmd *const ctl_cmds[] = {
	&ctl_cmd_plan,
	&ctl_cmd_place,
	&ctl_cmd_topo,
	&ctl_cmd_bwtest,
	&ctl_cmd_status,
	&ctl_cmd_topology,
	&ctl_cmd_query,
	&ctl_cmd_watch,
	&ctl_cmd_alerts,
	NULL
};

/* The usage lines of e (after its name), continuation lines indented. */
static void
print_usage_lines(FILE *f, const char *usage, int indent)
{
	const char *p = usage, *nl;

	for (;;) {
		nl = strchr(p, '\n');
		fprintf(f, "%.*s\n", nl ? (int)(nl - p) : (int)strlen(p), p);
		if (!nl)
			break;
		p = nl + 1;
		fprintf(f, "%*s", indent, "");
	}
}

static void
usage_entry(FILE *f, const char *prefix, const struct ctl_cmd *e)
{
	char name[64];

	if (e->sub) {
		const struct ctl_cmd *const *s;

		for (s = e->sub; *s; s++)
			usage_entry(f, e->name, *s);
		return;
	}
	snprintf(name, sizeof(name), "%s%s%s", prefix ? prefix : "", prefix ? " " : "", e->name);
	fprintf(f, "  %-6s ", name);
	print_usage_lines(f, e->usage, 9);
	fprintf(f, "         ");
	print_usage_lines(f, e->summary, 9);
}

void
ctl_usage(FILE *f)
{
	const struct ctl_cmd *const *e;

	fprintf(f, "Usage: " CTL_PROG " COMMAND [OPTIONS]\n"
		"\n"
		"Plan and place the ranks of a parallel training job on a GPU cluster.\n"
		"\n"
		"Commands:\n");
	for (e = ctl_cmds; *e; e++)
		usage_entry(f, NULL, *e);
	fprintf(f, "\n'" CTL_PROG " COMMAND --help' describes each command.\n");
}

void
ctl_cmd_help(const struct ctl_cmd *e, const char *parent)
{
	int indent = (int)strlen("Usage: " CTL_PROG " ") + (int)strlen(e->name) + 1;

	if (parent)
		indent += (int)strlen(parent) + 1;
	printf("Usage: " CTL_PROG " %s%s%s ", parent ? parent : "", parent ? " " : "", e->name);
	print_usage_lines(stdout, e->usage, indent);
	if (e->help)
		printf("\n%s", e->help);
}

/* "plan, place, topo, ..." */
static void
names(const struct ctl_cmd *const *table, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (; *table && len < size; table++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
					(*table)->name);
}

int
ctl_dispatch(const struct ctl_cmd *const *table, const char *what, int argc, char **argv)
{
	const struct ctl_cmd *const *e;
	char list[256];

	for (e = table; *e; e++)
		if (strcmp(argv[0], (*e)->name) == 0)
			return (*e)->exec(argc, argv);
	names(table, list, sizeof(list));
	ctl_error("%sunknown command '%s' (accepted: %s)", what ? what : "", ctl_clip(argv[0]), list);
	return 2;
}

int
ctl_run(int argc, char **argv)
{
	return ctl_dispatch(ctl_cmds, NULL, argc, argv);
}
