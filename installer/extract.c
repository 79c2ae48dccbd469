// SPDX-License-Identifier: LGPL-2.1-or-later
/* Secure extraction below a root fd: temp names, digest check in the stream, commit/abort. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/private.h"
#include "imastream/entry.h"
#include "imastream/extract.h"
#include "imastream/hash.h"
#include "installer/journal.h"
#include "installer/private.h"

/* A directory the package touched: created (and so removed on abort) or already there. */
struct dir {
	char *rel;     /* relative to the root, "" for the root itself */
	int fd;        /* O_RDONLY|O_DIRECTORY without following symlinks; -1 when evicted */
	int parent;    /* index in dirs[], -1 for the root */
	bool created;  /* by this package: removed on abort */
	bool has_mtime;
	int64_t mtime; /* set after commit, when no rename changes it any more */
	bool filled;   /* the package put something new in it: it keeps the install time */
};

/* An object waiting under its temp name for commit. */
struct pending {
	int dir;       /* index in dirs[] */
	char *tmp;
	char *base;    /* final name in dirs[dir] */
};

struct imastream_extract {
	int rootfd;
	unsigned int flags;
	struct imastream_entry_sink sink;
	const struct imastream_log *log;
	struct imastream_extract_stats stats;
	unsigned int tmp_seq;
	/* Tests only (IMASTREAM_TEST_RENAME_DELAY_MS): a pause between two renames, so that a
	 * kill lands in the rename phase; (IMASTREAM_TEST_RENAME_STOP_AT=N) SIGSTOP before
	 * the Nth rename, so that a kill lands there however busy the machine is. */
	unsigned int test_rename_delay_ms;
	unsigned long test_rename_stop_at;

	/* The open package. */
	bool open;
	char *pkg;
	char *journal_name;           /* "NEVRA from PKG" once the reader knows the NEVRA, or NULL */
	struct dir *dirs;
	size_t ndirs, adirs;
	struct ims_strmap dir_index;  /* rel → index in dirs[] */
	unsigned int nopen;           /* directory fds held, besides the root's */
	struct pending *pend;
	size_t npend, apend;
	struct ims_strmap seen;       /* every entry path of the package → pending index or -1 */
	uint64_t pkg_entries, pkg_bytes;

	/* The current entry. */
	bool in_entry;
	struct imastream_entry cur;
	char *cur_path;
	void *cur_ctx;
	bool cur_sink_open; /* the sink saw entry_begin and not yet entry_end */
	int cur_fd;
	int cur_dir;
	int cur_pend;
	uint64_t cur_left;
	bool cur_hashing;
	struct imastream_hasher *hasher;
	int hasher_algo;
};

int imastream_extract_new(int rootfd, unsigned int flags, const struct imastream_entry_sink *sink,
			  const struct imastream_log *log, struct imastream_extract **ret)
{
	struct imastream_extract *x;
	struct stat st;
	int err;

	if (flags & ~(IMASTREAM_EXTRACT_NO_CHOWN | IMASTREAM_EXTRACT_NO_CAPS | IMASTREAM_EXTRACT_FSYNC |
		      IMASTREAM_EXTRACT_SYNCFS | IMASTREAM_EXTRACT_JOURNAL))
		return ims_err(log, -EINVAL, "extract: unknown flags 0x%x", flags);
	err = sink ? IMS_CHECK_SIZE(log, sink, imastream_entry_sink, journal) : 0;
	if (err)
		return err;
	if (fstat(rootfd, &st))
		return ims_err(log, -errno, "extract: root fd %d: %m", rootfd);
	if (!S_ISDIR(st.st_mode))
		return ims_err(log, -ENOTDIR, "extract: root fd %d is not a directory", rootfd);
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	/* O_PATH descriptors cannot be read: reopen as a real directory fd. */
	x->rootfd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->rootfd < 0) {
		err = -errno;
		free(x);
		return ims_err(log, err, "extract: cannot open the root directory: %s", strerror(-err));
	}
	x->flags = flags;
	if (sink)
		IMS_COPY_SIZED(&x->sink, sink);
	x->log = log;
	x->cur_fd = -1;
	{
		const char *delay = getenv("IMASTREAM_TEST_RENAME_DELAY_MS");

		const char *stop_at = getenv("IMASTREAM_TEST_RENAME_STOP_AT");

		if (delay)
			x->test_rename_delay_ms = (unsigned int)strtoul(delay, NULL, 10) % 10000;
		if (stop_at)
			x->test_rename_stop_at = strtoul(stop_at, NULL, 10);
	}
	*ret = x;
	return 0;
}

int ims_extract_rootfd(const struct imastream_extract *x)
{
	return x->rootfd;
}

const struct imastream_log *ims_extract_log(const struct imastream_extract *x)
{
	return x->log;
}

const struct imastream_entry_sink *ims_extract_sink(const struct imastream_extract *x)
{
	return &x->sink;
}

int imastream_extract_get_stats(const struct imastream_extract *x, struct imastream_extract_stats *st)
{
	int err;

	if (!x || !st)
		return ims_err(x ? x->log : NULL, -EINVAL, "extract: no extractor or no stats given");
	err = IMS_CHECK_OUT_SIZE(x->log, st, imastream_extract_stats, bytes);
	if (!err)
		IMS_FILL_SIZED(st, &x->stats);
	return err;
}

static void reset_package(struct imastream_extract *x)
{
	for (size_t i = 0; i < x->ndirs; i++) {
		if (x->dirs[i].fd >= 0 && x->dirs[i].fd != x->rootfd)
			close(x->dirs[i].fd);
		free(x->dirs[i].rel);
	}
	for (size_t i = 0; i < x->npend; i++) {
		free(x->pend[i].tmp);
		free(x->pend[i].base);
	}
	free(x->dirs);
	free(x->pend);
	x->dirs = NULL;
	x->pend = NULL;
	x->ndirs = x->adirs = x->npend = x->apend = 0;
	x->nopen = 0;
	ims_strmap_clear(&x->dir_index);
	ims_strmap_clear(&x->seen);
	free(x->pkg);
	free(x->journal_name);
	x->pkg = x->journal_name = NULL;
	x->open = false;
}

int ims_extract_set_nevra(struct imastream_extract *x, const char *nevra)
{
	if (!x->open)
		return -EINVAL;
	free(x->journal_name);
	x->journal_name = NULL;
	if (!nevra || !strcmp(nevra, x->pkg))
		return 0;
	if (asprintf(&x->journal_name, "%s from %s", nevra, x->pkg) < 0) {
		x->journal_name = NULL;
		return -ENOMEM;
	}
	return 0;
}

int imastream_extract_begin(struct imastream_extract *x, const char *name)
{
	int err;

	if (x->open)
		return ims_err(x->log, -EBUSY, "%s: another package (%s) is still open", name, x->pkg);
	x->pkg = strdup(name ? name : "(package)");
	x->dirs = calloc(16, sizeof(*x->dirs));
	if (!x->pkg || !x->dirs) {
		err = -ENOMEM;
		goto out;
	}
	x->adirs = 16;
	x->dirs[0] = (struct dir){ .rel = strdup(""), .fd = x->rootfd, .parent = -1 };
	x->ndirs = 1;
	if (!x->dirs[0].rel) {
		err = -ENOMEM;
		goto out;
	}
	err = ims_strmap_add(&x->dir_index, "", 0);
	if (err)
		goto out;
	x->pkg_entries = x->pkg_bytes = 0;
	x->open = true;
	if (x->sink.begin_package) {
		err = x->sink.begin_package(x->sink.arg, x->pkg);
		if (err) {
			ims_err(x->log, err, "%s: the hook chain refused the package: %s", x->pkg,
				strerror(-err));
			x->open = false;
			goto out;
		}
	}
	return 0;
out:
	reset_package(x);
	return err;
}

/* Reports an entry error in one line: "PKG: PATH: what: strerror". */
#define entry_err(x, err, fmt, ...)                                                          \
	ims_err((x)->log, (err), "%s: %s: " fmt, (x)->pkg, (x)->cur_path ? (x)->cur_path : "?", \
		##__VA_ARGS__)

static int add_dir(struct imastream_extract *x, const char *rel, int fd, int parent, bool created)
{
	struct dir *d;
	int err;

	if (x->ndirs == x->adirs) {
		d = realloc(x->dirs, 2 * x->adirs * sizeof(*d));
		if (!d)
			return -ENOMEM;
		x->dirs = d;
		x->adirs *= 2;
	}
	d = &x->dirs[x->ndirs];
	*d = (struct dir){ .rel = strdup(rel), .fd = fd, .parent = parent, .created = created };
	if (!d->rel)
		return -ENOMEM;
	err = ims_strmap_add(&x->dir_index, rel, (int)x->ndirs);
	if (err) {
		free(d->rel);
		return err;
	}
	return (int)x->ndirs++;
}

/*
 * Directory fds are cached, but a package may have thousands of directories and the
 * fd limit is often 1024: past DIR_FD_CACHE, every cached fd is closed at a point where
 * no caller holds one (the start of an entry, each step of commit and abort), and
 * dir_fd() reopens on demand, component by component and never following a symlink.
 */
#define DIR_FD_CACHE 256

static void evict_dir_fds(struct imastream_extract *x)
{
	if (x->nopen < DIR_FD_CACHE)
		return;
	for (size_t i = 1; i < x->ndirs; i++)
		if (x->dirs[i].fd >= 0) {
			close(x->dirs[i].fd);
			x->dirs[i].fd = -1;
		}
	x->nopen = 0;
}

static const char *dir_name(const struct dir *d)
{
	const char *slash = strrchr(d->rel, '/');

	return slash ? slash + 1 : d->rel;
}

/* Returns the fd of directory @idx, reopening it below its parent if it was evicted. */
static int dir_fd(struct imastream_extract *x, int idx)
{
	struct dir *d = &x->dirs[idx];
	int pfd, fd;

	if (d->fd >= 0)
		return d->fd;
	pfd = dir_fd(x, d->parent);
	if (pfd < 0)
		return pfd;
	fd = openat(pfd, dir_name(d), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
		/* A directory symlink rpm follows, reopened under the same rule. */
		fd = ims_follow_dir_link(x->rootfd, pfd, dir_name(d), O_RDONLY, NULL, 0);
		if (fd < 0)
			errno = -fd;
	}
	if (fd < 0)
		return ims_err(x->log, -errno, "%s: cannot reopen directory '%s': %m", x->pkg, d->rel);
	d->fd = fd;
	x->nopen++;
	return fd;
}

/* Explains why a path component could not be opened as a directory. */
static int dir_open_error(struct imastream_extract *x, int dirfd, const char *name, const char *rel,
			  int err)
{
	struct stat st;

	if (err == -EPERM)
		return entry_err(x, -ELOOP,
				 "'%s' is a symlink owned by neither root nor its target's owner; "
				 "refusing to follow it (as rpm does)",
				 rel);
	if ((err == -ELOOP || err == -ENOTDIR) && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (S_ISLNK(st.st_mode))
			return entry_err(x, -ELOOP,
					 "'%s' is a symlink to no directory below the root; "
					 "refusing to follow it",
					 rel);
		return entry_err(x, -ENOTDIR, "'%s' exists and is not a directory", rel);
	}
	return entry_err(x, err, "cannot open directory '%s': %s", rel, strerror(-err));
}

static int sink_end(struct imastream_extract *x, int fd, int dirfd, const char *name,
		    const uint8_t *digest);

/*
 * Opens (or creates, mode 0700) directory @name below directory @parent, never following
 * a symlink; @path is its path relative to the root.  A directory created here that the
 * package does not list (@unowned) gets root:root 0755 like rpm gives it, and passes the
 * sink.  Returns its index in dirs[].
 */
static int open_child_dir(struct imastream_extract *x, int parent, const char *path,
			  const char *name, bool unowned)
{
	bool created = false;
	int idx, fd, pfd, err;

	pfd = dir_fd(x, parent);
	if (pfd < 0)
		return pfd;
	/* A symlink or file of this package waits under a temp name: refuse to make a
	 * directory at its path (the symlink-then-file trick) rather than fail in commit. */
	if (ims_strmap_get(&x->seen, path) >= 0)
		return entry_err(x, -ENOTDIR, "'%s' is a non-directory entry of this package; refusing to use it as a directory",
				 path);
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(pfd, name, 0700))
			return entry_err(x, -errno, "cannot create directory '%s': %m", path);
		created = true;
		fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0 && !created && (errno == ELOOP || errno == ENOTDIR)) {
		/* A directory symlink (merged /usr): followed where rpm follows it. */
		fd = ims_follow_dir_link(x->rootfd, pfd, name, O_RDONLY, NULL, 0);
		if (fd == -ENOTDIR || fd == -ENOENT)
			fd = -ELOOP;
		if (fd < 0)
			errno = -fd;
	}
	if (fd < 0) {
		err = -errno;
		if (created)
			unlinkat(pfd, name, AT_REMOVEDIR);
		return dir_open_error(x, pfd, name, path, err);
	}
	idx = add_dir(x, path, fd, parent, created);
	if (idx < 0) {
		close(fd);
		if (created)
			unlinkat(pfd, name, AT_REMOVEDIR);
		return idx;
	}
	x->nopen++;
	if (!created || !unowned)
		return idx;

	if (!(x->flags & IMASTREAM_EXTRACT_NO_CHOWN) && fchown(fd, 0, 0))
		return entry_err(x, -errno, "chown of directory '%s': %m", path);
	if (fchmod(fd, 0755))
		return entry_err(x, -errno, "chmod of directory '%s': %m", path);
	if (x->sink.entry_begin || x->sink.entry_end) {
		char abs[PATH_MAX + 1];
		struct imastream_entry e = {
			.path = abs, .mode = S_IFDIR | 0755, .flags = IMASTREAM_ENTRY_UNOWNED,
			.index = (unsigned int)-1,
		};
		void *ctx = NULL;

		snprintf(abs, sizeof(abs), "/%s", path);
		if (x->sink.entry_begin) {
			err = x->sink.entry_begin(x->sink.arg, &e, &ctx);
			if (err)
				return entry_err(x, err, "hook chain refused directory '%s': %s", path,
						 strerror(-err));
		}
		if (x->sink.entry_end) {
			err = x->sink.entry_end(x->sink.arg, ctx, &e, fd, pfd, name, NULL);
			if (err)
				return entry_err(x, err, "hook chain failed on directory '%s': %s", path,
						 strerror(-err));
		}
	}
	return idx;
}

/*
 * Returns the index of directory @rel[0..len) (no leading or trailing slash), walking
 * from the deepest directory already known, one component at a time (iteratively: a
 * path may have hundreds of components).  Missing intermediate directories are unowned;
 * the last one is unowned only if @unowned_last.
 */
static int get_dir(struct imastream_extract *x, const char *rel, size_t len, bool unowned_last)
{
	char buf[PATH_MAX];
	size_t end;
	int idx = 0;

	if (len >= sizeof(buf))
		return entry_err(x, -ENAMETOOLONG, "path too long");
	memcpy(buf, rel, len);
	buf[len] = 0;
	if (!len)
		return 0;
	idx = ims_strmap_get(&x->dir_index, buf);
	if (idx >= 0)
		return idx;
	idx = 0;
	for (end = 0; end < len; end++) {
		size_t start = end;
		int next;

		while (end < len && buf[end] != '/')
			end++;
		buf[end] = 0;
		next = ims_strmap_get(&x->dir_index, buf);
		if (next < 0)
			next = open_child_dir(x, idx, buf, buf + start, end < len || unowned_last);
		if (end < len)
			buf[end] = '/';
		if (next < 0)
			return next;
		idx = next;
	}
	return idx;
}

static int add_pending(struct imastream_extract *x, int dir, const char *tmp, const char *base)
{
	struct pending *p;

	if (x->npend == x->apend) {
		size_t n = x->apend ? 2 * x->apend : 64;

		p = realloc(x->pend, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		x->pend = p;
		x->apend = n;
	}
	p = &x->pend[x->npend];
	p->dir = dir;
	p->tmp = strdup(tmp);
	p->base = strdup(base);
	if (!p->tmp || !p->base) {
		free(p->tmp);
		free(p->base);
		return -ENOMEM;
	}
	return (int)x->npend++;
}

#define FALLOCATE_MIN (1024 * 1024)

/* Makes a fresh temp name; callers create it with O_EXCL semantics and retry on EEXIST. */
static void temp_name(struct imastream_extract *x, char *buf, size_t size)
{
	snprintf(buf, size, IMASTREAM_TEMP_PREFIX "%x-%x", (unsigned int)getpid(), x->tmp_seq++);
}

static int set_caps(struct imastream_extract *x, int fd, const char *text)
{
	cap_t caps;
	int err = 0;

	caps = cap_from_text(text);
	if (!caps)
		return entry_err(x, -EINVAL, "invalid file capabilities '%s'", text);
	if (cap_set_fd(fd, caps))
		err = entry_err(x, -errno, "cannot set file capabilities '%s': %m", text);
	cap_free(caps);
	return err;
}

static int set_mtime_at(int dirfd, const char *name, int64_t mtime)
{
	struct timespec ts[2] = { { .tv_sec = mtime }, { .tv_sec = mtime } };

	return utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW);
}

static int set_mtime_fd(int fd, int64_t mtime)
{
	struct timespec ts[2] = { { .tv_sec = mtime }, { .tv_sec = mtime } };

	return futimens(fd, ts);
}

static int sink_end(struct imastream_extract *x, int fd, int dirfd, const char *name,
		    const uint8_t *digest)
{
	int err;

	if (!x->sink.entry_end)
		return 0;
	err = x->sink.entry_end(x->sink.arg, x->cur_ctx, &x->cur, fd, dirfd, name, digest);
	x->cur_ctx = NULL;
	x->cur_sink_open = false;
	if (err)
		return entry_err(x, err, "the hook chain failed: %s", strerror(-err));
	return 0;
}

static int begin_dir(struct imastream_extract *x, const char *rel)
{
	struct dir *d;
	int idx, err;

	int fd, pfd;

	idx = get_dir(x, rel, strlen(rel), false);
	if (idx < 0)
		return idx;
	d = &x->dirs[idx];
	fd = dir_fd(x, idx);
	pfd = fd < 0 ? fd : dir_fd(x, d->parent);
	if (pfd < 0)
		return pfd;
	if (!(x->flags & IMASTREAM_EXTRACT_NO_CHOWN) && fchown(fd, x->cur.uid, x->cur.gid))
		return entry_err(x, -errno, "chown: %m");
	if (fchmod(fd, x->cur.mode & 07777))
		return entry_err(x, -errno, "chmod: %m");
	d->has_mtime = true;
	d->mtime = x->cur.mtime;
	err = sink_end(x, fd, pfd, dir_name(d), NULL);
	return err;
}

/* Creates the temp object of a non-directory entry in directory @dir. */
static int begin_nondir(struct imastream_extract *x, int dir, const char *base)
{
	int dfd = dir_fd(x, dir), sfd, err = 0, pend, src;
	mode_t type = x->cur.mode & S_IFMT;
	char tmp[64];
	struct stat st;

	if (dfd < 0)
		return dfd;
	/* Fail early rather than in commit: a directory cannot be renamed over. */
	if (!fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode))
		return entry_err(x, -EEXIST, "a directory exists at its path");

	for (int tries = 0; tries < 100; tries++) {
		temp_name(x, tmp, sizeof(tmp));
		if (x->cur.flags & IMASTREAM_ENTRY_HARDLINK) {
			const char *target, *why;

			src = ims_path_relative(x->cur.link_target, &target, &why) ? -1 :
			      ims_strmap_get(&x->seen, target);
			if (src < 0)
				return entry_err(x, -EINVAL, "hard link to '%s', which is not an earlier file of the package",
						 x->cur.link_target);
			sfd = dir_fd(x, x->pend[src].dir);
			if (sfd < 0)
				return sfd;
			err = linkat(sfd, x->pend[src].tmp, dfd, tmp, 0);
		} else if (type == S_IFREG) {
			x->cur_fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
					   0600);
			err = x->cur_fd < 0 ? -1 : 0;
		} else if (type == S_IFLNK) {
			err = symlinkat(x->cur.link_target, dfd, tmp);
		} else {
			err = mknodat(dfd, tmp, type | 0600, x->cur.rdev);
		}
		if (!err || errno != EEXIST)
			break;
	}
	if (err)
		return entry_err(x, -errno, "cannot create it: %m");
	pend = add_pending(x, dir, tmp, base);
	if (pend < 0) {
		unlinkat(dfd, tmp, 0);
		return pend;
	}
	x->cur_pend = pend;
	x->cur_dir = dir;

	/* The inode is complete (its first link had content, metadata and attributes):
	 * the chain only learns the new name. */
	if (x->cur.flags & IMASTREAM_ENTRY_HARDLINK)
		return sink_end(x, -1, dfd, tmp, NULL);
	if (type == S_IFREG) {
		x->cur_left = x->cur.size;
		/* Reserve the space of large files now: a full filesystem shows before their
		 * bytes are written, and they are laid out in one piece.  (Small files are not
		 * worth the system call; the package's total was checked against the free
		 * space before the first entry.) */
		if (x->cur.size >= FALLOCATE_MIN) {
			err = posix_fallocate(x->cur_fd, 0, (off_t)x->cur.size);
			if (err == ENOSPC || err == EFBIG)
				return entry_err(x, -err, "%llu bytes do not fit: %s",
						 (unsigned long long)x->cur.size, strerror(err));
		}
		return 0;
	}
	/* Symlinks, devices and FIFOs are complete now: owner, mode, mtime, then the sink. */
	if (!(x->flags & IMASTREAM_EXTRACT_NO_CHOWN) &&
	    fchownat(dfd, tmp, x->cur.uid, x->cur.gid, AT_SYMLINK_NOFOLLOW))
		return entry_err(x, -errno, "chown: %m");
	if (type != S_IFLNK && fchmodat(dfd, tmp, x->cur.mode & 07777, 0))
		return entry_err(x, -errno, "chmod: %m");
	if (set_mtime_at(dfd, tmp, x->cur.mtime))
		return entry_err(x, -errno, "cannot set mtime: %m");
	return sink_end(x, -1, dfd, tmp, NULL);
}

bool ims_entry_type_supported(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
	case S_IFLNK:
	case S_IFDIR:
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
		return true;
	default:
		return false;
	}
}

static int check_entry(struct imastream_extract *x, const struct imastream_entry *e)
{
	mode_t type = e->mode & S_IFMT;

	if (!ims_entry_type_supported(type))
		return entry_err(x, -EINVAL, "unsupported file type 0%o", (unsigned int)type);
	switch (type) {
	case S_IFREG:
		if (e->digest && !imastream_hash_by_algo(e->digest_algo))
			return entry_err(x, -EINVAL, "unknown digest algorithm %d", e->digest_algo);
		break;
	case S_IFLNK:
		if (!e->link_target || !*e->link_target || strlen(e->link_target) >= PATH_MAX)
			return entry_err(x, -EINVAL, "symlink without a valid target");
		break;
	default:
		break; /* a directory, a device or a FIFO: nothing more to check */
	}
	if (type != S_IFREG && e->size)
		return entry_err(x, -EINVAL, "a non-regular entry with %llu bytes of content",
				 (unsigned long long)e->size);
	if ((e->flags & IMASTREAM_ENTRY_HARDLINK) && (type != S_IFREG || !e->link_target))
		return entry_err(x, -EINVAL, "hard link entry without a regular file to link to");
	if (e->mode & ~(S_IFMT | 07777))
		return entry_err(x, -EINVAL, "invalid mode 0%o", (unsigned int)e->mode);
	return 0;
}

int imastream_extract_entry_begin(struct imastream_extract *x, const struct imastream_entry *e)
{
	const char *rel, *why, *slash;
	int err, dir;

	if (!x->open || x->in_entry)
		return ims_err(x->log, -EINVAL, "%s: entry '%s' begins out of order",
			       x->pkg ? x->pkg : "(no package)", e->path ? e->path : "?");
	evict_dir_fds(x);
	x->cur = *e;
	x->cur.link_target = x->cur.caps = NULL;
	x->cur.digest = NULL;
	x->cur.sig = NULL;
	x->cur.sig_len = 0;
	x->cur_path = strdup(e->path ? e->path : "(null)");
	x->cur_ctx = NULL;
	x->cur_sink_open = false;
	x->cur_fd = -1;
	x->cur_pend = -1;
	x->cur_left = 0;
	x->cur_hashing = false;
	x->in_entry = true;
	if (!x->cur_path)
		return -ENOMEM;
	err = ims_path_relative(e->path, &rel, &why);
	if (err)
		return entry_err(x, err, "refused: %s", why);
	err = check_entry(x, e);
	if (err)
		return err;
	/* Keep what later steps need beyond this call. */
	x->cur.path = x->cur_path;
	if (e->link_target && !(x->cur.link_target = strdup(e->link_target)))
		return -ENOMEM;
	if (e->caps && !(x->cur.caps = strdup(e->caps)))
		return -ENOMEM;
	if (e->digest && e->digest_algo) {
		size_t n = imastream_hash_by_algo(e->digest_algo)->digest_size;
		uint8_t *d = malloc(n);

		if (!d)
			return -ENOMEM;
		memcpy(d, e->digest, n);
		x->cur.digest = d;
	}
	if (e->sig && e->sig_len && S_ISREG(e->mode)) {
		uint8_t *sig = malloc(e->sig_len);

		if (!sig)
			return -ENOMEM;
		memcpy(sig, e->sig, e->sig_len);
		x->cur.sig = sig;
		x->cur.sig_len = e->sig_len;
	}

	err = ims_strmap_add(&x->seen, rel, -1);
	if (err == -EEXIST)
		return entry_err(x, err, "duplicate entry in the package");
	if (err)
		return err;

	/* Parents first (unowned ones pass the sink on their own), then this entry. */
	slash = strrchr(rel, '/');
	dir = slash ? get_dir(x, rel, (size_t)(slash - rel), true) : 0;
	if (dir < 0)
		return dir;
	if (x->sink.entry_begin) {
		err = x->sink.entry_begin(x->sink.arg, &x->cur, &x->cur_ctx);
		if (err)
			return entry_err(x, err, "the hook chain refused it: %s", strerror(-err));
		x->cur_sink_open = true;
	}
	if (S_ISDIR(e->mode))
		return begin_dir(x, rel);
	err = begin_nondir(x, dir, slash ? slash + 1 : rel);
	if (err)
		return err;
	/* Remember where this path's temp file is, for later hard links to it. */
	ims_strmap_set(&x->seen, rel, x->cur_pend);
	if (S_ISREG(e->mode) && !(e->flags & IMASTREAM_ENTRY_HARDLINK) && x->cur.digest) {
		if (!x->hasher || x->hasher_algo != e->digest_algo) {
			imastream_hasher_free(x->hasher);
			x->hasher = NULL;
			err = imastream_hasher_new(IMASTREAM_HASH_BIT(e->digest_algo), x->log,
						   &x->hasher);
			if (err)
				return entry_err(x, err, "cannot hash with algorithm %d", e->digest_algo);
			x->hasher_algo = e->digest_algo;
		} else {
			err = imastream_hasher_reset(x->hasher);
			if (err)
				return err;
		}
		x->cur_hashing = true;
	}
	return 0;
}

static void finish_entry(struct imastream_extract *x)
{
	if (x->cur_fd >= 0)
		close(x->cur_fd);
	x->cur_fd = -1;
	free(x->cur_path);
	free((char *)x->cur.link_target);
	free((char *)x->cur.caps);
	free((uint8_t *)x->cur.digest);
	free((uint8_t *)x->cur.sig);
	x->cur_path = NULL;
	x->cur.path = x->cur.link_target = x->cur.caps = NULL;
	x->cur.digest = NULL;
	x->cur.sig = NULL;
	x->cur.sig_len = 0;
	x->in_entry = false;
}

int imastream_extract_entry_data(struct imastream_extract *x, const void *buf, size_t len)
{
	int err;

	if (!x->in_entry || x->cur_fd < 0)
		return ims_err(x->log, -EINVAL, "%s: content outside a regular file entry",
			       x->pkg ? x->pkg : "(no package)");
	if (len > x->cur_left)
		return entry_err(x, -EFBIG, "more content than the %llu bytes declared",
				 (unsigned long long)x->cur.size);
	/* One pass: the same bytes go to the digest check, the chain and the file. */
	if (x->cur_hashing) {
		err = imastream_hasher_update(x->hasher, buf, len);
		if (err)
			return entry_err(x, err, "hashing failed");
	}
	if (x->sink.entry_data) {
		err = x->sink.entry_data(x->sink.arg, x->cur_ctx, buf, len);
		if (err)
			return entry_err(x, err, "the hook chain failed on content: %s", strerror(-err));
	}
	err = ims_write_full(x->cur_fd, buf, len);
	if (err)
		return entry_err(x, err, "write failed: %s", strerror(-err));
	x->cur_left -= len;
	x->pkg_bytes += len;
	return 0;
}

static int end_regular(struct imastream_extract *x)
{
	const struct imastream_hash_info *hi;
	const uint8_t *digest = NULL;
	int dfd = dir_fd(x, x->cur_dir), err;

	if (dfd < 0)
		return dfd;

	if (x->cur_left)
		return entry_err(x, -EPIPE, "truncated: %llu of %llu bytes arrived",
				 (unsigned long long)(x->cur.size - x->cur_left),
				 (unsigned long long)x->cur.size);
	if (x->cur_hashing) {
		hi = imastream_hash_by_algo(x->cur.digest_algo);
		err = imastream_hasher_final(x->hasher);
		if (!err)
			err = imastream_hasher_digest(x->hasher, x->cur.digest_algo, &digest, NULL);
		if (err)
			return entry_err(x, err, "hashing failed");
		if (memcmp(digest, x->cur.digest, hi->digest_size))
			return entry_err(x, -EBADMSG, "%s digest mismatch: the content is not what the package declares",
					 hi->name);
	}
	/* rpm's order: chown clears setuid bits and capabilities, so it comes first. */
	if (!(x->flags & IMASTREAM_EXTRACT_NO_CHOWN) && fchown(x->cur_fd, x->cur.uid, x->cur.gid))
		return entry_err(x, -errno, "chown: %m");
	if (fchmod(x->cur_fd, x->cur.mode & 07777))
		return entry_err(x, -errno, "chmod: %m");
	if (x->cur.caps && *x->cur.caps && !(x->flags & IMASTREAM_EXTRACT_NO_CAPS)) {
		err = set_caps(x, x->cur_fd, x->cur.caps);
		if (err)
			return err;
	}
	if (set_mtime_fd(x->cur_fd, x->cur.mtime))
		return entry_err(x, -errno, "cannot set mtime: %m");
	if ((x->flags & IMASTREAM_EXTRACT_FSYNC) && fsync(x->cur_fd))
		return entry_err(x, -errno, "fsync: %m");
	return sink_end(x, x->cur_fd, dfd, x->pend[x->cur_pend].tmp, digest);
}

int imastream_extract_entry_end(struct imastream_extract *x)
{
	int err = 0;

	if (!x->in_entry)
		return ims_err(x->log, -EINVAL, "%s: entry end without a begin",
			       x->pkg ? x->pkg : "(no package)");
	if (x->cur_fd >= 0)
		err = end_regular(x);
	if (err)
		return err; /* the entry stays current so that abort() tells the sink */
	x->pkg_entries++;
	finish_entry(x);
	return 0;
}

/* Removes the temp objects from pending entry @from on. */
static void remove_all_temps(struct imastream_extract *x, size_t from)
{
	for (size_t i = from; i < x->npend; i++) {
		int dfd;

		evict_dir_fds(x);
		dfd = dir_fd(x, x->pend[i].dir);
		if (dfd < 0 || (unlinkat(dfd, x->pend[i].tmp, 0) && errno != ENOENT))
			ims_logf(x->log, IMASTREAM_LOG_WARNING, "%s: cannot remove temp file %s/%s: %m",
				 x->pkg, x->dirs[x->pend[i].dir].rel, x->pend[i].tmp);
	}
}

/* Removes every temp object and every directory this package created, deepest first. */
static void remove_all(struct imastream_extract *x)
{
	remove_all_temps(x, 0);
	for (size_t i = x->ndirs; i-- > 1;) {
		struct dir *d = &x->dirs[i];
		int pfd;

		if (!d->created)
			continue;
		evict_dir_fds(x);
		pfd = dir_fd(x, d->parent);
		if (pfd < 0 || unlinkat(pfd, dir_name(d), AT_REMOVEDIR))
			ims_logf(x->log, IMASTREAM_LOG_WARNING, "%s: cannot remove directory %s: %m",
				 x->pkg, d->rel);
	}
}

void imastream_extract_abort(struct imastream_extract *x, int err)
{
	if (!x || !x->open)
		return;
	if (x->in_entry) {
		if (x->cur_sink_open && x->sink.entry_abort)
			x->sink.entry_abort(x->sink.arg, x->cur_ctx, err);
		x->cur_ctx = NULL;
		finish_entry(x);
	}
	remove_all(x);
	if (x->sink.end_package)
		x->sink.end_package(x->sink.arg, err ? err : -ECANCELED);
	reset_package(x);
}

/*
 * Makes every temp object of the package durable, content and attributes, before any
 * of them gets its final name: one syncfs() per filesystem its directories are on
 * (usually one; a root may have /boot or /var on another).
 */
static int sync_filesystems(struct imastream_extract *x)
{
	dev_t synced[8];
	size_t nsynced = 0;

	for (size_t i = 0; i < x->ndirs; i++) {
		struct stat st;
		size_t j;
		int fd;

		evict_dir_fds(x);
		fd = dir_fd(x, (int)i);
		if (fd < 0)
			return fd;
		if (fstat(fd, &st))
			return ims_err(x->log, -errno, "%s: %s: %m", x->pkg, x->dirs[i].rel);
		for (j = 0; j < nsynced && synced[j] != st.st_dev; j++)
			;
		if (j < nsynced)
			continue;
		if (syncfs(fd))
			return ims_err(x->log, -errno, "%s: syncfs of the filesystem of /%s: %m", x->pkg,
				       x->dirs[i].rel);
		if (nsynced < sizeof(synced) / sizeof(synced[0]))
			synced[nsynced++] = st.st_dev;
	}
	return 0;
}

static int journal_add_sink_rename(void *ctx, const char *dir, const char *tmp, const char *name)
{
	const char *why;

	return ims_journal_add(ctx, IMS_JOURNAL_RENAME, dir, tmp, name, &why);
}

static int journal_add_sink_step(void *ctx, int step, const char *dir, const char *name)
{
	const char *why;
	int kind = step == IMASTREAM_JOURNAL_REMOVE ? IMS_JOURNAL_REMOVE :
		   step == IMASTREAM_JOURNAL_RMDIR ? IMS_JOURNAL_RMDIR :
		   step == IMASTREAM_JOURNAL_RPMSAVE ? IMS_JOURNAL_SAVE : -1;

	return ims_journal_add(ctx, kind, dir, NULL, name, &why);
}

/*
 * Writes the intent journal of the package: its renames in the order commit does them,
 * then the sink's removals (an upgrade's dropped files), then its renames (its record).  Every temp file is complete (and synced, with FSYNC or
 * SYNCFS) at this point.  Return: the state directory's fd (the journal is there), -1
 * when there was nothing to journal, or -errno (said).
 */
static int write_journal(struct imastream_extract *x)
{
	struct ims_journal j;
	const char *why = NULL;
	int statefd, err;

	err = ims_journal_init(&j, x->journal_name ? x->journal_name : x->pkg, getpid());
	for (size_t i = 0; i < x->npend && !err; i++)
		err = ims_journal_add(&j, IMS_JOURNAL_RENAME, x->dirs[x->pend[i].dir].rel,
				      x->pend[i].tmp, x->pend[i].base, &why);
	if (!err && x->sink.journal_steps)
		err = x->sink.journal_steps(x->sink.arg, journal_add_sink_step, &j);
	if (!err && x->sink.journal)
		err = x->sink.journal(x->sink.arg, journal_add_sink_rename, &j);
	if (err) {
		ims_journal_clear(&j);
		return ims_err(x->log, err, "%s: cannot journal its renames: %s", x->pkg,
			       why ? why : strerror(-err));
	}
	if (!j.nops) {
		ims_journal_clear(&j);
		return -1;
	}
	statefd = ims_open_dir_below(x->rootfd, IMS_STATE_DIR, true, NULL);
	if (statefd < 0) {
		ims_journal_clear(&j);
		return ims_err(x->log, statefd, "%s: cannot create " IMS_STATE_DIR ": %s", x->pkg,
			       strerror(-statefd));
	}
	err = ims_journal_write(statefd, &j, x->flags & (IMASTREAM_EXTRACT_FSYNC | IMASTREAM_EXTRACT_SYNCFS),
				x->log);
	ims_journal_clear(&j);
	if (err) {
		close(statefd);
		return err;
	}
	return statefd;
}

/* The test hooks before rename @i (from 0): a pause, a stop (see test_rename_delay_ms). */
static void test_rename_hooks(const struct imastream_extract *x, size_t i)
{
	struct timespec ts = { .tv_sec = x->test_rename_delay_ms / 1000,
			       .tv_nsec = (long)(x->test_rename_delay_ms % 1000) * 1000000L };

	if (i && x->test_rename_delay_ms)
		nanosleep(&ts, NULL);
	if (x->test_rename_stop_at && i + 1 == x->test_rename_stop_at)
		raise(SIGSTOP);
}

int imastream_extract_commit(struct imastream_extract *x)
{
	size_t i;
	int err = 0, statefd = -1;

	if (!x->open || x->in_entry)
		return ims_err(x->log, -EINVAL, "%s: commit with %s",
			       x->pkg ? x->pkg : "(no package)", x->open ? "an entry open" : "no package");
	/* The sink's last word, while the package can still be rolled back whole. */
	if (x->sink.commit_package) {
		err = x->sink.commit_package(x->sink.arg);
		if (err) {
			ims_err(x->log, err, "%s: the hook chain refused to commit the package: %s",
				x->pkg, strerror(-err));
			remove_all(x);
			goto out;
		}
	}
	if ((x->flags & IMASTREAM_EXTRACT_SYNCFS) && x->npend) {
		err = sync_filesystems(x);
		if (err) {
			remove_all(x);
			goto out;
		}
	}
	/* Every object is complete with its attributes (and synced) before the journal that
	 * says they are to be renamed, and the journal is durable before the first rename. */
	if (x->flags & IMASTREAM_EXTRACT_JOURNAL) {
		statefd = write_journal(x);
		if (statefd < -1) {
			err = statefd;
			statefd = -1;
			remove_all(x);
			goto out;
		}
	}
	for (i = 0; i < x->npend; i++) {
		struct pending *p = &x->pend[i];
		int dfd;

		test_rename_hooks(x, i);
		evict_dir_fds(x);
		dfd = dir_fd(x, p->dir);
		if (dfd < 0 || renameat(dfd, p->tmp, dfd, p->base)) {
			err = dfd < 0 ? dfd : -errno;
			ims_err(x->log, err, "%s: %s%s%s: cannot rename into place: %m (%zu of %zu files were already renamed)",
				x->pkg, x->dirs[p->dir].rel, *x->dirs[p->dir].rel ? "/" : "", p->base,
				i, x->npend);
			remove_all_temps(x, i);
			goto out;
		}
	}
	/*
	 * Directory mtimes last, as rpm leaves them: rpm gives a directory its header mtime
	 * when it reaches the directory's entry, before anything inside it, so a directory
	 * the package then puts a file in or creates a directory in ends with the time of
	 * the install; only one that gets nothing new keeps the header's.
	 */
	for (i = 0; i < x->npend; i++)
		x->dirs[x->pend[i].dir].filled = true;
	for (i = 1; i < x->ndirs; i++)
		if (x->dirs[i].created)
			x->dirs[x->dirs[i].parent].filled = true;
	for (i = 0; i < x->ndirs; i++) {
		struct dir *d = &x->dirs[i];
		int fd;

		if (d->filled)
			d->has_mtime = false;
		if (!d->has_mtime && !(x->flags & IMASTREAM_EXTRACT_FSYNC))
			continue;
		evict_dir_fds(x);
		fd = dir_fd(x, (int)i);
		if (fd < 0)
			continue;
		if (d->has_mtime && set_mtime_fd(fd, d->mtime))
			ims_logf(x->log, IMASTREAM_LOG_WARNING, "%s: %s: cannot set mtime: %m", x->pkg,
				 d->rel);
		if ((x->flags & IMASTREAM_EXTRACT_FSYNC) && fsync(fd))
			ims_logf(x->log, IMASTREAM_LOG_WARNING, "%s: %s: fsync: %m", x->pkg, d->rel);
	}
	x->stats.packages++;
	x->stats.entries += x->pkg_entries;
	x->stats.bytes += x->pkg_bytes;
out:
	if (x->sink.end_package)
		x->sink.end_package(x->sink.arg, err);
	if (statefd >= 0) {
		/* The sink's renames are done too (or, after a failure, its temps removed):
		 * the renames reach the disk before the journal that asks for them goes. */
		if ((x->flags & IMASTREAM_EXTRACT_SYNCFS) && syncfs(statefd))
			ims_logf(x->log, IMASTREAM_LOG_WARNING, "%s: syncfs: %m", x->pkg);
		ims_journal_remove(statefd);
		close(statefd);
	}
	reset_package(x);
	return err;
}

void imastream_extract_free(struct imastream_extract *x)
{
	if (!x)
		return;
	imastream_extract_abort(x, -ECANCELED);
	imastream_hasher_free(x->hasher);
	close(x->rootfd);
	free(x);
}
