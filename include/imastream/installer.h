/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The streaming installer: secure extraction of entries into a root, and rpm packages on top. */
#ifndef IMASTREAM_INSTALLER_H
#define IMASTREAM_INSTALLER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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

/* Every temp name starts with this, so a leftover is easy to find. */
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
 * @mtime: final modification time (seconds since the epoch)
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
};

/**
 * struct imastream_entry_sink - the narrow interface a hook chain implements
 *
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
 *	(release *entry_ctx)
 * @end_package: after commit (@status 0) or abort (@status < 0, the error)
 */
struct imastream_entry_sink {
	void *arg;
	int (*begin_package)(void *arg, const char *name);
	int (*entry_begin)(void *arg, const struct imastream_entry *e, void **entry_ctx);
	int (*entry_data)(void *arg, void *entry_ctx, const void *buf, size_t len);
	int (*entry_end)(void *arg, void *entry_ctx, const struct imastream_entry *e, int fd,
			 int dirfd, const char *name, const uint8_t *digest);
	void (*entry_abort)(void *arg, void *entry_ctx, int err);
	void (*end_package)(void *arg, int status);
};

/* Extractor options (imastream_extract_new flags). */
enum imastream_extract_flag {
	/* Do not chown (non-root callers); uid/gid are ignored. */
	IMASTREAM_EXTRACT_NO_CHOWN = 1u << 0,
	/* Do not write security.capability. */
	IMASTREAM_EXTRACT_NO_CAPS = 1u << 1,
	/* fsync each file before commit and the directories after it. */
	IMASTREAM_EXTRACT_FSYNC = 1u << 2,
};

struct imastream_extract;

/**
 * imastream_extract_new - create an extractor writing below a root directory
 * @rootfd: an open directory (O_RDONLY or O_PATH); duplicated, the caller keeps its own
 * @flags: enum imastream_extract_flag
 * @sink: the chain, or NULL; copied
 * @log: where errors go, one line naming the package and the entry (may be NULL)
 * @ret: the new extractor, freed with imastream_extract_free()
 * Return: 0, -EBADF/-ENOTDIR for a bad @rootfd, -EINVAL for unknown flags, -ENOMEM.
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
 * Return: 0, or the errno of the failing rename (see the guarantees above).  The
 * package is closed either way.
 */
IMASTREAM_API int imastream_extract_commit(struct imastream_extract *x);
/* Removes every temp file and created directory of the open package; no-op if none. */
IMASTREAM_API void imastream_extract_abort(struct imastream_extract *x, int err);

/* Counters of the last committed packages (for progress and benchmarks). */
struct imastream_extract_stats {
	uint64_t packages;
	uint64_t entries;
	uint64_t bytes;
};
IMASTREAM_API void imastream_extract_get_stats(const struct imastream_extract *x,
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

#ifdef __cplusplus
}
#endif

#endif /* IMASTREAM_INSTALLER_H */
