/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guess of an input file's format from its first few kilobytes. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "topo.h"

#define SNIFF_BYTES 8192

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* The name of the first XML element, skipping the prolog and comments. */
static const char *
first_element(const char *p)
{
	while ((p = strchr(p, '<')) != NULL) {
		if (strncmp(p, "<!--", 4) == 0) {
			p = strstr(p, "-->");
			if (!p)
				return NULL;
		} else if (p[1] == '?' || p[1] == '!') {
			p++;
		} else {
			return p + 1;
		}
	}
	return NULL;
}

static int
starts_word(const char *p, const char *word)
{
	size_t n = strlen(word);

	return strncmp(p, word, n) == 0 &&
	       (p[n] == '>' || p[n] == '/' || p[n] == '\0' || is_space(p[n]) || p[n] == '\n');
}

/* The line at p (leading blanks skipped) starts with key= in any case. */
static int
starts_key(const char *p, const char *key)
{
	size_t n = strlen(key);

	if (strncasecmp(p, key, n) != 0)
		return 0;
	for (p += n; is_space(*p); p++)
		;
	return *p == '=';
}

/* The line at p (leading blanks skipped) is topology.yaml's "- topology:"
 * or "topology:". */
static int
yaml_topology_line(const char *p)
{
	if (p[0] == '-' && p[1] == ' ')
		for (p += 2; is_space(*p); p++)
			;
	if (strncmp(p, "topology", 8) != 0)
		return 0;
	for (p += 8; is_space(*p); p++)
		;
	return *p == ':';
}

/* A '#' line of nccl-tests: its parameter line, column header or footer. */
static int
nccltests_line(const char *p, const char *eol)
{
	size_t n = (size_t)(eol - p);
	char line[512];
	const char *q;

	if (*p != '#')
		return 0;
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	memcpy(line, p, n);
	line[n] = '\0';
	for (q = line + 1; is_space(*q); q++)
		;
	if (strncmp(q, "nThread ", 8) == 0 || strstr(line, "Avg bus bandwidth"))
		return 1;
	q = strstr(line, " size ");
	return q && strstr(q, " count ") && strstr(q, " type ");
}

/*
 * The format of the file at path from its first SNIFF_BYTES bytes: a static
 * string, or NULL when unknown or unreadable.
 */
const char *
topo_sniff(const char *path)
{
	char buf[SNIFF_BYTES + 1];
	const char *p = buf, *el, *line, *eol;
	int nccltests = 0, slurm = 0, yaml = 0;
	FILE *f;
	size_t n;

	if (!path)
		return NULL;
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	n = fread(buf, 1, SNIFF_BYTES, f);
	fclose(f);
	buf[n] = '\0';
	/* A NUL ends the text we look at; binary files fall through to NULL. */
	if (strncmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	while (is_space(*p) || *p == '\n')
		p++;
	if (*p == '{')
		return "map";
	if (*p == '<') {
		el = first_element(p);
		if (el && starts_word(el, "topology"))
			return "hwloc";
		if (el && starts_word(el, "system"))
			return "nccl-xml";
		return NULL;
	}
	for (line = p; *line; line = *eol ? eol + 1 : eol) {
		eol = strchr(line, '\n');
		if (!eol)
			eol = line + strlen(line);
		while (is_space(*line))
			line++;
		if (nccltests_line(line, eol))
			nccltests = 1;
		else if (starts_key(line, "SwitchName") || starts_key(line, "BlockName"))
			slurm = 1;
		else if (yaml_topology_line(line))
			yaml = 1;
	}
	if (nccltests)
		return "nccl-tests";
	if (strstr(p, "GPU0") && (strstr(p, "NV#") || strstr(p, "Legend")))
		return "nvsmi";
	if (slurm)
		return "slurm-topology";
	if (yaml)
		return "slurm-topology-yaml";
	return NULL;
}
