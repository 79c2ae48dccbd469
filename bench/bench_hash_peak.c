// SPDX-License-Identifier: LGPL-2.1-or-later
/* The hash engine's own peak: THREADS threads hashing in-memory messages in batches as hash -r does, no file touched; prints their wall and CPU seconds. */
/*
 * Usage: bench_hash_peak THREADS MESSAGES SIZE [hot]
 * Every message has its own bytes in RAM, as a tree's files have in the page cache, so
 * that the bytes come from memory as they do for hash -r; with "hot", each thread hashes
 * one batch's buffers over and over, from its caches: the arithmetic alone.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hashers/backend.h"
#include "imastream/hash.h"

/* As many messages a batch as a walk's run of small files (cli/walk.h, CLI_WALK_RUN). */
#define BATCH 16

struct job {
	size_t size;	     /* bytes a message */
	unsigned long count; /* messages this thread hashes */
	uint8_t *buf;	     /* its messages, one after another (hot: BATCH of them, reused) */
	bool hot;
	const char *backend; /* set by the thread: the backend of its full batches */
	double cpu;	     /* set by the thread: the CPU seconds of its batches */
	int err;
	pthread_t thread;
};

static double seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *run(void *arg)
{
	struct job *j = arg;
	struct imastream_hasher *h;
	struct imastream_hash_msg msgs[BATCH];
	uint8_t digest[BATCH][IMASTREAM_HASH_MAX_DIGEST];
	double start = seconds(CLOCK_THREAD_CPUTIME_ID);

	j->err = imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256), NULL, &h);
	if (j->err)
		return NULL;
	for (unsigned long done = 0; done < j->count && !j->err;) {
		size_t n = j->count - done < BATCH ? j->count - done : BATCH;

		const uint8_t *at = j->hot ? j->buf : j->buf + done * j->size;

		for (size_t i = 0; i < n; i++)
			msgs[i] = (struct imastream_hash_msg){ at + i * j->size, j->size,
							       digest[i] };
		j->err = imastream_hash_batch(h, IMASTREAM_HASH_SHA256, msgs, n, sizeof(msgs[0]));
		done += n;
	}
	j->backend = imastream_hash_batch_backend(h, IMASTREAM_HASH_SHA256);
	imastream_hasher_free(h);
	j->cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - start;
	return NULL;
}

static unsigned long number(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || !v) {
		fprintf(stderr, "bench_hash_peak: %s '%s' is not a positive number\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct job jobs[64];
	unsigned long threads, count, size;
	double start, wall, cpu = 0;
	bool hot;

	if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "hot"))) {
		fprintf(stderr, "usage: bench_hash_peak THREADS MESSAGES SIZE [hot]\n");
		return 2;
	}
	hot = argc == 5;
	threads = number(argv[1], "THREADS");
	count = number(argv[2], "MESSAGES");
	size = number(argv[3], "SIZE");
	if (threads > sizeof(jobs) / sizeof(jobs[0])) {
		fprintf(stderr, "bench_hash_peak: at most %zu threads\n",
			sizeof(jobs) / sizeof(jobs[0]));
		return 2;
	}
	/* Each thread its own buffers, written once so that no page fault is timed. */
	for (unsigned long t = 0; t < threads; t++) {
		size_t bytes;

		jobs[t] = (struct job){ .size = size,
					.count = count / threads + (t < count % threads),
					.hot = hot };
		bytes = (hot || jobs[t].count < BATCH ? BATCH : jobs[t].count) * size;
		jobs[t].buf = malloc(bytes);
		if (!jobs[t].buf) {
			fprintf(stderr, "bench_hash_peak: out of memory\n");
			return 1;
		}
		memset(jobs[t].buf, (int)(t + 1), bytes);
	}
	start = seconds(CLOCK_MONOTONIC);
	for (unsigned long t = 0; t < threads; t++)
		if (pthread_create(&jobs[t].thread, NULL, run, &jobs[t])) {
			fprintf(stderr, "bench_hash_peak: cannot start thread %lu\n", t + 1);
			return 1;
		}
	for (unsigned long t = 0; t < threads; t++)
		pthread_join(jobs[t].thread, NULL);
	wall = seconds(CLOCK_MONOTONIC) - start;
	for (unsigned long t = 0; t < threads; t++) {
		if (jobs[t].err) {
			fprintf(stderr, "bench_hash_peak: hashing failed (%d)\n", jobs[t].err);
			return 1;
		}
		cpu += jobs[t].cpu;
		free(jobs[t].buf);
	}
	/* "WALL CPU BACKEND": the seconds of every thread's batches, wall and CPU. */
	printf("%.6f %.6f %s\n", wall, cpu, jobs[0].backend ? jobs[0].backend : "?");
	return 0;
}
