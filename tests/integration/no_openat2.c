// SPDX-License-Identifier: LGPL-2.1-or-later
/* LD_PRELOAD: openat2(2) fails as on a kernel before 5.6 (ENOSYS), or as under a sandbox's filter with $NO_OPENAT2_ERRNO=EPERM; every other syscall() goes through. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

long syscall(long number, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;

	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_openat2) {
		const char *e = getenv("NO_OPENAT2_ERRNO");

		errno = e && !strcmp(e, "EPERM") ? EPERM : ENOSYS;
		return -1;
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
