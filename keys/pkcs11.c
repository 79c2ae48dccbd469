// SPDX-License-Identifier: LGPL-2.1-or-later
/* Signer backend for pkcs11: URIs, through OpenSSL's pkcs11 engine (libp11) as evmctl 1.4. */

/*
 * The ENGINE API is deprecated in OpenSSL 3.0, but Debian 12's pkcs11 support is the
 * libp11 engine (libengine-pkcs11-openssl); the pkcs11 provider came later.  Silence
 * the deprecation for this file only, so that the rest of the tree stays on -Werror
 * with deprecation warnings on.
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <errno.h>
#include <string.h>

#include <openssl/engine.h>
#include <openssl/err.h>

#include "keys/keys-private.h"

/* Loads the engine by id; OpenSSL finds pkcs11.so in its engines directory. */
static int engine_open(const struct imastream_log *log, ENGINE **engine_ret)
{
	ENGINE *e;

	e = ENGINE_by_id("pkcs11");
	if (!e)
		return ims_openssl_err(log, -EOPNOTSUPP,
				       "pkcs11: URIs need the OpenSSL pkcs11 engine (Debian package libengine-pkcs11-openssl)");
	if (!ENGINE_init(e)) {
		ENGINE_free(e);
		return ims_openssl_err(log, -EOPNOTSUPP, "the OpenSSL pkcs11 engine failed to start");
	}
	/* ENGINE_init took a functional reference; drop the structural one. */
	ENGINE_free(e);
	*engine_ret = e;
	return 0;
}

int ims_source_pkcs11(const struct imastream_key_opts *opts, const struct imastream_log *log,
		      EVP_PKEY **pkey_ret, void **engine_ret)
{
	ENGINE *e = NULL;
	EVP_PKEY *pkey;
	char *pin = NULL;
	int err;

	err = ims_pass_get(opts, log, &pin);
	if (err)
		goto out;
	err = engine_open(log, &e);
	if (err)
		goto out;
	/* The PIN also works inside the URI (pin-value=), but then it would sit in argv. */
	if (pin && !ENGINE_ctrl_cmd_string(e, "PIN", pin, 0)) {
		err = ims_openssl_err(log, -EINVAL, "the pkcs11 engine refused the PIN");
		goto out;
	}
	pkey = ENGINE_load_private_key(e, opts->key, NULL, NULL);
	if (!pkey) {
		err = ims_openssl_err(log, -ENOKEY, "%s: no private key there, or a wrong PIN",
				      opts->key);
		goto out;
	}
	*pkey_ret = pkey;
	*engine_ret = e;
	e = NULL;
out:
	ims_pass_free(pin);
	ims_pkcs11_release(e);
	ERR_clear_error();
	return err;
}

void ims_pkcs11_release(void *engine)
{
	if (engine)
		ENGINE_finish(engine);
}
