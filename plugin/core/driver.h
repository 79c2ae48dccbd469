/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the chain core offers beyond imastream/chain.h to the code that drives a chain
 * (the rpm adapter in plugin/rpm/, the installer) and to the built-in plugins: the
 * checks of the root before the first file, fs-verity enabling after the chain signed a
 * file, and whether a configuration asks for fs-verity.  The chain's inside stays in
 * private.h, for plugin/core/ alone.
 */
#ifndef IMASTREAM_PLUGIN_CORE_DRIVER_H
#define IMASTREAM_PLUGIN_CORE_DRIVER_H

#include <stdbool.h>

#include "common/private.h"
#include "imastream/chain.h"
#include "imastream/hooks.h"

/*
 * verity = on, in a configuration large enough to hold the key (added after the first
 * struct imastream_config with a size).
 */
#define IMS_CONFIG_VERITY(cfg) \
	(IMS_HAS_MEMBER((cfg), struct imastream_config, verity) && (cfg)->verity)

/*
 * 0 when @root can hold the IMA xattr (or no_xattr_support = skip says to go on, with
 * one notice), else -EOPNOTSUPP with one line ending in @hint (how this driver says
 * "skip"; may be NULL).
 */
int ims_probe_root_xattrs(const struct imastream_config *cfg, const char *root, const char *hint,
			  const struct imastream_log *log);

/*
 * verity = on: 0 when @root's filesystem supports fs-verity, else -EOPNOTSUPP with one
 * line (fail closed: no file would get verity).  0 when verity is off.
 */
int ims_probe_root_verity(const struct imastream_config *cfg, const char *root,
			  const struct imastream_log *log);

/*
 * verity = on: whether the chain gave @f an fs-verity signature (security.ima of type 6,
 * user.ima included), so that fs-verity must be enabled on it.
 */
bool ims_file_wants_verity(const struct imastream_file *f);
/*
 * Enables fs-verity (SHA-256, 4 KiB blocks, no salt: the digest the signature covers) on
 * a regular file through @fd, a read-only descriptor; the kernel refuses while any
 * writable descriptor of the file is open anywhere (ETXTBSY).  Return: 0 (also when it
 * already was on), -errno with one line naming @what.
 */
int ims_verity_enable(int fd, const char *what, const struct imastream_log *log);

/*
 * Sign mode with an ECDSA key held in this process: @on starts a worker thread that
 * prepares the signatures' nonces while the driver streams files (signing on the
 * driver's thread then costs a few multiplications instead of a scalar multiplication); !@on stops
 * it and waits for it, as before a fork.  Return: 0, also when there is nothing to start
 * (hash mode, an RSA key, a kernel or token key); -errno with one line.
 */
int ims_chain_sign_ahead(struct imastream_chain *chain, bool on);

/*
 * The key of imastream_config_keys(), or of @extra (NULL-terminated, may be NULL), nearest
 * to @key by edit distance (a swap of two neighbours counts once), for a line refusing a
 * misspelt key; the first of equally near ones.
 */
const char *ims_config_nearest_key(const char *key, const char *const *extra);

#endif /* IMASTREAM_PLUGIN_CORE_DRIVER_H */
