// SPDX-License-Identifier: LGPL-2.1-or-later
/* The walk that stands in for openat2(2) gives what the kernel gives, case by case of one table: the kernel checks the table, the table checks the walk. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "installed/private.h"
#include "tests/unit/test.h"

#define BENEATH (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
#define IN_ROOT (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
#define NOFOLLOW (O_RDONLY | O_NOFOLLOW)
#define PATHONLY (O_PATH | O_NOFOLLOW)

/* @want: the object below the root the open must reach (never followed), or NULL and @err. */
struct open_case {
	const char *path;
	unsigned long long resolve;
	int flags;
	const char *want;
	int err;
};

static const struct open_case cases[] = {
	/* Below the root, no link followed (imastream_open_beneath()). */
	{ "x", BENEATH, NOFOLLOW, "x", 0 },
	{ "", BENEATH, NOFOLLOW, NULL, ENOENT },
	{ ".", BENEATH, NOFOLLOW, ".", 0 },
	{ "dir/../x", BENEATH, NOFOLLOW, "x", 0 },
	{ "dir/sub/../f", BENEATH, NOFOLLOW, "dir/f", 0 },
	{ "dir//f", BENEATH, NOFOLLOW, "dir/f", 0 },
	{ "dir/..", BENEATH, NOFOLLOW, ".", 0 },
	{ "dir/.", BENEATH, NOFOLLOW, "dir", 0 },
	{ "dir/", BENEATH, NOFOLLOW, "dir", 0 },
	{ "nonexist/../x", BENEATH, NOFOLLOW, NULL, ENOENT },
	{ "x/../x", BENEATH, NOFOLLOW, NULL, ENOTDIR },
	{ "x/", BENEATH, NOFOLLOW, NULL, ENOTDIR },
	{ "x/.", BENEATH, NOFOLLOW, NULL, ENOTDIR },
	{ "x/", BENEATH, PATHONLY, NULL, ENOTDIR },
	{ "x", BENEATH, NOFOLLOW | O_DIRECTORY, NULL, ENOTDIR },
	{ "x/", BENEATH, O_WRONLY | O_CREAT | O_NOFOLLOW, NULL, EISDIR },
	{ "nonexist/", BENEATH, O_WRONLY | O_CREAT | O_NOFOLLOW, NULL, EISDIR },
	{ "nonexist/y/", BENEATH, O_WRONLY | O_CREAT | O_NOFOLLOW, NULL, ENOENT },
	{ ".", BENEATH, O_WRONLY | O_CREAT | O_NOFOLLOW, NULL, EISDIR },
	{ "../x", BENEATH, NOFOLLOW, NULL, EXDEV },
	{ "dir/../../x", BENEATH, NOFOLLOW, NULL, EXDEV },
	{ "/x", BENEATH, NOFOLLOW, NULL, EXDEV },
	{ "link_dir/f", BENEATH, NOFOLLOW, NULL, ELOOP },
	{ "link_dir/", BENEATH, NOFOLLOW, NULL, ELOOP },
	{ "link_file", BENEATH, NOFOLLOW, NULL, ELOOP },
	{ "link_file", BENEATH, PATHONLY, "link_file", 0 },
	{ "link_file", BENEATH, O_PATH, NULL, ELOOP },
	{ "link_dir", BENEATH, NOFOLLOW | O_DIRECTORY, NULL, ENOTDIR },
	/* As under a chroot to the root (directory links, rpm's rule). */
	{ "", IN_ROOT, O_RDONLY, NULL, ENOENT },
	{ "/", IN_ROOT, O_RDONLY, ".", 0 },
	{ "/x", IN_ROOT, O_RDONLY, "x", 0 },
	{ "../x", IN_ROOT, O_RDONLY, "x", 0 },
	{ "dir/../../../x", IN_ROOT, O_RDONLY, "x", 0 },
	{ "dir/sub/../../x", IN_ROOT, O_RDONLY, "x", 0 },
	{ "nonexist/../x", IN_ROOT, O_RDONLY, NULL, ENOENT },
	{ "x/../x", IN_ROOT, O_RDONLY, NULL, ENOTDIR },
	{ "dir/f/..", IN_ROOT, O_RDONLY, NULL, ENOTDIR },
	{ "x/", IN_ROOT, O_RDONLY, NULL, ENOTDIR },
	{ "x/.", IN_ROOT, O_RDONLY, NULL, ENOTDIR },
	{ "nonexist/", IN_ROOT, O_WRONLY | O_CREAT, NULL, EISDIR },
	{ "nonexist/y/", IN_ROOT, O_WRONLY | O_CREAT, NULL, ENOENT },
	{ "x/", IN_ROOT, O_WRONLY | O_CREAT, NULL, EISDIR },
	{ "link_dir/", IN_ROOT, O_WRONLY | O_CREAT, NULL, EISDIR },
	{ "link_dir/f", IN_ROOT, O_RDONLY, "dir/f", 0 },
	{ "abs_link/f", IN_ROOT, O_RDONLY, "dir/f", 0 },
	{ "up_link/f", IN_ROOT, O_RDONLY, "dir/f", 0 },
	{ "link_dir/..", IN_ROOT, O_RDONLY, ".", 0 },
	{ "link_dir/.", IN_ROOT, O_RDONLY, "dir", 0 },
	{ "link_dir/", IN_ROOT, NOFOLLOW, "dir", 0 },
	{ "link_dir", IN_ROOT, O_RDONLY | O_DIRECTORY, "dir", 0 },
	{ "link_file", IN_ROOT, O_RDONLY, "x", 0 },
	{ "link_file", IN_ROOT, NOFOLLOW, NULL, ELOOP },
	{ "link_file", IN_ROOT, PATHONLY, "link_file", 0 },
	{ "link_file/", IN_ROOT, O_RDONLY, NULL, ENOTDIR },
	{ "link_file", IN_ROOT, O_RDONLY | O_DIRECTORY, NULL, ENOTDIR },
	{ "dangling", IN_ROOT, O_RDONLY, NULL, ENOENT },
	{ "dangling/x", IN_ROOT, O_RDONLY, NULL, ENOENT },
	{ "loop", IN_ROOT, O_RDONLY, NULL, ELOOP },
	{ "loop/x", IN_ROOT, O_RDONLY, NULL, ELOOP },
};

static char root[] = "/tmp/imastream-openat2.XXXXXX";

static void cleanup(void)
{
	static const char *const files[] = { "dir/f",	 "x",	    "link_dir", "link_file",
					     "abs_link", "up_link", "dangling", "loop",
					     "nonexist", NULL };
	int fd = open(root, O_RDONLY | O_DIRECTORY);

	for (int i = 0; fd >= 0 && files[i]; i++)
		unlinkat(fd, files[i], 0);
	if (fd >= 0) {
		unlinkat(fd, "dir/sub", AT_REMOVEDIR);
		unlinkat(fd, "dir", AT_REMOVEDIR);
		close(fd);
	}
	rmdir(root);
}

/* What an open gave, for a message: "ENOTDIR" or the object it reached. */
static const char *what(int rootfd, int ret, char *buf, size_t size)
{
	static const char *const objects[] = { ".", "x", "dir", "dir/f", "dir/sub", "link_file" };
	struct stat a, b;

	if (ret < 0) {
		snprintf(buf, size, "-%s", strerror(-ret));
		return buf;
	}
	snprintf(buf, size, "an fd of something else");
	if (fstat(ret, &a))
		return buf;
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++)
		if (!fstatat(rootfd, objects[i], &b, AT_SYMLINK_NOFOLLOW) && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			snprintf(buf, size, "%s", objects[i]);
	return buf;
}

/* Whether @ret (an fd, closed here, or -errno) is what @c expects. */
static bool as_expected(int rootfd, const struct open_case *c, int ret, char *got, size_t size)
{
	what(rootfd, ret, got, size);
	if (ret >= 0)
		close(ret);
	if (!c->want)
		return ret == -c->err;
	return ret >= 0 && !strcmp(got, c->want);
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]);
	unsigned int bad = 0;
	bool kernel = true;
	int rootfd, fd;

	ASSERT(mkdtemp(root));
	atexit(cleanup);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ASSERT(rootfd >= 0);
	ASSERT(!mkdirat(rootfd, "dir", 0755) && !mkdirat(rootfd, "dir/sub", 0755));
	for (int i = 0; i < 2; i++) {
		fd = openat(rootfd, i ? "dir/f" : "x", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			    0644);
		ASSERT(fd >= 0);
		close(fd);
	}
	ASSERT(!symlinkat("dir", rootfd, "link_dir") && !symlinkat("x", rootfd, "link_file") &&
	       !symlinkat("/dir", rootfd, "abs_link") &&
	       !symlinkat("../../dir", rootfd, "up_link") &&
	       !symlinkat("nothere", rootfd, "dangling") && !symlinkat("loop", rootfd, "loop"));

	for (size_t i = 0; i < n; i++) {
		const struct open_case *c = &cases[i];
		struct open_how how = { .flags = (unsigned long long)(c->flags | O_CLOEXEC),
					.resolve = c->resolve,
					.mode = (c->flags & O_CREAT) ? 0644 : 0 };
		const char *mode = c->resolve & RESOLVE_IN_ROOT ? "in root" : "beneath";
		char got[64];

		if (kernel) {
			int k = (int)syscall(SYS_openat2, rootfd, c->path, &how, sizeof(how));

			if (k < 0 && (errno == ENOSYS || errno == EPERM)) {
				printf("# no openat2 here (%s): the table is not checked against "
				       "the kernel\n",
				       strerror(errno));
				kernel = false;
			} else if (!as_expected(rootfd, c, k < 0 ? -errno : k, got, sizeof(got))) {
				fprintf(stderr,
					"table wrong: '%s' %s, flags 0%o: the kernel gives %s\n",
					c->path, mode, c->flags, got);
				bad++;
			}
		}
		if (!as_expected(rootfd, c, ims_openat2_walk(rootfd, c->path, &how), got,
				 sizeof(got))) {
			fprintf(stderr, "walk differs: '%s' %s, flags 0%o: %s, openat2 %s%s\n",
				c->path, mode, c->flags, got, c->want ? "opens " : "-",
				c->want ? c->want : strerror(c->err));
			bad++;
		}
	}
	close(rootfd);
	if (bad) {
		fprintf(stderr, "FAIL: %u of %zu cases\n", bad, n);
		return 1;
	}
	printf("ok: %zu cases, the walk as openat2%s\n", n,
	       kernel ? " (the kernel agrees with every one)" : "");
	return 0;
}
