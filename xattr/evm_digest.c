// SPDX-License-Identifier: LGPL-2.1-or-later
/* The EVM metadata digest: protected xattr values ‖ h_misc ‖ [fs UUID], hashed or HMACed. */
#include <errno.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "common/private.h"
#include "hashers/algos.h"
#include "imastream/hash.h"
#include "imastream/xattr.h"
#include "xattr/codec.h"

static const char *const evm_names[IMASTREAM_EVM_NR_XATTRS] = {
	[IMASTREAM_EVM_SELINUX] = "security.selinux",
	[IMASTREAM_EVM_SMACK64] = "security.SMACK64",
	[IMASTREAM_EVM_SMACK64EXEC] = "security.SMACK64EXEC",
	[IMASTREAM_EVM_SMACK64TRANSMUTE] = "security.SMACK64TRANSMUTE",
	[IMASTREAM_EVM_SMACK64MMAP] = "security.SMACK64MMAP",
	[IMASTREAM_EVM_APPARMOR] = "security.apparmor",
	[IMASTREAM_EVM_IMA] = "security.ima",
	[IMASTREAM_EVM_CAPABILITY] = "security.capability",
};

const char *imastream_evm_xattr_name(int slot)
{
	if (slot < 0 || slot >= IMASTREAM_EVM_NR_XATTRS)
		return NULL;
	return evm_names[slot];
}

/* Stores @v in @n bytes of the target's byte order. */
static void put_native(uint8_t *p, uint64_t v, unsigned int n, bool big_endian)
{
	for (unsigned int i = 0; i < n; i++)
		p[big_endian ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

/*
 * struct h_misc { unsigned long ino; __u32 generation; uid_t uid; gid_t gid; umode_t mode; }
 * as the kernel lays it out: natural alignment, tail padding, memset to zero first.
 */
int imastream_evm_misc_encode(const struct imastream_evm_input *in, bool portable, uint8_t *buf,
			      size_t *len_ret)
{
	unsigned int ino_size, size;
	bool be;

	if (!in || !buf || !len_ret || IMS_CHECK_SIZE(NULL, in, imastream_evm_input, owned))
		return -EINVAL;
	switch (in->misc_layout) {
	case IMASTREAM_EVM_MISC_64:
		ino_size = 8;
		size = 24;
		break;
	case IMASTREAM_EVM_MISC_32:
		ino_size = 4;
		size = 20;
		break;
	default:
		return -EINVAL;
	}
	be = in->big_endian;
	memset(buf, 0, size);
	if (!portable) {
		put_native(buf, in->ino, ino_size, be);
		put_native(buf + ino_size, in->generation, 4, be);
	}
	put_native(buf + ino_size + 4, in->uid, 4, be);
	put_native(buf + ino_size + 8, in->gid, 4, be);
	put_native(buf + ino_size + 12, in->mode & 0xffff, 2, be);
	*len_ret = size;
	return 0;
}

typedef int (*feed_fn)(void *ctx, const void *data, size_t len);

static int feed_digest(void *ctx, const void *data, size_t len)
{
	return EVP_DigestUpdate(ctx, data, len) ? 0 : -EIO;
}

static int feed_mac(void *ctx, const void *data, size_t len)
{
	return EVP_MAC_update(ctx, data, len) ? 0 : -EIO;
}

/* Feeds what evm_calc_hmac_or_hash() hashes, for @type 2, 3 or 5. */
static int evm_feed(const struct imastream_evm_input *in, int type, feed_fn feed, void *ctx,
		    const struct imastream_log *log)
{
	bool portable = type == IMASTREAM_XATTR_EVM_PORTABLE;
	uint8_t misc[IMASTREAM_EVM_MISC_MAX];
	size_t misc_len;
	int err;

	if (portable && !in->xattrs[IMASTREAM_EVM_IMA].value)
		return ims_err(log, -ENODATA,
			       "EVM portable signature: the kernel requires security.ima, which is missing");
	if (imastream_evm_misc_encode(in, portable, misc, &misc_len))
		return ims_err(log, -EINVAL, "EVM: unknown h_misc layout %d", in->misc_layout);
	for (int i = 0; i < IMASTREAM_EVM_NR_XATTRS; i++) {
		const struct imastream_evm_value *x = &in->xattrs[i];

		if (!x->value || !x->len)
			continue;
		err = feed(ctx, x->value, x->len);
		if (err)
			return ims_openssl_err(log, err, "EVM: hashing %s failed", evm_names[i]);
	}
	err = feed(ctx, misc, misc_len);
	/* The UUID is never part of a portable signature, whatever the input says. */
	if (!err && !portable && in->has_uuid)
		err = feed(ctx, in->uuid, sizeof(in->uuid));
	if (err)
		return ims_openssl_err(log, err, "EVM: hashing the inode metadata failed");
	return 0;
}

static int evm_hash(const struct imastream_evm_input *in, int type, int algo, uint8_t *out,
		    size_t out_size, size_t *len_ret, const struct imastream_log *log)
{
	unsigned int size = imastream_xattr_digest_size(algo), md_len = 0;
	EVP_MD_CTX *ctx = NULL;
	EVP_MD *md = NULL;
	int err = 0;

	if (!in || !out || !len_ret)
		return ims_err(log, -EINVAL, "EVM digest: missing argument");
	err = IMS_CHECK_SIZE(log, in, imastream_evm_input, owned);
	if (err)
		return err;
	if (!size)
		return ims_err(log, -EINVAL, "EVM digest: unknown hash algorithm id %d", algo);
	if (out_size < size)
		return ims_err(log, -ENOSPC, "EVM digest: %zu-byte output, %u needed", out_size,
			       size);
	md = ims_hash_fetch(algo, log, &err);
	if (!md)
		goto out;
	ctx = EVP_MD_CTX_new();
	if (!ctx) {
		err = ims_err(log, -ENOMEM, "EVM digest: out of memory");
		goto out;
	}
	if (!EVP_DigestInit_ex2(ctx, md, NULL)) {
		err = ims_openssl_err(log, -EIO, "EVM digest: cannot start %s",
				      ims_kernel_hash_name(algo));
		goto out;
	}
	err = evm_feed(in, type, feed_digest, ctx, log);
	if (err)
		goto out;
	if (!EVP_DigestFinal_ex(ctx, out, &md_len)) {
		err = ims_openssl_err(log, -EIO, "EVM digest: final failed");
		goto out;
	}
	*len_ret = md_len;
out:
	EVP_MD_CTX_free(ctx);
	EVP_MD_free(md);
	return err;
}

int imastream_evm_digest_portable(const struct imastream_evm_input *in, int algo, uint8_t *out,
				  size_t out_size, size_t *len_ret, const struct imastream_log *log)
{
	return evm_hash(in, IMASTREAM_XATTR_EVM_PORTABLE, algo, out, out_size, len_ret, log);
}

int imastream_evm_digest(const struct imastream_evm_input *in, int algo, uint8_t *out,
			 size_t out_size, size_t *len_ret, const struct imastream_log *log)
{
	return evm_hash(in, IMASTREAM_XATTR_DIGSIG, algo, out, out_size, len_ret, log);
}

int imastream_evm_hmac(const struct imastream_evm_input *in, const uint8_t *key, size_t key_len,
		       uint8_t *out, const struct imastream_log *log)
{
	/* The kernel keys hmac(sha1) with all 128 bytes, so the padding changes the MAC. */
	uint8_t padded[IMASTREAM_EVM_HMAC_KEY_MAX] = { 0 };
	char digest_name[] = "SHA1";
	OSSL_PARAM params[2];
	EVP_MAC_CTX *ctx = NULL;
	EVP_MAC *mac = NULL;
	size_t mac_len = 0;
	int err = 0;

	if (!in || !out)
		return ims_err(log, -EINVAL, "EVM HMAC: missing argument");
	err = IMS_CHECK_SIZE(log, in, imastream_evm_input, owned);
	if (err)
		return err;
	if (!key || key_len == 0 || key_len > sizeof(padded))
		return ims_err(log, -EINVAL, "EVM HMAC: key of %zu bytes: must be 1..%zu", key_len,
			       sizeof(padded));
	memcpy(padded, key, key_len);
	mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	if (!ctx) {
		err = ims_openssl_err(log, -EIO, "EVM HMAC: OpenSSL cannot provide HMAC");
		goto out;
	}
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0);
	params[1] = OSSL_PARAM_construct_end();
	if (!EVP_MAC_init(ctx, padded, sizeof(padded), params)) {
		err = ims_openssl_err(log, -EIO, "EVM HMAC: cannot start HMAC-SHA1");
		goto out;
	}
	err = evm_feed(in, IMASTREAM_XATTR_EVM_HMAC, feed_mac, ctx, log);
	if (err)
		goto out;
	if (!EVP_MAC_final(ctx, out + 1, &mac_len, IMASTREAM_EVM_HMAC_XATTR_SIZE - 1) ||
	    mac_len != IMASTREAM_EVM_HMAC_XATTR_SIZE - 1) {
		err = ims_openssl_err(log, -EIO, "EVM HMAC: final failed");
		goto out;
	}
	out[0] = IMASTREAM_XATTR_EVM_HMAC;
out:
	ims_memzero(padded, sizeof(padded));
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return err;
}
