// SPDX-License-Identifier: LGPL-2.1-or-later
/* Signer backend for provider URIs: any scheme an OpenSSL 3 provider registers for OSSL_STORE. */

/*
 * How to use a TPM key (tpm2-openssl) or any other provider-held key:
 * load the provider in openssl.cnf (or through OPENSSL_CONF), e.g.
 *
 *     [provider_sect]
 *     default = default_sect
 *     tpm2 = tpm2_sect
 *     [tpm2_sect]
 *     activate = 1
 *
 * and pass the key as the provider's URI, e.g. "handle:0x81000001" for a persistent
 * TPM key.  The passphrase source, if any, answers the provider's password prompts.
 * The provider must register the scheme as an OSSL_STORE loader; "file:" is served by
 * OpenSSL's own default provider.  A scheme nobody registered fails in one line.
 */
#include <errno.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/store.h>
#include <openssl/ui.h>

#include "keys/keys-private.h"

/* Answers password prompts from the passphrase source; without one, refuses. */
static int store_pass_cb(char *buf, int size, int rwflag, void *arg)
{
	const char *pass = arg;
	size_t n;

	(void)rwflag;
	if (!pass || (n = strlen(pass)) > (size_t)size)
		return -1;
	memcpy(buf, pass, n);
	return (int)n;
}

int ims_source_store(const struct imastream_key_opts *opts, const struct imastream_log *log,
		     EVP_PKEY **pkey_ret, X509 **cert_ret)
{
	OSSL_STORE_CTX *store = NULL;
	UI_METHOD *ui = NULL;
	EVP_PKEY *pkey = NULL;
	X509 *cert = NULL;
	char *pass = NULL;
	int err;

	err = ims_pass_get(opts, log, &pass);
	if (err)
		goto out;
	/* Never a terminal prompt: the library must not talk to the user. */
	ui = UI_UTIL_wrap_read_pem_callback(store_pass_cb, 0);
	if (!ui) {
		err = -ENOMEM;
		goto out;
	}
	store = OSSL_STORE_open_ex(opts->key, NULL, NULL, ui, pass, NULL, NULL, NULL);
	if (!store) {
		size_t n = strcspn(opts->key, ":");

		err = ims_openssl_err(log, -EOPNOTSUPP,
				      "%s: no OpenSSL provider serves the URI scheme '%.*s' (load one in openssl.cnf)",
				      opts->key, (int)n, opts->key);
		goto out;
	}
	while (!OSSL_STORE_eof(store)) {
		OSSL_STORE_INFO *info = OSSL_STORE_load(store);

		if (!info) {
			if (OSSL_STORE_error(store))
				break;
			continue;
		}
		if (!pkey && OSSL_STORE_INFO_get_type(info) == OSSL_STORE_INFO_PKEY)
			pkey = OSSL_STORE_INFO_get1_PKEY(info);
		else if (!cert && OSSL_STORE_INFO_get_type(info) == OSSL_STORE_INFO_CERT)
			cert = OSSL_STORE_INFO_get1_CERT(info);
		OSSL_STORE_INFO_free(info);
		if (OSSL_STORE_error(store))
			break;
	}
	if (!pkey) {
		err = ims_openssl_err(log, -ENOKEY, "%s: no private key there (or a wrong passphrase)",
				      opts->key);
		goto out;
	}
	*pkey_ret = pkey;
	pkey = NULL;
	*cert_ret = cert;
	cert = NULL;
out:
	OSSL_STORE_close(store);
	UI_destroy_method(ui);
	EVP_PKEY_free(pkey);
	X509_free(cert);
	ims_pass_free(pass);
	ERR_clear_error();
	return err;
}
