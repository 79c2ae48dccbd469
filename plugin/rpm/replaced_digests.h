/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The rpm adapter's call that keeps this boot's record of the digests a transaction replaces. */
#ifndef IMASTREAM_PLUGIN_RPM_REPLACED_DIGESTS_H
#define IMASTREAM_PLUGIN_RPM_REPLACED_DIGESTS_H

#include <rpm/rpmts.h>

#include "imastream/common.h"

/*
 * Appends to ROOT/var/lib/imastream/boot/BOOTID the digest each regular, non-ghost file
 * of the packages @ts erases or replaces had, as the rpm database's headers give it (no
 * file is read).  Return: 0; -errno, said on @log in one line.
 */
int ims_rpm_boot_record(rpmts ts, int rootfd, const struct imastream_log *log);

#endif /* IMASTREAM_PLUGIN_RPM_REPLACED_DIGESTS_H */
