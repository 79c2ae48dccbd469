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

/* Component @name of @dirfd with no symlink followed; -ELOOP for one, as openat2 says it. */
static int open_component(int dirfd, const char *name, int flags, mode_t mode)
{
	struct stat st;
	int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	int err;

	if (fd >= 0)
		return fd;
	err = -errno;
	/* O_NOFOLLOW|O_DIRECTORY on a link says ENOTDIR, without O_DIRECTORY ELOOP. */
	if ((err == -ENOTDIR || err == -ELOOP) && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
	    S_ISLNK(st.st_mode))
		return -ELOOP;
	return err;
}

/*
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS: one component at a time, none of them followed
 * if it is a link.  Without links, ".." is the only way out, and it is refused outright
 * (-EXDEV) where openat2 would allow one that stays inside: no caller passes one.
 */
static int walk_beneath(int rootfd, const char *path, int flags, mode_t mode)
{
	char buf[PATH_MAX];
	char *save = NULL, *c, *next;
	int fd;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf))
		return -ENAMETOOLONG;
	fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	c = strtok_r(buf, "/", &save);
	while (c && !strcmp(c, "."))
		c = strtok_r(NULL, "/", &save);
	if (!c) {
		/* The root itself, opened with the caller's flags. */
		int root = openat(fd, ".", flags | O_CLOEXEC);

		close(fd);
		return root < 0 ? -errno : root;
	}
	for (; c; c = next) {
		int nfd;

		next = strtok_r(NULL, "/", &save);
		while (next && !strcmp(next, "."))
			next = strtok_r(NULL, "/", &save);
		if (!strcmp(c, "..")) {
			close(fd);
			return -EXDEV;
		}
		nfd = open_component(fd, c, next ? O_PATH | O_DIRECTORY : flags, mode);
		close(fd);
		if (nfd < 0)
			return nfd;
		fd = nfd;
	}
	return fd;
}

/*
 * RESOLVE_IN_ROOT: @path resolved as under a chroot to @rootfd (an absolute link target
 * starts again at the root, ".." stops there) into a path without links, @real.  The last
 * component is followed only with @follow_last.  A link swapped in afterwards makes the
 * final open fail (walk_beneath() follows none), never leads out.
 */
static int resolve_in_root(int rootfd, const char *path, bool follow_last, char *real, size_t size)
{
	char rest[2 * PATH_MAX], next[2 * PATH_MAX], target[PATH_MAX];
	size_t len = 0;
	int links = 0;

	if ((size_t)snprintf(rest, sizeof(rest), "%s", path) >= sizeof(rest))
		return -ENAMETOOLONG;
	real[0] = 0;
	for (char *r = rest;;) {
		struct stat st;
		size_t clen;
		char *c;
		bool last;
		int dfd;
		ssize_t n;

		r += strspn(r, "/");
		if (!*r)
			break;
		c = r;
		clen = strcspn(r, "/");
		r += clen;
		if (*r)
			*r++ = 0;
		last = !r[strspn(r, "/")];
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			char *slash = strrchr(real, '/');

			len = slash ? (size_t)(slash - real) : 0;
			real[len] = 0;
			continue;
		}
		dfd = walk_beneath(rootfd, len ? real : ".", O_PATH | O_DIRECTORY, 0);
		if (dfd < 0)
			return dfd;
		if ((!last || follow_last) && !fstatat(dfd, c, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISLNK(st.st_mode)) {
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
			if ((size_t)snprintf(next, sizeof(next), "%s/%s", target, r) >=
			    sizeof(next))
				return -ENAMETOOLONG;
			memcpy(rest, next, strlen(next) + 1);
			r = rest;
			continue;
		}
		close(dfd);
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

int ims_openat2(int rootfd, const char *path, const struct open_how *how)
{
	int flags = (int)how->flags;

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
	if (how->resolve & RESOLVE_IN_ROOT) {
		char real[PATH_MAX];
		int err = resolve_in_root(rootfd, path, !(flags & O_NOFOLLOW), real, sizeof(real));

		return err ? err : walk_beneath(rootfd, real, flags, (mode_t)how->mode);
	}
	return walk_beneath(rootfd, path, flags, (mode_t)how->mode);
}
