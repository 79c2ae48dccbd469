// SPDX-License-Identifier: LGPL-2.1-or-later
/* The checks of an rpm package that need no lock, made before an install takes the root's: a refused package then leaves the root as it was. */
#include <errno.h>
#include <stdlib.h>

#include <rpm/header.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmts.h>

#include "common/private.h"
#include "imastream/chain_sink.h"
#include "imastream/install_rpm.h"
#include "installer/sink_header_trust.h"
#include "installer/private.h"

struct imastream_precheck {
	int rootfd;
	bool allow_unsigned, take_over;
	const char *root;
	rpmts ts;			/* the root's, when it has an rpm database */
	struct ims_header_trust *trust; /* NULL with IMASTREAM_SINK_NO_SIGNATURES */
	const struct imastream_log *log;
};

int imastream_precheck_new(int rootfd, const char *root, const char *const *pgp_keys,
			   unsigned int sink_flags, const struct imastream_log *log,
			   struct imastream_precheck **ret)
{
	struct imastream_precheck *pc;
	rpmts ts = NULL;
	int err, found_db;

	if (rootfd < 0 || !root || root[0] != '/')
		return ims_err(log, -EINVAL,
			       "package check: a root and its absolute path are required");
	err = ims_rpm_config();
	if (err)
		return ims_err(log, err, "cannot read rpm's configuration");
	pc = calloc(1, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	pc->rootfd = rootfd;
	pc->log = log;
	pc->allow_unsigned = sink_flags & IMASTREAM_SINK_ALLOW_UNSIGNED;
	pc->take_over = sink_flags & IMASTREAM_SINK_TAKE_OVER;
	pc->root = root;
	/* The root's database as the install will read it (keyring, packages); a root
	 * without one has none (and reading must not create one). */
	found_db = ims_rpmdb_exists(rootfd, root, log);
	if (found_db < 0) {
		err = found_db;
		goto fail;
	}
	if (found_db) {
		ts = rpmtsCreate();
		if (!ts || rpmtsSetRootDir(ts, root)) {
			rpmtsFree(ts);
			err = ims_err(log, -EINVAL, "%s: not usable as rpm's root directory", root);
			goto fail;
		}
		pc->ts = ts;
	}
	if (!(sink_flags & IMASTREAM_SINK_NO_SIGNATURES)) {
		err = ims_header_trust_new(pgp_keys, ts, log, &pc->trust);
		if (err)
			goto fail;
	}
	*ret = pc;
	return 0;
fail:
	imastream_precheck_free(pc);
	return err;
}

static int judge(void *arg, const char *name, void *rpm_header)
{
	struct imastream_precheck *pc = arg;
	const char *n = headerGetString(rpm_header, RPMTAG_NAME);
	int err = pc->trust ? ims_header_trust_precheck(pc->trust, name, rpm_header,
							pc->allow_unsigned) :
			      0;

	if (!err && pc->ts && n && !pc->take_over)
		err = ims_rpmdb_refuse_owned(pc->ts, pc->root, name, n, pc->log);
	else if (!err && pc->ts && n) {
		unsigned int offset;

		/* Refused before the lock when the take-over would replace more than rpm -U. */
		err = ims_rpmdb_takeover_check(pc->ts, pc->root, name, rpm_header, &offset,
					       pc->log);
		err = err < 0 ? err : 0;
	}
	if (pc->ts)
		rpmtsCloseDB(pc->ts);
	return err;
}

int imastream_precheck_rpm(struct imastream_precheck *pc, int fd, const char *name,
			   unsigned int flags)
{
	return ims_rpm_check_header(pc->rootfd, fd, name, flags, pc->log, judge, pc);
}

void imastream_precheck_free(struct imastream_precheck *pc)
{
	if (!pc)
		return;
	ims_header_trust_free(pc->trust);
	rpmtsFree(pc->ts);
	free(pc);
}
