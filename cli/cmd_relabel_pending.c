// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream relabel --pending: the labels a rootless build left in the root, written as real root. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/settings.h"
#include "imastream/pending.h"
#include "imastream/root.h"
#include "imastream/rpmdb.h"

int cli_relabel_pending(struct cli_settings *settings, const char *root, bool dry_run,
			bool operands)
{
	struct imastream_pending_counts c = { .size = sizeof(c) };
	struct imastream_root_txn *lock = NULL;
	unsigned int root_flags = IMASTREAM_ROOT_LOCK_ONLY;
	struct timespec t0;
	char *root_abs;
	int rootfd, err, ret = CLI_FAILED;

	if (dry_run)
		return cli_usage_error("relabel", "--pending writes: it takes no --dry-run");
	if (operands)
		return cli_usage_error("relabel",
				       "--pending applies every pending entry: no PACKAGE");
	if (settings->say.json)
		return cli_usage_error("relabel", "--pending has no --format json output");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (settings->root.no_wait)
		root_flags |= IMASTREAM_ROOT_NO_WAIT;
	root_abs = realpath(root, NULL);
	if (!root_abs) {
		cli_say("relabel", "%s: %s", root, strerror(errno));
		return CLI_FAILED;
	}
	if (settings->root.dbpath && imastream_rpm_set_dbpath(settings->root.dbpath, &cli_log))
		goto out;
	/* rpm's transaction lock, as relabel takes it: nothing changes the files meanwhile. */
	rootfd = open(root_abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		cli_say("relabel", "%s: %s", root, strerror(errno));
		goto out;
	}
	err = imastream_root_txn_begin(rootfd, root_abs, root_flags, &cli_log, NULL, &lock);
	if (!err)
		err = imastream_pending_apply(root_abs, &c, &cli_log);
	imastream_root_txn_end(lock, err);
	close(rootfd);
	if (err)
		goto out;
	if (!settings->say.quiet)
		cli_say("relabel",
			"%lu pending entries: %lu files labelled (%lu values written), %lu "
			"refused, "
			"%.2f s",
			c.entries, c.applied, c.written, c.refused,
			cli_seconds_since(CLOCK_MONOTONIC, &t0));
	ret = c.refused ? CLI_FAILED : CLI_OK;
out:
	free(root_abs);
	return ret;
}
