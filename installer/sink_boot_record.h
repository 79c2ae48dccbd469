/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What an upgrade by imastream install replaces, kept in this boot's record, for sink_record.c. */
#ifndef IMASTREAM_INSTALLER_SINK_BOOT_RECORD_H
#define IMASTREAM_INSTALLER_SINK_BOOT_RECORD_H

#include "installed/owners.h"

/*
 * Appends to this boot's record (installed/boot_record.h) the recorded digest of each
 * regular file of package @name's current record in @rec: the version about to be
 * replaced.  Nothing when @name has no record.  Return: 0; -errno, said on @log.
 */
int ims_install_boot_record(const struct ims_record *rec, int rootfd, const char *name,
			    const struct imastream_log *log);

#endif /* IMASTREAM_INSTALLER_SINK_BOOT_RECORD_H */
