/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Byte codecs for security.ima / security.evm, the EVM metadata digest, and the xattr writer. */
#ifndef IMASTREAM_XATTR_H
#define IMASTREAM_XATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The first byte of every IMA/EVM xattr value (the kernel's enum evm_ima_xattr_type,
 * security/integrity/integrity.h).
 */
enum imastream_xattr_type {
	IMASTREAM_XATTR_IMA_DIGEST = 1,      /* 01 digest: md5 or sha1, no algorithm byte */
	IMASTREAM_XATTR_EVM_HMAC = 2,        /* 02 hmac-sha1(20): kernel-made, 21 bytes */
	IMASTREAM_XATTR_DIGSIG = 3,          /* 03 v2 header sig: IMA signature, or EVM one */
	IMASTREAM_XATTR_IMA_DIGEST_NG = 4,   /* 04 algo digest */
	IMASTREAM_XATTR_EVM_PORTABLE = 5,    /* 05 v2 header sig: EVM portable signature */
	IMASTREAM_XATTR_IMA_VERITY_SIG = 6,  /* 06 v3 header sig: over an ima_file_id */
};

/* Signature header versions the kernel accepts: v2 for types 3 and 5, v3 for type 6. */
enum { IMASTREAM_SIG_V2 = 2, IMASTREAM_SIG_V3 = 3 };

/*
 * Signature header, as stored: type(1) version(1) hash_algo(1) keyid(4, big-endian)
 * sig_size(2, big-endian), then exactly sig_size bytes of signature.
 */
#define IMASTREAM_SIG_HDR_SIZE 9
/* sig_size is a be16. */
#define IMASTREAM_SIG_MAX 65535
/* Largest digest xattr: 04 algo + a 64-byte digest. */
#define IMASTREAM_IMA_DIGEST_XATTR_MAX 66
/* A type-2 value is always 02 ‖ HMAC-SHA1. */
#define IMASTREAM_EVM_HMAC_XATTR_SIZE 21
/* The kernel zero-pads the EVM HMAC key to this size before keying HMAC-SHA1. */
#define IMASTREAM_EVM_HMAC_KEY_MAX 128
#define IMASTREAM_FS_UUID_SIZE 16

/**
 * imastream_ima_digest_encode - build a security.ima digest value
 * @algo: kernel hash_algo id of @digest
 * @digest: the file content digest
 * @digest_len: must equal the digest size of @algo
 * @buf: output buffer
 * @buf_size: its size (IMASTREAM_IMA_DIGEST_XATTR_MAX always suffices)
 * @len_ret: the value's length
 * @log: where to explain a failure (may be NULL)
 *
 * md4, md5 and sha1 give type 1 (01 ‖ digest), like evmctl ima_hash and the kernel's fix
 * mode; every other algorithm gives type 4 (04 ‖ algo ‖ digest).
 * Return: 0, -EINVAL for an unknown algorithm or a length that does not match it,
 * -ENOSPC if @buf_size is too small.
 */
IMASTREAM_API int imastream_ima_digest_encode(int algo, const uint8_t *digest, size_t digest_len,
					      uint8_t *buf, size_t buf_size, size_t *len_ret,
					      const struct imastream_log *log);

/**
 * struct imastream_xattr_info - a decoded IMA/EVM xattr value
 * @size: sizeof the struct the caller was built with, set by the caller; the library
 *        fills the members it covers (room to grow)
 * @type: enum imastream_xattr_type
 * @version: signature header version (2 or 3); 0 for digests and HMACs
 * @algo: kernel hash_algo id: from the value for types 3..6, from the length for type 1
 *        (md5 or sha1, as the kernel reads it), always sha1 for type 2
 * @keyid: signatures only: the key id (host order); 0 otherwise
 * @data: points into the decoded buffer: the digest (types 1, 4), the HMAC (type 2) or
 *        the raw signature (types 3, 5, 6); valid as long as that buffer is
 * @data_len: its length
 */
struct imastream_xattr_info {
	size_t size;
	int type;
	int version;
	int algo;
	uint32_t keyid;
	const uint8_t *data;
	size_t data_len;
};

/**
 * imastream_xattr_decode - strictly parse a security.ima or security.evm value
 * @value: the raw value (untrusted)
 * @len: its length
 * @info_ret: the result, its @size set by the caller; written only on success
 * @log: one line saying why a value is rejected (may be NULL)
 *
 * The length rules are the kernel's: type 1 is 17 bytes (md5) or 21 bytes (sha1, or md5
 * padded with four zero bytes); type 2 exactly 21; type 4 exactly 2 + the digest size
 * of a known algorithm; signatures longer than 9 bytes with len - 9 == sig_size, a known
 * algorithm, version 2 for types 3 and 5 and version 3 for type 6.
 * Return: 0, -EINVAL for an empty value, a type outside 1..6 or an @info_ret whose size
 * is below the first version; -EBADMSG for any other malformed value.
 */
IMASTREAM_API int imastream_xattr_decode(const void *value, size_t len,
					 struct imastream_xattr_info *info_ret,
					 const struct imastream_log *log);

/* ========== EVM ========== */

/*
 * The EVM-protected xattrs in the kernel's hashing order (evm_config_default_xattrnames).
 * Only the values are hashed, never names or lengths.
 */
enum imastream_evm_xattr {
	IMASTREAM_EVM_SELINUX,          /* security.selinux, with its trailing NUL */
	IMASTREAM_EVM_SMACK64,          /* security.SMACK64 */
	IMASTREAM_EVM_SMACK64EXEC,      /* security.SMACK64EXEC */
	IMASTREAM_EVM_SMACK64TRANSMUTE, /* security.SMACK64TRANSMUTE */
	IMASTREAM_EVM_SMACK64MMAP,      /* security.SMACK64MMAP */
	IMASTREAM_EVM_APPARMOR,         /* security.apparmor */
	IMASTREAM_EVM_IMA,              /* security.ima */
	IMASTREAM_EVM_CAPABILITY,       /* security.capability, raw v2 or v3 form */
	IMASTREAM_EVM_NR_XATTRS
};

/* Layout of the kernel's struct h_misc, which follows the target CPU. */
enum imastream_evm_misc_layout {
	IMASTREAM_EVM_MISC_64 = 0, /* 64-bit unsigned long ino: 24 bytes (the default) */
	IMASTREAM_EVM_MISC_32 = 1, /* 32-bit unsigned long ino: 20 bytes (evmctl --m32) */
};
#define IMASTREAM_EVM_MISC_MAX 24

/**
 * struct imastream_evm_value - one protected xattr value
 * @value: the raw bytes; NULL means the xattr is absent (skipped, as the kernel does)
 * @len: the length; 0 with a non-NULL @value is a present, empty xattr
 */
struct imastream_evm_value {
	const void *value;
	size_t len;
};

/**
 * struct imastream_evm_input - everything the EVM digest covers
 * @size: sizeof(struct imastream_evm_input), as the caller was built (room to grow,
 *        libimastream(3)); set it before filling the rest.  A size below the first
 *        version is refused with -EINVAL.
 * @xattrs: the protected values, indexed by enum imastream_evm_xattr. For a type-5
 *          (portable) signature give every value the file has, whatever the target
 *          kernel enables; for type 3 and HMAC give only those of LSMs the target kernel
 *          has enabled (the kernel hashes only enabled entries there).
 * @ino: inode number (h_misc.ino); truncated to 32 bits with IMASTREAM_EVM_MISC_32.
 *       Ignored (zero) for portable signatures.
 * @generation: inode generation (FS_IOC_GETVERSION); ignored for portable signatures
 * @uid: owner in the initial user namespace
 * @gid: group in the initial user namespace
 * @mode: the full i_mode, file type included (0100644, not 0644); stored as 16 bits
 * @has_uuid: append @uuid (type 3 and HMAC only; the kernel does when
 *            CONFIG_EVM_ATTR_FSUUID=y, the default)
 * @uuid: the filesystem's s_uuid (FS_IOC_GETFSUUID), 16 bytes in stored order
 * @misc_layout: enum imastream_evm_misc_layout of the target
 * @big_endian: the target CPU is big-endian (h_misc is a native C struct)
 * @owned: storage behind @xattrs when the library read them from a file itself; NULL
 *         when the caller filled the struct (always, outside the library).
 *
 * Zero the struct, set @size, then fill it in: struct imastream_evm_input in =
 * { .size = sizeof(in), ... }.
 */
struct imastream_evm_input {
	size_t size;
	struct imastream_evm_value xattrs[IMASTREAM_EVM_NR_XATTRS];
	uint64_t ino;
	uint32_t generation;
	uint32_t uid;
	uint32_t gid;
	uint32_t mode;
	bool has_uuid;
	uint8_t uuid[IMASTREAM_FS_UUID_SIZE];
	int misc_layout;
	bool big_endian;
	void *owned;
};

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_XATTR_H */
