/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What installed/ offers beyond imastream/audit.h, inside the build only: the accepted
 * %config edits (accepted.c), read by the audit and relabel, listed by policy keylime
 * (attest/), written by relabel --accept-config (the command).
 */
#ifndef IMASTREAM_INSTALLED_ACCEPTED_H
#define IMASTREAM_INSTALLED_ACCEPTED_H

#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"

/*
 * Accepted %config edits (installed/accepted.c): ROOT/var/lib/imastream/accepted-config
 * holds, for each %config file whose edit an administrator accepted, the digest (in its
 * header's algorithm) and size it had then.  The audit takes a file that still has them
 * as an accepted edit, relabel labels it, imastream policy keylime lists that digest.
 * The record carries the id of its root (ROOT/var/lib/imastream/root-id): one copied
 * from another root, or cut short, is refused.
 */
struct imastream_accepted_file {
	const char *path;
	int algo; /* enum imastream_hash_algo */
	uint8_t digest[64];
	size_t digest_len;
	uint64_t size;
};
struct imastream_accepted;

/**
 * imastream_accepted_load - the accepted edits of the root @rootfd (@root names it)
 * Return: 0 (no record: an empty set), -EBADMSG for a record of another root, cut short
 * or malformed (said in one line), -errno.
 */
int imastream_accepted_load(const char *root, int rootfd, const struct imastream_log *log,
			    struct imastream_accepted **ret);
const struct imastream_accepted_file *imastream_accepted_find(const struct imastream_accepted *a,
							      const char *path);
void imastream_accepted_free(struct imastream_accepted *a);

/**
 * imastream_accept_config - accept the current content of %config files
 * @paths, @n: package paths ("/etc/foo.conf"), each a regular file some installed
 *             package lists as %config
 * @packages_ret: the NEVRA of each path's package, NULL-terminated (free each and it)
 *
 * Every path is checked and hashed first: a path no package marks %config, or one that
 * cannot be read, is refused in one line and nothing is written.  Then the record is
 * replaced whole (a path accepted before takes its new digest).  The caller holds rpm's
 * transaction lock for the root.
 * Return: 0, or -errno (said).
 */
int imastream_accept_config(const char *root, int rootfd, char *const *paths, int n,
			    char ***packages_ret, const struct imastream_log *log);

#endif /* IMASTREAM_INSTALLED_ACCEPTED_H */
