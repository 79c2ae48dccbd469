/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An upgrade's removals: what the recorded old version has and the new one lacks, as rpm -U removes it. */
#ifndef IMASTREAM_INSTALLER_SINK_DROPPED_H
#define IMASTREAM_INSTALLER_SINK_DROPPED_H

#include <sys/types.h>

#include "imastream/chain.h"
#include "installer/journal.h"
#include "installer/private.h"

/* One removal: an enum imastream_journal_step in @dir (relative, "" for the root). */
struct ims_dropped_step {
	int step;
	mode_t mode; /* as the old record has it */
	char *dir;
	char *name;
};

struct ims_dropped {
	struct ims_dropped_step *steps;
	size_t n, a;
};

/* One dropped object of the old version. */
struct ims_drop {
	char *path; /* "/a/b" */
	const struct imastream_record_file *rf;
	bool kept;  /* another package owns it too */
};

/*
 * Orders @d as they are removed: non-directories first, in their order, then directories,
 * deepest first, so that a parent is empty when its turn comes.  Linear but for the sort
 * of the directories.  Return: how many non-directories changed places (at most @n).
 */
size_t ims_dropped_order(struct ims_drop *d, size_t n);

/*
 * The removals that upgrading the recorded package @name to @next (its new record, every
 * object added) asks for, as rpm -U does them: an object the old record lists and @next
 * does not, unless another recorded package or, in the root's rpm database @owners (may
 * be NULL), another package owns it too; non-directories first, then directories deepest
 * first (removed only when empty); a %config file whose content differs from its record
 * is saved as NAME.rpmsave instead.  Each is checked as it is now: gone ones are left
 * out, and so is one whose directory cannot be reached beneath the root without a symlink
 * (a warning says so) or a file the root now has a directory in place of.
 * Return: 0 or -ENOMEM.
 */
int ims_dropped_plan(int rootfd, const struct ims_record *rec, struct ims_rpmdb_owner *owners,
		     const char *name, const char *nevra, struct ims_record_pkg *next,
		     const struct imastream_log *log, struct ims_dropped *out);
int ims_dropped_add(struct ims_dropped *d, int step, const char *dir, const char *name);
void ims_dropped_clear(struct ims_dropped *d);

/* Tells the intent journal every step (the sink's journal_steps). */
int ims_dropped_journal(const struct ims_dropped *d,
			int (*add)(void *ctx, int step, const char *dir, const char *name), void *ctx);

/*
 * Does the steps after the package's renames, as recovery would (ims_journal_replay():
 * every directory opened beneath the root without a symlink, a name already gone is a
 * step done).  Return: 0 or -errno (said).
 */
int ims_dropped_apply(int rootfd, const struct ims_dropped *d, const char *root,
		      const char *nevra, const struct imastream_log *log,
		      struct ims_journal_outcome *out);

/*
 * The chain sink's removals after @pkg's renames: does @d's steps (ims_dropped_apply()),
 * each seen by @chain as an erase (file_opened and file_done with IMASTREAM_FILE_ERASE, as
 * rpm's erase of a file).  The intent journal already promises them: a plugin cannot
 * refuse one any more.  A failure leaves the new version installed and says what is
 * left.  @d is cleared.
 */
void ims_dropped_remove(int rootfd, struct ims_dropped *d, const char *root,
			struct imastream_chain *chain, const struct imastream_pkg *pkg,
			const struct imastream_log *log);

#endif /* IMASTREAM_INSTALLER_SINK_DROPPED_H */
