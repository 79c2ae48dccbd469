// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ECDSA nonces computed ahead on a background thread.  Nearly all of an ECDSA signature's
 * cost is k·G and k⁻¹, which do not depend on the message: a thread keeps a small ring of
 * fresh (k⁻¹, r) pairs filled, so that a signature on the caller's thread is one modular
 * multiply (about 1 µs instead of 25 for P-256).  Each pair is used once and cleared.  An
 * empty ring is never waited on: the caller signs the ordinary way.
 *
 * The legacy EC_KEY calls are deprecated in OpenSSL 3.0, which offers no other way to
 * sign with a precomputed nonce; they are confined to this file.
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "keys/keys-private.h"

#define POOL_MAX 256

struct ims_ec_pool {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t room; /* the producer waits here while the ring is full */
	EC_KEY *key;
	BIGNUM *kinv[POOL_MAX];
	BIGNUM *r[POOL_MAX];
	unsigned int depth, head, count;
	bool stop;
	/*
	 * A forked child (rpm's scriptlet fork) shares the ring with its parent: were it to
	 * sign with a pooled nonce the parent also uses, two signatures with one k would give
	 * the private key away.  Only the process that made the pool draws from it.
	 */
	pid_t owner;
};

static void *produce(void *arg)
{
	struct ims_ec_pool *p = arg;
	BN_CTX *ctx = BN_CTX_new();

	pthread_mutex_lock(&p->lock);
	while (!p->stop && ctx) {
		BIGNUM *kinv = NULL, *r = NULL;
		unsigned int slot;

		if (p->count == p->depth) {
			pthread_cond_wait(&p->room, &p->lock);
			continue;
		}
		pthread_mutex_unlock(&p->lock);
		if (!ECDSA_sign_setup(p->key, ctx, &kinv, &r)) {
			/* Nothing to say to anyone: the caller's ordinary path will explain. */
			ERR_clear_error();
			pthread_mutex_lock(&p->lock);
			break;
		}
		pthread_mutex_lock(&p->lock);
		slot = (p->head + p->count) % POOL_MAX;
		p->kinv[slot] = kinv;
		p->r[slot] = r;
		p->count++;
	}
	pthread_mutex_unlock(&p->lock);
	BN_CTX_free(ctx);
	return NULL;
}

int ims_ec_pool_new(EVP_PKEY *pkey, unsigned int depth, struct ims_ec_pool **ret)
{
	struct ims_ec_pool *p;
	EC_KEY *key;

	if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_EC)
		return -EOPNOTSUPP;
	key = EVP_PKEY_get1_EC_KEY(pkey);
	/* A provider key that keeps its private half elsewhere has nothing to precompute with. */
	if (!key || !EC_KEY_get0_private_key(key)) {
		EC_KEY_free(key);
		ERR_clear_error();
		return -EOPNOTSUPP;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		EC_KEY_free(key);
		return -ENOMEM;
	}
	p->key = key;
	p->owner = getpid();
	p->depth = depth < 1 ? 1 : depth > POOL_MAX ? POOL_MAX : depth;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->room, NULL);
	if (pthread_create(&p->thread, NULL, produce, p) != 0) {
		pthread_cond_destroy(&p->room);
		pthread_mutex_destroy(&p->lock);
		EC_KEY_free(key);
		free(p);
		return -EAGAIN;
	}
	*ret = p;
	return 0;
}

void ims_ec_pool_free(struct ims_ec_pool *p)
{
	if (!p)
		return;
	if (p->owner != getpid())
		return; /* the thread and the lock belong to the parent: leave them alone */
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->room);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	for (unsigned int i = 0; i < p->count; i++) {
		unsigned int slot = (p->head + i) % POOL_MAX;

		BN_clear_free(p->kinv[slot]);
		BN_clear_free(p->r[slot]);
	}
	pthread_cond_destroy(&p->room);
	pthread_mutex_destroy(&p->lock);
	EC_KEY_free(p->key);
	free(p);
}

int ims_ec_pool_sign(struct ims_ec_pool *p, const uint8_t *digest, size_t digest_len,
		     uint8_t *sig_out, size_t sig_cap, size_t *sig_len_ret)
{
	BIGNUM *kinv, *r;
	unsigned int len = 0;
	int ok;

	if ((size_t)ECDSA_size(p->key) > sig_cap || digest_len > INT32_MAX || p->owner != getpid())
		return -EAGAIN;
	pthread_mutex_lock(&p->lock);
	if (!p->count) {
		pthread_mutex_unlock(&p->lock);
		return -EAGAIN;
	}
	kinv = p->kinv[p->head];
	r = p->r[p->head];
	p->kinv[p->head] = p->r[p->head] = NULL;
	p->head = (p->head + 1) % POOL_MAX;
	p->count--;
	/*
	 * Woken at half, the thread refills in one go: a wake-up per signature would cost two
	 * context switches each, a tenth of a small-file install.
	 */
	if (p->count == p->depth / 2)
		pthread_cond_signal(&p->room);
	pthread_mutex_unlock(&p->lock);
	ok = ECDSA_sign_ex(0, digest, (int)digest_len, sig_out, &len, kinv, r, p->key);
	BN_clear_free(kinv);
	BN_clear_free(r);
	if (!ok) {
		/* s = 0 asks for another nonce (chance 2⁻²⁵⁶): the ordinary path takes it. */
		ERR_clear_error();
		return -EAGAIN;
	}
	*sig_len_ret = len;
	return 0;
}
