// SPDX-License-Identifier: LGPL-2.1-or-later
/* The registry of built-in plugins, looked up by the names a configuration lists. */
#include <string.h>

#include "plugin/builtin/plugins.h"
#include "plugin/core/driver.h"

static const struct imastream_plugin_ops *const builtins[] = {
	&ims_selinux_plugin,
	&ims_ima_plugin,
	&ims_evm_plugin,
	&ims_trace_plugin,
	&ims_trust_plugin,
	&ims_conflict_plugin,
	&ims_scriptctx_plugin,
	&ims_smack_plugin,
	&ims_record_plugin,
};

const struct imastream_plugin_ops *imastream_plugin_at(unsigned int i)
{
	return i < ARRAY_SIZE(builtins) ? builtins[i] : NULL;
}

const struct imastream_plugin_ops *imastream_plugin_lookup(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(builtins); i++)
		if (strcmp(builtins[i]->name, name) == 0)
			return builtins[i];
	return NULL;
}
