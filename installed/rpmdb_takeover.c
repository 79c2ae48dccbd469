// SPDX-License-Identifier: LGPL-2.1-or-later
/* Packages rpm's database holds, by name: an install does not take one over unless asked, and a take-over removes rpm's entry once the package is installed and recorded. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmdb.h>
#include <rpm/rpmlib.h>
#include <rpm/rpmmacro.h>
#include <rpm/rpmts.h>

#include "common/private.h"
#include "installed/private.h"

int ims_rpmdb_installed(void *ts_arg, const char *name, char *nevra, size_t size)
{
	rpmts ts = ts_arg;
	rpmdbMatchIterator mi = rpmtsInitIterator(ts, RPMDBI_NAME, name, 0);
	Header h = mi ? rpmdbNextIterator(mi) : NULL;
	int found = h != NULL;

	if (h && nevra) {
		char *s = headerGetAsString(h, RPMTAG_NEVRA);

		snprintf(nevra, size, "%s", s ? s : name);
		free(s);
	}
	rpmdbFreeIterator(mi);
	return found;
}

int ims_rpmdb_refuse_owned(void *ts, const char *root, const char *pkg, const char *name,
			   const struct imastream_log *log)
{
	char nevra[512];

	if (!ims_rpmdb_installed(ts, name, nevra, sizeof(nevra)))
		return 0;
	return ims_err(log, -EEXIST,
		       "%s: refused: rpm's database in %s has %s, installed by rpm "
		       "(rpm -U upgrades it; --take-over installs it here and removes rpm's entry)",
		       pkg, root, nevra);
}

/* The lock librpm takes for our own erase: the root's is ours already, and an OFD lock
 * conflicts with librpm's in this process too. */
#define PRIVATE_LOCK "/.imastream-take-over.lock"

int ims_rpmdb_forget(int rootfd, const char *root, const char *name,
		     const struct imastream_log *log)
{
	char *dbpath = rpmExpand("%{?_dbpath}", NULL), lock[4096];
	rpmdbMatchIterator mi;
	rpmts ts = rpmtsCreate();
	unsigned int n = 0;
	Header h;
	int rc = -1;

	if (!ts || !dbpath || dbpath[0] != '/' || rpmtsSetRootDir(ts, root))
		goto out;
	mi = rpmtsInitIterator(ts, RPMDBI_NAME, name, 0);
	while (mi && (h = rpmdbNextIterator(mi)))
		if (!rpmtsAddEraseElement(ts, h, (int)rpmdbGetIteratorOffset(mi)))
			n++;
	rpmdbFreeIterator(mi);
	rpmtsCloseDB(ts);
	if (!n) {
		rc = 0;
		goto out;
	}
	/* As rpm -e --justdb --nodeps --noscripts --notriggers --noplugins: the files are
	 * the new version's now. */
	rpmtsSetFlags(ts, RPMTRANS_FLAG_JUSTDB | RPMTRANS_FLAG_NOSCRIPTS |
				  RPMTRANS_FLAG_NOTRIGGERS | RPMTRANS_FLAG_NOPLUGINS);
	snprintf(lock, sizeof(lock), "%s%s", dbpath, PRIVATE_LOCK);
	rpmPushMacro(NULL, "_rpmlock_path", NULL, lock, RMIL_CMDLINE);
	rc = rpmtsOrder(ts) ? -1 : rpmtsRun(ts, NULL, 0);
	rpmPopMacro(NULL, "_rpmlock_path");
	/* Nobody else uses that file: the root's lock is ours. */
	unlinkat(rootfd, lock + 1, 0);
out:
	rpmtsFree(ts);
	free(dbpath);
	if (rc)
		return ims_err(log, -EIO,
			       "%s: installed and recorded, but rpm's database in %s still has it: "
			       "rpm --root %s -e --justdb --nodeps %s removes that entry",
			       name, root, root, name);
	if (n)
		ims_logf(log, IMASTREAM_LOG_NOTICE,
			 "%s: taken over from rpm: its entry in rpm's database is removed", name);
	return 0;
}
