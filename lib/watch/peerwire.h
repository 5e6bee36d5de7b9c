/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The peer wire: how one node's layoutd talks to another's (and layoutctl
 * to a step's leader) over TCP.  Written once here, for the daemon and the
 * CLI both:
 *
 *   - where a node's peer listener is: the map's address and peer_port for
 *     it, else its name and the port given (PEERWIRE_PORT by default);
 *   - the paths, under PEERWIRE_VERSION's /v1/;
 *   - the credential: a munge credential in the PEERWIRE_HEADER header,
 *     whose payload is the SHA-256 of a POST's body in lowercase hex, or
 *     the request line "GET URI" of a GET;
 *   - the answer's credential: a 200 to a POST carries one too, in the same
 *     header, whose payload is "REPLY ", the request body's SHA-256, " "
 *     and the answer body's SHA-256 (peerwire_reply_payload): the sender
 *     takes a 200 only from root or slurm_user, so a user who binds the
 *     peer port while layoutd is down cannot take the summaries;
 *   - the 421 a node answers when it runs the step but another leads it:
 *     {"error", "leader": where it sends its summaries, "acting": whether
 *     that is not the step's first node};
 *   - the reasons a request is refused, by name;
 *   - the leader's 200 answer to a node's POST /v1/peer/summary:
 *     {"status": "ok"}, and when the leader wants stacks of that node's
 *     culprits, "capture": [{"job", "step", "rank", "kind", "text"}, ...]
 *     (at most STACKFILE_REQ_MAX, lib/watch/stackfile.h's codec and
 *     checks).  The node captures only a rank of the step it sent the
 *     summary of, registered there and alive; a node of an older release
 *     ignores the key.
 *
 * The summaries themselves are lib/watch/summary.h's, with their own
 * version.
 */
#ifndef PL_PEERWIRE_H
#define PL_PEERWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "pl_err.h"
#include "sha256.h"

struct buf;
struct topo_map;

#define PEERWIRE_VERSION 1		/* the /v1/ of the paths */
#define PEERWIRE_PORT 6830		/* peer_port when neither config nor map gives one */
#define PEERWIRE_HEADER "X-PL-Munge"	/* the credential's header */
#define PEERWIRE_CRED_MAX 4096		/* the longest credential taken */
#define PEERWIRE_SCHEME "http://"	/* a peer listener's URL starts so */

#define PEERWIRE_PATH_SUMMARY "/v1/peer/summary"	/* a node's summary to its leader */
#define PEERWIRE_PATH_RELAY "/v1/peer/relay"		/* to its relay */
#define PEERWIRE_PATH_BATCH "/v1/peer/batch"		/* a relay's batch to the leader */
#define PEERWIRE_PATH_STEP "/v1/watch/step"		/* GET: the whole step */

/* Why a request on the peer listener was refused. */
enum peerwire_refusal {
	PEERWIRE_REFUSE_REQUEST,	/* not a path or method served, or an empty body */
	PEERWIRE_REFUSE_UNAUTH,		/* no PEERWIRE_HEADER credential */
	PEERWIRE_REFUSE_REPLAYED,	/* munge: the credential was used before */
	PEERWIRE_REFUSE_EXPIRED,	/* munge: expired, or from the future */
	PEERWIRE_REFUSE_CRED,		/* munge: any other decode error */
	PEERWIRE_REFUSE_UID,		/* the credential's uid is neither root nor slurm_user */
	PEERWIRE_REFUSE_CHECKSUM,	/* its payload is not what it must cover */
	PEERWIRE_REFUSE_SUMMARY,	/* the body is not a valid summary (sum_decode) */
	PEERWIRE_REFUSE_STEP,		/* not a step this node may lead, or not its shape */
	PEERWIRE_REFUSE_STALE,		/* older than the one held from the same daemon start */
	PEERWIRE_REFUSE_BUSY,		/* the credential queue is full */
	PEERWIRE_REFUSE_ORIGIN,		/* its credential is not from the node it
					 * speaks for (peer_check_origin) */
	PEERWIRE_REFUSE_MUNGED,		/* this node's munged cannot check it now
					 * (answered 503: try another node) */
	PEERWIRE_NREFUSE
};

/* "request", "unauthenticated", "replayed", "expired", "credential",
 * "uid", "checksum", "summary", "step", "stale", "busy", "origin"; "?" for
 * another value. */
const char *peerwire_refusal_name(enum peerwire_refusal r);

/*
 * The URL of node name's peer listener with path appended ("" for none)
 * into out: the map's address and peer_port for the node when map (may be
 * NULL) has them, else name and port; an IPv6 address goes in brackets.
 */
void peerwire_url(struct buf *out, const struct topo_map *map, const char *name, int port,
		  const char *path);

/* What a POST's credential must carry: the SHA-256 of its len bytes of
 * body in lowercase hex, in hex (returned). */
const char *peerwire_post_payload(const void *body, size_t len, char hex[SHA256_HEX_LEN]);

/* What the credential of a 200 answer to a POST must carry: "REPLY ", the
 * request's payload (req_hex, peerwire_post_payload's), " " and the SHA-256
 * of the answer's len bytes of body, into out (returned). */
#define PEERWIRE_REPLY_LEN (6 + 2 * SHA256_HEX_LEN)
const char *peerwire_reply_payload(const char *req_hex, const void *body, size_t len,
				   char out[PEERWIRE_REPLY_LEN]);

/* Whether v reads as a munge credential, as munge_encode() writes one:
 * "MUNGE:", base64 (A-Z a-z 0-9 + / =), ":", at most PEERWIRE_CRED_MAX
 * bytes in all.  Checked before anything is done with a request's body,
 * so that junk costs nothing; only munged can say whether it is good. */
bool peerwire_cred_shape(const char *v);

/* What a GET's credential must carry: "GET " and the URI as sent (path and
 * query), appended to out. */
void peerwire_get_payload(struct buf *out, const char *uri);

/*
 * The 421 of a node that runs job.step but does not lead it (self), with
 * where it sends its summaries (target, a relay when relay, an acting
 * leader when acting): err (may be NULL) gets the message, and the body
 * is returned (caller frees), NULL when out of memory.
 */
json_t *peerwire_misdirected(uint64_t job, uint64_t step, const char *self, const char *target,
			     bool relay, bool acting, pl_err_t *err);

/*
 * A 421's body read back: the node it names into leader (n bytes) and
 * whether that node acts for the leader.  0, or -1 when body is not one
 * (no "leader" string that fits, no "acting" boolean).
 */
int peerwire_misdirected_parse(const json_t *body, char *leader, size_t n, bool *acting);

#endif
