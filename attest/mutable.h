/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one classification of mutable files (imastream-mutable-files(5)): what a policy excludes, lists as generated, or must never exclude. */
#ifndef IMASTREAM_ATTEST_MUTABLE_H
#define IMASTREAM_ATTEST_MUTABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "attest/attest.h"
#include "imastream/common.h"

enum attest_mutable_class {
	ATTEST_MUTABLE_GHOST,	  /* a package's %ghost file: no packaged content; excluded */
	ATTEST_MUTABLE_GENERATED, /* the list: the same in every copy of the root; its current digest */
	ATTEST_MUTABLE_STATE,	  /* the list: written at run time, per machine; excluded */
};

struct attest_mutable_rule {
	enum attest_mutable_class class;
	bool dir;   /* a directory: every path below it */
	char *path; /* absolute, no trailing '/' */
	char *from; /* "LIST:LINE" or the package of a %ghost */
};

struct attest_mutable {
	struct attest_mutable_rule *rules;
	size_t n;
	/* What no rule may cover: packaged files with an execute bit, below a library
	 * directory or named as a shared library; sorted, with their package. */
	char **kept;
	char **kept_pkg;
	size_t nkept;
};

/*
 * Classifies the files of @root (absolute) from its rpm database and the list @list:
 * each %ghost file and each list entry becomes a rule; an entry or a %ghost that would
 * cover a packaged program or library is refused (a %ghost of that kind is kept out of
 * the rules silently: it is a package's own, not an exclude anyone asked for).
 * Return: 0; -EINVAL for a bad list (one line on @log naming the list's line and, for
 * a refused entry, the packaged file); -ENOENT (said) when the root has no database;
 * -ENOMEM; -errno reading @list.
 */
int attest_mutable_load(const char *root, const char *list, const struct imastream_log *log,
			struct attest_mutable **ret);
void attest_mutable_free(struct attest_mutable *m);

/* @path (as packaged, absolute) is a program or library no exclude may match. */
bool attest_mutable_is_kept(const char *path, unsigned int mode);

/*
 * Puts @m into @pol: an exclude for each %ghost and state rule (@prefix in front), the
 * root's current digest of each generated file (read below @rootfd with @hasher in
 * @hash_algo; one absent is said and left out).  Then checks every exclude @pol holds,
 * --exclude's too, against every kept file.
 * Return: 0; -EINVAL (one line naming the exclude and the file it would match); -errno.
 */
int attest_mutable_apply(const struct attest_mutable *m, struct attest_policy *pol, int rootfd,
			 const char *prefix, struct imastream_hasher *hasher, int hash_algo,
			 const struct imastream_log *log);

#endif /* IMASTREAM_ATTEST_MUTABLE_H */
