/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers of installed/: an installed file compared with its header, hard links in rpm's database. */
#ifndef IMASTREAM_INSTALLED_PRIVATE_H
#define IMASTREAM_INSTALLED_PRIVATE_H

#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "imastream/common.h"
#include "installed/owners.h"
#include "installed/paths.h"

/*
 * One file of an installed package (installed/installed.c): its directory opened below
 * the root without following a symlink, then the file itself likewise (never blocking on
 * a FIFO), and its type, mode, owner, size and capabilities compared with the header; a
 * directory's type, mode and owner, a symlink's type, owner and target (never followed:
 * @fd is -1, @path names it).
 */
enum ims_installed_state {
	IMS_INSTALLED_OPEN,	/* open, metadata as the header says */
	IMS_INSTALLED_MODIFIED, /* @letters (and @why) say what differs; @fd open if regular */
	IMS_INSTALLED_MISSING,
};
struct ims_installed {
	int state;
	int dirfd, fd;
	struct stat st;
	char letters[10]; /* rpm -V's "SM5DLUGTP": S, M, L, U, G, T, P filled here */
	const char *why;  /* what the letters cannot say, or NULL */
	bool config;
	unsigned int vflags; /* the header's %verify flags (RPMVERIFY_*): what rpm -V checks */
	char path[sizeof("/proc/self/fd/") + 12 + NAME_MAX];
};
/* @rpm_fi: an rpmfi on the file.  Return: 0 (see @in->state), or -errno (said). */
int ims_installed_open(int rootfd, void *rpm_fi, struct ims_ids *ids, const char *nevra,
		       const struct imastream_log *log, struct ims_installed *in);
void ims_installed_close(struct ims_installed *in);

/*
 * In *@count, how many paths of the root's rpm database (regular, non-ghost files of every
 * package, reached below @rootfd without a symlink) are the inode @st: the hard links it
 * may have with none from elsewhere.  Every such path is opened once, on the first call
 * (*@links is NULL then; free it with ims_rpmdb_links_free()).  Return: 0 or -errno (said).
 */
struct ims_rpmdb_links;
int ims_rpmdb_links(struct ims_rpmdb_links **links, const char *root, int rootfd,
		    const struct stat *st, const struct imastream_log *log, unsigned long *count);
void ims_rpmdb_links_free(struct ims_rpmdb_links *l);

/*
 * openat2(2) of @path below @rootfd, its @how->resolve rules (RESOLVE_BENEATH with
 * RESOLVE_NO_SYMLINKS, or RESOLVE_IN_ROOT) kept by a walk of single opens where the kernel
 * has no openat2 (before Linux 5.6) or a sandbox filters it out (seccomp, valgrind).
 * Return: a descriptor, or -errno as openat2 says it.
 */
int ims_openat2(int rootfd, const char *path, const struct open_how *how);
/* That walk alone, whatever the kernel has (the test compares the two). */
int ims_openat2_walk(int rootfd, const char *path, const struct open_how *how);

#endif /* IMASTREAM_INSTALLED_PRIVATE_H */
