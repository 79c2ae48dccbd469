/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every header of the streaming installer and the installed system, for existing users. */
#ifndef IMASTREAM_INSTALLER_H
#define IMASTREAM_INSTALLER_H

/*
 * An umbrella: what this header once declared itself now lives in one header per
 * subsystem, and it includes them all so that programs written against it keep building.
 * New code includes only the ones it uses:
 *
 *	imastream/entry.h	an entry of a package, IMASTREAM_TEMP_PREFIX
 *	imastream/extract.h	the extractor and the entry sink
 *	imastream/install_rpm.h	the rpm reader and its pre-check
 *	imastream/chain_sink.h	the bridge from an extractor to the hook chain
 *	imastream/record.h	the install record
 *	imastream/rpmdb.h	an installed root's rpm database and files
 *	imastream/relabel.h	relabelling an installed root
 *	imastream/audit.h	the audit of an installed root, and its orphans
 *	imastream/root.h	one transaction per root, and recovery
 */
#include "imastream/entry.h"
#include "imastream/extract.h"
#include "imastream/install_rpm.h"
#include "imastream/chain_sink.h"
#include "imastream/record.h"
#include "imastream/rpmdb.h"
#include "imastream/relabel.h"
#include "imastream/audit.h"
#include "imastream/root.h"

#endif /* IMASTREAM_INSTALLER_H */
