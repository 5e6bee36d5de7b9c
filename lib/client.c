/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "client.h"

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
	/* Safe to call more than once; libcurl counts. */
	if (curl_global_init(CURL_GLOBAL_NOTHING) != CURLE_OK)
		return pl_err_set(err, "libcurl initialisation failed");
	c = curl_easy_init();
	if (!c) {
		pl_err_set(err, "libcurl: out of memory");
		goto out;
	}
	snprintf(url, sizeof(url), "%s%s", tcp ? socket_path : "http://localhost", path);
	if (!tcp)
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, socket_path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1L);
	/* Signals are not ours to take inside srun or slurmstepd. */
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	if (strcmp(method, "POST") == 0) {
		hdr = curl_slist_append(hdr, "Content-Type: application/json");
		hdr = curl_slist_append(hdr, "Expect:");
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	}
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		if (s.too_big)
			pl_err_set(err, "%s: answer larger than %ld bytes", socket_path,
				   CLIENT_MAX_BODY);
		else
			pl_err_set(err, "%s: %s", socket_path, curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply->status);
	reply->body = s.buf;
	reply->len = s.len;
	s.buf = NULL;
	rv = 0;
out:
	free(s.buf);
	curl_slist_free_all(hdr);
	if (c)
		curl_easy_cleanup(c);
	return rv;
}
