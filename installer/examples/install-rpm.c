// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Example client of the installer library: installs rpm packages below a root, with an
 * optional tracing entry sink that shows where a hook chain plugs in.  The tests and the
 * benchmark drive the library through it until `imastream install` has its chain.
 *
 *   install-rpm [--trace] [--no-chown] [--no-header-digest] [--no-file-digest] [--one-thread] ROOT PKG.rpm...
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imastream/entry.h"
#include "imastream/extract.h"
#include "imastream/install_rpm.h"

static void print_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= IMASTREAM_LOG_WARNING)
		fprintf(stderr, "install-rpm: %s\n", msg);
}

/* The tracing sink: one line per hook, so a test can check what a chain would see. */
struct trace {
	unsigned long chunks;
	unsigned long long bytes;
};

static int t_begin_package(void *arg, const char *name)
{
	(void)arg;
	printf("begin_package %s\n", name);
	return 0;
}

static int t_entry_begin(void *arg, const struct imastream_entry *e, void **ctx)
{
	struct trace *t = arg;

	t->chunks = 0;
	t->bytes = 0;
	*ctx = t;
	printf("entry_begin %s mode=0%o%s%s\n", e->path, (unsigned int)e->mode,
	       (e->flags & IMASTREAM_ENTRY_UNOWNED) ? " unowned" : "",
	       (e->flags & IMASTREAM_ENTRY_HARDLINK) ? " hardlink" : "");
	return 0;
}

static int t_entry_data(void *arg, void *ctx, const void *buf, size_t len)
{
	struct trace *t = ctx;

	(void)arg;
	(void)buf;
	t->chunks++;
	t->bytes += len;
	return 0;
}

static int t_entry_end(void *arg, void *ctx, const struct imastream_entry *e, int fd, int dirfd,
		       const char *name, const uint8_t *digest)
{
	struct trace *t = ctx;
	struct stat st;

	(void)arg;
	/* What the chain relies on: the object is complete under @name, metadata final. */
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	printf("entry_end %s name=%s fd=%s chunks=%lu bytes=%llu mode=0%o uid=%u digest=%s\n", e->path,
	       strncmp(name, IMASTREAM_TEMP_PREFIX, strlen(IMASTREAM_TEMP_PREFIX)) ? "final" : "temp",
	       fd >= 0 ? "yes" : "no", t->chunks, t->bytes, (unsigned int)st.st_mode,
	       (unsigned int)st.st_uid, digest ? "verified" : "none");
	return 0;
}

static void t_end_package(void *arg, int status)
{
	(void)arg;
	printf("end_package %d\n", status);
}

int main(int argc, char **argv)
{
	struct imastream_log log = { print_log, NULL };
	struct trace trace = { 0 };
	struct imastream_entry_sink sink = {
		.size = sizeof(sink), .arg = &trace, .begin_package = t_begin_package, .entry_begin = t_entry_begin,
		.entry_data = t_entry_data, .entry_end = t_entry_end, .end_package = t_end_package,
	};
	struct imastream_extract *x = NULL;
	unsigned int xflags = 0, iflags = 0;
	int i = 1, rootfd, failed = 0, err;
	int tracing = 0;

	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--trace"))
			tracing = 1;
		else if (!strcmp(argv[i], "--no-chown"))
			xflags |= IMASTREAM_EXTRACT_NO_CHOWN;
		else if (!strcmp(argv[i], "--no-header-digest"))
			iflags |= IMASTREAM_INSTALL_NO_HEADER_DIGEST;
		else if (!strcmp(argv[i], "--no-file-digest"))
			iflags |= IMASTREAM_INSTALL_NO_FILE_DIGEST;
		else if (!strcmp(argv[i], "--one-thread"))
			iflags |= IMASTREAM_INSTALL_ONE_THREAD;
		else
			break;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: install-rpm [--trace] [--no-chown] [--no-header-digest] [--no-file-digest] [--one-thread] ROOT PKG.rpm...\n");
		return 2;
	}
	rootfd = open(argv[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		fprintf(stderr, "install-rpm: %s: %s\n", argv[i], strerror(errno));
		return 1;
	}
	err = imastream_extract_new(rootfd, xflags, tracing ? &sink : NULL, &log, &x);
	close(rootfd);
	if (err)
		return 1;
	for (i++; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			fprintf(stderr, "install-rpm: %s: %s\n", argv[i], strerror(errno));
			failed = 1;
			continue;
		}
		if (imastream_install_rpm(x, fd, argv[i], iflags))
			failed = 1;
		close(fd);
	}
	fflush(stdout);
	imastream_extract_free(x);
	return failed;
}
