// SPDX-License-Identifier: LGPL-2.1-or-later
/* The intent journal's replay: every step checked beneath the root before the first is done, then each done, as recovery completes a killed commit. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/private.h"
#include "imastream/entry.h"
#include "imastream/rpmdb.h"
#include "installer/journal.h"
#include "installer/private.h"

/*
 * Opens a step's directory below the root, through the directory symlinks rpm and the
 * install follow (merged /usr) and no other; -ENOENT when it is not there.
 */
static int open_step_dir(int rootfd, const struct ims_journal_op *op)
{
	int fd = imastream_open_dir_as_rpm(rootfd, op->dir, O_RDONLY, NULL, 0);

	return fd == -EPERM ? -ELOOP : fd;
}

/* Whether @name in @dfd is a directory (which no step may rename or remove). */
static bool is_dir_at(int dfd, const char *name)
{
	struct stat st;

	return !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode);
}

/* "ROOT/DIR/NAME" for messages ("/DIR/NAME" for the root "/"). */
static void shown(char *buf, size_t size, const char *root, const char *dir, const char *name)
{
	snprintf(buf, size, "%s/%s%s%s", strcmp(root, "/") ? root : "", dir,
		 *dir && *name ? "/" : "", name);
}

/* Checks every step before the first one is done: directories beneath the root, no directory moved. */
static int check_steps(int rootfd, const struct ims_journal *j, const char *root,
		       const struct imastream_log *log)
{
	char path[2 * PATH_MAX], saved[NAME_MAX + 1];
	int dfd = -1, err = 0;

	for (size_t i = 0; i < j->nops && !err; i++) {
		const struct ims_journal_op *op = &j->ops[i];

		if (i == 0 || strcmp(op->dir, j->ops[i - 1].dir)) {
			if (dfd >= 0)
				close(dfd);
			dfd = open_step_dir(rootfd, op);
			if (dfd == -ENOENT)
				continue; /* nothing of the package is there: nothing to do */
			if (dfd < 0) {
				shown(path, sizeof(path), root, op->dir, "");
				err = ims_err(log, -EBADMSG,
					      "%s: a step of the intent journal " IMS_STATE_DIR
					      "/" IMS_JOURNAL_NAME
					      " cannot be reached beneath the root (%s%s); nothing "
					      "was changed",
					      path, strerror(-dfd),
					      dfd == -ELOOP || dfd == -EXDEV || dfd == -ENOTDIR ?
						      "; a symlink is never followed" :
						      "");
				break;
			}
		}
		if (dfd < 0 || op->kind == IMS_JOURNAL_RMDIR)
			continue; /* (rmdir removes an empty directory or nothing) */
		if (op->kind == IMS_JOURNAL_SAVE &&
		    snprintf(saved, sizeof(saved), "%s" IMS_JOURNAL_SAVE_SUFFIX, op->name) > 0 &&
		    is_dir_at(dfd, saved)) {
			shown(path, sizeof(path), root, op->dir, saved);
			err = ims_err(log, -EBADMSG,
				      "%s: a step of the intent journal " IMS_STATE_DIR
				      "/" IMS_JOURNAL_NAME
				      " would rename over a directory; nothing was changed",
				      path);
		} else if ((op->tmp && is_dir_at(dfd, op->tmp)) || is_dir_at(dfd, op->name)) {
			shown(path, sizeof(path), root, op->dir,
			      op->tmp && is_dir_at(dfd, op->tmp) ? op->tmp : op->name);
			err = ims_err(log, -EBADMSG,
				      "%s: a step of the intent journal " IMS_STATE_DIR
				      "/" IMS_JOURNAL_NAME
				      " would %s a directory; nothing was changed",
				      path,
				      op->kind == IMS_JOURNAL_RENAME ? "rename over or move" :
				      op->kind == IMS_JOURNAL_SAVE   ? "move" :
								       "remove");
		}
	}
	if (dfd >= 0)
		close(dfd);
	return err;
}

/*
 * Does one step in @dfd.  Return: 1 when done now, 0 when done before (or, for a
 * directory not empty, kept), -errno.
 */
static int do_step(int dfd, const struct ims_journal_op *op)
{
	const char *gone = op->kind == IMS_JOURNAL_RENAME ? op->tmp : op->name;
	char saved[NAME_MAX + 1];
	struct stat st;

	if (fstatat(dfd, gone, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno; /* done before the interruption */
	switch (op->kind) {
	case IMS_JOURNAL_RENAME:
		return renameat(dfd, op->tmp, dfd, op->name) ? -errno : 1;
	case IMS_JOURNAL_RMDIR:
		if (!unlinkat(dfd, op->name, AT_REMOVEDIR))
			return 1;
		/* Not empty (files no package owns), or no longer a directory: kept. */
		return errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR ||
				       errno == ENOENT ?
			       0 :
			       -errno;
	case IMS_JOURNAL_SAVE:
		snprintf(saved, sizeof(saved), "%s" IMS_JOURNAL_SAVE_SUFFIX, op->name);
		return renameat(dfd, op->name, dfd, saved) ? -errno : 1;
	default:
		if (S_ISDIR(st.st_mode))
			return -EISDIR; /* (checked before the first step: changed since) */
		return unlinkat(dfd, op->name, 0) && errno != ENOENT ? -errno : 1;
	}
}

int ims_journal_replay(int rootfd, const struct ims_journal *j, const char *root,
		       const struct imastream_log *log, struct ims_journal_outcome *out)
{
	char path[2 * PATH_MAX];
	int dfd = -1, err;

	out->steps = j->nops;
	err = check_steps(rootfd, j, root, log);
	for (size_t i = 0; i < j->nops && !err; i++) {
		const struct ims_journal_op *op = &j->ops[i];
		int done;

		if (i == 0 || strcmp(op->dir, j->ops[i - 1].dir)) {
			if (dfd >= 0)
				close(dfd);
			dfd = open_step_dir(rootfd, op);
		}
		if (dfd < 0)
			continue; /* the directory is gone: nothing of the step is left to do */
		done = do_step(dfd, op);
		shown(path, sizeof(path), root, op->dir, op->name);
		if (done < 0) {
			err = ims_err(log, done, "%s: cannot complete the transaction of %s: %s",
				      path, j->package, strerror(-done));
			break;
		}
		if (!done)
			continue;
		switch (op->kind) {
		case IMS_JOURNAL_RENAME:
			out->renamed++;
			break;
		case IMS_JOURNAL_SAVE:
			out->saved++;
			/* As rpm says it: the admin's changes are not lost, and not in use. */
			ims_logf(log, IMASTREAM_LOG_WARNING,
				 "%s: %s saved as %s" IMS_JOURNAL_SAVE_SUFFIX
				 " (a modified %%config file the new version does not have)",
				 j->package, path, path);
			break;
		default:
			out->removed++;
		}
		ims_logf(log, IMASTREAM_LOG_DEBUG, "%s: %s (transaction of %s)", path,
			 op->kind == IMS_JOURNAL_RENAME ? "renamed into place" :
			 op->kind == IMS_JOURNAL_SAVE	? "saved" :
							  "removed",
			 j->package);
	}
	if (dfd >= 0)
		close(dfd);
	return err;
}

/* Reads the whole journal file @fd (a regular file, not too large). */
static int read_journal(int fd, char **text, size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *buf;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > IMS_JOURNAL_MAX_SIZE)
		return -EBADMSG;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? -errno : -EBADMSG;

			free(buf);
			return err;
		}
		got += (size_t)n;
	}
	*text = buf;
	*len = got;
	return 0;
}

int ims_journal_recover(int rootfd, int statefd, const char *root, const struct imastream_log *log,
			struct ims_journal_outcome *out)
{
	const char *shown_root = strcmp(root, "/") ? root : "";
	struct ims_journal j = { 0 };
	unsigned int line = 0;
	const char *why = NULL;
	char *text = NULL;
	size_t len = 0;
	int fd, err;

	memset(out, 0, sizeof(*out));
	fd = ims_open_regular(statefd, IMS_JOURNAL_NAME, O_RDONLY | O_NOFOLLOW, 0);
	if (fd == -ENOENT)
		return 0;
	out->found = true;
	if (fd < 0)
		return ims_err(log, fd,
			       "%s/" IMS_STATE_DIR "/" IMS_JOURNAL_NAME
			       ": cannot open the intent journal: %s",
			       shown_root, ims_open_strerror(fd));
	err = read_journal(fd, &text, &len);
	close(fd);
	if (err == -EBADMSG)
		why = "not a regular file, or larger than any journal";
	else if (err)
		return ims_err(log, err,
			       "%s/" IMS_STATE_DIR "/" IMS_JOURNAL_NAME
			       ": cannot read the intent journal: %s",
			       shown_root, strerror(-err));
	else
		err = ims_journal_parse(text, len, &j, &line, &why);
	free(text);
	if (err == -EBADMSG) {
		char where[32] = "";

		if (line)
			snprintf(where, sizeof(where), "line %u: ", line);
		return ims_err(log, err,
			       "%s/" IMS_STATE_DIR "/" IMS_JOURNAL_NAME
			       ": corrupt intent journal (%s%s); nothing was changed: look at it, "
			       "remove it, then reinstall its package",
			       shown_root, where, why);
	}
	if (err)
		return ims_err(log, err, "%s/" IMS_STATE_DIR "/" IMS_JOURNAL_NAME ": %s",
			       shown_root, strerror(-err));
	err = ims_journal_replay(rootfd, &j, root, log, out);
	/* The completed renames are durable before the journal that asks for them goes. */
	if (!err && syncfs(rootfd))
		err = ims_err(log, -errno, "%s: syncfs: %m", root);
	if (!err) {
		ims_journal_remove(statefd);
		fsync(statefd);
		ims_logf(log, IMASTREAM_LOG_NOTICE,
			 "%s: completed the interrupted transaction of %s (%lu of its %lu steps "
			 "were left)",
			 root, j.package, out->renamed + out->removed + out->saved, out->steps);
	}
	ims_journal_clear(&j);
	return err;
}
