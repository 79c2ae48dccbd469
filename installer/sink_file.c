// SPDX-License-Identifier: LGPL-2.1-or-later
/* The chain sink's files: an entry as the chain sees it opened and closed, and what a queued one keeps. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imastream/hash.h"
#include "installer/sink_file.h"

bool ims_sink_file_opened(struct imastream_file *f, const char *dest,
			  const struct imastream_entry *e, const struct imastream_pkg *pkg,
			  uint32_t algos, bool stream_always, bool verity)
{
	bool stream;

	*f = (struct imastream_file){ .size = sizeof(*f),
				      .dest = dest,
				      .fd = -1,
				      .mode = e->mode,
				      .uid = e->uid,
				      .gid = e->gid,
				      .content_size = e->size,
				      .pkg = pkg };
	if (e->flags & IMASTREAM_ENTRY_CONFIG)
		f->flags |= IMASTREAM_FILE_CONFIG;
	if (e->flags & IMASTREAM_ENTRY_UNOWNED)
		f->flags |= IMASTREAM_FILE_UNOWNED;
	/*
	 * Invariant 1: each digest once.  The extractor hashes the content in the header's
	 * algorithm to check it; when that is every digest the chain asked for, the chain
	 * takes it as known_digest at file_closed instead of hashing the same bytes again.
	 * Otherwise (another algorithm, no header digest) the chain hashes the stream.
	 */
	stream = S_ISREG(e->mode) &&
		 (stream_always || !e->digest || !e->digest_algo ||
		  (algos & ~IMASTREAM_HASH_BIT(e->digest_algo)) ||
		  verity /* no header has the fs-verity digest: from the stream */);
	/*
	 * verity = on streams every file for its tree.  The header digest the extractor
	 * checks in the same pass is promised to the chain now (known_algo before
	 * file_opened, the digest at file_closed): when it is every plain digest the chain
	 * wants, the stream is not hashed a second time in that algorithm.
	 */
	if (stream && e->digest && e->digest_algo)
		f->known_algo = e->digest_algo;
	return stream;
}

void ims_sink_file_closed(struct imastream_file *f, const char *path, int fd,
			  const struct imastream_entry *e, const uint8_t *digest)
{
	const struct imastream_hash_info *hi;
	struct stat st;

	f->path = path;
	f->fd = fd;
	if ((fd >= 0 ? fstat(fd, &st) : lstat(path, &st)) == 0) {
		f->uid = st.st_uid;
		f->gid = st.st_gid;
		f->mode = st.st_mode;
	}
	f->pkg_sig = e->sig;
	f->pkg_sig_len = e->sig_len;
	if (digest && (hi = imastream_hash_by_algo(e->digest_algo)) &&
	    hi->digest_size <= sizeof(f->known_digest)) {
		f->known_algo = hi->algo;
		memcpy(f->known_digest, digest, hi->digest_size);
		f->known_len = hi->digest_size;
	}
}

const char *ims_sink_file_final(char *buf, size_t size, const char *root, const char *dest)
{
	snprintf(buf, size, "%s/%s", strcmp(root, "/") ? root : "",
		 dest[0] == '/' ? dest + 1 : dest);
	return buf;
}

int ims_entry_copy_take(struct ims_entry_copy *c, const struct imastream_entry *e, const char *path,
			const uint8_t *digest)
{
	const struct imastream_hash_info *hi = imastream_hash_by_algo(e->digest_algo);

	c->fd = c->dirfd = -1;
	c->e = *e;
	c->e.path = path;
	c->e.digest = NULL;
	c->e.sig = NULL;
	c->e.sig_len = 0;
	c->e.caps = NULL;
	c->e.link_target = NULL;
	if (e->link_target && !(c->target = strdup(e->link_target)))
		return -ENOMEM;
	c->e.link_target = c->target;
	if (e->sig && e->sig_len) {
		if (!(c->sig = malloc(e->sig_len)))
			return -ENOMEM;
		memcpy(c->sig, e->sig, e->sig_len);
		c->e.sig = c->sig;
		c->e.sig_len = e->sig_len;
	}
	if (digest && hi && hi->digest_size <= sizeof(c->digest)) {
		memcpy(c->digest, digest, hi->digest_size);
		c->has_digest = true;
	}
	return 0;
}

int ims_entry_copy_fds(struct ims_entry_copy *c, int fd, int dirfd)
{
	if ((fd >= 0 && (c->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) ||
	    (c->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return -errno;
	return 0;
}

void ims_entry_copy_release(struct ims_entry_copy *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->fd = c->dirfd = -1;
	free(c->sig);
	free(c->target);
	c->sig = NULL;
	c->target = NULL;
	c->e.sig = NULL;
	c->e.link_target = NULL;
}
