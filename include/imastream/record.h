/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The install record, read back: every package's recorded files, and their check on disk. */
#ifndef IMASTREAM_RECORD_H
#define IMASTREAM_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "imastream/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest content digest a record holds (SHA-512). */
#define IMASTREAM_RECORD_MAX_DIGEST 64

/*
 * The install record, read back: imastream verify --root checks every recorded file.
 */

/**
 * struct imastream_record_file - one object a package installed, as recorded
 * @package: the package's name (its record's name)
 * @path: the path below the root, "/usr/bin/ls"
 * @mode: type and permission bits
 * @uid, @gid: owner
 * @size: content size (regular files)
 * @digest_algo: kernel hash id of @digest, 0 when none was recorded
 * @digest: the content digest
 * @link_target: a symlink's target, or NULL
 * @rdev: a device's number
 * @xattrs: IMASTREAM_RECORD_* bits: the security xattrs the chain wrote on the object,
 *	and whether it is a %config file
 * @ima: the package's IMA mode: "hash", "sign" or "off" ("" if not known)
 * @evm: its EVM mode: "portable", "none" or ""
 */
struct imastream_record_file {
	const char *package;
	const char *path;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	uint64_t size;
	int digest_algo;
	uint8_t digest[IMASTREAM_RECORD_MAX_DIGEST];
	const char *link_target;
	dev_t rdev;
	unsigned int xattrs;
	const char *ima;
	const char *evm;
};

/* Which security xattrs the chain wrote (struct imastream_record_file.xattrs). */
enum {
	IMASTREAM_RECORD_IMA = 1u << 0,	   /* security.ima */
	IMASTREAM_RECORD_EVM = 1u << 1,	   /* security.evm */
	IMASTREAM_RECORD_LABEL = 1u << 2,  /* security.selinux or security.SMACK64 */
	IMASTREAM_RECORD_CONFIG = 1u << 3, /* not an xattr: the package marks it %config */
};

/**
 * imastream_record_foreach - every recorded file of every package, in record order
 * @rootfd: the root
 * @fn: called per file; a non-zero return stops the walk and is returned
 * Return: 0 (also when there is no record at all), -EBADMSG for a malformed record
 * (logged with its file and line), -errno of open/read, or @fn's value.
 */
IMASTREAM_API int imastream_record_foreach(int rootfd,
					   int (*fn)(void *arg,
						     const struct imastream_record_file *f),
					   void *arg, const struct imastream_log *log);

/**
 * imastream_record_foreach_package - every package the install record holds, files or not
 * @rootfd: the root
 * @fn: called with each package's name, in name order; a non-zero return stops the walk
 *	and is returned
 * Return: as imastream_record_foreach().
 */
IMASTREAM_API int imastream_record_foreach_package(int rootfd,
						   int (*fn)(void *arg, const char *name),
						   void *arg, const struct imastream_log *log);

/**
 * imastream_record_check - does the object at @f->path still match its record?
 * @rootfd: the root; the path is resolved below it without following any symlink
 * @f: the recorded object
 * @fd_ret: for a regular file that matches, an O_RDONLY descriptor on it (the caller
 *	closes it), else -1; may be NULL
 * @why: on a mismatch, what differs ("missing", "mode 0644, recorded 0755",
 *	"content changed", ...)
 * @why_size: its size
 * Return: 0 when it matches, 1 on a mismatch (@why says which), -errno when the check
 * itself failed (reading the content).
 */
IMASTREAM_API int imastream_record_check(int rootfd, const struct imastream_record_file *f,
					 int *fd_ret, char *why, size_t why_size);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_RECORD_H */
