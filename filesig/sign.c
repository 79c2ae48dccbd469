// SPDX-License-Identifier: LGPL-2.1-or-later
/* IMA (v2, and v3 over fs-verity digests) and EVM portable signatures: the signer writes straight into the xattr buffer. */
#include <errno.h>
#include <string.h>

#include "common/private.h"
#include "imastream/filesig.h"
#include "imastream/hash.h"
#include "xattr/codec.h"

int imastream_ima_sign_digest(struct imastream_signer *s, int algo, const uint8_t *digest,
			      size_t digest_len, uint8_t *buf, size_t buf_size, size_t *len_ret,
			      const struct imastream_log *log)
{
	size_t sig_len;
	int err;

	if (buf_size <= IMASTREAM_SIG_HDR_SIZE)
		return ims_err(log, -ENOSPC, "no room for a signature value");
	/* Sign in place: the header's size does not depend on the signature. */
	err = imastream_signer_sign(s, algo, digest, digest_len, buf + IMASTREAM_SIG_HDR_SIZE,
				    buf_size - IMASTREAM_SIG_HDR_SIZE, &sig_len);
	if (err)
		return err;
	err = imastream_sig_header_encode(IMASTREAM_XATTR_DIGSIG, algo, imastream_signer_keyid(s),
					  sig_len, buf, log);
	if (err)
		return err;
	*len_ret = IMASTREAM_SIG_HDR_SIZE + sig_len;
	return 0;
}

int imastream_ima_sign_verity(struct imastream_signer *s, int algo, const uint8_t *verity_digest,
			      size_t digest_len, uint8_t *buf, size_t buf_size, size_t *len_ret,
			      const struct imastream_log *log)
{
	uint8_t file_id_digest[IMASTREAM_HASH_MAX_DIGEST];
	size_t id_len, sig_len;
	int err;

	if (buf_size <= IMASTREAM_SIG_HDR_SIZE)
		return ims_err(log, -ENOSPC, "no room for a signature value");
	/* Version 3 signs the file id, so the value cannot pass for a content signature. */
	err = imastream_sigv3_file_id_digest(IMASTREAM_XATTR_IMA_VERITY_SIG, algo, verity_digest,
					     digest_len, file_id_digest, sizeof(file_id_digest),
					     &id_len, log);
	if (err)
		return err;
	err = imastream_signer_sign(s, algo, file_id_digest, id_len, buf + IMASTREAM_SIG_HDR_SIZE,
				    buf_size - IMASTREAM_SIG_HDR_SIZE, &sig_len);
	if (err)
		return err;
	err = imastream_sig_header_encode(IMASTREAM_XATTR_IMA_VERITY_SIG, algo,
					  imastream_signer_keyid(s), sig_len, buf, log);
	if (err)
		return err;
	*len_ret = IMASTREAM_SIG_HDR_SIZE + sig_len;
	return 0;
}

int imastream_evm_sign_portable(struct imastream_signer *s, const struct imastream_evm_input *in,
				int algo, uint8_t *buf, size_t buf_size, size_t *len_ret,
				const struct imastream_log *log)
{
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	size_t digest_len, sig_len;
	int err;

	if (buf_size <= IMASTREAM_SIG_HDR_SIZE)
		return ims_err(log, -ENOSPC, "no room for a signature value");
	err = imastream_evm_digest_portable(in, algo, digest, sizeof(digest), &digest_len, log);
	if (err)
		return err;
	err = imastream_signer_sign(s, algo, digest, digest_len, buf + IMASTREAM_SIG_HDR_SIZE,
				    buf_size - IMASTREAM_SIG_HDR_SIZE, &sig_len);
	if (err)
		return err;
	err = imastream_sig_header_encode(IMASTREAM_XATTR_EVM_PORTABLE, algo,
					  imastream_signer_keyid(s), sig_len, buf, log);
	if (err)
		return err;
	*len_ret = IMASTREAM_SIG_HDR_SIZE + sig_len;
	return 0;
}

int imastream_evm_sign_file(struct imastream_signer *s, int fd, const char *path,
			    unsigned int flags, const void *ima, size_t ima_len, int algo,
			    uint8_t *buf, size_t buf_size, size_t *len_ret,
			    const struct imastream_log *log)
{
	struct imastream_evm_input in = { .size = sizeof(in) };
	unsigned int cflags = 0;
	int err;

	/* No generation and no UUID: a portable signature zeroes them (and tmpfs has none). */
	if (flags & IMASTREAM_FILESIG_USER)
		cflags |= IMASTREAM_EVM_COLLECT_USER_IMA;
	err = imastream_evm_collect(fd, path, cflags, &in, log);
	if (err)
		return err;
	if (ima) {
		in.xattrs[IMASTREAM_EVM_IMA].value = ima;
		in.xattrs[IMASTREAM_EVM_IMA].len = ima_len;
	}
	if (!in.xattrs[IMASTREAM_EVM_IMA].value) {
		err = ims_err(log, -ENODATA, "%s: no %s to cover with a portable EVM signature",
			      path ? path : "file",
			      imastream_xattr_name(IMASTREAM_ATTR_IMA, flags & IMASTREAM_FILESIG_USER));
		goto out;
	}
	err = imastream_evm_sign_portable(s, &in, algo, buf, buf_size, len_ret, log);
out:
	imastream_evm_input_release(&in);
	return err;
}
