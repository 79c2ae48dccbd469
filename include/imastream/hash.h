/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Hash algorithm identities and the streaming multi-digest engine (hashers/). */
#ifndef IMASTREAM_HASH_H
#define IMASTREAM_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Algorithms are named by the kernel's enum hash_algo (include/uapi/linux/hash_info.h):
 * that is the byte IMA and EVM store, so it is our canonical id.
 */
enum imastream_hash_algo {
	IMASTREAM_HASH_MD5 = 1,
	IMASTREAM_HASH_SHA1 = 2,
	IMASTREAM_HASH_SHA256 = 4,
	IMASTREAM_HASH_SHA384 = 5,
	IMASTREAM_HASH_SHA512 = 6,
	IMASTREAM_HASH_SHA224 = 7,
	IMASTREAM_HASH_SM3 = 17,
};

#define IMASTREAM_HASH_MAX_DIGEST 64
/* One bit per kernel id; ids are below 32. */
#define IMASTREAM_HASH_BIT(algo) (1u << (algo))

/* One row of the algorithm table. */
struct imastream_hash_info {
	int algo;                 /* enum imastream_hash_algo (kernel hash_algo id) */
	const char *name;         /* kernel and evmctl name: "sha256" */
	const char *openssl_name; /* name for EVP_MD_fetch */
	int rpm_id;               /* rpm PGPHASHALGO_* (RPMTAG_FILEDIGESTALGO), 0 if none */
	unsigned int digest_size;
	unsigned int block_size;
};

/* Lookups return NULL for an unknown algorithm; name matching ignores case. */
IMASTREAM_API const struct imastream_hash_info *imastream_hash_by_algo(int algo);
IMASTREAM_API const struct imastream_hash_info *imastream_hash_by_name(const char *name);
IMASTREAM_API const struct imastream_hash_info *imastream_hash_by_rpm_id(int rpm_id);

/**
 * struct imastream_hasher - computes several digests of one stream in one pass
 *
 * Created once with a set of algorithms, then reused for any number of files:
 * imastream_hasher_reset() → update()* → final() → digest().  Steady state allocates
 * nothing.  Not thread-safe; use one per thread.
 */
struct imastream_hasher;

/**
 * imastream_hasher_new - create a multi-digest context
 * @algo_mask: IMASTREAM_HASH_BIT() of each wanted algorithm (at least one)
 * @log: where to explain failures (may be NULL)
 * @ret: the new context, freed with imastream_hasher_free()
 *
 * Return: 0, -EINVAL for an empty mask or an algorithm the table does not know,
 * -EOPNOTSUPP when this OpenSSL cannot provide an algorithm (sm3), -ENOMEM.
 * The context is ready for update() (reset() is implied).
 */
IMASTREAM_API int imastream_hasher_new(uint32_t algo_mask, const struct imastream_log *log,
				       struct imastream_hasher **ret);
IMASTREAM_API void imastream_hasher_free(struct imastream_hasher *h);
/* Starts a new stream; always allowed.  Return: 0 or -EIO. */
IMASTREAM_API int imastream_hasher_reset(struct imastream_hasher *h);
/* Feeds @len bytes.  Return: 0, -EINVAL after final() (until reset()), -EIO. */
IMASTREAM_API int imastream_hasher_update(struct imastream_hasher *h, const void *buf, size_t len);
/* Ends the stream and computes every digest.  Return: 0, -EINVAL if already final. */
IMASTREAM_API int imastream_hasher_final(struct imastream_hasher *h);
/**
 * imastream_hasher_digest - one digest of the finished stream
 * @digest_ret: points into @h; valid until the next reset() or free()
 * @len_ret: the digest size (may be NULL)
 * Return: 0, -EINVAL if @algo was not in the mask or final() has not run.
 */
IMASTREAM_API int imastream_hasher_digest(const struct imastream_hasher *h, int algo,
					  const uint8_t **digest_ret, size_t *len_ret);
/* Total bytes fed since the last reset(). */
IMASTREAM_API uint64_t imastream_hasher_length(const struct imastream_hasher *h);

/**
 * imastream_hash_fd - hash a whole file from its current offset in large reads
 * @h: a context; it is reset first and final on success
 * @fd: a readable descriptor
 *
 * Reads go through a buffer owned by @h, allocated on the first call and kept.
 * Return: 0, -errno of read(2), -ENOMEM for that buffer, or an update() error.
 */
IMASTREAM_API int imastream_hash_fd(struct imastream_hasher *h, int fd);

/*
 * Batch hashing of independent messages with one algorithm: the shape that multi-lane
 * backends (interleaved SHA-NI, AVX-512) accelerate.  Backends are chosen once per
 * context by CPU features; the portable one (OpenSSL, one message at a time) is the
 * reference that tests compare every other backend against.
 *
 * Room to grow: the messages come as an array, whose layout is the caller's sizeof, so
 * the size is one argument of the call (@msg_size, sizeof(struct imastream_hash_msg)),
 * not a member of each message: one check per batch, and the array stays as dense as
 * the lanes read it.  Members are only ever added at the end, a zero one meaning "as
 * before".
 */
struct imastream_hash_msg {
	const void *data;
	size_t len;
	uint8_t *digest; /* out: digest_size bytes */
};

/**
 * imastream_hash_batch - digest @n independent messages with @algo
 * @h: a context whose mask includes @algo; its stream (update/final state) is untouched
 * @msgs: @n messages; each digest buffer receives digest_size bytes
 * @msg_size: sizeof(struct imastream_hash_msg) as the caller was built with: the stride
 *            of @msgs
 *
 * Every message is checked before any digest is written.  A @msg_size other than this
 * library's (a program built with an older or newer header) works: the messages are
 * copied into the library's layout, a run at a time.
 * Return: 0, -EINVAL for an algorithm not in @h's mask, a @msg_size below the first
 * version's (0 included) or not a multiple of the struct's alignment, a NULL @msgs with
 * @n > 0, or a message with NULL data (and len > 0) or a NULL digest; -E2BIG for a newer
 * caller's message that sets a member this library does not know; -ENOMEM, -EIO.  Each
 * refusal is said in one line.
 */
IMASTREAM_API int imastream_hash_batch(struct imastream_hasher *h, int algo,
				       struct imastream_hash_msg *msgs, size_t n, size_t msg_size);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_HASH_H */
