/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The chain sink's install record: what it says of each package and object the chain installs. */
#ifndef IMASTREAM_INSTALLER_SINK_RECORD_H
#define IMASTREAM_INSTALLER_SINK_RECORD_H

#include <stdint.h>

#include "imastream/chain.h"
#include "imastream/entry.h"
#include "imastream/record.h"
#include "installer/private.h"

/* A new package record, noting the chain's IMA and EVM modes from @cfg (may be NULL). */
int ims_sink_record_pkg_new(const struct imastream_config *cfg, const char *name,
			    const char *nevra, struct ims_record_pkg **ret);

/**
 * ims_sink_record_file - add one installed object to the package's record
 * @f: the chain's file after file_closed: the owner and mode the inode has, the xattrs
 *     the chain wrote, its digests; NULL for a further hard link, which takes all that
 *     from its first link, already added
 * @digest: the content digest the extractor verified (in @e->digest_algo), or NULL:
 *          then the chain's first digest is recorded
 * Return: 0, -EINVAL for a bad path, -ENOMEM.
 */
int ims_sink_record_file(struct ims_record_pkg *rpkg, const struct imastream_chain *chain,
			 struct imastream_file *f, const struct imastream_entry *e,
			 const uint8_t *digest);

#endif /* IMASTREAM_INSTALLER_SINK_RECORD_H */
