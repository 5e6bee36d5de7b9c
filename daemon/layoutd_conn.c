/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * layoutd's connection table.  evhttp keeps its connections to itself; we
 * learn of each through the bufferevent callback (we create its
 * bufferevent), adopt it in the same loop iteration once evhttp has set it
 * up (its bufferevent callbacks then carry the connection), and hear of its
 * end through the connection's close callback.  With that:
 *
 * - max_connections: when a new connection passes the cap, the oldest idle
 *   one (no byte of a request pending, nothing being answered) is closed;
 *   when none is idle, the listeners pause until one ends.
 * - request_timeout_ms bounds the whole request, not only silence: a
 *   connection that has not delivered a complete request that long after
 *   it opened (or after its previous answer) is closed.
 * - accept() failing for want of descriptors (EMFILE) closes the oldest
 *   idle connection and pauses the listeners with a growing back-off,
 *   logged at most once per interval, instead of spinning on a listener
 *   that stays readable.
 */
#define _GNU_SOURCE 1	/* struct ucred */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "layoutd.h"
#include "layoutd_conn.h"

#define LD_MAX_LISTENERS 4
#define LD_TICK_MS 100
#define LD_BACKOFF_MIN_MS 50.0
#define LD_BACKOFF_MAX_MS 1000.0
#define LD_BACKOFF_SHED_MS 10.0		/* descriptors were freed: retry soon */
#define LD_SHED_ON_EMFILE 8
#define LD_DROP_LOG_INTERVAL_MS 10000.0

struct conn {
	struct ld_conns *owner;
	struct bufferevent *bev;
	struct evhttp_connection *evcon;	/* NULL until adopted */
	struct evbuffer_cb_entry *watch;	/* on the input: bytes arrived */
	double deadline;	/* ms of ld_now_ms(); 0 while answered */
	bool busy;		/* part of a request has arrived */
	bool answering;		/* the request is with the handlers or being written */
	bool deferred;		/* its answer comes after the handler returned */
	struct conn *prev, *next;	/* oldest first */
	struct conn *hnext;	/* in its bucket of the evcon table, once adopted */
};

struct ld_conns {
	struct event_base *base;
	struct evhttp *http;
	struct ld_log *log;
	struct conn *head, *tail;
	struct conn *current;		/* the one whose request is being handled */
	struct conn **tab;		/* evcon -> conn, tabsize buckets (a power of two) */
	size_t tabsize;
	long n, max;
	long timeout_ms;
	struct event *adopt;		/* made active by each new connection */
	struct event *tick;		/* deadlines, while connections are open */
	struct event *resume;		/* end of an accept back-off */
	struct evconnlistener *lev[LD_MAX_LISTENERS];
	int nlev;
	bool listening;			/* the listeners are enabled */
	bool backing_off;
	bool closing;
	double backoff_ms;
	struct ld_ratelog accept_rate, drop_rate;
	struct ld_conn_stats st;
};

/* The listener error callback gets the listener's own argument (evhttp's),
 * so listeners are mapped back to their table here. */
static struct {
	struct evconnlistener *lev;
	struct ld_conns *c;
} watched[LD_MAX_LISTENERS];

static void
update_listeners(struct ld_conns *c)
{
	bool want = !c->closing && !c->backing_off && c->n < c->max;
	int i;

	if (want == c->listening)
		return;
	for (i = 0; i < c->nlev; i++)
		(void)(want ? evconnlistener_enable(c->lev[i]) : evconnlistener_disable(c->lev[i]));
	c->listening = want;
}

/* Each request looks its connection up by evcon: a table, not a walk of
 * the list (a leader with 2,048 peers on keep-alive would walk 1,024 on
 * average, 2,048 times a second). */
static size_t
conn_bucket(const struct ld_conns *c, const struct evhttp_connection *evcon)
{
	uint64_t x = (uint64_t)(uintptr_t)evcon;

	x = (x ^ (x >> 31)) * UINT64_C(0x9e3779b97f4a7c15);
	return (size_t)(x >> 32) & (c->tabsize - 1);
}

static void
conn_hash_add(struct ld_conns *c, struct conn *k)
{
	if ((size_t)c->n > c->tabsize) {
		size_t size = c->tabsize ? c->tabsize * 2 : 64, b;
		struct conn **tab = calloc(size, sizeof(*tab)), *x;

		if (tab) {
			free(c->tab);
			c->tab = tab;
			c->tabsize = size;
			for (x = c->head; x; x = x->next)
				if (x->evcon && x != k) {
					b = conn_bucket(c, x->evcon);
					x->hnext = c->tab[b];
					c->tab[b] = x;
				}
		}
	}
	if (c->tab) {
		size_t b = conn_bucket(c, k->evcon);

		k->hnext = c->tab[b];
		c->tab[b] = k;
	}
}

static void
conn_hash_del(struct ld_conns *c, struct conn *k)
{
	struct conn **pp;

	if (!c->tab || !k->evcon)
		return;
	for (pp = &c->tab[conn_bucket(c, k->evcon)]; *pp; pp = &(*pp)->hnext)
		if (*pp == k) {
			*pp = k->hnext;
			return;
		}
}

static void
unlink_conn(struct ld_conns *c, struct conn *k)
{
	conn_hash_del(c, k);
	if (k->prev)
		k->prev->next = k->next;
	else
		c->head = k->next;
	if (k->next)
		k->next->prev = k->prev;
	else
		c->tail = k->prev;
	if (k->watch)
		evbuffer_remove_cb_entry(bufferevent_get_input(k->bev), k->watch);
	c->n--;
	free(k);
}

static struct conn *
find_conn(struct ld_conns *c, struct evhttp_connection *evcon)
{
	struct conn *k;

	if (!evcon)
		return NULL;
	if (c->tab) {
		for (k = c->tab[conn_bucket(c, evcon)]; k; k = k->hnext)
			if (k->evcon == evcon)
				return k;
		return NULL;
	}
	for (k = c->tail; k; k = k->prev)	/* no table: out of memory */
		if (k->evcon == evcon)
			return k;
	return NULL;
}

static void
on_close(struct evhttp_connection *evcon, void *arg)
{
	struct conn *k = arg;
	struct ld_conns *c = k->owner;

	if (c->current == k)
		c->current = NULL;
	unlink_conn(c, k);
	if (!c->closing && !c->listening)
		event_active(c->adopt, EV_TIMEOUT, 1);	/* resume outside evhttp */
}

/* Nothing received nor waiting in the kernel: a request that has arrived
 * but not been read yet (a fresh connection's) is not idle. */
static bool
is_idle(struct conn *k)
{
	int pending = 0;

	if (!k->evcon || k->busy || k->answering)
		return false;
	if (ioctl(bufferevent_getfd(k->bev), FIONREAD, &pending) == 0 && pending > 0)
		k->busy = true;
	return !k->busy;
}

/* Close the oldest connection with nothing pending.  True when one was. */
static bool
shed_oldest_idle(struct ld_conns *c)
{
	struct conn *k;

	for (k = c->head; k; k = k->next)
		if (is_idle(k))
			break;
	if (!k)
		return false;
	c->st.shed++;
	evhttp_connection_free(k->evcon);	/* on_close frees k */
	return true;
}

static void
on_input(struct evbuffer *b, const struct evbuffer_cb_info *info, void *arg)
{
	struct conn *k = arg;

	if (info->n_added > 0)
		k->busy = true;
}

static void
arm_tick(struct ld_conns *c)
{
	struct timeval tv = { 0, LD_TICK_MS * 1000 };

	if (!c->closing && c->n > 0 && !evtimer_pending(c->tick, NULL))
		evtimer_add(c->tick, &tv);
}

/* evhttp asks for the bufferevent of a connection it is accepting. */
static struct bufferevent *
on_new_bev(struct event_base *base, void *arg)
{
	struct ld_conns *c = arg;
	struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	struct conn *k;

	if (!bev)
		return NULL;	/* evhttp makes its own: that one goes untracked */
	c->st.accepted++;
	c->backoff_ms = 0;
	k = calloc(1, sizeof(*k));
	if (!k)
		return bev;
	k->owner = c;
	k->bev = bev;
	k->deadline = ld_now_ms() + (double)c->timeout_ms;
	k->watch = evbuffer_add_cb(bufferevent_get_input(bev), on_input, k);
	/* Held until adopted, so an evhttp that gives it up at once cannot
	 * leave us a dangling pointer. */
	bufferevent_incref(bev);
	k->prev = c->tail;
	if (c->tail)
		c->tail->next = k;
	else
		c->head = k;
	c->tail = k;
	c->n++;
	/* At the cap the listener stops accepting (also within its accept
	 * loop) until on_adopt has made room. */
	update_listeners(c);
	event_active(c->adopt, EV_TIMEOUT, 1);
	return bev;
}

/* Take the new connections over from evhttp: its bufferevent callbacks
 * carry the connection now. */
static void
adopt_new(struct ld_conns *c)
{
	struct conn *k, *prev;

	for (k = c->tail; k && !k->evcon; k = prev) {
		bufferevent_data_cb rcb = NULL;
		void *cbarg = NULL;

		prev = k->prev;
		bufferevent_getcb(k->bev, &rcb, NULL, NULL, &cbarg);
		if (rcb && cbarg && evhttp_connection_get_bufferevent(cbarg) == k->bev) {
			k->evcon = cbarg;
			conn_hash_add(c, k);
			evhttp_connection_set_closecb(k->evcon, on_close, k);
			bufferevent_decref(k->bev);
		} else {
			struct bufferevent *bev = k->bev;

			/* evhttp already gave it up (out of memory). */
			unlink_conn(c, k);
			bufferevent_decref(bev);
		}
	}
}

/* New connections: adopt them, then make room for the next one. */
static void
on_adopt(evutil_socket_t fd, short what, void *arg)
{
	struct ld_conns *c = arg;
	unsigned long shed = c->st.shed;

	adopt_new(c);
	while (c->n >= c->max && shed_oldest_idle(c))
		;
	if (c->st.shed > shed)
		ld_ratelog(c->log, &c->drop_rate,
			   "max_connections %ld reached: closing the oldest idle connections (%lu so far)",
			   c->max, c->st.shed);
	update_listeners(c);
	arm_tick(c);
}

/* The whole-request deadline. */
static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct ld_conns *c = arg;
	double now = ld_now_ms();
	struct conn *k, *next;
	unsigned long dropped = 0;

	for (k = c->head; k; k = next) {
		next = k->next;
		if (!k->evcon || k->deadline <= 0 || now < k->deadline)
			continue;
		dropped++;
		c->st.timed_out++;
		evhttp_connection_free(k->evcon);	/* on_close frees k */
	}
	if (dropped)
		ld_ratelog(c->log, &c->drop_rate,
			   "closed %lu connection%s that did not send its request or read its answer within request_timeout_ms %ld (%lu so far)",
			   dropped, dropped == 1 ? "" : "s", c->timeout_ms, c->st.timed_out);
	arm_tick(c);
}

static void
on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct ld_conns *c = arg;

	c->backing_off = false;
	update_listeners(c);
}

static void
on_accept_error(struct evconnlistener *lev, void *arg)
{
	int e = EVUTIL_SOCKET_ERROR();
	struct ld_conns *c = NULL;
	struct timeval tv;
	bool freed = false;
	int i;

	for (i = 0; i < LD_MAX_LISTENERS; i++)
		if (watched[i].lev == lev)
			c = watched[i].c;
	if (!c || c->closing)
		return;
	c->st.accept_errors++;
	adopt_new(c);
	if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM)
		for (i = 0; i < LD_SHED_ON_EMFILE && shed_oldest_idle(c); i++)
			freed = true;
	if (freed)
		c->backoff_ms = LD_BACKOFF_SHED_MS;
	else if (c->backoff_ms < LD_BACKOFF_MIN_MS)
		c->backoff_ms = LD_BACKOFF_MIN_MS;
	else if ((c->backoff_ms *= 2) > LD_BACKOFF_MAX_MS)
		c->backoff_ms = LD_BACKOFF_MAX_MS;
	ld_ratelog(c->log, &c->accept_rate,
		   "accept: %s with %ld connections open (max_connections %ld): %s; accepting again in %.0f ms (%lu accept failures so far)",
		   strerror(e), c->n, c->max,
		   freed ? "closed the oldest idle connections" : "no idle connection to close",
		   c->backoff_ms, c->st.accept_errors);
	tv.tv_sec = (long)(c->backoff_ms / 1000);
	tv.tv_usec = ((long)c->backoff_ms % 1000) * 1000;
	c->backing_off = true;
	evtimer_add(c->resume, &tv);
	update_listeners(c);
}

struct ld_conns *
ld_conns_new(struct event_base *base, struct evhttp *http, struct ld_log *lg)
{
	struct ld_conns *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->base = base;
	c->http = http;
	c->log = lg;
	c->max = LD_DEFAULT_MAX_CONNECTIONS;
	c->timeout_ms = LD_DEFAULT_TIMEOUT_MS;
	c->listening = true;
	c->accept_rate.interval_ms = LD_DROP_LOG_INTERVAL_MS;
	c->drop_rate.interval_ms = LD_DROP_LOG_INTERVAL_MS;
	c->adopt = event_new(base, -1, 0, on_adopt, c);
	c->tick = evtimer_new(base, on_tick, c);
	c->resume = evtimer_new(base, on_resume, c);
	if (!c->adopt || !c->tick || !c->resume) {
		ld_conns_free(c);
		return NULL;
	}
	evhttp_set_bevcb(http, on_new_bev, c);
	return c;
}

void
ld_conns_set_limits(struct ld_conns *c, long max_connections, long request_timeout_ms)
{
	c->max = max_connections;
	c->timeout_ms = request_timeout_ms;
	update_listeners(c);
}

int
ld_conns_watch(struct ld_conns *c, struct evconnlistener *lev)
{
	int i;

	if (!lev || c->nlev >= LD_MAX_LISTENERS)
		return -1;
	for (i = 0; i < LD_MAX_LISTENERS && watched[i].lev; i++)
		;
	if (i == LD_MAX_LISTENERS)
		return -1;
	watched[i].lev = lev;
	watched[i].c = c;
	c->lev[c->nlev++] = lev;
	evconnlistener_set_error_cb(lev, on_accept_error);
	if (!c->listening)
		evconnlistener_disable(lev);
	return 0;
}

static void
on_complete(struct evhttp_request *req, void *arg)
{
	struct conn *k = arg;

	k->answering = false;
	k->busy = evbuffer_get_length(bufferevent_get_input(k->bev)) > 0;
	k->deadline = ld_now_ms() + (double)k->owner->timeout_ms;
}

void
ld_conns_request_begin(struct ld_conns *c, struct evhttp_request *req)
{
	struct conn *k = find_conn(c, evhttp_request_get_connection(req));

	c->current = k;
	if (!k)
		return;
	k->answering = true;
	k->busy = true;
	k->deadline = 0;
	evhttp_request_set_on_complete_cb(req, on_complete, k);
}

void
ld_conns_request_end(struct ld_conns *c)
{
	struct timeval tv;

	/* The answer is queued: reading it gets request_timeout_ms too, and so
	 * does evhttp's own timeout, which a slow answer would otherwise have
	 * passed while it was computed (dropping it unsent). */
	if (c->current && c->current->deferred) {
		/* answered later: on_complete sets the next deadline */
		c->current->deferred = false;
	} else if (c->current) {
		/* libevent's cached time is from before the handler ran. */
		event_base_update_cache_time(c->base);
		c->current->deadline = ld_now_ms() + (double)c->timeout_ms;
		tv.tv_sec = c->timeout_ms / 1000;
		tv.tv_usec = (c->timeout_ms % 1000) * 1000;
		evhttp_connection_set_timeout_tv(c->current->evcon, &tv);
	}
	c->current = NULL;
}

void
ld_conns_request_defer(struct ld_conns *c)
{
	if (c->current)
		c->current->deferred = true;
}

void
ld_conns_peer(struct evhttp_request *req, struct ld_peer *peer)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;
	evutil_socket_t fd = bev ? bufferevent_getfd(bev) : -1;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct ucred uc;
	socklen_t ul = sizeof(uc);

	peer->local = false;
	peer->uid = peer->gid = peer->pid = -1;
	if (fd < 0 || getsockname(fd, (struct sockaddr *)&ss, &sl) < 0 || ss.ss_family != AF_UNIX)
		return;
	peer->local = true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0 || ul != sizeof(uc))
		return;
	peer->uid = (long)uc.uid;
	peer->gid = (long)uc.gid;
	peer->pid = (long)uc.pid;
}

void
ld_conns_stats(const struct ld_conns *c, struct ld_conn_stats *st)
{
	*st = c->st;
	st->open = c->n;
	st->max = c->max;
}

void
ld_conns_shutdown(struct ld_conns *c)
{
	int i, j;

	if (!c)
		return;
	c->closing = true;
	for (i = 0; i < c->nlev; i++)
		for (j = 0; j < LD_MAX_LISTENERS; j++)
			if (watched[j].lev == c->lev[i])
				watched[j].lev = NULL;
	c->nlev = 0;
	if (c->adopt)
		event_del(c->adopt);
	if (c->tick)
		event_del(c->tick);
	if (c->resume)
		event_del(c->resume);
}

void
ld_conns_free(struct ld_conns *c)
{
	if (!c)
		return;
	ld_conns_shutdown(c);
	/* evhttp_free() closed the adopted ones; what is left was never adopted. */
	while (c->head) {
		struct bufferevent *bev = c->head->bev;
		bool held = !c->head->evcon;

		if (!held)
			c->head->watch = NULL;	/* its bufferevent went with evhttp */
		unlink_conn(c, c->head);
		if (held)
			bufferevent_decref(bev);
	}
	if (c->adopt)
		event_free(c->adopt);
	if (c->tick)
		event_free(c->tick);
	if (c->resume)
		event_free(c->resume);
	free(c->tab);
	free(c);
}
