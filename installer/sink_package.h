/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The chain sink's package: its rpm header judged before anything is written, and its names. */
#ifndef IMASTREAM_INSTALLER_SINK_PACKAGE_H
#define IMASTREAM_INSTALLER_SINK_PACKAGE_H

#include <stdbool.h>

#include "imastream/chain.h"

struct ims_header_trust;

/*
 * The root's rpm database as the chain sink asks it, and the package being installed: an
 * rpm package's header comes first (package_header), then begin_package names it; any
 * other package is named by the name it began with.
 */
struct ims_sink_package {
	const struct imastream_log *log;
	const char *root;
	unsigned int flags;		/* enum imastream_chain_sink_flag */
	void *ts;			/* a librpm rpmts with the root set */
	bool rpmdb;			/* the root has an rpm database */
	struct ims_header_trust *trust; /* NULL with IMASTREAM_SINK_NO_SIGNATURES */
	void *h;			/* the librpm Header package_header saw, or NULL */
	char *h_for;			/* the package name it saw it for */
	bool sig_ok;			/* its header signature verified */
	bool take_over; /* rpm's database has its name: its entry goes once it is installed */
	char *name;	/* the record's name: the package's NAME tag, or its name */
	char *nevra;
	/* With take_over: rpm's entry that goes. */
	unsigned int take_over_offset;
};

/*
 * Opens @root's rpm state: rpm's configuration, an rpmts, whether a database is there,
 * and the header trust from @pgp_keys and the database's keyring (unless
 * IMASTREAM_SINK_NO_SIGNATURES in @flags).  @root must outlive @p.  Return: 0, -ENOMEM,
 * or a negative errno said in one line; @p is to be released either way.
 */
int ims_sink_package_init(struct ims_sink_package *p, int rootfd, const char *root,
			  unsigned int flags, const char *const *pgp_keys,
			  const struct imastream_log *log);
void ims_sink_package_release(struct ims_sink_package *p);

/*
 * package_header: judges @rpm_header of package @name (its signature, then the chain's
 * verify hook; rpm's database owning its name, unless IMASTREAM_SINK_TAKE_OVER) and warns
 * of the scriptlets it has, which are not run.  Return: 0, or a negative errno (said).
 */
int ims_sink_package_header(struct ims_sink_package *p, struct imastream_chain *chain,
			    const char *name, void *rpm_header);

/*
 * begin_package: names package @name (from the header package_header saw for it, if any)
 * and fills the chain's @pkg (valid until the package ends): its NEVRA, and for an rpm
 * header what was checked of it (@txn_flags: IMASTREAM_TXN_*).  Return: 0, -ENOMEM.
 */
int ims_sink_package_begin(struct ims_sink_package *p, const char *name, unsigned int txn_flags,
			   struct imastream_pkg *pkg);

/* end_package: a take-over installed (@status 0) removes rpm's entry; the header goes. */
void ims_sink_package_end(struct ims_sink_package *p, int rootfd, int status);

#endif /* IMASTREAM_INSTALLER_SINK_PACKAGE_H */
