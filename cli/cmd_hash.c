// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream hash: writes security.ima digests on regular files, the way evmctl ima_hash does; --verity prints fs-verity digests. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/digests.h"
#include "cli/evmctl.h"
#include "cli/options.h"
#include "cli/walk.h"
#include "hashers/backend.h"
#include "imastream/hash.h"
#include "imastream/verity.h"
#include "imastream/xattr.h"
#include "xattr/codec.h"

/* Files are hashed by the shared walk's workers (cli/walk.h), one hasher per worker. */
struct hash_result {
	size_t len;
	uint8_t value[IMASTREAM_IMA_DIGEST_XATTR_MAX];
};

struct worker {
	struct cli_digests digests; /* its hasher (--verity: fs-verity context) and runs of files */
	/* The hasher's log: set up errors go to stderr; once hashing, we name the file. */
	struct imastream_log log;
	bool quiet;
};

struct hash_job {
	const struct imastream_hash_info *algo;
	struct imastream_xattr_writer writer; /* read-only once the walk starts */
	bool write;
	bool names;              /* "VALUE  NAME" lines; false: the value alone */
	bool verity;             /* fs-verity digests, printed as `fsverity digest` does */
	struct cli_line line;    /* the main thread's output line */
	struct cli_walk walk;
	struct worker workers[CLI_WALK_MAX_JOBS];
};

static const struct cli_use hash_options[] = {
	{ CLI_OPT_HASH_ALGO, "sha1, sha224, sha256 (default), sha384, sha512, sm3;\n"
	  "md5 with --allow-weak" },
	{ CLI_OPT_ALLOW_WEAK },
	{ CLI_OPT_XATTR_USER, "write user.ima instead of security.ima (no privilege\nneeded)" },
	{ CLI_OPT_DRY_RUN },
	{ CLI_OPT_NO_NAMES, "print the values without the file names, byte for byte\n"
	  "as evmctl (or with --verity, fsverity digest --compact)\nprints them" },
	{ CLI_OPT_VERITY, "print each file's fs-verity digest as 'fsverity digest'\n"
	  "does, \"sha256:HEX NAME\"; writes nothing (IMA takes\n"
	  "fs-verity digests only in version 3 signatures)" },
	{ 0 },
};

static const struct cli_spec hash_spec = {
	.cmd = "hash",
	.synopsis =
	"Usage: imastream hash [-r] [-a ALGO] [--xattr-user] [-n] [--no-names] [-j N]\n"
	"                      [-v] PATH...\n"
	"       imastream hash --verity [-r] [--no-names] [-j N] [-v] PATH...\n"
	"\n"
	"Hashes the content of each regular file and writes the digest to security.ima,\n"
	"byte for byte as 'evmctl ima_hash' does: type 01 for md5 and sha1, type 04\n"
	"(with the algorithm byte) otherwise. Prints one line per file, the value in hex,\n"
	"two spaces and the file's name, as sha256sum does (--no-names: the value alone,\n"
	"as evmctl prints it). With -r, a progress line on a terminal and a summary on\n"
	"stderr.\n"
	"\n"
	"With --verity, prints the fs-verity file digest instead (SHA-256 over a Merkle\n"
	"tree of 4 KiB blocks, no salt: what FS_IOC_MEASURE_VERITY returns once verity is\n"
	"enabled), the lines of 'fsverity digest', and writes no attribute.\n"
	"\n"
	"Run as 'imastream ima_hash', it prints what evmctl ima_hash prints: for each\n"
	"file, \"hash(ALGO): \" on stderr, then the value alone on stdout; no progress\n"
	"line and no summary.\n",
	.uses = hash_options,
	.shared = cli_walk_options,
	.epilog =
	"Exit status: 0 if every file was done, 1 if any failed (each failure is one line\n"
	"on stderr and the other files are still done), 2 for a usage error.\n",
};

/* Worker: encodes the @digest of the file of @it and writes its xattr. */
static void finish_item(struct hash_job *job, struct cli_item *it, const uint8_t *digest)
{
	struct hash_result *res = it->data;

	if (imastream_ima_digest_encode(job->algo->algo, digest, job->algo->digest_size,
					res->value, sizeof(res->value), &res->len, &cli_log))
		return;
	/* On the descriptor: the inode we hashed, whatever happened to the name since. */
	if (job->write && imastream_xattr_write(&job->writer, it->fd, it->path,
						IMASTREAM_ATTR_IMA, res->value, res->len, NULL))
		return;
	it->ok = true;
}

/* Worker: hashes the @n open regular files of @items, the small ones together, and writes their xattrs (--verity: keeps the digests to print). */
static void hash_run(void *ctx, unsigned int worker, struct cli_item **items, size_t n)
{
	struct hash_job *job = ctx;
	const uint8_t *digest[CLI_WALK_RUN];

	cli_digests_run(&job->workers[worker].digests, items, n, digest);
	for (size_t i = 0; i < n; i++) {
		struct hash_result *res = items[i]->data;

		if (!digest[i])
			continue;
		if (job->verity) {
			/* fs-verity digests are printed, never written. */
			memcpy(res->value, digest[i], IMASTREAM_VERITY_DIGEST_SIZE);
			res->len = IMASTREAM_VERITY_DIGEST_SIZE;
			items[i]->ok = true;
		} else {
			finish_item(job, items[i], digest[i]);
		}
	}
}

/* Main thread, in walk order: prints the value and the name. */
static void print_item(void *ctx, struct cli_item *it)
{
	struct hash_job *job = ctx;
	const struct hash_result *res = it->data;

	if (job->walk.say.json) {
		/* The value written (or, --verity, the fs-verity digest); a failure's reason is on stderr. */
		cli_walk_json_file(&job->walk, it->path, it->ok);
		if (it->ok)
			cli_json_hex(&job->walk.out, job->verity ? "verity_digest" : "ima",
				     res->value, res->len);
		if (cli_json_put(&job->walk.out, stdout))
			it->ok = false;
		return;
	}
	if (!it->ok)
		return;
	if (job->verity) {
		/* fsverity digest's "sha256:HEX NAME", or --compact's bare HEX. */
		if (job->names)
			cli_line_text(&job->line, "sha256:");
		cli_line_hex(&job->line, res->value, res->len);
		if (job->names) {
			cli_line_text(&job->line, " ");
			cli_line_name(&job->line, it->path);
		}
		if (cli_line_put(&job->line, stdout))
			it->ok = false;
		return;
	}
	/* As evmctl ima_hash: "hash(ALGO): " on stderr, the value alone on stdout, in turn. */
	if (cli_evmctl_name) {
		fprintf(stderr, "hash(%s): ", job->algo->name);
		fflush(stderr);
	}
	if (cli_put_value(&job->line, res->value, res->len, job->names ? it->path : NULL))
		it->ok = false;
	if (cli_evmctl_name && fflush(stdout) == EOF)
		it->ok = false;
}

static const struct cli_walk_ops hash_ops = { NULL, print_item, hash_run };

/*
 * A read error inside imastream_hash_fd() is reported by the hasher without the file
 * name (it only has the fd); cli_digests_run() says it with the name instead, so that each
 * failure stays one line.
 */
static void hasher_log(void *arg, int level, const char *msg)
{
	const struct worker *w = arg;

	if (!w->quiet)
		cli_log.fn(cli_log.arg, level, msg);
}

/* Creates one hasher (or fs-verity context) per job. */
static int make_hashers(struct hash_job *job, unsigned int jobs)
{
	int err;

	for (unsigned int i = 0; i < jobs; i++) {
		struct worker *w = &job->workers[i];

		w->log = (struct imastream_log){ hasher_log, w };
		err = cli_digests_new(&w->digests, job->verity, job->algo->algo, &w->log,
				      &job->walk);
		if (err)
			return err;
		w->quiet = true;
	}
	/* -v: which backend hashes the data blocks, so a run shows what did the work. */
	if (job->verity && job->walk.say.verbose) {
		char msg[128];

		snprintf(msg, sizeof(msg),
			 "hash: fs-verity data blocks through the %s batch backend",
			 imastream_verity_backend(job->workers[0].digests.verity));
		cli_log.fn(cli_log.arg, IMASTREAM_LOG_INFO, msg);
	}
	return 0;
}

static void free_hashers(struct hash_job *job)
{
	for (unsigned int i = 0; i < CLI_WALK_MAX_JOBS; i++)
		cli_digests_free(&job->workers[i].digests);
}

int cmd_hash(int argc, char **argv)
{
	struct hash_job job = { 0 };
	struct cli_digest_opts o = CLI_DIGEST_OPTS_INIT;
	unsigned int flags = 0;
	struct cli_parser p;
	int c, taken, err;

	cli_walk_init(&job.walk, "hash", &hash_ops, &job, sizeof(struct hash_result));
	cli_parse_start(&p, &hash_spec, argc, argv);
	while ((c = cli_parse_next(&p)) != CLI_OPT_END) {
		switch (c) {
		case CLI_OPT_XATTR_USER:
			flags |= IMASTREAM_XATTR_WRITE_USER;
			break;
		case CLI_OPT_HELP:
			return CLI_OK;
		default:
			taken = cli_digest_option(&p, c, &o);
			if (!taken)
				taken = cli_walk_option(&job.walk, &p, c);
			if (taken <= 0)
				return CLI_USAGE;
		}
	}
	if (cli_parse_operands(&p) >= argc)
		return cli_usage_error("hash", "no PATH given");
	cli_set_verbose(job.walk.say.verbose);
	job.write = !o.dry_run && !o.verity;
	job.names = !o.no_names && !cli_evmctl_name;
	/* evmctl prints no progress and no summary: its stderr is the "hash(ALGO): " parts. */
	if (cli_evmctl_name)
		job.walk.say.show = 0;
	job.verity = o.verity;
	/* sign checks -a alike, in its own words: it refuses sm3 (SM2 keys only). */
	job.algo = imastream_hash_by_name(o.algo_name);
	if (!job.algo)
		return cli_usage_error("hash",
				       "unknown hash algorithm '%s' (md5, sha1, sha224, "
				       "sha256, sha384, sha512, sm3)",
				       o.algo_name);
	if (cli_check_weak_algo("hash", job.algo->algo, o.allow_weak) != CLI_OK)
		return CLI_USAGE;
	if (job.verity && o.algo_given && job.algo->algo != IMASTREAM_HASH_SHA256)
		return cli_usage_error("hash", "--verity digests are sha256 only, not %s",
				       job.algo->name);
	if (job.verity && flags)
		return cli_usage_error("hash", "--verity writes no attribute: --xattr-user "
					       "has nothing to do");
	imastream_xattr_writer_init(&job.writer, flags, &cli_log);
	err = make_hashers(&job, job.walk.jobs);
	if (!err)
		err = cli_walk_start(&job.walk);
	if (err) {
		cli_walk_finish(&job.walk);
		free_hashers(&job);
		return CLI_FAILED; /* the library said why */
	}
	cli_walk_paths(&job.walk, argv + cli_parse_operands(&p), argc - cli_parse_operands(&p));
	cli_digests_say(&job.walk, &job.workers[0].digests, sizeof(job.workers[0]));
	free_hashers(&job);
	cli_line_free(&job.line);
	return job.walk.failed ? CLI_FAILED : CLI_OK;
}
