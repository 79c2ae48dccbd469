// SPDX-License-Identifier: LGPL-2.1-or-later
/* --base: another keylime runtime policy merged into the one being built, as keylime's generator merges its base policy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "attest/policy-private.h"

static bool has_string(json_object *list, const char *s)
{
	for (size_t i = 0; i < json_object_array_length(list); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(list, i)), s))
			return true;
	return false;
}

/* Each of @from's names gets its values in @into, each value once. */
static int merge_map(json_object *into, json_object *from)
{
	json_object_object_foreach(from, name, values)
	{
		json_object *list;

		if (!json_object_object_get_ex(into, name, &list)) {
			list = json_object_new_array();
			if (!list || json_object_object_add(into, name, list))
				return -ENOMEM;
		}
		for (size_t i = 0; i < json_object_array_length(values); i++) {
			json_object *v = json_object_array_get_idx(values, i);

			if (!has_string(list, json_object_get_string(v)) &&
			    json_object_array_add(list, json_object_get(v)))
				return -ENOMEM;
		}
	}
	return 0;
}

/* keylime's generator refuses a base whose digests are in another algorithm than its own. */
static int check_digest_lengths(const struct attest_policy *base, size_t hex_len,
				const char *algo_name, const char *what,
				const struct imastream_log *log)
{
	json_object_object_foreach(base->digests, path, list)
	{
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			size_t len = strlen(
				json_object_get_string(json_object_array_get_idx(list, i)));

			if (len != hex_len)
				return attest_say(
					log, -EINVAL,
					"%s: %s has a digest of %zu hex digits, not %s's %zu: "
					"give -a with the base policy's algorithm",
					what, path, len, algo_name, hex_len);
		}
	}
	return 0;
}

static int merge_keys(struct attest_policy *p, const struct attest_policy *base)
{
	for (size_t i = 0; i < json_object_array_length(base->pubkeys); i++) {
		const char *b64 = json_object_get_string(
			json_object_array_get_idx(base->pubkeys, i));
		uint32_t keyid = (uint32_t)json_object_get_int64(
			json_object_array_get_idx(base->keyids, i));
		size_t len = strlen(b64);
		uint8_t *der;
		int dlen, err;

		if (has_string(p->pubkeys, b64))
			continue;
		der = malloc(len / 4 * 3 + 3);
		if (!der)
			return -ENOMEM;
		/* The reader checked it is base64 of a public key. */
		dlen = EVP_DecodeBlock(der, (const unsigned char *)b64, (int)len);
		dlen -= (len >= 1 && b64[len - 1] == '=') + (len >= 2 && b64[len - 2] == '=');
		err = attest_policy_add_key(p, der, (size_t)dlen, keyid);
		free(der);
		if (err)
			return err;
	}
	return 0;
}

int attest_policy_merge(struct attest_policy *p, const struct attest_policy *base,
			bool log_hash_alg_given, int hash_algo, const char *what,
			const struct imastream_log *log)
{
	const struct imastream_hash_info *info = imastream_hash_by_algo(hash_algo);
	int err = check_digest_lengths(base, 2 * info->digest_size, info->name, what, log);

	if (err)
		return err;
	if (log_hash_alg_given && strcmp(p->log_hash_alg, base->log_hash_alg))
		return attest_say(log, -EINVAL, "%s: ima.log_hash_alg is %s, not the %s given",
				  what, base->log_hash_alg, p->log_hash_alg);
	snprintf(p->log_hash_alg, sizeof(p->log_hash_alg), "%s", base->log_hash_alg);
	err = merge_map(p->digests, base->digests);
	err = err ?: merge_map(p->keyrings, base->keyrings);
	err = err ?: merge_map(p->ima_buf, base->ima_buf);
	for (size_t i = 0; !err && i < json_object_array_length(base->ignored_keyrings); i++) {
		json_object *k = json_object_array_get_idx(base->ignored_keyrings, i);

		if (!has_string(p->ignored_keyrings, json_object_get_string(k)) &&
		    json_object_array_add(p->ignored_keyrings, json_object_get(k)))
			err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < base->nexcludes; i++) {
		const char *why;
		bool dup = false;

		for (size_t k = 0; k < p->nexcludes && !dup; k++)
			dup = !strcmp(p->excludes[k].text, base->excludes[i].text);
		if (!dup)
			err = attest_policy_add_exclude(p, base->excludes[i].text, &why);
	}
	err = err ?: merge_keys(p, base);
	if (err == -ENOMEM)
		attest_say(log, err, "out of memory");
	return err;
}
