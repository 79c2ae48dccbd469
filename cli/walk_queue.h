/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the walk's directory side (walk_tree.c) uses of its ring of slots (walk.c), for those two files alone. */
#ifndef IMASTREAM_CLI_WALK_QUEUE_H
#define IMASTREAM_CLI_WALK_QUEUE_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cli/walk.h"

/*
 * A directory being walked, or one with queued files not reported yet: the workers open
 * those files relative to it, so it stays open until the last of them is reported.  Only
 * the main thread takes and drops references, so a plain counter does.
 */
struct cli_walk_dir {
	DIR *dir;
	int fd; /* dirfd(dir), read once: the walker's readdir() goes on meanwhile */
	unsigned int refs;
};

/* Drops a reference to @d (NULL: none); the last one closes it. */
void cli_walk_dir_put(struct cli_walk_dir *d);
/* Replaces the path tail after @base with "/@name" (or @name when @base is 0). */
int cli_walk_path_set(struct cli_walk *w, size_t base, const char *name);
/* What a file that is not a regular one is, for its message ("FIFO", "socket"...). */
const char *cli_walk_special_name(mode_t type_bits);
/* --format json: the record of a file the walk itself could not hand to the command. */
void cli_walk_fail_record(struct cli_walk *w, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Main thread: waits until every file queued so far is reported (messages in walk order). */
void cli_walk_settle(struct cli_walk *w);
/* Main thread: queues the file named w->path, @name_at bytes into it relative to @dir. */
void cli_walk_queue_file(struct cli_walk *w, struct cli_walk_dir *dir, size_t name_at,
			 bool explicit);

#endif /* IMASTREAM_CLI_WALK_QUEUE_H */
