// SPDX-License-Identifier: LGPL-2.1-or-later
/* The key of sign-package -j and sign-digests -j: loaded once, a handle per thread or one in turn. */
#include <errno.h>

#include "cli/cli.h"
#include "cli/signers.h"

const struct cli_use cli_signers_options[] = {
	{ CLI_OPT_KEY },
	{ CLI_OPT_CERT, "its certificate: the key id is the last four bytes of\n"
			"its subject key identifier (the kernel's rule)" },
	{ CLI_OPT_PASS },
	{ CLI_OPT_PASS_FILE },
	{ CLI_OPT_PASS_ENV },
	{ CLI_OPT_KEYID },
	{ 0 },
};

static int slot_sign(void *arg, int algo, const uint8_t *digest, size_t digest_len, uint8_t *sig,
		     size_t sig_size, size_t *sig_len_ret)
{
	struct cli_signer_slot *slot = arg;
	struct cli_signers *s = slot->pool;
	int err;

	if (!s->shared)
		return imastream_signer_sign(s->handle[slot->i], algo, digest, digest_len, sig,
					     sig_size, sig_len_ret);
	pthread_mutex_lock(&s->lock);
	err = imastream_signer_sign(s->handle[0], algo, digest, digest_len, sig, sig_size,
				    sig_len_ret);
	pthread_mutex_unlock(&s->lock);
	return err;
}

int cli_signers_load(struct cli_signers *s, const struct imastream_key_opts *key,
		     unsigned int jobs)
{
	int err;

	err = imastream_signer_new(key, &cli_log, &s->handle[0]);
	if (err)
		return err; /* the library said why, in one line */
	pthread_mutex_init(&s->lock, NULL);
	s->lock_ready = true;
	for (unsigned int i = 0; i < jobs && i < CLI_MAX_JOBS; i++) {
		if (i && !s->shared) {
			err = imastream_signer_dup(s->handle[0], &s->handle[i]);
			if (err == -EOPNOTSUPP)
				s->shared = true;
			else if (err)
				return err;
		}
		s->slot[i] = (struct cli_signer_slot){ s, i };
		s->ps[i] = (struct imastream_signpkg_signer){
			.size = sizeof(s->ps[i]),
			.sign = slot_sign,
			.arg = &s->slot[i],
			.keyid = imastream_signer_keyid(s->handle[0]),
		};
	}
	return 0;
}

void cli_signers_free(struct cli_signers *s)
{
	for (unsigned int i = 0; i < CLI_MAX_JOBS; i++) {
		imastream_signer_free(s->handle[i]);
		s->handle[i] = NULL;
	}
	if (s->lock_ready)
		pthread_mutex_destroy(&s->lock);
	s->lock_ready = false;
}
