/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Digest manifests: what a signing host needs of a package (its identity and file digests), and their strict parser. */
#ifndef IMASTREAM_SIGNPKG_MANIFEST_H
#define IMASTREAM_SIGNPKG_MANIFEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "imastream/common.h"
#include "imastream/hash.h"

/*
 * The format, version 1: text, one record per line, each line ended by LF, nothing else.
 *
 *   imastream-digests 1
 *   package NEVRA HEADER-SHA256
 *   file ALGO DIGEST PATH
 *   ...
 *   end N
 *   package ...
 *
 * NEVRA is the package's name-[epoch:]version-release.arch (letters, digits and
 * ._+~^:- only, 1..255 bytes); HEADER-SHA256 the SHA-256 of its main header
 * (RPMTAG_SHA256HEADER), 64 lowercase hex digits: together they say which package a
 * signature belongs to.  Each file line is one regular file with a content digest, in
 * header order: ALGO a hash name ("sha256"), DIGEST its lowercase hex of exactly that
 * size, PATH the installed path, absolute, with every byte outside 0x21..0x7e and every
 * '%' written as %HH (uppercase hex) and no other escape, and no empty, "." or ".."
 * component (rpm's file names have none).  "end N" closes the package and must count its
 * file lines.  Fields are separated by one space.  A path is listed once per package, and
 * a header digest once per manifest: a signatures file is looked up by both, so that what
 * sign-digests signs is what sign-package --import-signatures takes.
 *
 * There is one way to write a given manifest: the parser refuses anything else (a CR,
 * an empty line, a needless or lowercase escape, a record out of place, a count that does
 * not match) and anything over the limits below, with one line naming the line number.
 */
#define MANIFEST_MAGIC "imastream-digests 1"
#define MANIFEST_MAX_BYTES (512u << 20)   /* a whole manifest */
#define MANIFEST_MAX_LINE 16384u          /* one line, LF excluded */
#define MANIFEST_MAX_PATH 4096u           /* a decoded path, as PATH_MAX */
#define MANIFEST_MAX_NEVRA 255u
#define MANIFEST_MAX_FILES (1u << 20)     /* per package */
#define MANIFEST_MAX_PACKAGES (1u << 20)

/*
 * A signatures file, version 1: what the signing host sends back for a manifest.  The
 * same records, in the same order and form, except the magic and the file lines:
 *
 *   imastream-signatures 1
 *   package NEVRA HEADER-SHA256
 *   sig ALGO DIGEST VALUE PATH
 *   ...
 *   end N
 *
 * VALUE is the complete security.ima value in lowercase hex, as rpm stores it in
 * RPMSIGTAG_FILESIGNATURES: a signature v2 header (03 02 algo keyid size) over ALGO and
 * exactly its size of signature, at most SIGNATURES_MAX_VALUE bytes.  The digest is
 * repeated so that an importer can tell "signed for another content" from "the
 * signature does not verify".  A line may be longer, to hold VALUE.
 */
#define SIGNATURES_MAGIC "imastream-signatures 1"
#define SIGNATURES_MAX_LINE 20480u
/* The 9-byte header and an RSA-16384 signature: what sign-package itself can make. */
#define SIGNATURES_MAX_VALUE (9u + 2048u)

enum manifest_kind {
	MANIFEST_DIGESTS,    /* imastream-digests 1: file lines */
	MANIFEST_SIGNATURES, /* imastream-signatures 1: sig lines */
};

struct manifest_file {
	const struct imastream_hash_info *algo;
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	char *path; /* decoded, NUL-free */
	uint8_t *value; /* signatures: the security.ima value; NULL in a digest manifest */
	size_t value_len;
	size_t line; /* where it was read (parsed manifests only), for messages */
};

struct manifest_pkg {
	char *nevra;
	uint8_t header_sha256[32];
	struct manifest_file *files;
	size_t n_files;
	size_t line; /* where it was read (parsed manifests only), for messages */
};

struct manifest {
	struct manifest_pkg *pkgs;
	size_t n_pkgs;
	enum manifest_kind kind;
};

/*
 * manifest_parse - parse the @len bytes at @buf into @m (freed with manifest_free())
 * Return: 0; -EINVAL for a malformed manifest, -E2BIG over a limit (one line to @log
 * each, naming the line); -ENOMEM.  @m is empty after a failure.
 */
int manifest_parse(const char *buf, size_t len, const struct imastream_log *log,
		   struct manifest *m);
/* The same for a signatures file (SIGNATURES_MAGIC); messages name it so. */
int signatures_parse(const char *buf, size_t len, const struct imastream_log *log,
		     struct manifest *m);
/*
 * Either kind read from a file: messages name @name ("FILE, line N: ..."), so that a
 * user who passed several files knows which one to fix.
 */
int manifest_parse_file(const char *buf, size_t len, enum manifest_kind kind, const char *name,
			const struct imastream_log *log, struct manifest *m);
void manifest_free(struct manifest *m);

/* Writes the magic line: once, at the start of a manifest.  Return: 0 or -EIO. */
int manifest_write_start(FILE *out);
/* Writes @p's records in the one accepted form.  Return: 0, -EINVAL (a bad field), -EIO. */
int manifest_write_pkg(FILE *out, const struct manifest_pkg *p);
/* The same two for a signatures file: every file of @p must have its value. */
int signatures_write_start(FILE *out);
int signatures_write_pkg(FILE *out, const struct manifest_pkg *p);

/* A loaded manifest or signatures file, as the public API hands it out. */
struct manifest_entry {
	struct manifest_pkg *pkg;
	struct manifest_file *file;
};

struct imastream_signpkg_manifest {
	struct manifest m;
	struct manifest_entry *entries; /* every file entry, across packages, in order */
	size_t n_entries;
	struct manifest_pkg **by_header; /* signatures: sorted by header SHA-256 */
};

/* The block of a signatures file for the header SHA-256 @sha, or NULL. */
const struct manifest_pkg *manifest_find(const struct imastream_signpkg_manifest *sm,
					 const uint8_t sha[32]);
/* The first block for NEVRA @nevra, or NULL (for a message only: linear). */
const struct manifest_pkg *manifest_find_nevra(const struct imastream_signpkg_manifest *sm,
					       const char *nevra);

#endif /* IMASTREAM_SIGNPKG_MANIFEST_H */
