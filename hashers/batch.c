// SPDX-License-Identifier: LGPL-2.1-or-later
/* Batch hashing of independent messages: backend dispatch and the portable OpenSSL backend. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "common/private.h"
#include "hashers/backend.h"
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
	.env_name = "portable",
	.algo = 0,
	.cpu_needed = 0,
	.hash = batch_openssl,
};

/*
 * Best first; the portable backend ends every search.  Measured with bench/bench_hash.c on
 * an AVX-512 + SHA-NI core, 32 messages of 4 KiB, vs OpenSSL one at a time: 16 AVX-512
 * lanes 2.02x, two SHA-NI streams 1.50x, 8 AVX2 lanes 0.73x.  So AVX2 only serves CPUs
 * without SHA-NI, and a batch too small to fill the wide lanes goes to the next backend.
 */
const struct ims_batch_backend *const ims_batch_backends[] = {
#ifdef HAVE_AVX512
	&ims_batch_sha256_avx512_x16,
#endif
#ifdef HAVE_SHANI
	&ims_batch_sha256_shani_x2,
#endif
#ifdef HAVE_AVX2
	&ims_batch_sha256_avx2_x8,
#endif
	&backend_openssl,
};
const size_t ims_batch_nbackends = ARRAY_SIZE(ims_batch_backends);

int ims_hasher_force_batch(struct imastream_hasher *h, int algo, const char *env_name)
{
	struct ims_hash_lane *lane = ims_hasher_lane(h, algo);

	for (size_t b = 0; b < ARRAY_SIZE(ims_batch_backends); b++) {
		const struct ims_batch_backend *be = ims_batch_backends[b];

		if (strcmp(be->env_name, env_name) != 0)
			continue;
		if (!lane || (be->algo != 0 && be->algo != algo))
			return -EINVAL;
		if ((be->cpu_needed & h->cpu) != be->cpu_needed)
			return -EOPNOTSUPP;
		lane->batch = be;
		lane->small = NULL; /* forced means every batch, so tests see partial lanes too */
		return 0;
	}
	return -ENOENT;
}

/* IMASTREAM_HASH_BACKEND: lanes the named backend can do use it; a backend this CPU cannot run fails. */
static int pick_forced(struct imastream_hasher *h, const char *env_name)
{
	int err = -EINVAL;

	for (unsigned int i = 0; i < h->nlanes; i++) {
		int e = ims_hasher_force_batch(h, h->lanes[i].info->algo, env_name);

		if (e == -EINVAL)
			continue;
		if (e == -ENOENT)
			return ims_err(&h->log, e,
				       "hasher: %s=%s: no such batch backend in this build "
				       "(portable, shani, avx2, avx512)", IMS_HASH_BACKEND_ENV, env_name);
		if (e == -EOPNOTSUPP)
			return ims_err(&h->log, e,
				       "hasher: %s=%s: this CPU lacks the backend's instructions",
				       IMS_HASH_BACKEND_ENV, env_name);
		err = 0;
	}
	/* A backend for an algorithm this context does not hash leaves the dispatch alone. */
	return err == -EINVAL ? 0 : err;
}

static bool backend_fits(const struct ims_batch_backend *be, int algo, unsigned int cpu)
{
	return (be->algo == 0 || be->algo == algo) && (be->cpu_needed & cpu) == be->cpu_needed;
}

/* The best backend for each lane, and for small batches the best one after it with no minimum. */
static void pick_by_cpu(struct imastream_hasher *h, unsigned int cpu)
{
	for (unsigned int i = 0; i < h->nlanes; i++) {
		struct ims_hash_lane *lane = &h->lanes[i];
		size_t b = 0;

		lane->batch = &backend_openssl;
		lane->small = NULL;
		for (; b < ARRAY_SIZE(ims_batch_backends); b++) {
			if (backend_fits(ims_batch_backends[b], lane->info->algo, cpu)) {
				lane->batch = ims_batch_backends[b];
				break;
			}
		}
		while (lane->batch->min_batch && ++b < ARRAY_SIZE(ims_batch_backends)) {
			const struct ims_batch_backend *be = ims_batch_backends[b];

			if (!be->min_batch && backend_fits(be, lane->info->algo, cpu)) {
				lane->small = be;
				break;
			}
		}
	}
}

int ims_hasher_pick_batch(struct imastream_hasher *h, unsigned int cpu)
{
	const char *forced = getenv(IMS_HASH_BACKEND_ENV);

	pick_by_cpu(h, cpu);
	return forced && *forced ? pick_forced(h, forced) : 0;
}

/* The test hook simulates a CPU: the environment's choice does not apply to it. */
void ims_hasher_set_cpu_features(struct imastream_hasher *h, unsigned int cpu)
{
	h->cpu = cpu;
	pick_by_cpu(h, cpu);
}

/* @n checked messages of our own layout, to the lane's backend for a batch of that many. */
static int hash_msgs(struct imastream_hasher *h, struct ims_hash_lane *lane,
		     struct imastream_hash_msg *msgs, size_t n)
{
	lane->last = n < lane->batch->min_batch && lane->small ? lane->small : lane->batch;
	return lane->last->hash(h, lane, msgs, n);
}

/* A caller built with another header: its messages copied into ours, a run at a time
 * (a run still fills the widest lanes). */
static int hash_resized(struct imastream_hasher *h, struct ims_hash_lane *lane,
			const void *msgs, size_t n, size_t msg_size)
{
	struct imastream_hash_msg own[64];
	int err = 0;

	for (size_t done = 0, m; done < n && !err; done += m) {
		m = n - done < ARRAY_SIZE(own) ? n - done : ARRAY_SIZE(own);
		ims_hash_msgs_copy(own, msgs, msg_size, done, m);
		err = hash_msgs(h, lane, own, m);
	}
	return err;
}

int imastream_hash_batch(struct imastream_hasher *h, int algo, struct imastream_hash_msg *msgs,
			 size_t n, size_t msg_size)
{
	struct ims_hash_lane *lane = ims_hasher_lane(h, algo);
	int err;

	if (!lane)
		return ims_err(&h->log, -EINVAL, "hasher: batch algorithm %d is not in this context",
			       algo);
	err = ims_hash_msgs_check(&h->log, "hasher", lane->info->name, msgs, n, msg_size);
	if (err)
		return err;
	/* The caller built with this header (every caller today) is hashed in place. */
	if (msg_size == sizeof(*msgs))
		return hash_msgs(h, lane, msgs, n);
	return hash_resized(h, lane, msgs, n, msg_size);
}

const char *imastream_hash_batch_backend(const struct imastream_hasher *h, int algo)
{
	const struct ims_hash_lane *lane = ims_hasher_lane(h, algo);

	return lane ? lane->batch->name : NULL;
}

const char *imastream_hash_batch_last_backend(const struct imastream_hasher *h, int algo)
{
	const struct ims_hash_lane *lane = ims_hasher_lane(h, algo);

	return lane && lane->last ? lane->last->name : NULL;
}

void ims_sha256_msg_runs(const uint8_t *data, size_t len, uint8_t tail[128],
			 const uint8_t *run[2], size_t blocks[2], unsigned int *cur)
{
	size_t whole = len / 64, rem = len % 64;
	/* 0x80, then the bit length in the last 8 bytes: one block if they fit, else two. */
	size_t tail_len = rem + 1 + 8 <= 64 ? 64 : 128;
	uint64_t bits = (uint64_t)len << 3;

	memset(tail, 0, tail_len);
	if (rem)
		memcpy(tail, data + whole * 64, rem);
	tail[rem] = 0x80;
	ims_put_be32(tail + tail_len - 8, (uint32_t)(bits >> 32));
	ims_put_be32(tail + tail_len - 4, (uint32_t)bits);
	run[0] = data;
	blocks[0] = whole;
	run[1] = tail;
	blocks[1] = tail_len / 64;
	*cur = whole ? 0 : 1;
}

/* FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the
 * first 64 primes; aligned for the SHA-NI backend's 16-byte loads. */
const uint32_t ims_sha256_k[64] __attribute__((aligned(64))) = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

/* §5.3.3: the initial hash value. */
const uint32_t ims_sha256_iv[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};
