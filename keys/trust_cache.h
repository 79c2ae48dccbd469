/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What keys/ offers filesig/ beyond imastream/keys.h: one thread's kept verify contexts
 * (trust.c), so that verifying many files does not set up a context per signature.
 */
#ifndef IMASTREAM_KEYS_TRUST_CACHE_H
#define IMASTREAM_KEYS_TRUST_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "imastream/keys.h"

/* A cache serves one thread, and stores that outlive it. */
struct ims_trust_cache;
struct ims_trust_cache *ims_trust_cache_new(void);
void ims_trust_cache_free(struct ims_trust_cache *c);
/* imastream_trust_verify() through @cache (NULL: a context a call, as it does). */
int ims_trust_verify_cached(const struct imastream_trust *t, struct ims_trust_cache *cache,
			    int hash_algo, const uint8_t *digest, size_t digest_len,
			    const uint8_t *sig, size_t sig_len, uint32_t keyid);

#endif /* IMASTREAM_KEYS_TRUST_CACHE_H */
