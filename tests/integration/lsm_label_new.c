// SPDX-License-Identifier: LGPL-2.1-or-later
/* LD_PRELOAD that does what SELinux or Smack does to every inode a process creates: gives it a label (security.selinux = $LSM_LABEL_NEW) before the creator sees it, so the EVM input of a new file holds a value its creator never set. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

/* The label, NUL included, as the kernel stores it; a failure must not go unseen. */
static int labelled(int fd, int flags)
{
	const char *label = getenv("LSM_LABEL_NEW");

	if (fd >= 0 && (flags & O_CREAT) && label &&
	    fsetxattr(fd, "security.selinux", label, strlen(label) + 1, 0) != 0)
		abort();
	return fd;
}

#define WRAP_OPENAT(fn)                                                           \
	int fn(int dirfd, const char *path, int flags, ...)                       \
	{                                                                         \
		int (*real)(int, const char *, int, ...) = dlsym(RTLD_NEXT, #fn); \
		mode_t mode = 0;                                                  \
		va_list ap;                                                       \
                                                                                  \
		if (flags & (O_CREAT | __O_TMPFILE)) {                            \
			va_start(ap, flags);                                      \
			mode = va_arg(ap, mode_t);                                \
			va_end(ap);                                               \
		}                                                                 \
		return labelled(real(dirfd, path, flags, mode), flags);           \
	}

#define WRAP_OPEN(fn)                                                        \
	int fn(const char *path, int flags, ...)                             \
	{                                                                    \
		int (*real)(const char *, int, ...) = dlsym(RTLD_NEXT, #fn); \
		mode_t mode = 0;                                             \
		va_list ap;                                                  \
                                                                             \
		if (flags & (O_CREAT | __O_TMPFILE)) {                       \
			va_start(ap, flags);                                 \
			mode = va_arg(ap, mode_t);                           \
			va_end(ap);                                          \
		}                                                            \
		return labelled(real(path, flags, mode), flags);             \
	}

WRAP_OPENAT(openat)
WRAP_OPENAT(openat64)
WRAP_OPEN(open)
WRAP_OPEN(open64)
