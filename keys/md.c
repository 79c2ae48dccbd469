// SPDX-License-Identifier: LGPL-2.1-or-later
/* Maps a kernel hash id to OpenSSL's digest, checking that the digest has its size. */
#include <errno.h>

#include <openssl/evp.h>

#include "hashers/algos.h"
#include "imastream/hash.h"
#include "keys/keys-private.h"

int ims_digest_check(int hash_algo, size_t digest_len, const struct imastream_log *log)
{
	const struct imastream_hash_info *info = imastream_hash_by_algo(hash_algo);

	if (!info)
		return ims_err(log, -EINVAL, "unknown hash algorithm id %d", hash_algo);
	if (digest_len != info->digest_size)
		return ims_err(log, -EINVAL, "%s digest must be %u bytes, got %zu", info->name,
			       info->digest_size, digest_len);
	return 0;
}

int ims_md_for(int hash_algo, size_t digest_len, const struct imastream_log *log,
	       EVP_MD **md_ret)
{
	int err = ims_digest_check(hash_algo, digest_len, log);

	if (err)
		return err;
	*md_ret = ims_hash_fetch(hash_algo, log, &err);
	return *md_ret ? 0 : err;
}
