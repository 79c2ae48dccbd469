// SPDX-License-Identifier: LGPL-2.1-or-later
/* The ordered pool: items come back in push order whatever the threads finish first. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "installed/ordered_pool.h"
#include "tests/unit/test.h"

#define N_ITEMS 2000

struct item {
	unsigned int index;
	unsigned int worker;
	bool worked;
};

struct state {
	unsigned int next_done;
	unsigned int nthreads;
	atomic_uint busy, most_busy;
};

/* Uneven work: every seventh item sleeps, so later items finish before it. */
static void work(void *arg, unsigned int worker, void *p)
{
	struct state *s = arg;
	struct item *it = p;
	unsigned int busy = atomic_fetch_add(&s->busy, 1) + 1, most = atomic_load(&s->most_busy);

	while (busy > most && !atomic_compare_exchange_weak(&s->most_busy, &most, busy))
		;
	if (it->index % 7 == 0)
		nanosleep(&(struct timespec){ .tv_nsec = 200000 }, NULL);
	it->worker = worker;
	it->worked = true;
	atomic_fetch_sub(&s->busy, 1);
}

static void done(void *arg, void *p)
{
	struct state *s = arg;
	struct item *it = p;

	ASSERT(it->worked);
	ASSERT_EQ(it->index, s->next_done);
	ASSERT(s->nthreads ? it->worker < s->nthreads : it->worker == 0);
	s->next_done++;
}

static void run(unsigned int nthreads, unsigned int max_inflight)
{
	struct item *items = calloc(N_ITEMS, sizeof(*items));
	struct state s = { .nthreads = nthreads };
	struct ims_pool *p;

	ASSERT(items);
	ASSERT_EQ(ims_pool_new(nthreads, max_inflight, work, done, &s, &p), 0);
	for (unsigned int i = 0; i < N_ITEMS; i++) {
		items[i].index = i;
		ims_pool_push(p, &items[i]);
		/* Never more in flight than the pool takes. */
		ASSERT(i + 1 - s.next_done <= max_inflight);
	}
	ims_pool_finish(p);
	ASSERT_EQ(s.next_done, N_ITEMS);
	ims_pool_free(p);
	ASSERT(atomic_load(&s.most_busy) <= (nthreads ? nthreads : 1));
	free(items);
}

int main(void)
{
	run(0, 1);
	run(1, 1);
	run(2, 3);
	run(4, 64);
	return 0;
}
