// SPDX-License-Identifier: LGPL-2.1-or-later
/* The parallel, order-keeping file walk behind imastream hash, sign and verify. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/walk.h"
#include "cli/walk_queue.h"

const struct cli_use cli_walk_options[] = {
	{ CLI_OPT_RECURSIVE },
	{ CLI_OPT_JOBS },
	{ CLI_OPT_PROGRESS },
	{ CLI_OPT_QUIET },
	{ CLI_OPT_VERBOSE, "also name the symlinks a walk skips" },
	{ CLI_OPT_FORMAT, "text (default) or json: a JSON object per file on\n"
			  "standard output, then a summary object (imastream(1))" },
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
		   size_t item_size)
{
	*w = (struct cli_walk){ .ops = ops,
				.ctx = ctx,
				.item_size = item_size,
				.say = CLI_SAY_INIT,
				.jobs = cli_default_jobs() };
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
	default:
		return cli_say_option(p, opt, &w->say);
	}
}

/* Replaces the path tail after @base with "/@name" (or @name when @base is 0). */
int cli_walk_path_set(struct cli_walk *w, size_t base, const char *name)
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

void cli_walk_dir_put(struct cli_walk_dir *d)
{
	if (d && !--d->refs) {
		closedir(d->dir);
		free(d);
	}
}

static struct cli_slot *ring_slot(struct cli_walk *w, uint64_t seq)
{
	return &w->ring[seq % CLI_WALK_RING];
}

/* How many files make a run: their sizes are only known once a worker opens them. */
static size_t run_size(struct cli_walk *w)
{
	return w->ops->process_run ? w->run : 1;
}

/* The run that starts at claim_seq: a full one, or what is queued. */
static size_t run_length(struct cli_walk *w)
{
	uint64_t queued = w->next_seq - w->claim_seq;

	return queued < run_size(w) ? (size_t)queued : run_size(w);
}

/* Whether a full run is queued. */
static bool run_ready(struct cli_walk *w)
{
	return w->next_seq - w->claim_seq >= run_size(w);
}

/* A queued file is opened without following a symlink and without blocking on a FIFO. */
#define OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

static int slot_dirfd(const struct cli_slot *sl)
{
	return sl->dir ? sl->dir->fd : AT_FDCWD;
}

/*
 * Any thread: @fd is what opening the queued file of @sl gave, a descriptor or -errno;
 * checks it really is a regular file: the name may have changed since readdir.  What went
 * wrong is kept for report time, to be said in walk order.
 */
static void check_slot(struct cli_slot *sl, int fd)
{
	struct stat st;

	sl->err = 0;
	sl->mode = 0;
	sl->item.fd = -1;
	sl->item.ok = false;
	if (fd < 0) {
		if (fd == -ELOOP) {
			sl->mode = S_IFLNK; /* refused by O_NOFOLLOW */
		} else {
			sl->err = -fd;
			sl->call = "open";
		}
		return;
	}
	if (fstat(fd, &st) < 0) {
		sl->err = errno;
		sl->call = "stat";
		close(fd);
		return;
	}
	sl->mode = st.st_mode;
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	sl->item.fd = fd;
	sl->item.size = (uint64_t)st.st_size;
}

/*
 * The @n queued files from @seq, opened: a run with one io_uring_enter(2) through @ring
 * when the kernel allows it (a system call is most of a small file's cost), else one
 * openat(2) each.
 */
static void open_slots(struct cli_walk *w, struct cli_open_ring *ring, uint64_t seq, size_t n)
{
	const char *name[CLI_WALK_RUN];
	int dirfd[CLI_WALK_RUN], fd[CLI_WALK_RUN];

	for (size_t i = 0; i < n; i++) {
		dirfd[i] = slot_dirfd(ring_slot(w, seq + i));
		name[i] = ring_slot(w, seq + i)->name;
	}
	if (n < 2 || cli_open_ring_openat(ring, dirfd, name, OPEN_FLAGS, n, fd))
		for (size_t i = 0; i < n; i++) {
			fd[i] = openat(dirfd[i], name[i], OPEN_FLAGS);
			if (fd[i] < 0)
				fd[i] = -errno;
		}
	for (size_t i = 0; i < n; i++)
		check_slot(ring_slot(w, seq + i), fd[i]);
}

/*
 * Closes the @n open files of @items.  A run's descriptors are mostly consecutive (each
 * open takes the lowest free one), and one close_range(2) closes such a stretch: a system
 * call is most of a small file's cost.  Each stretch is made of @items' own descriptors
 * only, so nothing another thread opened is in it; a lone one gets a plain close(2).
 */
static void close_items(struct cli_item **items, size_t n)
{
	int fd[CLI_WALK_RUN];
	size_t i, k;

	for (i = 0; i < n; i++) {
		/* Insertion sort: a run is at most CLI_WALK_RUN files, already in order mostly. */
		for (k = i; k && fd[k - 1] > items[i]->fd; k--)
			fd[k] = fd[k - 1];
		fd[k] = items[i]->fd;
		items[i]->fd = -1;
	}
	for (i = 0; i < n; i = k) {
		for (k = i + 1; k < n && fd[k] == fd[k - 1] + 1; k++)
			;
		/* ENOSYS before Linux 5.9: then the stretch is still open, closed one by one. */
		if (k - i > 1 && !close_range((unsigned int)fd[i], (unsigned int)fd[k - 1], 0))
			continue;
		for (size_t c = i; c < k; c++)
			close(fd[c]);
	}
}

/* Any thread: the command's work on @n open files (see process_run), then closes them. */
static void process_files(struct cli_walk *w, unsigned int worker, struct cli_item **items,
			  size_t n)
{
	if (w->ops->process_run)
		w->ops->process_run(w->ctx, worker, items, n);
	else
		w->ops->process(w->ctx, worker, items[0]);
	close_items(items, n);
}

/*
 * Any thread: opens the @n queued files from @seq and processes them, the small ones
 * together in one run and each large one alone.  Return: whether one was large.
 */
static bool process_claimed(struct cli_walk *w, unsigned int worker, struct cli_open_ring *ring,
			    uint64_t seq, size_t n)
{
	struct cli_item *small[CLI_WALK_RUN];
	size_t n_small = 0;
	bool large = false;

	open_slots(w, ring, seq, n);
	for (size_t i = 0; i < n; i++) {
		struct cli_slot *sl = ring_slot(w, seq + i);
		struct cli_item *it = &sl->item;

		if (it->fd < 0)
			continue;
		if (w->ops->process_run && it->size <= w->small_max) {
			small[n_small++] = it;
			continue;
		}
		large = true;
		process_files(w, worker, &it, 1);
	}
	if (n_small)
		process_files(w, worker, small, n_small);
	return large;
}

const char *cli_walk_special_name(mode_t type_bits)
{
	return S_ISFIFO(type_bits) ? "FIFO" : S_ISCHR(type_bits) ? "character device" :
	       S_ISBLK(type_bits) ? "block device" : S_ISSOCK(type_bits) ? "socket" :
	       S_ISLNK(type_bits) ? "symbolic link" : "special file";
}

void cli_walk_json_file(struct cli_walk *w, const char *path, bool ok)
{
	cli_json_begin(&w->out, "file");
	cli_json_str(&w->out, "path", path);
	cli_json_str(&w->out, "result", ok ? "ok" : "fail");
}

/* --format json: the record of a file the walk itself could not hand to the command. */
void cli_walk_fail_record(struct cli_walk *w, const char *path, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	if (!w->say.json)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	cli_walk_json_file(w, path, false);
	cli_json_str(&w->out, "error", why);
	cli_json_put(&w->out, stdout);
}

/*
 * Main thread: reports a finished slot, frees its path and lets go of its directory.  A
 * file found to be something else when opened is skipped quietly inside a walk (as a
 * symlink is) and is an error when the user named it.
 */
static void report_slot(struct cli_walk *w, struct cli_slot *sl)
{
	struct cli_item *it = &sl->item;

	if (sl->err) {
		cli_error("%s: cannot %s: %s", it->path, sl->call, strerror(sl->err));
		w->failed++;
		cli_walk_fail_record(w, it->path, "cannot %s: %s", sl->call, strerror(sl->err));
	} else if (!S_ISREG(sl->mode)) {
		if (sl->explicit) {
			cli_error("%s: not a regular file (%s)", it->path,
				  cli_walk_special_name(sl->mode));
			w->failed++;
			cli_walk_fail_record(w, it->path, "not a regular file (%s)",
					     cli_walk_special_name(sl->mode));
		}
	} else {
		w->ops->report(w->ctx, it);
		if (!it->ok)
			w->failed++;
		cli_tally_file(&w->tally, it->size, w->failed);
	}
	free(it->path);
	it->path = NULL;
	cli_walk_dir_put(sl->dir);
	sl->dir = NULL;
}

static void drain_done(struct cli_walk *w);

/*
 * Lock held: whether every slot the walker waits for is done, so that waking it is worth
 * a futex call; the ring's head is rarely more than a few runs from done.
 */
static bool walker_can_go_on(struct cli_walk *w)
{
	for (uint64_t seq = w->print_seq; seq < w->wake_seq; seq++)
		if (ring_slot(w, seq)->state != CLI_SLOT_DONE)
			return false;
	return true;
}

/* Main thread, lock held: sleeps until the slots before @seq are done, then reports them. */
static void wait_done_to(struct cli_walk *w, uint64_t seq)
{
	w->wake_seq = seq;
	while (!walker_can_go_on(w))
		pthread_cond_wait(&w->done, &w->lock);
	w->wake_seq = 0;
	drain_done(w);
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
		/* After a large file, one at a time: a run of them would wait on one thread. */
		n = t->claim_one ? 1 : run_length(w);
		w->claim_seq += n;
		for (size_t i = 0; i < n; i++)
			ring_slot(w, seq + i)->state = CLI_SLOT_BUSY;
		/* More queued than this run: another worker can start on it now. */
		if (run_ready(w) || (w->flush && w->claim_seq != w->next_seq))
			pthread_cond_signal(&w->work);
		pthread_mutex_unlock(&w->lock);
		t->claim_one = process_claimed(w, t->id, &t->open_ring, seq, n);
		pthread_mutex_lock(&w->lock);
		for (size_t i = 0; i < n; i++)
			ring_slot(w, seq + i)->state = CLI_SLOT_DONE;
		if (walker_can_go_on(w))
			pthread_cond_signal(&w->done);
	}
	pthread_mutex_unlock(&w->lock);
	cli_open_ring_free(&t->open_ring);
	return NULL;
}

/* Main thread, lock held: reports every finished slot at the head of the ring. */
static void drain_done(struct cli_walk *w)
{
	while (w->print_seq < w->next_seq &&
	       ring_slot(w, w->print_seq)->state == CLI_SLOT_DONE) {
		struct cli_slot *sl = ring_slot(w, w->print_seq++);

		report_slot(w, sl);
		sl->state = CLI_SLOT_FREE;
	}
}

/* Main thread, no workers: processes the runs queued (@all: the short one too), reports them. */
static void run_serial(struct cli_walk *w, bool all)
{
	while (run_ready(w) || (all && w->claim_seq != w->next_seq)) {
		uint64_t seq = w->claim_seq;
		size_t n = run_length(w);

		w->claim_seq += n;
		process_claimed(w, 0, &w->open_ring, seq, n);
		for (size_t i = 0; i < n; i++)
			ring_slot(w, seq + i)->state = CLI_SLOT_DONE;
		drain_done(w);
	}
}

/*
 * Main thread: waits until every file queued so far is reported, so that a message the
 * walk itself is about to print follows theirs, in walk order, as in a serial run.
 */
void cli_walk_settle(struct cli_walk *w)
{
	if (!w->n_threads) {
		run_serial(w, true);
		return;
	}
	pthread_mutex_lock(&w->lock);
	/* The workers take what is queued, full runs or not. */
	w->flush = true;
	pthread_cond_broadcast(&w->work);
	wait_done_to(w, w->next_seq);
	w->flush = false;
	pthread_mutex_unlock(&w->lock);
}

/* Main thread, lock held: waits until the slot for the next file is free. */
static void wait_for_room(struct cli_walk *w)
{
	drain_done(w);
	if (ring_slot(w, w->next_seq)->state == CLI_SLOT_FREE)
		return;
	/* No room: the workers take what is queued, full runs or not. */
	w->flush = true;
	pthread_cond_broadcast(&w->work);
	/* Full: half of it done makes room for many runs at one wake. */
	wait_done_to(w, w->print_seq + CLI_WALK_RING / 2);
	w->flush = false;
}

/*
 * Main thread: queues the file named w->path, @name_at bytes into it relative to @dir
 * (NULL: the whole path, relative to the cwd), for a worker to open and process.
 */
void cli_walk_queue_file(struct cli_walk *w, struct cli_walk_dir *dir, size_t name_at,
			 bool explicit)
{
	struct cli_slot *sl;
	char *path = strdup(w->path);

	if (!path) {
		cli_error("out of memory");
		w->failed++;
		return;
	}
	/* Without workers, at most one run is ever queued: the ring always has room. */
	if (w->n_threads) {
		pthread_mutex_lock(&w->lock);
		wait_for_room(w);
	}
	sl = ring_slot(w, w->next_seq++);
	sl->dir = dir;
	if (dir)
		dir->refs++;
	sl->name = path + name_at;
	sl->explicit = explicit;
	sl->item.path = path;
	sl->item.fd = -1;
	sl->item.size = 0;
	sl->state = CLI_SLOT_QUEUED;
	if (!w->n_threads) {
		run_serial(w, false);
		return;
	}
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
	w->tally.draw = w->say.show == 1 || (w->recursive && cli_progress_wanted(w->say.show));
	w->tally.summary = w->recursive && w->say.show != 0;
	cli_tally_start(&w->tally);
	if (w->jobs <= 1)
		return 0;
	for (unsigned int i = 0; i < w->jobs && i < CLI_WALK_MAX_JOBS; i++) {
		w->threads[i].walk = w;
		w->threads[i].id = i;
		w->threads[i].claim_one = true; /* until a first file shows it is small */
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
	/* The walk is over: the last short runs go now. */
	if (w->started)
		cli_walk_settle(w);
	if (w->n_threads) {
		pthread_mutex_lock(&w->lock);
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
	cli_open_ring_free(&w->open_ring);
	free(w->data_store);
	w->data_store = NULL;
	free(w->path);
	w->path = NULL;
	if (!w->started)
		return;
	if (w->say.json) {
		cli_json_begin(&w->out, "summary");
		cli_json_str(&w->out, "command", w->tally.cmd);
		cli_json_uint(&w->out, "files", w->tally.files);
		cli_json_uint(&w->out, "failed", w->failed);
		cli_json_uint(&w->out, "bytes", w->tally.bytes);
		cli_json_seconds(&w->out, "elapsed_s",
				 cli_seconds_since(CLOCK_MONOTONIC, &w->tally.start));
		cli_json_put(&w->out, stdout);
		cli_json_free(&w->out);
	}
	/* Every result is out: flush it before the summary follows on stderr. */
	if (fflush(stdout) == EOF) {
		cli_error("cannot write to stdout: %s", strerror(errno));
		w->failed++;
	}
	cli_tally_end(&w->tally, w->failed);
	w->started = false;
}
