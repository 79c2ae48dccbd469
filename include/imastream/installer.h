/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The streaming installer: secure extraction of entries into a root, and rpm packages on top. */
#ifndef IMASTREAM_INSTALLER_H
#define IMASTREAM_INSTALLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "imastream/filesig.h"

#include "imastream/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Two layers.
 *
 * The extractor (struct imastream_extract) writes one package into a root directory,
 * given as an open directory fd.  Its caller supplies entries and the content of
 * regular files in chunks; it works for any archive format:
 *
 *	imastream_extract_new()
 *	per package:  for each entry:  entry_begin() → entry_data()* → entry_end()
 *	              then commit() or abort()
 *	imastream_extract_free()
 *
 * The rpm reader (imastream_install_rpm()) drives an extractor from an rpm package:
 * header through librpm, payload through rpmio (gzip, bzip2, xz, zstd), entries and
 * content through rpm's archive reader, metadata from the (digest-verified) header.
 *
 * The entry sink (struct imastream_entry_sink) is where the security hook chain plugs
 * in: it sees every entry begin, every chunk of content, every finished object on its
 * descriptor (temp name, final metadata) before it gets its final name, and the
 * package's commit or abort.
 *
 * Guarantees (what a failure leaves behind):
 *  - Paths are relative to the root fd.  Absolute paths are taken as relative to it;
 *    empty, "." and ".." components are refused; no symlink is ever followed while
 *    creating (each component is opened with O_NOFOLLOW|O_DIRECTORY, objects are created
 *    with O_EXCL or its equivalent), so nothing is written outside the root, even
 *    through symlinks the package made itself or that were already in the root.
 *  - Every non-directory object is created under a temp name (IMASTREAM_TEMP_PREFIX)
 *    in its final directory, gets its content, digest check, owner, mode, file
 *    capabilities and mtime, then the sink's entry_end(), and is renamed into place
 *    only in commit(), after the whole package extracted successfully.
 *  - abort() (or a failed commit before its first rename) removes every temp file of
 *    the package and every directory the package created; nothing at a final path
 *    changed except the metadata of directories that already existed.
 *  - commit() renames in package order.  A rename can fail only on an I/O error or a
 *    concurrent change of the root; then the files already renamed stay (each one
 *    complete with its attributes) and the remaining temp files are removed.
 *  - Directories are created at their final path right away (mode 0700 until their
 *    owner and mode are set), because their children must go into them.
 */

/* The largest content digest a record holds (SHA-512). */
#define IMASTREAM_RECORD_MAX_DIGEST 64

/*
 * Every temp name starts with this, then the writer's pid in hex and a '-':
 * ".imastream-tmp-1a2b-3c".  So a leftover is easy to find, and imastream_root_recover()
 * removes only those whose writer is gone.
 */
#define IMASTREAM_TEMP_PREFIX ".imastream-tmp-"

/* Entry flags (imastream_entry.flags). */
enum imastream_entry_flag {
	IMASTREAM_ENTRY_CONFIG = 1u << 0,  /* %config */
	IMASTREAM_ENTRY_DOC = 1u << 1,     /* %doc / %license */
	IMASTREAM_ENTRY_UNOWNED = 1u << 2, /* a parent directory the package does not list */
	IMASTREAM_ENTRY_HARDLINK = 1u << 3, /* a further link of an inode already created */
};

/**
 * struct imastream_entry - one object to create, as the archive describes it
 * @path: the package path, "/usr/bin/ls"; interpreted relative to the root
 * @mode: file type and permission bits (S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, S_IFBLK,
 *	S_IFIFO); setuid/setgid/sticky allowed
 * @uid, @gid: final owner (already resolved from names)
 * @mtime: final modification time (seconds since the epoch); a directory keeps it only
 *	if the package puts nothing new in it (else it has the install time, as with rpm)
 * @size: content size of a regular file, in bytes; 0 for other types
 * @rdev: device number for S_IFCHR/S_IFBLK
 * @link_target: symlink target (NUL-terminated), or the package path of the inode to
 *	link to with IMASTREAM_ENTRY_HARDLINK (which must be an earlier entry of this
 *	package); NULL otherwise
 * @caps: file capabilities in cap_to_text(3) form ("cap_net_raw=ep"), or NULL
 * @digest_algo: enum imastream_hash_algo of @digest, 0 when there is none
 * @digest: the expected content digest (from a trusted header), or NULL: the extractor
 *	computes it in the same pass as the write and fails the entry on a mismatch
 * @flags: enum imastream_entry_flag
 * @index: the entry's number in its package (rpm's file index), for messages and sinks
 * @sig: the security.ima value the package carries for this file (rpm's
 *	RPMTAG_FILESIGNATURES, decoded: a type-3 IMA signature), or NULL; unverified, it is
 *	handed to the chain (struct imastream_file.pkg_sig), whose ima plugin checks it
 * @sig_len: its length
 *
 * The extractor copies what it keeps; the caller's strings need to live only for the
 * duration of entry_begin().
 */
struct imastream_entry {
	const char *path;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	int64_t mtime;
	uint64_t size;
	dev_t rdev;
	const char *link_target;
	const char *caps;
	int digest_algo;
	const uint8_t *digest;
	unsigned int flags;
	unsigned int index;
	const uint8_t *sig;
	size_t sig_len;
};

/**
 * struct imastream_entry_sink - the narrow interface a hook chain implements
 *
 * @size: sizeof(struct imastream_entry_sink), as the sink was built.  As for the chain's
 *	plugin ops, callbacks added later go at the end and are called only when @size
 *	covers them; imastream_extract_new() refuses a size below the first version.
 * Every callback is optional and returns 0 or a negative errno; an error fails the
 * package (abort follows).  @arg is the sink's own pointer; *entry_ctx is the sink's
 * per-entry state, set in begin and handed back to data and end.
 *
 * @begin_package: the package is about to be extracted (@name: file name, for messages)
 * @entry_begin: an entry starts (file opened); nothing is on disk for it yet
 * @entry_data: a chunk of a regular file's content, in order (file updated); the same
 *	bytes are written to the file and fed to the digest check
 * @entry_end: the object is complete under its temp name (file closed): content written
 *	and digest-verified, owner, mode, capabilities and mtime final.  @fd is a read-write
 *	descriptor for regular files, a read-only one for directories, -1 for symlinks,
 *	devices and FIFOs (use @dirfd and @name).  @name is the temp name in @dirfd (the
 *	final name for directories).  @digest is the verified content digest in the
 *	entry's algorithm (NULL if none was checked); this is where labels, security.ima
 *	and security.evm go on the inode.  For a further hard link
 *	(IMASTREAM_ENTRY_HARDLINK) the inode is already complete with its attributes:
 *	@fd is -1 and the chain only learns the new name.
 * @entry_abort: the entry failed after entry_begin and before entry_end returned 0
 *	(release *entry_ctx).  When entry_end itself fails, the sink releases it there.
 * @end_package: after commit (@status 0) or abort (@status < 0, the error)
 * @package_header: only from imastream_install_rpm(), before begin_package: the
 *	package's librpm Header (a Header, valid until end_package; headerLink() to keep
 *	it), its header digests checked and its file list checked, nothing written yet.
 *	This is where the package's signature is judged.
 * @commit_package: every entry ended well and commit() is about to give the objects
 *	their final names: the last point where the sink can still refuse the package (an
 *	error aborts it) and prepare what it writes at end_package (a record).
 * @journal: only with IMASTREAM_EXTRACT_JOURNAL, after commit_package: the renames the
 *	sink does at end_package to complete the package (its record), each told through
 *	@add(@ctx, DIR, TEMP, NAME): DIR relative to the root, TEMP a temp name of this
 *	process (IMASTREAM_TEMP_PREFIX, our pid) in it, NAME its final name there.  The
 *	intent journal lists them after the package's own, so that recovery completes them.
 * @journal_steps: only with IMASTREAM_EXTRACT_JOURNAL, after commit_package and before
 *	@journal: what the sink removes at end_package before its renames (an upgrade's
 *	files the new version lacks), each told through @add(@ctx, STEP, DIR, NAME): STEP
 *	an enum imastream_journal_step, DIR relative to the root, NAME one component.  The
 *	intent journal lists them between the package's renames and the sink's, so that
 *	recovery completes them in that order.  NULL: none.
 */
struct imastream_entry_sink {
	size_t size;
	void *arg;
	int (*begin_package)(void *arg, const char *name);
	int (*entry_begin)(void *arg, const struct imastream_entry *e, void **entry_ctx);
	int (*entry_data)(void *arg, void *entry_ctx, const void *buf, size_t len);
	int (*entry_end)(void *arg, void *entry_ctx, const struct imastream_entry *e, int fd,
			 int dirfd, const char *name, const uint8_t *digest);
	void (*entry_abort)(void *arg, void *entry_ctx, int err);
	void (*end_package)(void *arg, int status);
	int (*package_header)(void *arg, const char *name, void *rpm_header);
	int (*commit_package)(void *arg);
	int (*journal)(void *arg, int (*add)(void *ctx, const char *dir, const char *tmp,
					     const char *name),
		       void *ctx);
	int (*journal_steps)(void *arg, int (*add)(void *ctx, int step, const char *dir,
						   const char *name),
			     void *ctx);
};

/* The removals a sink journals (struct imastream_entry_sink.journal_steps). */
enum imastream_journal_step {
	IMASTREAM_JOURNAL_REMOVE = 1, /* a non-directory goes */
	IMASTREAM_JOURNAL_RMDIR,      /* a directory goes if it is empty */
	IMASTREAM_JOURNAL_RPMSAVE,    /* NAME is renamed to NAME.rpmsave */
};

/* Extractor options (imastream_extract_new flags). */
enum imastream_extract_flag {
	/* Do not chown (non-root callers); uid/gid are ignored. */
	IMASTREAM_EXTRACT_NO_CHOWN = 1u << 0,
	/* Do not write security.capability. */
	IMASTREAM_EXTRACT_NO_CAPS = 1u << 1,
	/* fsync each file before commit and the directories after it. */
	IMASTREAM_EXTRACT_FSYNC = 1u << 2,
	/* One syncfs() per filesystem the package writes to, after the last file is
	 * complete and before the first rename: a final name never points at content or
	 * attributes that a power loss can take back. */
	IMASTREAM_EXTRACT_SYNCFS = 1u << 3,
	/* Before the first rename, write the intent journal ROOT/var/lib/imastream/journal:
	 * every rename of the package (and the sink's, see @journal), synced with
	 * FSYNC or SYNCFS; removed once they are all done.  A kill in between leaves it for
	 * imastream_root_txn_begin() or imastream_root_recover() to complete the package.
	 * Hold the root's transaction (imastream_root_txn_begin()) while using it. */
	IMASTREAM_EXTRACT_JOURNAL = 1u << 4,
};

struct imastream_extract;

/**
 * imastream_extract_new - create an extractor writing below a root directory
 * @rootfd: an open directory (O_RDONLY or O_PATH); duplicated, the caller keeps its own
 * @flags: enum imastream_extract_flag
 * @sink: the chain, or NULL; copied
 * @log: where errors go, one line naming the package and the entry (may be NULL)
 * @ret: the new extractor, freed with imastream_extract_free()
 * Return: 0, -EBADF/-ENOTDIR for a bad @rootfd, -EINVAL for unknown flags or a @sink
 * whose size is below the first version's, -ENOMEM.
 */
IMASTREAM_API int imastream_extract_new(int rootfd, unsigned int flags,
					const struct imastream_entry_sink *sink,
					const struct imastream_log *log,
					struct imastream_extract **ret);
/* Aborts a package still open, then frees. */
IMASTREAM_API void imastream_extract_free(struct imastream_extract *x);

/**
 * imastream_extract_begin - start a package
 * @name: how messages name it (copied)
 * Return: 0, -EBUSY if a package is open, a sink error, -ENOMEM.
 */
IMASTREAM_API int imastream_extract_begin(struct imastream_extract *x, const char *name);

/**
 * imastream_extract_entry_begin - start an entry of the open package
 * Creates directories (and missing parents) and non-regular objects at once; a regular
 * file is created under a temp name and awaits exactly @e->size bytes.
 * Return: 0; -EINVAL for a bad path, type or size; -EEXIST for a duplicate entry or
 * an existing object of the wrong type (a directory where a file goes, a non-directory
 * where a directory goes); -ELOOP when a path component is a symlink; -ENOSPC, -EIO or
 * another errno of the filesystem; a sink error.  On error the package must be aborted.
 */
IMASTREAM_API int imastream_extract_entry_begin(struct imastream_extract *x,
						const struct imastream_entry *e);
/**
 * imastream_extract_entry_data - the next chunk of the current regular file
 * Return: 0; -EFBIG past the declared size; -ENOSPC, -EIO, ...; a sink error.
 */
IMASTREAM_API int imastream_extract_entry_data(struct imastream_extract *x, const void *buf,
					       size_t len);
/**
 * imastream_extract_entry_end - finish the current entry
 * Checks the size and the digest, sets owner, mode, capabilities and mtime, then calls
 * the sink's entry_end().
 * Return: 0; -EPIPE if fewer bytes than declared arrived; -EBADMSG on a digest
 * mismatch; an errno of fchown/fchmod/fsetxattr/futimens; a sink error.
 */
IMASTREAM_API int imastream_extract_entry_end(struct imastream_extract *x);

/**
 * imastream_extract_commit - give every object of the package its final name
 * Calls the sink's commit_package first (its error aborts the package).
 * Return: 0, the sink's error, or the errno of the failing rename (see the guarantees above).  The
 * package is closed either way.
 */
IMASTREAM_API int imastream_extract_commit(struct imastream_extract *x);
/* Removes every temp file and created directory of the open package; no-op if none. */
IMASTREAM_API void imastream_extract_abort(struct imastream_extract *x, int err);

/**
 * struct imastream_extract_stats - counters of the committed packages (progress, benchmarks)
 * @size: set by the caller to sizeof(struct imastream_extract_stats), as it was built: the
 *        library fills only the counters this size covers, so a program built before a
 *        counter was added keeps working (room to grow, libimastream(3))
 * @packages: packages committed
 * @entries: their entries
 * @bytes: their content bytes
 */
struct imastream_extract_stats {
	size_t size;
	uint64_t packages;
	uint64_t entries;
	uint64_t bytes;
};

/**
 * imastream_extract_get_stats - copy @x's counters into @st
 * @st: its @size set by the caller
 * Return: 0; -EINVAL, with one line in @x's log, for a NULL argument or a size below the
 * first version (@st is then left as it was).
 */
IMASTREAM_API int imastream_extract_get_stats(const struct imastream_extract *x,
					      struct imastream_extract_stats *st);

/* rpm reader options (imastream_install_rpm flags). */
enum imastream_install_flag {
	/* Skip the header digest check (rpm's --nodigest); per-file digests are still checked. */
	IMASTREAM_INSTALL_NO_HEADER_DIGEST = 1u << 0,
	/* Skip the per-file content digest check (rpm's --nofiledigest). */
	IMASTREAM_INSTALL_NO_FILE_DIGEST = 1u << 1,
	/* Decompress on the calling thread too, instead of a reader thread (for comparison). */
	IMASTREAM_INSTALL_ONE_THREAD = 1u << 2,
};

/**
 * imastream_install_rpm - extract one rpm package through @x (begin … commit)
 * @x: an extractor with no package open
 * @fd: the package, positioned at its start; not closed
 * @name: the package's name for messages (its path)
 * @flags: enum imastream_install_flag
 *
 * Reads the lead, signature and header (header digests are checked, signatures are not:
 * trust is the chain's verify hook's business), checks every file entry of the header
 * before anything is written (paths, types, sizes, hard-link sets, duplicates, symlinks
 * used as directories), then streams the payload: each decompressed chunk goes to the
 * file and to the header digest check (RPMTAG_FILEDIGESTALGO) in one pass.  User and
 * group names are resolved in the root's etc/passwd and etc/group ("root" is 0; an
 * unknown name becomes 0 with a warning, as rpm does).  %ghost entries are not created.
 *
 * The payload is decompressed on a reader thread while the calling thread hashes,
 * writes and calls the sink (the sink is only ever called from the calling thread; the
 * log may also be called from the reader thread).  Uses librpm's process-wide state:
 * its configuration is read once, and its log is redirected to @x's log while the
 * package is read; do not call from several threads at once.
 *
 * Return: 0; -EBADMSG for a malformed or corrupted package (bad header, header digest,
 * corrupted or truncated payload, file digest mismatch, entries missing, duplicated or
 * not in the header); -EINVAL for an entry refused by policy (path traversal, symlink
 * used as a directory, absurd size); -EOPNOTSUPP for an unknown payload format or
 * compressor; -ENOSPC when the files do not fit; any extractor or sink error.
 * Everything is rolled back on error, with one line in @x's log.
 */
IMASTREAM_API int imastream_install_rpm(struct imastream_extract *x, int fd, const char *name,
					unsigned int flags);


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
 * the caller's thread.
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
IMASTREAM_API const struct imastream_entry_sink *
imastream_chain_sink_entry_sink(struct imastream_chain_sink *cs);
/**
 * imastream_chain_sink_free - end the transaction: tsm_post with @res, then free
 * @res: 0 when every package was installed, else the first error
 * Free the extractor first: it may still have a package to abort.
 */
IMASTREAM_API void imastream_chain_sink_free(struct imastream_chain_sink *cs, int res);

/*
 * The checks of a package that need no lock, for a driver to make before it takes the
 * root's (imastream_root_txn_begin()), so that a refused package leaves the root exactly
 * as it was: everything imastream_install_rpm() checks before writing (the header and its
 * digests, the payload's form, every file entry against the root) and the header's
 * OpenPGP signature against @pgp_keys and the root's rpm keyring, as the chain sink made
 * with the same @sink_flags judges it (its verify hook, which can only refuse more, runs
 * at the install).  Nothing is written; the root's rpm database is read, never created.
 */
struct imastream_precheck;

IMASTREAM_API int imastream_precheck_new(int rootfd, const char *root, const char *const *pgp_keys,
					 unsigned int sink_flags, const struct imastream_log *log,
					 struct imastream_precheck **ret);
/* 0 when @fd's package (@flags: enum imastream_install_flag) passes, else the refusal, said in one line. */
IMASTREAM_API int imastream_precheck_rpm(struct imastream_precheck *pc, int fd, const char *name,
					 unsigned int flags);
IMASTREAM_API void imastream_precheck_free(struct imastream_precheck *pc);

/*
 * The install record, read back: imastream verify --root checks every recorded file.
 */

/**
 * struct imastream_record_file - one object a package installed, as recorded
 * @package: the package's name (its record's name)
 * @path: the path below the root, "/usr/bin/ls"
 * @mode: type and permission bits
 * @uid, @gid: owner
 * @size: content size (regular files)
 * @digest_algo: kernel hash id of @digest, 0 when none was recorded
 * @digest: the content digest
 * @link_target: a symlink's target, or NULL
 * @rdev: a device's number
 * @xattrs: IMASTREAM_RECORD_* bits: the security xattrs the chain wrote on the object,
 *	and whether it is a %config file
 * @ima: the package's IMA mode: "hash", "sign" or "off" ("" if not known)
 * @evm: its EVM mode: "portable", "none" or ""
 */
struct imastream_record_file {
	const char *package;
	const char *path;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	uint64_t size;
	int digest_algo;
	uint8_t digest[IMASTREAM_RECORD_MAX_DIGEST];
	const char *link_target;
	dev_t rdev;
	unsigned int xattrs;
	const char *ima;
	const char *evm;
};

/* Which security xattrs the chain wrote (struct imastream_record_file.xattrs). */
enum {
	IMASTREAM_RECORD_IMA = 1u << 0,   /* security.ima */
	IMASTREAM_RECORD_EVM = 1u << 1,   /* security.evm */
	IMASTREAM_RECORD_LABEL = 1u << 2, /* security.selinux or security.SMACK64 */
	IMASTREAM_RECORD_CONFIG = 1u << 3, /* not an xattr: the package marks it %config */
};

/**
 * imastream_record_foreach - every recorded file of every package, in record order
 * @rootfd: the root
 * @fn: called per file; a non-zero return stops the walk and is returned
 * Return: 0 (also when there is no record at all), -EBADMSG for a malformed record
 * (logged with its file and line), -errno of open/read, or @fn's value.
 */
IMASTREAM_API int imastream_record_foreach(int rootfd,
					   int (*fn)(void *arg, const struct imastream_record_file *f),
					   void *arg, const struct imastream_log *log);

/**
 * imastream_record_foreach_package - every package the install record holds, files or not
 * @rootfd: the root
 * @fn: called with each package's name, in name order; a non-zero return stops the walk
 *	and is returned
 * Return: as imastream_record_foreach().
 */
IMASTREAM_API int imastream_record_foreach_package(int rootfd,
						   int (*fn)(void *arg, const char *name),
						   void *arg, const struct imastream_log *log);

/**
 * imastream_record_check - does the object at @f->path still match its record?
 * @rootfd: the root; the path is resolved below it without following any symlink
 * @f: the recorded object
 * @fd_ret: for a regular file that matches, an O_RDONLY descriptor on it (the caller
 *	closes it), else -1; may be NULL
 * @why: on a mismatch, what differs ("missing", "mode 0644, recorded 0755",
 *	"content changed", ...)
 * @why_size: its size
 * Return: 0 when it matches, 1 on a mismatch (@why says which), -errno when the check
 * itself failed (reading the content).
 */
IMASTREAM_API int imastream_record_check(int rootfd, const struct imastream_record_file *f,
					 int *fd_ret, char *why, size_t why_size);

/*
 * An installed root: what its rpm database lists, read as rpm reads it for that root
 * (rpm's own configuration and %_dbpath below the root), and its files opened without
 * leaving it.  imastream relabel and imastream verify --rpmdb are built on these.
 */

/**
 * imastream_open_beneath - open @path below @rootfd without following any symlink
 * @rootfd: the root
 * @path: a package path ("/usr/bin/ls"; leading slashes mean "below the root")
 * @flags: open(2) flags; O_NOFOLLOW, O_CLOEXEC and (but with O_PATH) O_NOCTTY are added
 *
 * No component may be a symlink (the last one neither) and ".." may not climb out:
 * openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS.
 * Return: a descriptor, or -errno (-ELOOP: a symlink on the way, -EXDEV: out of the
 * root, -ENOENT, -ENOSYS before Linux 5.6).
 */
IMASTREAM_API int imastream_open_beneath(int rootfd, const char *path, int flags);

/**
 * imastream_open_dir_as_rpm - open directory @dir below @rootfd as rpm --root would
 * @rootfd: the root
 * @dir: a package directory ("/bin"; leading slashes mean "below the root")
 * @flags: open(2) flags (O_RDONLY or O_PATH); O_DIRECTORY and O_CLOEXEC are added
 * @real: if not NULL, gets the directory's real path below the root, without a leading
 *        slash ("usr/bin" for "/bin" on a merged-/usr root; "" for the root)
 * @real_size: the size of @real
 *
 * A component that is a symlink is followed only where rpm follows it (its fsmOpenat()):
 * the link is owned by root or by the owner of the directory it leads to.  Its target is
 * resolved inside the root, an absolute target and ".." as under rpm's chroot
 * (openat2(2) RESOLVE_IN_ROOT), so it cannot lead out.  "." and ".." components are
 * refused.  Return: a descriptor, or -errno (-EPERM: a symlink rpm would not follow,
 * -ELOOP: a symlink that leads to no directory below the root, -ENOTDIR, -ENOENT,
 * -EXDEV: a "." or ".." component).
 */
IMASTREAM_API int imastream_open_dir_as_rpm(int rootfd, const char *dir, int flags, char *real,
					    size_t real_size);

/**
 * imastream_rpmdb_foreach - the headers of the packages installed in @root
 * @root: the root directory, absolute ("/" for the running system)
 * @names: package names or NEVRA labels to look up (as rpm -q takes them), or NULL
 * @nnames: their number; 0 means every installed package
 * @fn: called with each package's Header (valid during the call; headerLink() to keep);
 *      a non-zero return stops the walk and is returned
 * Return: 0, -ENOENT when the root has no database or a name is not installed (said in
 * one line), -EIO when rpm's configuration cannot be read, or @fn's value.
 */
IMASTREAM_API int imastream_rpmdb_foreach(const char *root, char *const *names, int nnames,
					  int (*fn)(void *arg, void *rpm_header), void *arg,
					  const struct imastream_log *log);

/*
 * Relabelling an installed root (installed/relabel.c): every regular file of a package,
 * as its header in the root's rpm database describes it, checked on disk and passed
 * through the same hook chain as an install, without reinstalling anything.
 */

enum imastream_relabel_flag {
	/* Compute and compare every value, write nothing. */
	IMASTREAM_RELABEL_DRY_RUN = 1u << 0,
	/* A %config file whose content (size, digest) changed since install is labelled
	 * with its current digest instead of being refused. */
	IMASTREAM_RELABEL_MODIFIED_CONFIG = 1u << 1,
};

/* What became of one file (struct imastream_relabel_file.status). */
enum imastream_relabel_status {
	IMASTREAM_RELABEL_LABELLED, /* its values were written (would be, with DRY_RUN) */
	IMASTREAM_RELABEL_CORRECT,  /* it already had them: nothing written */
	IMASTREAM_RELABEL_MODIFIED, /* differs from its header: left untouched */
	IMASTREAM_RELABEL_MISSING,  /* not on disk */
	IMASTREAM_RELABEL_FAILED,   /* the chain or a write failed (said on the log) */
};

/**
 * struct imastream_relabel_file - the outcome for one file, given to the report callback
 * @package: the package's NEVRA
 * @path: the package path ("/usr/bin/ls")
 * @status: enum imastream_relabel_status
 * @letters: for MODIFIED, rpm -V's nine columns "SM5DLUGTP", each '.' when it matches:
 *           S size, M mode (and type), 5 content digest, U owner, G group, P
 *           capabilities (security.capability against RPMTAG_FILECAPS, compared as
 *           libcap reads them, as rpm -V does), L a symlink's target; D and T are not
 *           checked here (T is not covered by EVM)
 * @why: for MODIFIED, MISSING and FAILED a short phrase ("replaced by a symlink",
 *       "a symlink in a path component"); else NULL
 * @config: a %config file
 * @written: for LABELLED, the names of the xattrs written, comma-separated
 */
struct imastream_relabel_file {
	const char *package;
	const char *path;
	int status;
	char letters[10];
	const char *why;
	bool config;
	const char *written;
};

/* Running totals (imastream_relabel_counts()). */
struct imastream_relabel_counts {
	unsigned long packages;
	unsigned long labelled, correct, modified, missing, failed;
	uint64_t bytes; /* content read */
	unsigned long hashed_on_workers; /* regular files whose content a worker thread hashed */
};

/**
 * struct imastream_relabel_opts - how to relabel
 * @size: sizeof(struct imastream_relabel_opts), as the caller was built (as for
 *	struct imastream_chain_sink_opts)
 * @root: the root, absolute ("/" for the running system)
 * @cfg: the configuration the chain was made with (its xattr namespace, no_xattr_support,
 *       and "trust" and "cert", which tell an existing signature that is already right)
 * @flags: IMASTREAM_RELABEL_*
 * @report: called for each file, in header order (may be NULL)
 */
struct imastream_relabel_opts {
	size_t size;
	const char *root;
	const struct imastream_config *cfg;
	unsigned int flags;
	void (*report)(void *arg, const struct imastream_relabel_file *file);
	void *report_arg;
};

struct imastream_relabel;

/**
 * imastream_relabel_new - start relabelling a root (the chain's tsm_pre runs here)
 * @chain: an initialised chain; must outlive the relabel
 * Return: 0, -EINVAL for a relative root, -errno opening it, the chain's refusal.
 */
IMASTREAM_API int imastream_relabel_new(struct imastream_chain *chain,
					const struct imastream_relabel_opts *opts,
					const struct imastream_log *log,
					struct imastream_relabel **ret);

/**
 * imastream_relabel_header - relabel one installed package from its header
 * @rpm_header: a librpm Header, as imastream_rpmdb_foreach() gives it
 *
 * For each regular, non-ghost file (directories and symlinks are checked for type,
 * owner, mode or target, and get only what the chain gives them: labels): its
 * directory is opened below the root without
 * following any symlink, the file itself likewise; type, mode, owner, size and
 * capabilities are compared with the header, the content is read once, fed to the chain (which computes
 * every digest it needs) and its digest compared with the header's.  Only a file that
 * matches gets values, and only those that differ from what it has are written: labels
 * and security.ima first, security.evm strictly last (an old security.evm is removed
 * before anything it covers changes, so none ever covers a stale value).
 * Return: 0 (files that differ are reported, not errors), the chain's psm_pre refusal
 * (every file of the package then FAILED), -ENOMEM.
 */
IMASTREAM_API int imastream_relabel_header(struct imastream_relabel *r, void *rpm_header);

IMASTREAM_API const struct imastream_relabel_counts *
imastream_relabel_counts(const struct imastream_relabel *r);

/* Runs the chain's tsm_post with @res and frees. */
IMASTREAM_API void imastream_relabel_free(struct imastream_relabel *r, int res);

/*
 * The audit of an installed root (installed/audit.c): what imastream verify --rpmdb
 * reports for every regular file of every package of the root's rpm database.
 */

/* struct imastream_audit_file.state */
enum imastream_audit_state {
	IMASTREAM_AUDIT_INTACT,   /* type, mode, owner, size and content as the header says */
	IMASTREAM_AUDIT_MODIFIED, /* @letters (and @why) say what differs */
	IMASTREAM_AUDIT_MISSING,
	IMASTREAM_AUDIT_ERROR,    /* could not be checked: @why (said on the log) */
};

/**
 * struct imastream_audit_file - one file of the audit
 * @package: NEVRA
 * @path: the package path
 * @config: a %config file
 * @state: enum imastream_audit_state
 * @letters: rpm -V's "SM5DLUGTP" as imastream relabel prints them
 * @why: what the letters cannot say ("a symlink or non-directory in a path component"),
 *       or NULL
 * @verified: @report holds the verdicts on security.ima and security.evm (the file is a
 *            regular file that could be read), as imastream_verify_file() gives them
 * @label: security.selinux: IMASTREAM_VERIFY_OK (present), IMASTREAM_VERIFY_MISSING, or
 *         IMASTREAM_VERIFY_SKIPPED without IMASTREAM_AUDIT_LABELS (or when the file could
 *         not be opened)
 */
struct imastream_audit_file {
	const char *package;
	const char *path;
	bool config;
	int state;
	char letters[10];
	const char *why;
	bool verified;
	struct imastream_verify_report report;
	int label;
};

/* A flag of imastream_audit_rpmdb(), with those of imastream_verify_file(). */
enum {
	/* Every file must have a security.selinux: the chain that labelled the root had the
	 * selinux plugin with a policy (file_contexts, or SELinux enabled). */
	IMASTREAM_AUDIT_LABELS = 1u << 16,
};

/**
 * imastream_audit_rpmdb - audit every regular file of the packages installed in @root
 * @root: absolute
 * @names, @nnames: as imastream_rpmdb_foreach()
 * @v: checks security.ima and security.evm (its trust store knows the signers)
 * @verify_flags: as imastream_verify_file() takes them, and IMASTREAM_AUDIT_LABELS
 * @fn: called for each file, in header order, on the caller's thread
 *
 * Files are hashed and verified on one worker thread per online CPU (at most 8), each
 * with its own verifier made from @v's trust store and log: the log functions of @v,
 * of its trust store and @log may be called from several threads at once.
 * Return: 0 (verdicts are not errors), or an imastream_rpmdb_foreach() error.
 */
IMASTREAM_API int imastream_audit_rpmdb(const char *root, char *const *names, int nnames,
					struct imastream_verifier *v, unsigned int verify_flags,
					void (*fn)(void *arg, const struct imastream_audit_file *f),
					void *arg, const struct imastream_log *log);

/*
 * Orphans (installed/orphans.c): labelled files that no installed package owns.  A kill
 * of rpm in a transaction leaves its temp files (NAME;XXXXXXXX) beside their final names,
 * already carrying the security.ima and security.evm the plugin wrote: the kernel would
 * appraise and run them, and nobody owns them.
 */

/* struct imastream_orphan.kind */
enum imastream_orphan_kind {
	IMASTREAM_ORPHAN_UNOWNED,      /* any name: owned by no package, yet labelled */
	IMASTREAM_ORPHAN_RPM_TEMP,     /* NAME;XXXXXXXX: rpm's temp name, its transaction cut */
	IMASTREAM_ORPHAN_INSTALL_TEMP, /* .imastream-tmp-*: imastream recover's to remove */
	IMASTREAM_ORPHAN_RPM_BACKUP,   /* NAME.rpmnew, .rpmsave, .rpmorig: rpm's %config copies */
};

/**
 * struct imastream_orphan - one labelled file nobody owns
 * @path: its real path below the root, with a leading slash
 * @kind: enum imastream_orphan_kind
 * @ima, @evm: it carries security.ima, security.evm (user.* with _XATTR_USER)
 * @sig: one of them is a signature (IMA, fs-verity or EVM, portable or not), which only
 *        a signer makes; a digest or an HMAC alone the kernel writes itself on files
 *        created where it appraises
 * @fixed: with IMASTREAM_ORPHANS_FIX: 1 an rpm temp file removed or another orphan's
 *         security.ima and security.evm removed, -errno that failed; 0 left alone (an
 *         install temp file, or no _FIX)
 */
struct imastream_orphan {
	const char *path;
	int kind;
	bool ima, evm;
	int fixed;
	bool sig;
};

/* Flags of imastream_orphans_rpmdb(). */
enum {
	IMASTREAM_ORPHANS_FIX = 1u << 0,	/* remove rpm temp files, unlabel the others */
	IMASTREAM_ORPHANS_XATTR_USER = 1u << 1, /* user.ima and user.evm */
	/* Unowned files with a digest or an HMAC but no signature too (by default only an
	 * rpm temp file is an orphan without a signature). */
	IMASTREAM_ORPHANS_UNSIGNED = 1u << 2,
};

/**
 * imastream_orphans_rpmdb - the labelled regular files no package owns in @root
 * @root: absolute
 * @flags: IMASTREAM_ORPHANS_*
 * @fn: called per orphan, directory by directory, in name order
 *
 * Looks into every directory a package of the root's rpm database (or of imastream
 * install's record) has a file in or owns, as their real paths (through the directory
 * symlinks rpm follows), for regular files that no package lists and that carry
 * security.ima or security.evm: rpm's temp files whatever they carry, others when one of
 * the two is a signature (or with IMASTREAM_ORPHANS_UNSIGNED).  A file of another name
 * than rpm's (temp, .rpmnew, .rpmsave, .rpmorig) counts only in a directory a package
 * lists itself: one that merely holds packages' files may have other owners.  A host that appraises
 * by digest has the kernel write security.ima on every file it creates: those are not
 * orphans, and taking their digest off would keep them from being read.  Takes no lock: a caller that fixes holds rpm's transaction lock
 * (imastream_root_txn_begin()), so that a running transaction's temp files are not taken.
 * Return: 0, or -errno (said in one line).
 */
IMASTREAM_API int imastream_orphans_rpmdb(const char *root, unsigned int flags,
					  void (*fn)(void *arg, const struct imastream_orphan *f),
					  void *arg, const struct imastream_log *log);

/*
 * One transaction per root, and recovery from an interrupted one.
 *
 * The lock is rpm's own transaction lock for the root: a write lock on the whole file
 * ROOT%{_rpmlock_path} (rpm's default: %{_dbpath}/.rpm.lock), which rpm -i --root ROOT
 * takes too, so that imastream and rpm, and two imastream installs, never write into one
 * root at the same time.  The file and its directory are created (0755) as rpm does; no
 * symlink is followed on the way.
 *
 * While a transaction is under way, ROOT/var/lib/imastream/running names its pid.  Found
 * at the next imastream_root_txn_begin() (which holds the lock, so its writer is gone),
 * it means a transaction was interrupted: every temp object of a dead writer in the root
 * is removed before anything else is written.  imastream_root_recover() does the same
 * without the marker.
 *
 * Before that, both complete the package whose renames a kill cut short: its intent
 * journal ROOT/var/lib/imastream/journal (IMASTREAM_EXTRACT_JOURNAL) lists them, and
 * every rename whose temp file is still there is done, the record's last (its temp files
 * were complete, labelled and synced before the journal was written: recovery rolls
 * forward, never back).  A journal that does not parse (truncated, rotten, hostile) is
 * refused in one line naming it, and nothing at all is changed or removed.  Only names of IMASTREAM_TEMP_PREFIX + a dead writer's pid are
 * removed (never a directory, never a temp of a live process: a writer in another pid
 * namespace whose pid is alive here keeps its files).
 */
enum imastream_root_flag {
	/* Fail with -EBUSY when another transaction holds the lock (default: wait, after a
	 * notice that says who holds it). */
	IMASTREAM_ROOT_NO_WAIT = 1u << 0,
	/* imastream_root_txn_begin(): the lock only, for a writer of attributes (relabel):
	 * no marker, no recovery, and a directory that is not a root is refused. */
	IMASTREAM_ROOT_LOCK_ONLY = 1u << 1,
};

/*
 * What recovery found and removed.  The caller sets @size to sizeof the struct it was
 * built with; the library fills the members that size covers (room to grow).
 */
struct imastream_recover_stats {
	size_t size;
	unsigned long removed; /* temp objects of dead writers, removed */
	unsigned long kept;    /* temp objects whose writer still runs, kept */
	uint64_t bytes;        /* the space the removed files took */
	unsigned long journals; /* interrupted transactions completed from their journal */
	unsigned long completed; /* the renames and removals they still had to do */
};

struct imastream_root_txn;

/**
 * imastream_root_txn_begin - lock the root for a transaction, recovering an interrupted one
 * @rootfd: the root
 * @root: its absolute path (for rpm's lock path and messages)
 * @flags: enum imastream_root_flag
 * @st: what recovery removed (zero when the last transaction ended well), or NULL; its
 *      @size set by the caller, and filled on failure too with what was done so far
 * @ret: the transaction, ended with imastream_root_txn_end()
 * Return: 0; -EINVAL for a @st whose size is below the first version (before the lock is
 * taken; @st is then left as it was); -EBUSY (IMASTREAM_ROOT_NO_WAIT, lock held); -errno
 * creating or locking the lock file or the marker, or removing a leftover.  Errors are
 * logged in one line.
 */
IMASTREAM_API int imastream_root_txn_begin(int rootfd, const char *root, unsigned int flags,
					   const struct imastream_log *log,
					   struct imastream_recover_stats *st,
					   struct imastream_root_txn **ret);
/* Removes the marker and releases the lock (@status: 0 or the transaction's error). */
IMASTREAM_API void imastream_root_txn_end(struct imastream_root_txn *t, int status);

/**
 * imastream_root_recover - under the lock, remove what interrupted transactions left
 * Walks the whole root (not /proc, /sys and such of a live one).  A directory that is
 * not a root (imastream_root_exists()) is refused, -ENOENT, before anything is created
 * in it.  Return: as imastream_root_txn_begin().
 */
IMASTREAM_API int imastream_root_recover(int rootfd, const char *root, unsigned int flags,
					 const struct imastream_log *log,
					 struct imastream_recover_stats *st);

/**
 * imastream_root_interrupted - whether a transaction in @rootfd was cut short
 * Return: 1 when the root has an intent journal whose writer is gone (recovery completes
 * it), 2 when its writer is still running (an install is renaming right now), 3 when an
 * install was interrupted before its renames (the marker of a transaction under way is
 * there, its process gone: recovery removes the temp files it left), 0 when none of these,
 * -EMEDIUMTYPE when the journal or the marker is not a regular file (it is never opened
 * so that it could block or follow a link), -errno.
 */
IMASTREAM_API int imastream_root_interrupted(int rootfd);

/*
 * imastream_root_exists - whether @rootfd is an installed root: it has an rpm database at
 * rpm's %_dbpath, or imastream's state (var/lib/imastream).  Nothing is created.
 */
IMASTREAM_API bool imastream_root_exists(int rootfd);

/*
 * imastream_rpm_set_dbpath - use @dbpath (absolute, below every root) as rpm's %_dbpath,
 * as rpm --dbpath does: for the database read and for the lock (%{_rpmlock_path}, by
 * default %{_dbpath}/.rpm.lock).  Process-wide.  Return: 0, -EINVAL (logged) if not
 * absolute, -errno.
 */
IMASTREAM_API int imastream_rpm_set_dbpath(const char *dbpath, const struct imastream_log *log);

/* The absolute lock path rpm uses below a root: %{_rpmlock_path}. Return: 0, -errno. */
IMASTREAM_API int imastream_root_lock_path(char *buf, size_t size);

/* Whether @name is a temp name (IMASTREAM_TEMP_PREFIX) whose writer is gone. */
IMASTREAM_API bool imastream_temp_name_is_leftover(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_INSTALLER_H */
