/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal: an rpm package file split into lead, signature header, header and payload. */
#ifndef IMASTREAM_SIGNPKG_RPMPKG_H
#define IMASTREAM_SIGNPKG_RPMPKG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rpm/header.h>

#include "imastream/common.h"
#include "imastream/hash.h"
#include "imastream/signpkg.h"

#define RPMPKG_LEAD_SIZE 96
/* Every header starts with 8e ad e8 01, four reserved bytes, then be32 il and be32 dl. */
#define RPMPKG_HDR_INTRO 16
#define RPMPKG_HDR_MAGIC_SIZE 8
extern const uint8_t rpmpkg_hdr_magic[RPMPKG_HDR_MAGIC_SIZE];

/*
 * The raw blobs keep the bytes exactly as they are in the file (magic included, padding
 * excluded), because the header is copied out unchanged and its digests cover these bytes.
 */
struct rpmpkg {
	int fd;
	const char *path;
	uint8_t lead[RPMPKG_LEAD_SIZE];
	uint8_t *sig_blob;
	size_t sig_len;
	uint8_t *hdr_blob;
	size_t hdr_len;
	off_t hdr_off;
	off_t payload_off;
	Header sigh; /* imported signature header */
	Header h;    /* imported main header (tags only; never written back) */
};

/*
 * Opens @path, reads and bounds-checks the lead and both headers, imports them, and
 * checks the header-only digests (RPMSIGTAG_SHA256, RPMSIGTAG_SHA1) against the header
 * bytes.  On failure logs one line and leaves @pkg closed.
 */
int rpmpkg_open(struct rpmpkg *pkg, const char *path, const struct imastream_log *log);
void rpmpkg_close(struct rpmpkg *pkg);

/*
 * Writes the header and the payload to @out unchanged while checking the header+payload
 * size (RPMSIGTAG_SIZE / LONGSIZE), MD5 (RPMSIGTAG_MD5) and the payload digest
 * (RPMTAG_PAYLOADDIGEST).  Returns 0, -EINVAL for a mismatch or a truncated file, -errno.
 */
int rpmpkg_copy_verified(struct rpmpkg *pkg, int out, const char *out_path,
			 const struct imastream_log *log);

/* File digests recomputed from the payload, indexed like the header's file list. */
struct rpmpkg_digests {
	uint8_t *digest; /* n * IMASTREAM_HASH_MAX_DIGEST bytes */
	uint8_t *have;   /* 1 where the payload held content for that file */
	unsigned int n;
};

/*
 * Decompresses the payload once and hashes every regular file's content with @own (the
 * package's file digest algorithm) and @want at the same time.  A content whose @own
 * digest differs from RPMTAG_FILEDIGESTS is refused as corrupt, so only what rpm will
 * verify at install time gets signed.  Hardlink sets share one content.  Leaves the file
 * offset at the payload start.  Returns 0, -EINVAL (corrupt payload), -ENOMEM, -EIO.
 */
int rpmpkg_rehash(struct rpmpkg *pkg, const struct imastream_hash_info *own,
		  const struct imastream_hash_info *want, struct rpmpkg_digests *out,
		  const struct imastream_log *log);
void rpmpkg_digests_free(struct rpmpkg_digests *d);

/* The package's file digest algorithm (rpm's MD5 when it does not say), or NULL if unknown. */
const struct imastream_hash_info *rpmpkg_file_digest_algo(const struct rpmpkg *pkg);

/* Lowercase hex of @len bytes into @out (2 * @len + 1 bytes). */
void rpmpkg_hex(const uint8_t *in, size_t len, char *out);
/* Parses exactly @len bytes of hex; returns 0 or -EINVAL. */
int rpmpkg_unhex(const char *hex, uint8_t *out, size_t len);

/* Shared by sign.c and import.c: what a signed package's signature header carries. */
struct file_sigs {
	char **hex;      /* one string per file: "" or the hex security.ima value */
	unsigned int n;
	unsigned int signed_files;
	unsigned int max_len;
};
void file_sigs_free(struct file_sigs *fs);

/* Refuses, in one line, what rpm itself would not let file signatures be added to. */
int signpkg_check_signable(const struct rpmpkg *pkg, const struct imastream_log *log);
/*
 * sign.c: checks the sizes of a caller's signer (copied into @signer, ours, when given)
 * and result (may be NULL), each in one line; 0 or -EINVAL / -E2BIG.
 */
int signpkg_check_sized(const struct imastream_signpkg_signer *caller_signer,
			struct imastream_signpkg_signer *signer,
			const struct imastream_signpkg_result *result,
			const struct imastream_log *log);
/*
 * The end of signing and of importing signatures: a new signature header with @fs in
 * it, written with the package's verified header and payload to a temp file beside the
 * destination (the package itself, or OUTDIR/its name) and renamed into place; on any
 * failure the temp file is removed and the destination untouched.  Fills @res but its
 * @algo and @rehashed, which the caller knows.
 */
int signpkg_store(struct rpmpkg *pkg, const struct file_sigs *fs, const char *outdir,
		  struct imastream_signpkg_result *res, const struct imastream_log *log);

#endif /* IMASTREAM_SIGNPKG_RPMPKG_H */
