// SPDX-License-Identifier: LGPL-2.1-or-later
/* Maps a kernel hash id to OpenSSL's digest, checking that the digest has its size. */
#include <errno.h>

#include <openssl/evp.h>

#include "imastream/hash.h"
#include "keys/keys-private.h"

int ims_md_for(int hash_algo, size_t digest_len, const struct imastream_log *log,
	       const EVP_MD **md_ret)
{
	const struct imastream_hash_info *info = imastream_hash_by_algo(hash_algo);
	const EVP_MD *md;

	if (!info)
		return ims_err(log, -EINVAL, "unknown hash algorithm id %d", hash_algo);
	if (digest_len != info->digest_size)
		return ims_err(log, -EINVAL, "%s digest must be %u bytes, got %zu", info->name,
			       info->digest_size, digest_len);
	/* The legacy lookup returns a static method: nothing to free, cheap to repeat. */
	md = EVP_get_digestbyname(info->openssl_name);
	if (!md)
		return ims_err(log, -EOPNOTSUPP, "hash algorithm %s is not available in this OpenSSL",
			       info->name);
	*md_ret = md;
	return 0;
}
