/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The inside of struct attest_policy, shared by its builder, its reader and its judge. */
#ifndef IMASTREAM_ATTEST_POLICY_PRIVATE_H
#define IMASTREAM_ATTEST_POLICY_PRIVATE_H

#include <regex.h>

#include <json-c/json.h>

#include "attest/attest.h"

/* The runtime policy format keylime 7 reads (keylime/ima/ima.py, RUNTIME_POLICY_SCHEMA). */
#define KEYLIME_POLICY_VERSION 1

/*
 * meta.generator, keylime's RUNTIME_POLICY_GENERATOR: 0 unknown, 1 an empty allowlist,
 * 2 converted from an older policy, 3 made by a generator (keylime's own writes 3).  With
 * 1 or less the agent's status reports no runtime policy and the push-mode verifier
 * (verification/tpm_engine.py, expects_ima_log) asks for no IMA log at all.
 */
#define KEYLIME_GENERATOR_MAX 3
#define KEYLIME_GENERATOR_LEGACY_ALLOWLIST 3
#define KEYLIME_GENERATOR_EMPTY_ALLOWLIST 1

struct exclude {
	char *text;
	regex_t re;
};

/*
 * The digests a policy is built from, kept flat so that adding one allocates nothing
 * most of the time: records of [digest length][digest][path NUL] in one buffer,
 * sorted and deduplicated only when written.
 */
struct built_digests {
	uint8_t *arena;
	size_t len, cap;
	size_t *at;                 /* each record's offset, in the order added */
	size_t n, n_cap;
};

struct attest_policy {
	json_object *digests;       /* path → [hex, ...], as read (never built) */
	struct built_digests built; /* as built (never read) */
	json_object *keyrings;      /* keyring name → [hex, ...] (read, never built) */
	json_object *ima_buf;       /* buffer name → [hex, ...] (read, never built) */
	json_object *ignored_keyrings;
	char log_hash_alg[16];
	int generator;              /* meta.generator, as read or written */
	struct exclude *excludes;
	size_t nexcludes;
	struct imastream_trust *trust;
	json_object *keyids, *pubkeys; /* the verification keys, as keylime lists them */
};

/* A message on @log, an error unless @err is 0 (a warning); returns @err. */
int attest_say(const struct imastream_log *log, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* IMASTREAM_ATTEST_POLICY_PRIVATE_H */
