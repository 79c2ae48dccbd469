// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream hash: writes security.ima digests on regular files, the way evmctl ima_hash does. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "imastream/hash.h"
#include "imastream/xattr.h"

/*
 * Files are hashed by worker threads (one hasher each) while the main thread walks; the
 * results go through a ring of slots in walk order, so stdout is the same as a serial run
 * (and as evmctl's).  With one job, the main thread hashes each file itself.
 */
#define RING_SIZE 64
#define MAX_JOBS 64

enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_BUSY, SLOT_DONE };

struct slot {
	enum slot_state state;
	int fd;
	char *path; /* owned copy, for messages */
	bool ok;
	size_t len;
	uint8_t value[IMASTREAM_IMA_DIGEST_XATTR_MAX];
};

struct hash_job;

struct worker {
	struct hash_job *job;
	struct imastream_hasher *hasher;
	/* The hasher's log: set up errors go to stderr; once hashing, we name the file. */
	struct imastream_log log;
	bool quiet;
	pthread_t thread;
};

struct hash_job {
	const struct imastream_hash_info *algo;
	struct imastream_xattr_writer writer; /* read-only once the walk starts */
	bool recursive;
	bool write;
	bool verbose;
	unsigned long failed;
	/* The current path, grown as the walk descends; only used for output and messages. */
	char *path;
	size_t path_size;

	unsigned int n_workers; /* threads started; 0 means the main thread hashes */
	struct worker workers[MAX_JOBS];
	pthread_mutex_t lock;
	pthread_cond_t work;  /* a slot was queued, or shutdown */
	pthread_cond_t done;  /* a slot is done */
	bool shutdown;
	uint64_t next_seq;   /* next slot to fill (main) */
	uint64_t claim_seq;  /* next slot a worker takes */
	uint64_t print_seq;  /* next slot to print (main) */
	struct slot ring[RING_SIZE];
};

static const char usage_text[] =
	"Usage: imastream hash [-r] [-a ALGO] [--xattr-user] [-n] [-j N] [-v] PATH...\n"
	"\n"
	"Hashes the content of each regular file and writes the digest to security.ima,\n"
	"byte for byte as 'evmctl ima_hash' does: type 01 for md5 and sha1, type 04 (with\n"
	"the algorithm byte) otherwise. Prints each value in hex, one line per file.\n"
	"\n"
	"  -r, --recursive     walk directories; symlinks are skipped, never followed;\n"
	"                      a FIFO, device or socket is reported as a failure\n"
	"  -a, --hashalgo ALGO md5, sha1, sha224, sha256 (default), sha384, sha512, sm3\n"
	"      --xattr-user    write user.ima instead of security.ima (no privilege needed)\n"
	"  -n, --dry-run       print the values, write nothing\n"
	"  -j, --jobs N        hash N files at a time (default: one per CPU); the output\n"
	"                      order does not change\n"
	"  -v, --verbose       also name the symlinks a walk skips\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 if every file was done, 1 if any failed (each failure is one line\n"
	"on stderr and the other files are still done), 2 for a usage error.\n";

/* Replaces the path tail after @base with "/@name" (or @name when @base is 0). */
static int path_set(struct hash_job *job, size_t base, const char *name)
{
	size_t name_len = strlen(name), need = base + 1 + name_len + 1;

	if (need > job->path_size) {
		size_t size = need * 2;
		char *p = realloc(job->path, size);

		if (!p)
			return -ENOMEM;
		job->path = p;
		job->path_size = size;
	}
	if (base && job->path[base - 1] != '/')
		job->path[base++] = '/';
	memcpy(job->path + base, name, name_len + 1);
	return 0;
}

static void print_hex(const uint8_t *v, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char line[2 * IMASTREAM_IMA_DIGEST_XATTR_MAX + 2];
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		line[n++] = digits[v[i] >> 4];
		line[n++] = digits[v[i] & 15];
	}
	line[n++] = '\n';
	fwrite(line, 1, n, stdout);
}

/* Hashes the open regular file in @sl with @hasher and writes its xattr; closes the fd. */
static void hash_slot(const struct hash_job *job, struct imastream_hasher *hasher,
		      struct slot *sl)
{
	const uint8_t *digest;
	size_t digest_len;
	int err;

	sl->ok = false;
	err = imastream_hash_fd(hasher, sl->fd);
	if (err) {
		/* One stdio call, so lines from concurrent workers never interleave. */
		fprintf(stderr, "imastream: %s: cannot read: %s\n", sl->path, strerror(-err));
		goto out;
	}
	err = imastream_hasher_digest(hasher, job->algo->algo, &digest, &digest_len);
	if (err) {
		fprintf(stderr, "imastream: %s: hashing failed: %s\n", sl->path, strerror(-err));
		goto out;
	}
	if (imastream_ima_digest_encode(job->algo->algo, digest, digest_len, sl->value,
					sizeof(sl->value), &sl->len, &cli_log))
		goto out;
	/* On the descriptor: the inode we hashed, whatever happened to the name since. */
	if (job->write && imastream_xattr_write(&job->writer, sl->fd, sl->path,
						IMASTREAM_ATTR_IMA, sl->value, sl->len, NULL))
		goto out;
	sl->ok = true;
out:
	close(sl->fd);
	sl->fd = -1;
}

/* Main thread: prints a finished slot and frees it. */
static void print_slot(struct hash_job *job, struct slot *sl)
{
	if (sl->ok)
		print_hex(sl->value, sl->len);
	else
		job->failed++;
	free(sl->path);
	sl->path = NULL;
	sl->state = SLOT_FREE;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct hash_job *job = w->job;

	pthread_mutex_lock(&job->lock);
	for (;;) {
		struct slot *sl;

		while (job->claim_seq == job->next_seq && !job->shutdown)
			pthread_cond_wait(&job->work, &job->lock);
		if (job->claim_seq == job->next_seq)
			break; /* shutdown, and nothing left */
		sl = &job->ring[job->claim_seq++ % RING_SIZE];
		sl->state = SLOT_BUSY;
		pthread_mutex_unlock(&job->lock);
		hash_slot(job, w->hasher, sl);
		pthread_mutex_lock(&job->lock);
		sl->state = SLOT_DONE;
		pthread_cond_signal(&job->done);
	}
	pthread_mutex_unlock(&job->lock);
	return NULL;
}

/* Main thread, lock held: prints every finished slot at the head of the ring. */
static void drain_done(struct hash_job *job)
{
	while (job->print_seq < job->next_seq &&
	       job->ring[job->print_seq % RING_SIZE].state == SLOT_DONE)
		print_slot(job, &job->ring[job->print_seq++ % RING_SIZE]);
}

/* Hands the open regular file @fd (named job->path) to a worker, or hashes it here. */
static void submit(struct hash_job *job, int fd)
{
	struct slot *sl;
	char *path = strdup(job->path);

	if (!path) {
		cli_error("out of memory");
		close(fd);
		job->failed++;
		return;
	}
	if (!job->n_workers) {
		struct slot one = { .fd = fd, .path = path };

		hash_slot(job, job->workers[0].hasher, &one);
		print_slot(job, &one);
		return;
	}
	pthread_mutex_lock(&job->lock);
	for (;;) {
		drain_done(job);
		if (job->ring[job->next_seq % RING_SIZE].state == SLOT_FREE)
			break;
		pthread_cond_wait(&job->done, &job->lock);
	}
	sl = &job->ring[job->next_seq++ % RING_SIZE];
	sl->fd = fd;
	sl->path = path;
	sl->state = SLOT_QUEUED;
	pthread_cond_signal(&job->work);
	pthread_mutex_unlock(&job->lock);
}

/*
 * A read error inside imastream_hash_fd() is reported by the hasher without the file
 * name (it only has the fd); hash_slot() says it with the name instead, so that each
 * failure stays one line.
 */
static void hasher_log(void *arg, int level, const char *msg)
{
	const struct worker *w = arg;

	if (!w->quiet)
		cli_log.fn(cli_log.arg, level, msg);
}

/* Creates one hasher per job; starts threads when @jobs > 1. */
static int start_workers(struct hash_job *job, unsigned int jobs)
{
	int err;

	pthread_mutex_init(&job->lock, NULL);
	pthread_cond_init(&job->work, NULL);
	pthread_cond_init(&job->done, NULL);
	for (unsigned int i = 0; i < jobs; i++) {
		job->workers[i].job = job;
		job->workers[i].log = (struct imastream_log){ hasher_log, &job->workers[i] };
		err = imastream_hasher_new(IMASTREAM_HASH_BIT(job->algo->algo),
					   &job->workers[i].log, &job->workers[i].hasher);
		if (err)
			return err; /* the library said why */
		job->workers[i].quiet = true;
	}
	if (jobs == 1)
		return 0;
	for (unsigned int i = 0; i < jobs; i++) {
		err = pthread_create(&job->workers[i].thread, NULL, worker_main, &job->workers[i]);
		if (err) {
			/* Fewer threads still work; none at all falls back to hashing inline. */
			cli_error("hash: cannot start thread %u: %s", i + 1, strerror(err));
			break;
		}
		job->n_workers++;
	}
	return 0;
}

/* Waits for every queued file, prints the rest, stops the threads, frees the hashers. */
static void finish_workers(struct hash_job *job)
{
	if (job->n_workers) {
		pthread_mutex_lock(&job->lock);
		for (;;) {
			drain_done(job);
			if (job->print_seq == job->next_seq)
				break;
			pthread_cond_wait(&job->done, &job->lock);
		}
		job->shutdown = true;
		pthread_cond_broadcast(&job->work);
		pthread_mutex_unlock(&job->lock);
		for (unsigned int i = 0; i < job->n_workers; i++)
			pthread_join(job->workers[i].thread, NULL);
	}
	for (unsigned int i = 0; i < MAX_JOBS; i++)
		imastream_hasher_free(job->workers[i].hasher);
	pthread_cond_destroy(&job->done);
	pthread_cond_destroy(&job->work);
	pthread_mutex_destroy(&job->lock);
}

/*
 * Opens @name relative to @dirfd without following a symlink and without blocking on a
 * FIFO, then checks it really is a regular file: the name may have changed since readdir.
 * @explicit: the user named it, so anything but a regular file is an error.
 */
static void hash_at(struct hash_job *job, int dirfd, const char *name, bool explicit)
{
	struct stat st;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP) {
			if (explicit) {
				cli_error("%s: not a regular file (symbolic link)", job->path);
				job->failed++;
			}
			return;
		}
		cli_error("%s: cannot open: %s", job->path, strerror(errno));
		job->failed++;
		return;
	}
	if (fstat(fd, &st) < 0) {
		cli_error("%s: cannot stat: %s", job->path, strerror(errno));
		job->failed++;
	} else if (S_ISREG(st.st_mode)) {
		submit(job, fd); /* takes the descriptor */
		return;
	} else if (explicit) {
		cli_error("%s: not a regular file (%s)", job->path,
			  S_ISFIFO(st.st_mode) ? "FIFO" :
			  S_ISCHR(st.st_mode) ? "character device" :
			  S_ISBLK(st.st_mode) ? "block device" :
			  S_ISSOCK(st.st_mode) ? "socket" : "special file");
		job->failed++;
	}
	close(fd);
}

static void walk_dir(struct hash_job *job, int dirfd);

/* Enters directory @name under @dirfd (never through a symlink) and walks it. */
static void walk_at(struct hash_job *job, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		/* ELOOP/ENOTDIR: replaced by a symlink or a file since readdir; skip it. */
		if (errno == ELOOP || errno == ENOTDIR)
			return;
		cli_error("%s: cannot open directory: %s", job->path, strerror(errno));
		job->failed++;
		return;
	}
	walk_dir(job, fd);
}

/* Walks the open directory @fd (consumed) in readdir order, as evmctl -r does. */
static void walk_dir(struct hash_job *job, int fd)
{
	size_t base = strlen(job->path);
	struct dirent *de;
	DIR *dir;

	dir = fdopendir(fd);
	if (!dir) {
		cli_error("%s: cannot read directory: %s", job->path, strerror(errno));
		close(fd);
		job->failed++;
		return;
	}
	for (;;) {
		unsigned char type;

		errno = 0;
		de = readdir(dir);
		if (!de) {
			if (errno) {
				job->path[base] = '\0';
				cli_error("%s: cannot read directory: %s", job->path,
					  strerror(errno));
				job->failed++;
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
		if (path_set(job, base, de->d_name)) {
			cli_error("out of memory");
			job->failed++;
			break;
		}
		if (type == DT_LNK) {
			/* Never followed; what it points to is hashed where it lives. */
			if (job->verbose)
				fprintf(stderr, "imastream: %s: skipped (symbolic link)\n",
					job->path);
			continue;
		}
		if (type != DT_DIR && type != DT_REG) {
			/*
			 * A FIFO, device or socket in a tree that is meant to be appraised is
			 * worth a failure, not silence; it is never opened (opening a device
			 * can have effects).
			 */
			cli_error("%s: not a regular file (%s), not hashed", job->path,
				  type == DT_FIFO ? "FIFO" :
				  type == DT_CHR ? "character device" :
				  type == DT_BLK ? "block device" :
				  type == DT_SOCK ? "socket" : "special file");
			job->failed++;
			continue;
		}
		if (type == DT_DIR)
			walk_at(job, dirfd(dir), de->d_name);
		else
			hash_at(job, dirfd(dir), de->d_name, false);
	}
	job->path[base] = '\0';
	closedir(dir);
}

static void do_argument(struct hash_job *job, const char *arg)
{
	struct stat st;

	if (path_set(job, 0, arg)) {
		cli_error("out of memory");
		job->failed++;
		return;
	}
	if (lstat(arg, &st) < 0) {
		cli_error("%s: %s", arg, strerror(errno));
		job->failed++;
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!job->recursive) {
			cli_error("%s: is a directory (use -r to walk it)", arg);
			job->failed++;
			return;
		}
		walk_at(job, AT_FDCWD, arg);
		return;
	}
	hash_at(job, AT_FDCWD, arg, true);
}

int cmd_hash(int argc, char **argv)
{
	static const struct option options[] = {
		{ "recursive", no_argument, NULL, 'r' },
		{ "hashalgo", required_argument, NULL, 'a' },
		{ "xattr-user", no_argument, NULL, 'U' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hash_job job = { .write = true };
	const char *algo_name = "sha256";
	unsigned int flags = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int jobs = cpus < 1 ? 1 : cpus > MAX_JOBS ? MAX_JOBS : (unsigned int)cpus;
	int verbose = 0, c, err;
	char *end;

	while ((c = getopt_long(argc, argv, "ra:nj:vh", options, NULL)) != -1) {
		switch (c) {
		case 'r':
			job.recursive = true;
			break;
		case 'a':
			algo_name = optarg;
			break;
		case 'U':
			flags |= IMASTREAM_XATTR_WRITE_USER;
			break;
		case 'n':
			job.write = false;
			break;
		case 'j':
			errno = 0;
			jobs = (unsigned int)strtoul(optarg, &end, 10);
			if (errno || *end || !*optarg || jobs < 1 || jobs > MAX_JOBS) {
				cli_error("hash: -j takes a number from 1 to %d", MAX_JOBS);
				return CLI_USAGE;
			}
			break;
		case 'v':
			verbose++;
			job.verbose = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return CLI_OK;
		default:
			fputs(usage_text, stderr);
			return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		cli_error("hash: no PATH given (try 'imastream hash --help')");
		return CLI_USAGE;
	}
	cli_set_verbose(verbose);
	job.algo = imastream_hash_by_name(algo_name);
	if (!job.algo) {
		cli_error("hash: unknown hash algorithm '%s' (md5, sha1, sha224, sha256, sha384, "
			  "sha512, sm3)", algo_name);
		return CLI_USAGE;
	}
	imastream_xattr_writer_init(&job.writer, flags, &cli_log);
	err = start_workers(&job, jobs);
	if (err) {
		finish_workers(&job);
		return CLI_FAILED; /* the library said why */
	}
	/* Many short lines: one big buffer instead of a write per file. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	for (int i = optind; i < argc; i++)
		do_argument(&job, argv[i]);
	finish_workers(&job);
	if (fflush(stdout) == EOF) {
		cli_error("hash: cannot write to stdout: %s", strerror(errno));
		job.failed++;
	}
	free(job.path);
	return job.failed ? CLI_FAILED : CLI_OK;
}
