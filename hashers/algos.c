// SPDX-License-Identifier: LGPL-2.1-or-later
/* The algorithm tables: kernel hash ids, rpm digest ids, OpenSSL names, sizes, and the one lookup. */
#include <errno.h>
#include <strings.h>

#include <openssl/evp.h>

#include "common/private.h"
#include "hashers/backend.h"
#include "hashers/private.h"
#include "imastream/hash.h"

/* rpm's PGPHASHALGO_* values (rpmpgp.h); rpm has no id for SM3. */
enum { RPM_MD5 = 1, RPM_SHA1 = 2, RPM_SHA256 = 8, RPM_SHA384 = 9, RPM_SHA512 = 10, RPM_SHA224 = 11 };

static const struct imastream_hash_info hash_table[] = {
	{ IMASTREAM_HASH_MD5, "md5", "MD5", RPM_MD5, 16, 64 },
	{ IMASTREAM_HASH_SHA1, "sha1", "SHA1", RPM_SHA1, 20, 64 },
	{ IMASTREAM_HASH_SHA256, "sha256", "SHA256", RPM_SHA256, 32, 64 },
	{ IMASTREAM_HASH_SHA384, "sha384", "SHA384", RPM_SHA384, 48, 128 },
	{ IMASTREAM_HASH_SHA512, "sha512", "SHA512", RPM_SHA512, 64, 128 },
	{ IMASTREAM_HASH_SHA224, "sha224", "SHA224", RPM_SHA224, 28, 64 },
	{ IMASTREAM_HASH_SM3, "sm3", "SM3", 0, 32, 64 },
};

const struct imastream_hash_info *imastream_hash_info_at(unsigned int i)
{
	return i < ARRAY_SIZE(hash_table) ? &hash_table[i] : NULL;
}

const struct imastream_hash_info *imastream_hash_by_algo(int algo)
{
	for (size_t i = 0; i < ARRAY_SIZE(hash_table); i++)
		if (hash_table[i].algo == algo)
			return &hash_table[i];
	return NULL;
}

const struct imastream_hash_info *imastream_hash_by_name(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(hash_table); i++)
		if (strcasecmp(hash_table[i].name, name) == 0)
			return &hash_table[i];
	return NULL;
}

const struct imastream_hash_info *imastream_hash_by_rpm_id(int rpm_id)
{
	for (size_t i = 0; i < ARRAY_SIZE(hash_table); i++)
		if (rpm_id && hash_table[i].rpm_id == rpm_id)
			return &hash_table[i];
	return NULL;
}

/*
 * Every id of the kernel's enum hash_algo (include/uapi/linux/hash_info.h and
 * crypto/hash_info.c).  Wider than hash_table on purpose: hash_table lists what we
 * compute, this lists what a value found in an xattr may name.
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

unsigned int ims_kernel_hash_size(int algo)
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

EVP_MD *ims_hash_fetch(int algo, const struct imastream_log *log, int *err_ret)
{
	const struct imastream_hash_info *info = imastream_hash_by_algo(algo);
	EVP_MD *md;

	if (!info) {
		*err_ret = ims_err(log, -EINVAL, "hash algorithm %d (%s) is not supported here",
				   algo, ims_kernel_hash_name(algo));
		return NULL;
	}
	/* An explicit fetch: implicit fetching costs ~230 ns per call in OpenSSL 3.0. */
	md = EVP_MD_fetch(NULL, info->openssl_name, NULL);
	if (!md)
		*err_ret = ims_openssl_err(log, -EOPNOTSUPP, "this OpenSSL does not provide %s",
					   info->name);
	return md;
}
