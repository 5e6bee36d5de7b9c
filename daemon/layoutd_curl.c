/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libcurl's multi interface on libevent (layoutd_curl.h).  libcurl tells
 * us which sockets to watch (CURLMOPT_SOCKETFUNCTION) and when to call it
 * back at the latest (CURLMOPT_TIMERFUNCTION); each event and the timer
 * hand control to curl_multi_socket_action, and finished transfers are
 * collected from curl_multi_info_read and their callbacks run after
 * libcurl has returned, so a callback may start the next request.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "buf.h"
#include "layoutd_curl.h"

struct xfer {
	struct xfer *next;
	uint64_t id;
	CURL *easy;
	struct curl_slist *headers;
	char *body;			/* the request's copy */
	struct buf answer;		/* the first LD_HTTP_BODY_MAX bytes */
	char *want;			/* the answer header kept, its name */
	char *header;			/* and its value, NULL none */
	size_t answer_len;
	char errbuf[CURL_ERROR_SIZE];
	struct timespec t0;
	ld_http_done done;
	void *arg;
};

/* One socket libcurl asked us to watch. */
struct sockev {
	struct sockev *next;
	struct ld_curl *c;
	curl_socket_t fd;
	struct event *ev;
};

struct ld_curl {
	struct event_base *base;
	CURLM *multi;
	struct event *timer;
	struct xfer *xfers;		/* in flight */
	struct xfer *ended;		/* finished, callbacks about to run */
	struct sockev *socks;
	uint64_t next_id;
};

static int curl_ready;

static double
since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void
xfer_free(struct xfer *x)
{
	if (!x)
		return;
	if (x->easy)
		curl_easy_cleanup(x->easy);
	curl_slist_free_all(x->headers);
	free(x->body);
	buf_free(&x->answer);
	free(x->want);
	free(x->header);
	free(x);
}

/* Take x out of the list and the multi handle. */
static void
xfer_unlink(struct ld_curl *c, struct xfer *x)
{
	struct xfer **p;

	for (p = &c->xfers; *p; p = &(*p)->next)
		if (*p == x) {
			*p = x->next;
			break;
		}
	curl_multi_remove_handle(c->multi, x->easy);
}

/* Run the callbacks of the finished transfers. */
static void
collect(struct ld_curl *c)
{
	struct xfer **tail = &c->ended, *x;
	CURLMsg *msg;
	int left;

	while (*tail)
		tail = &(*tail)->next;

	while ((msg = curl_multi_info_read(c->multi, &left)) != NULL) {
		void *priv = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&priv);
		x = priv;
		if (!x)
			continue;
		if (msg->data.result != CURLE_OK && !x->errbuf[0])
			snprintf(x->errbuf, sizeof(x->errbuf), "%s",
				 curl_easy_strerror(msg->data.result));
		if (msg->data.result != CURLE_OK)
			x->errbuf[sizeof(x->errbuf) - 1] = '\0';
		else
			x->errbuf[0] = '\0';
		xfer_unlink(c, x);
		x->next = NULL;
		*tail = x;
		tail = &x->next;
	}
	/* One at a time off c->ended: a callback may cancel one still there. */
	while ((x = c->ended) != NULL) {
		struct ld_http_result r;
		long status = 0;

		c->ended = x->next;
		if (!x->errbuf[0])
			curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
		memset(&r, 0, sizeof(r));
		r.status = status;
		r.error = status ? "" : x->errbuf[0] ? x->errbuf : "no HTTP answer";
		r.body = buf_str(&x->answer);
		r.len = x->answer_len;
		r.seconds = since(&x->t0);
		r.header = status ? x->header : NULL;
		x->done(x->arg, &r);
		xfer_free(x);
	}
}

static void
on_socket_event(evutil_socket_t fd, short what, void *arg)
{
	struct sockev *s = arg;
	struct ld_curl *c = s->c;
	int flags = 0, running = 0;

	if (what & EV_READ)
		flags |= CURL_CSELECT_IN;
	if (what & EV_WRITE)
		flags |= CURL_CSELECT_OUT;
	/* s may be freed inside (CURL_POLL_REMOVE): only c is used after. */
	curl_multi_socket_action(c->multi, fd, flags, &running);
	collect(c);
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct ld_curl *c = arg;
	int running = 0;

	curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	collect(c);
}

static void
sockev_free(struct ld_curl *c, struct sockev *s)
{
	struct sockev **p;

	for (p = &c->socks; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	if (s->ev)
		event_free(s->ev);
	free(s);
}

/* CURLMOPT_SOCKETFUNCTION: watch fd as libcurl says. */
static int
on_curl_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct ld_curl *c = userp;
	struct sockev *s = socketp;
	short ev = EV_PERSIST;

	if (what == CURL_POLL_REMOVE) {
		if (s) {
			curl_multi_assign(c->multi, fd, NULL);
			sockev_free(c, s);
		}
		return 0;
	}
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -1;
		s->c = c;
		s->fd = fd;
		s->next = c->socks;
		c->socks = s;
		curl_multi_assign(c->multi, fd, s);
	}
	if (what & CURL_POLL_IN)
		ev |= EV_READ;
	if (what & CURL_POLL_OUT)
		ev |= EV_WRITE;
	if (s->ev)
		event_free(s->ev);
	s->ev = event_new(c->base, fd, ev, on_socket_event, s);
	if (!s->ev || event_add(s->ev, NULL) < 0)
		return -1;
	return 0;
}

/* CURLMOPT_TIMERFUNCTION: call libcurl back after ms (-1: no timer). */
static int
on_curl_timer(CURLM *multi, long ms, void *userp)
{
	struct ld_curl *c = userp;
	struct timeval tv;

	if (ms < 0) {
		evtimer_del(c->timer);
		return 0;
	}
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	return evtimer_add(c->timer, &tv) < 0 ? -1 : 0;
}

struct ld_curl *
ld_curl_new(struct event_base *base, pl_err_t *err)
{
	struct ld_curl *c;

	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			pl_err_set(err, "libcurl: initialisation failed");
			return NULL;
		}
		curl_ready = 1;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		pl_err_set(err, "out of memory");
		return NULL;
	}
	c->base = base;
	c->multi = curl_multi_init();
	c->timer = evtimer_new(base, on_timer, c);
	if (!c->multi || !c->timer) {
		pl_err_set(err, "libcurl: cannot create a multi handle and its timer");
		ld_curl_free(c);
		return NULL;
	}
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
	curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
	curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	return c;
}

void
ld_curl_free(struct ld_curl *c)
{
	struct xfer *x;

	if (!c)
		return;
	while ((x = c->xfers) != NULL) {
		xfer_unlink(c, x);
		xfer_free(x);
	}
	while ((x = c->ended) != NULL) {
		c->ended = x->next;
		xfer_free(x);
	}
	if (c->multi)
		curl_multi_cleanup(c->multi);
	while (c->socks)
		sockev_free(c, c->socks);
	if (c->timer)
		event_free(c->timer);
	free(c);
}

/* CURLOPT_WRITEFUNCTION: keep the first LD_HTTP_BODY_MAX bytes. */
static size_t
on_write(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n, room;

	room = x->answer.len < LD_HTTP_BODY_MAX ? LD_HTTP_BODY_MAX - x->answer.len : 0;
	if (room)
		buf_add(&x->answer, p, len < room ? len : room);
	x->answer_len += len;
	return len;
}

/* CURLOPT_HEADERFUNCTION: keep the value of the header asked for (the
 * first one of the last answer: a new status line starts over). */
static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * n, nl = strlen(x->want), a, b;

	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		free(x->header);
		x->header = NULL;
		return len;
	}
	if (x->header || len <= nl || p[nl] != ':' || strncasecmp(p, x->want, nl) != 0)
		return len;
	for (a = nl + 1; a < len && (p[a] == ' ' || p[a] == '\t'); a++)
		;
	for (b = len; b > a && (p[b - 1] == '\r' || p[b - 1] == '\n' || p[b - 1] == ' ' ||
				p[b - 1] == '\t'); b--)
		;
	if (b - a <= LD_HTTP_HEADER_MAX && memchr(p + a, '\0', b - a) == NULL)
		x->header = strndup(p + a, b - a);
	return len;
}

static int
url_ok(const char *url)
{
	return url && (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0);
}

uint64_t
ld_http_post(struct ld_curl *c, const struct ld_http_req *rq, pl_err_t *err)
{
	char ct[128];
	struct xfer *x;
	size_t i;

	if (!url_ok(rq->url)) {
		pl_err_set(err, "URL %.80s: expected http://HOST[:PORT]/PATH or https://...",
			   rq->url ? rq->url : "(none)");
		return 0;
	}
	if (rq->timeout_ms <= 0 || !rq->done) {
		pl_err_set(err, "a request needs a timeout and a callback");
		return 0;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		goto oom;
	x->easy = curl_easy_init();
	x->body = malloc(rq->len ? rq->len : 1);
	if (!x->easy || !x->body)
		goto oom;
	if (rq->len)
		memcpy(x->body, rq->body, rq->len);
	if (rq->want_header && !(x->want = strdup(rq->want_header)))
		goto oom;
	snprintf(ct, sizeof(ct), "Content-Type: %s",
		 rq->content_type ? rq->content_type : "application/json");
	x->headers = curl_slist_append(NULL, ct);
	/* No "Expect: 100-continue" round trip for larger bodies. */
	if (x->headers && !curl_slist_append(x->headers, "Expect:"))
		goto oom;
	for (i = 0; x->headers && rq->headers && rq->headers[i]; i++)
		if (!curl_slist_append(x->headers, rq->headers[i]))
			goto oom;
	if (!x->headers)
		goto oom;
	x->id = ++c->next_id;
	x->done = rq->done;
	x->arg = rq->arg;
	clock_gettime(CLOCK_MONOTONIC, &x->t0);
	curl_easy_setopt(x->easy, CURLOPT_URL, rq->url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(x->easy, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(x->easy, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(x->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(x->easy, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(x->easy, CURLOPT_POST, 1L);
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, x->body);
	curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
	curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->headers);
	curl_easy_setopt(x->easy, CURLOPT_TIMEOUT_MS, rq->timeout_ms);
	curl_easy_setopt(x->easy, CURLOPT_CONNECTTIMEOUT_MS,
			 rq->connect_ms > 0 ? rq->connect_ms : rq->timeout_ms);
	curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
	if (x->want) {
		curl_easy_setopt(x->easy, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(x->easy, CURLOPT_HEADERDATA, x);
	}
	curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(x->easy, CURLOPT_PRIVATE, x);
	curl_easy_setopt(x->easy, CURLOPT_USERAGENT, "layoutd/" PACKAGE_VERSION);
	if (curl_multi_add_handle(c->multi, x->easy) != CURLM_OK) {
		pl_err_set(err, "libcurl: cannot add a transfer");
		xfer_free(x);
		return 0;
	}
	x->next = c->xfers;
	c->xfers = x;
	return x->id;
oom:
	pl_err_set(err, "out of memory");
	xfer_free(x);
	return 0;
}

void
ld_http_cancel(struct ld_curl *c, uint64_t id)
{
	struct xfer *x, **p;

	for (x = c->xfers; x; x = x->next)
		if (x->id == id) {
			xfer_unlink(c, x);
			xfer_free(x);
			return;
		}
	for (p = &c->ended; *p; p = &(*p)->next)
		if ((*p)->id == id) {
			x = *p;
			*p = x->next;
			xfer_free(x);
			return;
		}
}
