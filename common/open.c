// SPDX-License-Identifier: LGPL-2.1-or-later
/* The one way to open a regular file that someone else may have replaced: no blocking, no link followed. */
#include <errno.h>
#include <fcntl.h>
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

int ims_open_regular(int dirfd, const char *name, int flags, mode_t mode)
{
	struct stat st;
	int fd, err;

	/* A FIFO would block open() until a peer comes, a device may act on open: neither may. */
	fd = openat(dirfd, name, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
	if (fd < 0) {
		err = -errno;
		/* A FIFO opened for writing with no reader says ENXIO: name it for what it is. */
		if ((err == -ENXIO || err == -ENODEV || err == -EWOULDBLOCK) &&
		    !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode))
			err = -IMS_ENOTREG;
		return err;
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
