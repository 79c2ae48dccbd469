// SPDX-License-Identifier: LGPL-2.1-or-later
/* Reads a keylime runtime policy, checking the fields and types keylime's schema requires. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "attest/policy-private.h"
#include "imastream/keys.h"

/*
 * A JSON "integer" as keylime's schema checks it (JSON Schema draft 2020-12, which
 * Python's jsonschema applies): a number without a fractional part; true is none.
 */
static bool get_integer(json_object *v, int64_t *out)
{
	double d;

	if (json_object_is_type(v, json_type_int)) {
		*out = json_object_get_int64(v);
		return true;
	}
	if (!json_object_is_type(v, json_type_double))
		return false;
	d = json_object_get_double(v);
	if (d != d || d < -9.2e18 || d > 9.2e18 || d != (double)(int64_t)d)
		return false;
	*out = (int64_t)d;
	return true;
}

static bool is_list_of(json_object *list, json_type type)
{
	int64_t n;

	if (!json_object_is_type(list, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		json_object *item = json_object_array_get_idx(list, i);

		if (type == json_type_int ? !get_integer(item, &n) : !json_object_is_type(item, type))
			return false;
	}
	return true;
}

/* Parses all of @text as one JSON value; NULL if it is not JSON or has data after it. */
static json_object *parse_whole(const char *text, size_t len, size_t *bad_at, const char **why)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *doc;
	size_t at;

	*why = "out of memory";
	*bad_at = 0;
	if (!tok)
		return NULL;
	doc = json_tokener_parse_ex(tok, text, (int)len);
	at = json_tokener_get_parse_end(tok);
	if (!doc) {
		*why = json_tokener_error_desc(json_tokener_get_error(tok));
		/* A document cut short has no error of its own: json-c waits for more. */
		if (json_tokener_get_error(tok) == json_tokener_continue)
			*why = "unexpected end of data";
	}
	/* Trailing blanks are fine; anything else after the document is not. */
	while (doc && at < len && strchr(" \t\r\n", text[at]))
		at++;
	if (doc && at != len) {
		*why = "data after the document";
		json_object_put(doc);
		doc = NULL;
	}
	if (!doc)
		*bad_at = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	return doc;
}

/*
 * verification-keys, keylime's IMA_KEYRING_JSON_SCHEMA (keylime/ima/file_signatures.py):
 * {"meta": {"version": N >= 1}, "keyids": [N, ...], "pubkeys": ["BASE64-DER", ...]},
 * "meta" optional; the i-th key id belongs to the i-th key.
 */
static int read_keys(struct attest_policy *p, const char *text, const char *what,
		     const struct imastream_log *log)
{
	json_object *ring, *meta, *ids = NULL, *keys = NULL, *v;
	const char *why;
	size_t n, at;
	int64_t version;
	int err = 0;

	if (!*text)
		return 0;
	ring = parse_whole(text, strlen(text), &at, &why);
	if (!ring || !json_object_is_type(ring, json_type_object)) {
		json_object_put(ring);
		return attest_say(log, -EINVAL, "%s: verification-keys is not a JSON object", what);
	}
	if (!json_object_object_get_ex(ring, "pubkeys", &keys) || !is_list_of(keys, json_type_string) ||
	    !json_object_object_get_ex(ring, "keyids", &ids) || !is_list_of(ids, json_type_int)) {
		err = attest_say(log, -EINVAL, "%s: verification-keys: \"keyids\" (integers) and "
				 "\"pubkeys\" (strings) are required lists", what);
		goto out;
	}
	if (json_object_object_get_ex(ring, "meta", &meta) &&
	    (!json_object_is_type(meta, json_type_object) ||
	     !json_object_object_get_ex(meta, "version", &v) || !get_integer(v, &version) || version < 1)) {
		err = attest_say(log, -EINVAL, "%s: verification-keys: meta.version is not an integer of 1 or more",
				 what);
		goto out;
	}
	n = json_object_array_length(keys);
	for (size_t i = 0; i < n && !err; i++) {
		const char *b64 = json_object_get_string(json_object_array_get_idx(keys, i));
		json_object *id = json_object_array_get_idx(ids, i);
		size_t len = strlen(b64);
		uint8_t *der = malloc(len / 4 * 3 + 3);
		int64_t id64 = 0;
		uint32_t keyid;
		int dlen;

		if (!der) {
			err = -ENOMEM;
			break;
		}
		dlen = len % 4 == 0 ? EVP_DecodeBlock(der, (const unsigned char *)b64, (int)len) : -1;
		if (dlen <= 0) {
			free(der);
			err = attest_say(log, -EINVAL, "%s: verification-keys: key %zu is not base64", what, i + 1);
			break;
		}
		/* EVP_DecodeBlock counts the padding as zero bytes; DER knows its own length. */
		dlen -= (len >= 1 && b64[len - 1] == '=') + (len >= 2 && b64[len - 2] == '=');
		if (id)
			get_integer(id, &id64);
		keyid = (uint32_t)id64;
		err = imastream_trust_add_pubkey(p->trust, der, (size_t)dlen, id ? &keyid : NULL);
		free(der);
		if (err)
			err = attest_say(log, err, "%s: verification-keys: key %zu is not a public key", what, i + 1);
		/* Kept as listed, for a policy that takes this one as its base (--base). */
		else if (id && (json_object_array_add(
					p->pubkeys,
					json_object_get(json_object_array_get_idx(keys, i))) ||
				json_object_array_add(p->keyids, json_object_new_int64(keyid))))
			err = -ENOMEM;
	}
out:
	json_object_put(ring);
	return err;
}

/* keylime's digest pattern, ^[0-9a-f]{40,128}$. */
static bool is_digest_hex(const char *hex)
{
	size_t len = strspn(hex, "0123456789abcdef");

	return !hex[len] && len >= 40 && len <= 128;
}

/*
 * digests, keyrings and ima-buf: each name maps to a list of at least one digest
 * (keylime's "digests-object").  Takes a reference on the member into *@slot.
 */
static int take_digests(json_object *doc, const char *key, json_object **slot, const char *what,
			const struct imastream_log *log)
{
	json_object *map;

	if (!json_object_object_get_ex(doc, key, &map) || !json_object_is_type(map, json_type_object))
		return attest_say(log, -EINVAL, "%s: \"%s\" is missing or not an object", what, key);
	json_object_object_foreach(map, name, list) {
		if (!json_object_is_type(list, json_type_array) || !json_object_array_length(list))
			return attest_say(log, -EINVAL, "%s: %s of %s: not a list of at least one digest",
					  what, key, name);
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			json_object *item = json_object_array_get_idx(list, i);

			if (!json_object_is_type(item, json_type_string) ||
			    !is_digest_hex(json_object_get_string(item)))
				return attest_say(log, -EINVAL,
						  "%s: %s of %s: \"%s\" is not 40 to 128 lowercase hex digits",
						  what, key, name, json_object_get_string(item));
		}
	}
	json_object_put(*slot);
	*slot = json_object_get(map);
	return 0;
}

/* Names the first of @p's paths that holds a blank: the kernel never logs one. */
static void warn_blank_paths(const struct attest_policy *p, const char *what,
			     const struct imastream_log *log)
{
	const char *first = NULL;
	unsigned long n = 0;

	json_object_object_foreach(p->digests, name, list) {
		(void)list;
		if (strchr(name, ' ') && !n++)
			first = name;
	}
	if (n)
		attest_say(log, 0, "%s: %lu path(s) hold a blank, which the kernel logs as '_': "
			   "no measurement can match them (first: \"%s\")", what, n, first);
}

/* keylime's RUNTIME_POLICY_SCHEMA (keylime/ima/ima.py), field by field. */
static int read_meta(struct attest_policy *p, json_object *doc, const char *what,
		     const struct imastream_log *log)
{
	json_object *meta, *v;
	int64_t n;

	if (!json_object_object_get_ex(doc, "meta", &meta) || !json_object_is_type(meta, json_type_object) ||
	    !json_object_object_get_ex(meta, "version", &v) || !get_integer(v, &n) || n < 0)
		return attest_say(log, -EINVAL, "%s: no meta.version: not a keylime runtime policy", what);
	if (n != KEYLIME_POLICY_VERSION)
		return attest_say(log, -EINVAL, "%s: meta.version %lld: this check reads version %d",
				  what, (long long)n, KEYLIME_POLICY_VERSION);
	if (!json_object_object_get_ex(meta, "generator", &v) || !get_integer(v, &n) || n < 0 ||
	    n > KEYLIME_GENERATOR_MAX)
		return attest_say(log, -EINVAL, "%s: meta.generator is missing or not an integer from 0 to %d, "
				  "which keylime requires", what, KEYLIME_GENERATOR_MAX);
	p->generator = (int)n;
	if (json_object_object_get_ex(meta, "timestamp", &v) && !json_object_is_type(v, json_type_string))
		return attest_say(log, -EINVAL, "%s: meta.timestamp is not a string", what);
	if (!json_object_object_get_ex(doc, "release", &v) || !get_integer(v, &n) || n < 0)
		return attest_say(log, -EINVAL, "%s: \"release\" is missing or not an integer of 0 or more", what);
	return 0;
}

static int read_ima(struct attest_policy *p, json_object *doc, const char *what,
		    const struct imastream_log *log)
{
	json_object *ima, *v;
	const char *alg;

	if (!json_object_object_get_ex(doc, "ima", &ima) || !json_object_is_type(ima, json_type_object))
		return attest_say(log, -EINVAL, "%s: \"ima\" is missing or not an object", what);
	if (!json_object_object_get_ex(ima, "log_hash_alg", &v) || !json_object_is_type(v, json_type_string))
		return attest_say(log, -EINVAL, "%s: no ima.log_hash_alg", what);
	alg = json_object_get_string(v);
	if (!attest_log_hash_alg_known(alg))
		return attest_say(log, -EINVAL, "%s: ima.log_hash_alg \"%s\": keylime takes %s", what, alg,
				  ATTEST_LOG_HASH_ALGS);
	snprintf(p->log_hash_alg, sizeof(p->log_hash_alg), "%s", alg);
	if (!json_object_object_get_ex(ima, "ignored_keyrings", &v) || !is_list_of(v, json_type_string))
		return attest_say(log, -EINVAL, "%s: ima.ignored_keyrings is missing or not a list", what);
	json_object_put(p->ignored_keyrings);
	p->ignored_keyrings = json_object_get(v);
	/* keylime's schema has dm_policy null: its device-mapper rules are not read from a file. */
	if (!json_object_object_get_ex(ima, "dm_policy", &v) || v)
		return attest_say(log, -EINVAL, "%s: ima.dm_policy is missing or not null", what);
	return 0;
}

static int read_doc(struct attest_policy *p, json_object *doc, const char *what,
		    const struct imastream_log *log)
{
	json_object *v, *excl;
	const char *why;
	int err;

	if (!json_object_is_type(doc, json_type_object))
		return attest_say(log, -EINVAL, "%s: not a JSON object", what);
	err = read_meta(p, doc, what, log);
	err = err ? err : take_digests(doc, "digests", &p->digests, what, log);
	err = err ? err : take_digests(doc, "keyrings", &p->keyrings, what, log);
	err = err ? err : take_digests(doc, "ima-buf", &p->ima_buf, what, log);
	if (err)
		return err;
	if (!json_object_object_get_ex(doc, "excludes", &excl) || !is_list_of(excl, json_type_string))
		return attest_say(log, -EINVAL, "%s: \"excludes\" is missing or not a list of strings", what);
	for (size_t i = 0; i < json_object_array_length(excl); i++) {
		const char *re = json_object_get_string(json_object_array_get_idx(excl, i));

		err = attest_policy_add_exclude(p, re, &why);
		if (err == -EINVAL)
			return attest_say(log, err, "%s: exclude \"%s\": %s", what, re, why);
		if (err)
			return err;
	}
	err = read_ima(p, doc, what, log);
	if (err)
		return err;
	if (!json_object_object_get_ex(doc, "verification-keys", &v) ||
	    !json_object_is_type(v, json_type_string))
		return attest_say(log, -EINVAL, "%s: \"verification-keys\" is missing or not a string", what);
	err = read_keys(p, json_object_get_string(v), what, log);
	if (!err)
		warn_blank_paths(p, what, log);
	if (!err && p->generator <= KEYLIME_GENERATOR_EMPTY_ALLOWLIST)
		attest_say(log, 0, "%s: meta.generator %d: keylime takes this policy for none and does "
			   "not check the measurement list against it", what, p->generator);
	return err;
}

int attest_policy_read(const char *buf, size_t len, const char *what,
		       const struct imastream_log *log, struct attest_policy **ret)
{
	struct attest_policy *p = NULL;
	json_object *doc = NULL;
	const char *why;
	size_t at;
	int err;

	if (len > INT32_MAX)
		return attest_say(log, -EFBIG, "%s: larger than 2 GiB", what);
	doc = parse_whole(buf, len, &at, &why);
	if (!doc)
		return attest_say(log, -EINVAL, "%s: not JSON (%s, at byte %zu)", what, why, at);
	err = attest_policy_new(NULL, &p);
	if (!err)
		err = read_doc(p, doc, what, log);
	if (!err) {
		*ret = p;
		p = NULL;
	}
	attest_policy_free(p);
	json_object_put(doc);
	return err;
}
