// SPDX-License-Identifier: LGPL-2.1-or-later
/* An installed root: its rpm database's headers, and its files opened without leaving it. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmdb.h>
#include <rpm/rpmlib.h>
#include <rpm/rpmmacro.h>
#include <rpm/rpmts.h>

#include "common/private.h"
#include "imastream/rpmdb.h"
#include "installed/private.h"

/* librpm's configuration is process-wide; read it once. */
static pthread_once_t rpm_config_once = PTHREAD_ONCE_INIT;
static int rpm_config_rc;

/*
 * %_dbpath expanded once and kept as a plain value: Debian's runs a shell
 * (%(bash -c 'echo ~/.rpmdb')) at every expansion, and a command expands it two to four
 * times (ims_rpmdb_exists, rpm's own database open), each a fork and two execs.
 */
static void freeze_dbpath(void)
{
	char *dbpath = rpmExpand("%{?_dbpath}", NULL);

	if (dbpath && dbpath[0] == '/' && !strchr(dbpath, '%'))
		rpmPushMacro(NULL, "_dbpath", NULL, dbpath, RMIL_CMDLINE);
	free(dbpath);
}

static void read_rpm_config(void)
{
	rpm_config_rc = rpmReadConfigFiles(NULL, NULL);
	if (!rpm_config_rc)
		freeze_dbpath();
}

int ims_rpm_config(void)
{
	pthread_once(&rpm_config_once, read_rpm_config);
	return rpm_config_rc ? -EIO : 0;
}

int imastream_open_beneath(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		/* openat2 takes no flag O_PATH ignores (O_NOCTTY) with it. */
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC |
				    ((flags & O_PATH) ? 0 : O_NOCTTY)),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	if (rootfd < 0 || !path)
		return -EINVAL;
	while (*path == '/')
		path++;
	if (!*path)
		path = ".";
	return ims_openat2(rootfd, path, &how);
}

/*
 * Whether the root has an rpm database: librpm creates one when asked to open a missing
 * one, even read-only, and nothing may appear in the root that no package put there.
 */
int ims_rpmdb_exists(int rootfd, const char *root, const struct imastream_log *log)
{
	char *dbpath = rpmExpand("%{?_dbpath}", NULL);
	const char *rel, *why;
	int found = 0;
	DIR *d;

	if (dbpath && dbpath[0] && !ims_path_relative(dbpath, &rel, &why)) {
		int fd = imastream_open_beneath(rootfd, rel, O_RDONLY | O_DIRECTORY);
		struct dirent *de;

		d = fd >= 0 ? fdopendir(fd) : NULL;
		if (!d && fd >= 0)
			close(fd);
		while (d && found >= 0 && (de = readdir(d))) {
			struct stat st;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			/* Followed, as librpm would follow it. */
			if (!fstatat(dirfd(d), de->d_name, &st, 0) && !S_ISREG(st.st_mode) &&
			    !S_ISDIR(st.st_mode))
				found = ims_err(log, -IMS_ENOTREG,
						"%s%s/%s: %s; rpm's database is not read",
						strcmp(root, "/") ? root : "", dbpath, de->d_name,
						ims_open_strerror(-IMS_ENOTREG));
			else if (de->d_name[0] != '.')
				found = 1;
		}
		if (d)
			closedir(d);
	}
	free(dbpath);
	return found;
}

int imastream_rpm_set_dbpath(const char *dbpath, const struct imastream_log *log)
{
	int err;

	/* rpm's own rule for --dbpath (poptALL.c). */
	if (!dbpath || dbpath[0] != '/')
		return ims_err(log, -EINVAL, "the rpm database path must begin with '/': %s",
			       dbpath ? dbpath : "(none)");
	/* rpm's configuration first: it would otherwise be read over ours later. */
	err = ims_rpm_config();
	if (err)
		return ims_err(log, err, "cannot read rpm's configuration");
	rpmPushMacro(NULL, "_dbpath", NULL, dbpath, RMIL_CMDLINE);
	return 0;
}

int imastream_rpmdb_foreach(const char *root, char *const *names, int nnames,
			    int (*fn)(void *arg, void *rpm_header), void *arg,
			    const struct imastream_log *log)
{
	int found_db, rootfd, err;
	rpmts ts;

	if (!root || root[0] != '/' || !fn || nnames < 0)
		return ims_err(log, -EINVAL, "rpm database: an absolute root is required");
	err = ims_rpm_config();
	if (err)
		return ims_err(log, err, "cannot read rpm's configuration");
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return ims_err(log, -errno, "%s: %m", root);
	found_db = ims_rpmdb_exists(rootfd, root, log);
	close(rootfd);
	if (found_db < 0)
		return found_db;
	if (!found_db)
		return ims_err(log, -ENOENT, "%s: no rpm database (rpm --root %s --initdb makes one)",
			       root, root);
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
