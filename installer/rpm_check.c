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

bool ims_rpm_is_root(const char *path)
{
	return path[0] == '/' && !path[strspn(path, "/")];
}

/* Every entry's path below the root, in @paths (path → entry): refused or duplicate ones said. */
static int index_paths(struct pkgread *r, struct ims_strmap *paths)
{
	for (int fx = 0; fx < r->fc; fx++) {
		char *fn = rpmfilesFN(r->files, fx);
		const char *rel, *why;
		int err;

		if (!fn)
			return -ENOMEM;
		if (ims_rpm_is_root(fn)) {
			free(fn);
			/* Fedora's filesystem package owns "/": a directory, or nothing rpm takes. */
			if (!S_ISDIR(rpmfilesFMode(r->files, fx)) || ims_rpm_is_ghost(r, fx))
				return file_err(r, fx, -EINVAL,
						"refused: the root itself, not as a directory");
			continue;
		}
		err = ims_path_relative(fn, &rel, &why);
		if (!err)
			err = ims_strmap_add(paths, rel, fx);
		free(fn);
		if (err == -EINVAL)
			return file_err(r, fx, -EINVAL, "refused: %s", why);
		if (err == -EEXIST)
			return file_err(r, fx, -EBADMSG, "duplicate entry in the header");
		if (err)
			return err;
	}
	return 0;
}

/* A regular file's hard-link set and size (added to *@total once per set). */
static int check_regular(struct pkgread *r, int fx, rpm_loff_t size, uint64_t *total)
{
	const int *links;
	uint32_t nlinks = rpmfilesFLinks(r->files, fx, &links);

	/* A hard-link set carries its content once, on one of its links. */
	if (nlinks > 1) {
		for (uint32_t i = 0; i < nlinks; i++) {
			int l = links[i];

			if (l < 0 || l >= r->fc || !S_ISREG(rpmfilesFMode(r->files, l)) ||
			    rpmfilesFSize(r->files, l) != size || ims_rpm_is_ghost(r, l))
				return file_err(r, fx, -EBADMSG, "inconsistent hard-link set");
		}
		if (links[0] != fx)
			return 0;
	}
	*total += size;
	if (*total < size || size > (1ULL << 48))
		return file_err(r, fx, -EINVAL, "absurd size: %llu bytes",
				(unsigned long long)size);
	return 0;
}

/* Entry @fx's type, and what its type declares: a file's size, a symlink's target. */
static int check_type(struct pkgread *r, int fx, uint64_t *total)
{
	mode_t mode = rpmfilesFMode(r->files, fx);
	rpm_loff_t size = rpmfilesFSize(r->files, fx);
	const char *link = rpmfilesFLink(r->files, fx);

	if (!ims_entry_type_supported(mode))
		return file_err(r, fx, -EINVAL, "unsupported file type 0%o", (unsigned int)mode);
	if (S_ISREG(mode))
		return check_regular(r, fx, size, total);
	/* rpm's reader allocates a symlink's declared size to skip its target: check it. */
	if (S_ISLNK(mode) && (!link || !*link || strlen(link) != size))
		return file_err(r, fx, -EBADMSG, "symlink size %llu does not match its target",
				(unsigned long long)size);
	return 0; /* a directory, a device or a FIFO: nothing more to check */
}

/* No entry may go through another entry that is not a directory: the symlink-then-file
 * trick, or a file used as a directory. */
static int check_parents(struct pkgread *r, const struct ims_strmap *paths, int fx)
{
	char *fn = rpmfilesFN(r->files, fx);
	int err = 0;

	if (!fn)
		return -ENOMEM;
	for (char *p = fn + 1; !err && (p = strchr(p, '/')); p++) {
		const char *rel, *why;
		int parent;

		*p = 0;
		parent = ims_path_relative(fn, &rel, &why) ? -1 : ims_strmap_get(paths, rel);
		*p = '/';
		if (parent >= 0 && !ims_rpm_is_ghost(r, parent) &&
		    !S_ISDIR(rpmfilesFMode(r->files, parent))) {
			char *pn = rpmfilesFN(r->files, parent);

			err = ims_err(r->log, -EINVAL,
				      "%s: %s: refused: its parent %s is a %s in the "
				      "package, not a directory",
				      r->name, fn, pn ? pn : "?",
				      S_ISLNK(rpmfilesFMode(r->files, parent)) ? "symlink" :
										 "non-directory");
			free(pn);
		}
	}
	free(fn);
	return err;
}

/* Sizes the archive cannot hold, and content the root's filesystem cannot hold. */
static int check_total(struct pkgread *r, int rootfd, uint64_t total)
{
	uint64_t archive_size = headerGetNumber(r->h, RPMTAG_LONGARCHIVESIZE);
	struct statvfs vfs;

	if (!archive_size)
		archive_size = headerGetNumber(r->h, RPMTAG_ARCHIVESIZE);
	/* A v6 package has it in its main header only (rpm ignores the legacy signature
	 * tag there), as the payload size's alternative. */
	if (!archive_size)
		archive_size = headerGetNumber(r->h, RPMTAG_PAYLOADSIZEALT_COMPAT);
	if (archive_size && total > archive_size)
		return ims_err(
			r->log, -EBADMSG,
			"%s: the header declares %llu bytes of files in a payload of %llu bytes",
			r->name, (unsigned long long)total, (unsigned long long)archive_size);
	if (!fstatvfs(rootfd, &vfs) && (uint64_t)vfs.f_bavail * vfs.f_frsize < total)
		return ims_err(r->log, -ENOSPC,
			       "%s: needs %llu bytes, the root's filesystem has %llu free", r->name,
			       (unsigned long long)total,
			       (unsigned long long)vfs.f_bavail * vfs.f_frsize);
	return 0;
}

/* Checks every header entry before anything is written; returns the content total. */
int ims_rpm_check_files(struct pkgread *r, int rootfd, uint64_t *total_ret)
{
	struct ims_strmap paths = { 0 };
	uint64_t total = 0;
	int err = index_paths(r, &paths);

	/* Every path first, so that a parent is known whichever entry comes first. */
	for (int fx = 0; fx < r->fc && !err; fx++) {
		if (ims_rpm_is_ghost(r, fx))
			continue;
		err = check_type(r, fx, &total);
		if (!err)
			err = check_parents(r, &paths, fx);
	}
	if (!err)
		err = check_total(r, rootfd, total);
	if (!err)
		*total_ret = total;
	ims_strmap_clear(&paths);
	return err;
}
