/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the xattr/ sources share: the algorithm tables and the one OpenSSL lookup of hashers/. */
#ifndef IMASTREAM_XATTR_PRIVATE_H
#define IMASTREAM_XATTR_PRIVATE_H

#include "hashers/private.h"

#endif /* IMASTREAM_XATTR_PRIVATE_H */
