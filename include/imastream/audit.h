/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The audit of an installed root, and its orphans: labelled files that no package owns. */
#ifndef IMASTREAM_AUDIT_H
#define IMASTREAM_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"
#include "imastream/filesig.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The audit of an installed root (installed/audit.c): what imastream verify --rpmdb
 * reports for every regular file, directory and symlink (not %ghost) of every package of
 * the root's rpm database.
 */

/* struct imastream_audit_file.state */
enum imastream_audit_state {
	IMASTREAM_AUDIT_INTACT,	  /* type, mode, owner, size and content as the header says */
	IMASTREAM_AUDIT_MODIFIED, /* @letters (and @why) say what differs */
	IMASTREAM_AUDIT_MISSING,
	IMASTREAM_AUDIT_ERROR, /* could not be checked: @why (said on the log) */
	/* A regular %config file whose size, digest or mtime alone differ: an edit */
	IMASTREAM_AUDIT_CONFIG_EDITED,
	/* Such an edit, accepted: its digest and size are the accepted-config record's */
	IMASTREAM_AUDIT_CONFIG_ACCEPTED,
};

/**
 * struct imastream_audit_file - one file of the audit
 * @package: NEVRA
 * @path: the package path
 * @config: a %config file
 * @state: enum imastream_audit_state
 * @letters: rpm -V's "SM5DLUGTP" as rpm -V prints them ('.' passed or left out by
 *           %verify(not ...), '?' could not be read); D is never set (no devices)
 * @why: what the letters cannot say ("a symlink or non-directory in a path component"),
 *       or NULL
 * @verified: @report holds the verdicts on security.ima and security.evm (the file is a
 *            regular file that could be read), as imastream_verify_file() gives them
 * @marker: rpm -V's marker of the file: 'c' (%config), 'd' (%doc), 'l', 'r', ... or ' '
 * @regular: a regular file (else a directory or a symlink: letters only, no @report)
 * @label: security.selinux: IMASTREAM_VERIFY_OK (present), IMASTREAM_VERIFY_MISSING, or
 *         IMASTREAM_VERIFY_SKIPPED without IMASTREAM_AUDIT_LABELS (or when the file could
 *         not be opened)
 */
struct imastream_audit_file {
	const char *package;
	const char *path;
	bool config;
	int state;
	char letters[10];
	const char *why;
	bool verified;
	struct imastream_verify_report report;
	int label;
	char marker;
	bool regular;
};

/* A flag of imastream_audit_rpmdb(), with those of imastream_verify_file(). */
enum {
	/* Every file must have a security.selinux: the chain that labelled the root had the
	 * selinux plugin with a policy (file_contexts, or SELinux enabled). */
	IMASTREAM_AUDIT_LABELS = 1u << 16,
	/* Leave %config files out, as rpm -V --noconfig does. */
	IMASTREAM_AUDIT_NOCONFIG = 1u << 17,
};

/**
 * imastream_audit_rpmdb - audit every regular file of the packages installed in @root
 * @root: absolute
 * @names, @nnames: as imastream_rpmdb_foreach()
 * @v: checks security.ima and security.evm (its trust store knows the signers)
 * @verify_flags: as imastream_verify_file() takes them, and IMASTREAM_AUDIT_LABELS
 * @fn: called for each file, in header order, on the caller's thread
 *
 * Files are hashed and verified on one worker thread per online CPU (at most 8), each
 * with its own verifier made from @v's trust store and log: the log functions of @v,
 * of its trust store and @log may be called from several threads at once.
 * Return: 0 (verdicts are not errors), or an imastream_rpmdb_foreach() error.
 */
IMASTREAM_API int imastream_audit_rpmdb(const char *root, char *const *names, int nnames,
					struct imastream_verifier *v, unsigned int verify_flags,
					void (*fn)(void *arg, const struct imastream_audit_file *f),
					void *arg, const struct imastream_log *log);

/*
 * Orphans (installed/orphans.c): labelled files that no installed package owns.  A kill
 * of rpm in a transaction leaves its temp files (NAME;XXXXXXXX) beside their final names,
 * already carrying the security.ima and security.evm the plugin wrote: the kernel would
 * appraise and run them, and nobody owns them.
 */

/* struct imastream_orphan.kind */
enum imastream_orphan_kind {
	IMASTREAM_ORPHAN_UNOWNED,      /* any name: owned by no package, yet labelled */
	IMASTREAM_ORPHAN_RPM_TEMP,     /* NAME;XXXXXXXX: rpm's temp name, its transaction cut */
	IMASTREAM_ORPHAN_INSTALL_TEMP, /* .imastream-tmp-*: imastream recover's to remove */
	IMASTREAM_ORPHAN_RPM_BACKUP,   /* NAME.rpmnew, .rpmsave, .rpmorig: rpm's %config copies */
	/* NAME;XXXXXXXX where no package lists NAME: a killed rpm -i's, or not rpm's at all */
	IMASTREAM_ORPHAN_RPM_TEMP_UNOWNED,
	IMASTREAM_ORPHAN_GHOST, /* a regular file at a %ghost path: rpm put no content there */
};

/**
 * struct imastream_orphan - one labelled file nobody owns
 * @path: its real path below the root, with a leading slash
 * @kind: enum imastream_orphan_kind
 * @ima, @evm: it carries security.ima, security.evm (user.* with _XATTR_USER)
 * @sig: one of them is a signature (IMA, fs-verity or EVM, portable or not), which only
 *        a signer makes; a digest or an HMAC alone the kernel writes itself on files
 *        created where it appraises
 * @fixed: with IMASTREAM_ORPHANS_FIX: 1 an rpm temp file removed (its name: any other
 *         name of its inode keeps its labels) or another orphan's security.ima and
 *         security.evm removed, -errno that failed; 0 left alone (an install temp file,
 *         an inode @shared, or no _FIX)
 * @shared: how many other names its inode has that are not orphans themselves (a
 *          package's file, a name outside the root or where orphans are not looked
 *          for).  The labels are the inode's: while it has one, it is never unlabelled
 */
struct imastream_orphan {
	const char *path;
	int kind;
	bool ima, evm;
	int fixed;
	bool sig;
	unsigned long shared;
};

/* Flags of imastream_orphans_rpmdb(). */
enum {
	IMASTREAM_ORPHANS_FIX = 1u << 0,	/* remove rpm temp files, unlabel the others */
	IMASTREAM_ORPHANS_XATTR_USER = 1u << 1, /* user.ima and user.evm */
	/* Unowned files with a digest or an HMAC but no signature too (by default only an
	 * rpm temp file is an orphan without a signature). */
	IMASTREAM_ORPHANS_UNSIGNED = 1u << 2,
};

/**
 * imastream_orphans_rpmdb - the labelled regular files no package owns in @root
 * @root: absolute
 * @flags: IMASTREAM_ORPHANS_*
 * @fn: called per orphan, in the order of a walk of the root by name
 *
 * Walks the whole root (no link followed, not /proc, /sys and such) for regular files
 * that no package of the root's rpm database (or of imastream install's record) lists and
 * that carry security.ima or security.evm.  Directories are known by their real paths
 * (through the directory symlinks rpm follows).  An orphan is:
 * - a file of rpm's temp name (NAME;XXXXXXXX) or imastream's (.imastream-tmp-*), anywhere
 *   (a transaction may have written anywhere), whatever it carries for rpm's;
 * - a regular file at a path a package lists only as %ghost, with a signature;
 * - a .rpmnew, .rpmsave or .rpmorig with a signature, in a directory a package has files
 *   in or lists;
 * - any other with a signature (or with IMASTREAM_ORPHANS_UNSIGNED, a digest or an HMAC)
 *   in a directory a package lists itself (%dir) or in a directory no package has below
 *   one, down to any depth on the same filesystem: one that merely holds packages' files
 *   may have other owners.
 * A host that appraises by digest has the kernel write security.ima on every file it
 * creates: those are not orphans, and taking their digest off would keep them from being
 * read.  With IMASTREAM_ORPHANS_FIX, an rpm temp file beside a file a package lists is
 * removed (elsewhere, one whose signature verifies: imastream_orphans_rpmdb_trusted());
 * any other orphan but an install temp file is unlabelled, unless its inode has another
 * name that is no orphan (@shared; orphans of more than one name come last).  Takes no
 * lock: a caller that fixes holds rpm's transaction lock (imastream_root_txn_begin()), so
 * that a running transaction's temp files are not taken.
 * Return: 0, or -errno (said in one line).
 */
IMASTREAM_API int imastream_orphans_rpmdb(const char *root, unsigned int flags,
					  void (*fn)(void *arg, const struct imastream_orphan *f),
					  void *arg, const struct imastream_log *log);

/**
 * imastream_orphans_rpmdb_trusted - imastream_orphans_rpmdb() with a trust store
 * @v: verifies the security.ima signature of a file of rpm's temp name beside no file a
 *     package lists (a killed rpm -i's, before its package is in the database): one that
 *     verifies is rpm's (IMASTREAM_ORPHAN_RPM_TEMP, removed with _FIX), any other is
 *     IMASTREAM_ORPHAN_RPM_TEMP_UNOWNED (unlabelled, never removed); NULL: none is rpm's
 */
IMASTREAM_API int imastream_orphans_rpmdb_trusted(const char *root, unsigned int flags,
						  struct imastream_verifier *v,
						  void (*fn)(void *arg,
							     const struct imastream_orphan *f),
						  void *arg, const struct imastream_log *log);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_AUDIT_H */
