/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal helpers of installer/: path checks and a small string-keyed table. */
#ifndef IMASTREAM_INSTALLER_PRIVATE_H
#define IMASTREAM_INSTALLER_PRIVATE_H

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

struct imastream_extract;
/* The extractor's own root fd and log, for the package readers built on it. */
int ims_extract_rootfd(const struct imastream_extract *x);
const struct imastream_log *ims_extract_log(const struct imastream_extract *x);

#endif /* IMASTREAM_INSTALLER_PRIVATE_H */
