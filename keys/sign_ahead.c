// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ECDSA signing ahead: a worker thread prepares each signature's secret nonce (k⁻¹ and r,
 * the scalar multiplication that is nearly all of an ECDSA signature's cost) while the
 * caller does other work, so that the caller only finishes a signature from its digest.
 * A nonce used twice gives the private key away: each is taken once, under the lock, and
 * cleared after use; a forked child never takes one (its pid is not the owner's).
 */
/* OpenSSL 3 has no EVP call that takes a prepared nonce: these two are its only way. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>

#include "keys/keys-private.h"

struct nonce {
	BIGNUM *kinv;
	BIGNUM *r;
};

struct ims_sign_ahead {
	pthread_mutex_t lock;
	pthread_cond_t wake;	 /* the worker waits here for room, or to stop */
	pthread_cond_t made_one; /* a test's signature waits here for the worker */
	pthread_t thread;
	bool running;
	bool stop;
	bool worker_waits;   /* asleep on wake: woken once half the ring is used */
	unsigned long owner; /* ims_forks() of the process whose nonces these are */
	EC_KEY *caller_key;  /* copies: OpenSSL does not promise that one EC_KEY */
	EC_KEY *worker_key;  /* may be used by two threads at once */
	struct nonce *ring;
	unsigned int cap, head, count;
	int err;       /* the worker's failure, said once no nonce is left */
	char why[256]; /* OpenSSL's reason for it */
	/*
	 * IMASTREAM_TEST_SIGN_AHEAD_FAIL_AFTER=N, for tests alone: the worker fails after N
	 * nonces, and every signature waits for the worker, so that the failure is met.
	 */
	bool test_fail;
	unsigned long fail_after;
	unsigned long made;
	unsigned long used;   /* signatures made from a prepared nonce */
	unsigned long missed; /* signatures made without: none was ready */
};

static void nonce_clear(struct nonce *n)
{
	BN_clear_free(n->kinv);
	BN_clear_free(n->r);
	n->kinv = NULL;
	n->r = NULL;
}

/* Makes one nonce with the lock released; 0 or -EIO with sa->why set. */
static int prepare(struct ims_sign_ahead *sa, BN_CTX *bn, struct nonce *n)
{
	unsigned long e;

	if (sa->test_fail && sa->made >= sa->fail_after) {
		snprintf(sa->why, sizeof(sa->why),
			 "injected by IMASTREAM_TEST_SIGN_AHEAD_FAIL_AFTER");
		return -EIO;
	}
	if (ECDSA_sign_setup(sa->worker_key, bn, &n->kinv, &n->r) == 1)
		return 0;
	e = ERR_peek_last_error();
	if (e)
		ERR_error_string_n(e, sa->why, sizeof(sa->why));
	ERR_clear_error();
	nonce_clear(n);
	return -EIO;
}

static void *worker(void *arg)
{
	struct ims_sign_ahead *sa = arg;
	BN_CTX *bn = BN_CTX_secure_new();

	pthread_mutex_lock(&sa->lock);
	while (!sa->stop) {
		struct nonce n = { 0 };
		int err;

		if (sa->err || sa->count == sa->cap) {
			sa->worker_waits = true;
			pthread_cond_wait(&sa->wake, &sa->lock);
			sa->worker_waits = false;
			continue;
		}
		pthread_mutex_unlock(&sa->lock);
		err = bn ? prepare(sa, bn, &n) : -ENOMEM;
		pthread_mutex_lock(&sa->lock);
		if (err) {
			sa->err = err;
		} else {
			sa->made++;
			sa->ring[(sa->head + sa->count) % sa->cap] = n;
			sa->count++;
		}
		if (sa->test_fail)
			pthread_cond_broadcast(&sa->made_one);
	}
	pthread_mutex_unlock(&sa->lock);
	BN_CTX_free(bn);
	/* Its thread-local OpenSSL state: a plugin's thread must not leak it per transaction. */
	OPENSSL_thread_stop();
	return NULL;
}

static int ahead_new(EVP_PKEY *pkey, unsigned int depth, const struct imastream_log *log,
		     struct ims_sign_ahead **ret)
{
	const EC_KEY *ec;
	struct ims_sign_ahead *sa;
	const char *fail_after;

	if (!pkey || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_EC || !depth)
		return -EOPNOTSUPP;
	/* A key a provider keeps to itself (a TPM) exports no private part: not for us. */
	ec = EVP_PKEY_get0_EC_KEY(pkey);
	if (!ec || !EC_KEY_get0_private_key(ec)) {
		ERR_clear_error();
		return -EOPNOTSUPP;
	}
	sa = calloc(1, sizeof(*sa));
	if (!sa)
		return -ENOMEM;
	sa->ring = calloc(depth, sizeof(*sa->ring));
	sa->caller_key = EC_KEY_dup(ec);
	sa->worker_key = EC_KEY_dup(ec);
	if (!sa->ring || !sa->caller_key || !sa->worker_key) {
		EC_KEY_free(sa->caller_key);
		EC_KEY_free(sa->worker_key);
		free(sa->ring);
		free(sa);
		return ims_openssl_err(log, -ENOMEM, "cannot copy the key for signing ahead");
	}
	sa->cap = depth;
	sa->owner = ims_forks();
	fail_after = getenv("IMASTREAM_TEST_SIGN_AHEAD_FAIL_AFTER");
	if (fail_after) {
		sa->test_fail = true;
		sa->fail_after = strtoul(fail_after, NULL, 10);
	}
	pthread_mutex_init(&sa->lock, NULL);
	pthread_cond_init(&sa->wake, NULL);
	pthread_cond_init(&sa->made_one, NULL);
	*ret = sa;
	return 0;
}

int ims_sign_ahead_start(struct ims_sign_ahead **sap, EVP_PKEY *pkey, unsigned int depth,
			 const struct imastream_log *log)
{
	struct ims_sign_ahead *sa = *sap;
	sigset_t all, old;
	int err;

	if (!sa) {
		err = ahead_new(pkey, depth, log, &sa);
		if (err)
			return err;
		*sap = sa;
	}
	if (sa->owner != ims_forks())
		return -EOPNOTSUPP;
	if (sa->running)
		return 0;
	sa->stop = false;
	/* rpm's signal handlers stay on rpm's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&sa->thread, NULL, worker, sa);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return ims_err(log, err, "cannot start the signing worker: %s", strerror(-err));
	sa->running = true;
	return 0;
}

void ims_sign_ahead_stop(struct ims_sign_ahead *sa, const struct imastream_log *log)
{
	/* In a forked child the worker does not exist, and its lock may be held forever. */
	if (!sa || !sa->running || sa->owner != ims_forks())
		return;
	pthread_mutex_lock(&sa->lock);
	sa->stop = true;
	pthread_cond_signal(&sa->wake);
	pthread_mutex_unlock(&sa->lock);
	pthread_join(sa->thread, NULL);
	sa->running = false;
	/* How a run went: tests and benches see whether the worker kept up. */
	ims_logf(log, IMASTREAM_LOG_DEBUG,
		 "signer: %lu signatures from nonces prepared ahead, %lu without (none ready)",
		 sa->used, sa->missed);
	sa->used = sa->missed = 0;
}

void ims_sign_ahead_free(struct ims_sign_ahead *sa)
{
	if (!sa)
		return;
	ims_sign_ahead_stop(sa, NULL);
	for (unsigned int i = 0; i < sa->count; i++)
		nonce_clear(&sa->ring[(sa->head + i) % sa->cap]);
	if (sa->owner == ims_forks()) {
		pthread_mutex_destroy(&sa->lock);
		pthread_cond_destroy(&sa->wake);
		pthread_cond_destroy(&sa->made_one);
	}
	EC_KEY_free(sa->caller_key);
	EC_KEY_free(sa->worker_key);
	free(sa->ring);
	free(sa);
}

unsigned int ims_sign_ahead_ready(struct ims_sign_ahead *sa)
{
	unsigned int n;

	if (!sa)
		return 0;
	pthread_mutex_lock(&sa->lock);
	n = sa->count;
	pthread_mutex_unlock(&sa->lock);
	return n;
}

int ims_sign_ahead_sign(struct ims_sign_ahead *sa, const char *type, const uint8_t *digest,
			size_t digest_len, uint8_t *sig_out, size_t sig_cap, size_t *sig_len_ret,
			const struct imastream_log *log)
{
	struct nonce n = { 0 };
	ECDSA_SIG *sig;
	int len, err = 0;

	if (!sa || sa->owner != ims_forks())
		return 0;
	pthread_mutex_lock(&sa->lock);
	while (sa->test_fail && sa->running && !sa->err && !sa->count)
		pthread_cond_wait(&sa->made_one, &sa->lock);
	/* Nonces made before a failure are good; once they are gone, the failure is said. */
	if (sa->count) {
		n = sa->ring[sa->head];
		memset(&sa->ring[sa->head], 0, sizeof(n));
		sa->head = (sa->head + 1) % sa->cap;
		sa->count--;
		/* One wake per half ring, not a futex call per signature. */
		if (sa->worker_waits && sa->count <= sa->cap / 2)
			pthread_cond_signal(&sa->wake);
	} else if (sa->err) {
		err = sa->err;
	}
	pthread_mutex_unlock(&sa->lock);
	/* The line a failed signature on this thread has, with the worker's reason. */
	if (err)
		return sa->why[0] ?
			       ims_err(log, err, "signing with %s failed (%s)", type, sa->why) :
			       ims_err(log, err, "signing with %s failed", type);
	if (!n.kinv) {
		sa->missed++;
		return 0;
	}
	sa->used++;
	sig = ECDSA_do_sign_ex(digest, (int)digest_len, n.kinv, n.r, sa->caller_key);
	nonce_clear(&n);
	if (!sig)
		return ims_openssl_err(log, -EIO, "signing with %s failed", type);
	len = i2d_ECDSA_SIG(sig, NULL);
	if (len <= 0 || (size_t)len > sig_cap) {
		ECDSA_SIG_free(sig);
		return len <= 0 ? ims_openssl_err(log, -EIO, "signing with %s failed", type) :
				  ims_err(log, -ENOSPC, "signature needs %d bytes, only %zu given",
					  len, sig_cap);
	}
	len = i2d_ECDSA_SIG(sig, &sig_out);
	ECDSA_SIG_free(sig);
	*sig_len_ret = (size_t)len;
	return 1;
}
