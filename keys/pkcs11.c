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
#include <openssl/ui.h>

#include "keys/keys-private.h"

/*
 * The RFC 7512 query attribute "module-path" names the PKCS#11 module; without it the
 * engine uses its default (p11-kit-proxy on Debian, which loads every registered
 * module).  libp11 0.4 rejects URIs with a query, so the query is taken off here and
 * @path_ret gets the URI part.  Other query attributes (pin-value would put the PIN in
 * argv) and percent-encoded paths are refused rather than half-handled.
 */
static int split_uri(const char *uri, const struct imastream_log *log, char *path_ret,
		     char *module_ret, size_t cap)
{
	const char *q = strchr(uri, '?'), *p;
	size_t n = q ? (size_t)(q - uri) : strlen(uri);

	module_ret[0] = 0;
	if (n >= cap)
		return ims_err(log, -EINVAL, "pkcs11 URI too long");
	memcpy(path_ret, uri, n);
	path_ret[n] = 0;
	if (!q)
		return 0;
	for (p = q + 1; *p; p += *p == '&') {
		n = strcspn(p, "&");
		if (strncmp(p, "module-path=", 12) || n == 12 || n - 12 >= cap ||
		    memchr(p, '%', n))
			return ims_err(log, -EINVAL,
				       "%s: of the URI query only module-path=PATH is supported", uri);
		memcpy(module_ret, p + 12, n - 12);
		module_ret[n - 12] = 0;
		p += n;
	}
	return 0;
}

/* Loads the engine by id; OpenSSL finds pkcs11.so in its engines directory. */
static int engine_open(const char *module, const struct imastream_log *log, ENGINE **engine_ret)
{
	ENGINE *e;

	e = ENGINE_by_id("pkcs11");
	if (!e)
		return ims_openssl_err(log, -EOPNOTSUPP,
				       "pkcs11: URIs need the OpenSSL pkcs11 engine (Debian package libengine-pkcs11-openssl)");
	if (module[0] && !ENGINE_ctrl_cmd_string(e, "MODULE_PATH", module, 0)) {
		ENGINE_free(e);
		return ims_openssl_err(log, -EINVAL, "the pkcs11 engine refused module %s", module);
	}
	if (!ENGINE_init(e)) {
		ENGINE_free(e);
		return ims_openssl_err(log, -EOPNOTSUPP, "the OpenSSL pkcs11 engine failed to start");
	}
	/* ENGINE_init took a functional reference; drop the structural one. */
	ENGINE_free(e);
	*engine_ret = e;
	return 0;
}

/* Answers the engine's PIN prompt from the passphrase source; never asks a terminal. */
static int pin_cb(char *buf, int size, int rwflag, void *arg)
{
	const char *pin = arg;
	size_t n;

	(void)rwflag;
	if (!pin || (n = strlen(pin)) > (size_t)size)
		return -1;
	memcpy(buf, pin, n);
	return (int)n;
}

int ims_source_pkcs11(const struct imastream_key_opts *opts, const struct imastream_log *log,
		      EVP_PKEY **pkey_ret, void **engine_ret)
{
	char path[4096], module[4096];
	UI_METHOD *ui = NULL;
	ENGINE *e = NULL;
	EVP_PKEY *pkey;
	char *pin = NULL;
	int err;

	err = split_uri(opts->key, log, path, module, sizeof(path));
	if (err)
		goto out;
	err = ims_pass_get(opts, log, &pin);
	if (err)
		goto out;
	ui = UI_UTIL_wrap_read_pem_callback(pin_cb, 0);
	if (!ui) {
		err = -ENOMEM;
		goto out;
	}
	err = engine_open(module, log, &e);
	if (err)
		goto out;
	/* The PIN also works inside the URI (pin-value=), but then it would sit in argv. */
	if (pin && !ENGINE_ctrl_cmd_string(e, "PIN", pin, 0)) {
		err = ims_openssl_err(log, -EINVAL, "the pkcs11 engine refused the PIN");
		goto out;
	}
	pkey = ENGINE_load_private_key(e, path, ui, pin);
	if (!pkey) {
		/* libp11 does not tell the two apart in its error codes (it prints to stderr). */
		err = ims_openssl_err(log, -ENOKEY, "%s: cannot load the private key: %s", opts->key,
				      pin ? "wrong PIN, or no such key on the token"
					  : "no PIN given (a file or an environment variable), or no such key");
		goto out;
	}
	/* Handed over; make_temp() in signpkg/sign.c ends in this shape, with nothing to share. */
	*pkey_ret = pkey;
	*engine_ret = e;
	e = NULL;
out:
	ims_pass_free(pin);
	UI_destroy_method(ui);
	ims_pkcs11_release(e);
	ERR_clear_error();
	return err;
}

void ims_pkcs11_release(void *engine)
{
	if (engine)
		ENGINE_finish(engine);
}
