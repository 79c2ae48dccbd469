/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the chain core offers the installed system (installed/pending_apply.c) and the
 * tests: the pending-label entry, one file's values that a build in a user namespace could
 * not write, its text form and its strict parser.  The chain writes entries
 * (plugin/core/pending.c); imastream relabel --pending reads and applies them.
 *
 * An entry, one file below ROOT/var/lib/imastream/pending/TXN/:
 *
 *	imastream-pending 1
 *	path /usr/bin/ls                  (percent-escaped: bytes <= 0x20, '%', >= 0x7f)
 *	package coreutils-9.1-1.x86_64
 *	mode 0100755                      (octal st_mode, type bits included)
 *	owner 0 0                         (uid gid as the image will have them: the header's)
 *	built-owner 65534 65534           (the same ids as the build's namespace mapped them)
 *	digest sha256 HEX                 (of the content; "digest none" but for regular files)
 *	xattr security.ima HEX            (zero or more, in the order they are to be written)
 *	end
 */
#ifndef IMASTREAM_PLUGIN_CORE_PENDING_FORMAT_H
#define IMASTREAM_PLUGIN_CORE_PENDING_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "imastream/hash.h"

#define IMS_PENDING_VERSION 1
#define IMS_PENDING_DIR "var/lib/imastream/pending"
/* An entry is never larger: nine values of at most 64 KiB each, in hex, and the rest. */
#define IMS_PENDING_MAX_XATTRS 9
#define IMS_PENDING_MAX_VALUE 65536
#define IMS_PENDING_MAX_SIZE (IMS_PENDING_MAX_XATTRS * (2 * IMS_PENDING_MAX_VALUE + 64) + 16384)

struct ims_pending_xattr {
	char name[64];
	uint8_t *value;
	size_t len;
};

struct ims_pending_entry {
	char *path;
	char *package;
	mode_t mode;
	uid_t uid, built_uid;
	gid_t gid, built_gid;
	int digest_algo; /* kernel hash id, 0: none */
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	size_t digest_len;
	unsigned int n_xattrs;
	struct ims_pending_xattr xattrs[IMS_PENDING_MAX_XATTRS];
};

/*
 * Parses @len bytes into @e (zeroed first; release it even on failure).  Return: 0;
 * -EPROTONOSUPPORT for an entry of a newer format; -EBADMSG for anything else malformed
 * (truncated, a key out of order, twice, or unknown, a relative path or one with ".."
 * or "." components, a bad hex value or digest length); @why says which, in a phrase.
 */
int ims_pending_parse(const char *buf, size_t len, struct ims_pending_entry *e, char *why,
		      size_t why_size);

/* The text form of @e in a malloc()ed buffer.  Return: 0, -ENOMEM, -EINVAL. */
int ims_pending_format(const struct ims_pending_entry *e, char **buf_ret, size_t *len_ret);

void ims_pending_entry_release(struct ims_pending_entry *e);

#endif /* IMASTREAM_PLUGIN_CORE_PENDING_FORMAT_H */
