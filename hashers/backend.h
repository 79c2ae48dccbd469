/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What hashers/ offers beyond imastream/hash.h and imastream/verity.h, inside the build
 * only: the algorithm table by index (for the chain core's configuration checks) and the
 * names of the batch backends (for the command's -v and the benchmarks).
 */
#ifndef IMASTREAM_HASHERS_BACKEND_H
#define IMASTREAM_HASHERS_BACKEND_H

#include <stddef.h>

#include "imastream/hash.h"
#include "imastream/verity.h"

/* Iterates the table: returns row @i, or NULL past the end. */
const struct imastream_hash_info *imastream_hash_info_at(unsigned int i);

/* Name of the batch backend this context uses for @algo ("openssl", "shani-2x", ...),
 * or NULL when @algo is not in the context's mask.  The string is static. */
const char *imastream_hash_batch_backend(const struct imastream_hasher *h, int algo);

/* Name of the backend that hashed the last imastream_hash_batch() of @algo: a batch smaller
 * than the wide lanes take goes to the next backend.  NULL before the first batch, or when
 * @algo is not in the context's mask.  The string is static. */
const char *imastream_hash_batch_last_backend(const struct imastream_hasher *h, int algo);

/* The batch backend that hashes the data blocks ("avx512-16x", "openssl", ...); static. */
const char *imastream_verity_backend(const struct imastream_verity *v);

#endif /* IMASTREAM_HASHERS_BACKEND_H */
