/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pending labels: what a build in a user namespace could not write, applied as real root. */
#ifndef IMASTREAM_PENDING_H
#define IMASTREAM_PENDING_H

#include <stddef.h>

#include "imastream/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A chain whose security xattrs a user namespace refuses (userns_xattrs = pending, see
 * imastream/chain.h) keeps, per file, the values it would have written, the owner and
 * mode the file has in the image (the header's, with the ids the build's namespace
 * mapped them to) and its content digest, below ROOT/var/lib/imastream/pending/.
 */

/**
 * struct imastream_pending_counts - what imastream_pending_apply() did
 * @size: sizeof(struct imastream_pending_counts), set by the caller first
 * @entries: entries read
 * @applied: files whose values are now on them (written, or found already there)
 * @written: xattrs written (a rerun after an interruption writes only the rest)
 * @refused: entries refused, each named in one line; nothing was written on their file
 *           and the entry is left in place
 */
struct imastream_pending_counts {
	size_t size;
	unsigned long entries;
	unsigned long applied;
	unsigned long written;
	unsigned long refused;
};

/**
 * imastream_pending_apply - write the pending labels of @root, as real root
 * @root: absolute
 * @counts: filled (may be NULL)
 *
 * Each entry names a package path and the package (NEVRA) that owns it in the root's
 * rpm database or install record.  Before anything is written on a file: the path must
 * be a plain path below the root reached without a symlink; the package must list it,
 * with the entry's type, mode, owner and digest; the file must have that type and mode,
 * the owner the header gives or the ids the build's namespace mapped it to (then it is
 * given the header's owner, its mode and capabilities kept), and content with that
 * digest; a digest security.ima must be that digest.  Values are written in the entry's
 * order (security.evm last), each only when the file does not hold it already, and the
 * entry is removed once its file holds them all: a run killed at any point and run again
 * writes each value once.  Of several transactions' entries for one path the newest
 * applies and the older are removed.  A refused entry (said in one line naming the path
 * and why: outside the root, another package's file, a changed file, a digest that does
 * not match, truncated, duplicated, a newer format) leaves its file untouched.
 * Return: 0 (refusals are counted, not errors), -errno for the run itself (said).
 */
IMASTREAM_API int imastream_pending_apply(const char *root, struct imastream_pending_counts *counts,
					  const struct imastream_log *log);

/**
 * imastream_pending_foreach - the paths with pending labels in @root, in entry order
 * @fn: called with each entry's package path; a non-zero return stops the walk
 * Return: 0 (also when nothing is pending), -errno reading the directory, or @fn's value.
 * An entry that cannot be parsed is passed with its file's name below the root.
 */
IMASTREAM_API int imastream_pending_foreach(const char *root,
					    int (*fn)(void *arg, const char *path), void *arg,
					    const struct imastream_log *log);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_PENDING_H */
