/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The chain sink's files: the chain's view of an extractor entry, and a queued entry's own copies. */
#ifndef IMASTREAM_INSTALLER_SINK_FILE_H
#define IMASTREAM_INSTALLER_SINK_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "imastream/entry.h"
#include "imastream/hooks.h"
#include "plugin/core/driver.h"

/**
 * ims_sink_file_opened - the chain's file for entry @e of @pkg as file_opened sees it
 * @dest: its final path (kept by the caller)
 * @algos: the digests the chain wants (imastream_chain_hash_algos())
 * @stream_always: IMASTREAM_SINK_STREAM_ALWAYS
 * @verity: verity = on
 *
 * Type, owner, mode and size as the package has them, its flags, and the digest the
 * extractor verifies promised as known.  Return: whether the chain is to see the content
 * (file_updated), or takes the extractor's digest instead.
 */
bool ims_sink_file_opened(struct imastream_file *f, const char *dest,
			  const struct imastream_entry *e, const struct imastream_pkg *pkg,
			  uint32_t algos, bool stream_always, bool verity);

/*
 * The same file as file_closed sees it, at @path (through @fd when not -1): owner and mode
 * as the inode has them (EVM covers them: --no-chown leaves the caller's, a setgid
 * directory passes its group on), the package's signature of it, and @digest (verified
 * by the extractor, in @e->digest_algo; may be NULL) as the known digest.
 */
void ims_sink_file_closed(struct imastream_file *f, const char *path, int fd,
			  const struct imastream_entry *e, const uint8_t *digest);

/* The final path of package path @dest below @root, in @buf (truncated to @size). */
const char *ims_sink_file_final(char *buf, size_t size, const char *root, const char *dest);

/* A queued entry's own copies of what the extractor frees once entry_end returns. */
struct ims_entry_copy {
	struct imastream_entry e; /* no digest or caps; link target and signature copied */
	char *target;
	uint8_t *sig;
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
	bool has_digest;
	int fd, dirfd; /* -1: none */
};

/*
 * Copies entry @e (@path, kept by the caller, stands for its path), its signature and
 * @digest (in @e->digest_algo; may be NULL); no descriptor yet.  Return: 0 or -ENOMEM;
 * release @c either way.
 */
int ims_entry_copy_take(struct ims_entry_copy *c, const struct imastream_entry *e, const char *path,
			const uint8_t *digest);
/* Duplicates @fd (-1: none) and @dirfd, close-on-exec.  Return: 0 or -errno. */
int ims_entry_copy_fds(struct ims_entry_copy *c, int fd, int dirfd);
/* Closes the descriptors and frees the copies; @c->e may no longer be used. */
void ims_entry_copy_release(struct ims_entry_copy *c);

#endif /* IMASTREAM_INSTALLER_SINK_FILE_H */
