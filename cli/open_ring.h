/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A run of files opened with one io_uring_enter(2) instead of an openat(2) each, where the kernel allows it. */
#ifndef IMASTREAM_CLI_OPEN_RING_H
#define IMASTREAM_CLI_OPEN_RING_H

#include <stdbool.h>
#include <stddef.h>

/* One thread's ring; all zero is "not set up yet". */
struct cli_open_ring {
	int fd;          /* the io_uring, or -1 once it cannot be had */
	bool tried;
	void *map;       /* the submission and completion rings, one mapping */
	size_t map_len;
	void *sqes;
	size_t sqes_len;
	unsigned int entries;
	/* Where the rings' indexes are in map. */
	unsigned int *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	void *cqes;
};

/*
 * Opens the @n names @name[i] relative to @dirfd[i] with @flags into @res[i]: a
 * descriptor, or -errno as openat(2) would fail.  Return: 0, or -1 when io_uring cannot
 * be used (an old kernel, a seccomp filter, kernel.io_uring_disabled): then nothing was
 * opened, and the caller calls openat(2) itself.
 */
int cli_open_ring_openat(struct cli_open_ring *r, const int *dirfd, const char *const *name,
			 int flags, size_t n, int *res);
void cli_open_ring_free(struct cli_open_ring *r);

#endif /* IMASTREAM_CLI_OPEN_RING_H */
