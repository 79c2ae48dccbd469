// SPDX-License-Identifier: LGPL-2.1-or-later
/* Labelled files no installed package owns: rpm's temp files anywhere in the root, others in and below the directories installed packages own. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/private.h"
#include "imastream/audit.h"
#include "imastream/filesig.h"
#include "imastream/record.h"
#include "imastream/rpmdb.h"
#include "imastream/xattr.h"
#include "installed/private.h"
#include "xattr/codec.h"

/* rpm's temp name of a file being installed: NAME;XXXXXXXX, the transaction id in hex (fsm.c). */
static bool rpm_temp_name(const char *name)
{
	size_t len = strlen(name);

	if (len < 10 || name[len - 9] != ';')
		return false;
	for (size_t i = len - 8; i < len; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return true;
}

/* rpm's copies of a %config file it did not put in place or took out of it. */
static bool rpm_backup_name(const char *name)
{
	static const char *const suffixes[] = { ".rpmnew", ".rpmsave", ".rpmorig" };
	size_t len = strlen(name);

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t n = strlen(suffixes[i]);

		if (len > n && !strcmp(name + len - n, suffixes[i]))
			return true;
	}
	return false;
}

/* Whether the inode @proc (/proc/self/fd/N) has xattr @name: 0 no, 1 yes, 2 a signature. */
static int label_of(const char *proc, const char *name)
{
	uint8_t value[1024]; /* the kernel allocates what it is offered, as the audit reads */
	ssize_t n = getxattr(proc, name, value, sizeof(value));

	if (n < 0)
		return errno == ERANGE ? 1 : 0;
	if (n == 0)
		return 0;
	return value[0] == IMASTREAM_XATTR_DIGSIG || value[0] == IMASTREAM_XATTR_EVM_PORTABLE ||
			       value[0] == IMASTREAM_XATTR_IMA_VERITY_SIG ?
		       2 :
		       1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of directory @dfd in name order (NULL-terminated), or NULL (-ENOMEM, gone). */
static char **names_of(int dfd, int *err)
{
	char **names = NULL, **m;
	size_t n = 0, a = 0;
	struct dirent *de;
	DIR *d;
	int fd = dup(dfd);

	*err = 0;
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* (and room for the NULL that ends the list) */
		m = ims_grow(names, n + 1, &a, sizeof(*m), 32);
		if (!m)
			goto nomem;
		names = m;
		if (!(names[n] = strdup(de->d_name)))
			goto nomem;
		n++;
	}
	closedir(d);
	if (!names && !(names = calloc(1, sizeof(*names))))
		goto nomem_closed;
	names[n] = NULL;
	qsort(names, n, sizeof(*names), by_name);
	return names;
nomem:
	closedir(d);
nomem_closed:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	*err = -ENOMEM;
	return NULL;
}

static void free_names(char **names)
{
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
}

/* What a directory of the walk is to the orphan rules. */
struct place {
	const char *rel; /* its real path below the root, "" for the root */
	bool has_files;	 /* a package has files in it, or lists it */
	bool owned;	 /* a package lists it (%dir), or it is a new one below such */
};

/*
 * Takes security.evm then security.ima (it covers security.ima) off the inode @proc
 * names.  Return: 1, or -errno.
 */
static int unlabel(const char *proc, const struct imastream_orphan *f, const char *ima_name,
		   const char *evm_name)
{
	if (f->evm && removexattr(proc, evm_name) && errno != ENODATA)
		return -errno;
	if (f->ima && removexattr(proc, ima_name) && errno != ENODATA)
		return -errno;
	return 1;
}

/*
 * Whether a signature on @pfd (O_PATH) verifies with the trust store, over its content:
 * an IMA signature, or an EVM signature over a security.ima digest that matches it (what
 * the plugin writes on a %config file).
 */
static bool signed_by_trust(struct orphans *o, int pfd, const char *path, bool ima_sig)
{
	struct imastream_verify_report r = { .size = sizeof(r) };
	unsigned int flags = (o->flags & IMASTREAM_ORPHANS_XATTR_USER) ? IMASTREAM_FILESIG_USER : 0;
	char proc[64];
	int fd;
	bool ok;

	if (!o->v)
		return false;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = !imastream_verify_file(o->v, fd, path, flags, &r) &&
	     r.ima.result == IMASTREAM_VERIFY_OK &&
	     (ima_sig || r.evm.result == IMASTREAM_VERIFY_OK);
	close(fd);
	return ok;
}

/* The counts of inode @st (of more than one name): its index in inodes, or -ENOMEM. */
static int inode_names(struct orphans *o, const struct stat *st)
{
	struct inode_names *m;
	char key[64];
	int idx, err;

	snprintf(key, sizeof(key), "%llx:%llx", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
	idx = ims_strmap_get(&o->inode_of, key);
	if (idx >= 0)
		return idx;
	m = ims_grow(o->inodes, o->ninodes, &o->ainodes, sizeof(*m), 16);
	if (!m)
		return -ENOMEM;
	o->inodes = m;
	err = ims_strmap_add(&o->inode_of, key, (int)o->ninodes);
	if (err)
		return err;
	o->inodes[o->ninodes] = (struct inode_names){ 0 };
	return (int)o->ninodes++;
}

/* An orphan of an inode with other names, handled once the walk has seen them all. */
static int defer(struct orphans *o, const char *key, const struct imastream_orphan *f,
		 const struct stat *st, int idx)
{
	struct later *m = ims_grow(o->later, o->nlater, &o->alater, sizeof(*m), 8);

	if (!m)
		return -ENOMEM;
	o->later = m;
	o->later[o->nlater] = (struct later){
		.key = strdup(key), .f = *f, .dev = st->st_dev, .ino = st->st_ino, .idx = idx
	};
	if (!o->later[o->nlater].key)
		return -ENOMEM;
	o->nlater++;
	return 0;
}

/*
 * File @name of directory @dfd (@at): an orphan to report (and with _FIX, mend)?
 * Everything is done on an O_PATH descriptor checked a regular file: a name swapped in
 * between leads nowhere else.  Return: 0, or -ENOMEM.
 */
static int look_at(struct orphans *o, int dfd, const struct place *at, const char *name,
		   void (*fn)(void *arg, const struct imastream_orphan *f), void *arg)
{
	bool user = o->flags & IMASTREAM_ORPHANS_XATTR_USER;
	const char *ima_name = imastream_xattr_name(IMASTREAM_ATTR_IMA, user);
	const char *evm_name = imastream_xattr_name(IMASTREAM_ATTR_EVM, user);
	char key[2 * PATH_MAX + 2], proc[64], path[2 * PATH_MAX + 3];
	struct imastream_orphan f = { .path = path };
	int owned, fd, ima, evm, idx = -1, err = 0;
	struct stat st, now;

	snprintf(key, sizeof(key), "%s%s%s", at->rel, *at->rel ? "/" : "", name);
	fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto out;
	/* An inode of several names: its orphan names are counted. */
	if (st.st_nlink > 1) {
		idx = inode_names(o, &st);
		if (idx < 0) {
			err = idx;
			goto out;
		}
	}
	owned = ims_strmap_get(&o->owned, key);
	if (owned == OWNED_REAL)
		goto out;
	if (rpm_temp_name(name)) {
		/* rpm's temp name: rpm writes them anywhere a package goes.  Removed only
		 * beside a file a package lists (an upgrade's, a reinstall's); elsewhere (a
		 * killed rpm -i, or not rpm's at all) only unlabelled. */
		char final[2 * PATH_MAX + 2];

		snprintf(final, sizeof(final), "%.*s", (int)(strlen(key) - 9), key);
		f.kind = ims_strmap_get(&o->owned, final) == OWNED_REAL ?
				 IMASTREAM_ORPHAN_RPM_TEMP :
				 IMASTREAM_ORPHAN_RPM_TEMP_UNOWNED;
	} else if (!strncmp(name, ".imastream-tmp-", 15)) {
		f.kind = IMASTREAM_ORPHAN_INSTALL_TEMP;
	} else if (owned == OWNED_GHOST) {
		f.kind = IMASTREAM_ORPHAN_GHOST;
	} else if (rpm_backup_name(name) && (at->has_files || at->owned)) {
		f.kind = IMASTREAM_ORPHAN_RPM_BACKUP;
	} else if (at->owned) {
		/* Any other name only where a package lists the directory itself (or below
		 * it): one that merely holds packages' files may be shared with another
		 * owner (dpkg, a local rule that signs what it installs). */
		f.kind = IMASTREAM_ORPHAN_UNOWNED;
	} else {
		goto out;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	ima = label_of(proc, ima_name);
	evm = label_of(proc, evm_name);
	f.ima = ima > 0;
	f.evm = evm > 0;
	f.sig = ima == 2 || evm == 2;
	/* An rpm temp file whatever it carries; others with a signature (a digest or an
	 * HMAC alone the kernel writes itself where it appraises by digest). */
	if ((!f.ima && !f.evm) || (!f.sig && f.kind != IMASTREAM_ORPHAN_RPM_TEMP &&
				   f.kind != IMASTREAM_ORPHAN_RPM_TEMP_UNOWNED &&
				   !(o->flags & IMASTREAM_ORPHANS_UNSIGNED)))
		goto out;
	if (idx >= 0)
		o->inodes[idx].orphans++;
	snprintf(path, sizeof(path), "/%s", key);
	/* A killed rpm -i's, beside no package's file yet: rpm's if the plugin's signature
	 * on it verifies. */
	if (f.kind == IMASTREAM_ORPHAN_RPM_TEMP_UNOWNED && f.sig &&
	    signed_by_trust(o, fd, path, ima == 2))
		f.kind = IMASTREAM_ORPHAN_RPM_TEMP;
	if (f.kind == IMASTREAM_ORPHAN_RPM_TEMP) {
		/* A name goes, not the labels: any other name of it keeps them. */
		if (!(o->flags & IMASTREAM_ORPHANS_FIX))
			;
		else if (fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) || now.st_ino != st.st_ino ||
			 now.st_dev != st.st_dev)
			f.fixed = -EAGAIN;
		else
			f.fixed = unlinkat(dfd, name, 0) ? -errno : 1;
		/* A name gone no longer counts against the inode's link count. */
		if (f.fixed > 0 && idx >= 0)
			o->inodes[idx].orphans--;
	} else if (f.kind != IMASTREAM_ORPHAN_INSTALL_TEMP && idx >= 0) {
		/* Labels belong to the inode: whether its other names are orphans too is
		 * known once the walk has seen them all. */
		err = defer(o, key, &f, &st, idx);
		goto out;
	} else if (f.kind != IMASTREAM_ORPHAN_INSTALL_TEMP && (o->flags & IMASTREAM_ORPHANS_FIX)) {
		f.fixed = unlabel(proc, &f, ima_name, evm_name);
	}
	fn(arg, &f);
out:
	close(fd);
	return err;
}

/*
 * The orphans of inodes of several names, once the walk has seen every name below the
 * root: unlabelled when all their names are orphans, else left (@shared says how many
 * are not).  Each is opened again below the root and checked the same inode.
 */
static void look_again(struct orphans *o, void (*fn)(void *arg, const struct imastream_orphan *f),
		       void *arg)
{
	bool user = o->flags & IMASTREAM_ORPHANS_XATTR_USER;
	const char *ima_name = imastream_xattr_name(IMASTREAM_ATTR_IMA, user);
	const char *evm_name = imastream_xattr_name(IMASTREAM_ATTR_EVM, user);

	for (size_t i = 0; i < o->nlater; i++) {
		struct later *l = &o->later[i];
		const struct inode_names *in = &o->inodes[l->idx];
		char path[2 * PATH_MAX + 3], proc[64];
		struct stat st;
		int fd;

		snprintf(path, sizeof(path), "/%s", l->key);
		l->f.path = path;
		/* Its names the walk did not see are outside the root (or where it does
		 * not look): not orphans. */
		fd = imastream_open_beneath(o->rootfd, l->key, O_PATH);
		if (fd >= 0 && !fstat(fd, &st) && st.st_dev == l->dev && st.st_ino == l->ino) {
			l->f.shared = st.st_nlink > in->orphans ? st.st_nlink - in->orphans : 0;
			if (!l->f.shared && (o->flags & IMASTREAM_ORPHANS_FIX)) {
				snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
				l->f.fixed = unlabel(proc, &l->f, ima_name, evm_name);
			}
		} else if (o->flags & IMASTREAM_ORPHANS_FIX) {
			l->f.fixed = fd < 0 ? fd : -EAGAIN; /* gone or changed since */
		}
		if (fd >= 0)
			close(fd);
		fn(arg, &l->f);
	}
}

/*
 * Directory @dfd (closed here) at @rel (a buffer of PATH_MAX, restored on return), below
 * one that is @parent_owned on device @parent_dev, and all below it: no link followed, no
 * proc or sysfs.
 */
static int walk(struct orphans *o, int dfd, char *rel, bool parent_owned, dev_t parent_dev,
		unsigned int depth, void (*fn)(void *arg, const struct imastream_orphan *f),
		void *arg)
{
	size_t len = strlen(rel);
	struct place at = { .rel = rel };
	struct stat st;
	char **names;
	int idx, err = 0;

	if (depth > IMS_PATH_MAX_DEPTH || fstat(dfd, &st) || ims_pseudo_fs(dfd)) {
		close(dfd);
		return 0;
	}
	idx = ims_strmap_get(&o->dir_set, rel);
	at.has_files = idx >= 0;
	/* A directory no package has, below one a package lists, on the same filesystem:
	 * someone made it there (a killed transaction, by hand). */
	at.owned = idx >= 0 ? o->dir_owned[idx] : parent_owned && st.st_dev == parent_dev;
	names = names_of(dfd, &err);
	for (size_t i = 0; !err && names && names[i]; i++) {
		const char *n = names[i];
		struct stat sb;

		if (fstatat(dfd, n, &sb, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(sb.st_mode)) {
			int cfd;

			if (len + 1 + strlen(n) >= PATH_MAX)
				continue;
			cfd = openat(dfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0)
				continue; /* gone, or not readable: nothing of it to report */
			snprintf(rel + len, PATH_MAX - len, "%s%s", len ? "/" : "", n);
			err = walk(o, cfd, rel, at.owned, st.st_dev, depth + 1, fn, arg);
			rel[len] = 0;
		} else if (S_ISREG(sb.st_mode)) {
			err = look_at(o, dfd, &at, n, fn, arg);
		}
	}
	free_names(names);
	close(dfd);
	return err;
}

int imastream_orphans_rpmdb(const char *root, unsigned int flags,
			    void (*fn)(void *arg, const struct imastream_orphan *f), void *arg,
			    const struct imastream_log *log)
{
	return imastream_orphans_rpmdb_trusted(root, flags, NULL, fn, arg, log);
}

int imastream_orphans_rpmdb_trusted(const char *root, unsigned int flags,
				    struct imastream_verifier *v,
				    void (*fn)(void *arg, const struct imastream_orphan *f),
				    void *arg, const struct imastream_log *log)
{
	struct orphans o = { .flags = flags, .v = v, .log = log };
	int err;

	if (!root || root[0] != '/' || !fn)
		return ims_err(log, -EINVAL,
			       "orphans: an absolute root and a callback are required");
	if (flags &
	    ~(IMASTREAM_ORPHANS_FIX | IMASTREAM_ORPHANS_XATTR_USER | IMASTREAM_ORPHANS_UNSIGNED))
		return ims_err(log, -EINVAL, "orphans: unknown flags 0x%x", flags);
	o.rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (o.rootfd < 0)
		return ims_err(log, -errno, "%s: %m", root);
	err = imastream_rpmdb_foreach(root, NULL, 0, ims_orphans_own_header, &o, log);
	if (!err)
		err = imastream_record_foreach(o.rootfd, ims_orphans_own_recorded, &o, log);
	if (err == -ENOMEM)
		ims_err(log, err, "orphans: out of memory");
	if (!err) {
		char rel[PATH_MAX] = "";
		int fd = openat(o.rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		err = fd < 0 ? -errno : walk(&o, fd, rel, false, 0, 0, fn, arg);
		if (err)
			ims_err(log, err, "%s: %s", root, strerror(-err));
		else
			look_again(&o, fn, arg);
	}
	for (size_t i = 0; i < o.nlater; i++)
		free(o.later[i].key);
	free(o.later);
	free(o.inodes);
	ims_strmap_clear(&o.inode_of);
	for (size_t i = 0; i < o.ndirs; i++)
		free(o.dirs[i]);
	free(o.dirs);
	free(o.dir_owned);
	ims_strmap_clear(&o.owned);
	ims_strmap_clear(&o.dir_of);
	ims_strmap_clear(&o.dir_set);
	close(o.rootfd);
	return err;
}
