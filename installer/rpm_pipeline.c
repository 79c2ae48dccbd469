// SPDX-License-Identifier: LGPL-2.1-or-later
/* The rpm payload pipeline: a reader thread decompresses and walks the archive ahead of the thread that writes. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "installer/rpm_read.h"

/* The reader waits (lock held); a consumer asleep on a short queue is woken first. */
static void reader_sleep(struct pipeline *pl)
{
	if (pl->consumer_waits && pl->count)
		pthread_cond_broadcast(&pl->cond);
	pl->reader_waits = true;
	pthread_cond_wait(&pl->cond, &pl->lock);
	pl->reader_waits = false;
}

/* Queues an event; false when the consumer has stopped. */
static bool push(struct pipeline *pl, struct event ev)
{
	bool ok;

	if (!pl->threaded) {
		pl->pending[pl->npending++] = ev;
		return true;
	}
	pthread_mutex_lock(&pl->lock);
	while (pl->count == QLEN && !pl->stop) {
		reader_sleep(pl);
	}
	ok = !pl->stop;
	if (ok) {
		pl->q[(pl->head + pl->count) % QLEN] = ev;
		pl->count++;
		/* The last event, or a batch: a consumer asleep now has work worth a wake-up. */
		if (pl->consumer_waits &&
		    (pl->count >= WAKE_BATCH || ev.type == EV_DONE || ev.type == EV_ERROR))
			pthread_cond_broadcast(&pl->cond);
	}
	pthread_mutex_unlock(&pl->lock);
	return ok;
}

/* A free buffer for the reader, or -1 when the consumer has stopped. */
static int get_buf(struct pipeline *pl)
{
	int b = -1;

	if (!pl->threaded)
		return 0;
	pthread_mutex_lock(&pl->lock);
	for (;;) {
		for (int i = 0; i < NBUFS && b < 0; i++)
			if (!pl->buf_busy[i])
				b = i;
		if (b >= 0 || pl->stop)
			break;
		reader_sleep(pl);
	}
	if (b >= 0 && !pl->stop) {
		pl->buf_busy[b] = true;
		pl->nfree--;
	} else {
		b = -1;
	}
	pthread_mutex_unlock(&pl->lock);
	return b;
}

void ims_rpm_pipeline_put_buf(struct pipeline *pl, int b)
{
	if (!pl->threaded)
		return;
	pthread_mutex_lock(&pl->lock);
	pl->buf_busy[b] = false;
	pl->nfree++;
	if (pl->reader_waits && pl->nfree >= NBUFS / 2)
		pthread_cond_broadcast(&pl->cond);
	pthread_mutex_unlock(&pl->lock);
}

/*
 * One step of the reader: the next archive entry, or the next chunk of the current
 * one.  Returns false after the last event (done, error, or the consumer stopped).
 */
static bool read_step(struct pipeline *pl)
{
	struct pkgread *r = pl->r;
	size_t want;
	ssize_t n;
	int fx, b;

	if (!pl->left) {
		do
			fx = rpmfiNext(pl->fi);
		while (fx == RPMERR_ITER_SKIP);
		if (fx == RPMERR_ITER_END || fx == RPMERR_MISSING_FILE) {
			/* (missing entries are named by the consumer, which knows the ghosts) */
			push(pl, (struct event){ .type = EV_DONE });
			return false;
		}
		if (fx < 0 || fx >= r->fc) {
			push(pl, (struct event){ .type = EV_ERROR,
						 .fx = -1,
						 .rc = fx < 0 ? fx : RPMERR_UNMAPPED_FILE });
			return false;
		}
		pl->fx = fx;
		pl->left = rpmfiArchiveHasContent(pl->fi) ? rpmfilesFSize(r->files, fx) : 0;
		if (!push(pl, (struct event){ .type = EV_ENTRY, .fx = fx }))
			return false;
		return pl->left ? true : push(pl, (struct event){ .type = EV_END });
	}
	want = pl->left > CHUNK_SIZE ? CHUNK_SIZE : (size_t)pl->left;
	b = get_buf(pl);
	if (b < 0)
		return false;
	n = rpmfiArchiveRead(pl->fi, pl->bufs[b], want);
	if (n <= 0 || Ferror(pl->pfd)) {
		ims_rpm_pipeline_put_buf(pl, b);
		push(pl,
		     (struct event){ .type = EV_ERROR, .fx = pl->fx, .rc = RPMERR_READ_FAILED });
		return false;
	}
	pl->left -= (rpm_loff_t)n;
	if (!push(pl, (struct event){ .type = EV_DATA, .buf = b, .len = (size_t)n }))
		return false;
	return pl->left ? true : push(pl, (struct event){ .type = EV_END });
}

void *ims_rpm_reader_thread(void *arg)
{
	struct pipeline *pl = arg;

	while (read_step(pl))
		;
	return NULL;
}

struct event ims_rpm_pipeline_pop(struct pipeline *pl)
{
	struct event ev;

	if (!pl->threaded) {
		if (pl->next == pl->npending) {
			pl->npending = pl->next = 0;
			read_step(pl);
		}
		return pl->pending[pl->next++];
	}
	pthread_mutex_lock(&pl->lock);
	while (!pl->count) {
		/* An empty queue: every buffer is free, so a reader asleep can go on. */
		if (pl->reader_waits)
			pthread_cond_broadcast(&pl->cond);
		pl->consumer_waits = true;
		pthread_cond_wait(&pl->cond, &pl->lock);
		pl->consumer_waits = false;
	}
	ev = pl->q[pl->head];
	pl->head = (pl->head + 1) % QLEN;
	pl->count--;
	if (pl->reader_waits && pl->count <= QLEN / 2 && pl->nfree >= NBUFS / 2)
		pthread_cond_broadcast(&pl->cond);
	pthread_mutex_unlock(&pl->lock);
	return ev;
}
