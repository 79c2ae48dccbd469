// SPDX-License-Identifier: LGPL-2.1-or-later
/* LD_PRELOAD for rpm in the orphan and live tests: lets $RPM_STOP_AFTER renames of temp files (NAME;XXXXXXXX) into place through (default 0), then at the next one says "stopped PID NAME" on the FIFO $RPM_STOP_FIFO and waits to be killed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fifo_fd = -1;
static long renames_left;

/* Opened at load, before rpm chroots into its root (read-write: a FIFO open never blocks so). */
__attribute__((constructor)) static void open_fifo(void)
{
	const char *fifo = getenv("RPM_STOP_FIFO");
	const char *after = getenv("RPM_STOP_AFTER");

	if (fifo)
		fifo_fd = open(fifo, O_RDWR | O_CLOEXEC);
	if (after)
		renames_left = strtol(after, NULL, 10);
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	static int (*real)(int, const char *, int, const char *);

	if (fifo_fd >= 0 && strchr(oldpath, ';') && renames_left-- <= 0) {
		char line[512];
		int n = snprintf(line, sizeof(line), "stopped %ld %s\n", (long)getpid(), oldpath);

		if (write(fifo_fd, line, (size_t)n) != n)
			_exit(99);
		/* The files before this one are at their final names, this one and those
		 * after it still under their temp names: the test kills rpm here. */
		for (;;)
			pause();
	}
	if (!real)
		real = (int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
	return real(olddirfd, oldpath, newdirfd, newpath);
}
