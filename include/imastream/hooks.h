/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The security hook API: what a chain plugin implements and the per-file context it shares. */
#ifndef IMASTREAM_HOOKS_H
#define IMASTREAM_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "imastream/common.h"
#include "imastream/hash.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The twelve hooks of the 2012 rpm security-hook proposal, modernised, plus the post hook
 * of "file opened" (file_done), so that every pre hook has a post that always runs:
 *
 *   init ─┬─ tsm_pre ─┬─ psm_pre ─┬─ script_exec
 *         │           │           ├─ verify, file_conflict
 *         │           │           └─ file_opened ─ file_updated* ─ file_closed ─ file_done
 *         │           └─ psm_post
 *         └─ tsm_post
 *  cleanup
 *
 * Pre hooks run in chain order and stop at the first failure.  The matching post hook
 * then runs, in reverse chain order, for every plugin the pre hook reached (the failing
 * one included), with the failure code.  cleanup runs in reverse order for every plugin
 * whose init succeeded.
 *
 * Under rpm, a psm pair brackets each package's install or erase.  rpm before 6.1 also
 * brackets each transaction scriptlet stage of a package (%pretrans, %posttrans, file
 * triggers) with a psm pair of its own, without files; 6.1 runs those scriptlets, and
 * their script_exec, outside any psm pair.  Plugins must take a package's psm pairs as
 * they come: several, or one.
 */
enum imastream_hook {
	IMASTREAM_HOOK_INIT,
	IMASTREAM_HOOK_CLEANUP,
	IMASTREAM_HOOK_TSM_PRE,
	IMASTREAM_HOOK_TSM_POST,
	IMASTREAM_HOOK_PSM_PRE,
	IMASTREAM_HOOK_PSM_POST,
	IMASTREAM_HOOK_SCRIPT_EXEC,
	IMASTREAM_HOOK_FILE_OPENED,
	IMASTREAM_HOOK_FILE_UPDATED,
	IMASTREAM_HOOK_FILE_CLOSED,
	IMASTREAM_HOOK_FILE_DONE,
	IMASTREAM_HOOK_VERIFY,
	IMASTREAM_HOOK_FILE_CONFLICT,
	IMASTREAM_HOOK_COUNT
};

struct imastream_config;

/*
 * Room to grow.  Every struct below that a driver fills and hands to the chain (txn, pkg,
 * script, verify, conflict, file) starts with "size_t size": set it to sizeof the struct,
 * as in "struct imastream_pkg pkg = { .size = sizeof(pkg), ... }".  Members are only
 * ever added at the end.  The chain refuses a size below a struct's first version
 * (-EINVAL, one line naming the struct), and it and the built-in plugins read a member
 * added later only when the driver's size covers it; so a driver built against an older
 * header keeps working with a newer library.  A size rather than reserved room: the
 * chain can tell a struct nobody filled (size 0) from an older one, and no amount of
 * spare room need be guessed.  The structs the chain hands out (struct
 * imastream_file_xattr, struct imastream_init_args) grow at the end likewise; callers
 * never allocate them.  So the structs below read alike (flags, then "size" and a few
 * members) and stay apart: each is ABI of its own, grown and checked on its own.
 */

/* Transaction flags a driver reports in struct imastream_txn. */
enum {
	/* The driver did not check per-file digests (rpm --nofiledigest). */
	IMASTREAM_TXN_NOFILEDIGEST = 1u << 0,
	/* Nothing is written (rpm --test). */
	IMASTREAM_TXN_TEST = 1u << 1,
	/* No security labels wanted (rpm --nocontexts). */
	IMASTREAM_TXN_NOCONTEXTS = 1u << 2,
};

/**
 * struct imastream_txn - one transaction
 * @size: sizeof(struct imastream_txn), as the driver was built (see "Room to grow")
 * @root: the root directory files are installed under ("/" for none); file paths given
 *        to file hooks are relative to the root the driver is chrooted into
 * @flags: IMASTREAM_TXN_*
 * @rpm_ts: the driver's librpm transaction set (an rpmts) when it has one, else NULL;
 *          its database is the target root's: policy plugins look up who owns a file
 *          there.  Valid from tsm_pre to tsm_post.
 */
struct imastream_txn {
	size_t size;
	const char *root;
	unsigned int flags;
	void *rpm_ts;
};

enum imastream_pkg_op {
	IMASTREAM_PKG_INSTALL,
	IMASTREAM_PKG_ERASE,
	IMASTREAM_PKG_OTHER, /* pre/posttrans and other non-file steps */
};

/* Package flags. */
enum {
	/* The header was authenticated (its digest or signature checked by the driver). */
	IMASTREAM_PKG_HEADER_VERIFIED = 1u << 0,
	/* The per-file digests of this package are checked while writing. */
	IMASTREAM_PKG_FILEDIGESTS_CHECKED = 1u << 1,
};

/**
 * struct imastream_pkg - one package of the transaction
 * @size: sizeof(struct imastream_pkg), as the driver was built (see "Room to grow")
 * @nevra: name-epoch:version-release.arch, for messages and records
 * @op: enum imastream_pkg_op
 * @flags: IMASTREAM_PKG_*
 * @rpm_header: the package's librpm Header when the driver has one (the rpm adapter; the
 *              installer reads headers with librpm too), else NULL: policy plugins judge
 *              the package by its header signature and file list.  Valid from psm_pre
 *              to psm_post; plugins take their own reference (headerLink) to keep it.
 */
struct imastream_pkg {
	size_t size;
	const char *nevra;
	int op;
	unsigned int flags;
	void *rpm_header;
};

/* Script types (a bit mask, as rpm's). */
enum {
	IMASTREAM_SCRIPT_FORK = 1u << 0,
	IMASTREAM_SCRIPT_EXEC = 1u << 1,
};

/**
 * struct imastream_script - a scriptlet about to be executed (in the forked child)
 * @size: sizeof(struct imastream_script), as the driver was built (see "Room to grow")
 * @path: the interpreter or program run
 * @type: IMASTREAM_SCRIPT_*
 */
struct imastream_script {
	size_t size;
	const char *path;
	unsigned int type;
};

/**
 * struct imastream_verify - a signature check the driver made, which plugins may veto
 * @size: sizeof(struct imastream_verify), as the driver was built (see "Room to grow")
 * @what: what was checked ("header", "payload", a path)
 * @hash_algo: kernel hash id of @digest, 0 if none
 * @digest: the digest the signature covers (may be NULL)
 * @digest_len: its length
 * @sig: the signature (may be NULL)
 * @sig_len: its length
 * @result: the driver's verdict: 0 or a negative errno
 */
struct imastream_verify {
	size_t size;
	const char *what;
	int hash_algo;
	const uint8_t *digest;
	size_t digest_len;
	const uint8_t *sig;
	size_t sig_len;
	int result;
};

/**
 * struct imastream_conflict - a file about to replace one another package owns
 * @size: sizeof(struct imastream_conflict), as the driver was built (see "Room to grow")
 * @path: the final path
 * @pkg: the package being installed
 * @owner: nevra of the package that owns the file now
 */
struct imastream_conflict {
	size_t size;
	const char *path;
	const struct imastream_pkg *pkg;
	const char *owner;
};

/* File flags (struct imastream_file.flags). */
enum {
	IMASTREAM_FILE_CONFIG = 1u << 0,  /* %config */
	IMASTREAM_FILE_GHOST = 1u << 1,   /* %ghost: no content */
	IMASTREAM_FILE_UNOWNED = 1u << 2, /* a parent directory no package owns */
	IMASTREAM_FILE_HARDLINK = 1u << 3, /* one of several links to one inode */
	IMASTREAM_FILE_SKIP = 1u << 4,    /* the driver leaves the file alone (skipped action) */
	IMASTREAM_FILE_ERASE = 1u << 5,   /* being removed, not written */
	/*
	 * imastream_file_set_xattr() records the values without writing them: the driver
	 * compares them with what the file has and writes only what differs, in chain order
	 * (imastream relabel on an installed file; --dry-run).
	 */
	IMASTREAM_FILE_RECORD_ONLY = 1u << 6,
	/*
	 * The driver created this inode for this install (rpm's temp file before its
	 * rename): it holds no value of an earlier one, so no plugin need read one.
	 */
	IMASTREAM_FILE_CREATED = 1u << 7,
	/*
	 * With IMASTREAM_FILE_CREATED: the driver set @uid, @gid and @mode on the new inode
	 * and no xattr, so what EVM covers is those and what the chain writes.  The evm
	 * plugin then signs that without reading the inode back, once one file of the
	 * package read back agreed (an LSM that labels new inodes shows there).
	 */
	IMASTREAM_FILE_META_KNOWN = 1u << 8,
};

/**
 * struct imastream_file_xattr - an xattr a plugin set on the file during this install
 * @name: full name as asked ("security.selinux"), whatever namespace it was written to
 * @value: the bytes written (a label's trailing NUL included)
 * @len: their length
 * @skipped: a soft error (no xattr support) skipped the write: the value is what
 *           would have been written
 */
struct imastream_file_xattr {
	const char *name;
	const uint8_t *value;
	size_t len;
	bool skipped;
};

/* Largest number of xattrs a chain records per file, and the largest value. */
#define IMASTREAM_FILE_MAX_XATTRS 8
#define IMASTREAM_FILE_MAX_XATTR_VALUE 65536

/**
 * struct imastream_file - the per-file context every plugin of the chain shares
 *
 * The driver fills the description fields before file_opened and may update @path, @fd
 * and the metadata before file_closed (rpm only knows the descriptor there).  The chain
 * owns the digest and xattr state; plugins read it and add to it through the functions
 * below, never directly.
 *
 * @size: sizeof(struct imastream_file), as the driver was built (see "Room to grow")
 * @path: where the object is now, relative to the current root (rpm: the temp name
 *        "dir/base;xxxxxxxx"); for symlinks and devices the only handle to use
 * @dest: the final name, which labels and policy are looked up by
 * @fd: a descriptor on the object (possibly write-only: never read it), or -1
 * @mode: the final st_mode, type bits included
 * @uid, @gid: the final owner
 * @content_size: content size in bytes (named "size" before soname 1, which now sizes
 *                the struct)
 * @flags: IMASTREAM_FILE_*
 * @pkg: the package it belongs to (may be NULL for unowned directories)
 * @known_algo: kernel hash id of @known_digest, or 0; set by the driver when it verified
 *              the content against a digest (rpm's header digest), so no byte need be
 *              read again.  Set before file_opened (with @known_len still 0), it promises
 *              that digest, verified, by file_closed: a file the driver streams through
 *              file_updated is then not hashed in that algorithm by the chain (with
 *              verity = on, where the stream feeds the fs-verity tree); a promise not
 *              kept costs one re-read
 * @known_digest: that digest
 * @known_len: its length
 * @pkg_sig: the security.ima value the package carries for this file (rpm's
 *           RPMTAG_FILESIGNATURES: a type-3 signature header and signature), or NULL;
 *           not yet verified: the ima plugin checks it against the trust store and the
 *           file's verified digest before writing it
 * @pkg_sig_len: its length
 * @chain_state: private to the chain
 */
struct imastream_file {
	size_t size;
	const char *path;
	const char *dest;
	int fd;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	uint64_t content_size;
	unsigned int flags;
	const struct imastream_pkg *pkg;
	int known_algo;
	uint8_t known_digest[IMASTREAM_HASH_MAX_DIGEST];
	size_t known_len;
	const uint8_t *pkg_sig;
	size_t pkg_sig_len;
	void *chain_state;
};

/**
 * imastream_file_digest - the content digest of a regular file, computed at most once
 * @f: the file, between file_opened and file_done
 * @algo: a kernel hash id that some plugin asked for at init
 * @digest_ret: points into the file context; valid until file_done
 * @len_ret: the digest size (may be NULL)
 * @how_ret: set to "header" (the driver's verified digest), "stream" (the bytes seen by
 *           file_updated) or "reread" (the file re-opened read-only by @path and hashed
 *           once for every wanted algorithm); may be NULL
 *
 * Return: 0, -EINVAL if @f is not a regular file or @algo was not asked for at init,
 * -errno of open/read.
 */
IMASTREAM_API int imastream_file_digest(struct imastream_file *f, int algo,
					const uint8_t **digest_ret, size_t *len_ret,
					const char **how_ret);

/**
 * imastream_file_verity_digest - the fs-verity digest of a regular file, computed once
 * @f: the file, between file_opened and file_done, in a chain with verity = on
 * @digest_ret: IMASTREAM_VERITY_DIGEST_SIZE bytes (SHA-256, 4 KiB blocks, no salt: what
 *              FS_IOC_MEASURE_VERITY returns once verity is on); valid until file_done
 * @how_ret: "stream" or "reread", as for imastream_file_digest() (may be NULL)
 * Return: 0, -EINVAL if @f is not a regular file or verity is off, -errno of open/read.
 */
IMASTREAM_API int imastream_file_verity_digest(struct imastream_file *f,
					       const uint8_t **digest_ret,
					       const char **how_ret);

/**
 * imastream_file_set_xattr - write an xattr on the file and record it for later plugins
 * @f: the file, in file_closed
 * @name: the full name ("security.selinux", "security.ima")
 * @value: the bytes
 * @len: their length (at most IMASTREAM_FILE_MAX_XATTR_VALUE)
 *
 * Writes with fsetxattr() on @f->fd, or lsetxattr() on @f->path without one.  When the
 * filesystem has no xattr support (EOPNOTSUPP) and the configuration says
 * "no_xattr_support = skip", the write is skipped with one notice per transaction and
 * recorded as skipped; otherwise it is an error.  The user-namespace option writes
 * "user.X" for "security.X".  With IMASTREAM_FILE_RECORD_ONLY in @f->flags nothing is
 * written: the value is only recorded, for the driver to compare and write.
 * Return: 0, -E2BIG for a too-long value, -ENOSPC when IMASTREAM_FILE_MAX_XATTRS are
 * recorded, -errno of the set call.
 */
IMASTREAM_API int imastream_file_set_xattr(struct imastream_file *f, const char *name,
					   const void *value, size_t len);

/**
 * imastream_file_keep_signature - keep the signature the file already holds, when right
 * @f: the file, in file_closed: with IMASTREAM_FILE_RECORD_ONLY, of a chain given a store
 *     to keep signatures by (imastream relabel); otherwise (an install)
 *     the store is the chain's own certificate (cert), so that a file rpm leaves in
 *     place keeps what it holds: with EVM on, the kernel refuses to replace a valid
 *     portable signature by a different value. Without either store, or on a file
 *     with IMASTREAM_FILE_CREATED (nothing to keep), this does nothing.
 * @name: "security.ima" or "security.evm" (read from "user.X" as set_xattr writes it)
 * @type: the value type a new signature would have (IMASTREAM_XATTR_DIGSIG,
 *        IMASTREAM_XATTR_EVM_PORTABLE)
 * @algo, @digest, @len: what a new signature would sign
 *
 * For a plugin about to sign: a rerun finds the file's value of @name of that type and
 * algorithm, verifying over @digest with that store, records it as this plugin's
 * value and signs nothing (signatures are randomised, so a new one would differ from the
 * old without being any more right).
 * Return: 1 kept (recorded), 0 sign anew, -errno recording it.
 */
IMASTREAM_API int imastream_file_keep_signature(struct imastream_file *f, const char *name,
						int type, int algo, const uint8_t *digest,
						size_t len);

/**
 * imastream_file_get_xattr - an xattr a plugin set earlier in this chain run
 * Return: the record, or NULL if no plugin set @name on @f.
 */
IMASTREAM_API const struct imastream_file_xattr *
imastream_file_get_xattr(const struct imastream_file *f, const char *name);

/* The configuration the chain was created with (valid for the chain's life). */
IMASTREAM_API const struct imastream_config *imastream_file_config(const struct imastream_file *f);

/* The log of the chain the file runs through. */
IMASTREAM_API const struct imastream_log *imastream_file_log(const struct imastream_file *f);

/* What a plugin writes; the chain checks that the configured order respects it. */
enum imastream_plugin_rank {
	IMASTREAM_RANK_ANY = 0,    /* writes no security xattr: may sit anywhere */
	IMASTREAM_RANK_LABELS = 1, /* security labels (selinux, smack, capabilities) */
	IMASTREAM_RANK_IMA = 2,    /* security.ima */
	IMASTREAM_RANK_EVM = 3,    /* security.evm: covers everything above, must be last */
};

/**
 * struct imastream_init_args - what init receives
 * @chain: the chain (the built-in plugins that sign share its key through it)
 * @name: the plugin's name in this chain
 * @cfg: the configuration (valid until cleanup)
 * @log: where to report (valid until cleanup)
 * @hash_algos: the plugin ORs IMASTREAM_HASH_BIT() of each content digest it will ask
 *              imastream_file_digest() for; the chain computes the union once per file
 */
struct imastream_chain;

struct imastream_init_args {
	struct imastream_chain *chain;
	const char *name;
	const struct imastream_config *cfg;
	const struct imastream_log *log;
	uint32_t hash_algos;
};

/**
 * struct imastream_plugin_key - a configuration key a plugin owns
 * @name: the key, as the config file ("NAME = value"), the rpm macro %_imastream_NAME
 *        and the command's -o NAME=VALUE spell it
 * @def: its default as text, or NULL for unset
 * @check: checks a value's form when it is set (NULL: any text is kept); returns NULL,
 *         or what is wrong, as a predicate ("is not refuse or allow"), which
 *         imastream_config_set() reports after the source, the key and the value.
 *         What depends on the running system (a file, a policy) is checked by init.
 * @help: one line: what it sets, with its values
 *
 * imastream_config_set() takes the keys of every built-in plugin, whether or not the
 * plugin is in the chain; the plugin reads them with imastream_config_get().  An empty
 * value unsets a key: imastream_config_get() then gives @def again.  Plugins are built
 * into the library (none is loaded at run time), so these are the only keys a
 * configuration holds: a program's own plugin (imastream_chain_add()) may declare no
 * key that no built-in plugin has, and reads its settings its own way.
 */
struct imastream_plugin_key {
	const char *name;
	const char *def;
	const char *(*check)(const char *value);
	const char *help;
};

/**
 * struct imastream_plugin_ops - a plugin: a constant table of hooks
 * @size: sizeof(struct imastream_plugin_ops) as the plugin was built; members added later
 *        go at the end, and the chain uses them only when @size covers them, so a plugin
 *        built against an older header keeps working (imastream_chain_add() refuses 0)
 * @name: the name a configuration's "plugins" list uses
 * @rank: enum imastream_plugin_rank
 * @keys: the configuration keys the plugin owns, ended by one whose name is NULL; may
 *        be NULL
 *
 * Every hook is optional: the chain calls only those that are set.  Hooks return 0 or a
 * negative errno (post hooks return nothing: they cannot undo).  @state is what init
 * stored in *state_ret.
 */
struct imastream_plugin_ops {
	size_t size;
	const char *name;
	int rank;
	const struct imastream_plugin_key *keys;

	/* Load keys and configuration here: file hooks may run inside a chroot. */
	int (*init)(struct imastream_init_args *args, void **state_ret);
	void (*cleanup)(void *state);

	int (*tsm_pre)(void *state, const struct imastream_txn *txn);
	void (*tsm_post)(void *state, const struct imastream_txn *txn, int res);
	int (*psm_pre)(void *state, const struct imastream_pkg *pkg);
	void (*psm_post)(void *state, const struct imastream_pkg *pkg, int res);
	int (*script_exec)(void *state, const struct imastream_script *script);

	int (*file_opened)(void *state, struct imastream_file *f);
	/* A chunk of content, in order; only drivers that stream the payload call it. */
	int (*file_updated)(void *state, struct imastream_file *f, const void *buf, size_t len);
	/* Content complete and verified, metadata final, final name not yet given. */
	int (*file_closed)(void *state, struct imastream_file *f);
	/* The post hook of file_opened: @res is 0 once the file has its final name. */
	void (*file_done)(void *state, struct imastream_file *f, int res);

	int (*verify)(void *state, const struct imastream_verify *v);
	int (*file_conflict)(void *state, const struct imastream_conflict *c);
};

/* A built-in plugin by name ("selinux", "ima", "evm", "trace"), or NULL. */
IMASTREAM_API const struct imastream_plugin_ops *imastream_plugin_lookup(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_HOOKS_H */
