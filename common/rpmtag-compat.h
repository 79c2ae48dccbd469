/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rpm 6 names the payload digest tags (5092, 5093, 5097) after their algorithm,
 * RPMTAG_PAYLOADSHA256...: the names of rpm 4 for them, where rpm no longer has them;
 * and the numbers of tags only rpm 6 has.
 */
#ifndef IMASTREAM_COMMON_RPMTAG_COMPAT_H
#define IMASTREAM_COMMON_RPMTAG_COMPAT_H

#include <rpm/rpmtag.h>

#if !HAVE_DECL_RPMTAG_PAYLOADDIGEST
#define RPMTAG_PAYLOADDIGEST RPMTAG_PAYLOADSHA256
#define RPMTAG_PAYLOADDIGESTALGO RPMTAG_PAYLOADSHA256ALGO
#define RPMTAG_PAYLOADDIGESTALT RPMTAG_PAYLOADSHA256ALT
#endif

/* rpm 6 signs headers into RPMSIGTAG_OPENPGP (tag 278), a list of signatures. */
#define RPMSIGTAG_OPENPGP_COMPAT 278
/* A v6 package (rpm 6) has the payload's size in its header: RPMTAG_PAYLOADSIZE, and the
 * cpio archive's (uncompressed) in RPMTAG_PAYLOADSIZEALT. */
#define RPMTAG_PAYLOADSIZE_COMPAT 5112
#define RPMTAG_PAYLOADSIZEALT_COMPAT 5113
/* ...and more payload digests: SHA-512 and SHA3-256, of the payload and of the archive. */
#define RPMTAG_PAYLOADSHA512_COMPAT 5121
#define RPMTAG_PAYLOADSHA512ALT_COMPAT 5122
#define RPMTAG_PAYLOADSHA3_256_COMPAT 5123
#define RPMTAG_PAYLOADSHA3_256ALT_COMPAT 5124
/* Its signature header has a SHA3-256 header digest and reserved space (RPMSIGTAG_RESERVED). */
#define RPMSIGTAG_SHA3_256_COMPAT 279
#define RPMSIGTAG_RESERVED_COMPAT 999

#endif /* IMASTREAM_COMMON_RPMTAG_COMPAT_H */
