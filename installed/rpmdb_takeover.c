// SPDX-License-Identifier: LGPL-2.1-or-later
/* Packages rpm's database holds, by name: an install does not take one over unless asked, a take-over replaces only what rpm -U would (one entry, same name and arch, not install-only), and removes that entry once the package is installed and recorded. */
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
#include <rpm/rpmtd.h>
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

/* An install-only package (dnf's installonlypkgs: kernels, kernel modules), installed side
 * by side in several versions: none of them is for one version to replace. */
static bool install_only(Header h)
{
	static const char *const names[] = { "kernel", "kernel-PAE" };
	const char *name = headerGetString(h, RPMTAG_NAME);
	struct rpmtd_s td;
	bool found = false;

	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	if (!headerGet(h, RPMTAG_PROVIDENAME, &td, HEADERGET_MINMEM))
		return false;
	for (const char *p; !found && (p = rpmtdNextString(&td));)
		found = !strncmp(p, "installonlypkg(", 15) || !strncmp(p, "multiversion(", 13);
	rpmtdFreeData(&td);
	return found;
}

int ims_rpmdb_takeover_check(void *ts_arg, const char *root, const char *pkg, void *rpm_header,
			     unsigned int *offset, const struct imastream_log *log)
{
	rpmts ts = ts_arg;
	Header h = rpm_header;
	const char *name = headerGetString(h, RPMTAG_NAME), *arch = headerGetString(h, RPMTAG_ARCH);
	rpmdbMatchIterator mi = name ? rpmtsInitIterator(ts, RPMDBI_NAME, name, 0) : NULL;
	char nevras[512] = "";
	unsigned int n = 0, same_arch = 0;
	bool only = install_only(h);
	Header old;
	int err = 0;

	while (mi && (old = rpmdbNextIterator(mi))) {
		const char *a = headerGetString(old, RPMTAG_ARCH);
		char *nevra = headerGetAsString(old, RPMTAG_NEVRA);
		size_t len = strlen(nevras);

		snprintf(nevras + len, sizeof(nevras) - len, "%s%s", len ? ", " : "",
			 nevra ? nevra : name);
		free(nevra);
		if (a && arch && !strcmp(a, arch)) {
			same_arch++;
			*offset = rpmdbGetIteratorOffset(mi);
		}
		only = only || install_only(old);
		n++;
	}
	rpmdbFreeIterator(mi);
	/* What rpm -U would replace, and only that: one entry, same name and arch. */
	if (!n)
		return 0;
	if (only)
		err = ims_err(
			log, -EEXIST,
			"%s: refused: %s is installed side by side in versions (an install-only "
			"package, as kernels are), rpm's database in %s has %s: --take-over "
			"replaces none of them",
			pkg, name, root, nevras);
	else if (n > 1)
		err = ims_err(log, -EEXIST,
			      "%s: refused: rpm's database in %s has %u packages named %s (%s): "
			      "--take-over replaces one, of the same name and architecture",
			      pkg, root, n, name, nevras);
	else if (!same_arch)
		err = ims_err(log, -EEXIST,
			      "%s: refused: rpm's database in %s has %s, of another architecture "
			      "than %s: --take-over replaces one of the same architecture",
			      pkg, root, nevras, arch ? arch : "(none)");
	return err ? err : 1;
}

/* The lock librpm takes for our own erase: the root's is ours already, and an OFD lock
 * conflicts with librpm's in this process too. */
#define PRIVATE_LOCK "/.imastream-take-over.lock"

int ims_rpmdb_forget(int rootfd, const char *root, const char *name, unsigned int offset,
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
	/* The one entry the check chose (the root's lock held since): no other of that name. */
	mi = rpmtsInitIterator(ts, RPMDBI_PACKAGES, &offset, sizeof(offset));
	while (mi && (h = rpmdbNextIterator(mi)))
		if (!strcmp(headerGetString(h, RPMTAG_NAME) ?: "", name) &&
		    !rpmtsAddEraseElement(ts, h, (int)rpmdbGetIteratorOffset(mi)))
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
