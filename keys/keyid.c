// SPDX-License-Identifier: LGPL-2.1-or-later
/* Key ids: the kernel's rule (certificate SKID) and evmctl 1.4's rule for a bare key. */
#include <errno.h>
#include <stdlib.h>

#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include "keys/keys-private.h"

/* SHA-1 over the subjectPublicKey BIT STRING contents, bytes 16..19 (calc_keyid_v2). */
int ims_keyid_of_pkey(EVP_PKEY *pkey, uint32_t *keyid_ret)
{
	uint8_t sha1[SHA_DIGEST_LENGTH];
	X509_PUBKEY *xpk = NULL;
	const unsigned char *bits;
	int bits_len, err = 0;

	if (!X509_PUBKEY_set(&xpk, pkey) ||
	    !X509_PUBKEY_get0_param(NULL, &bits, &bits_len, NULL, xpk)) {
		err = -EINVAL;
		goto out;
	}
	SHA1(bits, (size_t)bits_len, sha1);
	*keyid_ret = ims_get_be32(sha1 + 16);
out:
	X509_PUBKEY_free(xpk);
	ERR_clear_error();
	return err;
}

/* The last four bytes of the subjectKeyIdentifier: what the kernel's "id:" match sees. */
bool ims_keyid_of_skid(const X509 *cert, uint32_t *keyid_ret)
{
	const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id((X509 *)cert);
	const unsigned char *p;
	int n;

	if (!skid)
		return false;
	p = ASN1_STRING_get0_data(skid);
	n = ASN1_STRING_length(skid);
	if (n < 4)
		return false;
	*keyid_ret = ims_get_be32(p + n - 4);
	return true;
}

int ims_keyid_of_cert(X509 *cert, uint32_t *keyid_ret, bool *from_skid_ret)
{
	EVP_PKEY *pkey;
	bool skid;
	int err = 0;

	skid = ims_keyid_of_skid(cert, keyid_ret);
	if (!skid) {
		pkey = X509_get0_pubkey(cert);
		err = pkey ? ims_keyid_of_pkey(pkey, keyid_ret) : -EINVAL;
	}
	if (!err && from_skid_ret)
		*from_skid_ret = skid;
	ERR_clear_error();
	return err;
}

int imastream_keyid_from_cert(const void *buf, size_t len, const struct imastream_log *log,
			      uint32_t *keyid_ret, bool *from_skid_ret)
{
	X509 *cert = NULL;
	int err;

	err = ims_load_cert_mem(buf, len, "certificate", log, &cert);
	if (!err)
		err = ims_keyid_of_cert(cert, keyid_ret, from_skid_ret);
	X509_free(cert);
	return err;
}

int imastream_keyid_from_pubkey(const void *buf, size_t len, const struct imastream_log *log,
				uint32_t *keyid_ret)
{
	EVP_PKEY *pkey = NULL;
	int err;

	err = ims_load_pubkey_mem(buf, len, "public key", log, &pkey);
	if (!err)
		err = ims_keyid_of_pkey(pkey, keyid_ret);
	EVP_PKEY_free(pkey);
	return err;
}
