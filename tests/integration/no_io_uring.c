// SPDX-License-Identifier: LGPL-2.1-or-later
/* LD_PRELOAD for test_hash_no_io_uring.sh: io_uring_setup(2) fails with ENOSYS, as on a kernel or under a seccomp filter without io_uring; creates $NO_IO_URING_MARK when it refuses. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	if (nr == SYS_io_uring_setup) {
		const char *mark = getenv("NO_IO_URING_MARK");

		if (mark) {
			int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

			if (fd >= 0)
				close(fd);
		}
		errno = ENOSYS;
		return -1;
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
