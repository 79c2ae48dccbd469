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

/**
 * imastream_trust_rejection - why a certificate with @keyid cannot verify IMA signatures
 *
 * For the -EKEYREJECTED of imastream_trust_verify(): a phrase naming the key type and
 * the kernel's rule, e.g. "an EC key on curve secp256k1 (the kernel: ECDSA
 * P-256/P-384 only)".  Valid while @t lives.
 * Return: the phrase, or NULL when no certificate with @keyid is unusable.
 */
const char *imastream_trust_rejection(const struct imastream_trust *t, uint32_t keyid);

/**
 * imastream_trust_signed_digest - open an RSA signature and return the digest it signs
 * @keyid: the key id from the signature header (host order)
 * @sig: the raw signature (PKCS#1 v1.5 with a DigestInfo of @hash_algo)
 * @out: receives the signed digest; IMASTREAM_HASH_MAX_DIGEST bytes suffice
 * @out_size: size of @out
 * @len_ret: the digest's length
 *
 * Lets a verifier tell "the file changed" (a genuine signature over another digest)
 * from "the signature is bad" after imastream_trust_verify() said -EBADMSG. ECDSA
 * signatures cannot be opened this way.  Logs nothing.
 * Return: 0; -ENOKEY when no certificate has @keyid; -EOPNOTSUPP when no certificate
 * with @keyid holds an RSA key; -EBADMSG when none of them opens @sig into a DigestInfo
 * of @hash_algo; -EINVAL for an unknown algorithm.
 */
int imastream_trust_signed_digest(const struct imastream_trust *t, int hash_algo,
				  const uint8_t *sig, size_t sig_len, uint32_t keyid, uint8_t *out,
				  size_t out_size, size_t *len_ret);

#endif /* IMASTREAM_KEYS_TRUST_CACHE_H */
