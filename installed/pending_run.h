/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A relabel --pending run's state: its entries and what each is checked against, for pending_load.c and pending_apply.c alone. */
#ifndef IMASTREAM_INSTALLED_PENDING_RUN_H
#define IMASTREAM_INSTALLED_PENDING_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "imastream/hash.h"
#include "imastream/pending.h"
#include "installed/paths.h"
#include "plugin/core/pending_format.h"

/* The reference an entry is checked against: its package's header or record line. */
struct ref {
	bool found, ghost;
	char *caps;	    /* the header's capabilities (rpm's text), or NULL */
	unsigned int nlink; /* the header's hard links to the file, or 0 when unknown */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	int algo;
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	size_t len;
};

struct item {
	int txn;       /* index in struct run.txns */
	char name[32]; /* the entry's file name in its transaction directory */
	struct ims_pending_entry e;
	int err;	/* refused before any check: @why says why */
	bool malformed; /* ... because it could not be parsed: named by its entry */
	char why[192];
	bool drop; /* superseded by a newer transaction's entry: removed unapplied */
	struct ref ref;
};

struct run {
	const char *root;
	int rootfd;
	const struct imastream_log *log;
	int *txnfds;
	char **txns;
	size_t ntxns;
	struct item *items;
	size_t nitems;
	struct ims_strmap paths; /* path → index of its live item */
	struct ims_ids ids;
	struct imastream_hasher *hasher;
	uint32_t hasher_algos;
	struct imastream_pending_counts c;
};

/* Opens @root and loads every transaction's entries, oldest first.  Return: 0 or -errno (said). */
int ims_pending_start(struct run *r, const char *root, const struct imastream_log *log);
/* One live entry per path: a newer transaction's supersedes; two of one are refused.  Nonzero: out of memory. */
int ims_pending_dedup(struct run *r);
/* Each live entry's reference, from the root's rpm database, else its install record. */
int ims_pending_references(struct run *r);
void ims_pending_run_free(struct run *r);

#endif /* IMASTREAM_INSTALLED_PENDING_RUN_H */
