/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The chain sink's fs-verity (verity = on): enabling it on a file under its temp name, before its rename. */
#ifndef IMASTREAM_INSTALLER_SINK_VERITY_H
#define IMASTREAM_INSTALLER_SINK_VERITY_H

#include <stdbool.h>

#include "imastream/chain.h"
#include "imastream/common.h"

/* Whether @cfg (may be NULL) has signed files get fs-verity: verity = on, in sign mode. */
bool ims_sink_verity_on(const struct imastream_config *cfg);

/*
 * Enables fs-verity on the temp file @tmp beside package path @dest below @rootfd, its
 * directory opened as the extractor opened it (through the symlinks rpm follows).  Every
 * writable descriptor of it must be closed.  Return: 0, or a negative errno said in one
 * line naming @nevra and @dest: a file that cannot get verity fails its package (fail
 * closed).
 */
int ims_verity_enable_temp(int rootfd, const char *dest, const char *tmp, const char *nevra,
			   const struct imastream_log *log);

#endif /* IMASTREAM_INSTALLER_SINK_VERITY_H */
