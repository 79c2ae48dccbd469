// SPDX-License-Identifier: LGPL-2.1-or-later
/* Directory symlinks in a root followed as rpm follows them, and never any other. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/private.h"
#include "imastream/rpmdb.h"
#include "installed/private.h"

/* The host path of @fd, through /proc (which is how rpm's chroot would see it, minus the root). */
static int fd_host_path(int fd, char *buf, size_t size)
{
	char proc[sizeof("/proc/self/fd/") + 12];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, size - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size - 1)
		return -ENAMETOOLONG;
	buf[n] = 0;
	return buf[0] == '/' ? 0 : -EXDEV;
}

/* @fd's path relative to the root @rootfd ("" for the root itself), or -EXDEV outside it. */
static int real_below_root(int rootfd, int fd, char *real, size_t size)
{
	char root[PATH_MAX], path[PATH_MAX];
	size_t rlen;
	const char *rest;
	int err;

	err = fd_host_path(rootfd, root, sizeof(root));
	if (!err)
		err = fd_host_path(fd, path, sizeof(path));
	if (err)
		return err;
	rlen = strcmp(root, "/") ? strlen(root) : 0;
	if (strncmp(path, root, rlen) || (path[rlen] && path[rlen] != '/'))
		return -EXDEV;
	rest = path + rlen;
	while (*rest == '/')
		rest++;
	if ((size_t)snprintf(real, size, "%s", rest) >= size)
		return -ENAMETOOLONG;
	return 0;
}

int ims_follow_dir_link(int rootfd, int parentfd, const char *name, int flags, char *real,
			size_t real_size)
{
	char target[PATH_MAX], parent[PATH_MAX], joined[2 * PATH_MAX + 2];
	struct open_how how = {
		.flags = (uint64_t)((flags & ~O_NOFOLLOW) | O_DIRECTORY | O_CLOEXEC),
		/* rpm --root chroots: an absolute target and ".." stay in the root. */
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	struct stat lsb, sb;
	ssize_t n;
	int fd, err;

	n = readlinkat(parentfd, name, target, sizeof(target) - 1);
	if (n < 0)
		return errno == EINVAL ? -ENOTDIR : -errno;
	target[n] = 0;
	if (target[0] == '/') {
		snprintf(joined, sizeof(joined), "%s", target);
	} else {
		err = real_below_root(rootfd, parentfd, parent, sizeof(parent));
		if (err)
			return err;
		snprintf(joined, sizeof(joined), "%s%s%s", parent, *parent ? "/" : "", target);
	}
	fd = ims_openat2(rootfd, joined, &how);
	if (fd < 0)
		return fd;
	/*
	 * rpm's rule (fsmOpenat(), since CVE-2021-35939): the link's owner must be root or
	 * the owner of what it leads to.  Like rpm, the link is looked at after its target
	 * was opened: a link changed in between was changed by its owner or by root.
	 */
	if (fstatat(parentfd, name, &lsb, AT_SYMLINK_NOFOLLOW) || fstat(fd, &sb)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISLNK(lsb.st_mode) || (lsb.st_uid != 0 && lsb.st_uid != sb.st_uid)) {
		close(fd);
		return -EPERM;
	}
	if (real) {
		err = real_below_root(rootfd, fd, real, real_size);
		if (err) {
			close(fd);
			return err;
		}
	}
	return fd;
}

/* Whether @dir has a "." or ".." component (which the walk below refuses). */
static bool has_dot_component(const char *dir)
{
	for (const char *c = dir; *c;) {
		size_t len = strcspn(c, "/");

		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return true;
		c += len;
		c += strspn(c, "/");
	}
	return false;
}

/* @dir without its leading, doubled and trailing slashes, into @real. */
static int copy_normalized(const char *dir, char *real, size_t size)
{
	size_t n = 0;

	for (const char *c = dir + strspn(dir, "/"); *c;) {
		size_t len = strcspn(c, "/");

		if (n + (n ? 1 : 0) + len >= size)
			return -ENAMETOOLONG;
		if (n)
			real[n++] = '/';
		memcpy(real + n, c, len);
		n += len;
		c += len;
		c += strspn(c, "/");
	}
	real[n] = 0;
	return 0;
}

int imastream_open_dir_as_rpm(int rootfd, const char *dir, int flags, char *real, size_t real_size)
{
	char buf[PATH_MAX], path[PATH_MAX] = "";
	int fd, oflags = (flags & ~O_NOFOLLOW) | O_DIRECTORY | O_CLOEXEC;

	if (rootfd < 0 || !dir)
		return -EINVAL;
	if ((size_t)snprintf(buf, sizeof(buf), "%s", dir) >= sizeof(buf))
		return -ENAMETOOLONG;
	if (has_dot_component(dir))
		return -EXDEV;
	/* Most directories have no symlink on the way: one openat2(). */
	fd = imastream_open_beneath(rootfd, dir, oflags);
	if (fd >= 0) {
		int err = real ? copy_normalized(dir, real, real_size) : 0;

		if (err) {
			close(fd);
			return err;
		}
		return fd;
	}
	if (fd != -ELOOP && fd != -ENOSYS && fd != -ENOTDIR && fd != -EAGAIN)
		return fd;
	fd = openat(rootfd, ".", oflags);
	if (fd < 0)
		return -errno;
	for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		struct stat st;
		int next, err;

		if (!strcmp(c, ".") || !strcmp(c, "..")) {
			close(fd);
			return -EXDEV;
		}
		next = openat(fd, c, oflags | O_NOFOLLOW);
		err = next < 0 ? -errno : 0;
		if (next >= 0 && real) {
			size_t len = strlen(path);

			if ((size_t)snprintf(path + len, sizeof(path) - len, "%s%s", len ? "/" : "",
					     c) >= sizeof(path) - len)
				err = -ENAMETOOLONG;
		} else if ((err == -ELOOP || err == -ENOTDIR) &&
			   !fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode)) {
			next = ims_follow_dir_link(rootfd, fd, c, oflags, path, sizeof(path));
			err = next < 0 ? next : 0;
			/* A link to nothing below the root is a link, not a missing directory. */
			if (err == -ENOENT || err == -ENOTDIR)
				err = -ELOOP;
		}
		close(fd);
		if (err) {
			if (next >= 0)
				close(next);
			return err;
		}
		fd = next;
	}
	if (real && (size_t)snprintf(real, real_size, "%s", path) >= real_size) {
		close(fd);
		return -ENAMETOOLONG;
	}
	return fd;
}
