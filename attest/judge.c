// SPDX-License-Identifier: LGPL-2.1-or-later
/* Judges one IMA measurement against a keylime runtime policy by keylime's own rules. */
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "attest/policy-private.h"
#include "common/private.h"
#include "imastream/keys.h"

/* IMA signature header (type 3, version 2): type, version, hash algo, key id, size. */
#define DIGSIG_HDR 9

static bool excluded(const struct attest_policy *p, const char *path)
{
	for (size_t i = 0; i < p->nexcludes; i++)
		if (!regexec(&p->excludes[i].re, path, 0, NULL, 0))
			return true;
	return false;
}

static bool listed(json_object *map, const char *name, const char *hex, bool *known)
{
	json_object *list;

	if (!json_object_object_get_ex(map, name, &list))
		return false;
	*known = true;
	for (size_t i = 0; i < json_object_array_length(list); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(list, i)), hex))
			return true;
	return false;
}

/* ima-sig: does a verification key verify the signature over the logged digest? */
static bool signature_verifies(const struct attest_policy *p, const struct attest_entry *e)
{
	const uint8_t *s = e->sig;
	uint32_t keyid;

	if (e->sig_len <= DIGSIG_HDR || s[0] != 3 || s[1] != 2 || s[2] != e->hash_algo)
		return false;
	if ((size_t)(s[7] << 8 | s[8]) != e->sig_len - DIGSIG_HDR)
		return false;
	keyid = (uint32_t)s[3] << 24 | (uint32_t)s[4] << 16 | (uint32_t)s[5] << 8 | s[6];
	return !imastream_trust_verify(p->trust, e->hash_algo, e->digest, e->digest_len,
				       s + DIGSIG_HDR, e->sig_len - DIGSIG_HDR, keyid);
}

static bool keyring_ignored(const struct attest_policy *p, const char *name)
{
	for (size_t i = 0; i < json_object_array_length(p->ignored_keyrings); i++) {
		const char *k = json_object_get_string(
			json_object_array_get_idx(p->ignored_keyrings, i));

		if (!strcmp(k, "*") || !strcmp(k, name))
			return true;
	}
	return false;
}

/* A PEM private key is read without a passphrase, as keylime reads it: never prompt. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

/*
 * The public key of @der read whole as a DER certificate, public key (SubjectPublicKeyInfo,
 * or PKCS#1 for RSA) or private key.
 */
static EVP_PKEY *der_key(const uint8_t *der, long len)
{
	const unsigned char *q = der;
	EVP_PKEY *k = NULL;
	X509 *x = d2i_X509(NULL, &q, len);

	if (x && q == der + len)
		k = X509_get_pubkey(x);
	X509_free(x);
	for (int i = 0; !k && i < 3; i++) {
		q = der;
		k = !i	   ? d2i_PUBKEY(NULL, &q, len) :
		    i == 1 ? d2i_PublicKey(EVP_PKEY_RSA, NULL, &q, len) :
			     d2i_AutoPrivateKey(NULL, &q, len);
		if (k && q != der + len) {
			EVP_PKEY_free(k);
			k = NULL;
		}
	}
	return k;
}

/* The public key of @pem: its first certificate, public key or private key block. */
static EVP_PKEY *pem_key(const uint8_t *pem, int len)
{
	EVP_PKEY *k = NULL;

	for (int i = 0; !k && i < 3; i++) {
		BIO *b = BIO_new_mem_buf(pem, len);
		X509 *x;

		if (!b)
			return NULL;
		if (!i) {
			x = PEM_read_bio_X509(b, NULL, no_passphrase, NULL);
			k = x ? X509_get_pubkey(x) : NULL;
			X509_free(x);
		} else {
			k = i == 1 ? PEM_read_bio_PUBKEY(b, NULL, no_passphrase, NULL) :
				     PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL);
		}
		BIO_free(b);
	}
	return k;
}

/*
 * Is the ima-buf entry's buffer a key, as keylime's get_pubkey() (keylime/ima/
 * file_signatures.py) decides it: an X.509 certificate, a public key or a private key, DER
 * or PEM?  Return: 1 an RSA or EC key, -1 a key of another type (keylime fails the entry),
 * 0 no key: a buffer such as kexec-cmdline's, that the policy's ima-buf map must list.
 */
static int buffer_key(const char *hex)
{
	size_t len = strlen(hex) / 2;
	uint8_t *b;
	EVP_PKEY *k = NULL;
	int ret = 0;

	if (!len || len > 1 << 20 || hex[2 * len] || !(b = malloc(len)))
		return 0;
	for (size_t i = 0; i < len; i++) {
		int hi = ims_hex_digit(hex[2 * i]), lo = ims_hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			free(b);
			return 0;
		}
		b[i] = (uint8_t)(hi << 4 | lo);
	}
	k = der_key(b, (long)len);
	if (!k)
		k = pem_key(b, (int)len);
	if (k)
		ret = EVP_PKEY_get_base_id(k) == EVP_PKEY_RSA ||
				      EVP_PKEY_get_base_id(k) == EVP_PKEY_EC ?
			      1 :
			      -1;
	EVP_PKEY_free(k);
	free(b);
	return ret;
}

enum attest_verdict attest_judge(const struct attest_policy *p, const struct attest_entry *e,
				 const char **why)
{
	char hex[2 * IMASTREAM_HASH_MAX_DIGEST + 1];
	bool known = false;

	for (size_t i = 0; i < e->digest_len; i++) {
		static const char digits[] = "0123456789abcdef";

		hex[2 * i] = digits[e->digest[i] >> 4];
		hex[2 * i + 1] = digits[e->digest[i] & 15];
	}
	hex[2 * e->digest_len] = '\0';
	*why = NULL;
	if (!strcmp(e->template, "ima-buf")) {
		/* keylime's _validate_ima_buf(): ignored_keyrings is for keys alone. */
		int key = buffer_key(e->buf_hex);

		if (key < 0) {
			*why = "a key neither RSA nor EC";
			return ATTEST_NOT_IN_POLICY;
		}
		if (key && keyring_ignored(p, e->name)) {
			*why = "an ignored keyring";
			return ATTEST_IGNORED;
		}
		if (excluded(p, e->name)) {
			*why = "excluded";
			return ATTEST_EXCLUDED;
		}
		if (listed(key ? p->keyrings : p->ima_buf, e->name, hex, &known))
			return ATTEST_MATCH;
		if (key)
			*why = known ? "key digest not in the policy's keyrings" :
				       "keyring not in the policy";
		else
			*why = known ? "buffer digest not in the policy" :
				       "buffer not in the policy";
		return known ? ATTEST_DIGEST_MISMATCH : ATTEST_NOT_IN_POLICY;
	}
	if (excluded(p, e->name)) {
		*why = "excluded";
		return ATTEST_EXCLUDED;
	}
	if (e->sig_len && signature_verifies(p, e))
		return ATTEST_SIGNED;
	if (listed(p->digests, e->name, hex, &known))
		return ATTEST_MATCH;
	/* The verifier computes boot_aggregate from the TPM's quote; a policy seldom lists it. */
	if (!known && !strcmp(e->name, "boot_aggregate")) {
		*why = "boot_aggregate: the verifier checks it against the TPM quote";
		return ATTEST_IGNORED;
	}
	if (!known) {
		*why = "not in the policy";
		return ATTEST_NOT_IN_POLICY;
	}
	*why = e->sig_len ? "signature not verified by any verification key, and digest not in the "
			    "policy" :
			    "digest not in the policy";
	return ATTEST_DIGEST_MISMATCH;
}
