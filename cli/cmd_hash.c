// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream hash: writes security.ima digests on regular files, the way evmctl ima_hash does. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/walk.h"
#include "imastream/hash.h"
#include "imastream/xattr.h"

/* Files are hashed by the shared walk's workers (cli/walk.h), one hasher per worker. */
struct hash_result {
	size_t len;
	uint8_t value[IMASTREAM_IMA_DIGEST_XATTR_MAX];
};

struct worker {
	struct imastream_hasher *hasher;
	/* The hasher's log: set up errors go to stderr; once hashing, we name the file. */
	struct imastream_log log;
	bool quiet;
};

struct hash_job {
	const struct imastream_hash_info *algo;
	struct imastream_xattr_writer writer; /* read-only once the walk starts */
	bool write;
	struct cli_walk walk;
	struct worker workers[CLI_WALK_MAX_JOBS];
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

/* Worker: hashes the open regular file of @it and writes its xattr. */
static void hash_item(void *ctx, unsigned int worker, struct cli_item *it)
{
	struct hash_job *job = ctx;
	struct imastream_hasher *hasher = job->workers[worker].hasher;
	struct hash_result *res = it->data;
	const uint8_t *digest;
	size_t digest_len;
	int err;

	err = imastream_hash_fd(hasher, it->fd);
	if (err) {
		/* One stdio call, so lines from concurrent workers never interleave. */
		fprintf(stderr, "imastream: %s: cannot read: %s\n", it->path, strerror(-err));
		return;
	}
	err = imastream_hasher_digest(hasher, job->algo->algo, &digest, &digest_len);
	if (err) {
		fprintf(stderr, "imastream: %s: hashing failed: %s\n", it->path, strerror(-err));
		return;
	}
	if (imastream_ima_digest_encode(job->algo->algo, digest, digest_len, res->value,
					sizeof(res->value), &res->len, &cli_log))
		return;
	/* On the descriptor: the inode we hashed, whatever happened to the name since. */
	if (job->write && imastream_xattr_write(&job->writer, it->fd, it->path,
						IMASTREAM_ATTR_IMA, res->value, res->len, NULL))
		return;
	it->ok = true;
}

/* Main thread, in walk order: prints the value. */
static void print_item(void *ctx, struct cli_item *it)
{
	const struct hash_result *res = it->data;

	(void)ctx;
	if (it->ok)
		print_hex(res->value, res->len);
}

static const struct cli_walk_ops hash_ops = { hash_item, print_item };

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

/* Creates one hasher per job. */
static int make_hashers(struct hash_job *job, unsigned int jobs)
{
	int err;

	for (unsigned int i = 0; i < jobs; i++) {
		job->workers[i].log = (struct imastream_log){ hasher_log, &job->workers[i] };
		err = imastream_hasher_new(IMASTREAM_HASH_BIT(job->algo->algo),
					   &job->workers[i].log, &job->workers[i].hasher);
		if (err)
			return err; /* the library said why */
		job->workers[i].quiet = true;
	}
	return 0;
}

static void free_hashers(struct hash_job *job)
{
	for (unsigned int i = 0; i < CLI_WALK_MAX_JOBS; i++)
		imastream_hasher_free(job->workers[i].hasher);
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
	unsigned int jobs = cli_walk_default_jobs();
	int verbose = 0, c, err;

	job.walk = (struct cli_walk){ .ops = &hash_ops, .ctx = &job, .verb = "hashed",
				      .item_size = sizeof(struct hash_result) };
	while ((c = getopt_long(argc, argv, "ra:nj:vh", options, NULL)) != -1) {
		switch (c) {
		case 'r':
			job.walk.recursive = true;
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
			if (!cli_walk_parse_jobs("hash", optarg, &jobs))
				return CLI_USAGE;
			break;
		case 'v':
			verbose++;
			job.walk.verbose = true;
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
	job.walk.jobs = jobs;
	err = make_hashers(&job, jobs);
	if (!err)
		err = cli_walk_start(&job.walk);
	if (err) {
		cli_walk_finish(&job.walk);
		free_hashers(&job);
		return CLI_FAILED; /* the library said why */
	}
	/* Many short lines: one big buffer instead of a write per file. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	for (int i = optind; i < argc; i++)
		cli_walk_path(&job.walk, argv[i]);
	cli_walk_finish(&job.walk);
	free_hashers(&job);
	if (fflush(stdout) == EOF) {
		cli_error("hash: cannot write to stdout: %s", strerror(errno));
		job.walk.failed++;
	}
	return job.walk.failed ? CLI_FAILED : CLI_OK;
}
