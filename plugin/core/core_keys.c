// SPDX-License-Identifier: LGPL-2.1-or-later
/* The core's configuration keys: below both the configuration (config.c) and the plugins' keys (plugin_keys.c), which list them. */
#include "plugin/core/private.h"

/* The core's keys; each plugin declares its own in its ops (plugin_keys.c). */
static const char *const core_keys[] = {
	"mode",
	"hash_algo",
	"key",
	"key_pass_file",
	"key_pass_env",
	"cert",
	"trust",
	"evm",
	"plugins",
	"no_xattr_support",
	"config_files",
	"xattr_namespace",
	"package_sigs",
	"package_sig_failure",
	"package_sig_algos",
	/* The opt-in for weak digests (md5): refused everywhere else. */
	"weak_algos",
	/* fs-verity on every signed file, security.ima a sigv3 over its verity digest. */
	"verity",
	/* A security xattr refused in a user namespace: pending, error or skip. */
	"userns_xattrs",
	NULL,
};

const char *const *ims_config_core_keys(void)
{
	return core_keys;
}
