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
 * '%' written as %HH (uppercase hex) and no other escape.  "end N" closes the package and
 * must count its file lines.  Fields are separated by one space.
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

struct manifest_file {
	const struct imastream_hash_info *algo;
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	char *path; /* decoded, NUL-free */
};

struct manifest_pkg {
	char *nevra;
	uint8_t header_sha256[32];
	struct manifest_file *files;
	size_t n_files;
};

struct manifest {
	struct manifest_pkg *pkgs;
	size_t n_pkgs;
};

/*
 * manifest_parse - parse the @len bytes at @buf into @m (freed with manifest_free())
 * Return: 0; -EINVAL for a malformed manifest, -E2BIG over a limit (one line to @log
 * each, naming the line); -ENOMEM.  @m is empty after a failure.
 */
int manifest_parse(const char *buf, size_t len, const struct imastream_log *log,
		   struct manifest *m);
void manifest_free(struct manifest *m);

/* Writes the magic line: once, at the start of a manifest.  Return: 0 or -EIO. */
int manifest_write_start(FILE *out);
/* Writes @p's records in the one accepted form.  Return: 0, -EINVAL (a bad field), -EIO. */
int manifest_write_pkg(FILE *out, const struct manifest_pkg *p);

#endif /* IMASTREAM_SIGNPKG_MANIFEST_H */
