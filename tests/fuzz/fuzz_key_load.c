// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: arbitrary bytes into the private key, public key and certificate loaders. */
#include <stddef.h>
#include <stdint.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "keys/keys-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char type[24];
	EVP_PKEY *pkey = NULL;
	STACK_OF(X509) *certs = NULL;
	X509 *cert = NULL;
	uint32_t keyid;

	/* Key files are capped at IMS_KEYFILE_MAX; so is what is worth fuzzing. */
	if (size > 65536)
		return 0;
	/* A fixed passphrase reaches the decryption path of encrypted keys. */
	if (ims_load_privkey_mem(data, size, "fuzz", "fuzz", NULL, &pkey, &cert) == 0) {
		ims_check_key_type(pkey, "fuzz", NULL, type, sizeof(type));
		ims_keyid_of_pkey(pkey, &keyid);
		if (cert)
			ims_keyid_of_cert(cert, &keyid, NULL);
		EVP_PKEY_free(pkey);
		X509_free(cert);
		pkey = NULL;
		cert = NULL;
	}
	if (ims_load_pubkey_mem(data, size, "fuzz", NULL, &pkey) == 0) {
		ims_keyid_of_pkey(pkey, &keyid);
		EVP_PKEY_free(pkey);
	}
	if (ims_load_cert_mem(data, size, "fuzz", NULL, &cert) == 0) {
		ims_keyid_of_cert(cert, &keyid, NULL);
		X509_free(cert);
	}
	if (ims_load_certs_mem(data, size, "fuzz", NULL, &certs) == 0)
		sk_X509_pop_free(certs, X509_free);
	return 0;
}
