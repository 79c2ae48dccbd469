// SPDX-License-Identifier: LGPL-2.1-or-later
/* Before rpm replaces or erases files: their old digests, from the database, into this boot's record. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <rpm/header.h>
#include <rpm/rpmdb.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmte.h>
#include <rpm/rpmts.h>

#include "common/private.h"
#include "imastream/hash.h"
#include "installed/boot_record.h"
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

static int add_header(struct ims_boot_batch *b, Header h)
{
	rpmfi fi = rpmfiNew(NULL, h, RPMTAG_BASENAMES, RPMFI_FLAGS_QUERY);
	int err = 0;

	if (!fi)
		return 0;
	while (!err && rpmfiNext(fi) >= 0) {
		const struct imastream_hash_info *info;
		const unsigned char *digest;
		int algo = 0;
		size_t len = 0;

		if (!S_ISREG(rpmfiFMode(fi)) || (rpmfiFFlags(fi) & RPMFILE_GHOST))
			continue;
		digest = rpmfiFDigest(fi, &algo, &len);
		info = imastream_hash_by_rpm_id(algo);
		/* A package built without digests (or in an algorithm IMA lacks) gives none. */
		if (digest && info && len == info->digest_size)
			err = ims_boot_batch_add(b, info->algo, digest, len, rpmfiFN(fi));
	}
	rpmfiFree(fi);
	return err;
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
			err = add_header(&b, h);
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
