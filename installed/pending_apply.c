// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * imastream relabel --pending: the labels a user namespace could not write, checked
 * against the root's rpm database (or install record) and the file, then written as
 * real root, each entry removed once its file holds every value (resumable).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <rpm/header.h>
#include <rpm/rpmfi.h>
#include <rpm/rpmtag.h>

#include "common/private.h"
#include "imastream/hash.h"
#include "imastream/pending.h"
#include "imastream/record.h"
#include "imastream/rpmdb.h"
#include "imastream/xattr.h"
#include "installed/owners.h"
#include "installed/paths.h"
#include "installed/pending_run.h"
#include "plugin/core/pending_format.h"

/* The refusal line: the file's path in the root, why, and which entry. */
static void refuse(struct run *r, const struct item *it, const char *fmt, ...) ims_printf(3, 4);

static void refuse(struct run *r, const struct item *it, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	r->c.refused++;
	if (it->e.path && !it->malformed)
		ims_logf(r->log, IMASTREAM_LOG_ERR,
			 "%s%s: pending labels refused: %s (entry %s/%s)",
			 strcmp(r->root, "/") ? r->root : "", it->e.path, why, r->txns[it->txn],
			 it->name);
	else
		ims_logf(r->log, IMASTREAM_LOG_ERR, "%s/%s/%s/%s: pending-label entry refused: %s",
			 strcmp(r->root, "/") ? r->root : "", IMS_PENDING_DIR, r->txns[it->txn],
			 it->name, why);
}

static bool label_name(const char *name)
{
	static const char *const ok[] = { "security.ima",	  "security.evm",
					  "security.selinux",	  "security.SMACK64",
					  "security.SMACK64EXEC", "security.SMACK64TRANSMUTE",
					  "security.SMACK64MMAP", NULL };

	for (unsigned int i = 0; ok[i]; i++)
		if (!strcmp(name, ok[i]))
			return true;
	return false;
}

/* What the entry says against its package's header or record, before the file is read. */
static const char *check_entry(struct item *it, char *buf, size_t size)
{
	const struct ims_pending_entry *e = &it->e;

	for (unsigned int i = 0; i < e->n_xattrs; i++)
		if (!label_name(e->xattrs[i].name)) {
			snprintf(buf, size, "%s is not a value imastream writes",
				 e->xattrs[i].name);
			return buf;
		}
	if (!strcmp(e->package, "-")) {
		/* A parent directory no package owns gets labels only. */
		return S_ISDIR(e->mode) ? NULL : "a file without a package";
	}
	if (!it->ref.found) {
		snprintf(buf, size, "not a file of %s in the root's rpm database or install record",
			 e->package);
		return buf;
	}
	if (it->ref.ghost)
		return "a %ghost file of its package";
	if ((it->ref.mode & (S_IFMT | 07777)) != (e->mode & (S_IFMT | 07777))) {
		snprintf(buf, size, "mode %07o, its package says %07o", (unsigned int)e->mode,
			 (unsigned int)it->ref.mode);
		return buf;
	}
	if (it->ref.uid != e->uid || it->ref.gid != e->gid) {
		snprintf(buf, size, "owner %u:%u, its package says %u:%u", (unsigned int)e->uid,
			 (unsigned int)e->gid, (unsigned int)it->ref.uid,
			 (unsigned int)it->ref.gid);
		return buf;
	}
	if (it->ref.algo && it->ref.algo == e->digest_algo &&
	    memcmp(it->ref.digest, e->digest, e->digest_len))
		return "its recorded digest is not its package's";
	return NULL;
}

/* The content against the entry's digest. */
static int content_matches(struct run *r, int fd, const struct ims_pending_entry *e)
{
	const uint8_t *d;
	size_t len;
	int err;

	if (!r->hasher || !(r->hasher_algos & IMASTREAM_HASH_BIT(e->digest_algo))) {
		imastream_hasher_free(r->hasher);
		r->hasher = NULL;
		r->hasher_algos = IMASTREAM_HASH_BIT(e->digest_algo);
		err = imastream_hasher_new(r->hasher_algos, r->log, &r->hasher);
		if (err)
			return err;
	}
	err = imastream_hash_fd(r->hasher, fd);
	if (!err)
		err = imastream_hasher_digest(r->hasher, e->digest_algo, &d, &len);
	if (err)
		return err;
	return len == e->digest_len && !memcmp(d, e->digest, len);
}

/* A digest security.ima in the entry must be the content's. */
static bool ima_consistent(const struct ims_pending_entry *e)
{
	for (unsigned int i = 0; i < e->n_xattrs; i++) {
		struct imastream_xattr_info info = { .size = sizeof(info) };

		if (strcmp(e->xattrs[i].name, "security.ima"))
			continue;
		if (imastream_xattr_decode(e->xattrs[i].value, e->xattrs[i].len, &info, NULL))
			return false;
		if (info.type == IMASTREAM_XATTR_IMA_DIGEST_NG &&
		    (info.algo != e->digest_algo || info.data_len != e->digest_len ||
		     memcmp(info.data, e->digest, e->digest_len)))
			return false;
	}
	return true;
}

/*
 * The file as the build left it, given the image's owner: chown(2) drops the set-id bits
 * and the capabilities, so the mode is set again and a capability the namespace wrote
 * (a version 3 one, for the namespace's root) is written back in the version 2 form the
 * build's namespace read it in, and its EVM signature covers.
 */
static int give_owner(int fd, const struct ims_pending_entry *e)
{
	uint8_t cap[24];
	ssize_t n = fgetxattr(fd, "security.capability", cap, sizeof(cap));

	if (fchown(fd, e->uid, e->gid) < 0 || fchmod(fd, e->mode & 07777) < 0)
		return -errno;
	if (n == 24 && cap[3] == 3) {
		cap[3] = 2; /* VFS_CAP_REVISION_3 → _2: the same data without the root id */
		n = 20;
	}
	if (n == 20 && fsetxattr(fd, "security.capability", cap, (size_t)n, 0) < 0)
		return -errno;
	return 0;
}

/*
 * The header's capabilities, when it has some and the file lacks them: a run killed
 * after chown(2) dropped them is completed here, before security.evm, which covers them.
 */
static int header_caps(struct run *r, int fd, const struct ref *ref)
{
	cap_t want, have;
	int err = 0;

	if (!ref->caps)
		return 0;
	want = cap_from_text(ref->caps);
	if (!want)
		return -EINVAL;
	have = cap_get_fd(fd);
	if (!have || cap_compare(want, have)) {
		if (cap_set_fd(fd, want) < 0)
			err = -errno;
		else
			r->c.written++;
	}
	cap_free(want);
	if (have)
		cap_free(have);
	return err;
}

/* Writes the values the file does not hold, security.evm last (the entry's order). */
static int write_values(struct run *r, int fd, const char *lpath, const struct ims_pending_entry *e)
{
	static uint8_t have[IMS_PENDING_MAX_VALUE];

	for (unsigned int i = 0; i < e->n_xattrs; i++) {
		const struct ims_pending_xattr *x = &e->xattrs[i];
		ssize_t n = fd >= 0 ? fgetxattr(fd, x->name, have, sizeof(have)) :
				      lgetxattr(lpath, x->name, have, sizeof(have));

		if (n == (ssize_t)x->len && !memcmp(have, x->value, x->len))
			continue;
		if ((fd >= 0 ? fsetxattr(fd, x->name, x->value, x->len, 0) :
			       lsetxattr(lpath, x->name, x->value, x->len, 0)) < 0)
			return -errno;
		r->c.written++;
	}
	return 0;
}

/* Where an entry's file is: its directory, its name in it, what it is. */
struct entry_file {
	int dirfd, fd; /* fd: a regular file or a directory, -1 for a symlink */
	const char *name;
	struct stat st;
	bool built_owner; /* it still has the build's owner, not the header's */
};

/*
 * Opens the entry's file: its directory as rpm opens it (a merged /usr's links followed,
 * inside the root only), the file itself never through a symlink, so that nothing outside
 * the root is reached.  0, or -1 once refused.
 */
static int open_entry(struct run *r, struct item *it, struct entry_file *f)
{
	const struct ims_pending_entry *e = &it->e;
	char *slash = strrchr(e->path, '/');

	*slash = '\0';
	f->dirfd = imastream_open_dir_as_rpm(r->rootfd, slash == e->path ? "/" : e->path, O_PATH,
					     NULL, 0);
	*slash = '/';
	f->name = slash + 1;
	if (f->dirfd < 0) {
		refuse(r, it, "its directory cannot be reached below the root: %s",
		       f->dirfd == -EPERM ? "a symlink rpm would not follow" :
		       f->dirfd == -ELOOP ? "a symlink that leads nowhere below the root" :
					    strerror(-f->dirfd));
		return -1;
	}
	if (fstatat(f->dirfd, f->name, &f->st, AT_SYMLINK_NOFOLLOW) < 0) {
		refuse(r, it, "%s", strerror(errno));
		return -1;
	}
	if ((f->st.st_mode & S_IFMT) != (e->mode & S_IFMT)) {
		refuse(r, it, "its type changed since the build");
		return -1;
	}
	if (S_ISREG(f->st.st_mode) || S_ISDIR(f->st.st_mode)) {
		f->fd = openat(f->dirfd, f->name,
			       O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (f->fd < 0 || fstat(f->fd, &f->st) < 0 ||
		    (f->st.st_mode & S_IFMT) != (e->mode & S_IFMT)) {
			refuse(r, it, "cannot be opened: %s", strerror(errno));
			return -1;
		}
	} else if (!S_ISLNK(f->st.st_mode)) {
		refuse(r, it, "neither a file, a directory nor a symlink");
		return -1;
	}
	return 0;
}

/*
 * Whether the file is still what the build left: the build's or the header's owner and
 * mode, no link from elsewhere, its content and security.ima.  0, or -1 once refused.
 */
static int check_file(struct run *r, struct item *it, struct entry_file *f)
{
	const struct ims_pending_entry *e = &it->e;
	const struct stat *st = &f->st;
	mode_t have = st->st_mode & 07777, want = e->mode & 07777;
	int err;

	f->built_owner = st->st_uid == e->built_uid && st->st_gid == e->built_gid &&
			 (st->st_uid != e->uid || st->st_gid != e->gid);
	if (!f->built_owner && (st->st_uid != e->uid || st->st_gid != e->gid)) {
		refuse(r, it, "owner %u:%u, neither the header's %u:%u nor the build's %u:%u",
		       (unsigned int)st->st_uid, (unsigned int)st->st_gid, (unsigned int)e->uid,
		       (unsigned int)e->gid, (unsigned int)e->built_uid,
		       (unsigned int)e->built_gid);
		return -1;
	}
	/*
	 * A symlink's mode says nothing.  A run killed between chown(2) and chmod(2) left the
	 * header's owner without the set-id bits: that mode is set again.
	 */
	if (!S_ISLNK(st->st_mode) && have != want &&
	    (f->built_owner || have != (want & ~(mode_t)(S_ISUID | S_ISGID)))) {
		refuse(r, it, "mode %04o since the build, the header's is %04o", (unsigned int)have,
		       (unsigned int)want);
		return -1;
	}
	/* A link from elsewhere (maybe outside the root) would be given owner and labels too. */
	if (S_ISREG(st->st_mode) && it->ref.nlink && st->st_nlink > it->ref.nlink) {
		refuse(r, it, "%lu hard links, its package gives it %u: a link from elsewhere",
		       (unsigned long)st->st_nlink, it->ref.nlink);
		return -1;
	}
	if (S_ISREG(st->st_mode)) {
		err = content_matches(r, f->fd, e);
		if (err <= 0) {
			if (err < 0)
				refuse(r, it, "cannot be read: %s", strerror(-err));
			else
				refuse(r, it, "its content changed since the build");
			return -1;
		}
	}
	if (!ima_consistent(e)) {
		refuse(r, it, "its security.ima is not a value of its content");
		return -1;
	}
	return 0;
}

/*
 * The header's owner and mode, its capabilities and the values the file lacks, then the
 * entry removed.  A failure here is the run's own (not the entry's): said, the entry kept
 * for a rerun.
 */
static void write_file(struct run *r, struct item *it, const struct entry_file *f)
{
	const struct ims_pending_entry *e = &it->e;
	char lpath[64 + NAME_MAX];
	int err = 0;

	snprintf(lpath, sizeof(lpath), "/proc/self/fd/%d/%s", f->dirfd, f->name);
	if (S_ISLNK(f->st.st_mode) && f->built_owner)
		err = fchownat(f->dirfd, f->name, e->uid, e->gid, AT_SYMLINK_NOFOLLOW) < 0 ?
			      -errno :
			      0;
	else if (f->built_owner || (f->st.st_mode & 07777) != (e->mode & 07777))
		err = give_owner(f->fd, e);
	if (!err && f->fd >= 0 && S_ISREG(f->st.st_mode))
		err = header_caps(r, f->fd, &it->ref);
	if (!err)
		err = write_values(r, f->fd, lpath, e);
	if (err) {
		refuse(r, it, "cannot write: %s", strerror(-err));
		return;
	}
	if (unlinkat(r->txnfds[it->txn], it->name, 0) < 0)
		ims_logf(r->log, IMASTREAM_LOG_WARNING,
			 "%s%s: labels written, but its entry %s/%s "
			 "cannot be removed: %s",
			 strcmp(r->root, "/") ? r->root : "", e->path, r->txns[it->txn], it->name,
			 strerror(errno));
	r->c.applied++;
}

static void apply_one(struct run *r, struct item *it)
{
	struct entry_file f = { .dirfd = -1, .fd = -1 };
	char why[256];
	const char *bad;

	if (it->err) {
		refuse(r, it, "%s", it->why);
		return;
	}
	bad = check_entry(it, why, sizeof(why));
	if (bad) {
		refuse(r, it, "%s", bad);
		return;
	}
	if (!open_entry(r, it, &f) && !check_file(r, it, &f))
		write_file(r, it, &f);
	if (f.fd >= 0)
		close(f.fd);
	if (f.dirfd >= 0)
		close(f.dirfd);
}

int imastream_pending_apply(const char *root, struct imastream_pending_counts *counts,
			    const struct imastream_log *log)
{
	struct run r;
	int err;

	if (counts) {
		err = IMS_CHECK_OUT_SIZE(log, counts, imastream_pending_counts, refused);
		if (err)
			return err;
	}
	err = ims_pending_start(&r, root, log);
	if (!err)
		err = ims_pending_dedup(&r) ? ims_err(log, -ENOMEM, "out of memory") : 0;
	if (!err && r.nitems)
		err = ims_pending_references(&r);
	for (size_t i = 0; !err && i < r.nitems; i++) {
		struct item *it = &r.items[i];

		r.c.entries++;
		if (it->drop)
			unlinkat(r.txnfds[it->txn], it->name, 0);
		else
			apply_one(&r, it);
	}
	/* Transactions left empty go, and the directory with the last of them. */
	for (size_t t = 0; !err && t < r.ntxns; t++)
		if (r.txnfds[t] >= 0) {
			int pfd = imastream_open_beneath(r.rootfd, "/" IMS_PENDING_DIR,
							 O_PATH | O_DIRECTORY);

			if (pfd >= 0) {
				unlinkat(pfd, r.txns[t], AT_REMOVEDIR);
				close(pfd);
			}
		}
	if (!err && r.nitems) {
		int lib = imastream_open_beneath(r.rootfd, "/var/lib/imastream",
						 O_PATH | O_DIRECTORY);

		if (lib >= 0) {
			unlinkat(lib, "pending", AT_REMOVEDIR);
			close(lib);
		}
		/* Durable before the entries' removal can be: one syncfs, not one per file. */
		syncfs(r.rootfd);
	}
	if (counts) {
		r.c.size = sizeof(r.c);
		IMS_FILL_SIZED(counts, &r.c);
	}
	ims_pending_run_free(&r);
	return err;
}

int imastream_pending_foreach(const char *root, int (*fn)(void *arg, const char *path), void *arg,
			      const struct imastream_log *log)
{
	struct run r;
	int err = ims_pending_start(&r, root, log);

	for (size_t i = 0; !err && i < r.nitems; i++) {
		char name[sizeof(IMS_PENDING_DIR) + 128];

		if (r.items[i].e.path) {
			err = fn(arg, r.items[i].e.path);
			continue;
		}
		snprintf(name, sizeof(name), "/%s/%s/%s", IMS_PENDING_DIR, r.txns[r.items[i].txn],
			 r.items[i].name);
		err = fn(arg, name);
	}
	ims_pending_run_free(&r);
	return err;
}
