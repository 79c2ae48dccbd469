// SPDX-License-Identifier: LGPL-2.1-or-later
/* The streaming multi-digest engine: several digests of one stream in one pass over the bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/private.h"
#include "hashers/backend.h"
#include "hashers/private.h"

static void lane_release(struct ims_hash_lane *lane)
{
	EVP_MD_CTX_free(lane->ctx);
	EVP_MD_CTX_free(lane->batch_ctx);
	EVP_MD_free(lane->md);
	memset(lane, 0, sizeof(*lane));
}

/* Fetches the implementation once per lane, not per message. */
static int lane_setup(struct imastream_hasher *h, struct ims_hash_lane *lane,
		      const struct imastream_hash_info *info)
{
	int err = 0;

	lane->info = info;
	lane->md = ims_hash_fetch(info->algo, &h->log, &err);
	if (!lane->md)
		return err;
	lane->ctx = EVP_MD_CTX_new();
	lane->batch_ctx = EVP_MD_CTX_new();
	if (!lane->ctx || !lane->batch_ctx)
		return ims_openssl_err(&h->log, -ENOMEM, "hasher: no memory for a %s context",
				       info->name);
	return 0;
}

int imastream_hasher_new(uint32_t algo_mask, const struct imastream_log *log,
			 struct imastream_hasher **ret)
{
	struct imastream_hasher *h = NULL;
	const struct imastream_hash_info *info;
	uint32_t known = 0;
	int err = 0;

	for (unsigned int i = 0; (info = imastream_hash_info_at(i)) != NULL; i++)
		known |= IMASTREAM_HASH_BIT(info->algo);
	if (!algo_mask || (algo_mask & ~known))
		return ims_err(log, -EINVAL, "hasher: %s algorithm mask 0x%x",
			       algo_mask ? "unknown algorithm in" : "empty", algo_mask);

	h = calloc(1, sizeof(*h));
	if (!h)
		return ims_err(log, -ENOMEM, "hasher: no memory for a context");
	if (log)
		h->log = *log;
	h->mask = algo_mask;
	memset(h->lane_of, -1, sizeof(h->lane_of));
	for (unsigned int i = 0; (info = imastream_hash_info_at(i)) != NULL; i++) {
		if (!(algo_mask & IMASTREAM_HASH_BIT(info->algo)))
			continue;
		if (h->nlanes == IMS_HASH_MAX_LANES) {
			/* The table grew past lanes[]: raise IMS_HASH_MAX_LANES. */
			err = ims_err(log, -EINVAL, "hasher: more than %d algorithms",
				      IMS_HASH_MAX_LANES);
			goto out;
		}
		err = lane_setup(h, &h->lanes[h->nlanes], info);
		h->lane_of[info->algo] = (int8_t)h->nlanes++;
		if (err)
			goto out;
	}
	h->cpu = ims_cpu_features();
	err = ims_hasher_pick_batch(h, h->cpu);
	if (!err)
		err = imastream_hasher_reset(h);
out:
	if (err) {
		imastream_hasher_free(h);
		return err;
	}
	*ret = h;
	return 0;
}

void imastream_hasher_free(struct imastream_hasher *h)
{
	if (!h)
		return;
	for (unsigned int i = 0; i < h->nlanes; i++)
		lane_release(&h->lanes[i]);
	free(h->readbuf);
	free(h);
}

int imastream_hasher_reset(struct imastream_hasher *h)
{
	h->length = 0;
	h->state = IMS_HASHER_OPEN;
	for (unsigned int i = 0; i < h->nlanes; i++) {
		if (!EVP_DigestInit_ex2(h->lanes[i].ctx, h->lanes[i].md, NULL)) {
			h->state = IMS_HASHER_FAILED;
			return ims_openssl_err(&h->log, -EIO, "hasher: cannot start %s",
					       h->lanes[i].info->name);
		}
	}
	return 0;
}

int imastream_hasher_update(struct imastream_hasher *h, const void *buf, size_t len)
{
	if (h->state != IMS_HASHER_OPEN)
		return ims_err(&h->log, h->state == IMS_HASHER_FAILED ? -EIO : -EINVAL,
			       "hasher: update on a %s stream without reset",
			       h->state == IMS_HASHER_FAILED ? "failed" : "finished");
	if (!buf && len)
		return ims_err(&h->log, -EINVAL, "hasher: update with NULL data");
	for (unsigned int i = 0; i < h->nlanes; i++) {
		if (!EVP_DigestUpdate(h->lanes[i].ctx, buf, len)) {
			h->state = IMS_HASHER_FAILED;
			return ims_openssl_err(&h->log, -EIO, "hasher: %s update failed",
					       h->lanes[i].info->name);
		}
	}
	h->length += len;
	return 0;
}

int imastream_hasher_final(struct imastream_hasher *h)
{
	if (h->state != IMS_HASHER_OPEN)
		return ims_err(&h->log, h->state == IMS_HASHER_FAILED ? -EIO : -EINVAL,
			       "hasher: final on a %s stream without reset",
			       h->state == IMS_HASHER_FAILED ? "failed" : "finished");
	for (unsigned int i = 0; i < h->nlanes; i++) {
		if (!EVP_DigestFinal_ex(h->lanes[i].ctx, h->lanes[i].digest, NULL)) {
			h->state = IMS_HASHER_FAILED;
			return ims_openssl_err(&h->log, -EIO, "hasher: %s final failed",
					       h->lanes[i].info->name);
		}
	}
	h->state = IMS_HASHER_FINAL;
	return 0;
}

int imastream_hasher_digest(const struct imastream_hasher *h, int algo,
			    const uint8_t **digest_ret, size_t *len_ret)
{
	const struct ims_hash_lane *lane = ims_hasher_lane(h, algo);

	if (!lane)
		return ims_err(&h->log, -EINVAL, "hasher: algorithm %d is not in this context",
			       algo);
	if (h->state != IMS_HASHER_FINAL)
		return ims_err(&h->log, -EINVAL, "hasher: %s digest asked before final",
			       lane->info->name);
	*digest_ret = lane->digest;
	if (len_ret)
		*len_ret = lane->info->digest_size;
	return 0;
}

uint64_t imastream_hasher_length(const struct imastream_hasher *h)
{
	return h->length;
}

int imastream_hash_fd(struct imastream_hasher *h, int fd)
{
	ssize_t n;
	int err;

	if (!h->readbuf) {
		h->readbuf = malloc(IMS_HASH_READ_CHUNK);
		if (!h->readbuf)
			return ims_err(&h->log, -ENOMEM, "hasher: no memory for the read buffer");
	}
	err = imastream_hasher_reset(h);
	if (err)
		return err;
	for (;;) {
		n = read(fd, h->readbuf, IMS_HASH_READ_CHUNK);
		if (n == 0)
			break;
		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			return ims_err(&h->log, -e, "hasher: read of fd %d failed: %s", fd,
				       strerror(e));
		}
		err = imastream_hasher_update(h, h->readbuf, (size_t)n);
		if (err)
			return err;
	}
	return imastream_hasher_final(h);
}
