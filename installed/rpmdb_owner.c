// SPDX-License-Identifier: LGPL-2.1-or-later
/* Whether the root's rpm database gives a path to another package with a different file: a conflict, as rpm sees it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rpm/header.h>
#include <rpm/rpmdb.h>
#include <rpm/rpmfiles.h>
#include <rpm/rpmts.h>

#include "imastream/hash.h"
#include "installed/private.h"

struct ims_rpmdb_owner {
	rpmts ts;
};

int ims_rpmdb_owner_open(const char *root, struct ims_rpmdb_owner **ret)
{
	struct ims_rpmdb_owner *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	/* A transaction set of its own: the policy plugins use the sink's on the chain thread. */
	o->ts = rpmtsCreate();
	if (!o->ts || rpmtsSetRootDir(o->ts, root) || rpmtsOpenDB(o->ts, O_RDONLY)) {
		ims_rpmdb_owner_free(o);
		return -EIO;
	}
	*ret = o;
	return 0;
}

void ims_rpmdb_owner_free(struct ims_rpmdb_owner *o)
{
	if (!o)
		return;
	if (o->ts)
		rpmtsFree(o->ts);
	free(o);
}

/* rpm's rule (rpmfilesCompare): same type and mode, and for regular files the same
 * content, for symlinks the same target.  Owners are left out: the entry has ids, the
 * database names. */
static bool same_file(rpmfiles fs, int fx, const struct imastream_entry *e)
{
	mode_t mode = rpmfilesFMode(fs, fx);
	const struct imastream_hash_info *hi;
	const unsigned char *digest;
	size_t len;
	int algo;

	if (S_ISLNK(mode) && S_ISLNK(e->mode))
		return e->link_target && rpmfilesFLink(fs, fx) &&
		       !strcmp(e->link_target, rpmfilesFLink(fs, fx));
	if (mode != e->mode)
		return false;
	if (!S_ISREG(mode))
		return true;
	if ((uint64_t)rpmfilesFSize(fs, fx) != e->size || !e->digest)
		return false;
	digest = rpmfilesFDigest(fs, fx, &algo, &len);
	hi = imastream_hash_by_rpm_id(algo);
	return digest && hi && hi->algo == e->digest_algo && len == hi->digest_size &&
	       !memcmp(digest, e->digest, len);
}

int ims_rpmdb_owner_conflict(struct ims_rpmdb_owner *o, const struct imastream_entry *e,
			     const char *self, char *owner, size_t owner_size)
{
	rpmdbMatchIterator mi;
	Header h;
	int found = 0;

	if (S_ISDIR(e->mode))
		return 0;
	mi = rpmtsInitIterator(o->ts, RPMDBI_INSTFILENAMES, e->path, 0);
	while (!found && mi && (h = rpmdbNextIterator(mi))) {
		const char *name = headerGetString(h, RPMTAG_NAME);
		int fx = rpmdbGetIteratorFileNum(mi);
		rpmfiles fs;

		/* The package itself (an upgrade replaces it) is not a conflict. */
		if (!name || !strcmp(name, self))
			continue;
		fs = rpmfilesNew(NULL, h, 0, RPMFI_KEEPHEADER);
		if (fs && fx >= 0 && fx < rpmfilesFC(fs) &&
		    rpmfilesFState(fs, fx) == RPMFILE_STATE_NORMAL &&
		    !(rpmfilesFFlags(fs, fx) & RPMFILE_GHOST) && !S_ISDIR(rpmfilesFMode(fs, fx)) &&
		    !same_file(fs, fx, e)) {
			snprintf(owner, owner_size, "%s", name);
			found = 1;
		}
		rpmfilesFree(fs);
	}
	rpmdbFreeIterator(mi);
	return found;
}

int ims_rpmdb_owner_other(struct ims_rpmdb_owner *o, const char *path, const char *self)
{
	rpmdbMatchIterator mi = rpmtsInitIterator(o->ts, RPMDBI_INSTFILENAMES, path, 0);
	Header h;
	int found = 0;

	while (!found && mi && (h = rpmdbNextIterator(mi))) {
		const char *name = headerGetString(h, RPMTAG_NAME);

		found = name && strcmp(name, self);
	}
	rpmdbFreeIterator(mi);
	return found;
}

int ims_rpmdb_owner_count(struct ims_rpmdb_owner *o, const char *path)
{
	rpmdbMatchIterator mi = rpmtsInitIterator(o->ts, RPMDBI_BASENAMES, path, 0);
	int n = mi ? rpmdbGetIteratorCount(mi) : 0;

	rpmdbFreeIterator(mi);
	return n;
}
