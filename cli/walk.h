/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file walk shared by hash, sign and verify: regular files to worker threads, results in walk order. */
#ifndef IMASTREAM_CLI_WALK_H
#define IMASTREAM_CLI_WALK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The main thread walks (readdir order, as evmctl -r does; symlinks are never followed)
 * and opens each regular file; worker threads process the open files; the results come
 * back through a ring of slots in walk order, so the output is the same as a serial run.
 * With one job, the main thread processes each file itself.
 */
#define CLI_WALK_RING 64
#define CLI_WALK_MAX_JOBS 64

/* One file in flight. */
struct cli_item {
	int fd;      /* open O_RDONLY, a regular file; the walker closes it after process() */
	char *path;  /* as given on the command line plus the walked names */
	bool ok;     /* set by process(); a false one counts as a failure */
	void *data;  /* item_size bytes the command uses freely (its result) */
};

struct cli_walk_ops {
	/* A worker (numbered 0..jobs-1; 0 for the main thread when serial) does the work. */
	void (*process)(void *ctx, unsigned int worker, struct cli_item *it);
	/* The main thread, in walk order, once process() is done; may print. */
	void (*report)(void *ctx, struct cli_item *it);
};

enum cli_slot_state { CLI_SLOT_FREE, CLI_SLOT_QUEUED, CLI_SLOT_BUSY, CLI_SLOT_DONE };

struct cli_slot {
	enum cli_slot_state state;
	struct cli_item item;
};

struct cli_walk {
	/* Set by the command before cli_walk_start(). */
	const struct cli_walk_ops *ops;
	void *ctx;
	const char *verb;   /* "hashed", "signed": in "not a regular file (FIFO), not hashed" */
	bool recursive;
	bool verbose;       /* name the symlinks a walk skips */
	size_t item_size;
	unsigned int jobs;  /* 1..CLI_WALK_MAX_JOBS */

	/* Failures so far: the walk's own and every item that came back !ok. */
	unsigned long failed;

	/* Internal. */
	char *path;
	size_t path_size;
	unsigned int n_threads;
	struct cli_walk_thread {
		struct cli_walk *walk;
		unsigned int id;
		pthread_t thread;
	} threads[CLI_WALK_MAX_JOBS];
	pthread_mutex_t lock;
	pthread_cond_t work;
	pthread_cond_t done;
	bool shutdown;
	uint64_t next_seq;
	uint64_t claim_seq;
	uint64_t print_seq;
	struct cli_slot ring[CLI_WALK_RING];
	void *data_store;
};

/* The default job count: one per online CPU. */
unsigned int cli_walk_default_jobs(void);
/* Parses a -j argument; prints the error and returns false when it is not 1..MAX. */
bool cli_walk_parse_jobs(const char *cmd, const char *arg, unsigned int *jobs_ret);

/* Allocates the slots and starts jobs threads (none when jobs is 1). Return: 0, -ENOMEM. */
int cli_walk_start(struct cli_walk *w);
/* One command-line PATH: a file, or with recursive a directory tree. */
void cli_walk_path(struct cli_walk *w, const char *arg);
/* Waits for the queued files, reports them, stops the threads, frees what start made. */
void cli_walk_finish(struct cli_walk *w);

#endif /* IMASTREAM_CLI_WALK_H */
