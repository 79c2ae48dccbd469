/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the rpm adapter needs of the install record to keep one owner per package. */
#ifndef IMASTREAM_INSTALLED_RECORD_OWNER_H
#define IMASTREAM_INSTALLED_RECORD_OWNER_H

#include <stddef.h>

/* Whether @rootfd has a record of package @name: 1, 0, -errno; @path gets its path below
 * the root.  Opened without following a symlink. */
int ims_record_of(int rootfd, const char *name, char *path, size_t size);
/* Removes the record of package @name (none is fine): 0, -errno. */
int ims_record_forget(int rootfd, const char *name);

#endif
