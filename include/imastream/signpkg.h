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
 * @size: sizeof(struct imastream_signpkg_signer), as the caller was built (room to grow,
 *        libimastream(3)); a size below the first version is refused
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
	size_t size;
	int (*sign)(void *arg, int algo, const uint8_t *digest, size_t digest_len,
		    uint8_t *sig, size_t sig_size, size_t *sig_len_ret);
	void *arg;
	uint32_t keyid;
};

/**
 * struct imastream_signpkg_opts - how to sign a package
 * @size: sizeof(struct imastream_signpkg_opts), as the caller was built: options added
 *        later go at the end, and one the caller's size does not cover is zero, its
 *        default (room to grow, libimastream(3)); a size below the first version is
 *        refused
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
	size_t size;
	const struct imastream_signpkg_signer *signer;
	int algo;
	const char *outdir;
	const struct imastream_log *log;
};

/**
 * struct imastream_signpkg_result - what imastream_sign_package() did
 * @size: set by the caller to sizeof(struct imastream_signpkg_result), as it was built:
 *        the library fills only the members this size covers, so a program built before
 *        a member was added keeps working (room to grow, libimastream(3)); a size below
 *        the first version is refused before the package is looked at
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
	size_t size;
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
 * @result_ret: what was done (may be NULL; else its @size set); written only on success
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

/*
 * The signing host's side, and the way back.  A digest manifest (from
 * imastream_signpkg_export_digests()) is loaded and signed there, and becomes a
 * signatures file: the same records with each file's security.ima value added
 * (imastream-sign-digests(1) describes both formats).  The build host then loads the
 * signatures file and imports each package's block into that package.
 */
struct imastream_trust;

/* A loaded digest manifest or signatures file. */
struct imastream_signpkg_manifest;

enum imastream_signpkg_manifest_kind {
	IMASTREAM_SIGNPKG_DIGESTS = 0,    /* "imastream-digests 1" */
	IMASTREAM_SIGNPKG_SIGNATURES = 1, /* "imastream-signatures 1" */
};

/**
 * imastream_signpkg_manifest_load - read and strictly parse a manifest or signatures file
 * @path: the file, or "-" for standard input
 * @kind: enum imastream_signpkg_manifest_kind: what @path must be
 * @log: one line naming the file (and the line) on failure (may be NULL)
 * @ret: the result, freed with imastream_signpkg_manifest_free()
 *
 * The input is untrusted: anything but the one accepted form, anything over the format's
 * limits (512 MiB, 16 KiB lines, 1 Mi packages or files per package) is refused.  A
 * signatures file must also name each package (header SHA-256) once, and every value
 * must be an IMA signature (v2) over the line's algorithm.
 * Return: 0; -EINVAL for a malformed file; -E2BIG over a limit; -ENOMEM; -errno of
 * open or read.
 */
IMASTREAM_API int imastream_signpkg_manifest_load(const char *path, int kind,
						  const struct imastream_log *log,
						  struct imastream_signpkg_manifest **ret);
IMASTREAM_API void imastream_signpkg_manifest_free(struct imastream_signpkg_manifest *m);
/* How many packages and file entries @m holds (either may be NULL). */
IMASTREAM_API void imastream_signpkg_manifest_count(const struct imastream_signpkg_manifest *m,
						    size_t *packages_ret, size_t *files_ret);
/* IMASTREAM_HASH_BIT() of every digest algorithm that @m's file entries use. */
IMASTREAM_API unsigned int imastream_signpkg_manifest_algos(const struct imastream_signpkg_manifest *m);

/**
 * imastream_signpkg_manifest_sign - sign file entries @first .. @first + @count - 1
 * @m: a loaded digest manifest; entries are numbered across packages, in file order
 * @signer: as for imastream_sign_package()
 *
 * Threads may sign disjoint ranges of one @m at the same time, each with its own signer.
 * Return: 0; -EINVAL for a range outside @m, a signatures file or a @signer size below
 * the first version; what @signer returns
 * (one line naming the package and the file).
 */
IMASTREAM_API int imastream_signpkg_manifest_sign(struct imastream_signpkg_manifest *m,
						  size_t first, size_t count,
						  const struct imastream_signpkg_signer *signer,
						  const struct imastream_log *log);

/**
 * imastream_signpkg_manifest_write_signatures - write @m, every entry signed, as a signatures file
 * Return: 0; -EINVAL when an entry has no signature yet; -EIO for a write error.
 */
IMASTREAM_API int imastream_signpkg_manifest_write_signatures(const struct imastream_signpkg_manifest *m,
							      FILE *out);

/**
 * imastream_signpkg_import_signatures - store a signatures file's signatures into a package
 * @path: the package the signatures were made for
 * @sigs: a loaded signatures file (IMASTREAM_SIGNPKG_SIGNATURES)
 * @trust: the certificate(s) the signatures must verify with
 * @opts: @outdir and @log as for imastream_sign_package(); @signer and @algo are unused
 * @result_ret: as for imastream_sign_package()
 *
 * The block for this package is the one whose header SHA-256 is the SHA-256 of the
 * package's main header (which signing never changes), and its NEVRA must be the
 * package's.  It must hold exactly one entry per file that sign-package would sign, in
 * header order, with the package's own path, algorithm and digest; and every signature
 * must verify over that digest with @trust.  Only then is the package written, as
 * imastream_sign_package() writes it (checked, temp file, rename).
 * Return: 0; -ENOENT when @sigs has no block for this package; -EINVAL for a block that
 * does not match the package (a file missing, added, renamed or of another digest);
 * -ENOKEY or -EBADMSG for a signature made with another key or that does not verify;
 * otherwise as imastream_sign_package().  One line naming the package goes to the log.
 */
IMASTREAM_API int imastream_signpkg_import_signatures(const char *path,
						      const struct imastream_signpkg_manifest *sigs,
						      const struct imastream_trust *trust,
						      const struct imastream_signpkg_opts *opts,
						      struct imastream_signpkg_result *result_ret);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_SIGNPKG_H */
