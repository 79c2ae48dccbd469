/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where a security xattr is stored with xattr_namespace = user: offered to the chain core (file.c) and relabel. */
#ifndef IMASTREAM_XATTR_STORED_NAME_H
#define IMASTREAM_XATTR_STORED_NAME_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The name xattr @name is stored under, in @buf: "user.X" for "security.X" when @user
 * (a tree labelled without CAP_SYS_ADMIN, checked later), else @name itself.  The one
 * mapping: imastream_xattr_name() gives the same for security.ima and security.evm.
 */
void ims_xattr_stored_name(const char *name, bool user, char *buf, size_t size);

#endif /* IMASTREAM_XATTR_STORED_NAME_H */
