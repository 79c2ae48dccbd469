// SPDX-License-Identifier: LGPL-2.1-or-later
/* One owner per package: rpm does not install, upgrade or erase a package 'imastream install' recorded, unless told to take it over. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpm/rpmmacro.h>

#include "common/private.h"
#include "installed/record_owner.h"
#include "plugin/rpm/owners.h"

bool ims_rpm_take_over_wanted(void)
{
	char *v = rpmExpand("%{?_imastream_take_over}", NULL);
	bool yes = v && (!strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "true"));

	free(v);
	return yes;
}

int ims_rpm_owners_check(rpmts ts, int rootfd, const char *root, bool take_over,
			 const struct imastream_log *log)
{
	rpmtsi it = rpmtsiInit(ts);
	char path[PATH_MAX];
	int err = 0;
	rpmte te;

	while (!err && (te = rpmtsiNext(it, 0))) {
		const char *name = rpmteN(te);
		int found = name ? ims_record_of(rootfd, name, path, sizeof(path)) : 0;

		if (found < 0)
			err = ims_err(log, found,
				      "%s: cannot look for the imastream record %s in %s: %s",
				      rpmteNEVRA(te), path, root, strerror(-found));
		else if (found && !take_over)
			err = ims_err(
				log, -EEXIST,
				"%s: refused: %s is installed by 'imastream install' in %s (%s), "
				"which rpm would leave stale: upgrade or reinstall it with "
				"imastream install, "
				"or define %%_imastream_take_over 1 to let rpm take it over",
				rpmteNEVRA(te), name, root, path);
	}
	rpmtsiFree(it);
	return err;
}

void ims_rpm_owners_release(rpmte te, int rootfd, const struct imastream_log *log)
{
	char path[PATH_MAX];
	const char *name = rpmteN(te);
	int err;

	if (!name || ims_record_of(rootfd, name, path, sizeof(path)) != 1)
		return;
	err = ims_record_forget(rootfd, name);
	if (err)
		ims_err(log, err, "%s: cannot remove the imastream record %s: %s", rpmteNEVRA(te),
			path, strerror(-err));
	else
		ims_logf(log, IMASTREAM_LOG_WARNING,
			 "%s: taken over from imastream: its record %s is removed (files only its "
			 "version had stay on disk)",
			 rpmteNEVRA(te), path);
}
