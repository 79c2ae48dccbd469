// SPDX-License-Identifier: LGPL-2.1-or-later
/* Invariant 4, for every driver of the chain: a root without xattrs is reported before any file. */
#include <errno.h>
#include <sys/xattr.h>

#include "imastream/xattr.h"
#include "plugin/core/private.h"
#include "xattr/codec.h"

int ims_probe_root_xattrs(const struct imastream_config *cfg, const char *root, const char *hint,
			  const struct imastream_log *log)
{
	const char *name;
	char buf[1];

	if (!cfg || !root || cfg->mode == IMASTREAM_MODE_OFF)
		return 0;
	name = imastream_xattr_name(IMASTREAM_ATTR_IMA, cfg->user_xattrs);
	/* ENODATA and friends mean the filesystem knows the namespace: only EOPNOTSUPP stops. */
	if (lgetxattr(root, name, buf, sizeof(buf)) >= 0 || errno != EOPNOTSUPP)
		return 0;
	if (cfg->no_xattr == IMASTREAM_NO_XATTR_SKIP) {
		ims_logf(log, IMASTREAM_LOG_NOTICE,
			 "%s has no xattr support: no %s will be written (no_xattr_support = skip)",
			 root, name);
		return 0;
	}
	return ims_err(log, -EOPNOTSUPP, "%s has no xattr support for %s%s", root, name,
		       hint ? hint : "");
}
