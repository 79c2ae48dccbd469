// SPDX-License-Identifier: LGPL-2.1-or-later
/* Strict decoder for IMA/EVM xattr values (types 1..6), with the kernel's length rules. */
#include <errno.h>
#include <string.h>

#include "common/private.h"
#include "hashers/algos.h"
#include "imastream/hash.h"
#include "imastream/xattr.h"
#include "xattr/codec.h"

/* Type 1 carries no algorithm: the kernel (ima_get_hash_algo) infers it from the length. */
/* Decoding accepts every size the kernel knows, not only the algorithms we compute. */
unsigned int imastream_xattr_digest_size(int algo)
{
	return ims_kernel_hash_size(algo);
}

static int decode_legacy_digest(const uint8_t *v, size_t len, struct imastream_xattr_info *info,
				const struct imastream_log *log)
{
	static const uint8_t zero[4];

	if (len == 1 + 16) {
		info->algo = IMASTREAM_HASH_MD5;
		info->data_len = 16;
	} else if (len == 1 + 20) {
		/* Old kernels stored md5 in 20 bytes, zero-padded: the kernel still reads so. */
		if (!memcmp(v + 17, zero, sizeof(zero))) {
			info->algo = IMASTREAM_HASH_MD5;
			info->data_len = 16;
		} else {
			info->algo = IMASTREAM_HASH_SHA1;
			info->data_len = 20;
		}
	} else {
		return ims_err(log, -EBADMSG,
			       "type-1 digest xattr of %zu bytes: must be 17 (md5) or 21 (sha1)",
			       len);
	}
	info->data = v + 1;
	return 0;
}

static int decode_digest_ng(const uint8_t *v, size_t len, struct imastream_xattr_info *info,
			    const struct imastream_log *log)
{
	unsigned int size;

	if (len < 2)
		return ims_err(log, -EBADMSG, "type-4 digest xattr of %zu bytes has no algorithm",
			       len);
	size = imastream_xattr_digest_size(v[1]);
	if (!size)
		return ims_err(log, -EBADMSG, "type-4 digest xattr names unknown algorithm %u",
			       v[1]);
	if (len != 2 + size)
		return ims_err(log, -EBADMSG, "type-4 %s digest xattr of %zu bytes: must be %u",
			       ims_kernel_hash_name(v[1]), len, 2 + size);
	info->algo = v[1];
	info->data = v + 2;
	info->data_len = size;
	return 0;
}

static int decode_hmac(const uint8_t *v, size_t len, struct imastream_xattr_info *info,
		       const struct imastream_log *log)
{
	/* evm_verify_hmac: xattr_len must be sizeof(struct evm_xattr), and it is always sha1. */
	if (len != IMASTREAM_EVM_HMAC_XATTR_SIZE)
		return ims_err(log, -EBADMSG, "type-2 EVM HMAC xattr of %zu bytes: must be %d",
			       len, IMASTREAM_EVM_HMAC_XATTR_SIZE);
	info->algo = IMASTREAM_HASH_SHA1;
	info->data = v + 1;
	info->data_len = 20;
	return 0;
}

static int decode_sig(const uint8_t *v, size_t len, struct imastream_xattr_info *info,
		      const struct imastream_log *log)
{
	int want = v[0] == IMASTREAM_XATTR_IMA_VERITY_SIG ? IMASTREAM_SIG_V3 : IMASTREAM_SIG_V2;
	size_t sig_size;

	/*
	 * The kernel's order: the version picks the verifier (integrity_digsig_verify), then
	 * asymmetric_verify() checks the lengths and the algorithm.
	 */
	if (len <= 1)
		return ims_err(log, -EBADMSG, "type-%u signature xattr of %zu bytes: header is %d",
			       v[0], len, IMASTREAM_SIG_HDR_SIZE);
	if (v[1] != want)
		return ims_err(log, -EBADMSG, "type-%u signature has version %u: must be %d%s",
			       v[0], v[1], want,
			       v[1] == 1 ? " (legacy v1 RSA signatures are not supported)" : "");
	if (len <= IMASTREAM_SIG_HDR_SIZE)
		return ims_err(log, -EBADMSG, "type-%u signature xattr of %zu bytes: header is %d",
			       v[0], len, IMASTREAM_SIG_HDR_SIZE);
	sig_size = ims_get_be16(v + 7);
	if (len - IMASTREAM_SIG_HDR_SIZE != sig_size)
		return ims_err(log, -EBADMSG,
			       "type-%u signature xattr of %zu bytes says sig_size %zu: must be %zu",
			       v[0], len, sig_size, len - IMASTREAM_SIG_HDR_SIZE);
	if (!imastream_xattr_digest_size(v[2]))
		return ims_err(log, -EBADMSG, "type-%u signature names unknown algorithm %u",
			       v[0], v[2]);
	info->version = v[1];
	info->algo = v[2];
	info->keyid = ims_get_be32(v + 3);
	info->data = v + IMASTREAM_SIG_HDR_SIZE;
	info->data_len = sig_size;
	return 0;
}

int imastream_xattr_decode(const void *value, size_t len, struct imastream_xattr_info *info_ret,
			   const struct imastream_log *log)
{
	struct imastream_xattr_info info = { .size = sizeof(info) };
	const uint8_t *v = value;
	int err;

	if (!info_ret || (!v && len))
		return ims_err(log, -EINVAL, "xattr decode: missing argument");
	err = IMS_CHECK_OUT_SIZE(log, info_ret, imastream_xattr_info, data_len);
	if (err)
		return err;
	if (len == 0)
		return ims_err(log, -EINVAL, "empty IMA/EVM xattr value");
	info.type = v[0];
	switch (v[0]) {
	case IMASTREAM_XATTR_IMA_DIGEST:
		err = decode_legacy_digest(v, len, &info, log);
		break;
	case IMASTREAM_XATTR_EVM_HMAC:
		err = decode_hmac(v, len, &info, log);
		break;
	case IMASTREAM_XATTR_IMA_DIGEST_NG:
		err = decode_digest_ng(v, len, &info, log);
		break;
	case IMASTREAM_XATTR_DIGSIG:
	case IMASTREAM_XATTR_EVM_PORTABLE:
	case IMASTREAM_XATTR_IMA_VERITY_SIG:
		err = decode_sig(v, len, &info, log);
		break;
	default:
		return ims_err(log, -EINVAL, "IMA/EVM xattr type %u: must be 1..6", v[0]);
	}
	if (!err)
		IMS_FILL_SIZED(info_ret, &info);
	return err;
}
