/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The regular files of an rpm header with their digests in IMA's terms, for the boot record and the policy. */
#ifndef IMASTREAM_INSTALLED_HEADER_DIGESTS_H
#define IMASTREAM_INSTALLED_HEADER_DIGESTS_H

#include <stddef.h>

#include <rpm/header.h>
#include <rpm/rpmfiles.h>

#include "imastream/hash.h"

/* One regular, non-%ghost file of a header. */
struct ims_header_file {
	const char *path;			/* as the header spells it */
	rpmfileAttrs flags;			/* RPMFILE_CONFIG and the rest */
	const struct imastream_hash_info *info; /* NULL: no digest, or one IMA lacks */
	const unsigned char *digest;		/* info->digest_size bytes, or NULL */
};

/*
 * Calls @fn for each regular, non-%ghost file of @h, in the header's order, until it
 * returns nonzero.  Return: what @fn returned last, or 0.
 */
int ims_header_each_file(Header h, int (*fn)(void *arg, const struct ims_header_file *f),
			 void *arg);

#endif
