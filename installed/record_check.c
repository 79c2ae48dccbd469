// SPDX-License-Identifier: LGPL-2.1-or-later
/* One recorded object checked against the root: type, mode, owner, target and content digest. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/private.h"
#include "imastream/hash.h"
#include "imastream/rpmdb.h"
#include "installed/record_format.h"

/*
 * Opens the parent directory of @rel below @rootfd, through the directory symlinks rpm
 * and the install follow (merged /usr) and no other; errno set on failure.
 */
static int open_parent(int rootfd, const char *rel, const char **base_ret)
{
	char buf[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	int fd;

	snprintf(buf, sizeof(buf), "%.*s", slash ? (int)(slash - rel) : 0, rel);
	*base_ret = slash ? slash + 1 : rel;
	fd = imastream_open_dir_as_rpm(rootfd, buf, O_RDONLY, NULL, 0);
	if (fd < 0) {
		errno = fd == -EPERM ? ELOOP : -fd;
		return -1;
	}
	return fd;
}

/* The object at @base, a directory symlink the install followed (merged /usr) as its
 * target: 0, or 1 with @why. */
static int stat_object(int rootfd, int dfd, const char *base, const struct imastream_record_file *f,
		       struct stat *st, char *why, size_t why_size)
{
	if (fstatat(dfd, base, st, AT_SYMLINK_NOFOLLOW)) {
		snprintf(why, why_size, errno == ENOENT ? "missing" : "cannot be examined (%m)");
		return 1;
	}
	if (S_ISDIR(f->mode) && S_ISLNK(st->st_mode)) {
		int tfd = ims_follow_dir_link(rootfd, dfd, base, O_PATH, NULL, 0);

		if (tfd >= 0) {
			if (fstat(tfd, st))
				st->st_mode = S_IFLNK;
			close(tfd);
		}
	}
	return 0;
}

/* The object's type, mode and owner against the recorded ones: 0 the same, or 1 with @why. */
static int check_inode(const struct imastream_record_file *f, const struct stat *st, char *why,
		       size_t why_size)
{
	if ((st->st_mode & S_IFMT) != (f->mode & S_IFMT)) {
		snprintf(why, why_size, "type changed (recorded %c, found %c)",
			 ims_record_type_char(f->mode), ims_record_type_char(st->st_mode));
		return 1;
	}
	if (!S_ISLNK(f->mode) && (st->st_mode & 07777) != (f->mode & 07777)) {
		snprintf(why, why_size, "mode %04o, recorded %04o",
			 (unsigned int)(st->st_mode & 07777), (unsigned int)(f->mode & 07777));
		return 1;
	}
	if (st->st_uid != f->uid || st->st_gid != f->gid) {
		snprintf(why, why_size, "owner %u:%u, recorded %u:%u", (unsigned int)st->st_uid,
			 (unsigned int)st->st_gid, (unsigned int)f->uid, (unsigned int)f->gid);
		return 1;
	}
	return 0;
}

/* A regular file's size, then its content digest: 0 the same (its descriptor, at offset 0,
 * in *@fd_ret if asked), 1 with @why, or -errno with @why. */
static int check_regular(int dfd, const char *base, const struct stat *st,
			 const struct imastream_record_file *f, int *fd_ret, char *why,
			 size_t why_size)
{
	const struct imastream_hash_info *hi = imastream_hash_by_algo(f->digest_algo);
	struct imastream_hasher *h = NULL;
	const uint8_t *d;
	int fd, err = 0;

	if ((uint64_t)st->st_size != f->size) {
		snprintf(why, why_size, "size %llu, recorded %llu", (unsigned long long)st->st_size,
			 (unsigned long long)f->size);
		return 1;
	}
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		snprintf(why, why_size, "cannot be opened (%m)");
		return err;
	}
	if (hi) {
		err = imastream_hasher_new(IMASTREAM_HASH_BIT(hi->algo), NULL, &h);
		if (!err)
			err = imastream_hash_fd(h, fd);
		if (!err)
			err = imastream_hasher_digest(h, hi->algo, &d, NULL);
		if (err) {
			snprintf(why, why_size, "cannot be read (%s)", strerror(-err));
		} else if (memcmp(d, f->digest, hi->digest_size)) {
			snprintf(why, why_size, "content changed (%s digest)", hi->name);
			err = 1;
		}
		imastream_hasher_free(h);
	}
	if (!err && fd_ret) {
		lseek(fd, 0, SEEK_SET);
		*fd_ret = fd;
		return 0;
	}
	close(fd);
	return err;
}

/* What the object's type holds beyond its inode: a target, a device number, content. */
static int check_body(int dfd, const char *base, const struct stat *st,
		      const struct imastream_record_file *f, int *fd_ret, char *why,
		      size_t why_size)
{
	char target[PATH_MAX + 1];

	if (S_ISLNK(f->mode)) {
		ssize_t n = readlinkat(dfd, base, target, sizeof(target) - 1);

		if (n < 0 ||
		    (target[n] = 0, strcmp(target, f->link_target ? f->link_target : ""))) {
			snprintf(why, why_size, "symlink target changed");
			return 1;
		}
		return 0;
	}
	if ((S_ISCHR(f->mode) || S_ISBLK(f->mode)) && st->st_rdev != f->rdev) {
		snprintf(why, why_size, "device number changed");
		return 1;
	}
	if (!S_ISREG(f->mode))
		return 0;
	return check_regular(dfd, base, st, f, fd_ret, why, why_size);
}

int imastream_record_check(int rootfd, const struct imastream_record_file *f, int *fd_ret,
			   char *why, size_t why_size)
{
	const char *rel, *why_path, *base;
	struct stat st;
	int dfd, err;

	if (fd_ret)
		*fd_ret = -1;
	why[0] = 0;
	if (ims_path_relative(f->path, &rel, &why_path)) {
		snprintf(why, why_size, "recorded path refused: %s", why_path);
		return 1;
	}
	dfd = open_parent(rootfd, rel, &base);
	if (dfd < 0) {
		snprintf(why, why_size,
			 errno == ENOENT		    ? "missing" :
			 errno == ENOTDIR || errno == ELOOP ? "a parent is not a directory" :
							      "cannot be reached (%m)");
		return 1;
	}
	err = stat_object(rootfd, dfd, base, f, &st, why, why_size);
	if (!err)
		err = check_inode(f, &st, why, why_size);
	if (!err)
		err = check_body(dfd, base, &st, f, fd_ret, why, why_size);
	close(dfd);
	return err;
}
