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
#include "attest/json_out.h"
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

bool attest_log_hash_alg_known(const char *name)
{
	static const char *const known[] = { "sha1", "sha256", "sha384", "sha512" };

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(name, known[i]))
			return true;
	return false;
}

int attest_policy_new(const char *log_hash_alg, struct attest_policy **ret)
{
	struct attest_policy *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	snprintf(p->log_hash_alg, sizeof(p->log_hash_alg), "%s", log_hash_alg ? log_hash_alg : "sha1");
	p->generator = KEYLIME_GENERATOR_LEGACY_ALLOWLIST;
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
	free(p->built.arena);
	free(p->built.at);
	imastream_trust_free(p->trust);
	free(p);
}

static int grow(void **buf, size_t *cap, size_t want, size_t size)
{
	size_t cap2 = *cap ? *cap : 4096 / size;
	void *n;

	if (want <= *cap)
		return 0;
	while (cap2 < want)
		cap2 *= 2;
	n = realloc(*buf, cap2 * size);
	if (!n)
		return -ENOMEM;
	*buf = n;
	*cap = cap2;
	return 0;
}

int attest_policy_add_digest(struct attest_policy *p, const char *path, const uint8_t *digest,
			     size_t len)
{
	struct built_digests *b = &p->built;
	size_t plen = strlen(path), need = 1 + len + plen + 1;

	if (len > IMASTREAM_HASH_MAX_DIGEST)
		return -EINVAL;
	/* JSON text is Unicode: a path that is not UTF-8 has no faithful spelling in it. */
	if (!json_utf8_valid(path, plen))
		return -EILSEQ;
	if (grow((void **)&b->arena, &b->cap, b->len + need, 1) ||
	    grow((void **)&b->at, &b->n_cap, b->n + 1, sizeof(*b->at)))
		return -ENOMEM;
	b->at[b->n++] = b->len;
	b->arena[b->len] = (uint8_t)len;
	memcpy(b->arena + b->len + 1, digest, len);
	attest_kernel_name((char *)b->arena + b->len + 1 + len, path);
	b->len += need;
	return 0;
}

char *attest_kernel_name(char *out, const char *path)
{
	size_t i;

	/*
	 * The kernel's ima_write_template_field_data() turns every ' ' of a name field
	 * (n, n-ng) into '_' when it records the measurement, so that a name stays one
	 * field of the ascii list; every other byte is kept.
	 */
	for (i = 0; path[i]; i++)
		out[i] = path[i] == ' ' ? '_' : path[i];
	out[i] = '\0';
	return out;
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

/* One digest of one path, built or read, in the order they were given. */
struct entry {
	const char *path;
	const uint8_t *digest;     /* built: the digest, written in hex */
	const char *hex;           /* read: the hex text */
	size_t len;                /* of digest or hex */
	size_t seq;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Every digest of @p sorted by path (byte order, so equal roots give equal files), then as added. */
static struct entry *sorted_entries(const struct attest_policy *p, size_t *n_out)
{
	const struct built_digests *b = &p->built;
	size_t n = b->n + (p->digests ? (size_t)json_object_object_length(p->digests) : 0), i = 0;
	struct entry *e;

	if (p->digests) {
		/* a read path lists any number of digests */
		json_object_object_foreach(p->digests, key0, list0) {
			(void)key0;
			n += json_object_array_length(list0);
		}
	}
	e = malloc((n ? n : 1) * sizeof(*e));
	if (!e)
		return NULL;
	for (size_t k = 0; k < b->n; k++, i++) {
		const uint8_t *r = b->arena + b->at[k];

		e[i] = (struct entry){ .path = (const char *)r + 1 + r[0], .digest = r + 1, .len = r[0],
				       .seq = i };
	}
	if (p->digests) {
		json_object_object_foreach(p->digests, key, list) {
			size_t m = json_object_array_length(list);

			/* A path read with an empty list keeps its empty list. */
			if (!m)
				e[i] = (struct entry){ .path = key, .seq = i }, i++;
			for (size_t k = 0; k < m; k++, i++) {
				json_object *s = json_object_array_get_idx(list, k);

				e[i] = (struct entry){ .path = key, .hex = json_object_get_string(s),
						       .len = (size_t)json_object_get_string_len(s),
						       .seq = i };
			}
		}
	}
	qsort(e, i, sizeof(*e), cmp_entry);
	*n_out = i;
	return e;
}

static bool same_digest(const struct entry *a, const struct entry *b)
{
	if (a->digest && b->digest)
		return a->len == b->len && !memcmp(a->digest, b->digest, a->len);
	if (a->hex && b->hex)
		return a->len == b->len && !memcmp(a->hex, b->hex, a->len);
	/* One built, one read (--base): the same value once, whichever spelling came first. */
	if (a->hex || b->hex) {
		const struct entry *bin = a->digest ? a : b, *txt = a->hex ? a : b;
		static const char digits[] = "0123456789abcdef";

		if (!bin->digest || txt->len != 2 * bin->len)
			return false;
		for (size_t i = 0; i < bin->len; i++)
			if (txt->hex[2 * i] != digits[bin->digest[i] >> 4] ||
			    txt->hex[2 * i + 1] != digits[bin->digest[i] & 15])
				return false;
		return true;
	}
	return false;
}

size_t attest_policy_paths(const struct attest_policy *p)
{
	size_t n, paths = 0;
	struct entry *e;

	if (!p->built.n)
		return p->digests ? (size_t)json_object_object_length(p->digests) : 0;
	e = sorted_entries(p, &n);
	if (!e)
		return 0;
	for (size_t i = 0; i < n; i++)
		paths += !i || strcmp(e[i].path, e[i - 1].path);
	free(e);
	return paths;
}

/* "digests": one line per path, its digests once each in the order they were added. */
static void write_digests(struct json_out *o, const struct entry *e, size_t n)
{
	json_out_lit(o, "  \"digests\": {");
	for (size_t i = 0; i < n;) {
		size_t first = i, end = i + 1, printed;

		while (end < n && !strcmp(e[end].path, e[i].path))
			end++;
		json_out_lit(o, i ? ",\n    " : "\n    ");
		json_out_str(o, e[i].path, strlen(e[i].path));
		json_out_lit(o, ": [");
		for (printed = 0; i < end; i++) {
			bool dup = false;

			for (size_t k = first; k < i && !dup; k++)
				dup = same_digest(&e[k], &e[i]);
			if (dup || (!e[i].digest && !e[i].hex))
				continue;
			json_out_lit(o, printed++ ? ", " : " ");
			if (e[i].digest)
				json_out_hex(o, e[i].digest, e[i].len);
			else
				json_out_str(o, e[i].hex, e[i].len);
		}
		json_out_lit(o, printed ? " ]" : "]");
	}
	json_out_lit(o, n ? "\n  },\n" : "},\n");
}

/* A value json-c holds (read from another policy), on one line. */
static void write_json_c(struct json_out *o, json_object *v)
{
	const char *text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_SPACED |
							  JSON_C_TO_STRING_NOSLASHESCAPE);

	json_out_lit(o, text ? text : "null");
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
	struct json_out *o = malloc(sizeof(*o));
	json_object *keys = NULL;
	struct entry *e = NULL;
	char num[32];
	size_t n = 0;
	int err = -ENOMEM;

	if (!o || !(e = sorted_entries(p, &n)) || !(keys = keys_string(p)))
		goto out;
	json_out_init(o, fd);
	snprintf(num, sizeof(num), "%d", KEYLIME_POLICY_VERSION);
	json_out_lit(o, "{\n  \"meta\": { \"version\": ");
	json_out_lit(o, num);
	json_out_lit(o, ", \"generator\": ");
	snprintf(num, sizeof(num), "%d", p->generator);
	json_out_lit(o, num);
	json_out_lit(o, " },\n  \"release\": 0,\n");
	write_digests(o, e, n);
	json_out_lit(o, "  \"excludes\": [");
	for (size_t i = 0; i < p->nexcludes; i++) {
		json_out_lit(o, i ? ", " : " ");
		json_out_str(o, p->excludes[i].text, strlen(p->excludes[i].text));
	}
	json_out_lit(o, p->nexcludes ? " ],\n  \"keyrings\": " : "],\n  \"keyrings\": ");
	write_json_c(o, p->keyrings);
	json_out_lit(o, ",\n  \"ima\": { \"ignored_keyrings\": ");
	write_json_c(o, p->ignored_keyrings);
	json_out_lit(o, ", \"log_hash_alg\": ");
	json_out_str(o, p->log_hash_alg, strlen(p->log_hash_alg));
	json_out_lit(o, ", \"dm_policy\": null },\n  \"ima-buf\": ");
	write_json_c(o, p->ima_buf);
	json_out_lit(o, ",\n  \"verification-keys\": ");
	json_out_str(o, json_object_get_string(keys), (size_t)json_object_get_string_len(keys));
	json_out_lit(o, "\n}\n");
	err = json_out_flush(o);
	if (err)
		attest_say(log, err, "cannot write the policy: %s", strerror(-err));
out:
	json_object_put(keys);
	free(e);
	free(o);
	return err;
}
