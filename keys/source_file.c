// SPDX-License-Identifier: LGPL-2.1-or-later
/* Signer backend for a private key file: read once, parsed, and the bytes zeroed. */
#include <errno.h>

#include "keys/keys-private.h"

int ims_source_file(const struct imastream_key_opts *opts, const struct imastream_log *log,
		    EVP_PKEY **pkey_ret, X509 **cert_ret)
{
	uint8_t *buf = NULL;
	char *pass = NULL;
	size_t len = 0;
	int err;

	err = ims_read_secret_file(opts->key, "private key", log, &buf, &len);
	if (err)
		goto out;
	err = ims_pass_get(opts, log, &pass);
	if (err)
		goto out;
	err = ims_load_privkey_mem(buf, len, pass, opts->key, log, pkey_ret, cert_ret);
out:
	ims_pass_free(pass);
	ims_secret_free(buf, len);
	return err;
}
