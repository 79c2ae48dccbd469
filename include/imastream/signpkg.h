/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Adding IMA file signatures to rpm packages, as rpm 4.18's `rpmsign --signfiles` stores them. */
#ifndef IMASTREAM_SIGNPKG_H
#define IMASTREAM_SIGNPKG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "imastream/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Where the signatures go.  rpm 4.18 keeps them in the *signature* header, as hex strings
 * of the complete security.ima value (03 02 algo keyid size sig), one per file in header
 * order, an empty string for a file without a content digest:
 *   RPMSIGTAG_FILESIGNATURES (274, string array) and RPMSIGTAG_FILESIGNATURELENGTH
 *   (275, int32: the longest value in bytes).
 * When rpm reads a package it copies them into the main header as RPMTAG_FILESIGNATURES
 * (5090) and RPMTAG_FILESIGNATURELENGTH (5091), which is what queries and the stock ima
 * plugin see.  The main header and the payload are therefore never changed: the header
 * digests, the payload digest and any OpenPGP signature stay valid and are kept.
 */
#define IMASTREAM_RPMSIGTAG_FILESIGNATURES 274
#define IMASTREAM_RPMSIGTAG_FILESIGNATURELENGTH 275

/**
 * struct imastream_signpkg_signer - makes one raw signature over a file digest
 * @sign: signs @digest (@digest_len bytes, a digest in kernel hash_algo @algo) and
 *        writes the raw signature (what EVP_PKEY_sign makes: PKCS#1 v1.5 with DigestInfo
 *        for RSA, a DER ECDSA-Sig-Value for EC) into @sig (@sig_size bytes); returns 0 or
 *        a negative errno, and the length through @sig_len_ret
 * @arg: the caller's pointer, handed to @sign
 * @keyid: the key id stored in every signature header (host order)
 *
 * The signer is the caller's; signpkg never frees it.  keys/ provides one from a PEM file,
 * a pkcs11 URI or a kernel-held key.
 */
struct imastream_signpkg_signer {
	int (*sign)(void *arg, int algo, const uint8_t *digest, size_t digest_len,
		    uint8_t *sig, size_t sig_size, size_t *sig_len_ret);
	void *arg;
	uint32_t keyid;
};

/**
 * struct imastream_signpkg_opts - how to sign a package
 * @signer: makes the signatures (required)
 * @algo: kernel hash_algo id the signatures must use; 0 takes the package's file digest
 *        algorithm (RPMTAG_FILEDIGESTALGO), whose digests are signed as the header has
 *        them.  Another algorithm makes signpkg decompress the payload once and hash
 *        every file with both algorithms in one pass (hashers/): the package's digest
 *        must match the header before the new one is signed.
 * @outdir: write the signed package into this folder under the same name; NULL replaces
 *          the input in place (temp file in the same folder, then rename)
 * @log: where failures and notices go (may be NULL)
 */
struct imastream_signpkg_opts {
	const struct imastream_signpkg_signer *signer;
	int algo;
	const char *outdir;
	const struct imastream_log *log;
};

/**
 * struct imastream_signpkg_result - what imastream_sign_package() did
 * @files: file entries in the package
 * @signed_files: entries that got a signature (the others have no content digest:
 *                directories, symlinks, devices, ghosts)
 * @algo: kernel hash_algo id of the signatures
 * @max_len: longest security.ima value, as stored in RPMSIGTAG_FILESIGNATURELENGTH
 * @replaced: 1 if the package already carried file signatures (they were replaced)
 * @openpgp: 1 if the package carries an OpenPGP signature (still valid: it was kept)
 * @rehashed: 1 if the file contents were hashed again from the payload (@algo is not the
 *            package's file digest algorithm)
 */
struct imastream_signpkg_result {
	unsigned int files;
	unsigned int signed_files;
	int algo;
	unsigned int max_len;
	int replaced;
	int openpgp;
	int rehashed;
};

/**
 * imastream_sign_package - add IMA file signatures to one rpm package
 * @path: the package (a binary rpm v4 package with an immutable header region)
 * @opts: the signer, algorithm, output folder and log
 * @result_ret: what was done (may be NULL); written only on success
 *
 * The package is checked before anything is written: the lead and both headers are
 * parsed with bounds checks, the header SHA256/SHA1 digests must match, and while the
 * header and payload are copied byte for byte their size, MD5 and payload digest must
 * match too.  The result is written to a temp file in the destination folder and renamed
 * over the destination only when complete; on any failure the temp file is removed and
 * the input is untouched.
 *
 * Return: 0; -EINVAL for a malformed, corrupt or unsupported package (not an rpm, a source
 * package, a v3 package, file signatures already in the main header), a digest that does
 * not match (header, payload, or a file's content against its header digest), or a bad
 * option; -EOPNOTSUPP for an algorithm this OpenSSL cannot compute; -ENOMEM; an -errno
 * of open, read, write or rename (-EACCES for an unwritable folder);
 * or what the signer returns.  One line naming the package and the cause goes to the log.
 */
IMASTREAM_API int imastream_sign_package(const char *path, const struct imastream_signpkg_opts *opts,
					 struct imastream_signpkg_result *result_ret);

/**
 * imastream_signpkg_manifest_start - begin a digest manifest
 * @out: where the manifest goes
 *
 * A digest manifest carries what a signing host needs of packages, and nothing more: per
 * package its identity and the digest of each file to sign (the format is described in
 * imastream-sign-package(1)).  Write this line once, then each package's records.
 * Return: 0, or -EIO for a write error.
 */
IMASTREAM_API int imastream_signpkg_manifest_start(FILE *out);

/**
 * imastream_signpkg_export_digests - one package's records in a digest manifest
 * @path: the package (a binary rpm v4 package)
 * @out: receives "package NEVRA HEADER-SHA256", one "file ALGO DIGEST PATH" line per
 *       file with a content digest (what sign-package signs), in header order, and
 *       "end COUNT"
 * @log: where a failure is explained, in one line naming the package (may be NULL)
 *
 * NEVRA is rpm's %{NEVRA}; HEADER-SHA256 is the SHA-256 of the main header as it is in
 * the file (rpm's %{SHA256HEADER}), so a signature made for this record can be tied to
 * this exact package.  The digests are the header's own (RPMTAG_FILEDIGESTS, in the
 * package's file digest algorithm); the header digests are checked first, the payload
 * is not read.  Nothing is written for a package that fails.
 *
 * Return: 0; -EINVAL for a malformed, corrupt or unsupported package (as
 * imastream_sign_package()) or a NEVRA the format cannot carry; -ENOMEM; an -errno of
 * open or read; -EIO for a write error.
 */
IMASTREAM_API int imastream_signpkg_export_digests(const char *path, FILE *out,
						   const struct imastream_log *log);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_SIGNPKG_H */
