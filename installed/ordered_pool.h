/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Worker threads that take queued items in any order and hand them back in queue order. */
#ifndef IMASTREAM_INSTALLED_ORDERED_POOL_H
#define IMASTREAM_INSTALLED_ORDERED_POOL_H

/* Runs on worker thread @worker (0 .. nthreads - 1); with no threads, on the caller's. */
typedef void ims_pool_work_fn(void *arg, unsigned int worker, void *item);
/* Runs on the caller's thread, once per item, in the order the items were pushed. */
typedef void ims_pool_done_fn(void *arg, void *item);

struct ims_pool;

/*
 * @nthreads workers (0: every item is worked on and done inside ims_pool_push) and at
 * most @max_inflight items pushed but not yet done.
 * Return: 0, -ENOMEM, or -errno of pthread_create.
 */
int ims_pool_new(unsigned int nthreads, unsigned int max_inflight, ims_pool_work_fn *work,
		 ims_pool_done_fn *done, void *arg, struct ims_pool **ret);
/* Queues @item after handing back what is ready, waiting while the pool is full. */
void ims_pool_push(struct ims_pool *p, void *item);
/* Waits for every pushed item and hands each back. */
void ims_pool_finish(struct ims_pool *p);
/* Finishes, then ends the threads. */
void ims_pool_free(struct ims_pool *p);

#endif /* IMASTREAM_INSTALLED_ORDERED_POOL_H */
