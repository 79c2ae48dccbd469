/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where imastream policy finds reference digests: the root's rpm database or its install record. */
#ifndef IMASTREAM_ATTEST_SOURCES_H
#define IMASTREAM_ATTEST_SOURCES_H

#include <stdbool.h>

#include "attest/attest.h"

struct attest_source {
	/* in */
	const char *root;          /* absolute; "/" for the running system */
	int rootfd;
	const char *prefix;        /* prepended to every path, or NULL */
	int hash_algo;             /* the digests the policy lists (the IMA template's) */
	struct imastream_hasher *hasher; /* for files whose reference is in another algorithm */
	struct attest_policy *policy;
	const struct imastream_log *log;
	/* out */
	unsigned long packages, files;
	unsigned long hashed;      /* of files, read from disk: no reference in hash_algo */
	unsigned long unreadable;  /* left out: said on log */
	unsigned long boot_digests; /* from this boot's record of replaced files */
	/* private: the root's accepted %config edits (--rpmdb) */
	struct imastream_accepted *accepted;
	/* private: the last directory resolved as the kernel will name it (merged /usr) */
	char last_dir[4096], last_real[4096];
	bool last_valid;
};

/* Adds @digest for @path (below the root, as a package spells it) as the kernel will name it. */
int attest_source_add(struct attest_source *src, const char *path, const uint8_t *digest,
		      size_t len);
/*
 * The digests this boot's record (ROOT/var/lib/imastream/boot/BOOTID) holds for files
 * transactions replaced or erased since the boot: the kernel may have measured them.
 */
int attest_source_boot(struct attest_source *src, const char *boot_id);
/* Every regular, non-ghost file of the installed packages (all, or @names). */
int attest_source_rpmdb(struct attest_source *src, char *const *names, int nnames);
/* Every regular file imastream install recorded (all packages, or @names). */
int attest_source_record(struct attest_source *src, char *const *names, int nnames);

#endif /* IMASTREAM_ATTEST_SOURCES_H */
