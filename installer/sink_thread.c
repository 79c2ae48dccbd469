// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The chain sink's worker thread.  When no file needs the chain to see its chunks, the
 * chain's work on a closed file runs here, in entry order, while the caller's thread
 * writes the next files: the signing of small files overlaps their extraction.  Only one
 * thread at a time runs items or chain calls: the caller drains the queue before any
 * chain call of its own.
 */
#include <errno.h>

#include "installer/sink_thread.h"

/*
 * The thread is woken in batches: in hash mode its work per file (an xattr or two) is
 * shorter than a futex wake-up.  The queue is bounded, since every queued file holds two
 * descriptors.
 */
#define WAKE_BATCH 8
#define QUEUE_MAX 128

static void *run(void *arg)
{
	struct ims_worker *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct ims_work_item *item;
		int failed, err;

		while (!w->queue && !w->stop) {
			w->worker_waits = true;
			pthread_cond_wait(&w->cond, &w->lock);
			w->worker_waits = false;
		}
		if (!w->queue)
			break;
		item = w->queue;
		w->queue = item->next;
		if (!w->queue)
			w->queue_tail = &w->queue;
		item->next = NULL;
		w->queued--;
		w->busy = 1;
		failed = w->err;
		pthread_mutex_unlock(&w->lock);

		err = w->fn(w->arg, item, failed);

		pthread_mutex_lock(&w->lock);
		if (err && !w->err)
			w->err = err;
		w->busy = 0;
		if (w->caller_waits && (!w->queue || w->queued <= QUEUE_MAX / 2))
			pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int ims_worker_start(struct ims_worker *w, ims_work_fn *fn, void *arg)
{
	*w = (struct ims_worker){ .fn = fn, .arg = arg };
	w->queue_tail = &w->queue;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->started = pthread_create(&w->thread, NULL, run, w) == 0;
	return w->started ? 0 : -EAGAIN;
}

void ims_worker_drain(struct ims_worker *w)
{
	if (!w->started)
		return;
	pthread_mutex_lock(&w->lock);
	while (w->queue || w->busy) {
		if (w->worker_waits)
			pthread_cond_broadcast(&w->cond); /* a batch it was not woken for */
		w->caller_waits = true;
		pthread_cond_wait(&w->cond, &w->lock);
		w->caller_waits = false;
	}
	pthread_mutex_unlock(&w->lock);
}

int ims_worker_push(struct ims_worker *w, struct ims_work_item *item)
{
	int err;

	pthread_mutex_lock(&w->lock);
	while (w->queued >= QUEUE_MAX && !w->err) {
		if (w->worker_waits)
			pthread_cond_broadcast(&w->cond);
		w->caller_waits = true;
		pthread_cond_wait(&w->cond, &w->lock);
		w->caller_waits = false;
	}
	err = w->err;
	if (!err) {
		item->next = NULL;
		*w->queue_tail = item;
		w->queue_tail = &item->next;
		w->queued++;
		if (w->worker_waits && w->queued >= WAKE_BATCH)
			pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

int ims_worker_error(const struct ims_worker *w)
{
	return w->err;
}

void ims_worker_reset(struct ims_worker *w)
{
	w->err = 0;
}

void ims_worker_stop(struct ims_worker *w)
{
	if (!w->fn)
		return; /* never started */
	if (w->started) {
		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		w->started = false;
	}
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	w->fn = NULL;
}
