/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An installed root: its rpm database read as rpm reads it, its files opened without leaving it. */
#ifndef IMASTREAM_RPMDB_H
#define IMASTREAM_RPMDB_H

#include <stddef.h>

#include "imastream/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An installed root: what its rpm database lists, read as rpm reads it for that root
 * (rpm's own configuration and %_dbpath below the root), and its files opened without
 * leaving it.  imastream relabel and imastream verify --rpmdb are built on these.
 */

/**
 * imastream_open_beneath - open @path below @rootfd without following any symlink
 * @rootfd: the root
 * @path: a package path ("/usr/bin/ls"; leading slashes mean "below the root")
 * @flags: open(2) flags; O_NOFOLLOW, O_CLOEXEC and (but with O_PATH) O_NOCTTY are added
 *
 * No component may be a symlink (the last one neither) and ".." may not climb out:
 * openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, or,
 * where the kernel has none (before Linux 5.6) or a sandbox filters it out, a walk of
 * single O_NOFOLLOW opens that keeps the same rules.
 * Return: a descriptor, or -errno (-ELOOP: a symlink on the way, -EXDEV: out of the
 * root, -ENOENT).
 */
IMASTREAM_API int imastream_open_beneath(int rootfd, const char *path, int flags);

/**
 * imastream_open_dir_as_rpm - open directory @dir below @rootfd as rpm --root would
 * @rootfd: the root
 * @dir: a package directory ("/bin"; leading slashes mean "below the root")
 * @flags: open(2) flags (O_RDONLY or O_PATH); O_DIRECTORY and O_CLOEXEC are added
 * @real: if not NULL, gets the directory's real path below the root, without a leading
 *        slash ("usr/bin" for "/bin" on a merged-/usr root; "" for the root)
 * @real_size: the size of @real
 *
 * A component that is a symlink is followed only where rpm follows it (its fsmOpenat()):
 * the link is owned by root or by the owner of the directory it leads to.  Its target is
 * resolved inside the root, an absolute target and ".." as under rpm's chroot
 * (openat2(2) RESOLVE_IN_ROOT), so it cannot lead out.  "." and ".." components are
 * refused.  Return: a descriptor, or -errno (-EPERM: a symlink rpm would not follow,
 * -ELOOP: a symlink that leads to no directory below the root, -ENOTDIR, -ENOENT,
 * -EXDEV: a "." or ".." component).
 */
IMASTREAM_API int imastream_open_dir_as_rpm(int rootfd, const char *dir, int flags, char *real,
					    size_t real_size);

/**
 * imastream_rpmdb_foreach - the headers of the packages installed in @root
 * @root: the root directory, absolute ("/" for the running system)
 * @names: package names or NEVRA labels to look up (as rpm -q takes them), or NULL
 * @nnames: their number; 0 means every installed package
 * @fn: called with each package's Header (valid during the call; headerLink() to keep);
 *      a non-zero return stops the walk and is returned
 * Return: 0, -ENOENT when the root has no database or a name is not installed (said in
 * one line), -EIO when rpm's configuration cannot be read, or @fn's value.
 */
IMASTREAM_API int imastream_rpmdb_foreach(const char *root, char *const *names, int nnames,
					  int (*fn)(void *arg, void *rpm_header), void *arg,
					  const struct imastream_log *log);

/*
 * imastream_rpm_set_dbpath - use @dbpath (absolute, below every root) as rpm's %_dbpath,
 * as rpm --dbpath does: for the database read and for the lock (%{_rpmlock_path}, by
 * default %{_dbpath}/.rpm.lock).  Process-wide.  Return: 0, -EINVAL (logged) if not
 * absolute, -errno.
 */
IMASTREAM_API int imastream_rpm_set_dbpath(const char *dbpath, const struct imastream_log *log);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_RPMDB_H */
