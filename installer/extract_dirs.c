// SPDX-License-Identifier: LGPL-2.1-or-later
/* The extractor's directories: opened below the root one component at a time, never through a symlink, created as rpm creates them, their fds cached. */
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

static int add_dir(struct imastream_extract *x, const char *rel, int fd, int parent, bool created)
{
	struct dir *d;
	int err;

	d = ims_grow(x->dirs, x->ndirs, &x->adirs, sizeof(*d), 64);
	if (!d)
		return -ENOMEM;
	x->dirs = d;
	d = &x->dirs[x->ndirs];
	*d = (struct dir){ .rel = strdup(rel), .fd = fd, .parent = parent, .created = created };
	if (!d->rel)
		return -ENOMEM;
	err = ims_strmap_add(&x->dir_index, rel, (int)x->ndirs);
	if (err) {
		free(d->rel);
		return err;
	}
	return (int)x->ndirs++;
}

/*
 * Directory fds are cached, but a package may have thousands of directories and the
 * fd limit is often 1024: past DIR_FD_CACHE, every cached fd is closed at a point where
 * no caller holds one (the start of an entry, each step of commit and abort), and
 * ims_extract_dir_fd() reopens on demand, component by component and never following a symlink.
 */
#define DIR_FD_CACHE 256

void ims_extract_evict_dir_fds(struct imastream_extract *x)
{
	if (x->nopen < DIR_FD_CACHE)
		return;
	for (size_t i = 1; i < x->ndirs; i++)
		if (x->dirs[i].fd >= 0) {
			close(x->dirs[i].fd);
			x->dirs[i].fd = -1;
		}
	x->nopen = 0;
}

const char *ims_extract_dir_name(const struct dir *d)
{
	const char *slash = strrchr(d->rel, '/');

	return slash ? slash + 1 : d->rel;
}

/* Returns the fd of directory @idx, reopening it below its parent if it was evicted. */
int ims_extract_dir_fd(struct imastream_extract *x, int idx)
{
	struct dir *d = &x->dirs[idx];
	int pfd, fd;

	if (d->fd >= 0)
		return d->fd;
	pfd = ims_extract_dir_fd(x, d->parent);
	if (pfd < 0)
		return pfd;
	fd = openat(pfd, ims_extract_dir_name(d), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
		/* A directory symlink rpm follows, reopened under the same rule. */
		fd = ims_follow_dir_link(x->rootfd, pfd, ims_extract_dir_name(d), O_RDONLY, NULL,
					 0);
		if (fd < 0)
			errno = -fd;
	}
	if (fd < 0)
		return ims_err(x->log, -errno, "%s: cannot reopen directory '%s': %m", x->pkg,
			       d->rel);
	d->fd = fd;
	x->nopen++;
	return fd;
}

/* Explains why a path component could not be opened as a directory. */
static int dir_open_error(struct imastream_extract *x, int dirfd, const char *name, const char *rel,
			  int err)
{
	struct stat st;

	if (err == -EPERM)
		return entry_err(x, -ELOOP,
				 "'%s' is a symlink owned by neither root nor its target's owner; "
				 "refusing to follow it (as rpm does)",
				 rel);
	if ((err == -ELOOP || err == -ENOTDIR) && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (S_ISLNK(st.st_mode))
			return entry_err(x, -ELOOP,
					 "'%s' is a symlink to no directory below the root; "
					 "refusing to follow it",
					 rel);
		return entry_err(x, -ENOTDIR, "'%s' exists and is not a directory", rel);
	}
	return entry_err(x, err, "cannot open directory '%s': %s", rel, strerror(-err));
}

/*
 * Opens (or creates, mode 0700) directory @name below directory @parent, never following
 * a symlink; @path is its path relative to the root.  A directory created here that the
 * package does not list (@unowned) gets root:root 0755 like rpm gives it, and passes the
 * sink.  Returns its index in dirs[].
 */
static int open_child_dir(struct imastream_extract *x, int parent, const char *path,
			  const char *name, bool unowned)
{
	bool created = false;
	int idx, fd, pfd, err;

	pfd = ims_extract_dir_fd(x, parent);
	if (pfd < 0)
		return pfd;
	/* A symlink or file of this package waits under a temp name: refuse to make a
	 * directory at its path (the symlink-then-file trick) rather than fail in commit. */
	if (ims_strmap_get(&x->seen, path) >= 0)
		return entry_err(x, -ENOTDIR,
				 "'%s' is a non-directory entry of this package; refusing to use "
				 "it as a directory",
				 path);
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(pfd, name, 0700))
			return entry_err(x, -errno, "cannot create directory '%s': %m", path);
		created = true;
		fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0 && !created && (errno == ELOOP || errno == ENOTDIR)) {
		/* A directory symlink (merged /usr): followed where rpm follows it. */
		fd = ims_follow_dir_link(x->rootfd, pfd, name, O_RDONLY, NULL, 0);
		if (fd == -ENOTDIR || fd == -ENOENT)
			fd = -ELOOP;
		if (fd < 0)
			errno = -fd;
	}
	if (fd < 0) {
		err = -errno;
		if (created)
			unlinkat(pfd, name, AT_REMOVEDIR);
		return dir_open_error(x, pfd, name, path, err);
	}
	idx = add_dir(x, path, fd, parent, created);
	if (idx < 0) {
		close(fd);
		if (created)
			unlinkat(pfd, name, AT_REMOVEDIR);
		return idx;
	}
	x->nopen++;
	if (!created || !unowned)
		return idx;

	if (!(x->flags & IMASTREAM_EXTRACT_NO_CHOWN) && fchown(fd, 0, 0))
		return entry_err(x, -errno, "chown of directory '%s': %m", path);
	if (fchmod(fd, 0755))
		return entry_err(x, -errno, "chmod of directory '%s': %m", path);
	if (x->sink.entry_begin || x->sink.entry_end) {
		char abs[PATH_MAX + 1];
		struct imastream_entry e = {
			.path = abs,
			.mode = S_IFDIR | 0755,
			.flags = IMASTREAM_ENTRY_UNOWNED,
			.index = (unsigned int)-1,
		};
		void *ctx = NULL;

		snprintf(abs, sizeof(abs), "/%s", path);
		if (x->sink.entry_begin) {
			err = x->sink.entry_begin(x->sink.arg, &e, &ctx);
			if (err)
				return entry_err(x, err, "hook chain refused directory '%s': %s",
						 path, strerror(-err));
		}
		if (x->sink.entry_end) {
			err = x->sink.entry_end(x->sink.arg, ctx, &e, fd, pfd, name, NULL);
			if (err)
				return entry_err(x, err, "hook chain failed on directory '%s': %s",
						 path, strerror(-err));
		}
	}
	return idx;
}

/*
 * Returns the index of directory @rel[0..len) (no leading or trailing slash), walking
 * from the deepest directory already known, one component at a time (iteratively: a
 * path may have hundreds of components).  Missing intermediate directories are unowned;
 * the last one is unowned only if @unowned_last.
 */
int ims_extract_get_dir(struct imastream_extract *x, const char *rel, size_t len, bool unowned_last)
{
	char buf[PATH_MAX];
	size_t end;
	int idx = 0;

	if (len >= sizeof(buf))
		return entry_err(x, -ENAMETOOLONG, "path too long");
	memcpy(buf, rel, len);
	buf[len] = 0;
	if (!len)
		return 0;
	idx = ims_strmap_get(&x->dir_index, buf);
	if (idx >= 0)
		return idx;
	idx = 0;
	for (end = 0; end < len; end++) {
		size_t start = end;
		int next;

		while (end < len && buf[end] != '/')
			end++;
		buf[end] = 0;
		next = ims_strmap_get(&x->dir_index, buf);
		if (next < 0)
			next = open_child_dir(x, idx, buf, buf + start, end < len || unowned_last);
		if (end < len)
			buf[end] = '/';
		if (next < 0)
			return next;
		idx = next;
	}
	return idx;
}
