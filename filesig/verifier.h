/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What filesig/ offers the installed-system audit (installed/audit.c) beyond
 * imastream/filesig.h: a verifier per worker thread, and a verification that reuses the
 * security.ima value the caller has already read.
 */
#ifndef IMASTREAM_FILESIG_VERIFIER_H
#define IMASTREAM_FILESIG_VERIFIER_H

#include <stddef.h>
#include <stdint.h>

#include "imastream/filesig.h"
#include "imastream/hash.h"

/* A verifier with @v's trust store and log, for another thread (verify.c). */
int ims_verifier_copy(const struct imastream_verifier *v, struct imastream_verifier **ret);
/*
 * imastream_verify_file_hashed() given security.ima's value (@ima, @ima_len bytes) the
 * caller has just read from @fd, which is then not read again; NULL or 0: it is read.
 */
int ims_verify_file_known(struct imastream_verifier *v, int fd, const char *path,
			  unsigned int flags, const struct imastream_hasher *content,
			  const uint8_t *ima, size_t ima_len,
			  struct imastream_verify_report *report);

/**
 * imastream_verify_file_hashed - imastream_verify_file() with the content already hashed
 * @content: a hasher that has seen the whole content of @fd, final (or NULL)
 *
 * When @content has the digest in security.ima's algorithm, that digest stands for the
 * content and @fd is not read; otherwise the content is hashed as imastream_verify_file()
 * does.  For a caller that hashes each file once for several purposes (the audit of an
 * installed root compares the same read with the rpm header).
 * Return: as imastream_verify_file().
 */
int imastream_verify_file_hashed(struct imastream_verifier *v, int fd, const char *path,
				 unsigned int flags, const struct imastream_hasher *content,
				 struct imastream_verify_report *report);

#endif /* IMASTREAM_FILESIG_VERIFIER_H */
