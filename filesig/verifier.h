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

#endif /* IMASTREAM_FILESIG_VERIFIER_H */
