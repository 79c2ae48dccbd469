/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers shared by the xattr/ sources: kernel algorithm names and one-shot OpenSSL digests. */
#ifndef IMASTREAM_XATTR_PRIVATE_H
#define IMASTREAM_XATTR_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"

/* Number of ids in the kernel's enum hash_algo (HASH_ALGO__LAST) as of Linux 6.7+. */
#define IMS_KERNEL_HASH_ALGO_LAST 23

/* Kernel name of a hash_algo id ("sha256"), or "unknown". */
const char *ims_kernel_hash_name(int algo);

/* Fetches the OpenSSL digest for a kernel id; logs and returns NULL if unavailable. */
struct evp_md_st *ims_xattr_fetch_md(int algo, const struct imastream_log *log, int *err_ret);

#endif /* IMASTREAM_XATTR_PRIVATE_H */
