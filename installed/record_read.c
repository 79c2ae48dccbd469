// SPDX-License-Identifier: LGPL-2.1-or-later
/* The install record read back: every package's record file below the root, for the conflict check, verify --root and policy. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/private.h"
#include "installed/record_format.h"

/* The FORMAT of a record's first line, "imastream-record FORMAT"; 0 if it is not one. */
static unsigned long magic_version(const char *line)
{
	const char *v = line + strlen(RECORD_MAGIC);
	unsigned long version;
	char *end;

	if (strncmp(line, RECORD_MAGIC, strlen(RECORD_MAGIC)) || *v < '1' || *v > '9')
		return 0;
	errno = 0;
	version = strtoul(v, &end, 10);
	return errno || *end ? 0 : version;
}

/* Where the reading of one record file stands, for its next line and its error message. */
struct load {
	struct ims_record *rec;
	const char *fname;
	struct rpkg meta; /* the package's fields, until its first object line adds it */
	int pkg;	  /* its index in rec->pkgs once added, else -1 */
	unsigned int lineno;
	unsigned long version;
};

/* A package field line ("package NAME", "serial N"...): 1 taken, 0 not one, -EBADMSG. */
static int meta_line(struct rpkg *meta, char *line)
{
	char *val = strchr(line, ' '), *end;
	char **slot = NULL;

	if (!val)
		return 0;
	*val++ = 0;
	if (!strcmp(line, "serial")) {
		errno = 0;
		meta->serial = strtoul(val, &end, 10);
		return errno || *end || end == val ? -EBADMSG : 1;
	}
	if (!strcmp(line, "package"))
		slot = &meta->name;
	else if (!strcmp(line, "nevra"))
		slot = &meta->nevra;
	else if (!strcmp(line, "ima"))
		slot = &meta->ima;
	else if (!strcmp(line, "evm"))
		slot = &meta->evm;
	if (slot)
		return *slot || !ims_field_decode(val) || !(*slot = strdup(val)) ? -EBADMSG : 1;
	val[-1] = ' ';
	return 0;
}

/* An object line, added to the package (which the first one adds to the record). */
static int object_line(struct load *l, char *line)
{
	struct rfile rf;
	int idx, err;

	if (l->pkg < 0) {
		if (!l->meta.name)
			return -EBADMSG;
		l->pkg = ims_record_add_pkg(l->rec, &l->meta);
		if (l->pkg < 0)
			return l->pkg;
		memset(&l->meta, 0, sizeof(l->meta));
	}
	err = ims_record_parse_line(line, &rf);
	if (!err) {
		rf.pkg = l->pkg;
		idx = ims_record_add_file(&l->rec->files, &l->rec->nfiles, &l->rec->afiles, &rf);
		if (idx >= 0) {
			l->rec->pkgs[l->pkg].count++;
			return 0;
		}
		err = idx;
	}
	ims_record_file_release(&rf);
	return err;
}

/* Every line of @f: the format line, the package's fields, its objects. */
static int read_lines(struct load *l, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0, taken;

	while (!err && (len = getline(&line, &cap, f)) > 0) {
		l->lineno++;
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (l->lineno == 1) {
			l->version = magic_version(line);
			if (!l->version || l->version > RECORD_VERSION_MAX)
				err = -EBADMSG;
		} else if (l->pkg < 0 && (taken = meta_line(&l->meta, line))) {
			err = taken < 0 ? taken : 0;
		} else {
			err = object_line(l, line);
		}
	}
	free(line);
	if (!err && ferror(f))
		err = -EIO;
	if (!err && l->lineno == 0)
		err = -EBADMSG;
	if (!err && l->pkg < 0) {
		/* A package with no objects at all. */
		if (!l->meta.name)
			err = -EBADMSG;
		else if ((l->pkg = ims_record_add_pkg(l->rec, &l->meta)) < 0)
			err = l->pkg;
		else
			memset(&l->meta, 0, sizeof(l->meta));
	}
	return err;
}

/* The one line that says what is wrong with the record file, where. */
static void report(const struct load *l, int err)
{
	const struct imastream_log *log = l->rec->log;

	if (err == -EBADMSG && l->lineno == 0)
		ims_err(log, err,
			"record %s/%s is empty (an install was interrupted?): "
			"reinstall the package",
			RECORD_DIR, l->fname);
	else if (err == -EBADMSG && l->lineno == 1 && l->version > RECORD_VERSION_MAX)
		ims_err(log, err,
			"record %s/%s: format version %lu, newer than this imastream "
			"reads (%d): a newer imastream wrote it",
			RECORD_DIR, l->fname, l->version, RECORD_VERSION_MAX);
	else if (err == -EBADMSG && l->lineno == 1)
		ims_err(log, err, "record %s/%s: line 1 is not \"" RECORD_MAGIC "FORMAT\"",
			RECORD_DIR, l->fname);
	else if (err == -EBADMSG && l->pkg < 0 && !l->meta.name)
		ims_err(log, err, "record %s/%s: no package line before line %u", RECORD_DIR,
			l->fname, l->lineno);
	else if (err == -EBADMSG)
		ims_err(log, err, "record %s/%s: line %u is malformed", RECORD_DIR, l->fname,
			l->lineno);
	else if (err)
		ims_err(log, err, "record %s/%s: %s", RECORD_DIR, l->fname, strerror(-err));
}

/* Reads one record file into @rec; a record replaced by a later one of the same name is dropped. */
static int load_one(struct ims_record *rec, int dirfd, const char *fname)
{
	struct load l = { .rec = rec, .fname = fname, .pkg = -1 };
	int fd, err;
	FILE *f;

	fd = ims_open_regular(dirfd, fname, O_RDONLY | O_NOFOLLOW, 0);
	if (fd < 0)
		return ims_err(rec->log, fd, "record %s/%s: %s", RECORD_DIR, fname,
			       ims_open_strerror(fd));
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	err = read_lines(&l, f);
	report(&l, err);
	ims_record_meta_release(&l.meta);
	fclose(f);
	return err;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ims_record_load(int rootfd, const struct imastream_log *log, struct ims_record **ret)
{
	struct ims_record *rec = calloc(1, sizeof(*rec));
	char **names = NULL, **p;
	size_t n = 0, a = 0;
	int dirfd = -1, err = 0;
	DIR *d = NULL;
	struct dirent *de;

	if (!rec)
		return -ENOMEM;
	rec->log = log;
	dirfd = ims_record_open_dir(rootfd, false);
	if (dirfd < 0) {
		if (errno != ENOENT)
			err = ims_err(log, -errno, "record %s: %m", RECORD_DIR);
		goto out;
	}
	d = fdopendir(dup(dirfd));
	if (!d) {
		err = -errno;
		goto out;
	}
	/* Sorted, so that walks and messages come in a stable order. */
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), sl = strlen(RECORD_SUFFIX);

		if (de->d_name[0] == '.' || len <= sl ||
		    strcmp(de->d_name + len - sl, RECORD_SUFFIX))
			continue;
		p = ims_grow(names, n, &a, sizeof(*p), 32);
		if (!p) {
			err = -ENOMEM;
			goto out;
		}
		names = p;
		if (!(names[n] = strdup(de->d_name))) {
			err = -ENOMEM;
			goto out;
		}
		n++;
	}
	if (n) /* qsort wants an array, even for no element */
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n && !err; i++)
		err = load_one(rec, dirfd, names[i]);
	if (!err)
		err = ims_record_build_owners(rec);
out:
	if (d)
		closedir(d);
	if (dirfd >= 0)
		close(dirfd);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (err) {
		ims_record_free(rec);
		return err;
	}
	for (size_t i = 0; i < rec->nfiles; i++)
		ims_record_link_view(&rec->files[i], &rec->pkgs[rec->files[i].pkg]);
	*ret = rec;
	return 0;
}

int imastream_record_foreach(int rootfd,
			     int (*fn)(void *arg, const struct imastream_record_file *f), void *arg,
			     const struct imastream_log *log)
{
	struct ims_record *rec;
	int err = ims_record_load(rootfd, log, &rec);

	if (err)
		return err;
	/* A path another package took over later is that package's to answer for. */
	for (size_t i = 0; i < rec->nfiles && !err; i++)
		if (!rec->pkgs[rec->files[i].pkg].gone &&
		    ims_strmap_get(&rec->owner, rec->files[i].path) == (int)i)
			err = fn(arg, &rec->files[i].f);
	ims_record_free(rec);
	return err;
}

int imastream_record_foreach_package(int rootfd, int (*fn)(void *arg, const char *name), void *arg,
				     const struct imastream_log *log)
{
	struct ims_record *rec;
	int err = ims_record_load(rootfd, log, &rec);

	if (err)
		return err;
	for (size_t i = 0; i < rec->npkgs && !err; i++)
		if (!rec->pkgs[i].gone)
			err = fn(arg, rec->pkgs[i].name);
	ims_record_free(rec);
	return err;
}
