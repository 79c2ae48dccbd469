/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What keys/ offers the drivers' chain core beyond keys.h: a worker thread that prepares
 * ECDSA nonces ahead, so that a signature on the caller's thread costs a few
 * multiplications instead of a scalar multiplication (sign_ahead.c).
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

#endif /* IMASTREAM_KEYS_SIGN_AHEAD_H */
