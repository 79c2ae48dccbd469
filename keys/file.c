// SPDX-License-Identifier: LGPL-2.1-or-later
/* Whole-file reads of keys and certificates; private keys must be private to the owner. */
/* Not plugin/core/file.c, the chain's per-file context of digests and xattrs. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keys/keys-private.h"

/*
 * Reads all of @fd.  The buffer is sized from fstat() and grown if the file grows, but
 * never past IMS_KEYFILE_MAX; one spare byte lets PEM parsers see a terminated string.
 * On a secret read, every buffer that held file bytes is zeroed before it is freed.
 */
static int read_all(int fd, const char *path, off_t size_hint, bool secret,
		    const struct imastream_log *log, uint8_t **buf_ret, size_t *len_ret)
{
	size_t cap = size_hint > 0 && size_hint < IMS_KEYFILE_MAX ? (size_t)size_hint + 1 : 4096;
	size_t len = 0;
	uint8_t *buf = malloc(cap);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			size_t ncap = cap * 2;
			uint8_t *nbuf;

			if (cap > IMS_KEYFILE_MAX) {
				err = ims_err(log, -EFBIG, "%s: larger than %u bytes, not a key or certificate",
					      path, IMS_KEYFILE_MAX);
				goto out;
			}
			nbuf = malloc(ncap);
			if (!nbuf) {
				err = -ENOMEM;
				goto out;
			}
			memcpy(nbuf, buf, len);
			if (secret)
				ims_memzero(buf, cap);
			free(buf);
			buf = nbuf;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = ims_err(log, -errno, "%s: read failed: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	*buf_ret = buf;
	*len_ret = len;
	buf = NULL;
out:
	if (buf) {
		if (secret)
			ims_memzero(buf, cap);
		free(buf);
	}
	return err;
}

/*
 * A private key file open to others is refused; when it holds a certificate or a public
 * key instead, that is the mistake to name.
 */
static int refuse_open_secret(int fd, const char *path, const char *what, const struct stat *st,
			      const struct imastream_log *log)
{
	enum ims_key_file_kind kind = IMS_KIND_UNKNOWN;
	uint8_t *buf = NULL;
	size_t len = 0;

	if (!strcmp(what, "private key") &&
	    read_all(fd, path, st->st_size, true, NULL, &buf, &len) == 0) {
		kind = ims_key_file_kind(buf, len);
		ims_secret_free(buf, len);
	}
	if (kind == IMS_KIND_CERT)
		return ims_err(log, -EINVAL, "%s is a certificate, not a private key", path);
	if (kind == IMS_KIND_PUBLIC_KEY)
		return ims_err(log, -EINVAL, "%s is a public key, not a private key", path);
	return ims_err(log, -EPERM,
		       "%s: %s is readable or writable by group or others (mode %04o); run chmod "
		       "600 on it",
		       path, what, (unsigned int)(st->st_mode & 07777));
}

static int read_file(const char *path, const char *secret_what, const struct imastream_log *log,
		     uint8_t **buf_ret, size_t *len_ret)
{
	bool secret = secret_what != NULL;
	struct stat st;
	int fd, err;

	/* A path the user named (a symlink to it is fine), but never one that blocks. */
	fd = ims_open_regular(AT_FDCWD, path, O_RDONLY, 0);
	if (fd == -ENOENT && secret && strcmp(secret_what, "private key"))
		return ims_err(log, -ENOENT, "%s: no such %s", path, secret_what);
	if (fd < 0)
		return ims_err(log, fd, "%s: cannot open %s: %s", path,
			       !secret				  ? "certificate" :
			       strcmp(secret_what, "private key") ? secret_what :
								    "key",
			       ims_open_strerror(fd));
	/* Check the file we opened, not the path, so that a swap in between cannot help. */
	if (fstat(fd, &st) < 0) {
		err = ims_err(log, -errno, "%s: fstat failed: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = ims_err(log, -EINVAL, "%s: not a regular file", path);
		goto out;
	}
	if (secret && (st.st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH))) {
		err = refuse_open_secret(fd, path, secret_what, &st, log);
		goto out;
	}
	err = read_all(fd, path, st.st_size, secret, log, buf_ret, len_ret);
out:
	close(fd);
	return err;
}

int ims_read_secret_file(const char *path, const char *what, const struct imastream_log *log,
			 uint8_t **buf_ret, size_t *len_ret)
{
	return read_file(path, what, log, buf_ret, len_ret);
}

int ims_read_public_file(const char *path, const struct imastream_log *log,
			 uint8_t **buf_ret, size_t *len_ret)
{
	return read_file(path, NULL, log, buf_ret, len_ret);
}

void ims_secret_free(void *buf, size_t len)
{
	if (!buf)
		return;
	ims_memzero(buf, len);
	free(buf);
}
