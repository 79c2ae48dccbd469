/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What keys/ offers the drivers' chain core beyond keys.h: a worker thread that prepares
 * ECDSA nonces ahead, so that a signature on the caller's thread costs a few
 * multiplications instead of a scalar multiplication (sign_ahead.c); and a hook through
 * which whole signatures made ahead on another thread are handed back (signer.c).
 */
#ifndef IMASTREAM_KEYS_SIGN_AHEAD_H
#define IMASTREAM_KEYS_SIGN_AHEAD_H

#include "imastream/keys.h"

/*
 * Starts (or restarts) the worker of @s, keeping at most @depth nonces ready; the
 * signatures imastream_signer_sign() makes from then on take one when one is ready (else
 * they are made as before).  Return: 0; -EOPNOTSUPP, silently, when the key is no ECDSA
 * key held in this process (RSA, a kernel key, a token's); -errno with one line.
 * Once the worker failed, the first signature that finds no nonce ready fails, with the
 * line a failed signature has.
 */
int ims_signer_ahead_start(struct imastream_signer *s, unsigned int depth);
/* Stops the worker and waits for it (before a fork); the prepared nonces stay. */
void ims_signer_ahead_stop(struct imastream_signer *s);

/*
 * Asked first by every imastream_signer_sign() on the signer it is set on: returns 1 with
 * the signature of exactly (@hash_algo, @digest) in @sig_out, 0 to let the signer sign,
 * or -errno (the signature fails with it; the hook said the line).
 */
typedef int (*ims_signer_take_fn)(void *arg, int hash_algo, const uint8_t *digest,
				  size_t digest_len, uint8_t *sig_out, size_t sig_cap,
				  size_t *sig_len_ret);
/* Sets (or, with NULL, clears) the hook of @s. */
void ims_signer_set_take(struct imastream_signer *s, ims_signer_take_fn take, void *arg);

#endif /* IMASTREAM_KEYS_SIGN_AHEAD_H */
