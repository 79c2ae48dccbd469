// SPDX-License-Identifier: LGPL-2.1-or-later
/* An rpm header's file entries checked before a byte is written: paths, types, sizes, hard-link sets, free space. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "common/private.h"
#include "common/rpmtag-compat.h"
#include "installer/rpm_read.h"

bool ims_rpm_is_ghost(struct pkgread *r, int fx)
{
	return rpmfilesFFlags(r->files, fx) & RPMFILE_GHOST;
}

/* Checks every header entry before anything is written; returns the content total. */
int ims_rpm_check_files(struct pkgread *r, int rootfd, uint64_t *total_ret)
{
	struct ims_strmap paths = { 0 };
	uint64_t total = 0, archive_size;
	struct statvfs vfs;
	int err = 0, fx;

	for (fx = 0; fx < r->fc; fx++) {
		char *fn = rpmfilesFN(r->files, fx);
		const char *rel, *why;

		if (!fn) {
			err = -ENOMEM;
			goto out;
		}
		err = ims_path_relative(fn, &rel, &why);
		if (!err)
			err = ims_strmap_add(&paths, rel, fx);
		free(fn);
		if (err == -EINVAL) {
			err = file_err(r, fx, -EINVAL, "refused: %s", why);
			goto out;
		}
		if (err == -EEXIST) {
			err = file_err(r, fx, -EBADMSG, "duplicate entry in the header");
			goto out;
		}
		if (err)
			goto out;
	}

	for (fx = 0; fx < r->fc; fx++) {
		mode_t mode = rpmfilesFMode(r->files, fx);
		rpm_loff_t size = rpmfilesFSize(r->files, fx);
		const char *link = rpmfilesFLink(r->files, fx);
		const int *links;
		uint32_t nlinks;
		char *fn;

		if (ims_rpm_is_ghost(r, fx))
			continue;
		if (!ims_entry_type_supported(mode)) {
			err = file_err(r, fx, -EINVAL, "unsupported file type 0%o",
				       (unsigned int)mode);
			goto out;
		}
		switch (mode & S_IFMT) {
		case S_IFREG:
			nlinks = rpmfilesFLinks(r->files, fx, &links);
			/* A hard-link set carries its content once, on one of its links. */
			if (nlinks > 1) {
				for (uint32_t i = 0; i < nlinks; i++) {
					int l = links[i];

					if (l < 0 || l >= r->fc ||
					    !S_ISREG(rpmfilesFMode(r->files, l)) ||
					    rpmfilesFSize(r->files, l) != size ||
					    ims_rpm_is_ghost(r, l)) {
						err = file_err(r, fx, -EBADMSG,
							       "inconsistent hard-link set");
						goto out;
					}
				}
				if (links[0] != fx)
					break;
			}
			total += size;
			if (total < size || size > (1ULL << 48)) {
				err = file_err(r, fx, -EINVAL, "absurd size: %llu bytes",
					       (unsigned long long)size);
				goto out;
			}
			break;
		case S_IFLNK:
			/* rpm's reader allocates the declared size to skip the target: check it. */
			if (!link || !*link || strlen(link) != size) {
				err = file_err(r, fx, -EBADMSG,
					       "symlink size %llu does not match its target",
					       (unsigned long long)size);
				goto out;
			}
			break;
		default:
			break; /* a directory, a device or a FIFO: nothing more to check */
		}

		/* No entry may go through another entry that is not a directory: the
		 * symlink-then-file trick, or a file used as a directory. */
		fn = rpmfilesFN(r->files, fx);
		if (!fn) {
			err = -ENOMEM;
			goto out;
		}
		for (char *p = fn + 1; (p = strchr(p, '/')); p++) {
			const char *rel, *why;
			int parent;

			*p = 0;
			parent = ims_path_relative(fn, &rel, &why) ? -1 :
								     ims_strmap_get(&paths, rel);
			*p = '/';
			if (parent >= 0 && !ims_rpm_is_ghost(r, parent) &&
			    !S_ISDIR(rpmfilesFMode(r->files, parent))) {
				char *pn = rpmfilesFN(r->files, parent);

				err = ims_err(r->log, -EINVAL,
					      "%s: %s: refused: its parent %s is a %s in the "
					      "package, not a directory",
					      r->name, fn, pn ? pn : "?",
					      S_ISLNK(rpmfilesFMode(r->files, parent)) ?
						      "symlink" :
						      "non-directory");
				free(pn);
				free(fn);
				goto out;
			}
		}
		free(fn);
	}

	/* Sizes the archive cannot hold, and content the root's filesystem cannot hold. */
	archive_size = headerGetNumber(r->h, RPMTAG_LONGARCHIVESIZE);
	if (!archive_size)
		archive_size = headerGetNumber(r->h, RPMTAG_ARCHIVESIZE);
	/* A v6 package has it in its main header only (rpm ignores the legacy signature
	 * tag there), as the payload size's alternative. */
	if (!archive_size)
		archive_size = headerGetNumber(r->h, RPMTAG_PAYLOADSIZEALT_COMPAT);
	if (archive_size && total > archive_size) {
		err = ims_err(
			r->log, -EBADMSG,
			"%s: the header declares %llu bytes of files in a payload of %llu bytes",
			r->name, (unsigned long long)total, (unsigned long long)archive_size);
		goto out;
	}
	if (!fstatvfs(rootfd, &vfs) && (uint64_t)vfs.f_bavail * vfs.f_frsize < total) {
		err = ims_err(r->log, -ENOSPC,
			      "%s: needs %llu bytes, the root's filesystem has %llu free", r->name,
			      (unsigned long long)total,
			      (unsigned long long)vfs.f_bavail * vfs.f_frsize);
		goto out;
	}
	*total_ret = total;
out:
	ims_strmap_clear(&paths);
	return err;
}
