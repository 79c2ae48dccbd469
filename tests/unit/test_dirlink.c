// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream_open_dir_as_rpm(): directory symlinks followed where rpm follows them (owner rule, resolved in the root), refused elsewhere. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imastream/rpmdb.h"
#include "tests/unit/test.h"

static char base[1024], root[1100];

static void mk(const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	ASSERT(mkdir(p, 0755) == 0);
}

static void ln(const char *target, const char *rel, uid_t owner)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	ASSERT(symlink(target, p) == 0);
	if (owner)
		ASSERT(lchown(p, owner, owner) == 0);
}

/* Opens @dir; returns the fd's result and the real path in @real. */
static int open_dir(int rootfd, const char *dir, char *real)
{
	int fd = imastream_open_dir_as_rpm(rootfd, dir, O_RDONLY, real, PATH_MAX);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? fd : 0;
}

int main(void)
{
	char real[PATH_MAX], outside[1200], p[2400], cmd[2500];
	bool as_root = geteuid() == 0;
	int rootfd;

	snprintf(base, sizeof(base), "%.900s/imastream-dirlink.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT(mkdtemp(base));
	snprintf(root, sizeof(root), "%s/root", base);
	ASSERT(mkdir(root, 0755) == 0);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	ASSERT(mkdir(outside, 0755) == 0);
	mk("usr");
	mk("usr/bin");
	mk("usr/lib");
	mk("usr/lib/deep");
	ln("usr/bin", "bin", 0);		  /* merged /usr: relative */
	ln("/usr/lib", "lib", 0);		  /* absolute: below the root, as under chroot */
	ln("../../../../../usr/lib", "lib64", 0); /* ".." stops at the root */
	ln(outside, "out", 0);			  /* absolute path of a host directory */
	ln("nowhere", "dangling", 0);
	ln("../lib/deep", "usr/deeplink", 0); /* relative to its own directory */
	rootfd = open(root, O_RDONLY | O_DIRECTORY);
	ASSERT(rootfd >= 0);

	ASSERT_EQ(open_dir(rootfd, "/usr/bin", real), 0);
	ASSERT(!strcmp(real, "usr/bin"));
	ASSERT_EQ(open_dir(rootfd, "//usr//bin/", real), 0);
	ASSERT(!strcmp(real, "usr/bin"));
	ASSERT_EQ(open_dir(rootfd, "/", real), 0);
	ASSERT(!strcmp(real, ""));
	ASSERT_EQ(open_dir(rootfd, "/bin", real), 0);
	ASSERT(!strcmp(real, "usr/bin"));
	ASSERT_EQ(open_dir(rootfd, "/lib/deep", real), 0);
	ASSERT(!strcmp(real, "usr/lib/deep"));
	ASSERT_EQ(open_dir(rootfd, "/lib64", real), 0);
	ASSERT(!strcmp(real, "usr/lib"));
	ASSERT_EQ(open_dir(rootfd, "/usr/deeplink", real), 0);
	ASSERT(!strcmp(real, "usr/lib/deep"));
	/* A host directory's path means the same path below the root: not there. */
	ASSERT_EQ(open_dir(rootfd, "/out", real), -ELOOP);
	snprintf(p, sizeof(p), "%s%s", root, outside);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
	ASSERT(system(cmd) == 0);
	ASSERT_EQ(open_dir(rootfd, "/out", real), 0);
	ASSERT(!strncmp(real, outside + 1, strlen(outside) - 1));
	ASSERT_EQ(open_dir(rootfd, "/dangling", real), -ELOOP);
	ASSERT_EQ(open_dir(rootfd, "/usr/missing", real), -ENOENT);
	ASSERT_EQ(open_dir(rootfd, "/usr/../usr", real), -EXDEV);
	ASSERT_EQ(open_dir(rootfd, "/./usr", real), -EXDEV);

	/* rpm's owner rule (CVE-2021-35939): a user's link to root's directory is refused,
	 * to the user's own directory followed. */
	if (as_root) {
		ln("usr/bin", "userbin", 1000);
		ASSERT_EQ(open_dir(rootfd, "/userbin", real), -EPERM);
		mk("home");
		ASSERT(chown(strcat(strcpy(p, root), "/home"), 1000, 1000) == 0);
		ln("home", "userhome", 1000);
		ASSERT_EQ(open_dir(rootfd, "/userhome", real), 0);
		ASSERT(!strcmp(real, "home"));
		/* Behind a refused link, nothing below is reached either. */
		ASSERT_EQ(open_dir(rootfd, "/userbin/x", real), -EPERM);
	} else {
		fprintf(stderr, "not root: the owner rule is not tried\n");
	}
	close(rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	ASSERT(system(cmd) == 0);
	return 0;
}
