// SPDX-License-Identifier: LGPL-2.1-or-later
/* An installed root: its rpm database's headers, and its files opened without leaving it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmdb.h>
#include <rpm/rpmlib.h>
#include <rpm/rpmts.h>

#include "common/private.h"
#include "installer/private.h"

int imastream_open_beneath(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		/* openat2 takes no flag O_PATH ignores (O_NOCTTY) with it. */
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC | ((flags & O_PATH) ? 0 : O_NOCTTY)),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	if (rootfd < 0 || !path)
		return -EINVAL;
	while (*path == '/')
		path++;
	if (!*path)
		path = ".";
	fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

int imastream_rpmdb_foreach(const char *root, char *const *names, int nnames,
			    int (*fn)(void *arg, void *rpm_header), void *arg,
			    const struct imastream_log *log)
{
	rpmts ts;
	int err;

	if (!root || root[0] != '/' || !fn || nnames < 0)
		return ims_err(log, -EINVAL, "rpm database: an absolute root is required");
	err = ims_rpm_config();
	if (err)
		return ims_err(log, err, "cannot read rpm's configuration");
	ts = rpmtsCreate();
	if (!ts)
		return -ENOMEM;
	if (rpmtsSetRootDir(ts, root)) {
		rpmtsFree(ts);
		return ims_err(log, -EINVAL, "%s: rpm does not take it as a root", root);
	}
	if (rpmtsOpenDB(ts, O_RDONLY)) {
		rpmtsFree(ts);
		return ims_err(log, -ENOENT, "%s: no rpm database (rpm --root %s --initdb makes one)",
			       root, root);
	}
	for (int i = 0; !err && i < (nnames ? nnames : 1); i++) {
		rpmdbMatchIterator mi = rpmtsInitIterator(ts, nnames ? RPMDBI_LABEL : RPMDBI_PACKAGES,
							  nnames ? names[i] : NULL, 0);
		unsigned long found = 0;
		Header h;

		while (!err && mi && (h = rpmdbNextIterator(mi))) {
			found++;
			err = fn(arg, h);
		}
		rpmdbFreeIterator(mi);
		if (!err && nnames && !found)
			err = ims_err(log, -ENOENT, "package %s is not installed in %s", names[i], root);
	}
	rpmtsFree(ts);
	return err;
}
