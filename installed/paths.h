/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What installed/ offers the streaming installer (installer/) about paths below a root:
 * package path checks, directories opened below a root and symlinks followed as rpm does,
 * a small string-keyed table, and owner names read from the root's etc/passwd and etc/group.
 */
#ifndef IMASTREAM_INSTALLED_PATHS_H
#define IMASTREAM_INSTALLED_PATHS_H

#include <stdbool.h>
#include <stddef.h>

#include "imastream/common.h"

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
 * Owner names resolved through the root's etc/passwd and etc/group (installed/ids.c), as
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

#endif /* IMASTREAM_INSTALLED_PATHS_H */
