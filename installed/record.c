// SPDX-License-Identifier: LGPL-2.1-or-later
/* The install record: per package, every object installed, written atomically below the root. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/private.h"
#include "imastream/entry.h"
#include "imastream/hash.h"
#include "imastream/record.h"
#include "imastream/rpmdb.h"
#include "installed/private.h"
#include "installed/record_owner.h"

/*
 * ROOT/var/lib/imastream/packages/NAME.record, one per package name, in lines of
 * blank-separated fields (every field percent-encoded where it holds a blank, a '%', a
 * control or a non-ASCII byte):
 *
 *	imastream-record FORMAT
 *	package NAME
 *	nevra NEVRA
 *	ima hash|sign|off
 *	evm portable|none
 *	serial N
 *	TYPE MODE UID GID SIZE DIGEST XATTRS PATH [TARGET]
 *
 * TYPE is f, d, l, c, b or p; MODE the permission bits in octal; DIGEST "ALGO:HEX" or
 * "-"; N the install order (a path two records list belongs to the later one: a file
 * replaced with --replace-files, or a shared identical file); XATTRS the security xattrs the chain wrote, "ima+evm+label" or a part, or "-",
 * with "+config" (or "config") for a %config file, whose modified copy an upgrade keeps;
 * TARGET a symlink's target or a device's "MAJOR:MINOR".  A file is replaced by
 * renaming a complete temp file over it, so a reader sees the old or the new record.
 *
 * FORMAT is the lowest that holds what the record says: 2 when a file is marked config
 * (which version 1 readers do not know), else 1, so that an older imastream still reads
 * every record it can and refuses the others by their first line.  A reader refuses a
 * FORMAT newer than it knows in one line that says so.
 */

#define RECORD_DIR "var/lib/imastream/packages"
#define RECORD_SUFFIX ".record"
#define RECORD_MAGIC "imastream-record "
#define RECORD_VERSION_CONFIG 2 /* the first with "config" in XATTRS */
#define RECORD_VERSION_MAX RECORD_VERSION_CONFIG
#define RECORD_WRITE_BUF (256u << 10)

struct rfile {
	struct imastream_record_file f;
	int pkg; /* index in ims_record.pkgs */
	char *path, *target;
};

struct rpkg {
	char *name, *nevra, *ima, *evm;
	bool gone; /* replaced by a newer record of the same name */
	unsigned long serial; /* install order: a later package owns a path it shares */
	size_t first, count;  /* its objects in ims_record.files */
};

struct ims_record {
	struct rfile *files;
	size_t nfiles, afiles;
	struct rpkg *pkgs;
	size_t npkgs, apkgs;
	struct ims_strmap owner; /* "/path" → index in files, -1 once replaced */
	unsigned long max_serial;
	const struct imastream_log *log;
};

struct ims_record_pkg {
	struct rpkg meta;
	struct rfile *files;
	size_t nfiles, afiles;
	struct ims_strmap index; /* "/path" → index in files, for files[0..indexed) */
	size_t indexed;
	char tmp[64];  /* the written temp file in the record directory, or "" */
	int dirfd;
};

static void rfile_release(struct rfile *f)
{
	free(f->path);
	free(f->target);
}

static void rpkg_release(struct rpkg *p)
{
	free(p->name);
	free(p->nevra);
	free(p->ima);
	free(p->evm);
}

/* Percent-encodes @s as one field: every byte outside '!'..'~', and '%'. */
void ims_field_put(FILE *f, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	if (!*s) {
		fputs("%00", f); /* never an empty field; decodes to "" */
		return;
	}
	/* Runs of plain bytes in one write to the stream: a record has thousands of paths. */
	for (const unsigned char *p = (const unsigned char *)s; *p; ) {
		size_t n = 0;

		while (p[n] > ' ' && p[n] < 0x7f && p[n] != '%')
			n++;
		if (n) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		putc('%', f);
		putc(hex[*p >> 4], f);
		putc(hex[*p & 15], f);
		p++;
	}
}

/* Decodes a field in place; false for a bad escape (a %00 in the middle is one too). */
bool ims_field_decode(char *s)
{
	char *o = s;

	if (!strcmp(s, "%00")) {
		*s = 0;
		return true;
	}
	for (char *p = s; *p; p++) {
		int hi, lo;

		if (*p != '%') {
			*o++ = *p;
			continue;
		}
		hi = ims_hex_digit(p[1]);
		lo = hi < 0 ? -1 : ims_hex_digit(p[2]);
		if (lo < 0 || (hi == 0 && lo == 0))
			return false;
		*o++ = (char)(hi << 4 | lo);
		p += 2;
	}
	*o = 0;
	return true;
}

static char type_char(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return 'f';
	case S_IFDIR: return 'd';
	case S_IFLNK: return 'l';
	case S_IFCHR: return 'c';
	case S_IFBLK: return 'b';
	case S_IFIFO: return 'p';
	default: return '?';
	}
}

static mode_t type_of(char c)
{
	switch (c) {
	case 'f': return S_IFREG;
	case 'd': return S_IFDIR;
	case 'l': return S_IFLNK;
	case 'c': return S_IFCHR;
	case 'b': return S_IFBLK;
	case 'p': return S_IFIFO;
	default: return 0;
	}
}

/* "/a/b" for any accepted spelling of a package path, in @out; false if it is not one. */
static bool canonical_in(const char *path, char out[PATH_MAX + 1])
{
	const char *rel, *why;

	if (ims_path_relative(path, &rel, &why)) /* which also refuses PATH_MAX or more */
		return false;
	out[0] = '/';
	strcpy(out + 1, rel);
	return true;
}

/* The same, allocated; NULL if it is not a package path (or no memory). */
static char *canonical(const char *path)
{
	char buf[PATH_MAX + 1];

	return canonical_in(path, buf) ? strdup(buf) : NULL;
}

/* Opens (creating when @create) ROOT/var/lib/imastream/packages, never following a symlink. */
static int open_record_dir(int rootfd, bool create)
{
	char buf[] = RECORD_DIR;
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (char *save = NULL, *c = strtok_r(buf, "/", &save); c && fd >= 0;
	     c = strtok_r(NULL, "/", &save)) {
		int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, c, 0755) && errno != EEXIST) {
				int err = errno;

				close(fd);
				errno = err;
				return -1;
			}
			next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		{
			int err = errno;

			close(fd);
			errno = err;
		}
		fd = next;
	}
	return fd;
}

static int add_pkg(struct ims_record *rec, struct rpkg *meta)
{
	if (rec->npkgs == rec->apkgs) {
		size_t n = rec->apkgs ? 2 * rec->apkgs : 16;
		struct rpkg *p = realloc(rec->pkgs, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		rec->pkgs = p;
		rec->apkgs = n;
	}
	rec->pkgs[rec->npkgs] = *meta;
	rec->pkgs[rec->npkgs].first = rec->nfiles;
	rec->pkgs[rec->npkgs].count = 0;
	if (meta->serial > rec->max_serial)
		rec->max_serial = meta->serial;
	return (int)rec->npkgs++;
}

static int add_file(struct rfile **files, size_t *n, size_t *a, struct rfile *f)
{
	if (*n == *a) {
		size_t na = *a ? 2 * *a : 64;
		struct rfile *p = realloc(*files, na * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*files = p;
		*a = na;
	}
	(*files)[*n] = *f;
	return (int)(*n)++;
}

/* The strings of the public view point into the record's own copies. */
static void link_view(struct rfile *f, const struct rpkg *p)
{
	f->f.path = f->path;
	f->f.link_target = f->target;
	f->f.package = p->name;
	f->f.ima = p->ima ? p->ima : "";
	f->f.evm = p->evm ? p->evm : "";
}

/* Parses one object line; @line is modified. */
static int parse_file_line(char *line, struct rfile *out)
{
	char *field[9], *save = NULL, *end;
	const struct imastream_hash_info *hi;
	unsigned long long v[4];
	int n = 0;

	memset(out, 0, sizeof(*out));
	for (char *w = strtok_r(line, " ", &save); w && n < 9; w = strtok_r(NULL, " ", &save))
		field[n++] = w;
	if (n < 8 || n > 9 || strlen(field[0]) != 1 || !type_of(field[0][0]))
		return -EBADMSG;
	for (int i = 0; i < 4; i++) {
		errno = 0;
		v[i] = strtoull(field[1 + i], &end, i == 0 ? 8 : 10);
		if (errno || *end || end == field[1 + i])
			return -EBADMSG;
	}
	if (v[0] > 07777 || v[1] > UINT32_MAX || v[2] > UINT32_MAX)
		return -EBADMSG;
	out->f.mode = type_of(field[0][0]) | (mode_t)v[0];
	out->f.uid = (uid_t)v[1];
	out->f.gid = (gid_t)v[2];
	out->f.size = v[3];
	if (strcmp(field[5], "-")) {
		char *colon = strchr(field[5], ':');
		size_t hexlen;

		if (!colon)
			return -EBADMSG;
		*colon = 0;
		hi = imastream_hash_by_name(field[5]);
		hexlen = strlen(colon + 1);
		if (!hi || hexlen != 2 * hi->digest_size || hi->digest_size > IMASTREAM_RECORD_MAX_DIGEST)
			return -EBADMSG;
		for (size_t i = 0; i < hi->digest_size; i++) {
			int a = ims_hex_digit(colon[1 + 2 * i]), b = ims_hex_digit(colon[2 + 2 * i]);

			if (a < 0 || b < 0)
				return -EBADMSG;
			out->f.digest[i] = (uint8_t)(a << 4 | b);
		}
		out->f.digest_algo = hi->algo;
	}
	if (strcmp(field[6], "-")) {
		char *save2 = NULL;

		for (char *w = strtok_r(field[6], "+", &save2); w; w = strtok_r(NULL, "+", &save2)) {
			if (!strcmp(w, "ima"))
				out->f.xattrs |= IMASTREAM_RECORD_IMA;
			else if (!strcmp(w, "evm"))
				out->f.xattrs |= IMASTREAM_RECORD_EVM;
			else if (!strcmp(w, "label"))
				out->f.xattrs |= IMASTREAM_RECORD_LABEL;
			else if (!strcmp(w, "config"))
				out->f.xattrs |= IMASTREAM_RECORD_CONFIG;
			else
				return -EBADMSG;
		}
	}
	if (!ims_field_decode(field[7]) || (n > 8 && !ims_field_decode(field[8])))
		return -EBADMSG;
	out->path = canonical(field[7]);
	if (!out->path)
		return -EBADMSG;
	if (n > 8) {
		if (S_ISCHR(out->f.mode) || S_ISBLK(out->f.mode)) {
			unsigned int maj, min;

			if (sscanf(field[8], "%u:%u", &maj, &min) != 2)
				return -EBADMSG;
			out->f.rdev = makedev(maj, min);
		} else {
			out->target = strdup(field[8]);
			if (!out->target)
				return -ENOMEM;
		}
	}
	if (S_ISLNK(out->f.mode) && !out->target)
		return -EBADMSG;
	return 0;
}

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

/* Reads one record file into @rec; a record replaced by a later one of the same name is dropped. */
static int load_one(struct ims_record *rec, int dirfd, const char *fname)
{
	struct rpkg meta = { 0 };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned int lineno = 0;
	unsigned long version = 0;
	int fd, err = 0, pkg = -1;
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
	while ((len = getline(&line, &cap, f)) > 0) {
		char *val;

		lineno++;
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (lineno == 1) {
			version = magic_version(line);
			if (!version || version > RECORD_VERSION_MAX) {
				err = -EBADMSG;
				break;
			}
			continue;
		}
		val = strchr(line, ' ');
		if (pkg < 0 && val) {
			char **slot = NULL;

			*val++ = 0;
			if (!strcmp(line, "package"))
				slot = &meta.name;
			else if (!strcmp(line, "nevra"))
				slot = &meta.nevra;
			else if (!strcmp(line, "ima"))
				slot = &meta.ima;
			else if (!strcmp(line, "evm"))
				slot = &meta.evm;
			if (!strcmp(line, "serial")) {
				char *end;

				errno = 0;
				meta.serial = strtoul(val, &end, 10);
				if (errno || *end || end == val) {
					err = -EBADMSG;
					break;
				}
				continue;
			}
			if (slot) {
				if (*slot || !ims_field_decode(val) || !(*slot = strdup(val))) {
					err = -EBADMSG;
					break;
				}
				continue;
			}
			val[-1] = ' ';
		}
		if (pkg < 0) {
			if (!meta.name) {
				err = -EBADMSG;
				break;
			}
			pkg = add_pkg(rec, &meta);
			if (pkg < 0) {
				err = pkg;
				break;
			}
			memset(&meta, 0, sizeof(meta));
		}
		{
			struct rfile rf;
			int idx;

			err = parse_file_line(line, &rf);
			if (!err) {
				rf.pkg = pkg;
				idx = add_file(&rec->files, &rec->nfiles, &rec->afiles, &rf);
				if (idx < 0) {
					rfile_release(&rf);
					err = idx;
				} else {
					rec->pkgs[pkg].count++;
				}
			} else {
				rfile_release(&rf);
			}
			if (err)
				break;
		}
	}
	if (!err && ferror(f))
		err = -EIO;
	if (!err && lineno == 0)
		err = -EBADMSG;
	if (!err && pkg < 0) {
		/* A package with no objects at all. */
		if (!meta.name)
			err = -EBADMSG;
		else if ((pkg = add_pkg(rec, &meta)) < 0)
			err = pkg;
		else
			memset(&meta, 0, sizeof(meta));
	}
	if (err == -EBADMSG && lineno == 0)
		ims_err(rec->log, err, "record %s/%s is empty (an install was interrupted?): "
			"reinstall the package", RECORD_DIR, fname);
	else if (err == -EBADMSG && lineno == 1 && version > RECORD_VERSION_MAX)
		ims_err(rec->log, err, "record %s/%s: format version %lu, newer than this imastream "
			"reads (%d): a newer imastream wrote it", RECORD_DIR, fname, version,
			RECORD_VERSION_MAX);
	else if (err == -EBADMSG && lineno == 1)
		ims_err(rec->log, err, "record %s/%s: line 1 is not \"" RECORD_MAGIC "FORMAT\"",
			RECORD_DIR, fname);
	else if (err == -EBADMSG && pkg < 0 && !meta.name)
		ims_err(rec->log, err, "record %s/%s: no package line before line %u",
			RECORD_DIR, fname, lineno);
	else if (err == -EBADMSG)
		ims_err(rec->log, err, "record %s/%s: line %u is malformed", RECORD_DIR, fname, lineno);
	else if (err)
		ims_err(rec->log, err, "record %s/%s: %s", RECORD_DIR, fname, strerror(-err));
	rpkg_release(&meta);
	free(line);
	fclose(f);
	return err;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int by_serial(const void *a, const void *b)
{
	const struct rpkg *x = *(struct rpkg *const *)a, *y = *(struct rpkg *const *)b;

	return x->serial < y->serial ? -1 : x->serial > y->serial;
}

/* Who owns each path: the records in install order, a later one taking a shared path. */
static int build_owners(struct ims_record *rec)
{
	struct rpkg **order = malloc((rec->npkgs + 1) * sizeof(*order));
	int err = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < rec->npkgs; i++)
		order[i] = &rec->pkgs[i];
	qsort(order, rec->npkgs, sizeof(*order), by_serial);
	for (size_t i = 0; i < rec->npkgs && !err; i++) {
		for (size_t j = order[i]->first; j < order[i]->first + order[i]->count && !err; j++) {
			err = ims_strmap_add(&rec->owner, rec->files[j].path, (int)j);
			if (err == -EEXIST) {
				ims_strmap_set(&rec->owner, rec->files[j].path, (int)j);
				err = 0;
			}
		}
	}
	free(order);
	return err;
}

void ims_record_free(struct ims_record *rec)
{
	if (!rec)
		return;
	for (size_t i = 0; i < rec->nfiles; i++)
		rfile_release(&rec->files[i]);
	for (size_t i = 0; i < rec->npkgs; i++)
		rpkg_release(&rec->pkgs[i]);
	free(rec->files);
	free(rec->pkgs);
	ims_strmap_clear(&rec->owner);
	free(rec);
}

int ims_record_load(int rootfd, const struct imastream_log *log, struct ims_record **ret)
{
	struct ims_record *rec = calloc(1, sizeof(*rec));
	char **names = NULL;
	size_t n = 0, a = 0;
	int dirfd = -1, err = 0;
	DIR *d = NULL;
	struct dirent *de;

	if (!rec)
		return -ENOMEM;
	rec->log = log;
	dirfd = open_record_dir(rootfd, false);
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

		if (de->d_name[0] == '.' || len <= sl || strcmp(de->d_name + len - sl, RECORD_SUFFIX))
			continue;
		if (n == a) {
			char **p = realloc(names, (a = a ? 2 * a : 32) * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			names = p;
		}
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
		err = build_owners(rec);
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
		link_view(&rec->files[i], &rec->pkgs[rec->files[i].pkg]);
	*ret = rec;
	return 0;
}

const struct imastream_record_file *ims_record_lookup(const struct ims_record *rec, const char *path)
{
	char key[PATH_MAX + 1];
	int idx;

	/* Asked for every entry installed: an empty root's record has nothing to find. */
	if (!rec->owner.used || !canonical_in(path, key))
		return NULL;
	idx = ims_strmap_get(&rec->owner, key);
	return idx >= 0 ? &rec->files[idx].f : NULL;
}

int ims_record_each(const struct ims_record *rec,
		    int (*fn)(void *arg, const struct imastream_record_file *f), void *arg)
{
	for (size_t i = 0; i < rec->nfiles; i++) {
		int err;

		if (rec->pkgs[rec->files[i].pkg].gone)
			continue;
		err = fn(arg, &rec->files[i].f);
		if (err)
			return err;
	}
	return 0;
}

int ims_record_pkg_new(const char *name, const char *nevra, const char *ima, const char *evm,
		       struct ims_record_pkg **ret)
{
	struct ims_record_pkg *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->dirfd = -1;
	p->meta.name = strdup(name);
	p->meta.nevra = strdup(nevra ? nevra : name);
	p->meta.ima = ima ? strdup(ima) : NULL;
	p->meta.evm = evm ? strdup(evm) : NULL;
	if (!p->meta.name || !p->meta.nevra || (ima && !p->meta.ima) || (evm && !p->meta.evm)) {
		ims_record_pkg_free(p);
		return -ENOMEM;
	}
	*ret = p;
	return 0;
}

int ims_record_pkg_add(struct ims_record_pkg *p, const struct imastream_record_file *f)
{
	struct rfile rf = { .f = *f };
	int idx;

	rf.path = canonical(f->path);
	rf.target = f->link_target ? strdup(f->link_target) : NULL;
	if (!rf.path || (f->link_target && !rf.target)) {
		rfile_release(&rf);
		return rf.path ? -ENOMEM : -EINVAL;
	}
	idx = add_file(&p->files, &p->nfiles, &p->afiles, &rf);
	if (idx < 0) {
		rfile_release(&rf);
		return idx;
	}
	link_view(&p->files[idx], &p->meta);
	return 0;
}

const struct imastream_record_file *ims_record_pkg_find(struct ims_record_pkg *p, const char *path)
{
	char key[PATH_MAX + 1];
	int idx;

	if (!canonical_in(path, key))
		return NULL;
	/* Indexed when first asked: only a package with hard links asks, and most have none. */
	for (; p->indexed < p->nfiles; p->indexed++) {
		const char *k = p->files[p->indexed].path;

		idx = ims_strmap_add(&p->index, k, (int)p->indexed);
		if (idx == -EEXIST)
			ims_strmap_set(&p->index, k, (int)p->indexed);
		else if (idx < 0)
			break;
	}
	idx = ims_strmap_get(&p->index, key);
	if (idx < 0)
		return NULL;
	link_view(&p->files[idx], &p->meta);
	return &p->files[idx].f;
}

/* Appends the decimal @v to @out; returns the new end. */
static char *put_dec(char *out, unsigned long long v)
{
	char tmp[20];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*out++ = tmp[--n];
	return out;
}

/*
 * The fields of an object line before its path, "TYPE MODE UID GID SIZE DIGEST XATTRS ",
 * formatted by hand into @out (at least RECORD_HEAD_MAX bytes): a record has one line
 * per file, and fprintf's parsing was most of what writing it cost.
 */
#define RECORD_HEAD_MAX (2 + 5 + 3 * 21 + 16 + 2 * IMASTREAM_RECORD_MAX_DIGEST + 1 + 21 + 2)
static size_t put_head(char *out, const struct imastream_record_file *rf)
{
	static const char hex[] = "0123456789abcdef";
	const struct imastream_hash_info *hi = imastream_hash_by_algo(rf->digest_algo);
	unsigned int perm = (unsigned int)(rf->mode & 07777);
	char *o = out;

	*o++ = type_char(rf->mode);
	*o++ = ' ';
	for (int shift = 9; shift >= 0; shift -= 3) /* "%04o" */
		*o++ = (char)('0' + ((perm >> shift) & 7));
	*o++ = ' ';
	o = put_dec(o, (unsigned int)rf->uid);
	*o++ = ' ';
	o = put_dec(o, (unsigned int)rf->gid);
	*o++ = ' ';
	o = put_dec(o, (unsigned long long)rf->size);
	*o++ = ' ';
	if (!rf->digest_algo || !hi) {
		*o++ = '-';
	} else {
		unsigned int n = hi->digest_size < IMASTREAM_RECORD_MAX_DIGEST ?
				 hi->digest_size : IMASTREAM_RECORD_MAX_DIGEST;
		size_t len = strnlen(hi->name, 15);

		memcpy(o, hi->name, len);
		o += len;
		*o++ = ':';
		for (unsigned int i = 0; i < n; i++) {
			*o++ = hex[rf->digest[i] >> 4];
			*o++ = hex[rf->digest[i] & 15];
		}
	}
	*o++ = ' ';
	if (!rf->xattrs)
		*o++ = '-';
	if (rf->xattrs & IMASTREAM_RECORD_IMA)
		o = stpcpy(o, "ima");
	if (rf->xattrs & IMASTREAM_RECORD_EVM)
		o = stpcpy(o, rf->xattrs & IMASTREAM_RECORD_IMA ? "+evm" : "evm");
	if (rf->xattrs & IMASTREAM_RECORD_LABEL)
		o = stpcpy(o, rf->xattrs & (IMASTREAM_RECORD_IMA | IMASTREAM_RECORD_EVM) ?
			   "+label" : "label");
	if (rf->xattrs & IMASTREAM_RECORD_CONFIG)
		o = stpcpy(o, rf->xattrs & ~IMASTREAM_RECORD_CONFIG ? "+config" : "config");
	*o++ = ' ';
	return (size_t)(o - out);
}

/* The lowest format version that holds @p's record (see the top of this file). */
static int record_version(const struct ims_record_pkg *p)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (p->files[i].f.xattrs & IMASTREAM_RECORD_CONFIG)
			return RECORD_VERSION_CONFIG;
	return 1;
}

/* The record's file name for package @name: "NAME.record", '/' and '%' encoded. */
static void record_name(const char *name, char *buf, size_t size)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p && o + 4 < size; p++) {
		if (*p > ' ' && *p < 0x7f && *p != '%' && *p != '/' && !(o == 0 && *p == '.')) {
			buf[o++] = (char)*p;
		} else {
			snprintf(buf + o, size - o, "%%%02X", *p);
			o += 3;
		}
	}
	snprintf(buf + o, size - o, "%s", RECORD_SUFFIX);
}

int ims_record_of(int rootfd, const char *name, char *path, size_t size)
{
	char fname[NAME_MAX + 1];
	struct stat sb;
	int dfd, ret;

	record_name(name, fname, sizeof(fname));
	snprintf(path, size, "%s/%s", RECORD_DIR, fname);
	dfd = imastream_open_beneath(rootfd, RECORD_DIR, O_RDONLY | O_DIRECTORY);
	if (dfd == -ENOENT)
		return 0;
	if (dfd < 0)
		return dfd;
	ret = !fstatat(dfd, fname, &sb, AT_SYMLINK_NOFOLLOW) ? 1 : errno == ENOENT ? 0 : -errno;
	close(dfd);
	return ret;
}

int ims_record_forget(int rootfd, const char *name)
{
	char fname[NAME_MAX + 1];
	int dfd, ret;

	record_name(name, fname, sizeof(fname));
	dfd = imastream_open_beneath(rootfd, RECORD_DIR, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return dfd == -ENOENT ? 0 : dfd;
	ret = unlinkat(dfd, fname, 0) && errno != ENOENT ? -errno : 0;
	if (!ret)
		fsync(dfd);
	close(dfd);
	return ret;
}

int ims_record_pkg_write(struct ims_record *rec, int rootfd, struct ims_record_pkg *p)
{
	FILE *f = NULL;
	char *buf = NULL;
	int fd = -1, err = 0;

	p->dirfd = open_record_dir(rootfd, true);
	if (p->dirfd < 0)
		return ims_err(rec->log, -errno, "%s: cannot create the record directory %s: %m",
			       p->meta.name, RECORD_DIR);
	for (int tries = 0; tries < 100 && fd < 0; tries++) {
		static unsigned int seq;

		/* Our pid in the name: imastream recover removes it once we are gone. */
		snprintf(p->tmp, sizeof(p->tmp), IMASTREAM_TEMP_PREFIX "%x-record-%x",
			 (unsigned int)getpid(), __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
		fd = openat(p->dirfd, p->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err = ims_err(rec->log, -errno, "%s: cannot create its record: %m", p->meta.name);
		p->tmp[0] = 0;
		return err;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		err = -ENOMEM;
		goto out;
	}
	/* A record of thousands of files in a few writes, not one per 4 KiB: glibc takes the
	 * size only with a buffer (with NULL it allocates st_blksize). */
	buf = malloc(RECORD_WRITE_BUF);
	if (buf)
		setvbuf(f, buf, _IOFBF, RECORD_WRITE_BUF);
	fprintf(f, RECORD_MAGIC "%d\npackage ", record_version(p));
	ims_field_put(f, p->meta.name);
	fputs("\nnevra ", f);
	ims_field_put(f, p->meta.nevra);
	if (p->meta.ima) {
		fputs("\nima ", f);
		ims_field_put(f, p->meta.ima);
	}
	if (p->meta.evm) {
		fputs("\nevm ", f);
		ims_field_put(f, p->meta.evm);
	}
	p->meta.serial = rec->max_serial + 1;
	fprintf(f, "\nserial %lu\n", p->meta.serial);
	for (size_t i = 0; i < p->nfiles; i++) {
		const struct rfile *rf = &p->files[i];
		char head[RECORD_HEAD_MAX];

		fwrite(head, 1, put_head(head, &rf->f), f);
		ims_field_put(f, rf->path);
		if (rf->target) {
			putc(' ', f);
			ims_field_put(f, rf->target);
		} else if (S_ISCHR(rf->f.mode) || S_ISBLK(rf->f.mode)) {
			fprintf(f, " %u:%u", major(rf->f.rdev), minor(rf->f.rdev));
		}
		putc('\n', f);
	}
	if (fflush(f) == EOF || ferror(f) || fsync(fileno(f)))
		err = -errno ? -errno : -EIO;
	if (fclose(f) && !err)
		err = -errno;
	free(buf);
	if (err)
		ims_err(rec->log, err, "%s: cannot write its record: %s", p->meta.name, strerror(-err));
out:
	if (err) {
		unlinkat(p->dirfd, p->tmp, 0);
		p->tmp[0] = 0;
	}
	return err;
}

int ims_record_pkg_pending(const struct ims_record_pkg *p, const char **dir, const char **tmp,
			   char *name, size_t name_size)
{
	if (!p->tmp[0])
		return -ENOENT;
	*dir = RECORD_DIR;
	*tmp = p->tmp;
	record_name(p->meta.name, name, name_size);
	return 0;
}

int ims_record_pkg_commit(struct ims_record *rec, struct ims_record_pkg *p)
{
	char name[NAME_MAX + 1];
	size_t first;
	int pkg, err = 0;

	if (!p->tmp[0])
		return -EINVAL;
	record_name(p->meta.name, name, sizeof(name));
	if (renameat(p->dirfd, p->tmp, p->dirfd, name)) {
		err = ims_err(rec->log, -errno, "%s: cannot rename its record into place: %m",
			      p->meta.name);
		unlinkat(p->dirfd, p->tmp, 0);
		p->tmp[0] = 0;
		return err;
	}
	p->tmp[0] = 0;
	fsync(p->dirfd);
	/* The same name's older record is replaced: its paths are no longer its own. */
	for (size_t i = 0; i < rec->npkgs; i++) {
		if (rec->pkgs[i].gone || strcmp(rec->pkgs[i].name, p->meta.name))
			continue;
		rec->pkgs[i].gone = true;
		for (size_t j = 0; j < rec->nfiles; j++)
			if (rec->files[j].pkg == (int)i &&
			    ims_strmap_get(&rec->owner, rec->files[j].path) == (int)j)
				ims_strmap_set(&rec->owner, rec->files[j].path, -1);
	}
	pkg = add_pkg(rec, &p->meta);
	if (pkg < 0)
		return pkg;
	rec->pkgs[pkg].count = p->nfiles;
	memset(&p->meta, 0, sizeof(p->meta));
	/* Room for the package's objects in one step, not a doubling per power of two. */
	if (rec->nfiles + p->nfiles > rec->afiles) {
		struct rfile *grown = realloc(rec->files, (rec->nfiles + p->nfiles) * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		rec->files = grown;
		rec->afiles = rec->nfiles + p->nfiles;
	}
	first = rec->nfiles;
	for (size_t i = 0; i < p->nfiles && !err; i++) {
		struct rfile *rf = &p->files[i];
		int idx;

		rf->pkg = pkg;
		idx = add_file(&rec->files, &rec->nfiles, &rec->afiles, rf);
		if (idx < 0) {
			err = idx;
			break;
		}
		memset(rf, 0, sizeof(*rf));
		err = ims_strmap_add(&rec->owner, rec->files[idx].path, idx);
		if (err == -EEXIST) {
			ims_strmap_set(&rec->owner, rec->files[idx].path, idx);
			err = 0;
		}
	}
	p->nfiles = 0;
	/* The views point at heap strings, which no growth moves: only the new ones, whose
	 * package strings now belong to rec->pkgs, are linked again. */
	for (size_t i = first; i < rec->nfiles; i++)
		link_view(&rec->files[i], &rec->pkgs[rec->files[i].pkg]);
	return err;
}

void ims_record_pkg_free(struct ims_record_pkg *p)
{
	if (!p)
		return;
	if (p->tmp[0] && p->dirfd >= 0)
		unlinkat(p->dirfd, p->tmp, 0);
	if (p->dirfd >= 0)
		close(p->dirfd);
	for (size_t i = 0; i < p->nfiles; i++)
		rfile_release(&p->files[i]);
	free(p->files);
	ims_strmap_clear(&p->index);
	rpkg_release(&p->meta);
	free(p);
}

int imastream_record_foreach(int rootfd, int (*fn)(void *arg, const struct imastream_record_file *f),
			     void *arg, const struct imastream_log *log)
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

int imastream_record_check(int rootfd, const struct imastream_record_file *f, int *fd_ret,
			   char *why, size_t why_size)
{
	const struct imastream_hash_info *hi = imastream_hash_by_algo(f->digest_algo);
	struct imastream_hasher *h = NULL;
	const char *rel, *why_path, *base;
	char target[PATH_MAX + 1];
	struct stat st;
	int dfd = -1, fd = -1, err = 1;
	const uint8_t *d;

	if (fd_ret)
		*fd_ret = -1;
	why[0] = 0;
	if (ims_path_relative(f->path, &rel, &why_path)) {
		snprintf(why, why_size, "recorded path refused: %s", why_path);
		return 1;
	}
	dfd = open_parent(rootfd, rel, &base);
	if (dfd < 0) {
		snprintf(why, why_size, errno == ENOENT ? "missing" :
			 errno == ENOTDIR || errno == ELOOP ? "a parent is not a directory" :
			 "cannot be reached (%m)");
		return 1;
	}
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW)) {
		snprintf(why, why_size, errno == ENOENT ? "missing" : "cannot be examined (%m)");
		goto out;
	}
	/* A recorded directory reached through a symlink the install followed (merged /usr). */
	if (S_ISDIR(f->mode) && S_ISLNK(st.st_mode)) {
		int tfd = ims_follow_dir_link(rootfd, dfd, base, O_PATH, NULL, 0);

		if (tfd >= 0) {
			if (fstat(tfd, &st))
				st.st_mode = S_IFLNK;
			close(tfd);
		}
	}
	if ((st.st_mode & S_IFMT) != (f->mode & S_IFMT)) {
		snprintf(why, why_size, "type changed (recorded %c, found %c)", type_char(f->mode),
			 type_char(st.st_mode));
		goto out;
	}
	if (!S_ISLNK(f->mode) && (st.st_mode & 07777) != (f->mode & 07777)) {
		snprintf(why, why_size, "mode %04o, recorded %04o", (unsigned int)(st.st_mode & 07777),
			 (unsigned int)(f->mode & 07777));
		goto out;
	}
	if (st.st_uid != f->uid || st.st_gid != f->gid) {
		snprintf(why, why_size, "owner %u:%u, recorded %u:%u", (unsigned int)st.st_uid,
			 (unsigned int)st.st_gid, (unsigned int)f->uid, (unsigned int)f->gid);
		goto out;
	}
	if (S_ISLNK(f->mode)) {
		ssize_t n = readlinkat(dfd, base, target, sizeof(target) - 1);

		if (n < 0 || (target[n] = 0, strcmp(target, f->link_target ? f->link_target : "")))
			snprintf(why, why_size, "symlink target changed");
		else
			err = 0;
		goto out;
	}
	if ((S_ISCHR(f->mode) || S_ISBLK(f->mode)) && st.st_rdev != f->rdev) {
		snprintf(why, why_size, "device number changed");
		goto out;
	}
	if (!S_ISREG(f->mode)) {
		err = 0;
		goto out;
	}
	if ((uint64_t)st.st_size != f->size) {
		snprintf(why, why_size, "size %llu, recorded %llu", (unsigned long long)st.st_size,
			 (unsigned long long)f->size);
		goto out;
	}
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		snprintf(why, why_size, "cannot be opened (%m)");
		goto out;
	}
	if (hi) {
		err = imastream_hasher_new(IMASTREAM_HASH_BIT(hi->algo), NULL, &h);
		if (!err)
			err = imastream_hash_fd(h, fd);
		if (!err)
			err = imastream_hasher_digest(h, hi->algo, &d, NULL);
		if (err) {
			snprintf(why, why_size, "cannot be read (%s)", strerror(-err));
			goto out;
		}
		if (memcmp(d, f->digest, hi->digest_size)) {
			snprintf(why, why_size, "content changed (%s digest)", hi->name);
			err = 1;
			goto out;
		}
	}
	err = 0;
	if (fd_ret) {
		lseek(fd, 0, SEEK_SET);
		*fd_ret = fd;
		fd = -1;
	}
out:
	imastream_hasher_free(h);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return err;
}
