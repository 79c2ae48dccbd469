// SPDX-License-Identifier: LGPL-2.1-or-later
/* The walk's directory side: the named paths and, with -r, the trees below them read in readdir order, each regular file queued for the workers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/walk.h"
#include "cli/walk_queue.h"

static void walk_dir(struct cli_walk *w, int dirfd);

/* Enters directory @name under @dirfd (never through a symlink) and walks it. */
static void walk_at(struct cli_walk *w, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		int err = errno;

		/* ELOOP/ENOTDIR: replaced by a symlink or a file since readdir; skip it. */
		if (err == ELOOP || err == ENOTDIR)
			return;
		cli_walk_settle(w);
		cli_error("%s: cannot open directory: %s", w->path, strerror(err));
		cli_walk_fail_record(w, w->path, "cannot open directory: %s", strerror(err));
		w->failed++;
		return;
	}
	walk_dir(w, fd);
}

/*
 * Main thread: the type of entry @de of @d, without following a symlink; DT_UNKNOWN
 * when it is gone since readdir.
 */
static unsigned char entry_type(struct cli_walk_dir *d, const struct dirent *de)
{
	struct stat st;

	if (de->d_type != DT_UNKNOWN)
		return de->d_type;
	/* Some filesystems do not fill d_type: ask, still without following. */
	if (fstatat(d->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return DT_UNKNOWN;
	return IFTODT(st.st_mode);
}

/* Walks the open directory @fd (consumed) in readdir order, as evmctl -r does. */
static void walk_dir(struct cli_walk *w, int fd)
{
	size_t base = strlen(w->path);
	struct cli_walk_dir *d = malloc(sizeof(*d));
	struct dirent *de;

	if (!d || !(d->dir = fdopendir(fd))) {
		int err = d ? errno : ENOMEM;

		cli_walk_settle(w);
		cli_error("%s: cannot read directory: %s", w->path, strerror(err));
		cli_walk_fail_record(w, w->path, "cannot read directory: %s", strerror(err));
		free(d);
		close(fd);
		w->failed++;
		return;
	}
	d->fd = fd;
	d->refs = 1; /* the walk's own, until readdir is done */
	for (;;) {
		unsigned char type;

		errno = 0;
		de = readdir(d->dir);
		if (!de) {
			if (errno) {
				int err = errno;

				w->path[base] = '\0';
				cli_walk_settle(w);
				cli_error("%s: cannot read directory: %s", w->path, strerror(err));
				cli_walk_fail_record(w, w->path, "cannot read directory: %s",
						     strerror(err));
				w->failed++;
			}
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		type = entry_type(d, de);
		if (type == DT_UNKNOWN)
			continue; /* gone since readdir */
		if (cli_walk_path_set(w, base, de->d_name)) {
			cli_error("out of memory");
			w->failed++;
			break;
		}
		if (type == DT_REG) {
			/* A worker opens it and checks it still is a regular file. */
			cli_walk_queue_file(w, d, strlen(w->path) - strlen(de->d_name), false);
		} else if (type == DT_DIR) {
			walk_at(w, d->fd, de->d_name);
		} else if (w->say.verbose) {
			/*
			 * A symlink is never followed: what it points to is done where it
			 * lives.  A FIFO, device or socket is never opened (opening a device
			 * can have effects) and skipped, as evmctl -r skips all but regular
			 * files: the kernel appraises none of them.  Named when it is named
			 * on the command line (report_slot).
			 */
			cli_walk_settle(w);
			cli_error("%s: skipped (%s)", w->path, cli_walk_special_name(DTTOIF(type)));
		}
	}
	w->path[base] = '\0';
	cli_walk_dir_put(d);
}

void cli_walk_path(struct cli_walk *w, const char *arg)
{
	struct stat st;

	if (cli_walk_path_set(w, 0, arg)) {
		cli_error("out of memory");
		w->failed++;
		return;
	}
	if (lstat(arg, &st) < 0) {
		int err = errno;

		cli_walk_settle(w);
		cli_error("%s: %s", arg, strerror(err));
		cli_walk_fail_record(w, arg, "%s", strerror(err));
		w->failed++;
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!w->recursive) {
			cli_walk_settle(w);
			cli_error("%s: is a directory (use -r to walk it)", arg);
			cli_walk_fail_record(w, arg, "is a directory (use -r to walk it)");
			w->failed++;
			return;
		}
		walk_at(w, AT_FDCWD, arg);
		return;
	}
	/* A worker opens it: what it is by then decides, as inside a walk. */
	cli_walk_queue_file(w, NULL, 0, true);
}

void cli_walk_paths(struct cli_walk *w, char *const *paths, int n)
{
	/* Many short lines: one big buffer instead of a write per file. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	for (int i = 0; i < n; i++)
		cli_walk_path(w, paths[i]);
	cli_walk_finish(w);
}
