// SPDX-License-Identifier: LGPL-2.1-or-later
/* The extractor's entries: each object written under a temp name, its content digest checked as it streams in, handed to the sink. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/capability.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "common/private.h"
#include "installer/extract_state.h"

static int add_pending(struct imastream_extract *x, int dir, const char *tmp, const char *base)
{
	struct pending *p;

	p = ims_grow(x->pend, x->npend, &x->apend, sizeof(*p), 64);
	if (!p)
		return -ENOMEM;
	x->pend = p;
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

int ims_extract_set_mtime_fd(int fd, int64_t mtime)
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

	idx = ims_extract_get_dir(x, rel, strlen(rel), false);
	if (idx < 0)
		return idx;
	d = &x->dirs[idx];
	fd = ims_extract_dir_fd(x, idx);
	pfd = fd < 0 ? fd : ims_extract_dir_fd(x, d->parent);
	if (pfd < 0)
		return pfd;
	if (!(x->flags & IMASTREAM_EXTRACT_NO_CHOWN) && fchown(fd, x->cur.uid, x->cur.gid))
		return entry_err(x, -errno, "chown: %m");
	if (fchmod(fd, x->cur.mode & 07777))
		return entry_err(x, -errno, "chmod: %m");
	d->has_mtime = true;
	d->mtime = x->cur.mtime;
	err = sink_end(x, fd, pfd, ims_extract_dir_name(d), NULL);
	return err;
}

/* Creates the temp object of a non-directory entry in directory @dir. */
static int begin_nondir(struct imastream_extract *x, int dir, const char *base)
{
	int dfd = ims_extract_dir_fd(x, dir), sfd, err = 0, pend, src;
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

			src = ims_path_relative(x->cur.link_target, &target, &why) ?
				      -1 :
				      ims_strmap_get(&x->seen, target);
			if (src < 0)
				return entry_err(x, -EINVAL,
						 "hard link to '%s', which is not an earlier file "
						 "of the package",
						 x->cur.link_target);
			sfd = ims_extract_dir_fd(x, x->pend[src].dir);
			if (sfd < 0)
				return sfd;
			err = linkat(sfd, x->pend[src].tmp, dfd, tmp, 0);
		} else if (type == S_IFREG) {
			x->cur_fd = openat(
				dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
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
	ims_extract_evict_dir_fds(x);
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
	dir = slash ? ims_extract_get_dir(x, rel, (size_t)(slash - rel), true) : 0;
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
				return entry_err(x, err, "cannot hash with algorithm %d",
						 e->digest_algo);
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

void ims_extract_finish_entry(struct imastream_extract *x)
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
			return entry_err(x, err, "the hook chain failed on content: %s",
					 strerror(-err));
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
	int dfd = ims_extract_dir_fd(x, x->cur_dir), err;

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
			return entry_err(
				x, -EBADMSG,
				"%s digest mismatch: the content is not what the package declares",
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
	if (ims_extract_set_mtime_fd(x->cur_fd, x->cur.mtime))
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
	ims_extract_finish_entry(x);
	return 0;
}
