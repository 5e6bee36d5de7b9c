/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The watch's messages to layoutd, off the tasks' start and exit
 * (spk_send.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spk_send.h"

struct spk_msg {
	struct spk_msg *next;
	struct spk_reg *reg;	/* the registrations, or */
	char *path, *body;	/* one POST */
};

static long
mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void
msg_free(struct spk_msg *m)
{
	if (!m)
		return;
	if (m->reg) {
		spk_reg_free(m->reg);
		free(m->reg);
	}
	free(m->path);
	free(m->body);
	free(m);
}

/* Send m, within timeout_ms; what came of it into s (its lock held by
 * the caller only for the counters: the request runs unlocked). */
static void
msg_send(struct spk_send *s, struct spk_msg *m, long timeout_ms)
{
	struct client_reply rep = { 0, NULL, 0 };
	bool alone = false;
	pl_err_t err;
	int rc;

	pl_err_clear(&err);
	if (m->reg)
		rc = spk_reg_send(m->reg, s->sock, timeout_ms, &rep, &alone, &err);
	else
		rc = client_request(s->sock, "POST", m->path, m->body, timeout_ms, &rep, &err);
	pthread_mutex_lock(&s->lock);
	if (rc < 0) {
		s->down = true;
		snprintf(s->last, sizeof(s->last), "%.200s", err.text);
	} else if (rep.status == 200) {
		s->sent++;
	} else if (rep.status) {
		s->refused++;
		s->last_status = rep.status;
		snprintf(s->last, sizeof(s->last), "%s", rep.body ? rep.body : "");
	}
	if (alone)
		s->alone = true;
	pthread_mutex_unlock(&s->lock);
	free(rep.body);
}

static void *
sender(void *arg)
{
	struct spk_send *s = arg;
	struct spk_msg *m;
	long left;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->head && !s->stopping)
			pthread_cond_wait(&s->cond, &s->lock);
		m = s->head;
		if (!m)
			break;		/* stopping, nothing left */
		s->head = m->next;
		if (!s->head)
			s->tail = NULL;
		left = s->timeout_ms;
		if (s->stopping)
			left = s->stop_at_ms + s->timeout_ms - mono_ms();
		if (s->down || left <= 0) {
			s->dropped++;
			pthread_mutex_unlock(&s->lock);
			msg_free(m);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		pthread_mutex_unlock(&s->lock);
		msg_send(s, m, left);
		msg_free(m);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void
spk_send_init(struct spk_send *s, const char *sock, long timeout_ms)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	snprintf(s->sock, sizeof(s->sock), "%s", sock);
	s->timeout_ms = timeout_ms;
}

/* Queue m, starting the thread with the first; -1 when it cannot start
 * (m is then sent here). */
static int
enqueue(struct spk_send *s, struct spk_msg *m)
{
	if (!s->started && !s->inline_only) {
		if (pthread_create(&s->th, NULL, sender, s) == 0)
			s->started = true;
		else
			s->inline_only = true;
	}
	if (s->inline_only) {
		if (!s->down)
			msg_send(s, m, s->timeout_ms);
		else
			s->dropped++;
		msg_free(m);
		return -1;
	}
	pthread_mutex_lock(&s->lock);
	if (s->tail)
		s->tail->next = m;
	else
		s->head = m;
	s->tail = m;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

int
spk_send_reg(struct spk_send *s, struct spk_reg *r)
{
	struct spk_msg *m = calloc(1, sizeof(*m));
	struct spk_reg *mine = m ? malloc(sizeof(*mine)) : NULL;

	if (!mine) {
		struct spk_msg here = { NULL, r, NULL, NULL };

		free(m);
		msg_send(s, &here, s->timeout_ms);
		spk_reg_free(r);
		return -1;
	}
	*mine = *r;		/* the buffers move over */
	memset(r, 0, sizeof(*r));
	m->reg = mine;
	return enqueue(s, m);
}

int
spk_send_post(struct spk_send *s, const char *path, const char *body)
{
	struct spk_msg *m = calloc(1, sizeof(*m));

	if (!m || !(m->path = strdup(path)) || !(m->body = strdup(body))) {
		struct spk_msg here = { NULL, NULL, (char *)path, (char *)body };

		if (m) {
			free(m->path);
			free(m);
		}
		msg_send(s, &here, s->timeout_ms);
		return -1;
	}
	return enqueue(s, m);
}

bool
spk_send_down(struct spk_send *s)
{
	bool d;

	pthread_mutex_lock(&s->lock);
	d = s->down;
	pthread_mutex_unlock(&s->lock);
	return d;
}

void
spk_send_stop(struct spk_send *s)
{
	if (s->started) {
		pthread_mutex_lock(&s->lock);
		s->stopping = true;
		s->stop_at_ms = mono_ms();
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->th, NULL);
		s->started = false;
	}
	while (s->head) {
		struct spk_msg *m = s->head;

		s->head = m->next;
		s->dropped++;
		msg_free(m);
	}
	s->tail = NULL;
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
}
