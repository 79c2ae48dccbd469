/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An output file replaced whole or not at all: written beside it, renamed over it when complete. */
#ifndef IMASTREAM_CLI_REPLACE_H
#define IMASTREAM_CLI_REPLACE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

struct cli_replace {
	FILE *out;          /* where to write */
	const char *file;   /* the destination, or "-" for standard output */
	char tmp[PATH_MAX]; /* the temp file beside it ("" for standard output or a device) */
	bool owned;	    /* @out is a device or pipe opened here, written in place */
};

/*
 * Opens @file for writing through a temp file beside it; "-" is standard output, and a
 * device or a pipe is written in place (never replaced by a regular file).
 * Return: 0, or -errno after one line "imastream CMD: FILE: ...".
 */
int cli_replace_open(struct cli_replace *r, const char *cmd, const char *file);
/*
 * Whether @file could be written: its directory exists and is writable (standard output
 * and devices need none).  For a command to refuse before any work, not after it.
 * Return: 0, or -errno after one line "imastream CMD: FILE: directory DIR does not exist".
 */
int cli_replace_check(const char *cmd, const char *file);
/* The same for a directory @dir that files are written into; @what names it in the line. */
int cli_dir_check(const char *cmd, const char *what, const char *dir);
/*
 * With @err 0: flushes, syncs and renames the temp file over @file (mode 0644); else, or
 * when that fails, removes it and leaves @file as it was.  A write error is said in one
 * line.  Return: @err, or the -errno of finishing.
 */
int cli_replace_close(struct cli_replace *r, const char *cmd, int err);

#endif /* IMASTREAM_CLI_REPLACE_H */
