// SPDX-License-Identifier: LGPL-2.1-or-later
/* The core's configuration keys: below both the configuration (config.c) and the plugins' keys (plugin_keys.c), which list them. */
#include <string.h>

#include "common/private.h"
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

/* The value sets of the core's keys that have one, each in the order of what it sets. */
static const char *const modes[] = { "off", "hash", "sign", NULL };
static const char *const evms[] = { "none", "portable", NULL };
static const char *const no_xattr[] = { "fail", "skip", NULL };
static const char *const spaces[] = { "security", "user", NULL };
/* The order of enum imastream_pkgsig. */
static const char *const pkgsigs[] = { "verify", "ignore", "auto", NULL };
/* The order of enum imastream_config_files. */
static const char *const config_files[] = { "no", "hash", "yes", NULL };
static const char *const pkgsig_failure[] = { "refuse", "fallback", NULL };
static const char *const weak[] = { "refuse", "allow", NULL };
static const char *const verity[] = { "off", "on", NULL };
/* The order of enum imastream_userns_xattrs. */
static const char *const userns[] = { "error", "pending", "skip", NULL };

static const struct {
	const char *key;
	const char *const *values;
} value_sets[] = {
	{ "mode", modes },
	{ "evm", evms },
	{ "no_xattr_support", no_xattr },
	{ "config_files", config_files },
	{ "xattr_namespace", spaces },
	{ "package_sigs", pkgsigs },
	{ "package_sig_failure", pkgsig_failure },
	{ "weak_algos", weak },
	{ "verity", verity },
	{ "userns_xattrs", userns },
};

const char *const *ims_config_core_values(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(value_sets); i++)
		if (strcmp(key, value_sets[i].key) == 0)
			return value_sets[i].values;
	return NULL;
}
