// SPDX-License-Identifier: LGPL-2.1-or-later
/* openat2(2) below a root, and its resolve rules done by hand where the kernel lacks it (before 5.6) or a sandbox filters it out. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "installed/private.h"

/* The kernel said ENOSYS once: it will say it again, so later opens go straight to the walk. */
static int openat2_missing;

/* Symlinks one resolution follows at most, as the kernel's MAXSYMLINKS. */
#define LINKS_MAX 40

/*
 * Component @name of @dirfd with no symlink followed.  One a slash follows (@in_path) is
 * -ELOOP when it is a link, as openat2 says it; the last one says what open(2) says.
 */
static int open_component(int dirfd, const char *name, int flags, mode_t mode, bool in_path)
{
	struct stat st;
	int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	int err;

	if (fd >= 0)
		return fd;
	err = -errno;
	/* O_NOFOLLOW|O_DIRECTORY on a link says ENOTDIR, without O_DIRECTORY ELOOP. */
	if (in_path && err == -ENOTDIR && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISLNK(st.st_mode))
		return -ELOOP;
	return err;
}

/* Components at most: a path of PATH_MAX bytes has no more than half as many. */
#define COMPONENTS_MAX (PATH_MAX / 2)

/* The directory @comps[0..@n) below @rootfd, each checked a directory and no link. */
static int open_dirs(int rootfd, char **comps, size_t n)
{
	int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	for (size_t i = 0; i < n; i++) {
		int nfd = open_component(fd, comps[i], O_PATH | O_DIRECTORY, 0, true);

		close(fd);
		if (nfd < 0)
			return nfd;
		fd = nfd;
	}
	return fd;
}

/*
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS: one component at a time, none of them followed
 * if it is a link, as the kernel walks: every component with a slash after it must be a
 * directory (a trailing slash included), ".." goes back to the directory the walk came
 * from and never above @rootfd (-EXDEV), an empty path is -ENOENT.
 */
static int walk_beneath(int rootfd, const char *path, int flags, mode_t mode)
{
	char buf[PATH_MAX], *comps[COMPONENTS_MAX];
	size_t len = strlen(path), ncomps = 0, depth = 0;
	bool trailing;
	int fd;

	if (!len)
		return -ENOENT;
	if (path[0] == '/')
		return -EXDEV;
	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	trailing = buf[len - 1] == '/';
	for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save))
		comps[ncomps++] = c;
	fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* comps[0..depth) is where fd is: the components walked, ".." and "." taken out. */
	for (size_t i = 0; i < ncomps; i++) {
		const char *c = comps[i];
		bool last = i + 1 == ncomps;
		int nfd;

		/* What the last name is, O_CREAT cannot make a directory of. */
		if (last && (flags & O_CREAT) &&
		    (trailing || !strcmp(c, ".") || !strcmp(c, ".."))) {
			close(fd);
			return -EISDIR;
		}
		if (!strcmp(c, ".") || !strcmp(c, "..")) {
			if (c[1] == '.') {
				if (!depth) {
					close(fd);
					return -EXDEV;
				}
				close(fd);
				fd = open_dirs(rootfd, comps, --depth);
				if (fd < 0)
					return fd;
			}
			if (last) {
				/* The directory walked to, opened with the caller's flags. */
				nfd = openat(fd, ".", flags | O_CLOEXEC, mode);
				if (nfd < 0)
					nfd = -errno;
				close(fd);
				return nfd;
			}
			continue;
		}
		nfd = open_component(
			fd, c, !last ? O_PATH | O_DIRECTORY : flags | (trailing ? O_DIRECTORY : 0),
			mode, !last || trailing);
		close(fd);
		if (nfd < 0)
			return nfd;
		fd = nfd;
		comps[depth++] = (char *)c;
	}
	/* O_PATH opens a link itself: only with O_NOFOLLOW does openat2 hand it back. */
	if ((flags & O_PATH) && !(flags & O_NOFOLLOW)) {
		struct stat st;

		if (fstat(fd, &st) || S_ISLNK(st.st_mode)) {
			close(fd);
			return -ELOOP;
		}
	}
	return fd;
}

/*
 * RESOLVE_IN_ROOT: @path resolved as under a chroot to @rootfd (an absolute link target
 * starts again at the root, ".." stops there) into a path without links, @real.  The last
 * component is followed only without O_NOFOLLOW in @flags, or when a slash follows it (which makes
 * @dir_only true: it must be a directory).  Every component a slash follows is checked a
 * directory as it is reached, so that a ".." after it goes back where the kernel would
 * (a missing one is -ENOENT, a file -ENOTDIR).  A link swapped in afterwards makes the
 * final open fail (walk_beneath() follows none), never leads out.
 */
static int resolve_in_root(int rootfd, const char *path, int flags, char *real, size_t size,
			   bool *dir_only)
{
	char rest[2 * PATH_MAX], next[2 * PATH_MAX], target[PATH_MAX];
	size_t len = 0;
	int links = 0;

	if ((size_t)snprintf(rest, sizeof(rest), "%s", path) >= sizeof(rest))
		return -ENAMETOOLONG;
	real[0] = 0;
	*dir_only = false;
	for (char *r = rest;;) {
		struct stat st;
		size_t clen;
		char *c;
		bool last, slash;
		int dfd;
		ssize_t n;

		r += strspn(r, "/");
		if (!*r)
			break;
		c = r;
		clen = strcspn(r, "/");
		r += clen;
		slash = *r == '/';
		if (*r)
			*r++ = 0;
		last = !r[strspn(r, "/")];
		*dir_only = last && slash;
		/* What the last name is, O_CREAT cannot make a directory of. */
		if (last && (flags & O_CREAT) && (slash || !strcmp(c, ".") || !strcmp(c, "..")))
			return -EISDIR;
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			char *up = strrchr(real, '/');

			len = up ? (size_t)(up - real) : 0;
			real[len] = 0;
			continue;
		}
		dfd = walk_beneath(rootfd, len ? real : ".", O_PATH | O_DIRECTORY, 0);
		if (dfd < 0)
			return dfd;
		if (fstatat(dfd, c, &st, AT_SYMLINK_NOFOLLOW)) {
			int err = -errno;

			/* A last component that is not there may be created. */
			if (err != -ENOENT || !last || slash) {
				close(dfd);
				return err;
			}
			st.st_mode = S_IFREG;
		}
		if ((!last || slash || !(flags & O_NOFOLLOW)) && S_ISLNK(st.st_mode)) {
			n = readlinkat(dfd, c, target, sizeof(target) - 1);
			close(dfd);
			if (n < 0)
				return -errno;
			if (++links > LINKS_MAX)
				return -ELOOP;
			target[n] = 0;
			if (target[0] == '/') {
				len = 0;
				real[0] = 0;
			}
			/* The slash after the link stays after its target. */
			if ((size_t)snprintf(next, sizeof(next), "%s%s%s", target, slash ? "/" : "",
					     r) >= sizeof(next))
				return -ENAMETOOLONG;
			memcpy(rest, next, strlen(next) + 1);
			r = rest;
			continue;
		}
		close(dfd);
		if ((!last || slash) && !S_ISDIR(st.st_mode))
			return -ENOTDIR;
		if (len + 1 + clen + 1 > size)
			return -ENAMETOOLONG;
		if (len)
			real[len++] = '/';
		memcpy(real + len, c, clen);
		len += clen;
		real[len] = 0;
	}
	return 0;
}

/* The walk alone, as ims_openat2() does it where the kernel has no openat2. */
int ims_openat2_walk(int rootfd, const char *path, const struct open_how *how)
{
	int flags = (int)how->flags;

	if (how->resolve & RESOLVE_IN_ROOT) {
		char real[PATH_MAX];
		bool dir_only;
		int err;

		if (!*path)
			return -ENOENT;
		err = resolve_in_root(rootfd, path, flags, real, sizeof(real), &dir_only);
		if (err)
			return err;
		return walk_beneath(rootfd, *real ? real : ".",
				    flags | (dir_only ? O_DIRECTORY | O_NOFOLLOW : 0),
				    (mode_t)how->mode);
	}
	return walk_beneath(rootfd, path, flags, (mode_t)how->mode);
}

int ims_openat2(int rootfd, const char *path, const struct open_how *how)
{
	if (!__atomic_load_n(&openat2_missing, __ATOMIC_RELAXED)) {
		int fd = (int)syscall(SYS_openat2, rootfd, path, how, sizeof(*how));

		if (fd >= 0)
			return fd;
		/* A sandbox's filter may say EPERM: the walk says what the open itself says. */
		if (errno != ENOSYS && errno != EPERM)
			return -errno;
		if (errno == ENOSYS)
			__atomic_store_n(&openat2_missing, 1, __ATOMIC_RELAXED);
	}
	return ims_openat2_walk(rootfd, path, how);
}
