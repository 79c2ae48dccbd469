// SPDX-License-Identifier: LGPL-2.1-or-later
/* LD_PRELOAD that refuses, as a kernel with EVM on refuses, any change or removal of a security xattr of a file whose security.evm is a portable signature (type 5) its keys verify: EPERM, and a line "PATH NAME" (or "fd N NAME") in $EVM_IMMUTABLE_LOG; writing the value the file already holds is allowed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#define EVM_XATTR_PORTABLE_DIGSIG 5

/* The file's current value of @name: its length, or -1 (reads never follow a link). */
static ssize_t current(int fd, const char *path, const char *name, char *buf, size_t size)
{
	return fd >= 0 ? fgetxattr(fd, name, buf, size) : lgetxattr(path, name, buf, size);
}

/* Opened before rpm enters its chroot, where the log's path would name another file. */
static int log_fd = -1;

__attribute__((constructor)) static void open_log(void)
{
	const char *log = getenv("EVM_IMMUTABLE_LOG");

	if (log)
		log_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

static void logged(int fd, const char *path, const char *name)
{
	char line[4352];
	int len;

	if (log_fd < 0)
		return;
	len = fd >= 0 ? snprintf(line, sizeof(line), "fd %d %s\n", fd, name) :
			snprintf(line, sizeof(line), "%s %s\n", path, name);
	if (len > 0 && write(log_fd, line, (size_t)len) != len)
		abort();
}

/*
 * Whether the kernel would refuse this write (@value NULL: a removal): a security xattr of
 * a file under a portable signature, unless the value is the one it holds.
 */
static int refused(int fd, const char *path, const char *name, const void *value, size_t size)
{
	char evm[4096], old[8192];
	ssize_t n;

	if (strncmp(name, "security.", 9) != 0)
		return 0;
	n = current(fd, path, "security.evm", evm, sizeof(evm));
	if (n < 1 || evm[0] != EVM_XATTR_PORTABLE_DIGSIG)
		return 0;
	n = current(fd, path, name, old, sizeof(old));
	if (value && n >= 0 && (size_t)n == size && memcmp(old, value, size) == 0)
		return 0;
	logged(fd, path, name);
	errno = EPERM;
	return 1;
}

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, name))

int fsetxattr(int fd, const char *name, const void *value, size_t size, int flags)
{
	if (refused(fd, NULL, name, value, size))
		return -1;
	return REAL("fsetxattr", int (*)(int, const char *, const void *, size_t, int))(
		fd, name, value, size, flags);
}

int lsetxattr(const char *path, const char *name, const void *value, size_t size, int flags)
{
	if (refused(-1, path, name, value, size))
		return -1;
	return REAL("lsetxattr", int (*)(const char *, const char *, const void *, size_t, int))(
		path, name, value, size, flags);
}

int setxattr(const char *path, const char *name, const void *value, size_t size, int flags)
{
	/* A path that is a symlink is followed here, as setxattr does: close enough for tests. */
	if (refused(-1, path, name, value, size))
		return -1;
	return REAL("setxattr", int (*)(const char *, const char *, const void *, size_t, int))(
		path, name, value, size, flags);
}

int fremovexattr(int fd, const char *name)
{
	if (refused(fd, NULL, name, NULL, 0))
		return -1;
	return REAL("fremovexattr", int (*)(int, const char *))(fd, name);
}

int lremovexattr(const char *path, const char *name)
{
	if (refused(-1, path, name, NULL, 0))
		return -1;
	return REAL("lremovexattr", int (*)(const char *, const char *))(path, name);
}

int removexattr(const char *path, const char *name)
{
	if (refused(-1, path, name, NULL, 0))
		return -1;
	return REAL("removexattr", int (*)(const char *, const char *))(path, name);
}
