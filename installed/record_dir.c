// SPDX-License-Identifier: LGPL-2.1-or-later
/* The install record's directory below a root: opened without following a symlink, and each package's file in it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imastream/rpmdb.h"
#include "installed/record_format.h"
#include "installed/record_owner.h"

/* Opens (creating when @create) ROOT/var/lib/imastream/packages, never following a symlink. */
int ims_record_open_dir(int rootfd, bool create)
{
	char buf[] = RECORD_DIR;
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (char *save = NULL, *c = strtok_r(buf, "/", &save); c && fd >= 0;
	     c = strtok_r(NULL, "/", &save)) {
		int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, c, 0755) && errno != EEXIST) {
				int err = errno;

				close(fd);
				errno = err;
				return -1;
			}
			next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		{
			int err = errno;

			close(fd);
			errno = err;
		}
		fd = next;
	}
	return fd;
}

/* The record's file name for package @name: "NAME.record", '/' and '%' encoded. */
void ims_record_file_name(const char *name, char *buf, size_t size)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p && o + 4 < size; p++) {
		if (*p > ' ' && *p < 0x7f && *p != '%' && *p != '/' && !(o == 0 && *p == '.')) {
			buf[o++] = (char)*p;
		} else {
			snprintf(buf + o, size - o, "%%%02X", *p);
			o += 3;
		}
	}
	snprintf(buf + o, size - o, "%s", RECORD_SUFFIX);
}

int ims_record_of(int rootfd, const char *name, char *path, size_t size)
{
	char fname[NAME_MAX + 1];
	struct stat sb;
	int dfd, ret;

	ims_record_file_name(name, fname, sizeof(fname));
	snprintf(path, size, "%s/%s", RECORD_DIR, fname);
	dfd = imastream_open_beneath(rootfd, RECORD_DIR, O_RDONLY | O_DIRECTORY);
	if (dfd == -ENOENT)
		return 0;
	if (dfd < 0)
		return dfd;
	ret = !fstatat(dfd, fname, &sb, AT_SYMLINK_NOFOLLOW) ? 1 : errno == ENOENT ? 0 : -errno;
	close(dfd);
	return ret;
}

int ims_record_forget(int rootfd, const char *name)
{
	char fname[NAME_MAX + 1];
	int dfd, ret;

	ims_record_file_name(name, fname, sizeof(fname));
	dfd = imastream_open_beneath(rootfd, RECORD_DIR, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return dfd == -ENOENT ? 0 : dfd;
	ret = unlinkat(dfd, fname, 0) && errno != ENOENT ? -errno : 0;
	if (!ret)
		fsync(dfd);
	close(dfd);
	return ret;
}
