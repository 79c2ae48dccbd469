// SPDX-License-Identifier: LGPL-2.1-or-later
/* The passphrase or PIN of a key: from a private file or a named environment variable. */
/* Not cli/pass.c, which asks on the terminal for -p. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "keys/keys-private.h"

/* Copies the first line of @src (at most @len bytes) into a new string. */
static char *first_line(const char *src, size_t len)
{
	size_t n = 0;
	char *p;

	while (n < len && src[n] != '\n' && src[n] != '\r' && src[n] != '\0')
		n++;
	p = malloc(n + 1);
	if (!p)
		return NULL;
	memcpy(p, src, n);
	p[n] = 0;
	return p;
}

int ims_pass_get(const struct imastream_key_opts *opts, const struct imastream_log *log,
		 char **pass_ret)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	char *pass = NULL;
	int err = 0;

	if (opts->pass_file && opts->pass_env)
		return ims_err(log, -EINVAL, "give the passphrase from a file or from the environment, not both");
	if (opts->pass_env) {
		const char *v = getenv(opts->pass_env);

		if (!v)
			return ims_err(log, -EINVAL, "passphrase variable %s is not set", opts->pass_env);
		pass = first_line(v, strlen(v));
	} else if (opts->pass_file) {
		/* The passphrase file is as secret as the key: same permission rule. */
		err = ims_read_secret_file(opts->pass_file, "passphrase file", log, &buf, &len);
		if (err)
			goto out;
		pass = first_line((const char *)buf, len);
	} else {
		*pass_ret = NULL;
		goto out;
	}
	if (!pass) {
		err = -ENOMEM;
		goto out;
	}
	*pass_ret = pass;
out:
	ims_secret_free(buf, len);
	return err;
}

void ims_pass_free(char *pass)
{
	if (pass)
		ims_secret_free(pass, strlen(pass));
}
