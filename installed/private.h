/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers of installed/: an installed file compared with its header, hard links in rpm's database, the orphan search's state. */
#ifndef IMASTREAM_INSTALLED_PRIVATE_H
#define IMASTREAM_INSTALLED_PRIVATE_H

#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "imastream/audit.h"
#include "imastream/common.h"
#include "imastream/record.h"
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

/*
 * The orphan search (orphans.c): what packages own (orphans_owned.c, from the rpm
 * database and the install record), then a walk of the root for labelled files outside it.
 */
struct imastream_verifier;
struct orphans {
	int rootfd;
	unsigned int flags;
	/* Tells a killed rpm -i's temp files by their signatures; or NULL. */
	struct imastream_verifier *v;
	/* Real paths below the root of every owned object: OWNED_*. */
	struct ims_strmap owned;
	struct ims_strmap dir_of;  /* a package directory ("/bin/") -> index in dirs, -1 */
	struct ims_strmap dir_set; /* a real directory -> index in dirs */
	char **dirs;		   /* real directories packages have, "" for the root */
	bool *dir_owned;	   /* per dirs: a package lists it (a %dir), not only its files */
	size_t ndirs, adirs;
	/* Inodes of more than one name: how many of their names the walk found orphans;
	 * and those orphans, handled once all are known. */
	struct ims_strmap inode_of; /* "dev:ino" -> index in inodes */
	struct inode_names {
		unsigned long orphans;
	} * inodes;
	size_t ninodes, ainodes;
	struct later {
		char *key;
		struct imastream_orphan f;
		dev_t dev;
		ino_t ino;
		int idx; /* in inodes */
	} * later;
	size_t nlater, alater;
	const struct imastream_log *log;
};

/* What a package lists at a path: a file or directory rpm installs, or only a %ghost. */
enum {
	OWNED_REAL = 1,
	OWNED_GHOST = 2
};
/* imastream_rpmdb_foreach() and imastream_record_foreach() callbacks: @arg is the search. */
int ims_orphans_own_header(void *arg, void *rpm_header);
int ims_orphans_own_recorded(void *arg, const struct imastream_record_file *f);

#endif /* IMASTREAM_INSTALLED_PRIVATE_H */
