// SPDX-License-Identifier: LGPL-2.1-or-later
/* Glue between the chain and the hashers/ engine: one engine per chain, every wanted digest (and the fs-verity one) in one pass. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imastream/verity.h"
#include "plugin/core/private.h"

/* Re-read chunk when both the hasher and the verity tree take the bytes. */
#define REREAD_CHUNK (1u << 20)

struct ims_digest_engine {
	struct imastream_hasher *hasher;
	uint32_t algos;
	struct imastream_verity *verity; /* verity = on only */
	bool plain;                      /* this stream feeds the hasher too */
	uint8_t *buf;                    /* REREAD_CHUNK, made on the first re-read */
};

int ims_digest_engine_new(uint32_t algos, bool verity, const struct imastream_log *log,
			  struct ims_digest_engine **ret)
{
	struct ims_digest_engine *e;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->algos = algos;
	err = imastream_hasher_new(algos, log, &e->hasher);
	if (!err && verity)
		err = imastream_verity_new(log, &e->verity);
	if (err) {
		ims_digest_engine_free(e);
		return err;
	}
	*ret = e;
	return 0;
}

void ims_digest_engine_free(struct ims_digest_engine *e)
{
	if (!e)
		return;
	imastream_hasher_free(e->hasher);
	imastream_verity_free(e->verity);
	free(e->buf);
	free(e);
}

int ims_digest_stream_start(struct ims_digest_engine *e, bool plain)
{
	if (!e)
		return -EOPNOTSUPP;
	/* Without a verity tree there is nothing else to compute: the hasher always runs. */
	e->plain = plain || !e->verity;
	if (e->verity)
		imastream_verity_reset(e->verity);
	return imastream_hasher_reset(e->hasher);
}

int ims_digest_stream_feed(struct ims_digest_engine *e, const void *buf, size_t len)
{
	int err;

	if (!e)
		return -EOPNOTSUPP;
	err = e->plain ? imastream_hasher_update(e->hasher, buf, len) : 0;
	if (!err && e->verity)
		err = imastream_verity_update(e->verity, buf, len);
	return err;
}

/* One read of @fd for the verity tree, and for the hasher too when @plain. */
static int reread_for_verity(struct ims_digest_engine *e, int fd, bool plain)
{
	ssize_t n;
	int err;

	if (!e->buf && !(e->buf = malloc(REREAD_CHUNK)))
		return -ENOMEM;
	err = ims_digest_stream_start(e, plain);
	while (!err && (n = read(fd, e->buf, REREAD_CHUNK)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		err = ims_digest_stream_feed(e, e->buf, (size_t)n);
	}
	return err || !e->plain ? err : imastream_hasher_final(e->hasher);
}

int ims_digest_finish(struct ims_digest_engine *e, int fd, bool plain,
		      struct ims_file_digest *out, unsigned int max, unsigned int *n_ret,
		      uint8_t verity_out[IMASTREAM_VERITY_DIGEST_SIZE])
{
	unsigned int n = 0;
	int err;

	if (!e)
		return -EOPNOTSUPP;
	/* hash_fd resets, reads in large chunks and finalises: one pass for every algorithm. */
	if (fd >= 0)
		err = e->verity ? reread_for_verity(e, fd, plain) : imastream_hash_fd(e->hasher, fd);
	else
		err = e->plain ? imastream_hasher_final(e->hasher) : 0;
	if (!err && e->verity)
		err = imastream_verity_final(e->verity, verity_out);
	if (err)
		return err;
	if (e->verity && !e->plain) {
		*n_ret = 0; /* the stream or the re-read built the fs-verity tree alone */
		return 0;
	}
	for (int algo = 0; algo < 32; algo++) {
		const uint8_t *d;
		size_t len;

		if (!(e->algos & IMASTREAM_HASH_BIT(algo)))
			continue;
		if (n == max)
			return -E2BIG;
		err = imastream_hasher_digest(e->hasher, algo, &d, &len);
		if (err)
			return err;
		out[n].algo = algo;
		out[n].len = len;
		memcpy(out[n].value, d, len);
		n++;
	}
	*n_ret = n;
	return 0;
}
