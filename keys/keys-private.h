/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Internal interfaces between the keys/ files: readers, loaders, key ids, signer backends. */
#ifndef IMASTREAM_KEYS_PRIVATE_H
#define IMASTREAM_KEYS_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "common/private.h"
#include "imastream/keys.h"

/* Key and certificate files are small; anything bigger is not one. */
#define IMS_KEYFILE_MAX (1u << 20)

/*
 * file.c: whole-file reads.  Secret buffers are freed with ims_secret_free().  @what says
 * what the secret file is ("private key", "passphrase file") in messages.
 */
int ims_read_secret_file(const char *path, const char *what, const struct imastream_log *log,
			 uint8_t **buf_ret, size_t *len_ret);
int ims_read_public_file(const char *path, const struct imastream_log *log,
			 uint8_t **buf_ret, size_t *len_ret);
void ims_secret_free(void *buf, size_t len);

/* pass.c: the passphrase or PIN, NULL when no source was given; ims_pass_free() it. */
int ims_pass_get(const struct imastream_key_opts *opts, const struct imastream_log *log,
		 char **pass_ret);
void ims_pass_free(char *pass);

/*
 * load.c: parsers over memory, also the fuzz target's entry points.  @what names the
 * input in messages.  PEM is tried first, then DER.
 */
int ims_load_privkey_mem(const void *buf, size_t len, const char *pass, const char *what,
			 const struct imastream_log *log, EVP_PKEY **pkey_ret, X509 **cert_ret);
int ims_load_pubkey_mem(const void *buf, size_t len, const char *what,
			const struct imastream_log *log, EVP_PKEY **pkey_ret);
int ims_load_cert_mem(const void *buf, size_t len, const char *what,
		      const struct imastream_log *log, X509 **cert_ret);
/* Every certificate of a PEM bundle or the one of a DER file. */
int ims_load_certs_mem(const void *buf, size_t len, const char *what,
		       const struct imastream_log *log, STACK_OF(X509) **certs_ret);
/* What a key or certificate file holds, to tell a user who gave one for the other. */
enum ims_key_file_kind {
	IMS_KIND_UNKNOWN,
	IMS_KIND_PRIVATE_KEY,
	IMS_KIND_PUBLIC_KEY,
	IMS_KIND_CERT
};
enum ims_key_file_kind ims_key_file_kind(const void *buf, size_t len);

/* keyid.c: the rules documented in imastream/keys.h. */
int ims_keyid_of_pkey(EVP_PKEY *pkey, uint32_t *keyid_ret);
bool ims_keyid_of_skid(const X509 *cert, uint32_t *keyid_ret);
int ims_keyid_of_cert(X509 *cert, uint32_t *keyid_ret, bool *from_skid_ret);

/*
 * keytype.c: accepts what the kernel verifies (RSA 2048..4096, ECDSA P-256/P-384) and
 * names the rest.  @type_ret gets "RSA-2048", "ECDSA-P256", ...
 */
int ims_check_key_type(EVP_PKEY *pkey, const char *what, const struct imastream_log *log,
		       char *type_ret, size_t type_cap);
/* ... and for a key it refuses, why, as a phrase: "an EC key on curve secp256k1 (...)". */
void ims_key_type_why(EVP_PKEY *pkey, char *buf, size_t cap);

/* md.c: 0 when @hash_algo is one we compute and @digest_len its size, else -EINVAL logged. */
int ims_digest_check(int hash_algo, size_t digest_len, const struct imastream_log *log);
/* md.c: the OpenSSL digest of a kernel hash id (EVP_MD_free() it), checking the digest size. */
int ims_md_for(int hash_algo, size_t digest_len, const struct imastream_log *log,
	       EVP_MD **md_ret);

/*
 * sign_ahead.c: the nonce worker of a signer with an ECDSA key (keys/sign_ahead.h).
 * ims_sign_ahead_start() makes *@sa on first use (-EOPNOTSUPP for any other key);
 * ims_sign_ahead_sign() returns 1 when it signed from a prepared nonce, 0 when none was
 * ready (the caller signs as before), or -errno with one line.
 */
struct ims_sign_ahead;
int ims_sign_ahead_start(struct ims_sign_ahead **sa, EVP_PKEY *pkey, unsigned int depth,
			 const struct imastream_log *log);
void ims_sign_ahead_stop(struct ims_sign_ahead *sa, const struct imastream_log *log);
void ims_sign_ahead_free(struct ims_sign_ahead *sa);
/* How many nonces are ready (the tests wait for a full pool). */
unsigned int ims_sign_ahead_ready(struct ims_sign_ahead *sa);
unsigned int ims_signer_ahead_ready(const struct imastream_signer *s);
int ims_sign_ahead_sign(struct ims_sign_ahead *sa, const char *type, const uint8_t *digest,
			size_t digest_len, uint8_t *sig_out, size_t sig_cap, size_t *sig_len_ret,
			const struct imastream_log *log);

/* Signer backends: each fills in the key and, when it has one, the certificate. */
int ims_source_file(const struct imastream_key_opts *opts, const struct imastream_log *log,
		    EVP_PKEY **pkey_ret, X509 **cert_ret);
/* pkcs11.c: @engine_ret stays referenced while the key is in use. */
int ims_source_pkcs11(const struct imastream_key_opts *opts, const struct imastream_log *log,
		      EVP_PKEY **pkey_ret, void **engine_ret);
void ims_pkcs11_release(void *engine);
int ims_source_store(const struct imastream_key_opts *opts, const struct imastream_log *log,
		     EVP_PKEY **pkey_ret, X509 **cert_ret);

/* kernel_key.c: a key that stays in the kernel. */
struct ims_kernel_key {
	int32_t serial;
	bool ec;               /* x962 encoding instead of pkcs1 */
	unsigned int bits;
	size_t max_sig;
	uint32_t keyid;        /* from the description, when has_keyid */
	bool has_keyid;
};
int ims_kernel_key_open(const char *spec, const struct imastream_log *log,
			struct ims_kernel_key *kk);
int ims_kernel_key_sign(const struct ims_kernel_key *kk, int hash_algo, const uint8_t *digest,
			size_t digest_len, uint8_t *sig, size_t sig_cap, size_t *sig_len_ret,
			const struct imastream_log *log);

/* keyring.c helpers shared with kernel_key.c. */
bool ims_parse_serial(const char *s, int32_t *serial_ret);
/* The trailing hex of an asymmetric key's description, as a key id. */
bool ims_keyid_of_description(const char *desc, uint32_t *keyid_ret);

/* Is @s a URI with a scheme (two or more characters before the first colon)? */
bool ims_is_uri(const char *s);

/* How many certificates the store holds. */
size_t imastream_trust_count(const struct imastream_trust *t);

/**
 * imastream_keyid_from_pubkey - evmctl 1.4's key id of a bare key (rule 3 above)
 * @buf: a PEM or DER public key (SubjectPublicKeyInfo) or unencrypted private key
 * Return: 0, -EINVAL when @buf holds no key, -ENOMEM.
 */
int imastream_keyid_from_pubkey(const void *buf, size_t len, const struct imastream_log *log,
				uint32_t *keyid_ret);

#endif /* IMASTREAM_KEYS_PRIVATE_H */
