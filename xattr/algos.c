// SPDX-License-Identifier: LGPL-2.1-or-later
/* Digest sizes of every kernel hash_algo id, so that decoding accepts what the kernel does. */
#include <errno.h>

#include <openssl/evp.h>

#include "common/private.h"
#include "imastream/hash.h"
#include "imastream/xattr.h"
#include "xattr/private.h"

/*
 * include/uapi/linux/hash_info.h and crypto/hash_info.c.  This is wider than the hashers/
 * table on purpose: hashers/ lists what we compute, this lists what a value may name.
 */
static const struct {
	const char *name;
	unsigned int size;
} kernel_algos[IMS_KERNEL_HASH_ALGO_LAST] = {
	[0] = { "md4", 16 },       [1] = { "md5", 16 },          [2] = { "sha1", 20 },
	[3] = { "rmd160", 20 },    [4] = { "sha256", 32 },       [5] = { "sha384", 48 },
	[6] = { "sha512", 64 },    [7] = { "sha224", 28 },       [8] = { "rmd128", 16 },
	[9] = { "rmd256", 32 },    [10] = { "rmd320", 40 },      [11] = { "wp256", 32 },
	[12] = { "wp384", 48 },    [13] = { "wp512", 64 },       [14] = { "tgr128", 16 },
	[15] = { "tgr160", 20 },   [16] = { "tgr192", 24 },      [17] = { "sm3", 32 },
	[18] = { "streebog256", 32 }, [19] = { "streebog512", 64 }, [20] = { "sha3-256", 32 },
	[21] = { "sha3-384", 48 }, [22] = { "sha3-512", 64 },
};

unsigned int imastream_xattr_digest_size(int algo)
{
	if (algo < 0 || algo >= IMS_KERNEL_HASH_ALGO_LAST)
		return 0;
	return kernel_algos[algo].size;
}

const char *ims_kernel_hash_name(int algo)
{
	if (algo < 0 || algo >= IMS_KERNEL_HASH_ALGO_LAST)
		return "unknown";
	return kernel_algos[algo].name;
}

EVP_MD *ims_xattr_fetch_md(int algo, const struct imastream_log *log, int *err_ret)
{
	const struct imastream_hash_info *info = imastream_hash_by_algo(algo);
	EVP_MD *md;

	if (!info) {
		*err_ret = ims_err(log, -EINVAL, "hash algorithm %d (%s) is not supported here",
				   algo, ims_kernel_hash_name(algo));
		return NULL;
	}
	md = EVP_MD_fetch(NULL, info->openssl_name, NULL);
	if (!md)
		*err_ret = ims_openssl_err(log, -EOPNOTSUPP, "OpenSSL cannot provide %s",
					   info->name);
	return md;
}
