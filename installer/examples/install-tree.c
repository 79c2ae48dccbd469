// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Example of the extractor API for an archive format of one's own: installs a staged
 * directory tree (what `make install DESTDIR=STAGE` leaves) into a root as one package,
 * supplying entries and content chunks itself.  The library does the rest: secure
 * creation below the root, temp names, metadata, rename on commit, rollback on error.
 *
 *   install-tree STAGE ROOT
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imastream/installer.h"

static struct imastream_extract *x;
static size_t stage_len;

/* Hard links: the first path seen for each inode with more than one link. */
static struct link { dev_t dev; ino_t ino; char *path; } *links;
static size_t nlinks;

static void print_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= IMASTREAM_LOG_WARNING)
		fprintf(stderr, "install-tree: %s\n", msg);
}

static const char *first_link(const struct stat *st, const char *path)
{
	for (size_t i = 0; i < nlinks; i++)
		if (links[i].dev == st->st_dev && links[i].ino == st->st_ino)
			return links[i].path;
	links = realloc(links, (nlinks + 1) * sizeof(*links));
	links[nlinks++] = (struct link){ st->st_dev, st->st_ino, strdup(path) };
	return NULL;
}

/* Streams one file's content in chunks, as an archive reader would. */
static int copy_content(const char *src)
{
	char buf[128 * 1024];
	ssize_t n;
	int fd = open(src, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		err = imastream_extract_entry_data(x, buf, (size_t)n);
		if (err)
			break;
	}
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

static int visit(const char *src, const struct stat *st, int type, struct FTW *ftw)
{
	struct imastream_entry e = {
		.path = src + stage_len, .mode = st->st_mode, .uid = st->st_uid, .gid = st->st_gid,
		.mtime = st->st_mtime, .rdev = st->st_rdev,
	};
	char target[PATH_MAX];
	int err;

	(void)type;
	if (ftw->level == 0)
		return 0; /* the stage directory is the root itself */
	if (S_ISREG(st->st_mode)) {
		e.size = (uint64_t)st->st_size;
		if (st->st_nlink > 1 && (e.link_target = first_link(st, e.path))) {
			e.flags |= IMASTREAM_ENTRY_HARDLINK;
			e.size = 0;
		}
	} else if (S_ISLNK(st->st_mode)) {
		ssize_t n = readlink(src, target, sizeof(target) - 1);

		if (n < 0)
			return -errno;
		target[n] = 0;
		e.link_target = target;
	}
	err = imastream_extract_entry_begin(x, &e);
	if (!err && S_ISREG(st->st_mode) && !(e.flags & IMASTREAM_ENTRY_HARDLINK))
		err = copy_content(src);
	if (!err)
		err = imastream_extract_entry_end(x);
	return err; /* non-zero stops the walk */
}

int main(int argc, char **argv)
{
	struct imastream_log log = { print_log, NULL };
	int rootfd, err;

	if (argc != 3) {
		fprintf(stderr, "usage: install-tree STAGE ROOT\n");
		return 2;
	}
	stage_len = strlen(argv[1]);
	while (stage_len > 1 && argv[1][stage_len - 1] == '/')
		stage_len--;
	rootfd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		fprintf(stderr, "install-tree: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	err = imastream_extract_new(rootfd, 0, NULL, &log, &x);
	close(rootfd);
	if (!err)
		err = imastream_extract_begin(x, argv[1]);
	/* Pre-order, without following symlinks: directories come before their content. */
	if (!err) {
		err = nftw(argv[1], visit, 64, FTW_PHYS);
		if (err == -1)
			fprintf(stderr, "install-tree: %s: %s\n", argv[1], strerror(errno));
	}
	if (!err)
		err = imastream_extract_commit(x);
	else
		imastream_extract_abort(x, err);
	imastream_extract_free(x);
	for (size_t i = 0; i < nlinks; i++)
		free(links[i].path);
	free(links);
	return err ? 1 : 0;
}
