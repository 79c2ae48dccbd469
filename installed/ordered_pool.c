// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * An ordered pool of worker threads: items are pushed into a ring, any idle worker takes
 * the oldest one not yet taken, and the caller's thread hands finished items back strictly
 * in push order, so that what it reports reads as if one thread had done everything.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "installed/ordered_pool.h"

struct slot {
	void *item;
	bool done;
};

struct ims_pool {
	ims_pool_work_fn *work;
	ims_pool_done_fn *done;
	void *arg;
	unsigned int nthreads, started, size;
	pthread_t *threads;
	pthread_mutex_t lock;
	pthread_cond_t more_work; /* workers wait for an item or the end */
	pthread_cond_t head_done; /* the caller waits for the oldest item */
	bool stop, caller_waits;
	/* Positions count up for ever: head <= next <= tail, tail - head <= size. */
	unsigned long head, next, tail;
	/*
	 * Done items not handed back yet, and how many the waiting caller wants before it is
	 * woken: half the ring when it is full, so that a worker wakes it once for a batch
	 * rather than once an item (a futex wake and a context switch each).
	 */
	unsigned int done_ahead, wanted;
	struct slot *slots;
};

struct worker_arg {
	struct ims_pool *p;
	unsigned int index;
};

static void *run(void *arg)
{
	struct worker_arg *wa = arg;
	struct ims_pool *p = wa->p;
	unsigned int index = wa->index;

	free(wa);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct slot *s;
		unsigned long pos;

		while (p->next == p->tail && !p->stop)
			pthread_cond_wait(&p->more_work, &p->lock);
		if (p->next == p->tail)
			break;
		pos = p->next++;
		s = &p->slots[pos % p->size];
		pthread_mutex_unlock(&p->lock);

		p->work(p->arg, index, s->item);

		pthread_mutex_lock(&p->lock);
		s->done = true;
		p->done_ahead++;
		if (p->caller_waits && p->slots[p->head % p->size].done &&
		    p->done_ahead >= p->wanted)
			pthread_cond_signal(&p->head_done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Hands back the finished items at the head; the lock is held on entry and on return. */
static void hand_back(struct ims_pool *p)
{
	while (p->head != p->tail && p->slots[p->head % p->size].done) {
		void *item = p->slots[p->head % p->size].item;

		/* Only the caller moves the head: the slot stays its own until head moves. */
		pthread_mutex_unlock(&p->lock);
		p->done(p->arg, item);
		pthread_mutex_lock(&p->lock);
		p->head++;
		p->done_ahead--;
	}
}

/*
 * Waits until the oldest item is done and @wanted items are (at most those in flight),
 * then hands back what is.
 */
static void wait_head(struct ims_pool *p, unsigned int wanted)
{
	unsigned long inflight = p->tail - p->head;

	p->wanted = wanted < inflight ? wanted : (unsigned int)inflight;
	while (!p->slots[p->head % p->size].done || p->done_ahead < p->wanted) {
		p->caller_waits = true;
		pthread_cond_wait(&p->head_done, &p->lock);
		p->caller_waits = false;
	}
	hand_back(p);
}

void ims_pool_push(struct ims_pool *p, void *item)
{
	if (!p->started) {
		p->work(p->arg, 0, item);
		p->done(p->arg, item);
		return;
	}
	pthread_mutex_lock(&p->lock);
	hand_back(p);
	while (p->tail - p->head >= p->size)
		wait_head(p, p->size / 2);
	p->slots[p->tail % p->size] = (struct slot){ .item = item };
	p->tail++;
	pthread_cond_signal(&p->more_work);
	pthread_mutex_unlock(&p->lock);
}

void ims_pool_finish(struct ims_pool *p)
{
	if (!p->started)
		return;
	pthread_mutex_lock(&p->lock);
	while (p->head != p->tail)
		wait_head(p, 1);
	pthread_mutex_unlock(&p->lock);
}

void ims_pool_free(struct ims_pool *p)
{
	if (!p)
		return;
	ims_pool_finish(p);
	if (p->started) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		pthread_cond_broadcast(&p->more_work);
		pthread_mutex_unlock(&p->lock);
		for (unsigned int i = 0; i < p->started; i++)
			pthread_join(p->threads[i], NULL);
	}
	pthread_cond_destroy(&p->head_done);
	pthread_cond_destroy(&p->more_work);
	pthread_mutex_destroy(&p->lock);
	free(p->threads);
	free(p->slots);
	free(p);
}

int ims_pool_new(unsigned int nthreads, unsigned int max_inflight, ims_pool_work_fn *work,
		 ims_pool_done_fn *done, void *arg, struct ims_pool **ret)
{
	struct ims_pool *p = calloc(1, sizeof(*p));
	int err = 0;

	if (!p)
		return -ENOMEM;
	*p = (struct ims_pool){ .work = work, .done = done, .arg = arg, .nthreads = nthreads,
				.size = max_inflight ? max_inflight : 1 };
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->more_work, NULL);
	pthread_cond_init(&p->head_done, NULL);
	if (nthreads) {
		p->threads = calloc(nthreads, sizeof(*p->threads));
		p->slots = calloc(p->size, sizeof(*p->slots));
		if (!p->threads || !p->slots)
			err = -ENOMEM;
	}
	for (unsigned int i = 0; !err && i < nthreads; i++) {
		struct worker_arg *wa = malloc(sizeof(*wa));

		if (!wa) {
			err = -ENOMEM;
			break;
		}
		*wa = (struct worker_arg){ .p = p, .index = i };
		err = -pthread_create(&p->threads[i], NULL, run, wa);
		if (err)
			free(wa);
		else
			p->started++;
	}
	if (err) {
		ims_pool_free(p);
		return err;
	}
	*ret = p;
	return 0;
}
