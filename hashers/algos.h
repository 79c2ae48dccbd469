/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What hashers/ offers the floors above it (xattr/, keys/) beyond imastream/hash.h: the
 * algorithm tables of algos.c by kernel hash id, and the one OpenSSL lookup of a digest.
 * Nothing else of hashers/ is theirs to use.
 */
#ifndef IMASTREAM_HASHERS_ALGOS_H
#define IMASTREAM_HASHERS_ALGOS_H

#include <openssl/evp.h>

#include "imastream/hash.h"

/* Number of ids in the kernel's enum hash_algo (HASH_ALGO__LAST) as of Linux 6.7+. */
#define IMS_KERNEL_HASH_ALGO_LAST 23
/* Digest size of any hash_algo id, 0 for an unknown one. */
unsigned int ims_kernel_hash_size(int algo);
/* Kernel name of any hash_algo id ("sha256", "wp512"), or "unknown". */
const char *ims_kernel_hash_name(int algo);
/*
 * The one OpenSSL lookup of a digest: a new reference (EVP_MD_free() it), or NULL with
 * the reason logged and *err_ret set.
 */
EVP_MD *ims_hash_fetch(int algo, const struct imastream_log *log, int *err_ret);

#endif /* IMASTREAM_HASHERS_ALGOS_H */
