// SPDX-License-Identifier: LGPL-2.1-or-later
/* The paths with pending labels in a root, for verify --rpmdb to report them as pending. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "imastream/pending.h"
#include "imastream/rpmdb.h"

/* The inode at @path below the root, reached without a symlink; 0 when none. */
static ino_t inode_of(int rootfd, const char *path, dev_t *dev)
{
	int fd = imastream_open_beneath(rootfd, path, O_PATH);
	struct stat st;
	ino_t ino = 0;

	if (fd >= 0 && fstat(fd, &st) == 0) {
		*dev = st.st_dev;
		ino = st.st_ino;
	}
	if (fd >= 0)
		close(fd);
	return ino;
}

static int add(void *arg, const char *path)
{
	struct cli_pending_paths *s = arg;

	if (s->n == s->cap) {
		char **p = realloc(s->paths, (s->cap * 2 + 64) * sizeof(*p));
		struct cli_pending_inode *in;

		if (!p)
			return -ENOMEM;
		s->paths = p;
		in = realloc(s->inodes, (s->cap * 2 + 64) * sizeof(*in));
		if (!in)
			return -ENOMEM;
		s->inodes = in;
		s->cap = s->cap * 2 + 64;
	}
	if (!(s->paths[s->n] = strdup(path)))
		return -ENOMEM;
	/* Its hard links (rpm writes one of them) are pending too. */
	s->inodes[s->n].ino = inode_of(s->rootfd, path, &s->inodes[s->n].dev);
	s->n++;
	return 0;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cli_pending_paths_load(struct cli_pending_paths *s, const char *root)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->rootfd < 0) {
		cli_say("verify", "%s: %s", root, strerror(errno));
		return -errno;
	}
	err = imastream_pending_foreach(root, add, s, &cli_log);
	if (err == -ENOMEM)
		cli_say("verify", "out of memory");
	if (s->n)
		qsort(s->paths, s->n, sizeof(*s->paths), by_path);
	return err;
}

bool cli_pending_paths_has(const struct cli_pending_paths *s, const char *path)
{
	dev_t dev = 0;
	ino_t ino;

	if (!s->n)
		return false;
	if (bsearch(&path, s->paths, s->n, sizeof(*s->paths), by_path))
		return true;
	ino = inode_of(s->rootfd, path, &dev);
	for (size_t i = 0; ino && i < s->n; i++)
		if (s->inodes[i].ino == ino && s->inodes[i].dev == dev)
			return true;
	return false;
}

void cli_pending_paths_free(struct cli_pending_paths *s)
{
	while (s->n)
		free(s->paths[--s->n]);
	free(s->paths);
	free(s->inodes);
	s->paths = NULL;
	s->inodes = NULL;
	if (s->rootfd > 0)
		close(s->rootfd);
	s->rootfd = -1;
}
