/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The built-in plugins' ops tables, for the registry (registry.c), and what ima and evm share. */
#ifndef IMASTREAM_PLUGIN_BUILTIN_PLUGINS_H
#define IMASTREAM_PLUGIN_BUILTIN_PLUGINS_H

#include "common/private.h"
#include "imastream/chain.h"
#include "imastream/hooks.h"
#include "imastream/keys.h"
#include "imastream/xattr.h"
#include "plugin/core/driver.h"

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

/*
 * The chain's signer, for ima and evm at init: the key is loaded (and its passphrase
 * checked) now, not at the first file.  *@value_size: room for one signature xattr of it.
 */
static inline int ims_plugin_signer(struct imastream_chain *chain, struct imastream_signer **signer,
				    size_t *value_size)
{
	int err = imastream_chain_signer(chain, signer);

	if (!err)
		*value_size = IMASTREAM_SIG_HDR_SIZE + imastream_signer_max_sig_size(*signer);
	return err;
}

#endif /* IMASTREAM_PLUGIN_BUILTIN_PLUGINS_H */
