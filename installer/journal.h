/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The intent journal: a package's renames and removals, durable before the first, completed after a crash. */
#ifndef IMASTREAM_INSTALLER_JOURNAL_H
#define IMASTREAM_INSTALLER_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "imastream/common.h"

/* ROOT/var/lib/imastream/journal, next to the "running" marker. */
#define IMS_STATE_DIR "var/lib/imastream"
#define IMS_JOURNAL_NAME "journal"
/* A journal is a few lines per file; a larger one is not ours. */
#define IMS_JOURNAL_MAX_SIZE (256u << 20)

enum ims_journal_kind {
	IMS_JOURNAL_RENAME, /* dir/tmp → dir/name */
	IMS_JOURNAL_REMOVE, /* dir/name goes (never a directory) */
	IMS_JOURNAL_RMDIR,  /* dir/name goes if it is an empty directory */
	IMS_JOURNAL_SAVE,   /* dir/name → dir/name.rpmsave (a modified %config file) */
};

/* What IMS_JOURNAL_SAVE appends to the name. */
#define IMS_JOURNAL_SAVE_SUFFIX ".rpmsave"


/* One step; @dir is relative to the root ("" for the root itself), @tmp and @name one component each. */
struct ims_journal_op {
	int kind;
	char *dir;
	char *tmp; /* RENAME only: IMASTREAM_TEMP_PREFIX, the writer's pid in hex, '-' */
	char *name;
};

struct ims_journal {
	char *package; /* for messages */
	pid_t pid;     /* the writer: every temp name carries it */
	struct ims_journal_op *ops;
	size_t nops, aops;
};

/* An empty journal of process @pid for @package (copied).  Return: 0, -ENOMEM. */
int ims_journal_init(struct ims_journal *j, const char *package, pid_t pid);
void ims_journal_clear(struct ims_journal *j);

/*
 * Appends a step.  @dir: a package path or a relative one ("/" or "" for the root); @tmp:
 * NULL for every kind but IMS_JOURNAL_RENAME.  Return: 0, -EINVAL (@why says what is wrong), -ENOMEM.
 */
int ims_journal_add(struct ims_journal *j, int kind, const char *dir, const char *tmp,
		    const char *name, const char **why);

/* The journal's text, ending in its SHA-256 line (malloc'ed).  Return: 0, -ENOMEM, -EIO. */
int ims_journal_format(const struct ims_journal *j, char **text, size_t *len);

/*
 * Parses a journal's text into @j (initialised here): the whole of it is checked (magic,
 * every line, every path, the SHA-256 line last) before anything is returned.
 * Return: 0, or -EBADMSG with *@line (0: the whole file) and *@why (a static string).
 */
int ims_journal_parse(const char *text, size_t len, struct ims_journal *j, unsigned int *line,
		      const char **why);

/*
 * Writes @j as @statefd's journal: a temp file, fsync'ed when @sync, renamed into place,
 * the directory fsync'ed when @sync.  Return: 0 or -errno (said).
 */
int ims_journal_write(int statefd, const struct ims_journal *j, bool sync,
		      const struct imastream_log *log);

/* Removes @statefd's journal (the transaction is complete). */
void ims_journal_remove(int statefd);

/* What a recovery did. */
struct ims_journal_outcome {
	bool found;             /* there was a journal */
	unsigned long renamed;  /* renames it completed (the rest were done) */
	unsigned long removed;  /* removals it completed (files, empty directories) */
	unsigned long saved;    /* files it renamed to NAME.rpmsave */
	unsigned long steps;    /* the journal's steps */
};

/*
 * Completes the steps of @j below @rootfd, in order: a rename whose temp still exists is
 * done (the temp is complete and labelled: it was synced before the journal was written),
 * one whose temp is gone was done already; a removal is done unless the name is gone; a
 * directory is removed only when empty (else kept, as rpm does); a save renames NAME to
 * NAME.rpmsave (one warning line says so) unless NAME is gone.  The install's own
 * removals after its renames go through here too.
 * Every directory is opened beneath the root without following a symlink, and all of them
 * are checked before the first step: a journal that leads out of the root, through a
 * symlink or onto a directory, changes nothing.  Return: 0 or -errno (said).
 */
int ims_journal_replay(int rootfd, const struct ims_journal *j, const char *root,
		       const struct imastream_log *log, struct ims_journal_outcome *out);

/*
 * Recovery: reads @statefd's journal, if any, replays it, syncs the root's filesystem and
 * removes it.  A journal that does not parse is refused in one line naming it, and
 * nothing is changed.  Return: 0 (also with no journal), -EBADMSG, -errno (said).
 */
int ims_journal_recover(int rootfd, int statefd, const char *root, const struct imastream_log *log,
			struct ims_journal_outcome *out);

#endif /* IMASTREAM_INSTALLER_JOURNAL_H */
