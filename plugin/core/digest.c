// SPDX-License-Identifier: LGPL-2.1-or-later
/* Glue between the chain and the hashers/ engine: one engine per chain, every wanted digest in one pass. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/core/private.h"

struct ims_digest_engine {
	struct imastream_hasher *hasher;
	uint32_t algos;
};

int ims_digest_engine_new(uint32_t algos, const struct imastream_log *log,
			  struct ims_digest_engine **ret)
{
	struct ims_digest_engine *e;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->algos = algos;
	err = imastream_hasher_new(algos, log, &e->hasher);
	if (err) {
		free(e);
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
	free(e);
}

int ims_digest_stream_start(struct ims_digest_engine *e)
{
	if (!e)
		return -EOPNOTSUPP;
	return imastream_hasher_reset(e->hasher);
}

int ims_digest_stream_feed(struct ims_digest_engine *e, const void *buf, size_t len)
{
	if (!e)
		return -EOPNOTSUPP;
	return imastream_hasher_update(e->hasher, buf, len);
}

int ims_digest_finish(struct ims_digest_engine *e, int fd, struct ims_file_digest *out,
		      unsigned int max, unsigned int *n_ret)
{
	unsigned int n = 0;
	int err;

	if (!e)
		return -EOPNOTSUPP;
	/* hash_fd resets, reads in large chunks and finalises: one pass for every algorithm. */
	err = fd >= 0 ? imastream_hash_fd(e->hasher, fd) : imastream_hasher_final(e->hasher);
	if (err)
		return err;
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
