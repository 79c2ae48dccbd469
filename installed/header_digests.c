// SPDX-License-Identifier: LGPL-2.1-or-later
/* The regular files of an rpm header with their digests in IMA's terms. */
#include <sys/stat.h>

#include <rpm/rpmfi.h>

#include "installed/header_digests.h"

int ims_header_each_file(Header h, int (*fn)(void *arg, const struct ims_header_file *f), void *arg)
{
	rpmfi fi = rpmfiNew(NULL, h, RPMTAG_BASENAMES, RPMFI_FLAGS_QUERY);
	int err = 0;

	if (!fi)
		return 0;
	while (!err && rpmfiNext(fi) >= 0) {
		struct ims_header_file f = { .path = rpmfiFN(fi), .flags = rpmfiFFlags(fi) };
		int algo = 0;
		size_t len = 0;

		if (!S_ISREG(rpmfiFMode(fi)) || (f.flags & RPMFILE_GHOST))
			continue;
		f.digest = rpmfiFDigest(fi, &algo, &len);
		f.info = f.digest ? imastream_hash_by_rpm_id(algo) : NULL;
		/* A package built without digests, or in an algorithm IMA lacks, gives none. */
		if (!f.info || len != f.info->digest_size) {
			f.info = NULL;
			f.digest = NULL;
		}
		err = fn(arg, &f);
	}
	rpmfiFree(fi);
	return err;
}
