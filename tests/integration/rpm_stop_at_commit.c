// SPDX-License-Identifier: LGPL-2.1-or-later
/* LD_PRELOAD for rpm in the orphan tests: at rpm's first rename of a temp file (NAME;XXXXXXXX) into place, says "stopped PID NAME" on the FIFO $RPM_STOP_FIFO and waits to be killed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fifo_fd = -1;

/* Opened at load, before rpm chroots into its root (read-write: a FIFO open never blocks so). */
__attribute__((constructor)) static void open_fifo(void)
{
	const char *fifo = getenv("RPM_STOP_FIFO");

	if (fifo)
		fifo_fd = open(fifo, O_RDWR | O_CLOEXEC);
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	static int (*real)(int, const char *, int, const char *);

	if (fifo_fd >= 0 && strchr(oldpath, ';')) {
		char line[512];
		int n = snprintf(line, sizeof(line), "stopped %ld %s\n", (long)getpid(), oldpath);

		if (write(fifo_fd, line, (size_t)n) != n)
			_exit(99);
		/* Every file of the package is written and labelled under its temp name: the
		 * test kills rpm here, before any of them has its final name. */
		for (;;)
			pause();
	}
	if (!real)
		real = (int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
	return real(olddirfd, oldpath, newdirfd, newpath);
}
