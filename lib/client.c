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

struct sink {
	char *buf;
	size_t len, cap;
	int too_big;
};

static size_t
on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct sink *s = arg;
	size_t n = size * nmemb;

	if (s->len + n + 1 > (size_t)CLIENT_MAX_BODY) {
		s->too_big = 1;
		return 0;
	}
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		char *p;

		while (cap < s->len + n + 1)
			cap *= 2;
		p = realloc(s->buf, cap);
		if (!p)
			return 0;
		s->buf = p;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, ptr, n);
	s->len += n;
	s->buf[s->len] = '\0';
	return n;
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

/*
 * HTTP/1.0 over a unix socket with plain sockets: what the plugin does in
 * every slurmstepd.  libcurl would do the same, but loading it (and the
 * thirty libraries it pulls in) costs each process about 4 ms, which alone
 * put the plugin's launch overhead above its 5 % budget.  One request per
 * connection; the daemon closes after answering.
 */
static int
unix_request(const char *socket_path, const char *method, const char *path, const char *body,
	     long timeout_ms, struct client_reply *reply, pl_err_t *err)
{
	struct sockaddr_un sa;
	struct timespec ts;
	struct sink s = { NULL, 0, 0, 0 };
	long long deadline;
	size_t blen = body ? strlen(body) : 0, off = 0, hlen;
	char head[512], *hdr_end, *p;
	int fd = -1, rv = -1;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + (timeout_ms > 0 ? timeout_ms : 1);
	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return pl_err_set(err, "%s: socket path too long", socket_path);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return pl_err_set(err, "%s: socket: %s", socket_path, strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		socklen_t el = sizeof(e);

		if (e != EINPROGRESS && e != EAGAIN) {
			pl_err_set(err, "%s: Couldn't connect to server: %s", socket_path, strerror(e));
			goto out;
		}
		if (wait_fd(fd, POLLOUT, deadline, socket_path, err) < 0)
			goto out;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e != 0) {
			pl_err_set(err, "%s: Couldn't connect to server: %s", socket_path, strerror(e));
			goto out;
		}
	}
	hlen = (size_t)snprintf(head, sizeof(head),
				"%s %s HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\n"
				"Content-Length: %zu\r\nConnection: close\r\n\r\n", method, path, blen);
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
			pl_err_set(err, "%s: answer larger than %ld bytes", socket_path, CLIENT_MAX_BODY);
			goto out;
		}
	}
	if (!s.buf || sscanf(s.buf, "HTTP/%*d.%*d %ld", &reply->status) != 1 ||
	    !(hdr_end = strstr(s.buf, "\r\n\r\n"))) {
		pl_err_set(err, "%s: not an HTTP answer", socket_path);
		goto out;
	}
	p = hdr_end + 4;
	reply->len = s.len - (size_t)(p - s.buf);
	memmove(s.buf, p, reply->len + 1);
	reply->body = s.buf;
	s.buf = NULL;
	rv = 0;
out:
	if (rv < 0)
		reply->status = 0;
	free(s.buf);
	close(fd);
	return rv;
}

int
client_request(const char *socket_path, const char *method, const char *path,
	       const char *body, long timeout_ms, struct client_reply *reply,
	       pl_err_t *err)
{
	struct curl_slist *hdr = NULL;
	struct sink s = { NULL, 0, 0, 0 };
	char url[1024];
	CURL *c = NULL;
	CURLcode rc;
	int tcp = strncmp(socket_path, "http://", 7) == 0, rv = -1;

	memset(reply, 0, sizeof(*reply));
	if (!tcp) {
		struct stat st;

		/* No socket, no daemon: say so without loading libcurl. */
		if (stat(socket_path, &st) < 0)
			return pl_err_set(err, "%s: %s", socket_path, strerror(errno));
		if (!S_ISSOCK(st.st_mode))
			return pl_err_set(err, "%s: not a socket", socket_path);
		return unix_request(socket_path, method, path, body, timeout_ms, reply, err);
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
	if (strcmp(method, "POST") == 0) {
		hdr = cu.slist_append(hdr, "Content-Type: application/json");
		hdr = cu.slist_append(hdr, "Expect:");
		cu.easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
		cu.easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
	} else if (strcmp(method, "GET") != 0) {
		cu.easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	}
	rc = cu.easy_perform(c);
	if (rc != CURLE_OK) {
		if (s.too_big)
			pl_err_set(err, "%s: answer larger than %ld bytes", socket_path,
				   CLIENT_MAX_BODY);
		else
			pl_err_set(err, "%s: %s", socket_path, cu.easy_strerror(rc));
		goto out;
	}
	cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply->status);
	reply->body = s.buf;
	reply->len = s.len;
	s.buf = NULL;
	rv = 0;
out:
	free(s.buf);
	cu.slist_free_all(hdr);
	if (c)
		cu.easy_cleanup(c);
	return rv;
}
