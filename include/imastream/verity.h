/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fs-verity file digests computed incrementally from a stream, the level-0 blocks in SIMD lanes (hashers/). */
#ifndef IMASTREAM_VERITY_H
#define IMASTREAM_VERITY_H

#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"
#include "imastream/hash.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The digest `fsverity digest` prints and FS_IOC_MEASURE_VERITY returns for a file with
 * fs-verity's defaults: SHA-256 over a Merkle tree of 4 KiB blocks without salt, then
 * SHA-256 of the 256-byte fs-verity descriptor (version 1, algorithm, log2 block size,
 * salt size 0, data size, root hash).  IMA's digest_type=verity signs this value.
 */
#define IMASTREAM_VERITY_DIGEST_SIZE 32
#define IMASTREAM_VERITY_BLOCK_SIZE 4096
/* fs-verity's number for SHA-256 (FS_VERITY_HASH_ALG_SHA256), as in "sha256:HEX". */
#define IMASTREAM_VERITY_HASH_SHA256 1

/**
 * struct imastream_verity - the fs-verity digest of one stream at a time
 *
 * Created once, reused for any number of files: reset() → update()* → final().  Bytes
 * are fed in any chunk sizes, once (no second read of the file); whole data blocks are
 * hashed in batches through imastream_hash_batch(), so the multi-lane backends
 * (IMASTREAM_HASH_BACKEND) do the work, and each tree block is hashed as it fills.
 * Steady state allocates nothing.  Not thread-safe; use one per thread.
 */
struct imastream_verity;

/**
 * imastream_verity_new - create a context, ready for update()
 * @log: where to explain failures (may be NULL)
 * Return: 0, -ENOMEM, or an imastream_hasher_new() error (a backend that
 * IMASTREAM_HASH_BACKEND names but this CPU cannot run: -EOPNOTSUPP).
 */
IMASTREAM_API int imastream_verity_new(const struct imastream_log *log,
				       struct imastream_verity **ret);
IMASTREAM_API void imastream_verity_free(struct imastream_verity *v);
/* Starts a new stream; always allowed. */
IMASTREAM_API void imastream_verity_reset(struct imastream_verity *v);
/* Feeds @len bytes.  Return: 0, -EINVAL after final() (until reset()), -EIO. */
IMASTREAM_API int imastream_verity_update(struct imastream_verity *v, const void *buf,
					  size_t len);
/**
 * imastream_verity_final - end the stream and compute its fs-verity digest
 * @digest: receives IMASTREAM_VERITY_DIGEST_SIZE bytes
 * Return: 0, -EINVAL if already final, -EIO.
 */
IMASTREAM_API int imastream_verity_final(struct imastream_verity *v,
					 uint8_t digest[IMASTREAM_VERITY_DIGEST_SIZE]);
/* Total bytes fed since the last reset(): the descriptor's data size. */
IMASTREAM_API uint64_t imastream_verity_length(const struct imastream_verity *v);
/**
 * imastream_verity_fd - the fs-verity digest of a file from its current offset
 * Reads in large chunks into a buffer owned by @v (allocated on the first call and
 * kept), so that the blocks are hashed where they were read.
 * Return: 0, -errno of read(2), -ENOMEM for that buffer, or an update()/final() error.
 */
IMASTREAM_API int imastream_verity_fd(struct imastream_verity *v, int fd,
				      uint8_t digest[IMASTREAM_VERITY_DIGEST_SIZE]);
/**
 * imastream_verity_batch - the fs-verity digests of @n whole files held in memory
 * @msgs: one per file: its bytes (@data, @len) and where its digest goes (@digest,
 *        IMASTREAM_VERITY_DIGEST_SIZE bytes)
 * @msg_size: sizeof(struct imastream_hash_msg), as imastream_hash_batch() takes it
 *
 * Each file's tree is its own, but the hashing goes across files: the data blocks of
 * up to 16 files in one imastream_hash_batch() call, then their tree blocks, then their
 * descriptors, so that files of a few blocks still fill the lanes.  A file over 512 KiB
 * (more than one tree block) is streamed alone.  Ends any stream of @v (as reset()).
 * Return: 0, -EINVAL for a @msg_size that is no struct's size (0 included), a NULL @msgs
 * with @n > 0 or a message with NULL data (and len > 0) or a NULL digest (no digest is
 * written then), -E2BIG as imastream_hash_batch(), -ENOMEM, -EIO.
 */
IMASTREAM_API int imastream_verity_batch(struct imastream_verity *v,
					 struct imastream_hash_msg *msgs, size_t n,
					 size_t msg_size);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_VERITY_H */
