/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One load of layoutd's config and map, and SIGHUP's reload: the new load
 * replaces the old one only when config and map both loaded; the
 * listeners and the pid file keep the settings they were made with.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "layoutd.h"
#include "watch/view.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

const char *
ld_default_conf(void)
{
	return SYSCONFDIR "/parallel-layout/layoutd.conf";
}

void
ld_load_free(struct ld_load *l)
{
	if (!l)
		return;
	topo_free(l->map);
	free(l->map_json);
	free(l);
}

struct ld_load *
ld_load_build(const struct ld_loader *ldr, pl_err_t *err)
{
	const char *path = ldr->conf_path ? ldr->conf_path : ld_default_conf();
	struct ld_load *l = calloc(1, sizeof(*l));
	pl_err_t merr;
	int i;

	if (!l) {
		pl_err_set(err, "out of memory");
		return NULL;
	}
	ld_conf_defaults(&l->conf);
	if (ld_conf_read(&l->conf, path, ldr->conf_must_exist, err) < 0)
		goto fail;
	for (i = 0; i < ldr->nov; i++) {
		pl_err_t verr;

		pl_err_clear(&verr);
		if (ld_conf_set(&l->conf, ldr->ov[i].key, ldr->ov[i].value, &verr) < 0) {
			pl_err_set(err, "%s %.200s: %s", ldr->ov[i].opt, ldr->ov[i].value, verr.text);
			goto fail;
		}
	}
	if (ld_conf_finish(&l->conf, err) < 0)
		goto fail;
	pl_err_clear(&merr);
	l->map = topo_load(l->conf.map, &merr);
	if (!l->map) {
		pl_err_set(err, "map %s", merr.text);
		goto fail;
	}
	l->map_json = topo_to_json_text(l->map);
	if (!l->map_json) {
		pl_err_set(err, "%s: out of memory", l->conf.map);
		goto fail;
	}
	ld_node_check(l);
	return l;
fail:
	ld_load_free(l);
	return NULL;
}

void
ld_log_state(struct ld *d, const char *what)
{
	const struct ld_load *l = d->cur;
	int i;

	ld_log(&d->log, "%s: node %s, map %s (%ld nodes) from %s, hwloc_check %s: %s", what,
	       l->conf.node_name, l->map->name, l->map->nnodes, l->conf.map, l->conf.hwloc_check,
	       l->ndisc ? "degraded" : "ok");
	for (i = 0; i < l->ndisc; i++)
		ld_log(&d->log, "discrepancy: %s", l->disc[i]);
}

/* Settings that belong to the listeners and the process: fixed at start. */
static void
note_fixed(struct ld *d, const struct ld_conf *o, const struct ld_conf *n)
{
	char op[LD_PATH], np[LD_PATH];

	if (client_socket_path(o->socket, o->node_name, op, sizeof(op)) == 0 &&
	    client_socket_path(n->socket, n->node_name, np, sizeof(np)) == 0 && strcmp(op, np))
		ld_log(&d->log, "reload: socket %s -> %s is not applied: still listening on %s until restarted",
		       op, np, op);
	if (o->socket_mode != n->socket_mode || strcmp(o->socket_group, n->socket_group))
		ld_log(&d->log, "reload: socket_mode/socket_group changes apply at the next start");
	if (strcmp(o->tcp_host, n->tcp_host) || o->tcp_port != n->tcp_port ||
	    strcmp(o->port_file, n->port_file))
		ld_log(&d->log, "reload: tcp/port_file changes apply at the next start");
	if (strcmp(o->pidfile, n->pidfile))
		ld_log(&d->log, "reload: pidfile change applies at the next start");
}

/* The listeners and the pid file stay: keep the settings they use. */
static void
keep_fixed(struct ld_conf *n, const struct ld_conf *o)
{
	memcpy(n->socket, o->socket, sizeof(n->socket));
	n->socket_mode = o->socket_mode;
	memcpy(n->socket_group, o->socket_group, sizeof(n->socket_group));
	memcpy(n->tcp_host, o->tcp_host, sizeof(n->tcp_host));
	n->tcp_port = o->tcp_port;
	memcpy(n->port_file, o->port_file, sizeof(n->port_file));
	memcpy(n->pidfile, o->pidfile, sizeof(n->pidfile));
}

int
ld_reload(struct ld *d)
{
	struct ld_load *n, *old;
	pl_err_t err;
	FILE *f;

	pl_err_clear(&err);
	n = ld_load_build(&d->loader, &err);
	if (!n) {
		d->reload_failures++;
		ld_log(&d->log, "reload failed, still serving map %s from %s: %s",
		       d->cur->map->name, d->cur->conf.map, err.text);
		return -1;
	}
	note_fixed(d, &d->cur->conf, &n->conf);
	keep_fixed(&n->conf, &d->cur->conf);
	f = ld_log_open(n->conf.log, &err);
	if (f) {
		ld_log_close(d->log.f);
		d->log.f = f;
	} else {
		ld_log(&d->log, "reload: %s; logging stays where it was", err.text);
	}
	old = d->cur;
	d->cur = n;
	ld_load_free(old);
	ld_http_apply(d);
	ld_watch_apply(d->watch);
	d->reloads++;
	ld_log_state(d, "reloaded");
	return 0;
}
