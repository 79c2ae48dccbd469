// SPDX-License-Identifier: LGPL-2.1-or-later
/* Package paths made relative to the root, refusing anything that could leave it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "installed/private.h"

int ims_path_relative(const char *path, const char **rel_ret, const char **why_ret)
{
	const char *p = path, *comp;
	unsigned int depth = 0;
	size_t len;

	if (!path || !*path) {
		*why_ret = "empty path";
		return -EINVAL;
	}
	if (strlen(path) >= PATH_MAX) {
		*why_ret = "path longer than PATH_MAX";
		return -EINVAL;
	}
	/* Package paths are absolute by convention; they always mean "below the root". */
	while (*p == '/')
		p++;
	if (!*p) {
		*why_ret = "path names the root itself";
		return -EINVAL;
	}
	*rel_ret = p;
	for (comp = p; ; comp += len + 1) {
		/* Each level may hold a directory fd while an entry is created. */
		if (++depth > IMS_PATH_MAX_DEPTH) {
			*why_ret = "more than " IMS_STR(IMS_PATH_MAX_DEPTH) " path components";
			return -EINVAL;
		}
		len = strcspn(comp, "/");
		if (len == 0) {
			*why_ret = comp[0] ? "empty path component" : "trailing slash";
			return -EINVAL;
		}
		if (len > NAME_MAX) {
			*why_ret = "path component longer than NAME_MAX";
			return -EINVAL;
		}
		if ((len == 1 && comp[0] == '.') || (len == 2 && comp[0] == '.' && comp[1] == '.')) {
			*why_ret = "'.' or '..' path component (path traversal)";
			return -EINVAL;
		}
		if (!comp[len])
			break;
	}
	return 0;
}

int ims_open_dir_below(int rootfd, const char *rel, bool create, unsigned int *made)
{
	char buf[PATH_MAX];
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf)) {
		if (fd >= 0)
			close(fd);
		return -ENAMETOOLONG;
	}
	for (char *save = NULL, *c = strtok_r(buf, "/", &save); c && fd >= 0;
	     c = strtok_r(NULL, "/", &save)) {
		int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, c, 0755) && errno != EEXIST) {
				next = -1;
			} else {
				if (made)
					(*made)++;
				next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			}
		}
		{
			int err = errno;

			close(fd);
			errno = err;
		}
		fd = next;
	}
	return fd < 0 ? -errno : fd;
}
