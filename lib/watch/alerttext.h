/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text that leaves layoutd for people: alert labels and annotations,
 * webhook messages, GET /v1/alerts and log lines.  Much of it comes from
 * a user's own record (the communicator's name, the collective's name),
 * and all of it is read by tools that give some characters a meaning:
 * Slack and Mattermost take "<!channel>" as a page to a whole channel and
 * "<URL|text>" as a link, HTML takes tags, a log reader takes a newline as
 * a new line.  So what goes out is printable ASCII without <, > and &:
 * none of these tools finds anything in it to act on, and the same text
 * serves every target.
 *
 * An alert target's URL is a secret as a whole (Alertmanager behind basic
 * auth, a Slack webhook's path is its bearer token): alerttext_url_public
 * gives the part that may be shown to anyone.
 */
#ifndef PL_WATCH_ALERTTEXT_H
#define PL_WATCH_ALERTTEXT_H

#include <stddef.h>

/* src as printable ASCII with every other byte, and <, > and &, written as
 * \xHH; cut on a whole character to fit dst (size > 0).  src NULL is "".
 * Returns dst. */
const char *alerttext_clean(char *dst, size_t size, const char *src);

/* The part of an http(s) URL that may be shown to anyone:
 * "scheme://host[:port]", without user and password, path, query and
 * fragment (any of which may be a token), cleaned as above.  A text that
 * is not "scheme://..." gives "(not a URL)".  Returns dst. */
const char *alerttext_url_public(char *dst, size_t size, const char *url);

#endif
