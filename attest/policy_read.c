// SPDX-License-Identifier: LGPL-2.1-or-later
/* Reads a keylime runtime policy, checking the fields and types keylime's schema requires. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "attest/policy-private.h"
#include "imastream/keys.h"

/* Verification keys of one keyring: {"keyids": [N, ...], "pubkeys": ["BASE64-DER", ...]}. */
static int read_keyring(struct attest_policy *p, json_object *ring, const char *what,
			const struct imastream_log *log)
{
	json_object *ids = NULL, *keys;
	size_t n;

	if (!json_object_is_type(ring, json_type_object) ||
	    !json_object_object_get_ex(ring, "pubkeys", &keys) ||
	    !json_object_is_type(keys, json_type_array))
		return attest_say(log, -EINVAL, "%s: verification-keys: no pubkeys list", what);
	if (json_object_object_get_ex(ring, "keyids", &ids) && !json_object_is_type(ids, json_type_array))
		return attest_say(log, -EINVAL, "%s: verification-keys: keyids is not a list", what);
	n = json_object_array_length(keys);
	for (size_t i = 0; i < n; i++) {
		const char *b64 = json_object_get_string(json_object_array_get_idx(keys, i));
		json_object *id = ids ? json_object_array_get_idx(ids, i) : NULL;
		size_t len = b64 ? strlen(b64) : 0;
		uint8_t *der = malloc(len / 4 * 3 + 3);
		int dlen, err;
		uint32_t keyid;

		if (!der)
			return -ENOMEM;
		dlen = b64 && len % 4 == 0 ? EVP_DecodeBlock(der, (const unsigned char *)b64, (int)len) : -1;
		if (dlen <= 0) {
			free(der);
			return attest_say(log, -EINVAL, "%s: verification-keys: key %zu is not base64", what, i + 1);
		}
		/* EVP_DecodeBlock counts the padding as zero bytes; DER knows its own length. */
		dlen -= (len >= 1 && b64[len - 1] == '=') + (len >= 2 && b64[len - 2] == '=');
		keyid = id ? (uint32_t)json_object_get_int64(id) : 0;
		err = imastream_trust_add_pubkey(p->trust, der, (size_t)dlen, id ? &keyid : NULL);
		free(der);
		if (err)
			return attest_say(log, err, "%s: verification-keys: key %zu is not a public key", what, i + 1);
	}
	return 0;
}

/* keylime writes one keyring's JSON as a string; older policies a map of name → that string. */
static int read_keys(struct attest_policy *p, const char *text, const char *what,
		     const struct imastream_log *log)
{
	json_object *doc;
	int err = 0;

	if (!*text)
		return 0;
	doc = json_tokener_parse(text);
	if (!doc || !json_object_is_type(doc, json_type_object)) {
		json_object_put(doc);
		return attest_say(log, -EINVAL, "%s: verification-keys is not a JSON object", what);
	}
	if (json_object_object_get_ex(doc, "pubkeys", NULL)) {
		err = read_keyring(p, doc, what, log);
	} else {
		json_object_object_foreach(doc, name, val) {
			json_object *ring = json_tokener_parse(json_object_get_string(val));

			(void)name;
			err = read_keyring(p, ring, what, log);
			json_object_put(ring);
			if (err)
				break;
		}
	}
	json_object_put(doc);
	return err;
}

/* Every value of @map is a list of strings, as digests, keyrings and ima-buf are. */
static bool is_map_of_lists(json_object *map)
{
	if (!json_object_is_type(map, json_type_object))
		return false;
	json_object_object_foreach(map, key, list) {
		(void)key;
		if (!json_object_is_type(list, json_type_array))
			return false;
		for (size_t i = 0; i < json_object_array_length(list); i++)
			if (!json_object_is_type(json_object_array_get_idx(list, i), json_type_string))
				return false;
	}
	return true;
}

/* keylime's schema: a digest is 40 to 128 lowercase hex digits. */
static const char *bad_digest(json_object *digests, const char **path)
{
	json_object_object_foreach(digests, key, list) {
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			const char *hex = json_object_get_string(json_object_array_get_idx(list, i));
			size_t len = strspn(hex, "0123456789abcdef");

			if (hex[len] || len < 40 || len > 128) {
				*path = key;
				return hex;
			}
		}
	}
	return NULL;
}

static bool is_list_of_strings(json_object *list)
{
	if (!json_object_is_type(list, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(list); i++)
		if (!json_object_is_type(json_object_array_get_idx(list, i), json_type_string))
			return false;
	return true;
}

/* Takes a reference on @doc's member @key into *@slot after the type check. */
static int take_map(json_object *doc, const char *key, json_object **slot, const char *what,
		    const struct imastream_log *log)
{
	json_object *v;

	if (!json_object_object_get_ex(doc, key, &v) || !is_map_of_lists(v))
		return attest_say(log, -EINVAL, "%s: \"%s\" is missing or not a map of string lists",
				  what, key);
	json_object_put(*slot);
	*slot = json_object_get(v);
	return 0;
}

static int read_doc(struct attest_policy *p, json_object *doc, const char *what,
		    const struct imastream_log *log)
{
	json_object *meta, *v, *ima, *excl;
	const char *why, *path;
	int err;

	if (!json_object_is_type(doc, json_type_object))
		return attest_say(log, -EINVAL, "%s: not a JSON object", what);
	if (!json_object_object_get_ex(doc, "meta", &meta) ||
	    !json_object_object_get_ex(meta, "version", &v) || !json_object_is_type(v, json_type_int))
		return attest_say(log, -EINVAL, "%s: no meta.version: not a keylime runtime policy", what);
	if (json_object_get_int(v) != KEYLIME_POLICY_VERSION)
		return attest_say(log, -EINVAL, "%s: meta.version %d: this check reads version %d",
				  what, json_object_get_int(v), KEYLIME_POLICY_VERSION);
	err = take_map(doc, "digests", &p->digests, what, log);
	err = err ? err : take_map(doc, "keyrings", &p->keyrings, what, log);
	err = err ? err : take_map(doc, "ima-buf", &p->ima_buf, what, log);
	if (err)
		return err;
	if ((why = bad_digest(p->digests, &path)))
		return attest_say(log, -EINVAL, "%s: digests of %s: \"%s\" is not 40 to 128 lowercase hex digits",
				  what, path, why);
	if (!json_object_object_get_ex(doc, "excludes", &excl) || !is_list_of_strings(excl))
		return attest_say(log, -EINVAL, "%s: \"excludes\" is missing or not a list of strings", what);
	for (size_t i = 0; i < json_object_array_length(excl); i++) {
		const char *re = json_object_get_string(json_object_array_get_idx(excl, i));

		err = attest_policy_add_exclude(p, re, &why);
		if (err == -EINVAL)
			return attest_say(log, err, "%s: exclude \"%s\": %s", what, re, why);
		if (err)
			return err;
	}
	if (!json_object_object_get_ex(doc, "ima", &ima) ||
	    !json_object_object_get_ex(ima, "log_hash_alg", &v) ||
	    !json_object_is_type(v, json_type_string))
		return attest_say(log, -EINVAL, "%s: no ima.log_hash_alg", what);
	snprintf(p->log_hash_alg, sizeof(p->log_hash_alg), "%s", json_object_get_string(v));
	if (!json_object_object_get_ex(ima, "ignored_keyrings", &v) || !is_list_of_strings(v))
		return attest_say(log, -EINVAL, "%s: ima.ignored_keyrings is missing or not a list", what);
	json_object_put(p->ignored_keyrings);
	p->ignored_keyrings = json_object_get(v);
	if (!json_object_object_get_ex(doc, "verification-keys", &v) ||
	    !json_object_is_type(v, json_type_string))
		return attest_say(log, -EINVAL, "%s: \"verification-keys\" is missing or not a string", what);
	return read_keys(p, json_object_get_string(v), what, log);
}

int attest_policy_read(const char *buf, size_t len, const char *what,
		       const struct imastream_log *log, struct attest_policy **ret)
{
	struct json_tokener *tok = json_tokener_new();
	struct attest_policy *p = NULL;
	json_object *doc = NULL;
	int err;

	if (!tok)
		return -ENOMEM;
	if (len > INT32_MAX) {
		err = attest_say(log, -EFBIG, "%s: larger than 2 GiB", what);
		goto out;
	}
	doc = json_tokener_parse_ex(tok, buf, (int)len);
	if (!doc || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		/* Trailing blanks are fine; anything else after the document is not. */
		size_t at = json_tokener_get_parse_end(tok);

		while (doc && at < len && strchr(" \t\r\n", buf[at]))
			at++;
		if (!doc || at != len) {
			err = attest_say(log, -EINVAL, "%s: not JSON (%s, at byte %zu)", what,
					 doc ? "data after the document" :
					 json_tokener_error_desc(json_tokener_get_error(tok)),
					 json_tokener_get_parse_end(tok));
			goto out;
		}
	}
	err = attest_policy_new(NULL, &p);
	if (!err)
		err = read_doc(p, doc, what, log);
	if (!err) {
		*ret = p;
		p = NULL;
	}
out:
	attest_policy_free(p);
	json_object_put(doc);
	json_tokener_free(tok);
	return err;
}
