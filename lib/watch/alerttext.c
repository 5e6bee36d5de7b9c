/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "alerttext.h"

static bool
plain(unsigned char ch)
{
	return ch >= 0x20 && ch < 0x7f && ch != '<' && ch != '>' && ch != '&';
}

const char *
alerttext_clean(char *dst, size_t size, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (!size)
		return dst;
	for (; src && *src; src++) {
		unsigned char ch = (unsigned char)*src;

		if (plain(ch)) {
			if (o + 1 >= size)
				break;
			dst[o++] = (char)ch;
		} else {
			if (o + 4 >= size)
				break;
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[ch >> 4];
			dst[o++] = hex[ch & 15];
		}
	}
	dst[o] = '\0';
	return dst;
}

/* [b, e) reads as a host name, an IPv4 or a bracketed IPv6 address, with
 * an optional numeric port. */
static bool
host_port(const char *b, const char *e)
{
	const char *p = b;

	if (p < e && *p == '[') {
		while (p < e && *p != ']' && (isxdigit((unsigned char)*p) || *p == ':' || *p == '[' ||
					      *p == '.'))
			p++;
		if (p == e || *p != ']')
			return false;
		p++;
	} else {
		while (p < e && (isalnum((unsigned char)*p) || *p == '.' || *p == '-' || *p == '_'))
			p++;
	}
	if (p == b)
		return false;
	if (p < e && *p == ':') {
		if (++p == e)
			return false;
		while (p < e && isdigit((unsigned char)*p))
			p++;
	}
	return p == e;
}

const char *
alerttext_url_public(char *dst, size_t size, const char *url)
{
	char part[256];
	const char *s, *host, *end, *at;
	size_t n;

	s = url ? strstr(url, "://") : NULL;
	if (!s || s == url || strspn(url, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "0123456789+.-") != (size_t)(s - url))
		return alerttext_clean(dst, size, "(not a URL)");
	host = s + 3;
	end = host + strcspn(host, "/?#");
	/* user:password@ ends at the authority's last @ (a password may hold
	 * one), never past the authority */
	for (at = end; at > host && at[-1] != '@'; at--)
		;
	if (at > host)
		host = at;
	n = (size_t)(s - url) + 3;
	if (n + (size_t)(end - host) >= sizeof(part))
		return alerttext_clean(dst, size, "(a URL too long to show)");
	memcpy(part, url, n);
	/* What is left must read as host[:port]; anything else (a password
	 * holding a raw '/', say) may be part of a secret: the host is not
	 * shown at all. */
	if (!host_port(host, end))
		memcpy(part + n, "(hidden)", sizeof("(hidden)"));
	else
		snprintf(part + n, sizeof(part) - n, "%.*s", (int)(end - host), host);
	return alerttext_clean(dst, size, part);
}
