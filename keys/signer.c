// SPDX-License-Identifier: LGPL-2.1-or-later
/* The signer handle: picks the key source, settles the key id, checks the certificate. */
/* Not plugin/core/signer.c, the chain's one key loaded from its configuration. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

#include "imastream/hash.h"
#include "keys/keys-private.h"
#include "keys/sign_ahead.h"

struct imastream_signer {
	struct imastream_log log;
	EVP_PKEY *pkey;             /* file, pkcs11 and store keys */
	void *engine;               /* pkcs11 engine reference, while pkey lives */
	struct ims_kernel_key kk;   /* kernel keys (pkey == NULL) */
	/* One prepared context per kernel hash id: set_signature_md costs a lookup. */
	EVP_PKEY_CTX *ctx[32];
	size_t max_sig;
	uint32_t keyid;
	char type[24];
	struct ims_sign_ahead *ahead; /* ECDSA nonces prepared on a worker, or NULL */
	ims_signer_take_fn take;      /* signatures made ahead elsewhere, or NULL */
	void *take_arg;
};

bool ims_is_uri(const char *s)
{
	size_t n = 0;

	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
	       (n && ((s[n] >= '0' && s[n] <= '9') || s[n] == '+' || s[n] == '-' || s[n] == '.')))
		n++;
	/* One letter before a colon is a drive letter elsewhere, and never a scheme here. */
	return n >= 2 && s[n] == ':';
}

static int load_cert_file(const char *path, const struct imastream_log *log, X509 **cert_ret)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	err = ims_read_public_file(path, log, &buf, &len);
	if (!err)
		err = ims_load_cert_mem(buf, len, path, log, cert_ret);
	free(buf);
	return err;
}

/* A kernel key has no EVP_PKEY here: prove the match by signing and verifying once. */
static int kernel_key_matches(struct imastream_signer *s, X509 *cert, const char *what)
{
	static const uint8_t probe[32] = "imastream key/certificate probe";
	EVP_PKEY *pub = X509_get0_pubkey(cert);
	const EVP_MD *md = EVP_sha256();
	EVP_PKEY_CTX *vctx = NULL;
	uint8_t sig[1024];
	size_t sig_len;
	int err;

	err = ims_kernel_key_sign(&s->kk, IMASTREAM_HASH_SHA256, probe, sizeof(probe), sig,
				  sizeof(sig), &sig_len, &s->log);
	if (err)
		return err;
	vctx = pub ? EVP_PKEY_CTX_new_from_pkey(NULL, pub, NULL) : NULL;
	if (!vctx || EVP_PKEY_verify_init(vctx) <= 0 || EVP_PKEY_CTX_set_signature_md(vctx, md) <= 0 ||
	    EVP_PKEY_verify(vctx, sig, sig_len, probe, sizeof(probe)) != 1)
		err = ims_err(&s->log, -EKEYREJECTED, "%s does not match the key %s", what,
			      s->type);
	EVP_PKEY_CTX_free(vctx);
	ERR_clear_error();
	return err;
}

static int open_key(struct imastream_signer *s, const struct imastream_key_opts *opts,
		    X509 **cert_ret)
{
	const char *key = opts->key;

	if (!strncmp(key, "kernel:", 7)) {
		int err = ims_kernel_key_open(key + 7, &s->log, &s->kk);

		if (err)
			return err;
		s->max_sig = s->kk.max_sig;
		snprintf(s->type, sizeof(s->type), s->kk.ec ? "ECDSA-P%u" : "RSA-%u", s->kk.bits);
		return 0;
	}
	if (!strncmp(key, "pkcs11:", 7))
		return ims_source_pkcs11(opts, &s->log, &s->pkey, &s->engine);
	if (ims_is_uri(key))
		return ims_source_store(opts, &s->log, &s->pkey, cert_ret);
	return ims_source_file(opts, &s->log, &s->pkey, cert_ret);
}

int imastream_signer_new(const struct imastream_key_opts *caller_opts,
			 const struct imastream_log *log, struct imastream_signer **ret)
{
	struct imastream_key_opts full, *opts = &full;
	struct imastream_signer *s;
	X509 *cert = NULL, *extra = NULL;
	const char *cert_what = NULL;
	bool from_skid = false;
	int err;

	if (!caller_opts)
		return ims_err(log, -EINVAL, "no signing key given");
	err = IMS_CHECK_SIZE(log, caller_opts, imastream_key_opts, has_keyid);
	if (err)
		return err;
	/* Ours, complete: what an older caller lacks is zero, its default. */
	IMS_COPY_SIZED(opts, caller_opts);
	if (!opts->key || !opts->key[0])
		return ims_err(log, -EINVAL, "no signing key given");
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (log)
		s->log = *log;
	err = open_key(s, opts, &cert);
	if (err)
		goto out;
	if (cert)
		cert_what = "the certificate in the key file";
	if (s->pkey) {
		err = ims_check_key_type(s->pkey, opts->key, &s->log, s->type, sizeof(s->type));
		if (err)
			goto out;
		s->max_sig = (size_t)EVP_PKEY_get_size(s->pkey);
	}
	if (opts->cert) {
		err = load_cert_file(opts->cert, &s->log, &extra);
		if (err)
			goto out;
		X509_free(cert);
		cert = extra;
		extra = NULL;
		cert_what = opts->cert;
	}
	if (cert && s->pkey && EVP_PKEY_eq(X509_get0_pubkey(cert), s->pkey) != 1) {
		err = ims_err(&s->log, -EKEYREJECTED, "%s does not match the private key %s",
			      cert_what, opts->key);
		goto out;
	}
	if (cert && !s->pkey) {
		err = kernel_key_matches(s, cert, cert_what);
		if (err)
			goto out;
	}
	if (opts->has_keyid) {
		s->keyid = opts->keyid;
	} else if (cert) {
		err = ims_keyid_of_cert(cert, &s->keyid, &from_skid);
		if (!err && !from_skid)
			ims_logf(&s->log, IMASTREAM_LOG_WARNING,
				 "%s has no subjectKeyIdentifier: key id %08x follows evmctl's rule, which the kernel cannot match",
				 cert_what, s->keyid);
	} else if (s->pkey) {
		err = ims_keyid_of_pkey(s->pkey, &s->keyid);
	} else if (s->kk.has_keyid) {
		s->keyid = s->kk.keyid;
	} else {
		err = ims_err(&s->log, -EINVAL,
			      "%s: cannot tell the key id of this kernel key: give a certificate or a key id",
			      opts->key);
	}
	if (err)
		goto out;
	*ret = s;
	s = NULL;
out:
	X509_free(cert);
	X509_free(extra);
	ERR_clear_error();
	imastream_signer_free(s);
	return err;
}

int imastream_signer_dup(const struct imastream_signer *s, struct imastream_signer **ret)
{
	struct imastream_signer *d;

	/* Not an error worth a line: the caller just signs from one thread. */
	if (s->engine)
		return -EOPNOTSUPP;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->log = s->log;
	if (s->pkey) {
		if (EVP_PKEY_up_ref(s->pkey) != 1) {
			free(d);
			return ims_openssl_err(&s->log, -ENOMEM, "cannot share the key");
		}
		d->pkey = s->pkey;
	}
	d->kk = s->kk;
	d->max_sig = s->max_sig;
	d->keyid = s->keyid;
	memcpy(d->type, s->type, sizeof(d->type));
	*ret = d;
	return 0;
}

void imastream_signer_free(struct imastream_signer *s)
{
	if (!s)
		return;
	ims_sign_ahead_free(s->ahead);
	for (size_t i = 0; i < ARRAY_SIZE(s->ctx); i++)
		EVP_PKEY_CTX_free(s->ctx[i]);
	/* EVP_PKEY_free cleanses the key's private numbers (BN_clear_free). */
	EVP_PKEY_free(s->pkey);
	ims_pkcs11_release(s->engine);
	ims_memzero(s, sizeof(*s));
	free(s);
}

/* One context per algorithm, made on first use: the digest is looked up only then. */
static int sign_ctx(struct imastream_signer *s, int hash_algo, size_t digest_len,
		    EVP_PKEY_CTX **ctx_ret)
{
	EVP_PKEY_CTX *ctx = s->ctx[hash_algo];
	EVP_MD *md;
	int err, ok;

	if (ctx) {
		*ctx_ret = ctx;
		return 0;
	}
	err = ims_md_for(hash_algo, digest_len, &s->log, &md);
	if (err)
		return err;
	/* An engine key carries its engine; other keys use the default providers. */
	ctx = EVP_PKEY_CTX_new(s->pkey, NULL);
	/*
	 * RSA: PKCS#1 v1.5 padding with DigestInfo (the default once a signature md is
	 * set), which is the kernel's "pkcs1" encoding.  ECDSA: DER ECDSA-Sig-Value ("x962").
	 */
	ok = ctx && EVP_PKEY_sign_init(ctx) > 0 && EVP_PKEY_CTX_set_signature_md(ctx, md) > 0;
	EVP_MD_free(md);
	if (!ok) {
		EVP_PKEY_CTX_free(ctx);
		return ims_openssl_err(&s->log, -EIO, "cannot prepare %s signing with %s",
				       imastream_hash_by_algo(hash_algo)->name, s->type);
	}
	s->ctx[hash_algo] = ctx;
	*ctx_ret = ctx;
	return 0;
}

int imastream_signer_sign(struct imastream_signer *s, int hash_algo, const uint8_t *digest,
			  size_t digest_len, uint8_t *sig_out, size_t sig_cap, size_t *sig_len_ret)
{
	EVP_PKEY_CTX *ctx = NULL;
	size_t len;
	int err;

	err = ims_digest_check(hash_algo, digest_len, &s->log);
	if (err)
		return err;
	if (s->take) {
		err = s->take(s->take_arg, hash_algo, digest, digest_len, sig_out, sig_cap,
			      sig_len_ret);
		if (err)
			return err < 0 ? err : 0;
	}
	if (!s->pkey)
		return ims_kernel_key_sign(&s->kk, hash_algo, digest, digest_len, sig_out, sig_cap,
					   sig_len_ret, &s->log);
	if (s->ahead) {
		err = ims_sign_ahead_sign(s->ahead, s->type, digest, digest_len, sig_out, sig_cap,
					  sig_len_ret, &s->log);
		if (err)
			return err < 0 ? err : 0;
	}
	err = sign_ctx(s, hash_algo, digest_len, &ctx);
	if (err)
		return err;
	if (EVP_PKEY_sign(ctx, NULL, &len, digest, digest_len) <= 0)
		return ims_openssl_err(&s->log, -EIO, "signing with %s failed", s->type);
	if (len > sig_cap)
		return ims_err(&s->log, -ENOSPC, "signature needs %zu bytes, only %zu given", len,
			       sig_cap);
	len = sig_cap;
	if (EVP_PKEY_sign(ctx, sig_out, &len, digest, digest_len) <= 0)
		return ims_openssl_err(&s->log, -EIO, "signing with %s failed", s->type);
	*sig_len_ret = len;
	return 0;
}

size_t imastream_signer_max_sig_size(const struct imastream_signer *s)
{
	return s->max_sig;
}

uint32_t imastream_signer_keyid(const struct imastream_signer *s)
{
	return s->keyid;
}

const char *imastream_signer_key_type(const struct imastream_signer *s)
{
	return s->type;
}

int ims_signer_ahead_start(struct imastream_signer *s, unsigned int depth)
{
	/* A token's key (engine) signs inside the token: nothing to prepare here. */
	if (!s || !s->pkey || s->engine)
		return -EOPNOTSUPP;
	return ims_sign_ahead_start(&s->ahead, s->pkey, depth, &s->log);
}

void ims_signer_ahead_stop(struct imastream_signer *s)
{
	if (s)
		ims_sign_ahead_stop(s->ahead, &s->log);
}

unsigned int ims_signer_ahead_ready(const struct imastream_signer *s)
{
	return s ? ims_sign_ahead_ready(s->ahead) : 0;
}

void ims_signer_set_take(struct imastream_signer *s, ims_signer_take_fn take, void *arg)
{
	if (!s)
		return;
	s->take = take;
	s->take_arg = arg;
}
