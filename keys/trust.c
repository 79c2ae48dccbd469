// SPDX-License-Identifier: LGPL-2.1-or-later
/* Trust store: certificates indexed by key id, verifying signatures as the kernel would. */
/* Not plugin/builtin/policy/trust.c, the plugin that gives a package its trust domain. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>

#include "hashers/algos.h"
#include "imastream/hash.h"
#include "keys/keys-private.h"
#include "keys/trust_cache.h"

struct trust_cert {
	X509 *cert;      /* NULL for a bare public key */
	EVP_PKEY *pub;   /* the certificate's key (not owned), or the bare key (owned) */
	uint32_t keyid;
	bool usable;     /* a key type the kernel verifies IMA signatures with */
	char type[24];
	char why[160];   /* when not usable: which key type, and why the kernel cannot use it */
};

struct imastream_trust {
	struct imastream_log log;
	struct trust_cert *certs;
	size_t n, cap;
};

int imastream_trust_new(const struct imastream_log *log, struct imastream_trust **ret)
{
	struct imastream_trust *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	if (log)
		t->log = *log;
	*ret = t;
	return 0;
}

void imastream_trust_free(struct imastream_trust *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		if (t->certs[i].cert)
			X509_free(t->certs[i].cert);
		else
			EVP_PKEY_free(t->certs[i].pub);
	}
	free(t->certs);
	free(t);
}

size_t imastream_trust_count(const struct imastream_trust *t)
{
	return t->n;
}

/* A free slot at the end of the store, or NULL without memory. */
static struct trust_cert *next_slot(struct imastream_trust *t)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct trust_cert *n = realloc(t->certs, cap * sizeof(*n));

		if (!n)
			return NULL;
		t->certs = n;
		t->cap = cap;
	}
	memset(&t->certs[t->n], 0, sizeof(t->certs[t->n]));
	return &t->certs[t->n];
}

/* Unusable keys are kept so that verify() can say why, instead of "unknown key id". */
static void judge_key(struct trust_cert *tc, const char *what)
{
	tc->usable = tc->pub && !ims_check_key_type(tc->pub, what, NULL, tc->type, sizeof(tc->type));
	if (!tc->usable) {
		snprintf(tc->type, sizeof(tc->type), "%s",
			 tc->pub && EVP_PKEY_get0_type_name(tc->pub) ?
			 EVP_PKEY_get0_type_name(tc->pub) : "unknown");
		ims_key_type_why(tc->pub, tc->why, sizeof(tc->why));
	}
	ERR_clear_error();
}

/* Takes @cert over. */
static int add_cert(struct imastream_trust *t, X509 *cert)
{
	struct trust_cert *tc = next_slot(t);

	if (!tc) {
		X509_free(cert);
		return -ENOMEM;
	}
	tc->cert = cert;
	tc->pub = X509_get0_pubkey(cert);
	if (ims_keyid_of_cert(cert, &tc->keyid, NULL)) {
		X509_free(cert);
		return ims_err(&t->log, -EINVAL, "a certificate has no usable public key");
	}
	judge_key(tc, "certificate");
	t->n++;
	return 0;
}

int imastream_trust_add_pubkey(struct imastream_trust *t, const void *der, size_t len,
			       const uint32_t *keyid)
{
	const unsigned char *p = der;
	struct trust_cert *tc;
	EVP_PKEY *pub;

	pub = d2i_PUBKEY(NULL, &p, (long)len);
	if (!pub || p != (const unsigned char *)der + len) {
		EVP_PKEY_free(pub);
		ERR_clear_error();
		return ims_err(&t->log, -EINVAL, "not a DER SubjectPublicKeyInfo public key");
	}
	tc = next_slot(t);
	if (!tc) {
		EVP_PKEY_free(pub);
		return -ENOMEM;
	}
	tc->pub = pub;
	if (keyid) {
		tc->keyid = *keyid;
	} else if (ims_keyid_of_pkey(pub, &tc->keyid)) {
		EVP_PKEY_free(pub);
		return ims_err(&t->log, -EINVAL, "a public key has no key id");
	}
	judge_key(tc, "public key");
	t->n++;
	return 0;
}

int imastream_trust_add_mem(struct imastream_trust *t, const void *buf, size_t len,
			    const char *what)
{
	STACK_OF(X509) *certs = NULL;
	int err;

	err = ims_load_certs_mem(buf, len, what ? what : "certificate", &t->log, &certs);
	if (err)
		return err;
	while (!err && sk_X509_num(certs) > 0)
		err = add_cert(t, sk_X509_shift(certs));
	sk_X509_pop_free(certs, X509_free);
	return err;
}

static int add_file(struct imastream_trust *t, const char *path, const struct imastream_log *log)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	err = ims_read_public_file(path, log, &buf, &len);
	if (!err) {
		struct imastream_log saved = t->log;

		t->log = log ? *log : (struct imastream_log){ 0 };
		err = imastream_trust_add_mem(t, buf, len, path);
		t->log = saved;
	}
	free(buf);
	return err;
}

/* Every regular, non-hidden file; files that hold no certificate are skipped. */
static int add_dir(struct imastream_trust *t, const char *path)
{
	size_t before = t->n;
	struct dirent *de;
	DIR *dir;
	int err = 0;

	dir = opendir(path);
	if (!dir)
		return ims_err(&t->log, -errno, "%s: %s", path, strerror(errno));
	while ((de = readdir(dir)) != NULL) {
		char file[4096];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(dir), de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
		err = add_file(t, file, NULL);
		if (err == -ENOMEM)
			goto out;
		if (err)
			ims_logf(&t->log, IMASTREAM_LOG_INFO, "%s: no certificate, skipped", file);
		err = 0;
	}
	if (t->n == before)
		err = ims_err(&t->log, -EINVAL, "%s: no certificate in this directory", path);
out:
	closedir(dir);
	return err;
}

int imastream_trust_add_path(struct imastream_trust *t, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return ims_err(&t->log, -errno, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return add_dir(t, path);
	return add_file(t, path, &t->log);
}

static int verify_one(EVP_PKEY *pub, const EVP_MD *md, const uint8_t *digest, size_t digest_len,
		      const uint8_t *sig, size_t sig_len)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pub, NULL);
	int ok = 0;

	if (ctx && EVP_PKEY_verify_init(ctx) > 0 && EVP_PKEY_CTX_set_signature_md(ctx, md) > 0)
		ok = EVP_PKEY_verify(ctx, sig, sig_len, digest, digest_len) == 1;
	EVP_PKEY_CTX_free(ctx);
	ERR_clear_error();
	return ok;
}

/*
 * One thread's verify contexts: a key's context set up for one hash, kept, since setting
 * one up (a context, a signature algorithm fetched by name, the md) costs about a tenth
 * of an ECDSA P-256 verification.  Keyed by the key, which lives as long as the store.
 */
#define TRUST_CACHE_SLOTS 4

struct ims_trust_cache {
	struct {
		const EVP_PKEY *pub;
		int hash_algo;
		EVP_MD *md; /* what ctx was set up with, kept as long as it */
		EVP_PKEY_CTX *ctx;
	} slot[TRUST_CACHE_SLOTS];
	unsigned int next; /* the slot replaced when none matches */
};

struct ims_trust_cache *ims_trust_cache_new(void)
{
	return calloc(1, sizeof(struct ims_trust_cache));
}

void ims_trust_cache_free(struct ims_trust_cache *c)
{
	if (!c)
		return;
	for (unsigned int i = 0; i < TRUST_CACHE_SLOTS; i++) {
		EVP_PKEY_CTX_free(c->slot[i].ctx);
		EVP_MD_free(c->slot[i].md);
	}
	free(c);
}

/* @pub's context for @hash_algo, set up on first use; NULL when it cannot be. */
static EVP_PKEY_CTX *cached_ctx(struct ims_trust_cache *c, EVP_PKEY *pub, int hash_algo)
{
	EVP_PKEY_CTX *ctx;
	EVP_MD *md;
	unsigned int i;
	int err;

	for (i = 0; i < TRUST_CACHE_SLOTS; i++)
		if (c->slot[i].ctx && c->slot[i].pub == pub && c->slot[i].hash_algo == hash_algo)
			return c->slot[i].ctx;
	md = ims_hash_fetch(hash_algo, NULL, &err);
	ctx = md ? EVP_PKEY_CTX_new_from_pkey(NULL, pub, NULL) : NULL;
	if (!ctx || EVP_PKEY_verify_init(ctx) <= 0 || EVP_PKEY_CTX_set_signature_md(ctx, md) <= 0) {
		EVP_PKEY_CTX_free(ctx);
		EVP_MD_free(md);
		return NULL;
	}
	i = c->next++ % TRUST_CACHE_SLOTS;
	EVP_PKEY_CTX_free(c->slot[i].ctx);
	EVP_MD_free(c->slot[i].md);
	c->slot[i].pub = pub;
	c->slot[i].hash_algo = hash_algo;
	c->slot[i].md = md;
	c->slot[i].ctx = ctx;
	return ctx;
}

/* Like verify_one(), through a kept context: EVP_PKEY_verify() keeps no state between calls. */
static int verify_cached(struct ims_trust_cache *c, EVP_PKEY *pub, int hash_algo,
			 const uint8_t *digest, size_t digest_len, const uint8_t *sig,
			 size_t sig_len)
{
	EVP_PKEY_CTX *ctx = cached_ctx(c, pub, hash_algo);
	int ok = ctx && EVP_PKEY_verify(ctx, sig, sig_len, digest, digest_len) == 1;

	ERR_clear_error();
	return ok;
}

static int verify_with(const struct imastream_trust *t, struct ims_trust_cache *cache,
		       int hash_algo, const EVP_MD *md, const uint8_t *digest,
		       size_t digest_len, const uint8_t *sig, size_t sig_len, uint32_t keyid)
{
	const struct trust_cert *rejected = NULL;
	bool tried = false;

	for (size_t i = 0; i < t->n; i++) {
		const struct trust_cert *tc = &t->certs[i];

		if (tc->keyid != keyid)
			continue;
		if (!tc->usable) {
			rejected = tc;
			continue;
		}
		tried = true;
		if (cache ? verify_cached(cache, tc->pub, hash_algo, digest, digest_len, sig,
					  sig_len) :
			    verify_one(tc->pub, md, digest, digest_len, sig, sig_len))
			return 0;
	}
	if (tried)
		return ims_err(&t->log, -EBADMSG, "signature with key id %08x does not verify", keyid);
	if (rejected)
		return ims_err(&t->log, -EKEYREJECTED,
			       "key id %08x: the certificate holds %s", keyid, rejected->why);
	return ims_err(&t->log, -ENOKEY, "no trusted certificate has key id %08x", keyid);
}

int ims_trust_verify_cached(const struct imastream_trust *t, struct ims_trust_cache *cache,
			    int hash_algo, const uint8_t *digest, size_t digest_len,
			    const uint8_t *sig, size_t sig_len, uint32_t keyid)
{
	EVP_MD *md = NULL;
	int err;

	/* A kept context has its md: fetching one a call is only for calls without. */
	err = cache ? ims_digest_check(hash_algo, digest_len, &t->log) :
		      ims_md_for(hash_algo, digest_len, &t->log, &md);
	if (err)
		return err;
	err = verify_with(t, cache, hash_algo, md, digest, digest_len, sig, sig_len, keyid);
	EVP_MD_free(md);
	return err;
}

int imastream_trust_verify(const struct imastream_trust *t, int hash_algo,
			   const uint8_t *digest, size_t digest_len, const uint8_t *sig,
			   size_t sig_len, uint32_t keyid)
{
	return ims_trust_verify_cached(t, NULL, hash_algo, digest, digest_len, sig, sig_len,
				       keyid);
}

static int recover_with(const struct imastream_trust *t, const struct imastream_hash_info *hi,
			const EVP_MD *md, const uint8_t *sig, size_t sig_len, uint32_t keyid,
			uint8_t *out, size_t out_size, size_t *len_ret)
{
	bool any = false, rsa = false;

	for (size_t i = 0; i < t->n; i++) {
		const struct trust_cert *tc = &t->certs[i];
		EVP_PKEY *pub = tc->pub;
		EVP_PKEY_CTX *ctx;
		uint8_t buf[1024];
		size_t len = sizeof(buf);
		int ok = 0;

		if (tc->keyid != keyid)
			continue;
		any = true;
		if (!tc->usable || !pub || EVP_PKEY_get_base_id(pub) != EVP_PKEY_RSA)
			continue;
		rsa = true;
		/* With a signature md set, OpenSSL checks the DigestInfo and returns the digest. */
		ctx = EVP_PKEY_CTX_new_from_pkey(NULL, pub, NULL);
		if (ctx && EVP_PKEY_verify_recover_init(ctx) > 0 &&
		    EVP_PKEY_CTX_set_signature_md(ctx, md) > 0)
			ok = EVP_PKEY_verify_recover(ctx, buf, &len, sig, sig_len) > 0;
		EVP_PKEY_CTX_free(ctx);
		ERR_clear_error();
		if (ok && len == hi->digest_size && len <= out_size) {
			memcpy(out, buf, len);
			*len_ret = len;
			return 0;
		}
	}
	if (!any)
		return -ENOKEY;
	return rsa ? -EBADMSG : -EOPNOTSUPP;
}

int imastream_trust_signed_digest(const struct imastream_trust *t, int hash_algo,
				  const uint8_t *sig, size_t sig_len, uint32_t keyid,
				  uint8_t *out, size_t out_size, size_t *len_ret)
{
	const struct imastream_hash_info *hi = imastream_hash_by_algo(hash_algo);
	EVP_MD *md;
	int err;

	if (!hi || ims_md_for(hash_algo, hi->digest_size, NULL, &md))
		return -EINVAL;
	err = recover_with(t, hi, md, sig, sig_len, keyid, out, out_size, len_ret);
	EVP_MD_free(md);
	return err;
}

const char *imastream_trust_rejection(const struct imastream_trust *t, uint32_t keyid)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (t->certs[i].keyid == keyid && !t->certs[i].usable)
			return t->certs[i].why;
	return NULL;
}
