/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file walk shared by hash, sign and verify: regular files to worker threads, results in walk order. */
#ifndef IMASTREAM_CLI_WALK_H
#define IMASTREAM_CLI_WALK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/cli.h"
#include "cli/open_ring.h"
#include "cli/options.h"

/*
 * The main thread walks (readdir order, as evmctl -r does; symlinks are never followed)
 * and queues each regular file by name, relative to its open directory; worker threads
 * open, check and process the files; the results come back through a ring of slots in
 * walk order, so the output is the same as a serial run.  The main thread thus makes no
 * system call per file, only per directory, and the per-file work spreads over the jobs.
 * With one job, the main thread does it all itself.  The ring holds 16 runs: once it is
 * full the main thread sleeps until half of it is done, so that it wakes once per eight
 * runs rather than once per run (each wake is a futex call on both sides).
 */
#define CLI_WALK_RING 256
#define CLI_WALK_MAX_JOBS CLI_MAX_JOBS
/*
 * A command with process_run() gets runs of up to this many consecutive small files at a
 * time (one wide-lane batch: the AVX-512 backend's 16 lanes), so that their digests are
 * hashed together and the threads meet once per run instead of once per file.  The
 * environment variable sets a smaller run; 1 hands over one file at a time, as before.
 */
#define CLI_WALK_RUN 16
#define CLI_WALK_RUN_ENV "IMASTREAM_FILE_BATCH"

/* One file in flight. */
struct cli_item {
	int fd;      /* open O_RDONLY, a regular file; the walk closes it after process() */
	char *path;  /* as given on the command line plus the walked names */
	uint64_t size; /* its size when it was opened, for the tally */
	bool ok;     /* set by process(); a false one counts as a failure */
	void *data;  /* item_size bytes the command uses freely (its result) */
};

struct cli_walk_ops {
	/*
	 * A worker (numbered 0..jobs-1; 0 for the main thread when serial) does the work.
	 * NULL when process_run is set: that then gets each file as a run of one.
	 */
	void (*process)(void *ctx, unsigned int worker, struct cli_item *it);
	/* The main thread, in walk order, once process() is done; may print. */
	void (*report)(void *ctx, struct cli_item *it);
	/*
	 * Optional: does process()'s work on @n files at once: either one file of any size,
	 * or up to run files of at most small_max bytes each (not always consecutive ones).
	 */
	void (*process_run)(void *ctx, unsigned int worker, struct cli_item **items, size_t n);
};

enum cli_slot_state { CLI_SLOT_FREE, CLI_SLOT_QUEUED, CLI_SLOT_BUSY, CLI_SLOT_DONE };

struct cli_walk_dir;

struct cli_slot {
	enum cli_slot_state state;
	/* Queued by the main thread: the file's name, relative to dir (NULL: to the cwd). */
	struct cli_walk_dir *dir;
	const char *name;     /* the tail of item.path */
	bool explicit;        /* named on the command line: anything but a file is an error */
	/* Set by the worker that opens it. */
	int err;              /* errno of the failed call, or 0 */
	const char *call;     /* that call: "open", "stat" */
	mode_t mode;          /* what fstat found; S_IFLNK for a symlink O_NOFOLLOW refused */
	struct cli_item item; /* fd -1 unless opened as a regular file */
};

struct cli_walk {
	/* Set by cli_walk_init(); the options of cli_walk_options by cli_walk_option(). */
	const struct cli_walk_ops *ops;
	void *ctx;
	bool recursive;     /* -r */
	/* -v (one names the symlinks a walk skips), --progress, --quiet; --format json:
	 * report() writes a record per file (cli_json). */
	struct cli_say say;
	struct cli_json out; /* the record being built, for report() */
	size_t item_size;
	unsigned int jobs;  /* -j, 1..CLI_WALK_MAX_JOBS; the command may lower it before start */
	/*
	 * Files of at most small_max bytes go to process_run() together, up to run of them
	 * (1..CLI_WALK_RUN, from the environment); a larger file goes alone.
	 */
	uint64_t small_max;
	unsigned int run;

	/* Failures so far: the walk's own and every item that came back !ok. */
	unsigned long failed;
	/* Files and bytes reported so far; the command sets cmd, draw and summary. */
	struct cli_tally tally;

	/* Internal. */
	char *path;
	size_t path_size;
	unsigned int n_threads;
	struct cli_walk_thread {
		struct cli_walk *walk;
		unsigned int id;
		/* Claim one file, not a run: its last run had a large file (or none yet). */
		bool claim_one;
		struct cli_open_ring open_ring; /* its runs' opens */
		pthread_t thread;
	} threads[CLI_WALK_MAX_JOBS];
	struct cli_open_ring open_ring; /* the main thread's, when it works alone */
	/*
	 * The ordered ring: the main thread (the walker) queues files at next_seq, workers
	 * claim runs of them from claim_seq, and the walker reports them from print_seq, in
	 * walk order.  Sequence numbers count up for ever; slot seq is ring[seq %
	 * CLI_WALK_RING], so print_seq <= claim_seq <= next_seq <= print_seq + CLI_WALK_RING.
	 *
	 * installed/ordered_pool.c does the same "any worker, hand back in order" job for
	 * relabel and the audit, one item a claim; the walk keeps its own ring because it
	 * claims runs: up to run small files a claim, opened with one io_uring_enter(2) and
	 * closed with one close_range(2) (a system call is most of a small file's cost), a
	 * short run only when the walker waits (flush), one file a claim after a large one;
	 * its slots hold the items themselves (no allocation a file), and the directories
	 * the workers open files in are let go on the main thread at report time.
	 */
	pthread_mutex_t lock; /* guards the sequence numbers, slot states, flush, shutdown */
	pthread_cond_t work;  /* workers wait here for a run to claim, or for shutdown */
	pthread_cond_t done;  /* the walker waits here for the slots before wake_seq */
	bool shutdown;
	bool flush;         /* the walker waits or is done: workers take short runs too */
	/*
	 * The walker waits until every slot before this one is done; 0: it does not wait.
	 * A worker that finishes a run signals done only then: one wake for half a ring
	 * when it is full, not one a run.
	 */
	uint64_t wake_seq;
	uint64_t next_seq;  /* the slot the walker queues the next file in */
	uint64_t claim_seq; /* the first queued file no worker has claimed yet */
	uint64_t print_seq; /* the first file not reported yet; its slot is the next freed */
	struct cli_slot ring[CLI_WALK_RING];
	void *data_store;
	bool started;
};

/* The options of every walking command: -r, -j, --progress, --quiet, -v, --format, -h. */
extern const struct cli_use cli_walk_options[];

/* Sets up @w for command @cmd ("hash"): one job per online CPU, no -r, ... */
void cli_walk_init(struct cli_walk *w, const char *cmd, const struct cli_walk_ops *ops, void *ctx,
		   size_t item_size);
/*
 * Applies @opt if it is one of cli_walk_options (but -h).  Return: 1 if it was, 0 if it
 * is not one of them, -1 after a usage error about its argument.
 */
int cli_walk_option(struct cli_walk *w, const struct cli_parser *p, int opt);

/*
 * Allocates the slots and starts jobs threads (none when jobs is 1).  The tally shows a
 * progress line with -r on a terminal, or with --progress, and a summary line with -r
 * unless --quiet.  Return: 0, -ENOMEM.
 */
int cli_walk_start(struct cli_walk *w);
/* One command-line PATH: a file, or with recursive a directory tree. */
void cli_walk_path(struct cli_walk *w, const char *arg);
/*
 * Waits for the queued files, reports them, stops the threads, frees what start made,
 * and prints the summary line of a walk that started.
 */
void cli_walk_finish(struct cli_walk *w);
/* Walks the @n command-line @paths (cli_walk_path()), then cli_walk_finish(). */
void cli_walk_paths(struct cli_walk *w, char *const *paths, int n);

/* --format json, in report(): begins the "file" record of @path in w->out, with its result. */
void cli_walk_json_file(struct cli_walk *w, const char *path, bool ok);

#endif /* IMASTREAM_CLI_WALK_H */
