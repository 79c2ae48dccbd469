// SPDX-License-Identifier: LGPL-2.1-or-later
/* Labelled files no installed package owns, in the directories installed packages own. */
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

#include <rpm/header.h>
#include <rpm/rpmfi.h>

#include "common/private.h"
#include "imastream/audit.h"
#include "imastream/record.h"
#include "imastream/rpmdb.h"
#include "imastream/xattr.h"
#include "installed/private.h"

struct orphans {
	int rootfd;
	unsigned int flags;
	struct ims_strmap owned;   /* real paths below the root of every owned object */
	struct ims_strmap dir_of;  /* a package directory ("/bin/") -> index in dirs, -1 */
	struct ims_strmap dir_set; /* a real directory -> index in dirs */
	char **dirs;		   /* real directories to look into, "" for the root */
	bool *dir_owned;	   /* per dirs: a package lists it (a %dir), not only its files */
	size_t ndirs, adirs;
	const struct imastream_log *log;
};

static int add_dir(struct orphans *o, const char *real)
{
	int idx = ims_strmap_get(&o->dir_set, real), err;

	if (idx >= 0)
		return idx;
	if (o->ndirs == o->adirs) {
		size_t n = o->adirs ? 2 * o->adirs : 64;
		char **d = realloc(o->dirs, n * sizeof(*d));
		bool *owned;

		if (!d)
			return -ENOMEM;
		o->dirs = d;
		owned = realloc(o->dir_owned, n * sizeof(*owned));
		if (!owned)
			return -ENOMEM;
		o->dir_owned = owned;
		o->adirs = n;
	}
	o->dir_owned[o->ndirs] = false;
	o->dirs[o->ndirs] = strdup(real);
	if (!o->dirs[o->ndirs])
		return -ENOMEM;
	err = ims_strmap_add(&o->dir_set, real, (int)o->ndirs);
	if (err) {
		free(o->dirs[o->ndirs]);
		return err;
	}
	return (int)o->ndirs++;
}

/*
 * The real directory of package directory @dir, through the symlinks rpm follows,
 * remembered: its index in dirs, or -1 when it cannot be reached (nothing of it is there).
 */
static int real_dir(struct orphans *o, const char *dir)
{
	char real[PATH_MAX];
	int idx = ims_strmap_get(&o->dir_of, dir), fd, err;

	if (idx != -1)
		return idx == INT_MAX ? -1 : idx;
	fd = imastream_open_dir_as_rpm(o->rootfd, dir, O_PATH, real, sizeof(real));
	if (fd >= 0) {
		close(fd);
		idx = add_dir(o, real);
		if (idx < 0)
			return idx;
	}
	err = ims_strmap_add(&o->dir_of, dir, fd >= 0 ? idx : INT_MAX);
	if (err)
		return err;
	return fd >= 0 ? idx : -1;
}

/* Marks @dir/@base owned; a directory of a package is looked into too. */
static int own(struct orphans *o, const char *dir, const char *base, bool is_dir)
{
	char key[2 * PATH_MAX + 2];
	int idx = real_dir(o, dir), err;

	if (idx == -ENOMEM)
		return idx;
	if (idx < 0)
		return 0;
	snprintf(key, sizeof(key), "%s%s%s", o->dirs[idx], *o->dirs[idx] ? "/" : "", base);
	err = ims_strmap_add(&o->owned, key, 1);
	if (err && err != -EEXIST)
		return err;
	if (is_dir && *base) {
		char full[2 * PATH_MAX + 2];

		snprintf(full, sizeof(full), "%s/%s", dir, base);
		err = real_dir(o, full);
		if (err == -ENOMEM)
			return err;
		if (err >= 0)
			o->dir_owned[err] = true;
	}
	return 0;
}

static int own_header(void *arg, void *rpm_header)
{
	struct orphans *o = arg;
	rpmfi fi = rpmfiNew(NULL, (Header)rpm_header, RPMTAG_BASENAMES, RPMFI_FLAGS_QUERY);
	int err = 0;

	while (!err && fi && rpmfiNext(fi) >= 0)
		err = own(o, rpmfiDN(fi), rpmfiBN(fi), S_ISDIR(rpmfiFMode(fi)));
	rpmfiFree(fi);
	return err;
}

/* What imastream install recorded is owned too, although the rpm database lacks it. */
static int own_recorded(void *arg, const struct imastream_record_file *f)
{
	struct orphans *o = arg;
	char dir[PATH_MAX];
	const char *slash = strrchr(f->path, '/');

	if (!slash)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - f->path), f->path);
	return own(o, dir, slash + 1, S_ISDIR(f->mode));
}

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

/* Whether @path has xattr @name: 0 no, 1 yes, 2 a signature (its type byte says). */
static int label_of(const char *path, const char *name)
{
	uint8_t value[1024]; /* the kernel allocates what it is offered, as the audit reads */
	ssize_t n = lgetxattr(path, name, value, sizeof(value));

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

/* One directory: its labelled regular files nobody owns, in name order. */
static int look_into(struct orphans *o, size_t idx,
		     void (*fn)(void *arg, const struct imastream_orphan *f), void *arg)
{
	const char *dir = o->dirs[idx];
	bool user = o->flags & IMASTREAM_ORPHANS_XATTR_USER;
	const char *ima_name = imastream_xattr_name(IMASTREAM_ATTR_IMA, user);
	const char *evm_name = imastream_xattr_name(IMASTREAM_ATTR_EVM, user);
	char **names = NULL;
	size_t n = 0, a = 0;
	struct dirent *de;
	int dfd, err = 0;
	DIR *d;

	dfd = imastream_open_dir_as_rpm(o->rootfd, dir, O_RDONLY, NULL, 0);
	if (dfd < 0)
		return 0; /* gone, or no longer reachable: nothing of it to report */
	d = fdopendir(dup(dfd));
	if (!d) {
		close(dfd);
		return -ENOMEM;
	}
	while (!err && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == a) {
			char **m = realloc(names, (a = a ? 2 * a : 32) * sizeof(*m));

			if (!m) {
				err = -ENOMEM;
				break;
			}
			names = m;
		}
		if (!(names[n] = strdup(de->d_name)))
			err = -ENOMEM;
		else
			n++;
	}
	closedir(d);
	if (!err && n)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; !err && i < n; i++) {
		char key[2 * PATH_MAX + 2], proc[64 + NAME_MAX], path[2 * PATH_MAX + 3];
		struct imastream_orphan f = { .path = path };
		struct stat st;

		snprintf(key, sizeof(key), "%s%s%s", dir, *dir ? "/" : "", names[i]);
		if (ims_strmap_get(&o->owned, key) >= 0)
			continue;
		if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d/%s", dfd, names[i]);
		{
			int ima = label_of(proc, ima_name), evm = label_of(proc, evm_name);

			f.ima = ima > 0;
			f.evm = evm > 0;
			f.sig = ima == 2 || evm == 2;
		}
		if (!f.ima && !f.evm)
			continue;
		snprintf(path, sizeof(path), "/%s", key);
		f.kind = rpm_temp_name(names[i])		   ? IMASTREAM_ORPHAN_RPM_TEMP :
			 !strncmp(names[i], ".imastream-tmp-", 15) ? IMASTREAM_ORPHAN_INSTALL_TEMP :
			 rpm_backup_name(names[i])		   ? IMASTREAM_ORPHAN_RPM_BACKUP :
								     IMASTREAM_ORPHAN_UNOWNED;
		if (!f.sig && f.kind != IMASTREAM_ORPHAN_RPM_TEMP &&
		    !(o->flags & IMASTREAM_ORPHANS_UNSIGNED))
			continue;
		/*
		 * A file of no special name is an orphan only where a package owns the
		 * directory itself: one that merely holds a package's files may be shared
		 * with another owner (dpkg, a local rule that signs what it installs).
		 */
		if (f.kind == IMASTREAM_ORPHAN_UNOWNED && !o->dir_owned[idx])
			continue;
		if (o->flags & IMASTREAM_ORPHANS_FIX) {
			if (f.kind == IMASTREAM_ORPHAN_RPM_TEMP) {
				f.fixed = unlinkat(dfd, names[i], 0) ? -errno : 1;
			} else if (f.kind != IMASTREAM_ORPHAN_INSTALL_TEMP) {
				/* security.evm first: it covers security.ima. */
				f.fixed = 1;
				if (f.evm && lremovexattr(proc, evm_name) && errno != ENODATA)
					f.fixed = -errno;
				if (f.fixed > 0 && f.ima && lremovexattr(proc, ima_name) &&
				    errno != ENODATA)
					f.fixed = -errno;
			}
		}
		fn(arg, &f);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	close(dfd);
	return err;
}

int imastream_orphans_rpmdb(const char *root, unsigned int flags,
			    void (*fn)(void *arg, const struct imastream_orphan *f), void *arg,
			    const struct imastream_log *log)
{
	struct orphans o = { .flags = flags, .log = log };
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
	err = imastream_rpmdb_foreach(root, NULL, 0, own_header, &o, log);
	if (!err)
		err = imastream_record_foreach(o.rootfd, own_recorded, &o, log);
	if (err == -ENOMEM)
		ims_err(log, err, "orphans: out of memory");
	for (size_t i = 0; !err && i < o.ndirs; i++) {
		err = look_into(&o, i, fn, arg);
		if (err)
			ims_err(log, err, "%s/%s: %s", strcmp(root, "/") ? root : "", o.dirs[i],
				strerror(-err));
	}
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
