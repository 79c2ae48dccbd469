// SPDX-License-Identifier: LGPL-2.1-or-later
/* Encodes security.ima digest values: type 1 for md4/md5/sha1, type 4 for the rest. */
#include <errno.h>
#include <string.h>

#include "common/private.h"
#include "hashers/algos.h"
#include "imastream/hash.h"
#include "imastream/xattr.h"
#include "xattr/codec.h"

int imastream_ima_digest_encode(int algo, const uint8_t *digest, size_t digest_len,
				uint8_t *buf, size_t buf_size, size_t *len_ret,
				const struct imastream_log *log)
{
	unsigned int size = imastream_xattr_digest_size(algo);
	size_t hdr, total;

	if (!size)
		return ims_err(log, -EINVAL, "security.ima: unknown hash algorithm id %d", algo);
	if (!digest || digest_len != size)
		return ims_err(log, -EINVAL, "security.ima: a %s digest is %u bytes, not %zu",
			       ims_kernel_hash_name(algo), size, digest_len);
	/*
	 * The kernel's fix mode and evmctl both write the legacy form for ids up to sha1,
	 * and the kernel tells md5 from sha1 by length alone; match them byte for byte.
	 */
	hdr = algo <= IMASTREAM_HASH_SHA1 ? 1 : 2;
	total = hdr + size;
	if (!buf || buf_size < total)
		return ims_err(log, -ENOSPC, "security.ima: %zu-byte buffer, %zu needed",
			       buf_size, total);
	if (hdr == 1) {
		buf[0] = IMASTREAM_XATTR_IMA_DIGEST;
	} else {
		buf[0] = IMASTREAM_XATTR_IMA_DIGEST_NG;
		buf[1] = (uint8_t)algo;
	}
	memmove(buf + hdr, digest, size);
	*len_ret = total;
	return 0;
}
