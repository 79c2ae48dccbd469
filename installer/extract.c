// SPDX-License-Identifier: LGPL-2.1-or-later
/* The extractor below a root fd: made, a package begun, its counts, freed (its entries, directories and commit: extract_*.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/private.h"
#include "installer/extract_state.h"

int imastream_extract_new(int rootfd, unsigned int flags, const struct imastream_entry_sink *sink,
			  const struct imastream_log *log, struct imastream_extract **ret)
{
	struct imastream_extract *x;
	struct stat st;
	int err;

	if (flags & ~(IMASTREAM_EXTRACT_NO_CHOWN | IMASTREAM_EXTRACT_NO_CAPS | IMASTREAM_EXTRACT_FSYNC |
		      IMASTREAM_EXTRACT_SYNCFS | IMASTREAM_EXTRACT_JOURNAL))
		return ims_err(log, -EINVAL, "extract: unknown flags 0x%x", flags);
	err = sink ? IMS_CHECK_SIZE(log, sink, imastream_entry_sink, journal) : 0;
	if (err)
		return err;
	if (fstat(rootfd, &st))
		return ims_err(log, -errno, "extract: root fd %d: %m", rootfd);
	if (!S_ISDIR(st.st_mode))
		return ims_err(log, -ENOTDIR, "extract: root fd %d is not a directory", rootfd);
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	/* O_PATH descriptors cannot be read: reopen as a real directory fd. */
	x->rootfd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->rootfd < 0) {
		err = -errno;
		free(x);
		return ims_err(log, err, "extract: cannot open the root directory: %s", strerror(-err));
	}
	x->flags = flags;
	if (sink)
		IMS_COPY_SIZED(&x->sink, sink);
	x->log = log;
	x->cur_fd = -1;
	{
		const char *delay = getenv("IMASTREAM_TEST_RENAME_DELAY_MS");

		const char *stop_at = getenv("IMASTREAM_TEST_RENAME_STOP_AT");

		if (delay)
			x->test_rename_delay_ms = (unsigned int)strtoul(delay, NULL, 10) % 10000;
		if (stop_at)
			x->test_rename_stop_at = strtoul(stop_at, NULL, 10);
	}
	*ret = x;
	return 0;
}

int ims_extract_rootfd(const struct imastream_extract *x)
{
	return x->rootfd;
}

const struct imastream_log *ims_extract_log(const struct imastream_extract *x)
{
	return x->log;
}

const struct imastream_entry_sink *ims_extract_sink(const struct imastream_extract *x)
{
	return &x->sink;
}

int ims_extract_set_root_meta(struct imastream_extract *x, mode_t mode, uid_t uid, gid_t gid)
{
	const char *pkg = x->pkg ? x->pkg : "(no package)";

	if (!(x->flags & IMASTREAM_EXTRACT_NO_CHOWN) && fchown(x->rootfd, uid, gid))
		return ims_err(x->log, -errno, "%s: /: chown of the root: %m", pkg);
	if (fchmod(x->rootfd, mode & 07777))
		return ims_err(x->log, -errno, "%s: /: chmod of the root: %m", pkg);
	return 0;
}

int imastream_extract_get_stats(const struct imastream_extract *x, struct imastream_extract_stats *st)
{
	int err;

	if (!x || !st)
		return ims_err(x ? x->log : NULL, -EINVAL, "extract: no extractor or no stats given");
	err = IMS_CHECK_OUT_SIZE(x->log, st, imastream_extract_stats, bytes);
	if (!err)
		IMS_FILL_SIZED(st, &x->stats);
	return err;
}

void ims_extract_reset_package(struct imastream_extract *x)
{
	for (size_t i = 0; i < x->ndirs; i++) {
		if (x->dirs[i].fd >= 0 && x->dirs[i].fd != x->rootfd)
			close(x->dirs[i].fd);
		free(x->dirs[i].rel);
	}
	for (size_t i = 0; i < x->npend; i++) {
		free(x->pend[i].tmp);
		free(x->pend[i].base);
	}
	free(x->dirs);
	free(x->pend);
	x->dirs = NULL;
	x->pend = NULL;
	x->ndirs = x->adirs = x->npend = x->apend = 0;
	x->nopen = 0;
	ims_strmap_clear(&x->dir_index);
	ims_strmap_clear(&x->seen);
	free(x->pkg);
	free(x->journal_name);
	x->pkg = x->journal_name = NULL;
	x->open = false;
}

int ims_extract_set_nevra(struct imastream_extract *x, const char *nevra)
{
	if (!x->open)
		return -EINVAL;
	free(x->journal_name);
	x->journal_name = NULL;
	if (!nevra || !strcmp(nevra, x->pkg))
		return 0;
	if (asprintf(&x->journal_name, "%s from %s", nevra, x->pkg) < 0) {
		x->journal_name = NULL;
		return -ENOMEM;
	}
	return 0;
}

int imastream_extract_begin(struct imastream_extract *x, const char *name)
{
	int err;

	if (x->open)
		return ims_err(x->log, -EBUSY, "%s: another package (%s) is still open", name, x->pkg);
	x->pkg = strdup(name ? name : "(package)");
	x->dirs = calloc(16, sizeof(*x->dirs));
	if (!x->pkg || !x->dirs) {
		err = -ENOMEM;
		goto out;
	}
	x->adirs = 16;
	x->dirs[0] = (struct dir){ .rel = strdup(""), .fd = x->rootfd, .parent = -1 };
	x->ndirs = 1;
	if (!x->dirs[0].rel) {
		err = -ENOMEM;
		goto out;
	}
	err = ims_strmap_add(&x->dir_index, "", 0);
	if (err)
		goto out;
	x->pkg_entries = x->pkg_bytes = 0;
	x->open = true;
	if (x->sink.begin_package) {
		err = x->sink.begin_package(x->sink.arg, x->pkg);
		if (err) {
			ims_err(x->log, err, "%s: the hook chain refused the package: %s", x->pkg,
				strerror(-err));
			x->open = false;
			goto out;
		}
	}
	return 0;
out:
	ims_extract_reset_package(x);
	return err;
}

void imastream_extract_free(struct imastream_extract *x)
{
	if (!x)
		return;
	imastream_extract_abort(x, -ECANCELED);
	imastream_hasher_free(x->hasher);
	close(x->rootfd);
	free(x);
}
