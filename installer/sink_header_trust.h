/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The chain sink's OpenPGP header trust: whose keys may sign a package installed below the root. */
#ifndef IMASTREAM_INSTALLER_SINK_HEADER_TRUST_H
#define IMASTREAM_INSTALLER_SINK_HEADER_TRUST_H

#include <stdbool.h>

#include "imastream/chain.h"
#include "imastream/common.h"

struct ims_header_trust;

/**
 * ims_header_trust_new - the keys a package header may be signed with
 * @pgp_keys: OpenPGP public key files, NULL-terminated (NULL: none); one trust domain
 * @rpm_ts: an rpmts whose root has an rpm database, to read the keys imported there
 *          (rpm --import), or NULL
 * Return: 0, -EINVAL (a file name with ':', ',' or a blank; a file without a key), -errno.
 */
int ims_header_trust_new(const char *const *pgp_keys, void *rpm_ts,
			 const struct imastream_log *log, struct ims_header_trust **ret);
void ims_header_trust_free(struct ims_header_trust *t);

/**
 * ims_header_trust_check - judge a package's header signature and run the verify hook
 * @name: the package, for messages
 * @rpm_header: its librpm Header
 * @allow_unsigned: an unsigned header, or one signed by an unknown key, is installed
 *                  (with a message) instead of refused
 * @verified_ret: whether one of the keys verified the signature
 *
 * A bad signature is always refused, as is anything the chain's verify hook refuses.
 * Return: 0 when the package may be installed, else a negative errno (said in the log).
 */
int ims_header_trust_check(struct ims_header_trust *t, struct imastream_chain *chain,
			   const char *name, void *rpm_header, bool allow_unsigned,
			   bool *verified_ret);

/* The same judgement without the verify hook, before anything is locked or written (one
 * line on refusal, nothing on acceptance). */
int ims_header_trust_precheck(struct ims_header_trust *t, const char *name, void *rpm_header,
			      bool allow_unsigned);

#endif /* IMASTREAM_INSTALLER_SINK_HEADER_TRUST_H */
