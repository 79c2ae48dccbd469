// SPDX-License-Identifier: LGPL-2.1-or-later
/* Digests (or fs-verity digests) of a run of walked files: small ones read whole and hashed across files in one batch, large ones streamed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/digests.h"
#include "hashers/backend.h"

/* One more byte than a small file holds, so that a file that grew shows it. */
#define SLOT (CLI_SMALL_FILE + 1)

static int setup(struct cli_digests *d, struct cli_walk *w)
{
	d->batch = w->run > 1;
	if (d->batch) {
		d->buf = malloc((size_t)CLI_WALK_RUN * SLOT);
		if (!d->buf) {
			cli_error("out of memory");
			return -ENOMEM;
		}
		w->small_max = CLI_SMALL_FILE;
	}
	return 0;
}

int cli_digest_option(const struct cli_parser *p, int c, struct cli_digest_opts *o)
{
	switch (c) {
	case CLI_OPT_HASH_ALGO:
		o->algo_name = p->arg;
		o->algo_given = true;
		return 1;
	case CLI_OPT_ALLOW_WEAK:
		o->allow_weak = true;
		return 1;
	case CLI_OPT_VERITY:
		o->verity = true;
		return 1;
	case CLI_OPT_DRY_RUN:
		o->dry_run = true;
		return 1;
	case CLI_OPT_NO_NAMES:
		o->no_names = true;
		return 1;
	default:
		return 0;
	}
}

int cli_digests_new(struct cli_digests *d, bool verity, int algo, const struct imastream_log *log,
		    struct cli_walk *w)
{
	int err;

	*d = (struct cli_digests){ .algo = algo };
	err = verity ? imastream_verity_new(log, &d->verity) :
		       imastream_hasher_new(IMASTREAM_HASH_BIT(algo), log, &d->hasher);
	if (err)
		return err; /* the library said why */
	return setup(d, w);
}

void cli_digests_free(struct cli_digests *d)
{
	free(d->buf);
	d->buf = NULL;
	imastream_hasher_free(d->hasher);
	d->hasher = NULL;
	imastream_verity_free(d->verity);
	d->verity = NULL;
}

static void count(struct cli_digests *d, const char *backend, unsigned long files)
{
	for (size_t i = 0; i < CLI_DIGESTS_COUNTS; i++) {
		struct cli_digests_count *c = &d->counts[i];

		if (!c->files || c->backend == backend) {
			c->backend = backend;
			c->files += files;
			return;
		}
	}
}

/*
 * Reads the file of @fd into @buf (SLOT bytes).  Return: the bytes read, SLOT when the
 * file holds more than a small file (it grew since the walk), or -errno.  A read that
 * returns exactly the @size fstat gave, short of what was asked, is taken as the end:
 * that spares the second read(2) that only returns 0, most of a small file's cost after
 * open(2).  Any other short read is read on until 0, as imastream_hash_fd() does.
 */
static ssize_t read_small(int fd, uint8_t *buf, uint64_t size)
{
	size_t have = 0;

	for (;;) {
		ssize_t n = read(fd, buf + have, SLOT - have);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return (ssize_t)have;
		have += (size_t)n;
		if (have == SLOT || have == size)
			return (ssize_t)have;
	}
}

/* stream_rest() for an fs-verity digest. */
static int stream_rest_verity(struct cli_digests *d, int fd, const uint8_t *buf, size_t have,
			      uint8_t *out)
{
	uint8_t *rest;
	int err;

	if (!have)
		return imastream_verity_fd(d->verity, fd, out);
	rest = d->buf + (size_t)(CLI_WALK_RUN - 1) * SLOT;
	imastream_verity_reset(d->verity);
	err = imastream_verity_update(d->verity, buf, have);
	while (!err) {
		ssize_t n = read(fd, rest, SLOT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : imastream_verity_final(d->verity, out);
		err = imastream_verity_update(d->verity, rest, (size_t)n);
	}
	return err;
}

/* The digest of the open file @fd into @out, streamed after the @have bytes already in @buf. */
static int stream_rest(struct cli_digests *d, int fd, const uint8_t *buf, size_t have,
		       uint8_t *out)
{
	const uint8_t *digest;
	size_t len;
	int err;

	if (d->verity)
		return stream_rest_verity(d, fd, buf, have, out);
	if (!have) {
		err = imastream_hash_fd(d->hasher, fd);
	} else {
		uint8_t *rest = d->buf + (size_t)(CLI_WALK_RUN - 1) * SLOT;

		err = imastream_hasher_reset(d->hasher);
		if (!err)
			err = imastream_hasher_update(d->hasher, buf, have);
		while (!err) {
			ssize_t n = read(fd, rest, SLOT);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				err = n < 0 ? -errno : imastream_hasher_final(d->hasher);
				break;
			}
			err = imastream_hasher_update(d->hasher, rest, (size_t)n);
		}
	}
	if (!err)
		err = imastream_hasher_digest(d->hasher, d->algo, &digest, &len);
	if (!err)
		memcpy(out, digest, len);
	return err;
}

void cli_digests_run(struct cli_digests *d, struct cli_item **items, size_t n,
		     const uint8_t *digest[])
{
	size_t of[CLI_WALK_RUN], m = 0;
	int err;

	for (size_t i = 0; i < n; i++) {
		struct cli_item *it = items[i];
		uint8_t *slot = d->buf ? d->buf + i * SLOT : NULL;
		ssize_t have = 0;

		digest[i] = NULL;
		if (d->batch && it->size <= CLI_SMALL_FILE) {
			have = read_small(it->fd, slot, it->size);
			if (have >= 0 && have < SLOT) {
				d->msgs[m] = (struct imastream_hash_msg){ slot, (size_t)have,
									  d->digest[i] };
				of[m++] = i;
				continue;
			}
			if (have < 0) {
				cli_error("%s: cannot read: %s", it->path, strerror((int)-have));
				continue;
			}
		}
		/* A large file, or one that grew past a small one's size: streamed. */
		err = stream_rest(d, it->fd, slot, (size_t)have, d->digest[i]);
		if (err) {
			cli_error("%s: cannot read: %s", it->path, strerror(-err));
			continue;
		}
		digest[i] = d->digest[i];
		count(d, NULL, 1);
	}
	if (!m)
		return;
	err = d->verity ? imastream_verity_batch(d->verity, d->msgs, m, sizeof(d->msgs[0])) :
	      imastream_hash_batch(d->hasher, d->algo, d->msgs, m, sizeof(d->msgs[0]));
	if (err) {
		for (size_t k = 0; k < m; k++)
			cli_error("%s: hashing failed: %s", items[of[k]]->path, strerror(-err));
		return;
	}
	for (size_t k = 0; k < m; k++)
		digest[of[k]] = d->digest[of[k]];
	count(d, d->verity ? imastream_verity_backend(d->verity) :
	      imastream_hash_batch_last_backend(d->hasher, d->algo), m);
}

void cli_digests_say(const struct cli_walk *w, const struct cli_digests *first, size_t stride)
{
	struct cli_digests sum = { 0 };
	unsigned long total = 0;
	char msg[512];
	int len;

	if (!w->say.verbose)
		return;
	for (unsigned int j = 0; j < w->jobs; j++) {
		const struct cli_digests *d = (const void *)((const char *)first +
							     (size_t)j * stride);

		for (size_t i = 0; i < CLI_DIGESTS_COUNTS && d->counts[i].files; i++)
			count(&sum, d->counts[i].backend, d->counts[i].files);
	}
	for (size_t i = 0; i < CLI_DIGESTS_COUNTS; i++)
		total += sum.counts[i].files;
	len = snprintf(msg, sizeof(msg), "digests of %lu files:", total);
	for (size_t i = 0; i < CLI_DIGESTS_COUNTS && sum.counts[i].files; i++) {
		const struct cli_digests_count *c = &sum.counts[i];

		if (len < 0 || (size_t)len >= sizeof(msg))
			break;
		len += snprintf(msg + len, sizeof(msg) - (size_t)len, "%s %lu %s%s",
				i ? "," : "", c->files, c->backend ? "in " : "streamed one at a time",
				c->backend ? c->backend : "");
		if (c->backend && len >= 0 && (size_t)len < sizeof(msg))
			len += snprintf(msg + len, sizeof(msg) - (size_t)len, " batches");
	}
	cli_say(w->tally.cmd, "%s", msg);
}
