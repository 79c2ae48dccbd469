/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An object of a package as its archive describes it, and the temp names objects wait under. */
#ifndef IMASTREAM_ENTRY_H
#define IMASTREAM_ENTRY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "imastream/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every temp name starts with this, then the writer's pid in hex and a '-':
 * ".imastream-tmp-1a2b-3c".  So a leftover is easy to find, and imastream_root_recover()
 * removes only those whose writer is gone.
 */
#define IMASTREAM_TEMP_PREFIX ".imastream-tmp-"

/* Entry flags (imastream_entry.flags). */
enum imastream_entry_flag {
	IMASTREAM_ENTRY_CONFIG = 1u << 0,   /* %config */
	IMASTREAM_ENTRY_DOC = 1u << 1,	    /* %doc / %license */
	IMASTREAM_ENTRY_UNOWNED = 1u << 2,  /* a parent directory the package does not list */
	IMASTREAM_ENTRY_HARDLINK = 1u << 3, /* a further link of an inode already created */
};

/**
 * struct imastream_entry - one object to create, as the archive describes it
 * @path: the package path, "/usr/bin/ls"; interpreted relative to the root
 * @mode: file type and permission bits (S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, S_IFBLK,
 *	S_IFIFO); setuid/setgid/sticky allowed
 * @uid, @gid: final owner (already resolved from names)
 * @mtime: final modification time (seconds since the epoch); a directory keeps it only
 *	if the package puts nothing new in it (else it has the install time, as with rpm)
 * @size: content size of a regular file, in bytes; 0 for other types
 * @rdev: device number for S_IFCHR/S_IFBLK
 * @link_target: symlink target (NUL-terminated), or the package path of the inode to
 *	link to with IMASTREAM_ENTRY_HARDLINK (which must be an earlier entry of this
 *	package); NULL otherwise
 * @caps: file capabilities in cap_to_text(3) form ("cap_net_raw=ep"), or NULL
 * @digest_algo: enum imastream_hash_algo of @digest, 0 when there is none
 * @digest: the expected content digest (from a trusted header), or NULL: the extractor
 *	computes it in the same pass as the write and fails the entry on a mismatch
 * @flags: enum imastream_entry_flag
 * @index: the entry's number in its package (rpm's file index), for messages and sinks
 * @sig: the security.ima value the package carries for this file (rpm's
 *	RPMTAG_FILESIGNATURES, decoded: a type-3 IMA signature), or NULL; unverified, it is
 *	handed to the chain (struct imastream_file.pkg_sig), whose ima plugin checks it
 * @sig_len: its length
 *
 * The extractor copies what it keeps; the caller's strings need to live only for the
 * duration of entry_begin().
 */
struct imastream_entry {
	const char *path;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	int64_t mtime;
	uint64_t size;
	dev_t rdev;
	const char *link_target;
	const char *caps;
	int digest_algo;
	const uint8_t *digest;
	unsigned int flags;
	unsigned int index;
	const uint8_t *sig;
	size_t sig_len;
};

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_ENTRY_H */
