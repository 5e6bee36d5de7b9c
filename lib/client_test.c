/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The unix-socket client against a daemon that is slow to accept: a
 * listening socket with backlog 0 whose queue is filled and never drained
 * makes connect() fail with EAGAIN at once.  The client must keep trying
 * until its one deadline: succeed when the accept comes in time, fail
 * cleanly (and not before) at the deadline otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "tap.h"

#define MAX_FILL 64

struct server {
	int lfd;
	long delay_ms;		/* before the first accept */
	int nfill;		/* queued connections to accept and drop first */
	char got[4096];		/* the request the client sent */
	int served;
};

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Accept with a bound, so a broken client cannot hang the test. */
static int
accept_within(int lfd, int ms)
{
	struct pollfd p = { lfd, POLLIN, 0 };

	if (poll(&p, 1, ms) <= 0)
		return -1;
	return accept(lfd, NULL, NULL);
}

/* Late accepts: drop the fillers, then answer the client's request. */
static void *
serve(void *arg)
{
	static const char answer[] = "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello";
	struct server *sv = arg;
	size_t len = 0;
	int i, fd;

	sleep_ms(sv->delay_ms);
	for (i = 0; i < sv->nfill; i++) {
		fd = accept_within(sv->lfd, 2000);
		if (fd < 0)
			return NULL;
		close(fd);
	}
	fd = accept_within(sv->lfd, 3000);
	if (fd < 0)
		return NULL;
	/* Read the head and the body (the client says Content-Length). */
	while (len + 1 < sizeof(sv->got)) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t r;

		if (poll(&p, 1, 2000) <= 0)
			break;
		r = read(fd, sv->got + len, sizeof(sv->got) - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
		sv->got[len] = '\0';
		if (strstr(sv->got, "\r\n\r\n") && strstr(sv->got, "{\"x\":1}"))
			break;
	}
	if (write(fd, answer, sizeof(answer) - 1) == (ssize_t)(sizeof(answer) - 1))
		sv->served = 1;
	close(fd);
	return NULL;
}

/* A listening socket at path with backlog 0, its queue filled with
 * connections nobody accepts; their fds in fill[], the count in *nfill. */
static int
full_listener(const char *path, int *fill, int *nfill)
{
	struct sockaddr_un sa;
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0);

	*nfill = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 0) < 0)
		return -1;
	while (*nfill < MAX_FILL) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

		if (fd < 0)
			break;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			int e = errno;

			close(fd);
			if (e == EAGAIN)
				return lfd;	/* full */
			break;
		}
		fill[(*nfill)++] = fd;
	}
	return -1;
}

static void
close_all(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

static void
test_accept_in_time(const char *dir)
{
	struct server sv;
	struct client_reply r = { 0, NULL, 0 };
	pthread_t th;
	char path[96];
	int fill[MAX_FILL], nfill, rc;
	pl_err_t err;
	double t0, took;

	snprintf(path, sizeof(path), "%s/late.sock", dir);
	memset(&sv, 0, sizeof(sv));
	sv.lfd = full_listener(path, fill, &nfill);
	ok(sv.lfd >= 0 && nfill >= 1, "a listen queue filled with %d connections", nfill);
	sv.delay_ms = 300;
	sv.nfill = nfill;
	pthread_create(&th, NULL, serve, &sv);
	pl_err_clear(&err);
	t0 = now_ms();
	rc = client_request(path, "POST", "/v1/x", "{\"x\":1}", 3000, &r, &err);
	took = now_ms() - t0;
	pthread_join(th, NULL);
	ok(rc == 0, "a request to a daemon that accepts after 300 ms succeeds (%s)", err.text);
	is_int(r.status, 200, "with the daemon's status");
	is_str(r.body ? r.body : "(null)", "hello", "and its body");
	ok(sv.served && strstr(sv.got, "POST /v1/x HTTP/1.0\r\n") && strstr(sv.got, "{\"x\":1}"),
	   "the daemon got the whole request");
	ok(took >= 250 && took < 2500, "it waited for the accept (%.0f ms)", took);
	free(r.body);
	close_all(fill, nfill);
	close(sv.lfd);
	unlink(path);
}

static void
test_never_accepted(const char *dir)
{
	struct client_reply r = { 0, NULL, 0 };
	char path[96];
	int fill[MAX_FILL], nfill, lfd, rc;
	pl_err_t err;
	double t0, took;

	snprintf(path, sizeof(path), "%s/never.sock", dir);
	lfd = full_listener(path, fill, &nfill);
	ok(lfd >= 0, "a full listen queue that nobody drains");
	pl_err_clear(&err);
	t0 = now_ms();
	rc = client_request(path, "POST", "/v1/x", "{}", 400, &r, &err);
	took = now_ms() - t0;
	ok(rc < 0, "the request fails");
	is_int(r.status, 0, "with no status");
	ok(r.body == NULL, "and no body");
	like(err.text, "Timeout", "saying it timed out (%s)", err.text);
	ok(took >= 350 && took < 1500, "at the 400 ms deadline, not before (%.0f ms)", took);
	close_all(fill, nfill);
	close(lfd);
	unlink(path);
}

/* No listener behind the socket file: a final answer, at once (the
 * plugin falls back without waiting). */
static void
test_refused(const char *dir)
{
	struct client_reply r = { 0, NULL, 0 };
	struct sockaddr_un sa;
	char path[96];
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), rc;
	pl_err_t err;
	double t0, took;

	snprintf(path, sizeof(path), "%s/gone.sock", dir);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ok(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "a socket file without a listener");
	pl_err_clear(&err);
	t0 = now_ms();
	rc = client_request(path, "GET", "/v1/health", NULL, 2000, &r, &err);
	took = now_ms() - t0;
	ok(rc < 0, "refused");
	like(err.text, "Connection refused", "saying so");
	ok(took < 500, "at once (%.0f ms)", took);
	close(fd);
	unlink(path);
}

int
main(void)
{
	char dir[] = "/tmp/client_test.XXXXXX";

	plan(16);
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_accept_in_time(dir);
	test_never_accepted(dir);
	test_refused(dir);
	rmdir(dir);
	return done_testing();
}
