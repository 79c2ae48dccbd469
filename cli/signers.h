/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The key of a command that signs from several threads: loaded once, one handle per thread. */
#ifndef IMASTREAM_CLI_SIGNERS_H
#define IMASTREAM_CLI_SIGNERS_H

#include <pthread.h>
#include <stdbool.h>

#include "cli/options.h"
#include "imastream/keys.h"
#include "imastream/signpkg.h"

struct cli_signers;

/* The key's options of the commands that sign from several threads (sign-package,
 * sign-digests), a group each lists in place (CLI_OPT_GROUP). */
extern const struct cli_use cli_signers_options[];

/* What thread @i hands signpkg: its own handle, or the shared one in turn. */
struct cli_signer_slot {
	struct cli_signers *pool;
	unsigned int i;
};

struct cli_signers {
	struct imastream_signer *handle[CLI_MAX_JOBS];
	struct imastream_signpkg_signer ps[CLI_MAX_JOBS]; /* one per thread */
	struct cli_signer_slot slot[CLI_MAX_JOBS];
	/* A key that cannot be shared between threads (a pkcs11 engine key): handle[0] for
	 * every thread, one at a time, while the rest of their work still runs in parallel. */
	bool shared;
	bool lock_ready;
	pthread_mutex_t lock;
};

/*
 * Loads @key once (a bad key fails here, in the library's one line) and gives each of
 * @jobs threads its signer, ps[i].  Free with cli_signers_free(), also after a failure.
 * Return: 0 or the library's error.
 */
int cli_signers_load(struct cli_signers *s, const struct imastream_key_opts *key,
		     unsigned int jobs);
/* Frees every handle; a zeroed struct (nothing loaded) is fine. */
void cli_signers_free(struct cli_signers *s);

#endif /* IMASTREAM_CLI_SIGNERS_H */
