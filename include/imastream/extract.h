/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The extractor: a package's entries written below a root fd, through a chain's entry sink. */
#ifndef IMASTREAM_EXTRACT_H
#define IMASTREAM_EXTRACT_H

#include <stddef.h>
#include <stdint.h>

#include "imastream/common.h"
#include "imastream/entry.h"

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
	int (*journal)(void *arg,
		       int (*add)(void *ctx, const char *dir, const char *tmp, const char *name),
		       void *ctx);
	int (*journal_steps)(void *arg,
			     int (*add)(void *ctx, int step, const char *dir, const char *name),
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

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_EXTRACT_H */
