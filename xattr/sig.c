// SPDX-License-Identifier: LGPL-2.1-or-later
/* Encodes signature xattrs (types 3, 5: v2 header; type 6: v3) and the v3 file-id digest. */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "common/private.h"
#include "hashers/algos.h"
#include "imastream/hash.h"
#include "imastream/xattr.h"
#include "xattr/codec.h"

/* The header version the kernel demands for each signature type, or 0. */
static int sig_version(int type)
{
	switch (type) {
	case IMASTREAM_XATTR_DIGSIG:
	case IMASTREAM_XATTR_EVM_PORTABLE:
		return IMASTREAM_SIG_V2;
	case IMASTREAM_XATTR_IMA_VERITY_SIG:
		return IMASTREAM_SIG_V3;
	default:
		return 0;
	}
}

/* Validates header fields; writes nothing, so a caller can check before moving bytes. */
static int header_check(int type, int algo, size_t sig_len, const struct imastream_log *log)
{
	if (!sig_version(type))
		return ims_err(log, -EINVAL, "xattr type %d is not a signature type", type);
	if (!imastream_xattr_digest_size(algo))
		return ims_err(log, -EINVAL, "signature: unknown hash algorithm id %d", algo);
	if (sig_len == 0 || sig_len > IMASTREAM_SIG_MAX)
		return ims_err(log, -EINVAL, "signature of %zu bytes: must be 1..%d", sig_len,
			       IMASTREAM_SIG_MAX);
	return 0;
}

static void header_write(int type, int algo, uint32_t keyid, size_t sig_len, uint8_t *buf)
{
	buf[0] = (uint8_t)type;
	buf[1] = (uint8_t)sig_version(type);
	buf[2] = (uint8_t)algo;
	ims_put_be32(buf + 3, keyid);
	ims_put_be16(buf + 7, (uint16_t)sig_len);
}

int imastream_sig_header_encode(int type, int algo, uint32_t keyid, size_t sig_len,
				uint8_t *buf, const struct imastream_log *log)
{
	int err = header_check(type, algo, sig_len, log);

	if (err)
		return err;
	if (!buf)
		return ims_err(log, -EINVAL, "signature: no output buffer");
	header_write(type, algo, keyid, sig_len, buf);
	return 0;
}

int imastream_sig_encode(int type, int algo, uint32_t keyid, const uint8_t *sig, size_t sig_len,
			 uint8_t *buf, size_t buf_size, size_t *len_ret,
			 const struct imastream_log *log)
{
	int err;

	if (!sig || !buf || !len_ret)
		return ims_err(log, -EINVAL, "signature: missing input or output buffer");
	err = header_check(type, algo, sig_len, log);
	if (err)
		return err;
	if (buf_size < IMASTREAM_SIG_HDR_SIZE + sig_len)
		return ims_err(log, -ENOSPC, "signature: %zu-byte buffer, %zu needed", buf_size,
			       IMASTREAM_SIG_HDR_SIZE + sig_len);
	/* memmove before the header: the signature may sit anywhere in @buf, even at 0. */
	if (sig != buf + IMASTREAM_SIG_HDR_SIZE)
		memmove(buf + IMASTREAM_SIG_HDR_SIZE, sig, sig_len);
	header_write(type, algo, keyid, sig_len, buf);
	*len_ret = IMASTREAM_SIG_HDR_SIZE + sig_len;
	return 0;
}

int imastream_sigv3_file_id_digest(int type, int algo, const uint8_t *digest, size_t digest_len,
				   uint8_t *out, size_t out_size, size_t *len_ret,
				   const struct imastream_log *log)
{
	uint8_t file_id[2 + IMASTREAM_HASH_MAX_DIGEST];
	unsigned int size = imastream_xattr_digest_size(algo);
	unsigned int md_len = 0;
	EVP_MD *md = NULL;
	int err = 0;

	if (sig_version(type) != IMASTREAM_SIG_V3)
		return ims_err(log, -EINVAL, "xattr type %d does not use signature v3", type);
	if (!size || !digest || digest_len != size)
		return ims_err(log, -EINVAL, "sigv3: a %s digest is %u bytes, not %zu",
			       ims_kernel_hash_name(algo), size, digest_len);
	if (!out || !len_ret || out_size < size)
		return ims_err(log, -ENOSPC, "sigv3: %zu-byte output, %u needed", out_size, size);
	md = ims_hash_fetch(algo, log, &err);
	if (!md)
		goto out;
	/* struct ima_file_id is packed; only its used part, 2 + digest size, is hashed. */
	file_id[0] = (uint8_t)type;
	file_id[1] = (uint8_t)algo;
	memcpy(file_id + 2, digest, size);
	if (!EVP_Digest(file_id, 2 + size, out, &md_len, md, NULL)) {
		err = ims_openssl_err(log, -EIO, "sigv3: hashing the file id failed");
		goto out;
	}
	*len_ret = md_len;
out:
	EVP_MD_free(md);
	return err;
}
