// SPDX-License-Identifier: LGPL-2.1-or-later
/* Parsers of private keys, public keys and certificates from memory (PEM, else DER). */
#include <errno.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "keys/keys-private.h"

/* Tracks whether OpenSSL asked for a passphrase, to tell "wrong" from "damaged". */
struct pass_state {
	const char *pass;
	bool asked;
};

/* Never prompts: OpenSSL's default callback would read the terminal. */
static int pass_cb(char *buf, int size, int rwflag, void *arg)
{
	struct pass_state *st = arg;
	size_t n;

	(void)rwflag;
	st->asked = true;
	if (!st->pass)
		return -1;
	n = strlen(st->pass);
	if (n > (size_t)size)
		return -1;
	memcpy(buf, st->pass, n);
	return (int)n;
}

static bool is_pem(const void *buf, size_t len)
{
	return memmem(buf, len, "-----BEGIN ", 11) != NULL;
}

static bool has_pem_block(const void *buf, size_t len, const char *label)
{
	char begin[64];

	snprintf(begin, sizeof(begin), "-----BEGIN %s-----", label);
	return memmem(buf, len, begin, strlen(begin)) != NULL;
}

static BIO *mem_bio(const void *buf, size_t len)
{
	return len > INT32_MAX ? NULL : BIO_new_mem_buf(buf, (int)len);
}

/* DER: any private key structure OpenSSL knows, encrypted PKCS#8 included. */
static EVP_PKEY *decode_der_privkey(const void *buf, size_t len, struct pass_state *st)
{
	OSSL_DECODER_CTX *dctx;
	EVP_PKEY *pkey = NULL;
	const unsigned char *p = buf;
	size_t left = len;

	dctx = OSSL_DECODER_CTX_new_for_pkey(&pkey, "DER", NULL, NULL, OSSL_KEYMGMT_SELECT_KEYPAIR,
					     NULL, NULL);
	if (!dctx)
		return NULL;
	if (OSSL_DECODER_CTX_set_pem_password_cb(dctx, pass_cb, st))
		OSSL_DECODER_from_data(dctx, &p, &left);
	OSSL_DECODER_CTX_free(dctx);
	return pkey;
}

enum ims_key_file_kind ims_key_file_kind(const void *buf, size_t len)
{
	struct pass_state st = { NULL, false };
	const unsigned char *p = buf;
	EVP_PKEY *pkey;
	X509 *cert;

	if (is_pem(buf, len)) {
		/* "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY" */
		if (memmem(buf, len, " PRIVATE KEY-----", 17))
			return IMS_KIND_PRIVATE_KEY;
		if (has_pem_block(buf, len, "CERTIFICATE") ||
		    has_pem_block(buf, len, "TRUSTED CERTIFICATE"))
			return IMS_KIND_CERT;
		if (has_pem_block(buf, len, "PUBLIC KEY") ||
		    has_pem_block(buf, len, "RSA PUBLIC KEY"))
			return IMS_KIND_PUBLIC_KEY;
		return IMS_KIND_UNKNOWN;
	}
	cert = d2i_X509(NULL, &p, (long)len);
	if (cert) {
		X509_free(cert);
		ERR_clear_error();
		return IMS_KIND_CERT;
	}
	p = buf;
	pkey = d2i_PUBKEY(NULL, &p, (long)len);
	if (pkey) {
		EVP_PKEY_free(pkey);
		ERR_clear_error();
		return IMS_KIND_PUBLIC_KEY;
	}
	/* An encrypted DER key asks for a passphrase: that alone says what it is. */
	pkey = decode_der_privkey(buf, len, &st);
	EVP_PKEY_free(pkey);
	ERR_clear_error();
	return pkey || st.asked ? IMS_KIND_PRIVATE_KEY : IMS_KIND_UNKNOWN;
}

/* The line for a file that holds other key material than the @wanted kind; 0 if it does not. */
static int wrong_kind(const void *buf, size_t len, const char *what, enum ims_key_file_kind wanted,
		      const struct imastream_log *log)
{
	static const char *const names[] = {
		[IMS_KIND_PRIVATE_KEY] = "a private key",
		[IMS_KIND_PUBLIC_KEY] = "a public key",
		[IMS_KIND_CERT] = "a certificate",
	};
	enum ims_key_file_kind kind = ims_key_file_kind(buf, len);

	if (kind == IMS_KIND_UNKNOWN || kind == wanted)
		return 0;
	ERR_clear_error();
	return ims_err(log, -EINVAL, "%s is %s, not %s", what, names[kind], names[wanted]);
}

int ims_load_privkey_mem(const void *buf, size_t len, const char *pass, const char *what,
			 const struct imastream_log *log, EVP_PKEY **pkey_ret, X509 **cert_ret)
{
	struct pass_state st = { pass, false };
	EVP_PKEY *pkey = NULL;
	X509 *cert = NULL;
	BIO *bio = NULL;
	int err = 0;

	if (is_pem(buf, len)) {
		bio = mem_bio(buf, len);
		if (!bio)
			return -ENOMEM;
		/* Skips other PEM blocks, so a certificate may come before or after the key. */
		pkey = PEM_read_bio_PrivateKey_ex(bio, NULL, pass_cb, &st, NULL, NULL);
	} else {
		pkey = decode_der_privkey(buf, len, &st);
	}
	if (!pkey) {
		/* OpenSSL's reason here is a decryption code ("pkcs12 cipherfinal error")
		 * that says nothing more than the line does. */
		if (st.asked)
			ERR_clear_error();
		if (st.asked && !pass)
			err = ims_err(log, -EINVAL,
				      "%s: private key is encrypted: give its passphrase (a file "
				      "or an environment variable)",
				      what);
		else if (st.asked)
			err = ims_err(log, -EKEYREJECTED,
				      "%s: wrong passphrase for the private key", what);
		else if (!(err = wrong_kind(buf, len, what, IMS_KIND_PRIVATE_KEY, log)))
			err = ims_openssl_err(log, -EINVAL, "%s: no usable private key in it (damaged or not a key)",
					      what);
		goto out;
	}
	if (cert_ret && has_pem_block(buf, len, "CERTIFICATE")) {
		/* evmctl's convention: a PEM certificate appended to the key names its key id. */
		BIO_free(bio);
		bio = mem_bio(buf, len);
		if (!bio) {
			err = -ENOMEM;
			goto out;
		}
		cert = PEM_read_bio_X509(bio, NULL, pass_cb, &st);
		if (!cert) {
			err = ims_openssl_err(log, -EINVAL, "%s: the certificate in the key file is damaged", what);
			goto out;
		}
	}
	*pkey_ret = pkey;
	pkey = NULL;
	if (cert_ret) {
		*cert_ret = cert;
		cert = NULL;
	}
out:
	ERR_clear_error();
	EVP_PKEY_free(pkey);
	X509_free(cert);
	BIO_free(bio);
	return err;
}

int ims_load_pubkey_mem(const void *buf, size_t len, const char *what,
			const struct imastream_log *log, EVP_PKEY **pkey_ret)
{
	struct pass_state st = { NULL, false };
	EVP_PKEY *pkey = NULL;
	BIO *bio;

	bio = mem_bio(buf, len);
	if (!bio)
		return -ENOMEM;
	if (is_pem(buf, len)) {
		pkey = PEM_read_bio_PUBKEY(bio, NULL, pass_cb, &st);
		if (!pkey) {
			/* A private key holds its public half: accept it too. */
			BIO_reset(bio);
			pkey = PEM_read_bio_PrivateKey(bio, NULL, pass_cb, &st);
		}
	} else {
		const unsigned char *p = buf;

		pkey = d2i_PUBKEY(NULL, &p, (long)len);
		if (!pkey)
			pkey = decode_der_privkey(buf, len, &st);
	}
	BIO_free(bio);
	if (!pkey)
		return ims_openssl_err(log, -EINVAL, "%s: no public key in it", what);
	ERR_clear_error();
	*pkey_ret = pkey;
	return 0;
}

int ims_load_cert_mem(const void *buf, size_t len, const char *what,
		      const struct imastream_log *log, X509 **cert_ret)
{
	struct pass_state st = { NULL, false };
	X509 *cert = NULL;

	if (is_pem(buf, len)) {
		BIO *bio = mem_bio(buf, len);

		if (!bio)
			return -ENOMEM;
		cert = PEM_read_bio_X509(bio, NULL, pass_cb, &st);
		BIO_free(bio);
	} else {
		const unsigned char *p = buf;

		cert = d2i_X509(NULL, &p, (long)len);
	}
	if (!cert) {
		int err = wrong_kind(buf, len, what, IMS_KIND_CERT, log);

		return err ? err :
			     ims_openssl_err(log, -EINVAL,
					     "%s: not an X.509 certificate (PEM or DER)", what);
	}
	ERR_clear_error();
	*cert_ret = cert;
	return 0;
}

int ims_load_certs_mem(const void *buf, size_t len, const char *what,
		       const struct imastream_log *log, STACK_OF(X509) **certs_ret)
{
	STACK_OF(X509) *certs = sk_X509_new_null();
	struct pass_state st = { NULL, false };
	X509 *cert = NULL;
	BIO *bio = NULL;
	int err = 0;

	if (!certs)
		return -ENOMEM;
	if (!is_pem(buf, len)) {
		err = ims_load_cert_mem(buf, len, what, log, &cert);
		if (err)
			goto out;
		if (!sk_X509_push(certs, cert)) {
			err = -ENOMEM;
			goto out;
		}
		cert = NULL;
		goto done;
	}
	bio = mem_bio(buf, len);
	if (!bio) {
		err = -ENOMEM;
		goto out;
	}
	while ((cert = PEM_read_bio_X509(bio, NULL, pass_cb, &st)) != NULL) {
		if (!sk_X509_push(certs, cert)) {
			err = -ENOMEM;
			goto out;
		}
		cert = NULL;
	}
	/* Running out of PEM blocks is the normal end; anything else is damage. */
	if (ERR_GET_REASON(ERR_peek_last_error()) != PEM_R_NO_START_LINE || !sk_X509_num(certs)) {
		if (!sk_X509_num(certs))
			err = wrong_kind(buf, len, what, IMS_KIND_CERT, log);
		if (!err)
			err = ims_openssl_err(log, -EINVAL,
					      "%s: not a PEM certificate bundle, or a damaged one",
					      what);
		goto out;
	}
done:
	ERR_clear_error();
	*certs_ret = certs;
	certs = NULL;
out:
	X509_free(cert);
	BIO_free(bio);
	sk_X509_pop_free(certs, X509_free);
	return err;
}
