/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The plugin chain and its configuration: what drivers (the rpm adapter, the installer) call. */
#ifndef IMASTREAM_CHAIN_H
#define IMASTREAM_CHAIN_H

#include <stdbool.h>
#include <stdio.h>

#include "imastream/common.h"
#include "imastream/hooks.h"

#ifdef __cplusplus
extern "C" {
#endif

enum imastream_mode {
	IMASTREAM_MODE_OFF,  /* load nothing, write nothing */
	IMASTREAM_MODE_HASH, /* security.ima = digest */
	IMASTREAM_MODE_SIGN, /* security.ima = signature of the digest with a local key */
};

/* What the ima plugin does with the file signatures a package carries. */
enum imastream_pkgsig {
	IMASTREAM_PKGSIG_VERIFY, /* check each against trust and the file's digest, then write it */
	IMASTREAM_PKGSIG_IGNORE, /* never look at them: the plugin's own mode decides */
	IMASTREAM_PKGSIG_AUTO,   /* verify when a trust store is set, else ignore (one notice) */
};

/*
 * What %config files get.  They change after install: a hash is what the kernel keeps up
 * to date when root edits one, while a signature would make the edited file unreadable;
 * and under appraise_tcb a root-owned file without security.ima cannot even be read.
 */
enum imastream_config_files {
	IMASTREAM_CONFIG_FILES_NO,   /* nothing (rpm's ima plugin): unreadable in enforce mode */
	IMASTREAM_CONFIG_FILES_HASH, /* a digest, even in sign mode; EVM covers it as usual */
	IMASTREAM_CONFIG_FILES_YES,  /* as any other file: signed in sign mode */
};

/* ... and when one cannot be used (bad, unknown key, no trust store, other algorithm). */
enum imastream_pkgsig_failure {
	IMASTREAM_PKGSIG_REFUSE,   /* fail the file, so the package: one line, file and key id */
	IMASTREAM_PKGSIG_FALLBACK, /* warn, then hash or sign locally as the mode says */
};

/* Largest number of algorithms package_sig_algos may list. */
#define IMASTREAM_PKGSIG_MAX_ALGOS 3

enum imastream_no_xattr {
	IMASTREAM_NO_XATTR_FAIL, /* a filesystem without xattrs fails the install */
	IMASTREAM_NO_XATTR_SKIP, /* ... or is skipped with one notice */
};

/*
 * userns_xattrs: what a security.* write the kernel refuses in a non-initial user
 * namespace (a rootless image build) becomes.  Zero is the behaviour of programs built
 * before the key (an error); imastream_config_init() sets pending.
 */
enum imastream_userns_xattrs {
	IMASTREAM_USERNS_XATTRS_ERROR,	 /* the install fails, as outside a user namespace */
	IMASTREAM_USERNS_XATTRS_PENDING, /* kept in ROOT/var/lib/imastream/pending/ */
	IMASTREAM_USERNS_XATTRS_SKIP,	 /* dropped, one warning per transaction */
};

/**
 * struct imastream_config - the settings, validated; strings are owned (NULL = unset)
 *
 * The keys of imastream_config_set() (and of the config file, and the suffixes of the
 * rpm macros %_imastream_KEY) are the core's, which are members below, and the keys each
 * built-in plugin declares in its ops (struct imastream_plugin_key), which are kept
 * inside the library and read with imastream_config_get(): a new plugin adds keys
 * without changing this struct.  imastream_config_keys() lists both.  The core's, with
 * their defaults:
 *   mode              hash | sign | off                      (hash)
 *   hash_algo         sha256, sha384, sha512, sha224, sha1, md5, sm3 (sha256)
 *   key               private key: PEM file, pkcs11: URI or kernel key id   (unset)
 *   key_pass_file     file whose first line is the key's passphrase or PIN   (unset)
 *   key_pass_env      name of an environment variable holding it             (unset)
 *   cert              the signer's certificate (key id from its SKID)        (unset)
 *   trust             trust store: a directory or bundle of certificates; our
 *                     signatures and the package's must verify against it    (unset)
 *   evm               portable | none                                        (none)
 *   plugins           ordered, comma-separated chain                   (selinux,ima,evm)
 *   no_xattr_support  fail | skip                                            (fail)
 *   config_files      hash | yes | no: %config files get a digest (even in sign
 *                     mode), are treated as any file (package signatures
 *                     included), or get nothing                               (hash)
 *   package_sigs      verify | ignore | auto: file signatures the package
 *                     carries are checked against trust and written as
 *                     security.ima, or never looked at; auto verifies when
 *                     trust is set and ignores them otherwise               (auto)
 *   package_sig_failure  refuse | fallback: a signature that does not verify,
 *                     has a key outside trust, or cannot be checked (no trust
 *                     store, an algorithm outside package_sig_algos) fails
 *                     the package, or is replaced by the mode's own value     (refuse)
 *   package_sig_algos digests computed to check package signatures with, at
 *                     most 3, comma-separated; hash_algo always counts too   (sha256)
 *   xattr_namespace   security | user: where IMA/EVM/labels go               (security)
 *   weak_algos        refuse | allow: md5 as
 *                     hash_algo or in package_sig_algos                      (refuse)
 *   verity            off | on: (sign mode) security.ima is a version-3 signature over
 *                     the fs-verity digest, and the driver enables fs-verity on
 *                     the file once no writable descriptor is left            (off)
 *   userns_xattrs     pending | error | skip: a security xattr the kernel refuses in
 *                     a user namespace (a rootless build) is kept below
 *                     ROOT/var/lib/imastream/pending/ for imastream relabel
 *                     --pending, fails the install, or is dropped with one
 *                     warning per transaction; outside a user namespace such a
 *                     refusal is always an error                           (pending)
 * The built-in plugins' keys (imastream-rpm(8) documents each):
 *   selinux  file_contexts;  trace  trace;  record  record_log, record_syslog;
 *   trust  trust_domains, trust_unknown, trust_privileged_rank, trust_protected;
 *   scriptctx  seccomp_deny, script_exec_context;
 *   smack  smack_manifests, smack_package_manifests.
 *
 * Room to grow: imastream_config_init() records the caller's sizeof in @size.  Members
 * are only ever added at the end, and the library reads or writes one only when @size
 * covers it, so a program built against an older header keeps working with a newer
 * library.  Never copy the struct (it owns @values); set it through the functions below.
 */
struct imastream_config_values;

struct imastream_config {
	size_t size;
	struct imastream_config_values *values; /* private: the plugins' keys */
	int mode;              /* enum imastream_mode */
	int hash_algo;         /* kernel hash id */
	char *key;
	char *key_pass_file;
	char *key_pass_env;
	char *cert;
	char *trust;
	bool evm;
	char *plugins;
	int no_xattr;          /* enum imastream_no_xattr */
	int config_files;          /* enum imastream_config_files */
	int package_sigs;         /* enum imastream_pkgsig */
	int package_sig_failure;  /* enum imastream_pkgsig_failure */
	uint32_t package_sig_algos; /* IMASTREAM_HASH_BIT()s */
	bool user_xattrs;
	bool allow_weak_algos; /* weak_algos = allow */
	bool verity;           /* verity = on */
	int userns_xattrs;     /* enum imastream_userns_xattrs */
};

/* The keys imastream_config_set() accepts, the core's then the plugins', NULL-terminated. */
IMASTREAM_API const char *const *imastream_config_keys(void);

/**
 * imastream_config_init - fill @cfg with the defaults
 * A macro, so that the library learns the size of the caller's struct (see above).
 * Return: 0, -EINVAL for a size smaller than any version of the struct, or -ENOMEM.
 * Release with imastream_config_release().
 */
#define imastream_config_init(cfg) imastream_config_init_sized((cfg), sizeof(*(cfg)))
IMASTREAM_API int imastream_config_init_sized(struct imastream_config *cfg, size_t size);
IMASTREAM_API void imastream_config_release(struct imastream_config *cfg);

/**
 * imastream_config_get - the value of a plugin's key, as text
 * @cfg: the configuration
 * @key: a key some built-in plugin declares ("record_log")
 * Return: the value set, else the key's default; NULL when both are unset, and for a
 * key no plugin declares (the core's keys are the members of struct imastream_config).
 * Valid until the key is set again or @cfg is released.
 */
IMASTREAM_API const char *imastream_config_get(const struct imastream_config *cfg,
					       const char *key);

/**
 * imastream_config_set - set one key from its text form
 * @cfg: the configuration
 * @key: one of imastream_config_keys()
 * @value: its value (copied)
 * @where: names the source in messages ("macro %_imastream_mode", "/etc/x.conf:3")
 * @log: one line on error
 *
 * A key no core member holds goes to the built-in plugin that declares it, whose check
 * judges the value.
 * Return: 0, -EINVAL for an unknown key or an invalid value (an unknown algorithm,
 * a mode that is not hash/sign/off, what a plugin's check refuses...), -EOPNOTSUPP
 * for an algorithm this build cannot compute, -ENOMEM.
 */
IMASTREAM_API int imastream_config_set(struct imastream_config *cfg, const char *key,
				       const char *value, const char *where,
				       const struct imastream_log *log);

/**
 * imastream_config_load - read "key = value" lines ('#' comments, blank lines) from a file
 * Return: 0, -errno of fopen/read, or the first imastream_config_set() error (the line
 * is named in the message).
 */
IMASTREAM_API int imastream_config_load(struct imastream_config *cfg, const char *path,
					const struct imastream_log *log);

/**
 * imastream_config_check - the cross-key checks, once every key is set
 * Return: 0, -EINVAL (sign mode or evm without a key, a weak hash_algo or
 * package_sig_algos without weak_algos = allow, ...).
 */
IMASTREAM_API int imastream_config_check(const struct imastream_config *cfg,
					 const struct imastream_log *log);

struct imastream_chain;

/**
 * imastream_chain_new - an empty chain
 * @cfg: the configuration; must outlive the chain
 * @log: where every plugin reports; must outlive the chain (may be NULL)
 * Return: 0 or -ENOMEM.  Free with imastream_chain_free().
 */
IMASTREAM_API int imastream_chain_new(const struct imastream_config *cfg,
				      const struct imastream_log *log,
				      struct imastream_chain **ret);

/**
 * imastream_chain_add - append a plugin (before imastream_chain_init())
 * @ops: a built-in plugin (imastream_plugin_lookup()), or a program's own; the library
 *        loads none at run time
 * Return: 0, -EINVAL after init, when @ops has no name or size, when it declares a
 * configuration key no built-in plugin has (a configuration holds no other), or when its
 * rank would come before a plugin already added with a higher rank (labels → ima → evm),
 * -EEXIST for a second plugin of the same name, -E2BIG past 16 plugins.
 */
IMASTREAM_API int imastream_chain_add(struct imastream_chain *chain,
				      const struct imastream_plugin_ops *ops);

/**
 * imastream_chain_add_list - append the built-in plugins named in a comma-separated list
 * Return: 0, -ENOENT for a name that is no built-in plugin (logged), or an
 * imastream_chain_add() error.
 */
IMASTREAM_API int imastream_chain_add_list(struct imastream_chain *chain, const char *list);

/**
 * imastream_chain_init - run every plugin's init, in order
 *
 * Stops at the first failure; imastream_chain_free() then runs cleanup for the plugins
 * whose init succeeded.  Afterwards the chain knows the union of hash algorithms.
 * Return: 0, the failing init's error, or -ENOMEM/-EOPNOTSUPP from the hash engine.
 */
IMASTREAM_API int imastream_chain_init(struct imastream_chain *chain);

/* Runs cleanup in reverse order for every plugin whose init succeeded, then frees. */
IMASTREAM_API void imastream_chain_free(struct imastream_chain *chain);

/**
 * imastream_chain_from_config - the chain a configuration describes, initialised
 * @cfg: a configuration with every key set; must outlive the chain
 * @log: where every plugin reports; must outlive the chain (may be NULL)
 *
 * imastream_config_check(), imastream_chain_new(), imastream_chain_add_list() with
 * cfg->plugins, imastream_chain_init(): what every driver does, in one call.  Keys load
 * here, before any file.  On failure nothing is left to free.
 * Return: 0, or the first error of those calls (said in @log).
 */
IMASTREAM_API int imastream_chain_from_config(const struct imastream_config *cfg,
					      const struct imastream_log *log,
					      struct imastream_chain **ret);

struct imastream_signer;
struct imastream_trust;

/*
 * Dispatch.  The *_pre/file_opened calls return 0 or the first plugin error; the chain
 * remembers how far they got, and the matching post call runs exactly those plugins'
 * post hooks (in reverse) with @res.  A post call without a pre call is a no-op.
 */
IMASTREAM_API int imastream_chain_tsm_pre(struct imastream_chain *chain,
					  const struct imastream_txn *txn);
IMASTREAM_API void imastream_chain_tsm_post(struct imastream_chain *chain,
					    const struct imastream_txn *txn, int res);
IMASTREAM_API int imastream_chain_psm_pre(struct imastream_chain *chain,
					  const struct imastream_pkg *pkg);
IMASTREAM_API void imastream_chain_psm_post(struct imastream_chain *chain,
					    const struct imastream_pkg *pkg, int res);
IMASTREAM_API int imastream_chain_script_exec(struct imastream_chain *chain,
					      const struct imastream_script *script);
IMASTREAM_API int imastream_chain_verify(struct imastream_chain *chain,
					 const struct imastream_verify *v);
IMASTREAM_API int imastream_chain_file_conflict(struct imastream_chain *chain,
						const struct imastream_conflict *c);

/**
 * imastream_chain_file_opened - start a file: attach the chain's state, run file_opened
 * @f: filled by the driver; must stay valid until imastream_chain_file_done()
 * Return: 0, -ENOMEM, or the first plugin error.  Whatever it returns, the driver must
 * call imastream_chain_file_done() for @f.
 */
IMASTREAM_API int imastream_chain_file_opened(struct imastream_chain *chain,
					      struct imastream_file *f);
/* A chunk of content: fed to the digests the chain computes, then to the plugins. */
IMASTREAM_API int imastream_chain_file_updated(struct imastream_chain *chain,
					       struct imastream_file *f, const void *buf,
					       size_t len);
/* Content complete: runs file_closed in chain order, stopping at the first error. */
IMASTREAM_API int imastream_chain_file_closed(struct imastream_chain *chain,
					      struct imastream_file *f);
/*
 * Ends the file: file_done in reverse for the plugins file_opened reached; frees state.
 * For a file never file_opened (no chain_state) nothing runs, as for any post call.
 */
IMASTREAM_API void imastream_chain_file_done(struct imastream_chain *chain,
					     struct imastream_file *f, int res);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_CHAIN_H */
