// SPDX-License-Identifier: LGPL-2.1-or-later
/* Batch hashing of independent messages: backend dispatch and the portable OpenSSL backend. */
#include <errno.h>

#include <openssl/evp.h>

#include "common/private.h"
#include "hashers/private.h"

/* The reference: one message at a time through the lane's own OpenSSL context. */
static int batch_openssl(struct imastream_hasher *h, struct ims_hash_lane *lane,
			 struct imastream_hash_msg *msgs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!EVP_DigestInit_ex2(lane->batch_ctx, lane->md, NULL) ||
		    !EVP_DigestUpdate(lane->batch_ctx, msgs[i].data, msgs[i].len) ||
		    !EVP_DigestFinal_ex(lane->batch_ctx, msgs[i].digest, NULL))
			return ims_openssl_err(&h->log, -EIO, "hasher: %s batch message %zu failed",
					       lane->info->name, i);
	}
	return 0;
}

static const struct ims_batch_backend backend_openssl = {
	.name = "openssl",
	.algo = 0,
	.cpu_needed = 0,
	.hash = batch_openssl,
};

/* Best first; the portable backend ends every search. */
static const struct ims_batch_backend *const backends[] = {
#ifdef HAVE_SHANI
	&ims_batch_sha256_shani_x2,
#endif
	&backend_openssl,
};

void ims_hasher_pick_batch(struct imastream_hasher *h, unsigned int cpu)
{
	for (unsigned int i = 0; i < h->nlanes; i++) {
		struct ims_hash_lane *lane = &h->lanes[i];

		lane->batch = &backend_openssl;
		for (size_t b = 0; b < ARRAY_SIZE(backends); b++) {
			const struct ims_batch_backend *be = backends[b];

			if ((be->algo == 0 || be->algo == lane->info->algo) &&
			    (be->cpu_needed & cpu) == be->cpu_needed) {
				lane->batch = be;
				break;
			}
		}
	}
}

void ims_hasher_set_cpu_features(struct imastream_hasher *h, unsigned int cpu)
{
	h->cpu = cpu;
	ims_hasher_pick_batch(h, cpu);
}

int imastream_hash_batch(struct imastream_hasher *h, int algo, struct imastream_hash_msg *msgs,
			 size_t n)
{
	struct ims_hash_lane *lane = ims_hasher_lane(h, algo);

	if (!lane)
		return ims_err(&h->log, -EINVAL, "hasher: batch algorithm %d is not in this context",
			       algo);
	if (!msgs && n)
		return ims_err(&h->log, -EINVAL, "hasher: %s batch without messages",
			       lane->info->name);
	/* Check every message first, so that a bad one leaves no digest half-written. */
	for (size_t i = 0; i < n; i++)
		if ((!msgs[i].data && msgs[i].len) || !msgs[i].digest)
			return ims_err(&h->log, -EINVAL, "hasher: %s batch message %zu has a NULL %s",
				       lane->info->name, i, msgs[i].digest ? "data" : "digest");
	return lane->batch->hash(h, lane, msgs, n);
}

const char *imastream_hash_batch_backend(const struct imastream_hasher *h, int algo)
{
	const struct ims_hash_lane *lane = ims_hasher_lane(h, algo);

	return lane ? lane->batch->name : NULL;
}
