/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers of installer/: the extractor's accessors for its package readers, the rpm pre-check. */
#ifndef IMASTREAM_INSTALLER_PRIVATE_H
#define IMASTREAM_INSTALLER_PRIVATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "imastream/common.h"
#include "imastream/extract.h"
#include "installed/owners.h"
#include "installed/paths.h"

struct imastream_extract;
/* The extractor's own root fd and log, for the package readers built on it. */
int ims_extract_rootfd(const struct imastream_extract *x);
const struct imastream_log *ims_extract_log(const struct imastream_extract *x);
/* The sink the extractor was created with (its package_header hook is the reader's to call). */
const struct imastream_entry_sink *ims_extract_sink(const struct imastream_extract *x);
/*
 * The open package's NEVRA, when its reader knows it: its intent journal then names it
 * "NEVRA from NAME", so that recovery's messages say what it was and where it came from.
 * Return: 0, -EINVAL (no package open), -ENOMEM.
 */
int ims_extract_set_nevra(struct imastream_extract *x, const char *nevra);
/*
 * The owner and mode a package gives "/" itself (Fedora's filesystem package owns it),
 * set on the root as rpm sets them on a directory that exists; the owner only when the
 * extractor may chown.  The root is never created, labelled, recorded or removed.
 * Return: 0, or the error said in one line.
 */
int ims_extract_set_root_meta(struct imastream_extract *x, mode_t mode, uid_t uid, gid_t gid);
/*
 * Whether the extractor takes an entry of type @mode & S_IFMT: a regular file, a
 * directory, a symlink, a character or block device or a FIFO (never a socket).  A
 * package reader asks it of every entry its header lists, to refuse the package before
 * its first write rather than in the middle of it.
 */
bool ims_entry_type_supported(mode_t mode);

/*
 * ims_rpm_check_header - what imastream_install_rpm() checks before writing (the header,
 * its digests, the payload's form, every file entry against @rootfd), then @judge on the
 * header when given; nothing is written.  Return: 0, or the error said in one line.
 */
int ims_rpm_check_header(int rootfd, int fd, const char *name, unsigned int flags,
			 const struct imastream_log *log,
			 int (*judge)(void *arg, const char *name, void *rpm_header), void *arg);

/* Whether @name is a temp name (IMASTREAM_TEMP_PREFIX) whose writer is gone. */
bool imastream_temp_name_is_leftover(const char *name);

/*
 * imastream_root_exists - whether @rootfd is an installed root: it has an rpm database at
 * rpm's %_dbpath, or imastream's state (var/lib/imastream).  Nothing is created.
 */
bool imastream_root_exists(int rootfd);

/* The absolute lock path rpm uses below a root: %{_rpmlock_path}. Return: 0, -errno. */
int imastream_root_lock_path(char *buf, size_t size);

#endif /* IMASTREAM_INSTALLER_PRIVATE_H */
