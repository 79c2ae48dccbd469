/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One owner per package, as the rpm adapter enforces it (owners.c). */
/* Not installed/owners.h, what installed/ offers the streaming installer about who owns what. */
#ifndef IMASTREAM_PLUGIN_RPM_OWNERS_H
#define IMASTREAM_PLUGIN_RPM_OWNERS_H

#include <stdbool.h>

#include <rpm/rpmte.h>
#include <rpm/rpmts.h>

#include "imastream/common.h"

/* Whether %_imastream_take_over is 1 (yes, true). */
bool ims_rpm_take_over_wanted(void);
/* -EEXIST, said in one line, when a package of @ts has an imastream install record below
 * @rootfd and !@take_over; 0 otherwise. */
int ims_rpm_owners_check(rpmts ts, int rootfd, const char *root, bool take_over,
			 const struct imastream_log *log);
/* After @te succeeded under a take-over: its imastream record goes, with one line. */
void ims_rpm_owners_release(rpmte te, int rootfd, const struct imastream_log *log);

#endif /* IMASTREAM_PLUGIN_RPM_OWNERS_H */
