/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file digests of a walk's run of files: the small files read whole and hashed in one batch. */
#ifndef IMASTREAM_CLI_DIGESTS_H
#define IMASTREAM_CLI_DIGESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/walk.h"
#include "imastream/hash.h"
#include "imastream/verity.h"

/*
 * A file of at most this many bytes is read whole in one read(2) and hashed with the
 * others of its run in one imastream_hash_batch() call, so that SHA-256 goes through the
 * SIMD lanes; a larger one is streamed through imastream_hash_fd() (a file that grew past
 * this since the walk saw it is streamed too).  64 KiB: a run of 16 such files is 1 MiB
 * of buffer per worker, and above it a file's read costs more than its share of a batch saves.
 */
#define CLI_SMALL_FILE (64u * 1024)

/* The batch backends that may hash a run, plus "streamed": a small fixed table. */
#define CLI_DIGESTS_COUNTS 8

struct cli_digests_count {
	const char *backend; /* a backend's name, or NULL for the files streamed one at a time */
	unsigned long files;
};

/* One worker's: its own hasher, a run's buffers, and how many files each backend hashed. */
struct cli_digests {
	struct imastream_hasher *hasher;
	int algo;
	struct imastream_verity *verity; /* fs-verity digests instead (no hasher then) */
	bool batch;   /* false: every file streamed, as IMASTREAM_FILE_BATCH=1 asks */
	uint8_t *buf; /* CLI_WALK_RUN slots of CLI_SMALL_FILE + 1 bytes */
	struct imastream_hash_msg msgs[CLI_WALK_RUN];
	uint8_t digest[CLI_WALK_RUN][IMASTREAM_HASH_MAX_DIGEST];
	struct cli_digests_count counts[CLI_DIGESTS_COUNTS];
};

/* What hash and sign take alike about the digest and their output lines. */
struct cli_digest_opts {
	const char *algo_name; /* -a ALGO, "sha256" unless given */
	bool algo_given;
	bool allow_weak; /* --allow-weak */
	bool verity;	 /* --verity: the fs-verity digest */
	bool dry_run;	 /* -n: write nothing */
	bool no_names;	 /* --no-names: the values alone */
};
#define CLI_DIGEST_OPTS_INIT ((struct cli_digest_opts){ .algo_name = "sha256" })

/* Takes option @c into @o: 1 when it was one of them, else 0. */
int cli_digest_option(const struct cli_parser *p, int c, struct cli_digest_opts *o);

/*
 * Sets @d up with a hasher of @algo of its own, or with @verity an fs-verity context
 * (imastream_verity_batch()), which log to @log; and for a walk @w: its small_max, and
 * batching unless its runs are of one file.  Free with cli_digests_free(), also after a
 * failure.  Return: 0, or an error (the library said why, or -ENOMEM said).
 */
int cli_digests_new(struct cli_digests *d, bool verity, int algo, const struct imastream_log *log,
		    struct cli_walk *w);
/* Frees what @d holds; a zeroed one is fine. */
void cli_digests_free(struct cli_digests *d);

/*
 * The digests of the @n files of @items: @digest[i] points to it (valid until the next
 * run), or is NULL after one line on stderr that names the file; the other files of the
 * run are still done.
 */
void cli_digests_run(struct cli_digests *d, struct cli_item **items, size_t n,
		     const uint8_t *digest[]);

/*
 * With -v, once the walk @w is over, on stderr: "CMD: digests of N files: A in avx512-16x
 * batches, B streamed one at a time", the sum over its jobs' contexts: @first, and each
 * next one @stride bytes on (the member of each entry of a command's worker array).
 */
void cli_digests_say(const struct cli_walk *w, const struct cli_digests *first, size_t stride);

#endif /* IMASTREAM_CLI_DIGESTS_H */
