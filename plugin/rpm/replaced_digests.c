// SPDX-License-Identifier: LGPL-2.1-or-later
/* Before rpm replaces or erases files: their old digests, from the database, into this boot's record. */
#include <errno.h>
#include <string.h>

#include <rpm/header.h>
#include <rpm/rpmdb.h>
#include <rpm/rpmte.h>
#include <rpm/rpmts.h>

#include "common/private.h"
#include "imastream/hash.h"
#include "installed/boot_record.h"
#include "installed/header_digests.h"
#include "plugin/rpm/replaced_digests.h"

/* The installed header of @te: an erase element's files carry no digests, its header does. */
static Header installed_header(rpmts ts, rpmte te)
{
	unsigned int offset = rpmteDBOffset(te);
	rpmdbMatchIterator mi;
	Header h = NULL;

	if (!offset)
		return NULL;
	mi = rpmtsInitIterator(ts, RPMDBI_PACKAGES, &offset, sizeof(offset));
	if (mi && (h = rpmdbNextIterator(mi)))
		h = headerLink(h);
	rpmdbFreeIterator(mi);
	return h;
}

static int add_file(void *arg, const struct ims_header_file *f)
{
	struct ims_boot_batch *b = arg;

	return f->info ? ims_boot_batch_add(b, f->info->algo, f->digest, f->info->digest_size,
					    f->path) :
			 0;
}

int ims_rpm_boot_record(rpmts ts, int rootfd, const struct imastream_log *log)
{
	struct ims_boot_batch b = { 0 };
	rpmtsi it = rpmtsiInit(ts);
	rpmte te;
	int err = 0;

	while (!err && (te = rpmtsiNext(it, TR_REMOVED))) {
		Header h = installed_header(ts, te);

		if (h)
			err = ims_header_each_file(h, add_file, &b);
		headerFree(h);
		if (err)
			err = ims_err(log, err,
				      "%s: cannot list its files' digests for this boot's "
				      "record: %s",
				      rpmteNEVRA(te), strerror(-err));
	}
	rpmtsiFree(it);
	if (!err)
		err = ims_boot_record_append(rootfd, &b, log);
	ims_boot_batch_free(&b);
	return err;
}
