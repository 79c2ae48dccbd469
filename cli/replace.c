// SPDX-License-Identifier: LGPL-2.1-or-later
/* Output files that a reader sees old or new, never half-written: a temp file beside them, renamed over. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/replace.h"

int cli_dir_check(const char *cmd, const char *what, const char *dir)
{
	struct stat st;

	if (stat(dir, &st)) {
		int err = -errno;

		if (err == -ENOENT)
			cli_say(cmd, "%s: directory %s does not exist", what, dir);
		else
			cli_say(cmd, "%s: directory %s: %s", what, dir, strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_say(cmd, "%s: %s is not a directory", what, dir);
		return -ENOTDIR;
	}
	if (access(dir, W_OK | X_OK)) {
		int err = -errno;

		cli_say(cmd, "%s: cannot write in directory %s: %s", what, dir, strerror(-err));
		return err;
	}
	return 0;
}

int cli_replace_check(const char *cmd, const char *file)
{
	char copy[PATH_MAX];
	struct stat st;

	/* Standard output, and a device or pipe written in place, need no directory. */
	if (!strcmp(file, "-") || (!stat(file, &st) && !S_ISREG(st.st_mode)))
		return 0;
	if ((size_t)snprintf(copy, sizeof(copy), "%s", file) >= sizeof(copy)) {
		cli_say(cmd, "%s: path too long", file);
		return -ENAMETOOLONG;
	}
	return cli_dir_check(cmd, file, dirname(copy));
}

int cli_replace_open(struct cli_replace *r, const char *cmd, const char *file)
{
	struct stat st;
	int fd, err;

	r->file = file;
	r->tmp[0] = '\0';
	r->owned = false;
	if (!strcmp(file, "-")) {
		r->out = stdout;
		return 0;
	}
	/* A device or a pipe (/dev/null, /dev/stdout, a FIFO a reader waits on) is written
	 * as it is: renaming over it would put a regular file in its place. */
	if (!stat(file, &st) && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			cli_say(cmd, "%s: is a directory", file);
			return -EISDIR;
		}
		r->out = fopen(file, "w");
		if (!r->out) {
			err = -errno;
			cli_say(cmd, "%s: cannot open: %s", file, strerror(-err));
			return err;
		}
		r->owned = true;
		return 0;
	}
	if ((size_t)snprintf(r->tmp, sizeof(r->tmp), "%s.imastream-tmp-XXXXXX", file) >= sizeof(r->tmp)) {
		r->tmp[0] = '\0';
		cli_say(cmd, "%s: path too long", file);
		return -ENAMETOOLONG;
	}
	err = cli_replace_check(cmd, file);
	if (err) {
		r->tmp[0] = '\0';
		return err;
	}
	fd = mkstemp(r->tmp);
	r->out = fd < 0 ? NULL : fdopen(fd, "w");
	if (!r->out) {
		err = -errno;
		cli_say(cmd, "%s: cannot create its temporary file %s: %s", file, r->tmp,
			strerror(-err));
		if (fd >= 0) {
			close(fd);
			unlink(r->tmp);
		}
		r->tmp[0] = '\0';
		return err;
	}
	return 0;
}

int cli_replace_close(struct cli_replace *r, const char *cmd, int err)
{
	int werr = 0;

	if (fflush(r->out) == EOF)
		werr = -errno;
	if (r->tmp[0]) {
		int fd = fileno(r->out);

		if (!err && !werr && (fchmod(fd, 0644) || fsync(fd)))
			werr = -errno;
		if (fclose(r->out) && !werr)
			werr = -errno;
		if (!err && !werr && rename(r->tmp, r->file))
			werr = -errno;
		if (err || werr)
			unlink(r->tmp);
	} else if (r->owned && fclose(r->out) && !werr) {
		werr = -errno;
	}
	if (werr && !err)
		cli_say(cmd, "%s: cannot write: %s",
			r->tmp[0] || r->owned ? r->file : "standard output", strerror(-werr));
	r->out = NULL;
	return err ? err : werr;
}
