/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What installed/ offers the streaming installer (installer/) about who owns what in a
 * root: the install record (read, and one package's written and committed) with its field
 * encoding, shared by the intent journal, and the root's rpm database.  Not
 * plugin/rpm/owners.h, the rpm adapter's rule of one owner per package.
 */
#ifndef IMASTREAM_INSTALLED_OWNERS_H
#define IMASTREAM_INSTALLED_OWNERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "imastream/common.h"
#include "imastream/entry.h"
#include "imastream/record.h"

/*
 * One blank-free field of the record and the journal: every byte outside '!'..'~', and
 * '%', percent-encoded; "" is "%00".  Decoding is in place; false for a bad escape.
 */
void ims_field_put(FILE *f, const char *s);
bool ims_field_decode(char *s);

/* The install record (installed/record_*.c): who owns which path, and writing one package's. */
struct ims_record;
struct ims_record_pkg;

/* Reads every record below @rootfd (none is an empty record).  Return: 0, -EBADMSG, -errno. */
int ims_record_load(int rootfd, const struct imastream_log *log, struct ims_record **ret);
void ims_record_free(struct ims_record *rec);
/* The recorded object at package path @path, or NULL. */
const struct imastream_record_file *ims_record_lookup(const struct ims_record *rec,
						      const char *path);
/*
 * Calls @fn for every object of every current record (not one an upgrade in this run
 * replaced), in record order; a non-zero return stops the walk and is returned.
 */
int ims_record_each(const struct ims_record *rec,
		    int (*fn)(void *arg, const struct imastream_record_file *f), void *arg);
/* A new package record; @ima/@evm (may be NULL) note the chain's modes. */
int ims_record_pkg_new(const char *name, const char *nevra, const char *ima, const char *evm,
		       struct ims_record_pkg **ret);
/* Adds one object (its strings are copied).  Return: 0, -EINVAL for a bad path, -ENOMEM. */
int ims_record_pkg_add(struct ims_record_pkg *p, const struct imastream_record_file *f);
/* An object already added to @p, by package path, or NULL (valid until the next add). */
const struct imastream_record_file *ims_record_pkg_find(struct ims_record_pkg *p, const char *path);
/* Writes the package's record under a temp name (fsync'ed), creating the directory. */
int ims_record_pkg_write(struct ims_record *rec, int rootfd, struct ims_record_pkg *p);
/* Renames it into place (replacing the same name's) and updates @rec's owners. */
int ims_record_pkg_commit(struct ims_record *rec, struct ims_record_pkg *p);
/*
 * The rename ims_record_pkg_commit() will do, for the intent journal: the record
 * directory relative to the root, the temp name written, the final name (in @name).
 * Return: 0, -ENOENT when no record was written.
 */
int ims_record_pkg_pending(const struct ims_record_pkg *p, const char **dir, const char **tmp,
			   char *name, size_t name_size);
/* Removes a temp record not committed, then frees. */
void ims_record_pkg_free(struct ims_record_pkg *p);

/*
 * Whether the root (@root for messages) has an rpm database at rpm's %_dbpath, checked
 * without creating one.  librpm opens its files with no care for what they are, so any
 * that is neither a regular file nor a directory (a FIFO would hold librpm in open()
 * for good) is refused here, before librpm sees it.
 * Return: 1 (a database), 0 (none), or -IMS_ENOTREG (said).
 */
int ims_rpmdb_exists(int rootfd, const char *root, const struct imastream_log *log);

/* librpm's process-wide configuration, read once.  Return: 0 or -EIO. */
int ims_rpm_config(void);

/* Whether rpm's database (@ts, its root set) has a package named @name: 1 (@nevra, when
 * given, names it), 0. */
int ims_rpmdb_installed(void *ts, const char *name, char *nevra, size_t size);
/* -EEXIST, said in one line for @pkg, when rpm's database has @name; else 0. */
int ims_rpmdb_refuse_owned(void *ts, const char *root, const char *pkg, const char *name,
			   const struct imastream_log *log);
/*
 * Whether package @pkg (its header @rpm_header) may take over what rpm's database (@ts)
 * has of its name: only what rpm -U would replace, one entry of the same name and arch,
 * not of an install-only package (provides installonlypkg() or multiversion(), kernels).
 * Return: 1 (@offset: that entry), 0 (none of its name), -EEXIST said in one line.
 */
int ims_rpmdb_takeover_check(void *ts, const char *root, const char *pkg, void *rpm_header,
			     unsigned int *offset, const struct imastream_log *log);
/* A take-over: removes entry @offset (of @name) from rpm's database, as rpm -e --justdb
 * (the root's lock held).  0, or -EIO said in one line. */
int ims_rpmdb_forget(int rootfd, const char *root, const char *name, unsigned int offset,
		     const struct imastream_log *log);

/*
 * The root's rpm database as the conflict check asks it (rpmdb_owner.c): opened once,
 * read from the thread that begins entries.
 */
struct ims_rpmdb_owner;
int ims_rpmdb_owner_open(const char *root, struct ims_rpmdb_owner **ret);
void ims_rpmdb_owner_free(struct ims_rpmdb_owner *o);
/*
 * Return: 1 with @owner set when a package other than @self owns @e->path there with a
 * different file (rpm's rule: type, mode, content or symlink target), else 0.
 */
int ims_rpmdb_owner_conflict(struct ims_rpmdb_owner *o, const struct imastream_entry *e,
			     const char *self, char *owner, size_t owner_size);
/* Return: 1 when a package other than @self owns @path there (any type), else 0. */
int ims_rpmdb_owner_other(struct ims_rpmdb_owner *o, const char *path, const char *self);
/* How many installed packages list @path (rpm -V's test for a shared file). */
int ims_rpmdb_owner_count(struct ims_rpmdb_owner *o, const char *path);

#endif /* IMASTREAM_INSTALLED_OWNERS_H */
