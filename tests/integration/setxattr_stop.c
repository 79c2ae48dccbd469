// SPDX-License-Identifier: LGPL-2.1-or-later
/* LD_PRELOAD for the pending-labels test: logs every xattr write ("INODE NAME" to $SETXATTR_LOG) and, with $SETXATTR_STOP_AFTER=N, kills the process with SIGKILL at the write after the N-th, so an apply is interrupted at a known point without any timing. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static unsigned long writes;

/* Before a write: the kill, when its turn has come. */
static void maybe_stop(void)
{
	const char *n = getenv("SETXATTR_STOP_AFTER");

	if (n && writes >= strtoul(n, NULL, 10))
		raise(SIGKILL);
}

/* After a successful write: one line, written whole (O_APPEND), so a kill loses none. */
static void logged(const struct stat *st, const char *name)
{
	const char *log = getenv("SETXATTR_LOG");
	char line[512];
	int fd, len;

	writes++;
	if (!log)
		return;
	len = snprintf(line, sizeof(line), "%lu:%lu %s\n", (unsigned long)st->st_dev,
		       (unsigned long)st->st_ino, name);
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (write(fd, line, (size_t)len) != len)
			abort();
		close(fd);
	}
}

int fsetxattr(int fd, const char *name, const void *value, size_t size, int flags)
{
	int (*real)(int, const char *, const void *, size_t, int) = dlsym(RTLD_NEXT, "fsetxattr");
	struct stat st;
	int ret;

	maybe_stop();
	ret = real(fd, name, value, size, flags);
	if (ret == 0 && fstat(fd, &st) == 0)
		logged(&st, name);
	return ret;
}

int lsetxattr(const char *path, const char *name, const void *value, size_t size, int flags)
{
	int (*real)(const char *, const char *, const void *, size_t, int) = dlsym(RTLD_NEXT,
										   "lsetxattr");
	struct stat st;
	int ret;

	maybe_stop();
	ret = real(path, name, value, size, flags);
	if (ret == 0 && lstat(path, &st) == 0)
		logged(&st, name);
	return ret;
}

int setxattr(const char *path, const char *name, const void *value, size_t size, int flags)
{
	int (*real)(const char *, const char *, const void *, size_t, int) = dlsym(RTLD_NEXT,
										   "setxattr");
	struct stat st;
	int ret;

	maybe_stop();
	ret = real(path, name, value, size, flags);
	if (ret == 0 && stat(path, &st) == 0)
		logged(&st, name);
	return ret;
}
