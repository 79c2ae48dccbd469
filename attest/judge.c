// SPDX-License-Identifier: LGPL-2.1-or-later
/* Judges one IMA measurement against a keylime runtime policy by keylime's own rules. */
#include <string.h>

#include "attest/policy-private.h"
#include "imastream/keys.h"

/* IMA signature header (type 3, version 2): type, version, hash algo, key id, size. */
#define DIGSIG_HDR 9

static bool excluded(const struct attest_policy *p, const char *path)
{
	for (size_t i = 0; i < p->nexcludes; i++)
		if (!regexec(&p->excludes[i].re, path, 0, NULL, 0))
			return true;
	return false;
}

static bool listed(json_object *map, const char *name, const char *hex, bool *known)
{
	json_object *list;

	if (!json_object_object_get_ex(map, name, &list))
		return false;
	*known = true;
	for (size_t i = 0; i < json_object_array_length(list); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(list, i)), hex))
			return true;
	return false;
}

/* ima-sig: does a verification key verify the signature over the logged digest? */
static bool signature_verifies(const struct attest_policy *p, const struct attest_entry *e)
{
	const uint8_t *s = e->sig;
	uint32_t keyid;

	if (e->sig_len <= DIGSIG_HDR || s[0] != 3 || s[1] != 2 || s[2] != e->hash_algo)
		return false;
	if ((size_t)(s[7] << 8 | s[8]) != e->sig_len - DIGSIG_HDR)
		return false;
	keyid = (uint32_t)s[3] << 24 | (uint32_t)s[4] << 16 | (uint32_t)s[5] << 8 | s[6];
	return !imastream_trust_verify(p->trust, e->hash_algo, e->digest, e->digest_len,
				       s + DIGSIG_HDR, e->sig_len - DIGSIG_HDR, keyid);
}

static bool keyring_ignored(const struct attest_policy *p, const char *name)
{
	for (size_t i = 0; i < json_object_array_length(p->ignored_keyrings); i++) {
		const char *k = json_object_get_string(json_object_array_get_idx(p->ignored_keyrings, i));

		if (!strcmp(k, "*") || !strcmp(k, name))
			return true;
	}
	return false;
}

enum attest_verdict attest_judge(const struct attest_policy *p, const struct attest_entry *e,
				 const char **why)
{
	char hex[2 * IMASTREAM_HASH_MAX_DIGEST + 1];
	bool known = false;

	for (size_t i = 0; i < e->digest_len; i++) {
		static const char digits[] = "0123456789abcdef";

		hex[2 * i] = digits[e->digest[i] >> 4];
		hex[2 * i + 1] = digits[e->digest[i] & 15];
	}
	hex[2 * e->digest_len] = '\0';
	*why = NULL;
	if (!strcmp(e->template, "ima-buf")) {
		if (keyring_ignored(p, e->name)) {
			*why = "an ignored keyring";
			return ATTEST_IGNORED;
		}
		if (listed(p->keyrings, e->name, hex, &known) || listed(p->ima_buf, e->name, hex, &known))
			return ATTEST_MATCH;
		*why = known ? "buffer digest not in the policy" : "buffer not in the policy";
		return known ? ATTEST_DIGEST_MISMATCH : ATTEST_NOT_IN_POLICY;
	}
	if (excluded(p, e->name)) {
		*why = "excluded";
		return ATTEST_EXCLUDED;
	}
	if (e->sig_len && signature_verifies(p, e))
		return ATTEST_SIGNED;
	if (listed(p->digests, e->name, hex, &known))
		return ATTEST_MATCH;
	/* The verifier computes boot_aggregate from the TPM's quote; a policy seldom lists it. */
	if (!known && !strcmp(e->name, "boot_aggregate")) {
		*why = "boot_aggregate: the verifier checks it against the TPM quote";
		return ATTEST_IGNORED;
	}
	if (!known) {
		*why = "not in the policy";
		return ATTEST_NOT_IN_POLICY;
	}
	*why = e->sig_len ? "signature not verified by any verification key, and digest not in the policy" :
			    "digest not in the policy";
	return ATTEST_DIGEST_MISMATCH;
}
