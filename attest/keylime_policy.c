// SPDX-License-Identifier: LGPL-2.1-or-later
/* A keylime runtime policy (meta.version 1) in memory: built from reference digests, written and read as JSON. */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "attest/attest.h"
#include "attest/policy-private.h"
#include "imastream/keys.h"

int attest_say(const struct imastream_log *log, int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (log && log->fn) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		/* err 0: a warning, the work goes on. */
		log->fn(log->arg, err ? IMASTREAM_LOG_ERR : IMASTREAM_LOG_WARNING, msg);
	}
	return err;
}

int attest_policy_new(const char *log_hash_alg, struct attest_policy **ret)
{
	struct attest_policy *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	snprintf(p->log_hash_alg, sizeof(p->log_hash_alg), "%s", log_hash_alg ? log_hash_alg : "sha1");
	p->digests = json_object_new_object();
	p->keyrings = json_object_new_object();
	p->ima_buf = json_object_new_object();
	p->ignored_keyrings = json_object_new_array();
	p->keyids = json_object_new_array();
	p->pubkeys = json_object_new_array();
	if (!p->digests || !p->keyrings || !p->ima_buf || !p->ignored_keyrings || !p->keyids ||
	    !p->pubkeys || imastream_trust_new(NULL, &p->trust)) {
		attest_policy_free(p);
		return -ENOMEM;
	}
	*ret = p;
	return 0;
}

void attest_policy_free(struct attest_policy *p)
{
	if (!p)
		return;
	json_object_put(p->digests);
	json_object_put(p->keyrings);
	json_object_put(p->ima_buf);
	json_object_put(p->ignored_keyrings);
	json_object_put(p->keyids);
	json_object_put(p->pubkeys);
	for (size_t i = 0; i < p->nexcludes; i++) {
		regfree(&p->excludes[i].re);
		free(p->excludes[i].text);
	}
	free(p->excludes);
	imastream_trust_free(p->trust);
	free(p);
}

static bool list_has(json_object *list, const char *hex)
{
	size_t n = json_object_array_length(list);

	for (size_t i = 0; i < n; i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(list, i));

		if (s && !strcmp(s, hex))
			return true;
	}
	return false;
}

int attest_policy_add_digest(struct attest_policy *p, const char *path, const uint8_t *digest,
			     size_t len)
{
	char hex[2 * IMASTREAM_HASH_MAX_DIGEST + 1];
	json_object *list, *s;

	if (len > IMASTREAM_HASH_MAX_DIGEST)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
	hex[2 * len] = '\0';
	if (!json_object_object_get_ex(p->digests, path, &list)) {
		list = json_object_new_array();
		if (!list || json_object_object_add(p->digests, path, list)) {
			json_object_put(list);
			return -ENOMEM;
		}
	}
	if (list_has(list, hex))
		return 0;
	s = json_object_new_string(hex);
	if (!s || json_object_array_add(list, s)) {
		json_object_put(s);
		return -ENOMEM;
	}
	return 0;
}

int attest_policy_add_exclude(struct attest_policy *p, const char *regex, const char **why)
{
	struct exclude *n = realloc(p->excludes, (p->nexcludes + 1) * sizeof(*n));
	char *anchored;
	size_t len = strlen(regex) + 5;

	if (!n)
		return -ENOMEM;
	p->excludes = n;
	/* keylime matches with Python's re.match: at the start of the path. */
	anchored = malloc(len);
	if (!anchored)
		return -ENOMEM;
	snprintf(anchored, len, "^(%s)", regex);
	n = &p->excludes[p->nexcludes];
	if (regcomp(&n->re, anchored, REG_EXTENDED | REG_NOSUB)) {
		free(anchored);
		*why = "not a POSIX extended regular expression";
		return -EINVAL;
	}
	free(anchored);
	n->text = strdup(regex);
	if (!n->text) {
		regfree(&n->re);
		return -ENOMEM;
	}
	p->nexcludes++;
	return 0;
}

int attest_policy_add_key(struct attest_policy *p, const uint8_t *der, size_t len, uint32_t keyid)
{
	char *b64 = malloc(4 * ((len + 2) / 3) + 1);
	json_object *s, *id;
	int err;

	if (!b64)
		return -ENOMEM;
	err = imastream_trust_add_pubkey(p->trust, der, len, &keyid);
	if (err) {
		free(b64);
		return err;
	}
	EVP_EncodeBlock((unsigned char *)b64, der, (int)len);
	s = json_object_new_string(b64);
	id = json_object_new_int64(keyid);
	free(b64);
	if (!s || !id || json_object_array_add(p->pubkeys, s)) {
		json_object_put(s);
		json_object_put(id);
		return -ENOMEM;
	}
	if (json_object_array_add(p->keyids, id)) {
		json_object_put(id);
		return -ENOMEM;
	}
	return 0;
}

size_t attest_policy_paths(const struct attest_policy *p)
{
	return (size_t)json_object_object_length(p->digests);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The digests object with its paths in byte order, so equal roots give equal files. */
static json_object *sorted_digests(const struct attest_policy *p)
{
	size_t n = attest_policy_paths(p), i = 0;
	const char **paths = calloc(n ? n : 1, sizeof(*paths));
	json_object *out = json_object_new_object();

	if (!paths || !out)
		goto oom;
	json_object_object_foreach(p->digests, key, val) {
		(void)val;
		paths[i++] = key;
	}
	qsort(paths, n, sizeof(*paths), cmp_str);
	for (i = 0; i < n; i++) {
		json_object *list;

		json_object_object_get_ex(p->digests, paths[i], &list);
		if (json_object_object_add(out, paths[i], json_object_get(list)))
			goto oom;
	}
	free(paths);
	return out;
oom:
	free(paths);
	json_object_put(out);
	return NULL;
}

/* keylime keeps the verification keys as a JSON document inside a string. */
static json_object *keys_string(const struct attest_policy *p)
{
	json_object *ring, *meta, *s = NULL;

	if (!json_object_array_length(p->pubkeys))
		return json_object_new_string("");
	ring = json_object_new_object();
	meta = json_object_new_object();
	if (ring && meta && !json_object_object_add(meta, "version", json_object_new_int(1)) &&
	    !json_object_object_add(ring, "meta", json_object_get(meta)) &&
	    !json_object_object_add(ring, "keyids", json_object_get(p->keyids)) &&
	    !json_object_object_add(ring, "pubkeys", json_object_get(p->pubkeys)))
		s = json_object_new_string(json_object_to_json_string_ext(ring, JSON_C_TO_STRING_PLAIN));
	json_object_put(meta);
	json_object_put(ring);
	return s;
}

int attest_policy_write(const struct attest_policy *p, int fd, const struct imastream_log *log)
{
	json_object *root = json_object_new_object(), *meta = json_object_new_object();
	json_object *ima = json_object_new_object(), *excl = json_object_new_array();
	const char *text;
	size_t len, off = 0;
	int err = -ENOMEM;

	if (!root || !meta || !ima || !excl)
		goto out;
	for (size_t i = 0; i < p->nexcludes; i++)
		json_object_array_add(excl, json_object_new_string(p->excludes[i].text));
	json_object_object_add(meta, "version", json_object_new_int(KEYLIME_POLICY_VERSION));
	json_object_object_add(ima, "ignored_keyrings", json_object_get(p->ignored_keyrings));
	json_object_object_add(ima, "log_hash_alg", json_object_new_string(p->log_hash_alg));
	json_object_object_add(ima, "dm_policy", NULL);
	json_object_object_add(root, "meta", json_object_get(meta));
	json_object_object_add(root, "release", json_object_new_int(0));
	json_object_object_add(root, "digests", sorted_digests(p));
	json_object_object_add(root, "excludes", json_object_get(excl));
	json_object_object_add(root, "keyrings", json_object_get(p->keyrings));
	json_object_object_add(root, "ima", json_object_get(ima));
	json_object_object_add(root, "ima-buf", json_object_get(p->ima_buf));
	json_object_object_add(root, "verification-keys", keys_string(p));
	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
					      JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!text)
		goto out;
	len = strlen(text);
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = attest_say(log, n < 0 ? -errno : -EIO, "cannot write the policy: %s",
				  strerror(n < 0 ? errno : EIO));
			goto out;
		}
		off += (size_t)n;
	}
	err = write(fd, "\n", 1) == 1 ? 0 : attest_say(log, -errno, "cannot write the policy: %s",
						   strerror(errno));
out:
	json_object_put(root);
	json_object_put(meta);
	json_object_put(ima);
	json_object_put(excl);
	return err;
}
