/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Relabelling an installed root: every file of a package, from its header, through the chain. */
#ifndef IMASTREAM_RELABEL_H
#define IMASTREAM_RELABEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Relabelling an installed root (installed/relabel.c): every regular file of a package,
 * as its header in the root's rpm database describes it, checked on disk and passed
 * through the same hook chain as an install, without reinstalling anything.
 */

struct imastream_chain;
struct imastream_config;

enum imastream_relabel_flag {
	/* Compute and compare every value, write nothing. */
	IMASTREAM_RELABEL_DRY_RUN = 1u << 0,
	/* A %config file whose content (size, digest) changed since install is labelled
	 * with its current digest instead of being refused. */
	IMASTREAM_RELABEL_MODIFIED_CONFIG = 1u << 1,
	/* No thread prepares ECDSA nonces ahead (by default one does, on two CPUs or more,
	 * for a key held in this process), as the installer's IMASTREAM_SINK_NO_SIGN_AHEAD. */
	IMASTREAM_RELABEL_NO_SIGN_AHEAD = 1u << 2,
};

/* What became of one file (struct imastream_relabel_file.status). */
enum imastream_relabel_status {
	IMASTREAM_RELABEL_LABELLED, /* its values were written (would be, with DRY_RUN) */
	IMASTREAM_RELABEL_CORRECT,  /* it already had them: nothing written */
	IMASTREAM_RELABEL_MODIFIED, /* differs from its header: left untouched */
	IMASTREAM_RELABEL_MISSING,  /* not on disk */
	IMASTREAM_RELABEL_FAILED,   /* the chain or a write failed (said on the log) */
};

/**
 * struct imastream_relabel_file - the outcome for one file, given to the report callback
 * @package: the package's NEVRA
 * @path: the package path ("/usr/bin/ls")
 * @status: enum imastream_relabel_status
 * @letters: for MODIFIED, rpm -V's nine columns "SM5DLUGTP", each '.' when it matches:
 *           S size, M mode (and type), 5 content digest, U owner, G group, P
 *           capabilities (security.capability against RPMTAG_FILECAPS, compared as
 *           libcap reads them, as rpm -V does), L a symlink's target, T the mtime
 *           (whole seconds; T alone is no modification: EVM does not cover it); D is
 *           not checked; a column %verify(not ...) leaves out is '.'; 5 only when the
 *           size matches
 * @why: for MODIFIED, MISSING and FAILED a short phrase ("replaced by a symlink",
 *       "a symlink in a path component"); else NULL
 * @config: a %config file
 * @written: for LABELLED, the names of the xattrs written, comma-separated
 */
struct imastream_relabel_file {
	const char *package;
	const char *path;
	int status;
	char letters[10];
	const char *why;
	bool config;
	const char *written;
};

/* Running totals (imastream_relabel_counts()). */
struct imastream_relabel_counts {
	unsigned long packages;
	unsigned long labelled, correct, modified, missing, failed;
	uint64_t bytes;			 /* content read */
	unsigned long hashed_on_workers; /* regular files whose content a worker thread hashed */
};

/**
 * struct imastream_relabel_opts - how to relabel
 * @size: sizeof(struct imastream_relabel_opts), as the caller was built (as for
 *	struct imastream_chain_sink_opts)
 * @root: the root, absolute ("/" for the running system)
 * @cfg: the configuration the chain was made with (its xattr namespace, no_xattr_support,
 *       and "trust" and "cert", which tell an existing signature that is already right)
 * @flags: IMASTREAM_RELABEL_*
 * @report: called for each file, in header order (may be NULL)
 */
struct imastream_relabel_opts {
	size_t size;
	const char *root;
	const struct imastream_config *cfg;
	unsigned int flags;
	void (*report)(void *arg, const struct imastream_relabel_file *file);
	void *report_arg;
};

struct imastream_relabel;

/**
 * imastream_relabel_new - start relabelling a root (the chain's tsm_pre runs here)
 * @chain: an initialised chain; must outlive the relabel
 * Return: 0, -EINVAL for a relative root, -errno opening it, the chain's refusal.
 */
IMASTREAM_API int imastream_relabel_new(struct imastream_chain *chain,
					const struct imastream_relabel_opts *opts,
					const struct imastream_log *log,
					struct imastream_relabel **ret);

/**
 * imastream_relabel_header - relabel one installed package from its header
 * @rpm_header: a librpm Header, as imastream_rpmdb_foreach() gives it
 *
 * For each regular, non-ghost file (directories and symlinks are checked for type,
 * owner, mode or target, and get only what the chain gives them: labels): its
 * directory is opened below the root without following any symlink, the file itself
 * likewise; type, mode, owner, size and capabilities are compared with the header, the
 * content is read once, fed to the chain (which computes every digest it needs) and its
 * digest compared with the header's.  Only a file that
 * matches gets values, and only those that differ from what it has are written: labels
 * and security.ima first, security.evm strictly last (an old security.evm is removed
 * before anything it covers changes, so none ever covers a stale value).
 * Return: 0 (files that differ are reported, not errors), the chain's psm_pre refusal
 * (every file of the package then FAILED), -ENOMEM.
 */
IMASTREAM_API int imastream_relabel_header(struct imastream_relabel *r, void *rpm_header);

IMASTREAM_API const struct imastream_relabel_counts *imastream_relabel_counts(
	const struct imastream_relabel *r);

/* Runs the chain's tsm_post with @res and frees. */
IMASTREAM_API void imastream_relabel_free(struct imastream_relabel *r, int res);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_RELABEL_H */
