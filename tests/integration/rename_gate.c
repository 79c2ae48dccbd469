// SPDX-License-Identifier: LGPL-2.1-or-later
/* LD_PRELOAD for sign-package in the p11-kit test: after the first rename of a package into place, says "renamed PATH" on the FIFO $RENAME_GATE_FIFO and holds that rename and every later one until a byte arrives on $RENAME_GATE_GO, so the test acts with a known number of packages finished. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static int opened;

static int is_package(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && strcmp(path + n - 4, ".rpm") == 0;
}

/* Reports the first rename, then waits for the go byte; -1 if the test's FIFOs fail. */
static int report_and_wait(const char *path)
{
	const char *fifo = getenv("RENAME_GATE_FIFO");
	const char *go = getenv("RENAME_GATE_GO");
	char line[4096], byte;
	int fd, n;

	if (!fifo || !go)
		return 0;
	n = snprintf(line, sizeof(line), "renamed %s\n", path);
	fd = open(fifo, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, line, (size_t)n) != n)
		return -1;
	close(fd);
	fd = open(go, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, &byte, 1) != 1)
		return -1;
	close(fd);
	return 0;
}

int rename(const char *oldpath, const char *newpath)
{
	static int (*real)(const char *, const char *);
	int ret;

	if (!real)
		real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	if (!is_package(newpath))
		return real(oldpath, newpath);
	/* Held across the wait: a worker that reaches its rename meanwhile waits here. */
	pthread_mutex_lock(&gate);
	ret = real(oldpath, newpath);
	if (ret == 0 && !opened) {
		if (report_and_wait(newpath))
			_exit(99);
		opened = 1;
	}
	pthread_mutex_unlock(&gate);
	return ret;
}
