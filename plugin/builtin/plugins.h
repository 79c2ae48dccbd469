/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The built-in plugins' ops tables, for the registry (registry.c). */
#ifndef IMASTREAM_PLUGIN_PLUGINS_H
#define IMASTREAM_PLUGIN_PLUGINS_H

#include "common/private.h"
#include "imastream/chain.h"
#include "imastream/hooks.h"

extern const struct imastream_plugin_ops ims_trace_plugin;
extern const struct imastream_plugin_ops ims_selinux_plugin;
/* The policy plugins (plugin/builtin/policy/). */
extern const struct imastream_plugin_ops ims_trust_plugin;
extern const struct imastream_plugin_ops ims_record_plugin;
extern const struct imastream_plugin_ops ims_conflict_plugin;
extern const struct imastream_plugin_ops ims_scriptctx_plugin;
extern const struct imastream_plugin_ops ims_smack_plugin;
extern const struct imastream_plugin_ops ims_ima_plugin;
extern const struct imastream_plugin_ops ims_evm_plugin;

#endif /* IMASTREAM_PLUGIN_PLUGINS_H */
