/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The chain sink's file conflicts: which other package owns what an entry would replace, and the verdict. */
#ifndef IMASTREAM_INSTALLER_SINK_CONFLICTS_H
#define IMASTREAM_INSTALLER_SINK_CONFLICTS_H

#include <stdbool.h>
#include <stddef.h>

#include "imastream/chain.h"
#include "imastream/entry.h"
#include "installer/private.h"

/**
 * ims_conflict_owner - the package whose file entry @e of package @pkg_name would replace
 * @rec: the install record, or NULL: a recorded object of another package, unless it is a
 *       directory or the very same object (type, owner, and symlink target or content
 *       digest), which two packages may share
 * @owners: the root's rpm database's files, or NULL: another package's different file
 * Return: @buf holding the owner's name, or NULL when the entry replaces nobody's file (a
 * directory and an unowned entry never do).
 */
const char *ims_conflict_owner(const struct ims_record *rec, struct ims_rpmdb_owner *owners,
			       const char *pkg_name, const struct imastream_entry *e, char *buf,
			       size_t size);

/**
 * ims_conflict_judge - the verdict on entry @path of @pkg replacing @owner's file
 * @replace: IMASTREAM_SINK_REPLACE_FILES: the chain's file_conflict hook having let it
 *           pass, the file is replaced (one info line)
 *
 * Runs the chain's file_conflict hook: call it with the chain thread idle.
 * Return: 0 (replaced), or a negative errno when the hook or the lack of @replace refuses
 * it (said in one line).
 */
int ims_conflict_judge(struct imastream_chain *chain, const struct imastream_pkg *pkg,
		       const char *path, const char *owner, bool replace,
		       const struct imastream_log *log);

#endif /* IMASTREAM_INSTALLER_SINK_CONFLICTS_H */
