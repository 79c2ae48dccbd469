/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers of installer/: path checks and a small string-keyed table. */
#ifndef IMASTREAM_INSTALLER_PRIVATE_H
#define IMASTREAM_INSTALLER_PRIVATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include "imastream/common.h"
#include "imastream/installer.h"

/* Deeper paths are refused: real packages stay far below, and each level may hold an fd. */
#define IMS_PATH_MAX_DEPTH 512
#define IMS_STR_(x) #x
#define IMS_STR(x) IMS_STR_(x)

/*
 * Checks a package path and returns its form relative to the root: leading slashes
 * are dropped; an empty path, empty ("//"), "." and ".." components, over-long names
 * and more than IMS_PATH_MAX_DEPTH components are refused.  *why_ret says what is wrong (a static string).
 * Return: 0 or -EINVAL.
 */
int ims_path_relative(const char *path, const char **rel_ret, const char **why_ret);

/*
 * Opens directory @rel (relative) below @rootfd one component at a time, never following
 * a symlink; missing components are created (0755) when @create, and counted in *@made
 * (may be NULL).  Return: an fd or -errno.
 */
int ims_open_dir_below(int rootfd, const char *rel, bool create, unsigned int *made);

/*
 * Opens directory @name below @parentfd, a symlink, as rpm follows one (dirlink.c):
 * only when root or the owner of its target owns it, its target resolved inside the
 * root @rootfd (an absolute target and ".." as under rpm's chroot).  @flags as openat();
 * @real (may be NULL) gets the target's path below the root.
 * Return: an fd, -EPERM for a link rpm refuses, -ENOTDIR if not a symlink, or -errno.
 */
int ims_follow_dir_link(int rootfd, int parentfd, const char *name, int flags, char *real,
			size_t real_size);

/* An open-addressing table from strings (copied) to ints; grows as needed. */
struct ims_strmap {
	char **keys;
	int *values;
	size_t used;
	size_t size; /* a power of two, or 0 */
};

/* Return: the value of @key, or -1 when absent. */
int ims_strmap_get(const struct ims_strmap *m, const char *key);
/* Inserts @key → @value (value >= 0).  Return: 0, -EEXIST if present, -ENOMEM. */
int ims_strmap_add(struct ims_strmap *m, const char *key, int value);
/* Changes the value of a present @key; no-op when absent. */
void ims_strmap_set(struct ims_strmap *m, const char *key, int value);
void ims_strmap_clear(struct ims_strmap *m);

/*
 * Owner names resolved through the root's etc/passwd and etc/group (installer/ids.c), as
 * rpm does: a name the root does not know is root (0), with one warning per name.
 */
struct ims_ids {
	struct ims_strmap users, groups;
	struct ims_strmap unknown; /* names already warned about */
};
/* Return: 0, or -errno (said) for an etc/passwd or etc/group that is not a regular file. */
int ims_ids_load(struct ims_ids *ids, int rootfd, const struct imastream_log *log);
unsigned int ims_ids_user(struct ims_ids *ids, const char *name, const char *pkg,
			  const struct imastream_log *log);
unsigned int ims_ids_group(struct ims_ids *ids, const char *name, const char *pkg,
			   const struct imastream_log *log);
void ims_ids_clear(struct ims_ids *ids);

/*
 * One file of an installed package (installer/installed.c): its directory opened below
 * the root without following a symlink, then the file itself likewise (never blocking on
 * a FIFO), and its type, mode, owner, size and capabilities compared with the header; a
 * directory's type, mode and owner, a symlink's type, owner and target (never followed:
 * @fd is -1, @path names it).
 */
enum ims_installed_state {
	IMS_INSTALLED_OPEN,     /* open, metadata as the header says */
	IMS_INSTALLED_MODIFIED, /* @letters (and @why) say what differs; @fd open if regular */
	IMS_INSTALLED_MISSING,
};
struct ims_installed {
	int state;
	int dirfd, fd;
	struct stat st;
	char letters[10];  /* rpm -V's "SM5DLUGTP": S, M, L, U, G, P filled here */
	const char *why;   /* what the letters cannot say, or NULL */
	bool config;
	char path[sizeof("/proc/self/fd/") + 12 + NAME_MAX];
};
/* @rpm_fi: an rpmfi on the file.  Return: 0 (see @in->state), or -errno (said). */
int ims_installed_open(int rootfd, void *rpm_fi, struct ims_ids *ids, const char *nevra,
		       const struct imastream_log *log, struct ims_installed *in);
void ims_installed_close(struct ims_installed *in);

struct imastream_extract;
/* The extractor's own root fd and log, for the package readers built on it. */
int ims_extract_rootfd(const struct imastream_extract *x);
const struct imastream_log *ims_extract_log(const struct imastream_extract *x);
/* The sink the extractor was created with (its package_header hook is the reader's to call). */
const struct imastream_entry_sink *ims_extract_sink(const struct imastream_extract *x);
/*
 * The open package's NEVRA, when its reader knows it: its intent journal then names it
 * "NEVRA from NAME", so that recovery's messages say what it was and where it came from.
 * Return: 0, -EINVAL (no package open), -ENOMEM.
 */
int ims_extract_set_nevra(struct imastream_extract *x, const char *nevra);

/*
 * One blank-free field of the record and the journal: every byte outside '!'..'~', and
 * '%', percent-encoded; "" is "%00".  Decoding is in place; false for a bad escape.
 */
void ims_field_put(FILE *f, const char *s);
bool ims_field_decode(char *s);

/* The install record (installer/record.c): who owns which path, and writing one package's. */
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

/*
 * In *@count, how many paths of the root's rpm database (regular, non-ghost files of every
 * package, reached below @rootfd without a symlink) are the inode @st: the hard links it
 * may have with none from elsewhere.  Every such path is opened once, on the first call
 * (*@links is NULL then; free it with ims_rpmdb_links_free()).  Return: 0 or -errno (said).
 */
struct ims_rpmdb_links;
int ims_rpmdb_links(struct ims_rpmdb_links **links, const char *root, int rootfd,
		    const struct stat *st, const struct imastream_log *log, unsigned long *count);
void ims_rpmdb_links_free(struct ims_rpmdb_links *l);

/* librpm's process-wide configuration, read once.  Return: 0 or -EIO. */
int ims_rpm_config(void);

/* Whether rpm's database (@ts, its root set) has a package named @name: 1 (@nevra, when
 * given, names it), 0. */
int ims_rpmdb_installed(void *ts, const char *name, char *nevra, size_t size);
/* -EEXIST, said in one line for @pkg, when rpm's database has @name; else 0. */
int ims_rpmdb_refuse_owned(void *ts, const char *root, const char *pkg, const char *name,
			   const struct imastream_log *log);
/* A take-over: removes every entry of @name from rpm's database, as rpm -e --justdb (the
 * root's lock held).  0, or -EIO said in one line. */
int ims_rpmdb_forget(int rootfd, const char *root, const char *name, const struct imastream_log *log);

/*
 * ims_rpm_check_header - what imastream_install_rpm() checks before writing (the header,
 * its digests, the payload's form, every file entry against @rootfd), then @judge on the
 * header when given; nothing is written.  Return: 0, or the error said in one line.
 */
int ims_rpm_check_header(int rootfd, int fd, const char *name, unsigned int flags,
			 const struct imastream_log *log,
			 int (*judge)(void *arg, const char *name, void *rpm_header), void *arg);

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

#endif /* IMASTREAM_INSTALLER_PRIVATE_H */
