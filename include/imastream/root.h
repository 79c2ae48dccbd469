/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One transaction per root under rpm's lock, and recovery from an interrupted one. */
#ifndef IMASTREAM_ROOT_H
#define IMASTREAM_ROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One transaction per root, and recovery from an interrupted one.
 *
 * The lock is rpm's own transaction lock for the root: a write lock on the whole file
 * ROOT%{_rpmlock_path} (rpm's default: %{_dbpath}/.rpm.lock), which rpm -i --root ROOT
 * takes too, so that imastream and rpm, and two imastream installs, never write into one
 * root at the same time.  The file and its directory are created (0755) as rpm does; no
 * symlink is followed on the way.
 *
 * While a transaction is under way, ROOT/var/lib/imastream/running names its pid.  Found
 * at the next imastream_root_txn_begin() (which holds the lock, so its writer is gone),
 * it means a transaction was interrupted: every temp object of a dead writer in the root
 * is removed before anything else is written.  imastream_root_recover() does the same
 * without the marker.
 *
 * Before that, both complete the package whose renames a kill cut short: its intent
 * journal ROOT/var/lib/imastream/journal (IMASTREAM_EXTRACT_JOURNAL) lists them, and
 * every rename whose temp file is still there is done, the record's last (its temp files
 * were complete, labelled and synced before the journal was written: recovery rolls
 * forward, never back).  A journal that does not parse (truncated, rotten, hostile) is
 * refused in one line naming it, and nothing at all is changed or removed.  Only names
 * of IMASTREAM_TEMP_PREFIX + a dead writer's pid are removed (never a directory, never a
 * temp of a live process: a writer in another pid namespace whose pid is alive here
 * keeps its files).
 */
enum imastream_root_flag {
	/* Fail with -EBUSY when another transaction holds the lock (default: wait, after a
	 * notice that says who holds it). */
	IMASTREAM_ROOT_NO_WAIT = 1u << 0,
	/* imastream_root_txn_begin(): the lock only, for a writer of attributes (relabel):
	 * no marker, no recovery, and a directory that is not a root is refused. */
	IMASTREAM_ROOT_LOCK_ONLY = 1u << 1,
};

/*
 * What recovery found and removed.  The caller sets @size to sizeof the struct it was
 * built with; the library fills the members that size covers (room to grow).
 */
struct imastream_recover_stats {
	size_t size;
	unsigned long removed;	 /* temp objects of dead writers, removed */
	unsigned long kept;	 /* temp objects whose writer still runs, kept */
	uint64_t bytes;		 /* the space the removed files took */
	unsigned long journals;	 /* interrupted transactions completed from their journal */
	unsigned long completed; /* the renames and removals they still had to do */
};

struct imastream_root_txn;

/**
 * imastream_root_txn_begin - lock the root for a transaction, recovering an interrupted one
 * @rootfd: the root
 * @root: its absolute path (for rpm's lock path and messages)
 * @flags: enum imastream_root_flag
 * @st: what recovery removed (zero when the last transaction ended well), or NULL; its
 *      @size set by the caller, and filled on failure too with what was done so far
 * @ret: the transaction, ended with imastream_root_txn_end()
 * Return: 0; -EINVAL for a @st whose size is below the first version (before the lock is
 * taken; @st is then left as it was); -EBUSY (IMASTREAM_ROOT_NO_WAIT, lock held); -errno
 * creating or locking the lock file or the marker, or removing a leftover.  Errors are
 * logged in one line.
 */
IMASTREAM_API int imastream_root_txn_begin(int rootfd, const char *root, unsigned int flags,
					   const struct imastream_log *log,
					   struct imastream_recover_stats *st,
					   struct imastream_root_txn **ret);
/* Removes the marker and releases the lock (@status: 0 or the transaction's error). */
IMASTREAM_API void imastream_root_txn_end(struct imastream_root_txn *t, int status);

/**
 * imastream_root_recover - under the lock, remove what interrupted transactions left
 * Walks the whole root (not /proc, /sys and such of a live one).  A directory that is
 * not a root (no rpm database at rpm's %_dbpath, no var/lib/imastream) is refused, -ENOENT, before anything is created
 * in it.  Return: as imastream_root_txn_begin().
 */
IMASTREAM_API int imastream_root_recover(int rootfd, const char *root, unsigned int flags,
					 const struct imastream_log *log,
					 struct imastream_recover_stats *st);

/**
 * imastream_root_interrupted - whether a transaction in @rootfd was cut short
 * Return: 1 when the root has an intent journal whose writer is gone (recovery completes
 * it), 2 when its writer is still running (an install is renaming right now), 3 when an
 * install was interrupted before its renames (the marker of a transaction under way is
 * there, its process gone: recovery removes the temp files it left), 0 when none of these,
 * -EMEDIUMTYPE when the journal or the marker is not a regular file (it is never opened
 * so that it could block or follow a link), -errno.
 */
IMASTREAM_API int imastream_root_interrupted(int rootfd);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_ROOT_H */
