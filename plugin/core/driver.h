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
 * One file's signatures made ahead (presign.c): what the driver knows of the file before
 * its content arrives.  The chain's signer takes a signature made from it only for the
 * very digest a plugin asks it to sign, so a prediction that turns out wrong costs the
 * work, never a wrong value.
 */
struct ims_presign_file {
	int algo;	       /* kernel hash id of @digest */
	const uint8_t *digest; /* the content digest the driver will verify */
	size_t digest_len;
	uint32_t uid, gid, mode; /* the owner and full mode the file will have */
	bool evm;		 /* also its EVM signature, predicted with no other label */
};
/*
 * Sign mode, verity off, a key the process holds: @on starts a worker thread that signs
 * the files queued with ims_chain_presign_file(); !@on stops it and waits for it, as
 * before a fork (the queue stays).  Return: 0; -EOPNOTSUPP, silently, where nothing can
 * be signed ahead (then ims_chain_sign_ahead() may still help); -errno with one line.
 */
int ims_chain_presign(struct imastream_chain *chain, bool on);
/*
 * Queues the file the driver will label as @index (its number in the package); ignored
 * without a worker, or for another algorithm than the chain's.  Return: 0 or -ENOMEM.
 */
int ims_chain_presign_file(struct imastream_chain *chain, size_t index,
			   const struct ims_presign_file *pf);
/*
 * The file the driver is about to label (-1: none): the signer takes only its
 * signatures, waiting for the worker when it is making them and signing itself when the
 * worker has not reached it; a failure of the worker fails that signature.
 */
void ims_chain_presign_current(struct imastream_chain *chain, long index);
/* The package is done: every queued file and signature is dropped. */
void ims_chain_presign_reset(struct imastream_chain *chain);

/* Whether this thread may run on more than one CPU: the nonce worker's default (on only then). */
bool ims_more_than_one_cpu(void);

/*
 * The key of imastream_config_keys(), or of @extra (NULL-terminated, may be NULL), nearest
 * to @key by edit distance (a swap of two neighbours counts once), for a line refusing a
 * misspelt key; the first of equally near ones.
 */
const char *ims_config_nearest_key(const char *key, const char *const *extra);

/**
 * imastream_chain_keep_signatures - let signing plugins keep signatures already right
 * @chain: the chain, before its first file
 * @trust: the store a signature a file already holds must verify with; must outlive the
 *         chain (NULL: always sign)
 *
 * For a driver that records values to compare (IMASTREAM_FILE_RECORD_ONLY: imastream
 * relabel): imastream_file_keep_signature() then keeps such a signature instead of
 * signing anew.
 */
void imastream_chain_keep_signatures(struct imastream_chain *chain,
				     const struct imastream_trust *trust);

/**
 * imastream_chain_signer - the chain's signing key, shared by every plugin that signs
 * @chain: the chain; call from a plugin's init
 * @ret: the signer, owned by the chain (freed after every cleanup has run)
 *
 * The first call loads the configured key (key, cert, key_pass_file/key_pass_env), and,
 * when "trust" is set, checks a test signature against those certificates; later calls
 * return the same signer, so the private key is read once.
 * Return: 0, -EINVAL without a key, or the error of imastream_signer_new() or of the
 * trust check (-EKEYREJECTED), each reported in one line.
 */
int imastream_chain_signer(struct imastream_chain *chain, struct imastream_signer **ret);

/* The union of IMASTREAM_HASH_BIT()s the plugins asked for at init. */
uint32_t imastream_chain_hash_algos(const struct imastream_chain *chain);

/**
 * imastream_hash_algo_weak - whether @algo (a kernel hash id) is too weak to rely on
 *
 * md5 today.  One rule for every command and driver: a weak algorithm is refused unless
 * the caller opted in (weak_algos = allow, or a command's --allow-weak).
 */
bool imastream_hash_algo_weak(int algo);

/* Name of a hook ("file_closed"), or NULL. */
const char *imastream_hook_name(int hook);

/* Iterates the built-in plugins: returns entry @i, or NULL past the end. */
const struct imastream_plugin_ops *imastream_plugin_at(unsigned int i);

#endif /* IMASTREAM_PLUGIN_CORE_DRIVER_H */
