/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The install record's format and its form in memory, for the installed/record_*.c files alone. */
#ifndef IMASTREAM_INSTALLED_RECORD_FORMAT_H
#define IMASTREAM_INSTALLED_RECORD_FORMAT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "imastream/record.h"
#include "installed/private.h"

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
/*
 * The fields of an object line before its path, "TYPE MODE UID GID SIZE DIGEST XATTRS ",
 * formatted by hand into @out (at least RECORD_HEAD_MAX bytes): a record has one line
 * per file, and fprintf's parsing was most of what writing it cost.
 */
#define RECORD_HEAD_MAX (2 + 5 + 3 * 21 + 16 + 2 * IMASTREAM_RECORD_MAX_DIGEST + 1 + 21 + 2)

struct rfile {
	struct imastream_record_file f;
	int pkg; /* index in ims_record.pkgs */
	char *path, *target;
};

struct rpkg {
	char *name, *nevra, *ima, *evm;
	bool gone;	      /* replaced by a newer record of the same name */
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
	char tmp[64]; /* the written temp file in the record directory, or "" */
	int dirfd;
};

/* One object of a record and its package's fields, freed (not the structs themselves). */
void ims_record_file_release(struct rfile *f);
void ims_record_meta_release(struct rpkg *p);
/* The record's field codec (record_codec.c): an object's type letter, a package path in
 * its one spelling "/a/b" (false or NULL if it is not one), an object line both ways. */
char ims_record_type_char(mode_t mode);
bool ims_record_canonical_in(const char *path, char out[PATH_MAX + 1]);
char *ims_record_canonical(const char *path);
int ims_record_parse_line(char *line, struct rfile *out);
size_t ims_record_put_head(char *out, const struct imastream_record_file *rf);
/* The record in memory (record_index.c): packages and objects appended, each object's
 * public view linked to its strings, and who owns each path. */
int ims_record_add_pkg(struct ims_record *rec, struct rpkg *meta);
int ims_record_add_file(struct rfile **files, size_t *n, size_t *a, struct rfile *f);
void ims_record_link_view(struct rfile *f, const struct rpkg *p);
int ims_record_build_owners(struct ims_record *rec);
/* The record directory (record_dir.c), opened (created when @create) never through a
 * symlink; errno set on failure.  A package's record file name, "NAME.record". */
int ims_record_open_dir(int rootfd, bool create);
void ims_record_file_name(const char *name, char *buf, size_t size);

#endif /* IMASTREAM_INSTALLED_RECORD_FORMAT_H */
