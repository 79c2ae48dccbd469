// SPDX-License-Identifier: LGPL-2.1-or-later
/* What installed packages own, for the orphan search: their files, %ghost paths and directories, by real path below the root, from the rpm database and the install record. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>

#include <rpm/header.h>
#include <rpm/rpmfi.h>

#include "common/private.h"
#include "imastream/audit.h"
#include "imastream/record.h"
#include "imastream/rpmdb.h"
#include "installed/private.h"

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

/* Marks @dir/@base owned (@how: OWNED_*); a directory of a package is looked into too. */
static int own(struct orphans *o, const char *dir, const char *base, bool is_dir, int how)
{
	char key[2 * PATH_MAX + 2];
	int idx = real_dir(o, dir), err;

	if (idx == -ENOMEM)
		return idx;
	if (idx < 0)
		return 0;
	snprintf(key, sizeof(key), "%s%s%s", o->dirs[idx], *o->dirs[idx] ? "/" : "", base);
	err = ims_strmap_add(&o->owned, key, how);
	if (err == -EEXIST && how == OWNED_REAL)
		ims_strmap_set(&o->owned, key, how); /* a %ghost of one, a file of another */
	else if (err && err != -EEXIST)
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

int ims_orphans_own_header(void *arg, void *rpm_header)
{
	struct orphans *o = arg;
	rpmfi fi = rpmfiNew(NULL, (Header)rpm_header, RPMTAG_BASENAMES, RPMFI_FLAGS_QUERY);
	int err = 0;

	while (!err && fi && rpmfiNext(fi) >= 0)
		err = own(o, rpmfiDN(fi), rpmfiBN(fi), S_ISDIR(rpmfiFMode(fi)),
			  (rpmfiFFlags(fi) & RPMFILE_GHOST) ? OWNED_GHOST : OWNED_REAL);
	rpmfiFree(fi);
	return err;
}

/* What imastream install recorded is owned too, although the rpm database lacks it. */
int ims_orphans_own_recorded(void *arg, const struct imastream_record_file *f)
{
	struct orphans *o = arg;
	char dir[PATH_MAX];
	const char *slash = strrchr(f->path, '/');

	if (!slash)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - f->path), f->path);
	return own(o, dir, slash + 1, S_ISDIR(f->mode), OWNED_REAL);
}
