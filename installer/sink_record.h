/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The chain sink's install record: what it says of each package and object the chain installs. */
#ifndef IMASTREAM_INSTALLER_SINK_RECORD_H
#define IMASTREAM_INSTALLER_SINK_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "imastream/chain.h"
#include "imastream/entry.h"
#include "imastream/record.h"
#include "installer/sink_dropped.h"
#include "installer/private.h"

/*
 * The books the chain sink keeps of a root: every package's record and rpm's database's
 * files (who owns what), and the record and removals of the package being installed.
 */
struct ims_sink_record {
	struct ims_record *all;		/* NULL with IMASTREAM_SINK_NO_RECORD */
	struct ims_rpmdb_owner *owners; /* the root's rpm database's files, or NULL */
	struct ims_record_pkg *pkg;	/* the package's record, from begin to end */
	struct ims_dropped dropped;	/* an upgrade's removals, planned at commit_package */
};

/*
 * Loads @rootfd's records and, when the root has an rpm database (@rpmdb), opens it for
 * file conflicts.  Return: 0, or a negative errno (said); close @r either way.
 */
int ims_sink_record_open(struct ims_sink_record *r, int rootfd, const char *root, bool rpmdb,
			 const struct imastream_log *log);
void ims_sink_record_close(struct ims_sink_record *r);

/* begin_package: a new record of package @name (none when the root's records are not
 * kept), noting the chain's IMA and EVM modes from @cfg (may be NULL). */
int ims_sink_record_begin(struct ims_sink_record *r, const struct imastream_config *cfg,
			  const char *name, const char *nevra);

/*
 * commit_package: writes the package's record under its temp name, then plans what an
 * upgrade removes (ims_dropped_plan()) against the root as it is now.  Return: 0, -errno.
 */
int ims_sink_record_commit(struct ims_sink_record *r, int rootfd, const char *name,
			   const char *nevra, const struct imastream_log *log);

/*
 * end_package, after the package's renames: an upgrade's removals when @status is 0
 * (ims_dropped_remove(): the chain hears each as an erase of @pkg's), forgotten either way.
 */
void ims_sink_record_remove_dropped(struct ims_sink_record *r, int status, int rootfd,
				    const char *root, struct imastream_chain *chain,
				    const struct imastream_pkg *pkg,
				    const struct imastream_log *log);

/* end_package: renames the record into place when @status is 0 (one warning line if that
 * fails: the package is installed all the same), then drops it. */
void ims_sink_record_end(struct ims_sink_record *r, int status, const char *nevra,
			 const struct imastream_log *log);

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

/*
 * The record's rename, for the intent journal (the sink's journal callback): @add is
 * called once with it when the package's record was written.  Return: 0 or @add's error.
 */
int ims_sink_record_journal(const struct ims_sink_record *r,
			    int (*add)(void *ctx, const char *dir, const char *tmp,
				       const char *name),
			    void *ctx);

#endif /* IMASTREAM_INSTALLER_SINK_RECORD_H */
