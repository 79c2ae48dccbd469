// SPDX-License-Identifier: LGPL-2.1-or-later
/* The chain sink's fs-verity: a signed file's temp name opened below the root, and verity enabled on it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "imastream/rpmdb.h"
#include "installer/sink_verity.h"
#include "plugin/core/driver.h"

bool ims_sink_verity_on(const struct imastream_config *cfg)
{
	return cfg && IMS_CONFIG_VERITY(cfg) && cfg->mode == IMASTREAM_MODE_SIGN;
}

int ims_verity_enable_temp(int rootfd, const char *dest, const char *tmp, const char *nevra,
			   const struct imastream_log *log)
{
	const char *slash = strrchr(dest, '/');
	char rel[PATH_MAX];
	int dfd, fd, err;

	if (snprintf(rel, sizeof(rel), "%.*s", slash ? (int)(slash - dest) : 0, dest) >=
	    (int)sizeof(rel))
		return ims_err(log, -ENAMETOOLONG, "%s: %s: path too long", nevra, dest);
	/* Its directory as the extractor opened it: through the symlinks rpm follows. */
	dfd = imastream_open_dir_as_rpm(rootfd, rel, O_RDONLY, NULL, 0);
	fd = dfd < 0 ? dfd : openat(dfd, tmp, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (dfd >= 0 && fd < 0)
		fd = -errno;
	if (dfd >= 0)
		close(dfd);
	if (fd < 0)
		return ims_err(log, fd, "%s: %s: cannot open it to enable fs-verity: %s", nevra,
			       dest, strerror(-fd));
	err = ims_verity_enable(fd, dest, log);
	close(fd);
	return err;
}
