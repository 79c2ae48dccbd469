/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Signing and verifying files: IMA and EVM signatures built from the hashers, xattr and keys modules. */
#ifndef IMASTREAM_FILESIG_H
#define IMASTREAM_FILESIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"
#include "imastream/keys.h"
#include "imastream/xattr.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * filesig/ joins three modules that do not know each other: hashers/ (content digests),
 * xattr/ (byte codecs, the EVM metadata digest, the collector) and keys/ (signers, the
 * trust store).  Everything here is what "evmctl ima_sign", "evmctl sign --portable",
 * "evmctl ima_verify" and "evmctl verify" do for one file, without any global state.
 */

/**
 * imastream_ima_sign_digest - a security.ima signature value (type 3, v2) over a digest
 * @s: the signer (one thread at a time)
 * @algo: kernel hash_algo id of @digest; it goes into the header
 * @digest: the file's content digest
 * @digest_len: its size, which must match @algo
 * @buf: output; IMASTREAM_SIG_HDR_SIZE + imastream_signer_max_sig_size(@s) bytes always
 *       suffice. The signature is made straight into @buf, after the header.
 * @buf_size: size of @buf
 * @len_ret: the value's length
 * @log: where to explain a failure of the encoding (the signer logs its own failures)
 *
 * Return: 0; -EINVAL for an unknown algorithm or a wrong digest size; -ENOSPC when @buf
 * is too small; -EIO when the signing backend fails.
 */
IMASTREAM_API int imastream_ima_sign_digest(struct imastream_signer *s, int algo,
					    const uint8_t *digest, size_t digest_len,
					    uint8_t *buf, size_t buf_size, size_t *len_ret,
					    const struct imastream_log *log);

/**
 * imastream_ima_sign_verity - a security.ima fs-verity signature value (type 6, version 3)
 * @s: the signer (one thread at a time)
 * @algo: kernel hash_algo id of @verity_digest (IMASTREAM_HASH_SHA256 for fs-verity's
 *        default); it goes into the header and hashes the file id
 * @verity_digest: the file's fs-verity digest (imastream_verity_final(), `fsverity digest`)
 * @digest_len: its size, which must match @algo
 * @buf, @buf_size, @len_ret, @log: as for imastream_ima_sign_digest()
 *
 * Signs H_algo(06 ‖ algo ‖ verity_digest), the file id of a version-3 signature: the value
 * `evmctl sign_hash --veritysig` (ima-evm-utils 1.5) prints, byte for byte with RSA, and
 * what the kernel checks under `appraise ... digest_type=verity appraise_type=sigv3`
 * (the file must also have fs-verity enabled there).
 * Return: as imastream_ima_sign_digest().
 */
IMASTREAM_API int imastream_ima_sign_verity(struct imastream_signer *s, int algo,
					    const uint8_t *verity_digest, size_t digest_len,
					    uint8_t *buf, size_t buf_size, size_t *len_ret,
					    const struct imastream_log *log);

/**
 * imastream_evm_sign_portable - a security.evm portable signature value (type 5, v2)
 * @s: the signer (one thread at a time)
 * @in: what the EVM digest covers; it must hold the security.ima value the file will
 *      carry (the kernel refuses a portable signature without one)
 * @algo: kernel hash_algo id for the EVM digest and the header
 * @buf, @buf_size, @len_ret, @log: as for imastream_ima_sign_digest()
 *
 * Return: 0; -ENODATA when @in has no security.ima; -EINVAL for an unknown algorithm or
 * misc_layout, or a size of @in below its first version; -EOPNOTSUPP for an algorithm
 * OpenSSL lacks; otherwise as imastream_ima_sign_digest().
 */
IMASTREAM_API int imastream_evm_sign_portable(struct imastream_signer *s,
					      const struct imastream_evm_input *in, int algo,
					      uint8_t *buf, size_t buf_size, size_t *len_ret,
					      const struct imastream_log *log);

/* Flags of imastream_evm_sign_file() and imastream_verify_file(). */
enum {
	/* user.ima / user.evm instead of security.* (evmctl --xattr-user). */
	IMASTREAM_FILESIG_USER = 1u << 0,
};

/**
 * imastream_evm_sign_file - a portable EVM signature of a file as it is on disk now
 * @s: the signer
 * @fd: the file's descriptor (uid, gid and mode are taken from fstat), or -1 for @path
 * @path: the file, never followed; names it in messages (may be NULL with an @fd)
 * @flags: IMASTREAM_FILESIG_USER: hash user.ima in the place of security.ima, as evmctl
 *         --xattr-user --portable does (other labels are always read as security.*)
 * @ima: the security.ima value the file is about to get, when it is not written yet
 *       (so that both values exist before either is written); NULL: the one on the file
 * @ima_len: its length
 * @algo, @buf, @buf_size, @len_ret, @log: as for imastream_evm_sign_portable()
 *
 * Write every label (and security.ima, unless @ima is given) before calling this: the
 * value covers them, and security.evm must be written last.
 * Return: 0; -ENODATA (one line naming the file) when there is no security.ima;
 * -errno when the file's metadata or xattrs cannot be read; the errors of
 * imastream_evm_sign_portable().
 */
IMASTREAM_API int imastream_evm_sign_file(struct imastream_signer *s, int fd, const char *path,
					  unsigned int flags, const void *ima, size_t ima_len,
					  int algo, uint8_t *buf, size_t buf_size,
					  size_t *len_ret, const struct imastream_log *log);

/* ========== verification ========== */

/* The outcome for one xattr of one file. */
enum imastream_verify_result {
	IMASTREAM_VERIFY_OK = 0,
	/* security.ima: the content digest differs from the stored one or the signed one. */
	IMASTREAM_VERIFY_CONTENT_CHANGED,
	/* security.evm: labels, security.ima, uid, gid or mode differ from what was signed. */
	IMASTREAM_VERIFY_METADATA_CHANGED,
	/* No certificate in the trust store has the signature's key id. */
	IMASTREAM_VERIFY_UNKNOWN_KEY,
	/* The signature does not verify, although what it covers can be recomputed. */
	IMASTREAM_VERIFY_BAD_SIGNATURE,
	/* The xattr is absent. */
	IMASTREAM_VERIFY_MISSING,
	/* The value does not decode (imastream_xattr_decode()), or is a type that does
	 * not belong in this xattr (an HMAC in security.ima). */
	IMASTREAM_VERIFY_MALFORMED,
	/* Well formed, but cannot be checked here: an EVM HMAC (type 2) needs the device's
	 * key; a type-3 EVM signature on a filesystem that gives no inode generation or
	 * UUID; an algorithm OpenSSL lacks; a certificate whose key cannot verify. */
	IMASTREAM_VERIFY_UNVERIFIABLE,
	/* Not checked: the caller asked not to (security.evm with IMASTREAM_VERIFY_NO_EVM). */
	IMASTREAM_VERIFY_SKIPPED,
};

/* A short English phrase for a result: "content changed", "unknown key id", ... */
IMASTREAM_API const char *imastream_verify_result_str(int result);

/**
 * struct imastream_verify_one - what was found in one xattr
 * @result: enum imastream_verify_result
 * @type: the value's type byte (enum imastream_xattr_type), 0 when missing or empty
 * @algo: its hash algorithm (kernel id), when decoded
 * @keyid: the signature's key id (host order), for types 3, 5 and 6
 * @undecided: a signature that does not verify over the recomputed digest with a key
 *             that cannot tell why: ECDSA signatures hide what they signed, so "content
 *             (or metadata) changed" and "bad signature" look the same. @result then says
 *             CONTENT_CHANGED or METADATA_CHANGED. RSA signatures are opened and the
 *             signed digest compared, so for them @undecided stays false.
 * @detail: a short explanation for UNVERIFIABLE and MALFORMED ("EVM HMAC needs the
 *          device key", "filesystem gives no inode generation"); "" otherwise
 */
struct imastream_verify_one {
	int result;
	int type;
	int algo;
	uint32_t keyid;
	bool undecided;
	char detail[96];
};

/* Flags of imastream_verify_file() (with IMASTREAM_FILESIG_USER). */
enum {
	/* Do not look at security.evm at all: its result is IMASTREAM_VERIFY_SKIPPED. */
	IMASTREAM_VERIFY_NO_EVM = 1u << 8,
};

/**
 * struct imastream_verify_report - the outcome for one file
 * @size: sizeof the struct the caller was built with, set by the caller; the library
 *        fills the members it covers (room to grow)
 * @ima: security.ima (or user.ima)
 * @evm: security.evm (or user.evm)
 * @ok: both are OK (or @evm was SKIPPED)
 */
struct imastream_verify_report {
	size_t size;
	struct imastream_verify_one ima;
	struct imastream_verify_one evm;
	bool ok;
};

/*
 * A verifier: a trust store plus per-thread state (one hasher per content algorithm,
 * created on first use).  One thread at a time; make one per thread over the same
 * trust store, which is only read.
 */
struct imastream_verifier;

/**
 * imastream_verifier_new - a verifier over a trust store
 * @trust: certificates, looked up by key id; must outlive the verifier
 * @log: where to explain errors that are not verdicts (a read error, no memory)
 * @ret: freed with imastream_verifier_free()
 * Return: 0, -ENOMEM.
 */
IMASTREAM_API int imastream_verifier_new(const struct imastream_trust *trust,
					 const struct imastream_log *log,
					 struct imastream_verifier **ret);
IMASTREAM_API void imastream_verifier_free(struct imastream_verifier *v);

/**
 * imastream_verify_file - check a file's security.ima and security.evm
 * @v: the verifier
 * @fd: a descriptor of the regular file open for reading (its content is hashed from
 *      offset 0; metadata comes from fstat and fgetxattr)
 * @path: names the file in messages (may be NULL)
 * @flags: IMASTREAM_FILESIG_USER, IMASTREAM_VERIFY_NO_EVM
 * @report: the verdicts, filled on success; its @size set by the caller
 *
 * security.ima: types 1 and 4 are compared with the content digest; type 3 is verified
 * over it with the certificate of its key id; type 6 (version 3) over the file id of the
 * fs-verity digest recomputed from the content (SHA-256 only; whether fs-verity is enabled
 * on the file is not looked at). Type 5 does not belong there.
 * security.evm: type 5 over the labels, security.ima, uid, gid and mode (portable, the
 * kernel's full list of labels); type 3 also over the inode number, the generation and
 * the filesystem UUID (UNVERIFIABLE when the filesystem cannot give them: tmpfs, overlay);
 * type 2 (HMAC) is UNVERIFIABLE without the device's key. With IMASTREAM_FILESIG_USER,
 * user.ima is hashed in the place of security.ima for type 5, as evmctl does.
 *
 * Verdicts are not errors: a file that fails verification still returns 0.
 * Return: 0; -EINVAL, with one line in the verifier's log, for a NULL @report or one whose
 * size is below the first version (the file is then not read); -errno when the file
 * cannot be read (fstat, read, getxattr), -ENOMEM.
 */
IMASTREAM_API int imastream_verify_file(struct imastream_verifier *v, int fd, const char *path,
					unsigned int flags,
					struct imastream_verify_report *report);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_FILESIG_H */
