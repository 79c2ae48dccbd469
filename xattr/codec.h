/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What xattr/ offers beyond imastream/xattr.h, inside the build only (libimastream(3) names
 * no outside user for them): the signature headers, the EVM digests and their input read
 * from a file, the xattr names and the ordered writer.  For filesig/, the chain core and
 * the built-in plugins, the installed system, and the command, which links the library's
 * code.
 */
#ifndef IMASTREAM_XATTR_CODEC_H
#define IMASTREAM_XATTR_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imastream/xattr.h"

/* Flags of imastream_evm_collect(). */
enum {
	/* Read user.ima instead of security.ima (evmctl --xattr-user, portable mode). */
	IMASTREAM_EVM_COLLECT_USER_IMA = 1u << 0,
	/* Also read the inode generation (FS_IOC_GETVERSION): needed for type 3 and HMAC. */
	IMASTREAM_EVM_COLLECT_GENERATION = 1u << 1,
	/* Also read the filesystem UUID (FS_IOC_GETFSUUID) and set has_uuid. */
	IMASTREAM_EVM_COLLECT_UUID = 1u << 2,
};

enum imastream_xattr_attr {
	IMASTREAM_ATTR_IMA, /* security.ima, or user.ima */
	IMASTREAM_ATTR_EVM, /* security.evm, or user.evm */
};

/* Flags of imastream_xattr_writer_init(). */
enum {
	/* Write user.ima / user.evm instead of security.* (evmctl --xattr-user). */
	IMASTREAM_XATTR_WRITE_USER = 1u << 0,
};

#define IMASTREAM_XATTR_MAX_SOFT 8

/**
 * struct imastream_xattr_writer - how xattrs are written; a plain value, no resources
 * @flags: IMASTREAM_XATTR_WRITE_*
 * @n_soft: entries used in @soft_errors
 * @soft_errors: positive errno values that skip the write with a warning instead of
 *               failing; empty by default, so EOPNOTSUPP (no xattr support) is an error
 * @log: where messages go (may be NULL)
 * @reserved: room for members added later; zeroed by imastream_xattr_writer_init()
 *
 * Only imastream_xattr_writer_init() fills it (then imastream_xattr_writer_soft()).
 * Room to grow is reserved rather than a size (libimastream(3)): callers embed the
 * writer in their own structs and copy it by value, which a fixed sizeof keeps
 * compatible, and init, the library's own code, zeroes the room (or gives a later
 * member its default) for old and new programs alike, so the per-file writes check no
 * size.  A member added later is carved out of @reserved, whose size then shrinks by
 * as much, and zero in it means "as before".
 */
struct imastream_xattr_writer {
	unsigned int flags;
	unsigned int n_soft;
	int soft_errors[IMASTREAM_XATTR_MAX_SOFT];
	const struct imastream_log *log;
	uint64_t reserved[4];
};

/**
 * imastream_xattr_digest_size - digest size of any kernel hash_algo id
 * @algo: a kernel enum hash_algo id (0 md4 .. 22 sha3-512)
 *
 * Covers every id the kernel knows, including those libimastream cannot compute: the
 * decoder must accept what the kernel accepts.
 * Return: the size in bytes, or 0 for an id the kernel does not know.
 */
unsigned int imastream_xattr_digest_size(int algo);

/**
 * imastream_sig_header_encode - write the 9-byte header of a signature xattr
 * @type: IMASTREAM_XATTR_DIGSIG (3), IMASTREAM_XATTR_EVM_PORTABLE (5, both version 2)
 *        or IMASTREAM_XATTR_IMA_VERITY_SIG (6, version 3)
 * @algo: kernel hash_algo id of the digest that was signed
 * @keyid: key id (last four bytes of the certificate's SKID); stored big-endian
 * @sig_len: length of the raw signature, 1..IMASTREAM_SIG_MAX
 * @buf: at least IMASTREAM_SIG_HDR_SIZE bytes
 * @log: may be NULL
 *
 * Sign-in-place: a caller signs straight into @buf + IMASTREAM_SIG_HDR_SIZE (the header
 * size does not depend on the signature), then calls this with the length the signer
 * returned. The whole value is then IMASTREAM_SIG_HDR_SIZE + @sig_len bytes at @buf.
 * Return: 0, or -EINVAL for an unknown type or algorithm or a bad @sig_len.
 */
int imastream_sig_header_encode(int type, int algo, uint32_t keyid, size_t sig_len, uint8_t *buf,
				const struct imastream_log *log);

/**
 * imastream_sig_encode - build a complete signature xattr from a raw signature
 * @type, @algo, @keyid: as for imastream_sig_header_encode()
 * @sig: raw signature bytes (EVP_PKEY_sign output); may already sit at
 *       @buf + IMASTREAM_SIG_HDR_SIZE, or anywhere else inside @buf (it is moved)
 * @sig_len: its length
 * @buf: output; needs IMASTREAM_SIG_HDR_SIZE + @sig_len bytes
 * @buf_size: size of @buf
 * @len_ret: the value's length
 * @log: may be NULL
 *
 * Return: 0, -EINVAL (as imastream_sig_header_encode()), -ENOSPC if @buf is too small.
 */
int imastream_sig_encode(int type, int algo, uint32_t keyid, const uint8_t *sig, size_t sig_len,
			 uint8_t *buf, size_t buf_size, size_t *len_ret,
			 const struct imastream_log *log);

/**
 * imastream_sigv3_file_id_digest - the digest a version-3 signature signs
 * @type: the xattr type the signature goes into (IMASTREAM_XATTR_IMA_VERITY_SIG today)
 * @algo: kernel hash_algo id, used both inside the file id and to hash it
 * @digest: the file digest (the fs-verity digest for type 6)
 * @digest_len: must equal the digest size of @algo
 * @out: receives H_algo(type ‖ algo ‖ digest), the kernel's packed struct ima_file_id
 *       cut to 2 + digest_len bytes
 * @out_size: size of @out (IMASTREAM_HASH_MAX_DIGEST always suffices)
 * @len_ret: the digest size
 * @log: may be NULL
 *
 * Return: 0, -EINVAL for a bad type, an unknown algorithm or a length mismatch,
 * -ENOSPC if @out is too small, -EOPNOTSUPP if OpenSSL lacks the algorithm, -EIO.
 */
int imastream_sigv3_file_id_digest(int type, int algo, const uint8_t *digest, size_t digest_len,
				   uint8_t *out, size_t out_size, size_t *len_ret,
				   const struct imastream_log *log);

/* Full xattr name of a protected slot ("security.selinux"), or NULL. */
const char *imastream_evm_xattr_name(int slot);

/**
 * imastream_evm_misc_encode - the h_misc bytes the kernel hashes after the xattr values
 * @in: the input
 * @portable: zero ino and generation (type 5)
 * @buf: IMASTREAM_EVM_MISC_MAX bytes
 * @len_ret: 24 or 20
 * Return: 0, -EINVAL for an unknown layout or a size below the first version (this
 * function has no log to say which).
 */
int imastream_evm_misc_encode(const struct imastream_evm_input *in, bool portable, uint8_t *buf,
			      size_t *len_ret);

/**
 * imastream_evm_digest_portable - the digest a type-5 (portable) EVM signature signs
 * @in: the input; ino, generation and the UUID are not used
 * @algo: kernel hash_algo id to hash with (it goes into the signature header too)
 * @out: receives H(values ‖ h_misc{0, 0, uid, gid, mode})
 * @out_size: its size (IMASTREAM_HASH_MAX_DIGEST suffices)
 * @len_ret: the digest size
 * @log: may be NULL
 * Return: 0, -ENODATA without a security.ima value (the kernel refuses the signature),
 * -EINVAL for an unknown algorithm or layout, -ENOSPC, -EOPNOTSUPP, -EIO.
 */
int imastream_evm_digest_portable(const struct imastream_evm_input *in, int algo, uint8_t *out,
				  size_t out_size, size_t *len_ret,
				  const struct imastream_log *log);

/**
 * imastream_evm_digest - the digest a type-3 (non-portable) EVM signature signs
 * @in: the input, with ino, generation and (if @in->has_uuid) the fs UUID
 * Other parameters and return values as imastream_evm_digest_portable(), except that
 * security.ima is not required.
 */
int imastream_evm_digest(const struct imastream_evm_input *in, int algo, uint8_t *out,
			 size_t out_size, size_t *len_ret, const struct imastream_log *log);

/**
 * imastream_evm_hmac - a complete type-2 value: 02 ‖ HMAC-SHA1(key, same data as type 3)
 * @in: the input, as for imastream_evm_digest()
 * @key: the device's EVM key (the decrypted evm-key payload), zero-padded to 128 bytes
 *       internally as the kernel does; the copy is wiped
 * @key_len: 1..IMASTREAM_EVM_HMAC_KEY_MAX
 * @out: IMASTREAM_EVM_HMAC_XATTR_SIZE bytes
 * @log: may be NULL (the key is never logged)
 *
 * A running kernel refuses this value from userspace (EPERM); it is for image builders
 * that write filesystems offline for a device whose key they hold.
 * Return: 0, -EINVAL for a bad key length, -EIO.
 */
int imastream_evm_hmac(const struct imastream_evm_input *in, const uint8_t *key, size_t key_len,
		       uint8_t *out, const struct imastream_log *log);

/**
 * imastream_evm_collect - fill an EVM input from a file on disk
 * @fd: an open descriptor of the file, or -1 to use @path
 * @path: the file (never followed if it is a symlink: lstat/lgetxattr); also names the
 *        file in messages, so pass it with an fd too (may then be NULL)
 * @flags: IMASTREAM_EVM_COLLECT_*
 * @in_ret: its @size set by the caller (the library cannot know how large an older or
 *          newer program's struct is, so it never guesses); written only on success:
 *          zeroed, then filled as far as @size reaches: values present on the file, ino,
 *          uid, gid, mode, and what @flags ask for; layout 64-bit little-endian; @size
 *          stays the caller's.  Release with imastream_evm_input_release().
 * @log: may be NULL
 *
 * The generation and UUID need a descriptor: without @fd the file is opened (O_NOFOLLOW,
 * O_NONBLOCK) just for the ioctls.
 * Return: 0, -errno of stat/getxattr/open/ioctl (-ENOTTY: the filesystem has no
 * generation or UUID to give), -ENOMEM, -EINVAL if both @fd and @path are missing or
 * @in_ret->size is below the first version (one line: set .size = sizeof(...)).
 */
int imastream_evm_collect(int fd, const char *path, unsigned int flags,
			  struct imastream_evm_input *in_ret, const struct imastream_log *log);

/* Frees what imastream_evm_collect() allocated; the struct stays readable (values NULL). */
void imastream_evm_input_release(struct imastream_evm_input *in);

/**
 * imastream_xattr_name - the one rule for the user namespace (evmctl --xattr-user)
 * @attr: IMASTREAM_ATTR_IMA or IMASTREAM_ATTR_EVM
 * @user: true for "user.ima" / "user.evm", false for "security.ima" / "security.evm"
 * Return: a static string, NULL for an unknown @attr.
 */
const char *imastream_xattr_name(int attr, bool user);

void imastream_xattr_writer_init(struct imastream_xattr_writer *w, unsigned int flags,
				 const struct imastream_log *log);

/**
 * imastream_xattr_writer_soft - treat @err (a positive errno) as "skip with a warning"
 * Return: 0, -EINVAL for err <= 0, -ENOSPC when IMASTREAM_XATTR_MAX_SOFT are set.
 */
int imastream_xattr_writer_soft(struct imastream_xattr_writer *w, int err);

/* The name @attr is written under with this writer ("security.ima", "user.evm"). */
const char *imastream_xattr_writer_name(const struct imastream_xattr_writer *w, int attr);

/**
 * imastream_xattr_write - set security.ima or security.evm (or user.*) on one file
 * @w: the writer
 * @fd: the file's descriptor (fsetxattr), or -1 to write by @path with lsetxattr, which
 *      never follows a symlink
 * @path: the file; names it in messages (may be NULL when @fd is given)
 * @attr: enum imastream_xattr_attr
 * @value: the bytes
 * @len: their length
 * @skipped_ret: set to whether a soft error skipped the write (may be NULL)
 *
 * Every failure logs one line naming the file and the attribute.
 * Return: 0 (written, or skipped by a soft error), -errno of the set call otherwise,
 * -EINVAL for bad arguments.
 */
int imastream_xattr_write(const struct imastream_xattr_writer *w, int fd, const char *path,
			  int attr, const void *value, size_t len, bool *skipped_ret);

/* As imastream_xattr_write() with any full @name; the user switch does not apply. */
int imastream_xattr_write_name(const struct imastream_xattr_writer *w, int fd, const char *path,
			       const char *name, const void *value, size_t len, bool *skipped_ret);

#endif /* IMASTREAM_XATTR_CODEC_H */
