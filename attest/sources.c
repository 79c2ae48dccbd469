// SPDX-License-Identifier: LGPL-2.1-or-later
/* Reference digests for a policy: from the root's rpm database or from imastream's install record. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rpm/header.h>

#include "attest/policy-private.h"
#include "attest/sources.h"
#include "imastream/audit.h"
#include "imastream/record.h"
#include "imastream/rpmdb.h"
#include "installed/accepted.h"
#include "installed/header_digests.h"

/*
 * The path the kernel logs for @path: its directory's real path, through the directory
 * symlinks rpm installed it through (/bin/sh is measured as /usr/bin/sh on a merged-/usr
 * root).  A directory that cannot be reached keeps the path as the package spells it.
 */
static const char *kernel_path(struct attest_source *src, const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	int fd;

	if (dlen >= sizeof(src->last_dir))
		return path;
	if (!src->last_valid || strlen(src->last_dir) != dlen ||
	    memcmp(src->last_dir, path, dlen)) {
		memcpy(src->last_dir, path, dlen);
		src->last_dir[dlen] = 0;
		fd = imastream_open_dir_as_rpm(src->rootfd, src->last_dir, O_PATH, src->last_real,
					       sizeof(src->last_real));
		if (fd < 0)
			snprintf(src->last_real, sizeof(src->last_real), "%s",
				 src->last_dir + strspn(src->last_dir, "/"));
		else
			close(fd);
		src->last_valid = true;
	}
	if ((size_t)snprintf(buf, size, "/%s%s%s", src->last_real, *src->last_real ? "/" : "",
			     slash ? slash + 1 : path) >= size)
		return path;
	return buf;
}

/* The path as the attested system will see it: @prefix, then the path below the root. */
int attest_source_add(struct attest_source *src, const char *path, const uint8_t *digest,
		      size_t len)
{
	char full[PATH_MAX * 2], real[PATH_MAX];
	int err;

	path = kernel_path(src, path, real, sizeof(real));
	if ((size_t)snprintf(full, sizeof(full), "%s%s", src->prefix ? src->prefix : "", path) >=
	    sizeof(full))
		return attest_say(src->log, -ENAMETOOLONG, "%s: path too long", path);
	src->files++;
	err = attest_policy_add_digest(src->policy, full, digest, len);
	if (err == -EILSEQ) {
		src->unreadable++;
		return attest_say(src->log, 0, "%s: not UTF-8, which a JSON policy cannot spell: left out",
				  path);
	}
	return err;
}

/*
 * Hashes a file below the root when the reference digest is in another algorithm,
 * opening it without following a symlink in any component.
 */
static int add_from_disk(struct attest_source *src, const char *path)
{
	const uint8_t *digest;
	size_t len;
	struct stat st;
	int fd, err;

	{
		/* Through the directory symlinks rpm follows, as the file was installed. */
		const char *slash = strrchr(path, '/');
		char dir[PATH_MAX];
		int dfd;

		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 0, path);
		dfd = imastream_open_dir_as_rpm(src->rootfd, dir, O_PATH, NULL, 0);
		fd = dfd < 0 ? dfd :
			       openat(dfd, slash ? slash + 1 : path,
				      O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (dfd >= 0 && fd < 0)
			fd = -errno;
		if (dfd >= 0)
			close(dfd);
	}
	if (fd < 0) {
		src->unreadable++;
		return attest_say(src->log, 0, "%s: cannot open below the root (%s): left out", path,
				  strerror(-fd));
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		src->unreadable++;
		return attest_say(src->log, 0, "%s: not a regular file on disk: left out", path);
	}
	err = imastream_hash_fd(src->hasher, fd);
	close(fd);
	if (!err)
		err = imastream_hasher_digest(src->hasher, src->hash_algo, &digest, &len);
	if (err) {
		src->unreadable++;
		return attest_say(src->log, 0, "%s: cannot read: %s: left out", path, strerror(-err));
	}
	src->hashed++;
	return attest_source_add(src, path, digest, len);
}

static int add_file(void *arg, const struct ims_header_file *f)
{
	struct attest_source *src = arg;
	const struct imastream_accepted_file *acc = NULL;

	/* An accepted %config edit: its accepted digest instead of the package's. */
	if (f->flags & RPMFILE_CONFIG)
		acc = imastream_accepted_find(src->accepted, f->path);

	if (acc && acc->algo == src->hash_algo)
		return attest_source_add(src, f->path, acc->digest, acc->digest_len);
	if (!acc && f->info && f->info->algo == src->hash_algo)
		return attest_source_add(src, f->path, f->digest, f->info->digest_size);
	return add_from_disk(src, f->path);
}

static int add_header(void *arg, void *rpm_header)
{
	struct attest_source *src = arg;

	src->packages++;
	return ims_header_each_file(rpm_header, add_file, src);
}

int attest_source_rpmdb(struct attest_source *src, char *const *names, int nnames)
{
	/* A record of accepted edits that is not this root's, or cut: no policy, not a wrong one. */
	int err = imastream_accepted_load(src->root, src->rootfd, src->log, &src->accepted);

	if (!err)
		err = imastream_rpmdb_foreach(src->root, names, nnames, add_header, src, src->log);
	imastream_accepted_free(src->accepted);
	src->accepted = NULL;

	/* A policy of nothing would fail every measurement: say so rather than write it. */
	if (!err && !src->packages)
		err = attest_say(src->log, -ENOENT, "%s: the rpm database lists no package: "
				 "no policy written", src->root);
	return err;
}

struct record_walk {
	struct attest_source *src;
	char *const *names;
	int nnames;
	bool *found;               /* per name: the record holds it */
};

/* Index of @package in the names asked for; 0 when all are wanted, -1 when not wanted. */
static int wanted(const struct record_walk *w, const char *package)
{
	if (!w->nnames)
		return 0;
	for (int i = 0; i < w->nnames; i++)
		if (!strcmp(w->names[i], package))
			return i;
	return -1;
}

/* Counts the wanted packages, fileless ones too: a package that installed nothing is known. */
static int record_package(void *arg, const char *name)
{
	struct record_walk *w = arg;
	int i = wanted(w, name);

	if (i < 0)
		return 0;
	if (w->nnames)
		w->found[i] = true;
	w->src->packages++;
	return 0;
}

static int record_file(void *arg, const struct imastream_record_file *f)
{
	struct record_walk *w = arg;

	if (!S_ISREG(f->mode) || wanted(w, f->package) < 0)
		return 0;
	if (f->digest_algo == w->src->hash_algo)
		return attest_source_add(w->src, f->path, f->digest,
					 imastream_hash_by_algo(f->digest_algo)->digest_size);
	return add_from_disk(w->src, f->path);
}

int attest_source_record(struct attest_source *src, char *const *names, int nnames)
{
	struct record_walk w = { .src = src, .names = names, .nnames = nnames };
	int err;

	w.found = calloc(nnames ? (size_t)nnames : 1, sizeof(*w.found));
	if (!w.found)
		return -ENOMEM;
	err = imastream_record_foreach_package(src->rootfd, record_package, &w, src->log);
	for (int i = 0; !err && i < nnames; i++)
		if (!w.found[i])
			err = attest_say(src->log, -ENOENT, "%s: no install record of package %s "
					 "(one rpm installed: --rpmdb)", src->root, names[i]);
	if (!err && !src->packages)
		err = attest_say(src->log, -ENOENT, "%s: no install record of any package "
				 "(var/lib/imastream/packages/; for packages rpm installed: --rpmdb)",
				 src->root);
	if (!err)
		err = imastream_record_foreach(src->rootfd, record_file, &w, src->log);
	free(w.found);
	return err;
}
