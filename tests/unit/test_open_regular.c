// SPDX-License-Identifier: LGPL-2.1-or-later
/* ims_open_regular() never opens a FIFO or a device node: inotify sees no open of them, while it sees that of a regular file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/private.h"
#include "tests/unit/test.h"

static char dir[] = "/tmp/imastream-open.XXXXXX";

/* The names inotify saw opened below dir since the last call, "|a|b|" (no wait). */
static const char *opened(int ino)
{
	static char names[4096];
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	strcpy(names, "|");
	while ((n = read(ino, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			if ((ev->mask & IN_OPEN) && ev->len) {
				strncat(names, ev->name, sizeof(names) - strlen(names) - 2);
				strcat(names, "|");
			}
			p += sizeof(*ev) + ev->len;
		}
	}
	return names;
}

static bool saw(int ino, const char *name)
{
	char key[NAME_MAX + 3];

	snprintf(key, sizeof(key), "|%s|", name);
	return strstr(opened(ino), key) != NULL;
}

static void cleanup(void)
{
	static const char *const names[] = { "file", "fifo", "null", "link", "new", NULL };
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	for (int i = 0; dfd >= 0 && names[i]; i++)
		unlinkat(dfd, names[i], 0);
	if (dfd >= 0)
		close(dfd);
	rmdir(dir);
}

int main(void)
{
	int dfd, ino, fd;
	bool device;

	ASSERT(mkdtemp(dir));
	atexit(cleanup);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT(dfd >= 0);
	fd = openat(dfd, "file", O_WRONLY | O_CREAT | O_EXCL, 0644);
	ASSERT(fd >= 0 && write(fd, "data", 4) == 4);
	close(fd);
	ASSERT(!mkfifoat(dfd, "fifo", 0644));
	ASSERT(!symlinkat("file", dfd, "link"));
	/* A character device that acts on nothing: /dev/null's numbers (root only). */
	device = !mknodat(dfd, "null", S_IFCHR | 0644, makedev(1, 3));
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ASSERT(ino >= 0);
	ASSERT(inotify_add_watch(ino, dir, IN_OPEN) >= 0);

	/* An O_PATH open is no open for inotify (Linux 5.13 and later); else no proof here. */
	fd = openat(dfd, "fifo", O_PATH | O_CLOEXEC);
	ASSERT(fd >= 0);
	close(fd);
	if (saw(ino, "fifo")) {
		printf("SKIP: this kernel reports O_PATH opens to inotify\n");
		return TEST_SKIP;
	}

	/* The control: a regular file is opened, and inotify says so. */
	fd = ims_open_regular(dfd, "file", O_RDONLY | O_NOFOLLOW, 0);
	ASSERT(fd >= 0);
	ASSERT(fcntl(fd, F_GETFL) >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK));
	close(fd);
	ASSERT(saw(ino, "file"));

	/* A FIFO, for reading (no writer) and writing (no reader): refused, never opened. */
	ASSERT_EQ(ims_open_regular(dfd, "fifo", O_RDONLY | O_NOFOLLOW, 0), -IMS_ENOTREG);
	ASSERT_EQ(ims_open_regular(dfd, "fifo", O_WRONLY | O_APPEND | O_CREAT, 0644), -IMS_ENOTREG);
	ASSERT(!saw(ino, "fifo"));
	if (device) {
		ASSERT_EQ(ims_open_regular(dfd, "null", O_RDONLY | O_NOFOLLOW, 0), -IMS_ENOTREG);
		ASSERT_EQ(ims_open_regular(dfd, "null", O_WRONLY | O_CREAT | O_TRUNC, 0644),
			  -IMS_ENOTREG);
		ASSERT(!saw(ino, "null"));
	} else {
		printf("# no device node (mknod needs root): its half not run\n");
	}

	/* A symlink: refused with O_NOFOLLOW, and its target not opened; followed without. */
	ASSERT_EQ(ims_open_regular(dfd, "link", O_RDONLY | O_NOFOLLOW, 0), -ELOOP);
	ASSERT(!saw(ino, "file"));
	fd = ims_open_regular(dfd, "link", O_RDONLY, 0);
	ASSERT(fd >= 0);
	close(fd);

	/* O_CREAT makes a new file, keeps one there (O_APPEND, O_TRUNC as asked); O_EXCL
	 * refuses one there. */
	fd = ims_open_regular(dfd, "new", O_WRONLY | O_CREAT | O_APPEND, 0600);
	ASSERT(fd >= 0 && write(fd, "ab", 2) == 2);
	close(fd);
	fd = ims_open_regular(dfd, "new", O_WRONLY | O_CREAT | O_APPEND, 0600);
	ASSERT(fd >= 0 && write(fd, "cd", 2) == 2);
	close(fd);
	{
		struct stat st;

		ASSERT(!fstatat(dfd, "new", &st, 0));
		ASSERT_EQ(st.st_size, 4);
	}
	fd = ims_open_regular(dfd, "new", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT(fd >= 0);
	close(fd);
	ASSERT_EQ(ims_open_regular(dfd, "new", O_WRONLY | O_CREAT | O_EXCL, 0600), -EEXIST);
	ASSERT_EQ(ims_open_regular(dfd, "missing", O_RDONLY, 0), -ENOENT);
	close(ino);
	close(dfd);
	printf("ok: FIFOs%s refused before any open; regular files opened as asked\n",
	       device ? " and device nodes" : "");
	return 0;
}
