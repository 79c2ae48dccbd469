/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The rpm reader: an rpm package through an extractor, and its checks before the root's lock. */
#ifndef IMASTREAM_INSTALL_RPM_H
#define IMASTREAM_INSTALL_RPM_H

#include "imastream/common.h"
#include "imastream/extract.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rpm reader options (imastream_install_rpm flags); the bridge's and the extractor's are
 * sets of their own (chain_sink.h says why). */
enum imastream_install_flag {
	/* Skip the header digest check (rpm's --nodigest); per-file digests are still checked. */
	IMASTREAM_INSTALL_NO_HEADER_DIGEST = 1u << 0,
	/* Skip the per-file content digest check (rpm's --nofiledigest). */
	IMASTREAM_INSTALL_NO_FILE_DIGEST = 1u << 1,
	/* Decompress on the calling thread too, instead of a reader thread (for comparison). */
	IMASTREAM_INSTALL_ONE_THREAD = 1u << 2,
};

/**
 * imastream_install_rpm - extract one rpm package through @x (begin … commit)
 * @x: an extractor with no package open
 * @fd: the package, positioned at its start; not closed
 * @name: the package's name for messages (its path)
 * @flags: enum imastream_install_flag
 *
 * Reads the lead, signature and header (header digests are checked, signatures are not:
 * trust is the chain's verify hook's business), checks every file entry of the header
 * before anything is written (paths, types, sizes, hard-link sets, duplicates, symlinks
 * used as directories), then streams the payload: each decompressed chunk goes to the
 * file and to the header digest check (RPMTAG_FILEDIGESTALGO) in one pass.  User and
 * group names are resolved in the root's etc/passwd and etc/group ("root" is 0; an
 * unknown name becomes 0 with a warning, as rpm does).  %ghost entries are not created.
 *
 * The payload is decompressed on a reader thread while the calling thread hashes,
 * writes and calls the sink (the sink is only ever called from the calling thread; the
 * log may also be called from the reader thread).  Uses librpm's process-wide state:
 * its configuration is read once, and its log is redirected to @x's log while the
 * package is read; do not call from several threads at once.
 *
 * Return: 0; -EBADMSG for a malformed or corrupted package (bad header, header digest,
 * corrupted or truncated payload, file digest mismatch, entries missing, duplicated or
 * not in the header); -EINVAL for an entry refused by policy (path traversal, symlink
 * used as a directory, absurd size); -EOPNOTSUPP for an unknown payload format or
 * compressor; -ENOSPC when the files do not fit; any extractor or sink error.
 * Everything is rolled back on error, with one line in @x's log.
 */
IMASTREAM_API int imastream_install_rpm(struct imastream_extract *x, int fd, const char *name,
					unsigned int flags);

/*
 * The checks of a package that need no lock, for a driver to make before it takes the
 * root's (imastream_root_txn_begin()), so that a refused package leaves the root exactly
 * as it was: everything imastream_install_rpm() checks before writing (the header and its
 * digests, the payload's form, every file entry against the root) and the header's
 * OpenPGP signature against @pgp_keys and the root's rpm keyring, as the chain sink made
 * with the same @sink_flags judges it (its verify hook, which can only refuse more, runs
 * at the install).  Nothing is written; the root's rpm database is read, never created.
 */
struct imastream_precheck;

IMASTREAM_API int imastream_precheck_new(int rootfd, const char *root, const char *const *pgp_keys,
					 unsigned int sink_flags, const struct imastream_log *log,
					 struct imastream_precheck **ret);
/* 0 when @fd's package (@flags: enum imastream_install_flag) passes, else the refusal,
 * said in one line. */
IMASTREAM_API int imastream_precheck_rpm(struct imastream_precheck *pc, int fd, const char *name,
					 unsigned int flags);
IMASTREAM_API void imastream_precheck_free(struct imastream_precheck *pc);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_INSTALL_RPM_H */
