/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The bridge from an extractor to the security hook chain: an entry sink driving a chain. */
#ifndef IMASTREAM_CHAIN_SINK_H
#define IMASTREAM_CHAIN_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"
#include "imastream/extract.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The bridge from an extractor to the security hook chain (include/imastream/chain.h).
 *
 * imastream_chain_sink_new() gives a struct imastream_entry_sink that drives a chain as
 * the rpm plugin drives it under rpm, but with the per-chunk hook real:
 *
 *	sink created		→ tsm_pre (txn.root = opts->root, txn.rpm_ts = an rpmts
 *				  rooted there, so policy plugins see the root's rpm database)
 *	package_header (rpm)	→ the header's OpenPGP signature is checked against
 *				  opts->pgp_keys and the keys imported in the root's rpm
 *				  database; verify hook with the verdict
 *	begin_package		→ psm_pre (pkg.rpm_header: the package's Header, or NULL)
 *	entry_begin		→ file conflict hook when the record says another package owns
 *				  the path; file_opened (except further hard links: their inode
 *				  already has its attributes)
 *	entry_data		→ file_updated: the chain's digests come from the stream, except
 *				  when the header digest the extractor verifies in the same pass
 *				  is every digest the chain wants: then the chain takes that one
 *				  (known_digest) and no byte is hashed twice
 *				  (IMASTREAM_SINK_STREAM_ALWAYS streams anyway); with
 *				  verity = on every file streams for its fs-verity tree, and
 *				  that header digest, promised as known_algo before
 *				  file_opened, is still not hashed again by the chain
 *	entry_end		→ file_closed on the temp object: fd = the extractor's fd,
 *				  path = "/proc/self/fd/DIRFD/TEMPNAME" (never follows a symlink
 *				  in the root), known_digest = the digest the extractor verified,
 *				  pkg_sig = the package's signature for the file
 *	commit_package		→ the package's install record is written under a temp name
 *	end_package		→ file_done for every file (0 after the renames, or the error);
 *				  an upgrade's removals of the old version's files the new
 *				  one lacks, each as an erase (file_opened and file_done with
 *				  IMASTREAM_FILE_ERASE); psm_post; the record is renamed into
 *				  place or removed
 *	sink freed		→ tsm_post
 *
 * The chain thread: when the chain needs no chunk of a file (the verified header digest
 * is every digest it wants, or the object is not a regular file), file_opened and
 * file_closed of that file run on a second thread, in entry order, while the extractor
 * writes the next files, so that signing overlaps extraction.  Only one thread is ever
 * inside the chain: the bridge waits for that thread before any chain call of its own
 * (a file that streams, the conflict hook, commit, end of package).  A failure there
 * fails the package at commit_package, before any rename.  The chain's plugins and log
 * may thus be called from that thread.  IMASTREAM_SINK_ONE_THREAD keeps everything on
 * the caller's thread.  In sign mode with an ECDSA key held in this process, a third
 * thread prepares the signatures' nonces from the sink's creation to its free (as the rpm
 * plugin's %_imastream_sign_threads), unless IMASTREAM_SINK_NO_SIGN_AHEAD.
 *
 * The record lives in ROOT/var/lib/imastream/packages/, one file per package name (see
 * imastream-install(1) for the format); installing a package of the same name again
 * replaces its record and removes what the old record lists and the new package lacks
 * (as rpm -U: not a path another package owns; directories only when empty; a modified
 * %config file renamed to NAME.rpmsave), journaled with IMASTREAM_EXTRACT_JOURNAL.
 * With a record, a path another package owns is a file conflict: the chain's
 * file_conflict hook runs, then the package is refused unless
 * IMASTREAM_SINK_REPLACE_FILES.  Directories are shared, never conflicts, and so is a
 * file identical to the recorded one (type, mode, owner and content digest).
 */
struct imastream_chain;
struct imastream_config;
struct imastream_chain_sink;

/*
 * Bridge options (imastream_chain_sink_new flags).  Each layer has its own set, alike in
 * shape (a bit, the reason beside it) but never shared: the extractor, the rpm reader,
 * the bridge and the root transaction each see only what they act on.
 */
enum imastream_chain_sink_flag {
	/* Accept packages whose header is unsigned or signed by an unknown key. */
	IMASTREAM_SINK_ALLOW_UNSIGNED = 1u << 0,
	/* Replace files the record says another package owns (the conflict hook still runs). */
	IMASTREAM_SINK_REPLACE_FILES = 1u << 1,
	/* Neither read nor write the install record (and so, no conflict checks). */
	IMASTREAM_SINK_NO_RECORD = 1u << 2,
	/* The reader skipped the header digest check (IMASTREAM_INSTALL_NO_HEADER_DIGEST). */
	IMASTREAM_SINK_NO_HEADER_DIGEST = 1u << 3,
	/* Do not judge header signatures at all (archives without OpenPGP headers). */
	IMASTREAM_SINK_NO_SIGNATURES = 1u << 4,
	/* Call file_updated for every chunk even when the verified header digest already
	 * gives the chain every digest it wants (for plugins that look at the content). */
	IMASTREAM_SINK_STREAM_ALWAYS = 1u << 5,
	/* Run the chain on the caller's thread only (see the chain thread below). */
	IMASTREAM_SINK_ONE_THREAD = 1u << 6,
	/* Install a package whose name the root's rpm database has (refused otherwise), and
	 * once it is installed and recorded remove rpm's entry (as rpm -e --justdb). */
	IMASTREAM_SINK_TAKE_OVER = 1u << 7,
	/* No thread preparing ECDSA nonces ahead of the signatures (by default one runs
	 * where more than one CPU is ours; IMASTREAM_SINK_ONE_THREAD runs none either). */
	IMASTREAM_SINK_NO_SIGN_AHEAD = 1u << 8,
};

/**
 * struct imastream_sink_progress - what the progress callback is told
 * @package: the package being installed (its name for messages)
 * @packages: packages committed so far
 * @files: objects completed so far (all packages)
 * @bytes: content bytes written so far (all packages)
 * @done: true once for the last call, from imastream_chain_sink_free()
 */
struct imastream_sink_progress {
	const char *package;
	uint64_t packages;
	uint64_t files;
	uint64_t bytes;
	bool done;
};

/**
 * struct imastream_chain_sink_opts - how the bridge runs
 * @size: sizeof(struct imastream_chain_sink_opts), as the caller was built (see
 *	"Room to grow" in libimastream(3)): options added later go at the end, and one
 *	the caller's size does not cover is zero, its default
 * @root: the root's absolute path (txn.root, its rpm database); required
 * @flags: enum imastream_chain_sink_flag
 * @txn_flags: IMASTREAM_TXN_* the chain is told (IMASTREAM_TXN_NOFILEDIGEST when the
 *	reader does not check file digests)
 * @cfg: the chain's configuration, or NULL: the record notes its IMA and EVM modes, so
 *	that a verification knows what to expect
 * @pgp_keys: NULL-terminated list of armored OpenPGP public key files trusted for header
 *	signatures, or NULL
 * @progress: called after every chunk and every object (from the extractor's thread), or
 *	NULL; it may print, the library does not (the log may be called from the chain
 *	thread at the same time)
 * @progress_arg: its first argument
 */
struct imastream_chain_sink_opts {
	size_t size;
	const char *root;
	unsigned int flags;
	unsigned int txn_flags;
	const struct imastream_config *cfg;
	const char *const *pgp_keys;
	void (*progress)(void *arg, const struct imastream_sink_progress *p);
	void *progress_arg;
};

/**
 * imastream_chain_sink_new - a sink that drives @chain, and the transaction's start
 * @chain: an initialised chain; must outlive the sink
 * @rootfd: the root directory (the one the extractor writes below); duplicated
 * @opts: see above; copied (the strings must outlive the sink)
 * @log: one line per error (may be NULL); must outlive the sink
 * @ret: the sink, freed with imastream_chain_sink_free()
 *
 * Loads the OpenPGP keys and the record, checks that the root's filesystem takes the
 * chain's xattrs (invariant: fail before any file is touched), then runs tsm_pre.
 * Return: 0; -EINVAL for bad options or an unusable key file; -EOPNOTSUPP for a root
 * without xattr support (unless the configuration skips them); -EBADMSG for a malformed
 * record; the tsm_pre error; -ENOMEM.
 */
IMASTREAM_API int imastream_chain_sink_new(struct imastream_chain *chain, int rootfd,
					   const struct imastream_chain_sink_opts *opts,
					   const struct imastream_log *log,
					   struct imastream_chain_sink **ret);
/* The entry sink to give imastream_extract_new(); valid for the bridge's life. */
IMASTREAM_API const struct imastream_entry_sink *imastream_chain_sink_entry_sink(
	struct imastream_chain_sink *cs);
/**
 * imastream_chain_sink_free - end the transaction: tsm_post with @res, then free
 * @res: 0 when every package was installed, else the first error
 * Free the extractor first: it may still have a package to abort.
 */
IMASTREAM_API void imastream_chain_sink_free(struct imastream_chain_sink *cs, int res);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_CHAIN_SINK_H */
