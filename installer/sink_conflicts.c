// SPDX-License-Identifier: LGPL-2.1-or-later
/* The chain sink's file conflicts: the record's or rpm's database's owner of a path, and the verdict. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/private.h"
#include "imastream/entry.h"
#include "imastream/hash.h"
#include "imastream/record.h"
#include "installer/sink_conflicts.h"

/*
 * The recorded object of another package than @pkg_name that entry @e would replace, or
 * NULL: none, a directory, an unowned entry, or the very same object (type, owner, and
 * symlink target or content digest), which two packages may share.
 */
static const struct imastream_record_file *record_conflict(const struct ims_record *rec,
							   const char *pkg_name,
							   const struct imastream_entry *e)
{
	const struct imastream_record_file *rf;

	if (!rec || S_ISDIR(e->mode) || (e->flags & IMASTREAM_ENTRY_UNOWNED))
		return NULL;
	rf = ims_record_lookup(rec, e->path);
	if (!rf || !strcmp(rf->package, pkg_name) || S_ISDIR(rf->mode))
		return NULL;
	if (rf->mode == e->mode && rf->uid == e->uid && rf->gid == e->gid) {
		if (S_ISLNK(e->mode) && e->link_target && rf->link_target &&
		    !strcmp(e->link_target, rf->link_target))
			return NULL;
		if (S_ISREG(e->mode) && e->digest && rf->digest_algo == e->digest_algo &&
		    rf->size == e->size && !(e->flags & IMASTREAM_ENTRY_HARDLINK) &&
		    !memcmp(rf->digest, e->digest,
			    imastream_hash_by_algo(e->digest_algo)->digest_size))
			return NULL;
	}
	return rf;
}

/* The record's owner first, then the root's rpm database's (rpmdb_owner.c). */
const char *ims_conflict_owner(const struct ims_record *rec, struct ims_rpmdb_owner *owners,
			       const char *pkg_name, const struct imastream_entry *e, char *buf,
			       size_t size)
{
	const struct imastream_record_file *rf = record_conflict(rec, pkg_name, e);

	if (rf) {
		snprintf(buf, size, "%s", rf->package);
		return buf;
	}
	if (owners && !S_ISDIR(e->mode) && !(e->flags & IMASTREAM_ENTRY_UNOWNED) &&
	    ims_rpmdb_owner_conflict(owners, e, pkg_name, buf, size) > 0)
		return buf;
	return NULL;
}

int ims_conflict_judge(struct imastream_chain *chain, const struct imastream_pkg *pkg,
		       const char *path, const char *owner, bool replace,
		       const struct imastream_log *log)
{
	struct imastream_conflict c = {
		.size = sizeof(c), .path = path, .pkg = pkg, .owner = owner
	};
	int err = imastream_chain_file_conflict(chain, &c);

	if (err)
		return ims_err(log, err,
			       "%s: %s: conflicts with the file of package %s (refused by the "
			       "file_conflict hook)",
			       pkg->nevra, path, owner);
	if (!replace)
		return ims_err(log, -EEXIST, "%s: %s: conflicts with the file of package %s",
			       pkg->nevra, path, owner);
	ims_logf(log, IMASTREAM_LOG_INFO, "%s: %s: replaces the file of package %s", pkg->nevra,
		 path, owner);
	return 0;
}
