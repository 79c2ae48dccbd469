// SPDX-License-Identifier: LGPL-2.1-or-later
/* The extractor's end of a package: commit (synced, journaled, renamed into place) or abort (every temp object and new directory removed). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <signal.h>
#include <time.h>

#include "common/private.h"
#include "installer/extract_state.h"
#include "installer/journal.h"

/* Removes the temp objects from pending entry @from on. */
static void remove_all_temps(struct imastream_extract *x, size_t from)
{
	for (size_t i = from; i < x->npend; i++) {
		int dfd;

		ims_extract_evict_dir_fds(x);
		dfd = ims_extract_dir_fd(x, x->pend[i].dir);
		if (dfd < 0 || (unlinkat(dfd, x->pend[i].tmp, 0) && errno != ENOENT))
			ims_logf(x->log, IMASTREAM_LOG_WARNING,
				 "%s: cannot remove temp file %s/%s: %m", x->pkg,
				 x->dirs[x->pend[i].dir].rel, x->pend[i].tmp);
	}
}

/* Removes every temp object and every directory this package created, deepest first. */
static void remove_all(struct imastream_extract *x)
{
	remove_all_temps(x, 0);
	for (size_t i = x->ndirs; i-- > 1;) {
		struct dir *d = &x->dirs[i];
		int pfd;

		if (!d->created)
			continue;
		ims_extract_evict_dir_fds(x);
		pfd = ims_extract_dir_fd(x, d->parent);
		if (pfd < 0 || unlinkat(pfd, ims_extract_dir_name(d), AT_REMOVEDIR))
			ims_logf(x->log, IMASTREAM_LOG_WARNING,
				 "%s: cannot remove directory %s: %m", x->pkg, d->rel);
	}
}

void imastream_extract_abort(struct imastream_extract *x, int err)
{
	if (!x || !x->open)
		return;
	if (x->in_entry) {
		if (x->cur_sink_open && x->sink.entry_abort)
			x->sink.entry_abort(x->sink.arg, x->cur_ctx, err);
		x->cur_ctx = NULL;
		ims_extract_finish_entry(x);
	}
	remove_all(x);
	if (x->sink.end_package)
		x->sink.end_package(x->sink.arg, err ? err : -ECANCELED);
	ims_extract_reset_package(x);
}

/*
 * Makes every temp object of the package durable, content and attributes, before any
 * of them gets its final name: one syncfs() per filesystem its directories are on
 * (usually one; a root may have /boot or /var on another).
 */
static int sync_filesystems(struct imastream_extract *x)
{
	dev_t synced[8];
	size_t nsynced = 0;

	for (size_t i = 0; i < x->ndirs; i++) {
		struct stat st;
		size_t j;
		int fd;

		ims_extract_evict_dir_fds(x);
		fd = ims_extract_dir_fd(x, (int)i);
		if (fd < 0)
			return fd;
		if (fstat(fd, &st))
			return ims_err(x->log, -errno, "%s: %s: %m", x->pkg, x->dirs[i].rel);
		for (j = 0; j < nsynced && synced[j] != st.st_dev; j++)
			;
		if (j < nsynced)
			continue;
		if (syncfs(fd))
			return ims_err(x->log, -errno, "%s: syncfs of the filesystem of /%s: %m",
				       x->pkg, x->dirs[i].rel);
		if (nsynced < sizeof(synced) / sizeof(synced[0]))
			synced[nsynced++] = st.st_dev;
	}
	return 0;
}

static int journal_add_sink_rename(void *ctx, const char *dir, const char *tmp, const char *name)
{
	const char *why;

	return ims_journal_add(ctx, IMS_JOURNAL_RENAME, dir, tmp, name, &why);
}

static int journal_add_sink_step(void *ctx, int step, const char *dir, const char *name)
{
	const char *why;
	int kind = step == IMASTREAM_JOURNAL_REMOVE  ? IMS_JOURNAL_REMOVE :
		   step == IMASTREAM_JOURNAL_RMDIR   ? IMS_JOURNAL_RMDIR :
		   step == IMASTREAM_JOURNAL_RPMSAVE ? IMS_JOURNAL_SAVE :
						       -1;

	return ims_journal_add(ctx, kind, dir, NULL, name, &why);
}

/*
 * Writes the intent journal of the package: its renames in the order commit does them,
 * then the sink's removals (an upgrade's dropped files), then its renames (its record).  Every temp file is complete (and synced, with FSYNC or
 * SYNCFS) at this point.  Return: the state directory's fd (the journal is there), -1
 * when there was nothing to journal, or -errno (said).
 */
static int write_journal(struct imastream_extract *x)
{
	struct ims_journal j;
	const char *why = NULL;
	int statefd, err;

	err = ims_journal_init(&j, x->journal_name ? x->journal_name : x->pkg, getpid());
	for (size_t i = 0; i < x->npend && !err; i++)
		err = ims_journal_add(&j, IMS_JOURNAL_RENAME, x->dirs[x->pend[i].dir].rel,
				      x->pend[i].tmp, x->pend[i].base, &why);
	if (!err && x->sink.journal_steps)
		err = x->sink.journal_steps(x->sink.arg, journal_add_sink_step, &j);
	if (!err && x->sink.journal)
		err = x->sink.journal(x->sink.arg, journal_add_sink_rename, &j);
	if (err) {
		ims_journal_clear(&j);
		return ims_err(x->log, err, "%s: cannot journal its renames: %s", x->pkg,
			       why ? why : strerror(-err));
	}
	if (!j.nops) {
		ims_journal_clear(&j);
		return -1;
	}
	statefd = ims_open_dir_below(x->rootfd, IMS_STATE_DIR, true, NULL);
	if (statefd < 0) {
		ims_journal_clear(&j);
		return ims_err(x->log, statefd, "%s: cannot create " IMS_STATE_DIR ": %s", x->pkg,
			       strerror(-statefd));
	}
	err = ims_journal_write(statefd, &j,
				x->flags & (IMASTREAM_EXTRACT_FSYNC | IMASTREAM_EXTRACT_SYNCFS),
				x->log);
	ims_journal_clear(&j);
	if (err) {
		close(statefd);
		return err;
	}
	return statefd;
}

/* The test hooks before rename @i (from 0): a pause, a stop (see test_rename_delay_ms). */
static void test_rename_hooks(const struct imastream_extract *x, size_t i)
{
	struct timespec ts = { .tv_sec = x->test_rename_delay_ms / 1000,
			       .tv_nsec = (long)(x->test_rename_delay_ms % 1000) * 1000000L };

	if (i && x->test_rename_delay_ms)
		nanosleep(&ts, NULL);
	if (x->test_rename_stop_at && i + 1 == x->test_rename_stop_at)
		raise(SIGSTOP);
}

/*
 * Directory mtimes last, as rpm leaves them: rpm gives a directory its header mtime
 * when it reaches the directory's entry, before anything inside it, so a directory
 * the package then puts a file in or creates a directory in ends with the time of
 * the install; only one that gets nothing new keeps the header's.
 */
static void finish_dirs(struct imastream_extract *x)
{
	size_t i;

	for (i = 0; i < x->npend; i++)
		x->dirs[x->pend[i].dir].filled = true;
	for (i = 1; i < x->ndirs; i++)
		if (x->dirs[i].created)
			x->dirs[x->dirs[i].parent].filled = true;
	for (i = 0; i < x->ndirs; i++) {
		struct dir *d = &x->dirs[i];
		int fd;

		if (d->filled)
			d->has_mtime = false;
		if (!d->has_mtime && !(x->flags & IMASTREAM_EXTRACT_FSYNC))
			continue;
		ims_extract_evict_dir_fds(x);
		fd = ims_extract_dir_fd(x, (int)i);
		if (fd < 0)
			continue;
		if (d->has_mtime && ims_extract_set_mtime_fd(fd, d->mtime))
			ims_logf(x->log, IMASTREAM_LOG_WARNING, "%s: %s: cannot set mtime: %m",
				 x->pkg, d->rel);
		if ((x->flags & IMASTREAM_EXTRACT_FSYNC) && fsync(fd))
			ims_logf(x->log, IMASTREAM_LOG_WARNING, "%s: %s: fsync: %m", x->pkg,
				 d->rel);
	}
}

int imastream_extract_commit(struct imastream_extract *x)
{
	size_t i;
	int err = 0, statefd = -1;

	if (!x->open || x->in_entry)
		return ims_err(x->log, -EINVAL, "%s: commit with %s",
			       x->pkg ? x->pkg : "(no package)",
			       x->open ? "an entry open" : "no package");
	/* The sink's last word, while the package can still be rolled back whole. */
	if (x->sink.commit_package) {
		err = x->sink.commit_package(x->sink.arg);
		if (err) {
			ims_err(x->log, err, "%s: the hook chain refused to commit the package: %s",
				x->pkg, strerror(-err));
			remove_all(x);
			goto out;
		}
	}
	if ((x->flags & IMASTREAM_EXTRACT_SYNCFS) && x->npend) {
		err = sync_filesystems(x);
		if (err) {
			remove_all(x);
			goto out;
		}
	}
	/* Every object is complete with its attributes (and synced) before the journal that
	 * says they are to be renamed, and the journal is durable before the first rename. */
	if (x->flags & IMASTREAM_EXTRACT_JOURNAL) {
		statefd = write_journal(x);
		if (statefd < -1) {
			err = statefd;
			statefd = -1;
			remove_all(x);
			goto out;
		}
	}
	for (i = 0; i < x->npend; i++) {
		struct pending *p = &x->pend[i];
		int dfd;

		test_rename_hooks(x, i);
		ims_extract_evict_dir_fds(x);
		dfd = ims_extract_dir_fd(x, p->dir);
		if (dfd < 0 || renameat(dfd, p->tmp, dfd, p->base)) {
			err = dfd < 0 ? dfd : -errno;
			ims_err(x->log, err,
				"%s: %s%s%s: cannot rename into place: %m (%zu of %zu files were "
				"already renamed)",
				x->pkg, x->dirs[p->dir].rel, *x->dirs[p->dir].rel ? "/" : "",
				p->base, i, x->npend);
			remove_all_temps(x, i);
			goto out;
		}
	}
	finish_dirs(x);
	x->stats.packages++;
	x->stats.entries += x->pkg_entries;
	x->stats.bytes += x->pkg_bytes;
out:
	if (x->sink.end_package)
		x->sink.end_package(x->sink.arg, err);
	if (statefd >= 0) {
		/* The sink's renames are done too (or, after a failure, its temps removed):
		 * the renames reach the disk before the journal that asks for them goes. */
		if ((x->flags & IMASTREAM_EXTRACT_SYNCFS) && syncfs(statefd))
			ims_logf(x->log, IMASTREAM_LOG_WARNING, "%s: syncfs: %m", x->pkg);
		ims_journal_remove(statefd);
		close(statefd);
	}
	ims_extract_reset_package(x);
	return err;
}
