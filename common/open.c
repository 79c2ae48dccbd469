// SPDX-License-Identifier: LGPL-2.1-or-later
/* The one way to open a regular file that someone else may have replaced: no blocking, no link followed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/private.h"

/* Clears O_NONBLOCK unless the caller asked for it.  Return: 0 or -errno. */
static int restore_blocking(int fd, int flags)
{
	int fl;

	if (flags & O_NONBLOCK)
		return 0;
	fl = fcntl(fd, F_GETFL);
	return fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ? -errno : 0;
}

int ims_open_nonblocking(int dirfd, const char *name, int flags, mode_t mode)
{
	int fd = openat(dirfd, name, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode), err;
	struct stat st;

	if (fd < 0) {
		err = -errno;
		/* A FIFO no one reads: refused as what it is, not as ENXIO. */
		if (err == -ENXIO && !fstatat(dirfd, name, &st, 0) && S_ISFIFO(st.st_mode))
			err = -IMS_ENOTREG;
		return err;
	}
	err = restore_blocking(fd, flags);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Opens for real what @pfd (O_PATH, checked a regular file @st) refers to: through
 * /proc/self/fd, the same inode whatever happens to @name; without /proc (a chroot),
 * by @name again, refused if it is no longer that inode.
 */
static int reopen_checked(int pfd, int dirfd, const char *name, int flags, const struct stat *st)
{
	char proc[64];
	int fd, open_flags = (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_NONBLOCK | O_NOCTTY |
			     O_CLOEXEC;
	struct stat now;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, open_flags);
	if (fd >= 0 || errno != ENOENT)
		return fd < 0 ? -errno : fd;
	fd = openat(dirfd, name, open_flags | (flags & O_NOFOLLOW));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &now) || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		return -EAGAIN;
	}
	return fd;
}

/* What @name is, from an O_PATH fd (which opens nothing); -errno, or the fd's type. */
static int open_path(int dirfd, const char *name, int flags, struct stat *st)
{
	int pfd = openat(dirfd, name, O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW)), err;

	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st)) {
		err = -errno;
		close(pfd);
		return err;
	}
	if (!S_ISREG(st->st_mode)) {
		close(pfd);
		return S_ISLNK(st->st_mode) ? -ELOOP : -IMS_ENOTREG;
	}
	return pfd;
}

int ims_open_regular(int dirfd, const char *name, int flags, mode_t mode)
{
	const int create = O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_EXCL;
	struct stat st;
	int fd, pfd, err;

	/*
	 * The type first, on an O_PATH fd: a device may act on open(), a FIFO would block
	 * it until a peer comes.  A name to create that is not there yet (or O_EXCL) can
	 * only become a new regular file: one that came in between is refused, EEXIST.
	 */
	pfd = (flags & O_CREAT) && (flags & O_EXCL) ? -ENOENT : open_path(dirfd, name, flags, &st);
	if (pfd == -ENOENT && (flags & O_CREAT)) {
		fd = openat(dirfd, name, flags | create, mode);
		if (fd < 0)
			return -errno;
	} else if (pfd < 0) {
		return pfd;
	} else {
		fd = reopen_checked(pfd, dirfd, name, flags, &st);
		close(pfd);
		if (fd < 0)
			return fd;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -IMS_ENOTREG;
		goto fail;
	}
	/* Regular files ignore O_NONBLOCK, but the caller's later fcntl()s should not see it. */
	err = restore_blocking(fd, flags);
	if (err)
		goto fail;
	return fd;
fail:
	close(fd);
	return err;
}

const char *ims_open_strerror(int err)
{
	if (err == -IMS_ENOTREG)
		return "not a regular file (refused)";
	if (err == -ELOOP)
		return "a symlink (never followed)";
	return strerror(-err);
}
