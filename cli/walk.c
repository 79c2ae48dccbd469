// SPDX-License-Identifier: LGPL-2.1-or-later
/* The parallel, order-keeping file walk behind imastream hash, sign and verify. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/walk.h"

const struct cli_use cli_walk_options[] = {
	{ CLI_OPT_RECURSIVE },
	{ CLI_OPT_JOBS },
	{ CLI_OPT_PROGRESS },
	{ CLI_OPT_QUIET },
	{ CLI_OPT_VERBOSE, "also name the symlinks a walk skips" },
	{ CLI_OPT_HELP },
	{ 0 },
};

/* IMASTREAM_FILE_BATCH: files per run, 1 (one at a time) to CLI_WALK_RUN, the default. */
static unsigned int walk_run_from_env(void)
{
	const char *env = getenv(CLI_WALK_RUN_ENV);
	unsigned long n;
	char *end;

	if (!env || !*env)
		return CLI_WALK_RUN;
	errno = 0;
	n = strtoul(env, &end, 10);
	if (errno || *end || end == env || n < 1) {
		cli_error("%s=%s: not a number from 1 to %u; using %u", CLI_WALK_RUN_ENV, env,
			  CLI_WALK_RUN, CLI_WALK_RUN);
		return CLI_WALK_RUN;
	}
	return n > CLI_WALK_RUN ? CLI_WALK_RUN : (unsigned int)n;
}

void cli_walk_init(struct cli_walk *w, const char *cmd, const struct cli_walk_ops *ops, void *ctx,
		   const char *verb, size_t item_size)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	*w = (struct cli_walk){ .ops = ops, .ctx = ctx, .verb = verb, .item_size = item_size,
				.show = -1 };
	w->jobs = cpus < 1 ? 1 : cpus > CLI_WALK_MAX_JOBS ? CLI_WALK_MAX_JOBS : (unsigned int)cpus;
	w->tally.cmd = cmd;
	w->run = walk_run_from_env();
}

int cli_walk_option(struct cli_walk *w, const struct cli_parser *p, int opt)
{
	switch (opt) {
	case CLI_OPT_RECURSIVE:
		w->recursive = true;
		return 1;
	case CLI_OPT_JOBS:
		return cli_parse_jobs(p, &w->jobs) ? 1 : -1;
	case CLI_OPT_PROGRESS:
		w->show = 1;
		return 1;
	case CLI_OPT_QUIET:
		w->show = 0;
		return 1;
	case CLI_OPT_VERBOSE:
		w->verbosity++;
		return 1;
	default:
		return 0;
	}
}

/* Replaces the path tail after @base with "/@name" (or @name when @base is 0). */
static int path_set(struct cli_walk *w, size_t base, const char *name)
{
	size_t name_len = strlen(name), need = base + 1 + name_len + 1;

	if (need > w->path_size) {
		size_t size = need * 2;
		char *p = realloc(w->path, size);

		if (!p)
			return -ENOMEM;
		w->path = p;
		w->path_size = size;
	}
	if (base && w->path[base - 1] != '/')
		w->path[base++] = '/';
	memcpy(w->path + base, name, name_len + 1);
	return 0;
}

static struct cli_item *ring_item(struct cli_walk *w, uint64_t seq)
{
	return &w->ring[seq % CLI_WALK_RING].item;
}

/*
 * The run that starts at @seq among the files queued before @end: a file larger than
 * small_max goes alone, and so does every file when the command has no process_run().
 */
static size_t run_length(struct cli_walk *w, uint64_t seq, uint64_t end)
{
	size_t n = 1;

	if (!w->ops->process_run || ring_item(w, seq)->size > w->small_max)
		return 1;
	while (n < w->run && seq + n < end && ring_item(w, seq + n)->size <= w->small_max)
		n++;
	return n;
}

/* Whether the files queued from claim_seq make a run that cannot grow any more. */
static bool run_ready(struct cli_walk *w)
{
	size_t n;

	if (w->claim_seq == w->next_seq)
		return false;
	n = run_length(w, w->claim_seq, w->next_seq);
	return n == w->run || w->claim_seq + n < w->next_seq;
}

/* Any thread: does the command's work on the @n files from @seq, then closes them. */
static void process_run(struct cli_walk *w, unsigned int worker, uint64_t seq, size_t n)
{
	struct cli_item *items[CLI_WALK_RUN];

	for (size_t i = 0; i < n; i++) {
		items[i] = ring_item(w, seq + i);
		items[i]->ok = false;
	}
	if (w->ops->process_run)
		w->ops->process_run(w->ctx, worker, items, n);
	else
		w->ops->process(w->ctx, worker, items[0]);
	for (size_t i = 0; i < n; i++) {
		close(items[i]->fd);
		items[i]->fd = -1;
	}
}

/* Main thread: reports a finished item and frees its path. */
static void report_item(struct cli_walk *w, struct cli_item *it)
{
	w->ops->report(w->ctx, it);
	if (!it->ok)
		w->failed++;
	cli_tally_file(&w->tally, it->size, w->failed);
	free(it->path);
	it->path = NULL;
}

static void *thread_main(void *arg)
{
	struct cli_walk_thread *t = arg;
	struct cli_walk *w = t->walk;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		uint64_t seq;
		size_t n;

		/* A short run only when the walker waits for room or is done. */
		while (!w->shutdown && !run_ready(w) &&
		       (w->claim_seq == w->next_seq || !w->flush))
			pthread_cond_wait(&w->work, &w->lock);
		if (w->claim_seq == w->next_seq)
			break; /* shutdown, and nothing left */
		seq = w->claim_seq;
		n = run_length(w, seq, w->next_seq);
		w->claim_seq += n;
		for (size_t i = 0; i < n; i++)
			w->ring[(seq + i) % CLI_WALK_RING].state = CLI_SLOT_BUSY;
		/* More queued than this run: another worker can start on it now. */
		if (run_ready(w) || (w->flush && w->claim_seq != w->next_seq))
			pthread_cond_signal(&w->work);
		pthread_mutex_unlock(&w->lock);
		process_run(w, t->id, seq, n);
		pthread_mutex_lock(&w->lock);
		for (size_t i = 0; i < n; i++)
			w->ring[(seq + i) % CLI_WALK_RING].state = CLI_SLOT_DONE;
		pthread_cond_signal(&w->done);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Main thread, lock held: reports every finished slot at the head of the ring. */
static void drain_done(struct cli_walk *w)
{
	while (w->print_seq < w->next_seq &&
	       w->ring[w->print_seq % CLI_WALK_RING].state == CLI_SLOT_DONE) {
		struct cli_slot *sl = &w->ring[w->print_seq++ % CLI_WALK_RING];

		report_item(w, &sl->item);
		sl->state = CLI_SLOT_FREE;
	}
}

/* Main thread, no workers: processes the runs queued (@all: the short one too), reports them. */
static void run_serial(struct cli_walk *w, bool all)
{
	while (run_ready(w) || (all && w->claim_seq != w->next_seq)) {
		uint64_t seq = w->claim_seq;
		size_t n = run_length(w, seq, w->next_seq);

		w->claim_seq += n;
		process_run(w, 0, seq, n);
		for (size_t i = 0; i < n; i++)
			w->ring[(seq + i) % CLI_WALK_RING].state = CLI_SLOT_DONE;
		drain_done(w);
	}
}

/* Hands the open regular file @fd (named w->path) to a worker, or processes it here. */
static void submit(struct cli_walk *w, int fd, uint64_t size)
{
	struct cli_slot *sl;
	char *path = strdup(w->path);

	if (!path) {
		cli_error("out of memory");
		close(fd);
		w->failed++;
		return;
	}
	if (!w->n_threads) {
		/* At most one run is ever queued here: the ring always has room. */
		sl = &w->ring[w->next_seq++ % CLI_WALK_RING];
		sl->item.fd = fd;
		sl->item.path = path;
		sl->item.size = size;
		sl->state = CLI_SLOT_QUEUED;
		run_serial(w, false);
		return;
	}
	pthread_mutex_lock(&w->lock);
	for (;;) {
		drain_done(w);
		if (w->ring[w->next_seq % CLI_WALK_RING].state == CLI_SLOT_FREE)
			break;
		/* No room: the workers take what is queued, full runs or not. */
		w->flush = true;
		pthread_cond_broadcast(&w->work);
		pthread_cond_wait(&w->done, &w->lock);
	}
	w->flush = false;
	sl = &w->ring[w->next_seq++ % CLI_WALK_RING];
	sl->item.fd = fd;
	sl->item.path = path;
	sl->item.size = size;
	sl->state = CLI_SLOT_QUEUED;
	if (run_ready(w))
		pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->lock);
}

int cli_walk_start(struct cli_walk *w)
{
	size_t size = w->item_size ? w->item_size : 1;
	int err;

	w->data_store = calloc(CLI_WALK_RING, size);
	if (!w->data_store) {
		cli_error("out of memory");
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < CLI_WALK_RING; i++)
		w->ring[i].item.data = (char *)w->data_store + i * size;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->done, NULL);
	w->started = true;
	w->tally.draw = w->show == 1 || (w->recursive && cli_progress_wanted(w->show));
	w->tally.summary = w->recursive && w->show != 0;
	cli_tally_start(&w->tally);
	if (w->jobs <= 1)
		return 0;
	for (unsigned int i = 0; i < w->jobs && i < CLI_WALK_MAX_JOBS; i++) {
		w->threads[i].walk = w;
		w->threads[i].id = i;
		err = pthread_create(&w->threads[i].thread, NULL, thread_main, &w->threads[i]);
		if (err) {
			/* Fewer threads still work; none at all falls back to the main thread. */
			cli_error("cannot start thread %u: %s", i + 1, strerror(err));
			break;
		}
		w->n_threads++;
	}
	return 0;
}

void cli_walk_finish(struct cli_walk *w)
{
	if (w->started && !w->n_threads)
		run_serial(w, true);
	if (w->n_threads) {
		pthread_mutex_lock(&w->lock);
		/* The walk is over: the last short runs go now. */
		w->flush = true;
		pthread_cond_broadcast(&w->work);
		for (;;) {
			drain_done(w);
			if (w->print_seq == w->next_seq)
				break;
			pthread_cond_wait(&w->done, &w->lock);
		}
		w->shutdown = true;
		pthread_cond_broadcast(&w->work);
		pthread_mutex_unlock(&w->lock);
		for (unsigned int i = 0; i < w->n_threads; i++)
			pthread_join(w->threads[i].thread, NULL);
		w->n_threads = 0;
	}
	if (w->data_store) {
		pthread_cond_destroy(&w->done);
		pthread_cond_destroy(&w->work);
		pthread_mutex_destroy(&w->lock);
	}
	free(w->data_store);
	w->data_store = NULL;
	free(w->path);
	w->path = NULL;
	if (!w->started)
		return;
	/* Every result is out: flush it before the summary follows on stderr. */
	if (fflush(stdout) == EOF) {
		cli_error("cannot write to stdout: %s", strerror(errno));
		w->failed++;
	}
	cli_tally_end(&w->tally, w->failed);
	w->started = false;
}

static const char *special_name(mode_t type_bits)
{
	return S_ISFIFO(type_bits) ? "FIFO" : S_ISCHR(type_bits) ? "character device" :
	       S_ISBLK(type_bits) ? "block device" : S_ISSOCK(type_bits) ? "socket" :
	       "special file";
}

/*
 * Opens @name relative to @dirfd without following a symlink and without blocking on a
 * FIFO, then checks it really is a regular file: the name may have changed since readdir.
 * @explicit: the user named it, so anything but a regular file is an error.
 */
static void file_at(struct cli_walk *w, int dirfd, const char *name, bool explicit)
{
	struct stat st;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP) {
			if (explicit) {
				cli_error("%s: not a regular file (symbolic link)", w->path);
				w->failed++;
			}
			return;
		}
		cli_error("%s: cannot open: %s", w->path, strerror(errno));
		w->failed++;
		return;
	}
	if (fstat(fd, &st) < 0) {
		cli_error("%s: cannot stat: %s", w->path, strerror(errno));
		w->failed++;
	} else if (S_ISREG(st.st_mode)) {
		submit(w, fd, (uint64_t)st.st_size); /* takes the descriptor */
		return;
	} else if (explicit) {
		cli_error("%s: not a regular file (%s)", w->path, special_name(st.st_mode));
		w->failed++;
	}
	close(fd);
}

static void walk_dir(struct cli_walk *w, int dirfd);

/* Enters directory @name under @dirfd (never through a symlink) and walks it. */
static void walk_at(struct cli_walk *w, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		/* ELOOP/ENOTDIR: replaced by a symlink or a file since readdir; skip it. */
		if (errno == ELOOP || errno == ENOTDIR)
			return;
		cli_error("%s: cannot open directory: %s", w->path, strerror(errno));
		w->failed++;
		return;
	}
	walk_dir(w, fd);
}

/* Walks the open directory @fd (consumed) in readdir order, as evmctl -r does. */
static void walk_dir(struct cli_walk *w, int fd)
{
	size_t base = strlen(w->path);
	struct dirent *de;
	DIR *dir;

	dir = fdopendir(fd);
	if (!dir) {
		cli_error("%s: cannot read directory: %s", w->path, strerror(errno));
		close(fd);
		w->failed++;
		return;
	}
	for (;;) {
		unsigned char type;

		errno = 0;
		de = readdir(dir);
		if (!de) {
			if (errno) {
				w->path[base] = '\0';
				cli_error("%s: cannot read directory: %s", w->path,
					  strerror(errno));
				w->failed++;
			}
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		type = de->d_type;
		if (type == DT_UNKNOWN) {
			struct stat st;

			/* Some filesystems do not fill d_type: ask, still without following. */
			if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue; /* gone since readdir */
			type = IFTODT(st.st_mode);
		}
		if (path_set(w, base, de->d_name)) {
			cli_error("out of memory");
			w->failed++;
			break;
		}
		if (type == DT_LNK) {
			/* Never followed; what it points to is done where it lives. */
			if (w->verbosity)
				cli_error("%s: skipped (symbolic link)", w->path);
			continue;
		}
		if (type != DT_DIR && type != DT_REG) {
			/*
			 * A FIFO, device or socket in a tree that is meant to be appraised is
			 * worth a failure, not silence; it is never opened (opening a device
			 * can have effects).
			 */
			cli_error("%s: not a regular file (%s), not %s", w->path,
				  special_name(DTTOIF(type)), w->verb);
			w->failed++;
			continue;
		}
		if (type == DT_DIR)
			walk_at(w, dirfd(dir), de->d_name);
		else
			file_at(w, dirfd(dir), de->d_name, false);
	}
	w->path[base] = '\0';
	closedir(dir);
}

void cli_walk_path(struct cli_walk *w, const char *arg)
{
	struct stat st;

	if (path_set(w, 0, arg)) {
		cli_error("out of memory");
		w->failed++;
		return;
	}
	if (lstat(arg, &st) < 0) {
		cli_error("%s: %s", arg, strerror(errno));
		w->failed++;
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!w->recursive) {
			cli_error("%s: is a directory (use -r to walk it)", arg);
			w->failed++;
			return;
		}
		walk_at(w, AT_FDCWD, arg);
		return;
	}
	file_at(w, AT_FDCWD, arg, true);
}
