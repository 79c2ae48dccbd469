/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The chain sink's worker thread: a bounded queue of closed files it hands to the chain. */
#ifndef IMASTREAM_INSTALLER_SINK_THREAD_H
#define IMASTREAM_INSTALLER_SINK_THREAD_H

#include <pthread.h>
#include <stdbool.h>

/* What the queue links: embedded in the caller's item. */
struct ims_work_item {
	struct ims_work_item *next;
};

/*
 * Runs one item on the worker thread.  @failed is the first error of an earlier item
 * since the last ims_worker_reset(): the item is then only to be released.  Returns 0
 * or a negative errno, which fails every later item.
 */
typedef int ims_work_fn(void *arg, struct ims_work_item *item, int failed);

struct ims_worker {
	ims_work_fn *fn;
	void *arg;
	pthread_t thread;
	bool started, stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct ims_work_item *queue, **queue_tail;
	unsigned int queued, busy;
	bool worker_waits, caller_waits; /* wake-ups only for a thread that sleeps */
	int err;
};

/* Return: 0 or a negative errno of pthread_create (then nothing runs: call ims_worker_stop). */
int ims_worker_start(struct ims_worker *w, ims_work_fn *fn, void *arg);
/* Queues @item, waiting while the queue is full.  Return: 0, or the first error of an
 * earlier item (@item is then not queued: the caller still owns it). */
int ims_worker_push(struct ims_worker *w, struct ims_work_item *item);
/* Waits until every queued item is done; then only the caller runs. */
void ims_worker_drain(struct ims_worker *w);
/* The first error since the last reset (call after ims_worker_drain). */
int ims_worker_error(const struct ims_worker *w);
void ims_worker_reset(struct ims_worker *w);
/* Runs what is queued, then ends the thread; a worker never started is only released. */
void ims_worker_stop(struct ims_worker *w);

#endif /* IMASTREAM_INSTALLER_SINK_THREAD_H */
