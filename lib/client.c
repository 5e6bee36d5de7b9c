/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "buf.h"
#include "client.h"

/*
 * libcurl serves http:// URLs (layoutctl against a remote layoutd, and
 * alert delivery).  It is loaded on first use, not linked: it drags some
 * thirty shared libraries into every process that loads us, which costs
 * srun and each slurmstepd about 4 ms even for jobs that never use it.
 */
static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	int loaded;		/* 1 ok, -1 failed */
	char why[256];
} cu;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static void
cu_load(void)
{
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(cu.why, sizeof(cu.why), "cannot load libcurl: %s", dlerror());
		cu.loaded = -1;
		return;
	}
	/* POSIX allows this conversion for dlsym results. */
	*(void **)&cu.global_init = dlsym(h, "curl_global_init");
	*(void **)&cu.easy_init = dlsym(h, "curl_easy_init");
	*(void **)&cu.easy_setopt = dlsym(h, "curl_easy_setopt");
	*(void **)&cu.easy_perform = dlsym(h, "curl_easy_perform");
	*(void **)&cu.easy_getinfo = dlsym(h, "curl_easy_getinfo");
	*(void **)&cu.easy_cleanup = dlsym(h, "curl_easy_cleanup");
	*(void **)&cu.easy_strerror = dlsym(h, "curl_easy_strerror");
	*(void **)&cu.slist_append = dlsym(h, "curl_slist_append");
	*(void **)&cu.slist_free_all = dlsym(h, "curl_slist_free_all");
	if (!cu.global_init || !cu.easy_init || !cu.easy_setopt || !cu.easy_perform ||
	    !cu.easy_getinfo || !cu.easy_cleanup || !cu.easy_strerror || !cu.slist_append ||
	    !cu.slist_free_all) {
		snprintf(cu.why, sizeof(cu.why), "libcurl.so.4 lacks a function we need");
		cu.loaded = -1;
		return;
	}
	/* Once per process, as libcurl wants; never cleaned up (we may be a
	 * plugin in a process that outlives us). */
	if (cu.global_init(CURL_GLOBAL_NOTHING) != CURLE_OK) {
		snprintf(cu.why, sizeof(cu.why), "libcurl initialisation failed");
		cu.loaded = -1;
		return;
	}
	cu.loaded = 1;
}

/* Answers larger than this are refused: a placement of 100k tasks is ~10 MB. */
#define CLIENT_MAX_BODY (64L << 20)

/* A connect that finds the daemon's listen queue full is retried after
 * this long at first, doubling up to the cap, until the deadline. */
#define CONNECT_RETRY_FIRST_MS 1
#define CONNECT_RETRY_MAX_MS 50

/* The reply as it arrives: a struct buf capped at CLIENT_MAX_BODY. */
struct sink {
	struct buf b;
	int too_big;		/* else a failed append was out of memory */
};

/* Append what arrived; libcurl's write callback too. */
static size_t
on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct sink *s = arg;
	size_t n = size * nmemb;

	if (s->b.len + n > (size_t)CLIENT_MAX_BODY)
		s->too_big = 1;
	return buf_add(&s->b, ptr, n) == 0 ? n : 0;
}

static void
sink_error(const struct sink *s, const char *path, pl_err_t *err)
{
	if (s->too_big)
		pl_err_set(err, "%s: answer larger than %ld bytes", path, CLIENT_MAX_BODY);
	else
		pl_err_set(err, "%s: out of memory reading the answer", path);
}

int
client_socket_path(const char *pattern, const char *node, char *buf, size_t size)
{
	size_t o = 0;
	const char *p;

	for (p = pattern; *p; p++) {
		const char *add;
		char one[2] = { 0, 0 };

		if (*p == '%') {
			p++;
			if (*p == 'n')
				add = node ? node : "";
			else if (*p == '%')
				add = "%";
			else
				return -1;
		} else {
			one[0] = *p;
			add = one;
		}
		if (o + strlen(add) + 1 > size)
			return -1;
		memcpy(buf + o, add, strlen(add));
		o += strlen(add);
	}
	if (size == 0)
		return -1;
	buf[o] = '\0';
	return 0;
}

/* Milliseconds left until deadline (CLOCK_MONOTONIC ms); <= 0 when past. */
static long
left_ms(long long deadline)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)(deadline - ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000));
}

/* Wait for fd to be ready for `events` before the deadline. */
static int
wait_fd(int fd, short events, long long deadline, const char *path, pl_err_t *err)
{
	for (;;) {
		struct pollfd p = { fd, events, 0 };
		long ms = left_ms(deadline);
		int n;

		if (ms <= 0)
			return pl_err_set(err, "%s: Timeout was reached", path);
		n = poll(&p, 1, (int)ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return pl_err_set(err, "%s: poll: %s", path, strerror(errno));
	}
}

/* Sleep ms (less when the deadline comes first); 0, or -1 when past it. */
static int
backoff(long ms, long long deadline)
{
	long left = left_ms(deadline);
	struct timespec ts;

	if (left <= 0)
		return -1;
	if (ms > left)
		ms = left;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return 0;
}

/*
 * A connected non-blocking socket to sa, or -1 with err.  A unix socket
 * whose listen queue is full refuses at once with EAGAIN (the daemon is
 * busy, not gone): try again with a short backoff until the deadline.
 * Other refusals (no listener: ECONNREFUSED) are final, so the plugin
 * falls back at once when the daemon is down.
 */
static int
connect_unix(const struct sockaddr_un *sa, long long deadline, const char *path, pl_err_t *err)
{
	long wait = CONNECT_RETRY_FIRST_MS;

	for (;;) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), e;
		socklen_t el = sizeof(e);

		if (fd < 0)
			return pl_err_set(err, "%s: socket: %s", path, strerror(errno));
		if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
			return fd;
		e = errno;
		if (e == EINPROGRESS) {
			if (wait_fd(fd, POLLOUT, deadline, path, err) < 0) {
				close(fd);
				return -1;
			}
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0)
				return fd;
		}
		close(fd);
		if (e != EAGAIN && e != EINTR)
			return pl_err_set(err, "%s: Couldn't connect to server: %s", path, strerror(e));
		if (backoff(wait, deadline) < 0)
			return pl_err_set(err, "%s: Timeout was reached (the daemon's listen queue stayed full)",
					  path);
		wait = wait * 2 > CONNECT_RETRY_MAX_MS ? CONNECT_RETRY_MAX_MS : wait * 2;
	}
}

/*
 * HTTP/1.0 over a unix socket with plain sockets: what the plugin does in
 * every slurmstepd.  libcurl would do the same, but loading it (and the
 * thirty libraries it pulls in) costs each process about 4 ms, which alone
 * put the plugin's launch overhead above its 5 % budget.  One request per
 * connection; the daemon closes after answering.
 */
static int
unix_request(const char *socket_path, const char *method, const char *path, const char *header,
	     const char *body, long timeout_ms, struct client_reply *reply, pl_err_t *err)
{
	struct sockaddr_un sa;
	struct timespec ts;
	struct sink s = { BUF_INIT, 0 };
	long long deadline;
	size_t blen = body ? strlen(body) : 0, off = 0, hlen;
	char head[512 + CLIENT_HEADER_MAX], *hdr_end, *text;
	int fd = -1, rv = -1;

	s.b.max = (size_t)CLIENT_MAX_BODY;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + (timeout_ms > 0 ? timeout_ms : 1);
	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return pl_err_set(err, "%s: socket path too long", socket_path);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, socket_path);
	fd = connect_unix(&sa, deadline, socket_path, err);
	if (fd < 0)
		return -1;
	hlen = (size_t)snprintf(head, sizeof(head),
				"%s %s HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\n"
				"Content-Length: %zu\r\n%s%sConnection: close\r\n\r\n", method, path,
				blen, header ? header : "", header ? "\r\n" : "");
	if (hlen >= sizeof(head)) {
		close(fd);
		return pl_err_set(err, "%s: the request's head is too long", socket_path);
	}
	while (off < hlen + blen) {
		const char *from = off < hlen ? head + off : body + (off - hlen);
		size_t n = off < hlen ? hlen - off : blen - (off - hlen);
		ssize_t w = send(fd, from, n, MSG_NOSIGNAL);

		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (wait_fd(fd, POLLOUT, deadline, socket_path, err) < 0)
				goto out;
			continue;
		}
		if (w <= 0) {
			pl_err_set(err, "%s: send: %s", socket_path, strerror(errno));
			goto out;
		}
		off += (size_t)w;
	}
	for (;;) {
		char buf[16384];
		ssize_t r;

		if (wait_fd(fd, POLLIN, deadline, socket_path, err) < 0)
			goto out;
		r = recv(fd, buf, sizeof(buf), 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0) {
			pl_err_set(err, "%s: recv: %s", socket_path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		if (on_data(buf, 1, (size_t)r, &s) != (size_t)r) {
			sink_error(&s, socket_path, err);
			goto out;
		}
	}
	text = s.b.s;
	if (!text || sscanf(text, "HTTP/%*d.%*d %ld", &reply->status) != 1 ||
	    !(hdr_end = strstr(text, "\r\n\r\n"))) {
		pl_err_set(err, "%s: not an HTTP answer", socket_path);
		goto out;
	}
	/* The body moves to the front; the buffer is handed over as it is. */
	reply->len = s.b.len - (size_t)(hdr_end + 4 - text);
	memmove(text, hdr_end + 4, reply->len + 1);
	s.b.len = reply->len;
	reply->body = buf_take(&s.b);
	rv = 0;
out:
	if (rv < 0)
		reply->status = 0;
	buf_free(&s.b);
	close(fd);
	return rv;
}

int
client_request(const char *socket_path, const char *method, const char *path,
	       const char *body, long timeout_ms, struct client_reply *reply,
	       pl_err_t *err)
{
	return client_request_hdr(socket_path, method, path, NULL, body, timeout_ms, reply, err);
}

int
client_request_hdr(const char *socket_path, const char *method, const char *path,
		   const char *header, const char *body, long timeout_ms,
		   struct client_reply *reply, pl_err_t *err)
{
	struct curl_slist *hdr = NULL;
	struct sink s = { BUF_INIT, 0 };
	char url[1024];
	CURL *c = NULL;
	CURLcode rc;
	int tcp = strncmp(socket_path, "http://", 7) == 0, rv = -1;

	memset(reply, 0, sizeof(*reply));
	s.b.max = (size_t)CLIENT_MAX_BODY;
	if (header && (strlen(header) >= CLIENT_HEADER_MAX || strpbrk(header, "\r\n")))
		return pl_err_set(err, "%s: a request header is too long or spans lines", socket_path);
	if (!tcp) {
		struct stat st;

		/* No socket, no daemon: say so without loading libcurl. */
		if (stat(socket_path, &st) < 0)
			return pl_err_set(err, "%s: %s", socket_path, strerror(errno));
		if (!S_ISSOCK(st.st_mode))
			return pl_err_set(err, "%s: not a socket", socket_path);
		return unix_request(socket_path, method, path, header, body, timeout_ms, reply, err);
	}
	pthread_once(&cu_once, cu_load);
	if (cu.loaded < 0)
		return pl_err_set(err, "%s", cu.why);
	c = cu.easy_init();
	if (!c) {
		pl_err_set(err, "libcurl: out of memory");
		goto out;
	}
	snprintf(url, sizeof(url), "%s%s", tcp ? socket_path : "http://localhost", path);
	if (!tcp)
		cu.easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, socket_path);
	cu.easy_setopt(c, CURLOPT_URL, url);
	cu.easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1L);
	cu.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1L);
	/* Signals are not ours to take inside srun or slurmstepd. */
	cu.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	cu.easy_setopt(c, CURLOPT_NOPROXY, "*");
	cu.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	cu.easy_setopt(c, CURLOPT_WRITEDATA, &s);
	if (header)
		hdr = cu.slist_append(hdr, header);
	if (strcmp(method, "POST") == 0) {
		hdr = cu.slist_append(hdr, "Content-Type: application/json");
		hdr = cu.slist_append(hdr, "Expect:");
		cu.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
		cu.easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
	} else {
		if (hdr)
			cu.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
		if (strcmp(method, "GET") != 0)
			cu.easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	}
	rc = cu.easy_perform(c);
	if (rc != CURLE_OK) {
		if (s.b.bad)
			sink_error(&s, socket_path, err);
		else
			pl_err_set(err, "%s: %s", socket_path, cu.easy_strerror(rc));
		goto out;
	}
	cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply->status);
	reply->len = s.b.len;
	reply->body = buf_take(&s.b);
	if (!reply->body) {
		pl_err_set(err, "%s: out of memory", socket_path);
		goto out;
	}
	rv = 0;
out:
	buf_free(&s.b);
	cu.slist_free_all(hdr);
	if (c)
		cu.easy_cleanup(c);
	return rv;
}
