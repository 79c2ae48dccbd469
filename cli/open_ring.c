// SPDX-License-Identifier: LGPL-2.1-or-later
/* Opens a walk's run of files through io_uring: one system call for the run, the opens done inline by the kernel. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "cli/open_ring.h"
#include "cli/walk.h"

#if defined(__linux__) && __has_include(<linux/io_uring.h>)
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>

/*
 * A system call costs microseconds on some virtual machines, more than opening a cached
 * file; IORING_OP_OPENAT tries a cached lookup inline first (only a miss goes to an
 * io_uring worker thread), so a run of opens costs one io_uring_enter(2).  The ring is
 * used raw, without liburing: a handful of fields.
 */
static int setup(struct cli_open_ring *r)
{
	struct io_uring_params params = { 0 }, *p = &params;
	size_t sq_len, cq_len;
	char *m;
	int fd;

	r->tried = true;
	r->fd = -1;
	fd = (int)syscall(SYS_io_uring_setup, CLI_WALK_RUN, p);
	if (fd < 0)
		return -1;
	/* Native workers (5.12) mean IORING_OP_OPENAT (5.6) is there too. */
	if (!(p->features & IORING_FEAT_SINGLE_MMAP) || !(p->features & IORING_FEAT_NATIVE_WORKERS))
		goto fail;
	sq_len = p->sq_off.array + p->sq_entries * sizeof(unsigned int);
	cq_len = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
	r->map_len = sq_len > cq_len ? sq_len : cq_len;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		      IORING_OFF_SQ_RING);
	if (r->map == MAP_FAILED)
		goto fail;
	r->sqes_len = p->sq_entries * sizeof(struct io_uring_sqe);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		       IORING_OFF_SQES);
	if (r->sqes == MAP_FAILED) {
		munmap(r->map, r->map_len);
		goto fail;
	}
	m = r->map;
	r->sq_tail = (unsigned int *)(m + p->sq_off.tail);
	r->sq_mask = (unsigned int *)(m + p->sq_off.ring_mask);
	r->sq_array = (unsigned int *)(m + p->sq_off.array);
	r->cq_head = (unsigned int *)(m + p->cq_off.head);
	r->cq_tail = (unsigned int *)(m + p->cq_off.tail);
	r->cq_mask = (unsigned int *)(m + p->cq_off.ring_mask);
	r->cqes = m + p->cq_off.cqes;
	r->entries = p->sq_entries;
	r->fd = fd;
	return 0;
fail:
	r->map = r->sqes = NULL;
	close(fd);
	return -1;
}

void cli_open_ring_free(struct cli_open_ring *r)
{
	if (r->fd >= 0 && r->tried) {
		munmap(r->sqes, r->sqes_len);
		munmap(r->map, r->map_len);
		close(r->fd);
	}
	*r = (struct cli_open_ring){ .fd = -1, .tried = true };
}

/* Takes the completions there are into @res; return: how many. */
static size_t reap(struct cli_open_ring *r, int *res)
{
	const struct io_uring_cqe *cqes = r->cqes;
	unsigned int head = *r->cq_head;
	unsigned int tail = __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
	size_t got = 0;

	for (; head != tail; head++, got++) {
		const struct io_uring_cqe *c = &cqes[head & *r->cq_mask];

		res[c->user_data] = c->res;
	}
	__atomic_store_n(r->cq_head, head, __ATOMIC_RELEASE);
	return got;
}

/* Waits until @want completions in all are in @res, @done of them already. */
static size_t reap_until(struct cli_open_ring *r, int *res, size_t done, size_t want)
{
	while ((done += reap(r, res)) < want)
		if (syscall(SYS_io_uring_enter, r->fd, 0, (unsigned int)(want - done),
			    IORING_ENTER_GETEVENTS, NULL, 0) < 0 && errno != EINTR)
			break;
	return done;
}

int cli_open_ring_openat(struct cli_open_ring *r, const int *dirfd, const char *const *name,
			 int flags, size_t n, int *res)
{
	struct io_uring_sqe *sqes;
	unsigned int tail;
	long ret;

	if (!r->tried && setup(r))
		return -1;
	if (r->fd < 0 || n > r->entries)
		return -1;
	sqes = r->sqes;
	tail = *r->sq_tail;
	for (size_t i = 0; i < n; i++, tail++) {
		unsigned int at = tail & *r->sq_mask;
		struct io_uring_sqe *sqe = &sqes[at];

		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = IORING_OP_OPENAT;
		sqe->fd = dirfd[i];
		sqe->addr = (uint64_t)(uintptr_t)name[i];
		sqe->open_flags = (uint32_t)flags;
		sqe->user_data = i;
		r->sq_array[at] = at;
		res[i] = -ECANCELED; /* until its completion says */
	}
	__atomic_store_n(r->sq_tail, tail, __ATOMIC_RELEASE);
	do
		ret = syscall(SYS_io_uring_enter, r->fd, (unsigned int)n, (unsigned int)n,
			      IORING_ENTER_GETEVENTS, NULL, 0);
	while (ret < 0 && errno == EINTR);
	/* Every entry taken (else ret < n: never seen with well-formed entries). */
	if (ret == (long)n && reap_until(r, res, 0, n) == n)
		return 0;
	/*
	 * Wait for what was taken, so that no descriptor opens behind our back, close what
	 * did open, and give up on the ring: the caller opens the run itself.
	 */
	reap_until(r, res, 0, ret > 0 ? (size_t)ret : 0);
	for (size_t i = 0; i < n; i++)
		if (res[i] >= 0)
			close(res[i]);
	cli_open_ring_free(r);
	return -1;
}

#else /* no io_uring */

int cli_open_ring_openat(struct cli_open_ring *r, const int *dirfd, const char *const *name,
			 int flags, size_t n, int *res)
{
	(void)dirfd, (void)name, (void)flags, (void)n, (void)res;
	r->tried = true;
	r->fd = -1;
	return -1;
}

void cli_open_ring_free(struct cli_open_ring *r)
{
	*r = (struct cli_open_ring){ .fd = -1, .tried = true };
}

#endif
