// SPDX-License-Identifier: LGPL-2.1-or-later
/* Trust domains: OpenPGP keys with ranks, and the check of a header signature against them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpm/header.h>
#include <rpm/rpmcrypto.h>
#include <rpm/rpmpgp.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmtd.h>

#include "plugin/policy/policy.h"

#define MAX_DOMAINS 16
#define MAX_KEYS 64

struct domain_key {
	pgpDigParams params;
	unsigned int domain;
};

struct ims_domains {
	struct ims_domain domains[MAX_DOMAINS];
	unsigned int n;
	struct domain_key keys[MAX_KEYS];
	unsigned int n_keys;
};

/* An rpm header blob starts with this magic; the header signature covers it too. */
static const uint8_t header_magic[8] = { 0x8e, 0xad, 0xe8, 0x01, 0, 0, 0, 0 };

const char *ims_next_word(const char **p, size_t *len_ret)
{
	const char *s = *p;
	size_t len;

	while (*s == ',' || *s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return NULL;
	len = strcspn(s, ", \t");
	*p = s + len;
	*len_ret = len;
	return s;
}

bool ims_path_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	if (strncmp(path, prefix, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/' || (n == 1 && prefix[0] == '/');
}

size_t ims_escape(const void *in, size_t len, const char *extra, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	const uint8_t *b = in;
	size_t o = 0;

	if (!size)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (b[i] > ' ' && b[i] < 0x7f && b[i] != '%' && !(extra && strchr(extra, b[i]))) {
			if (o + 1 >= size)
				break;
			out[o++] = b[i];
		} else {
			if (o + 3 >= size)
				break;
			out[o++] = '%';
			out[o++] = hex[b[i] >> 4];
			out[o++] = hex[b[i] & 15];
		}
	}
	out[o] = '\0';
	return o;
}

unsigned int ims_domains_count(const struct ims_domains *d)
{
	return d ? d->n : 0;
}

int ims_domains_top_rank(const struct ims_domains *d)
{
	int top = 0;

	for (unsigned int i = 0; d && i < d->n; i++)
		if (d->domains[i].rank > top)
			top = d->domains[i].rank;
	return top;
}

void ims_domains_free(struct ims_domains *d)
{
	if (!d)
		return;
	for (unsigned int i = 0; i < d->n; i++)
		free(d->domains[i].name);
	for (unsigned int i = 0; i < d->n_keys; i++)
		pgpDigParamsFree(d->keys[i].params);
	free(d);
}

static int add_key(struct ims_domains *d, pgpDigParams params, unsigned int domain,
		   const char *file, const struct imastream_log *log)
{
	if (d->n_keys == MAX_KEYS) {
		pgpDigParamsFree(params);
		return ims_err(log, -E2BIG, "trust domains: more than %d keys (at %s)", MAX_KEYS,
			       file);
	}
	d->keys[d->n_keys].params = params;
	d->keys[d->n_keys].domain = domain;
	d->n_keys++;
	return 0;
}

/* Every certificate of an armored file, with its subkeys (a subkey may be the signer). */
static int load_key_file(struct ims_domains *d, unsigned int domain, const char *file,
			 const struct imastream_log *log)
{
	uint8_t *pkts = NULL;
	size_t len = 0, off = 0;
	unsigned int before = d->n_keys;
	int err = 0;

	if (pgpReadPkts(file, &pkts, &len) != PGPARMOR_PUBKEY) {
		err = ims_err(log, -EINVAL, "trust domain %s: %s is not an armored OpenPGP public key",
			      d->domains[domain].name, file);
		goto out;
	}
	while (off < len && !err) {
		pgpDigParams main = NULL, *subs = NULL;
		size_t certlen = 0;
		int n_subs = 0;

		if (pgpPubKeyCertLen(pkts + off, len - off, &certlen) || !certlen)
			break;
		if (pgpPrtParams(pkts + off, certlen, PGPTAG_PUBLIC_KEY, &main) == 0) {
			if (pgpPrtParamsSubkeys(pkts + off, certlen, main, &subs, &n_subs) == 0) {
				for (int i = 0; i < n_subs; i++) {
					if (!err)
						err = add_key(d, subs[i], domain, file, log);
					else
						pgpDigParamsFree(subs[i]);
				}
				free(subs);
			}
			if (!err)
				err = add_key(d, main, domain, file, log);
			else
				pgpDigParamsFree(main);
		}
		off += certlen;
	}
	if (!err && d->n_keys == before)
		err = ims_err(log, -EINVAL, "trust domain %s: no usable public key in %s",
			      d->domains[domain].name, file);
out:
	free(pkts);
	return err;
}

/* One "NAME=RANK:FILE[:FILE...]" word. */
static int parse_domain(struct ims_domains *d, char *word, const char *where,
			const struct imastream_log *log)
{
	char *eq = strchr(word, '='), *colon, *end, *save = NULL, *file;
	struct ims_domain *dom;
	long rank;
	int err = 0;

	if (!eq || eq == word || !(colon = strchr(eq, ':')))
		return ims_err(log, -EINVAL, "%s: \"%s\" is not NAME=RANK:KEYFILE", where, word);
	*eq = *colon = '\0';
	errno = 0;
	rank = strtol(eq + 1, &end, 10);
	if (errno || end == eq + 1 || *end || rank < 0 || rank > 1000000)
		return ims_err(log, -EINVAL, "%s: domain %s: rank \"%s\" is not 0..1000000", where,
			       word, eq + 1);
	for (unsigned int i = 0; i < d->n; i++)
		if (strcmp(d->domains[i].name, word) == 0)
			return ims_err(log, -EINVAL, "%s: domain %s defined twice", where, word);
	if (d->n == MAX_DOMAINS)
		return ims_err(log, -E2BIG, "%s: more than %d domains", where, MAX_DOMAINS);
	dom = &d->domains[d->n];
	dom->name = strdup(word);
	if (!dom->name)
		return -ENOMEM;
	dom->rank = (int)rank;
	d->n++;
	for (file = strtok_r(colon + 1, ":", &save); file && !err; file = strtok_r(NULL, ":", &save))
		err = load_key_file(d, d->n - 1, file, log);
	if (!err && d->n_keys == 0)
		err = ims_err(log, -EINVAL, "%s: domain %s names no key file", where, word);
	return err;
}

int ims_domains_load(const char *spec, const char *where, const struct imastream_log *log,
		     struct ims_domains **ret)
{
	struct ims_domains *d;
	const char *p = spec ? spec : "", *w;
	size_t len;
	int err = 0;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	/* Domains are separated by blanks or commas; key files within one by colons. */
	while (!err && (w = ims_next_word(&p, &len))) {
		char *word = strndup(w, len);

		if (!word) {
			err = -ENOMEM;
			break;
		}
		err = parse_domain(d, word, where, log);
		free(word);
	}
	if (err) {
		ims_domains_free(d);
		return err;
	}
	*ret = d;
	return 0;
}

static void hex8(const uint8_t *id, char out[17])
{
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/* Verifies @sig over magic + region with @key; a fresh digest per attempt. */
static bool verifies(pgpDigParams key, pgpDigParams sig, const void *region, size_t len)
{
	DIGEST_CTX ctx = rpmDigestInit(pgpDigParamsAlgo(sig, PGPVAL_HASHALGO), RPMDIGEST_NONE);
	bool ok;

	if (!ctx)
		return false;
	rpmDigestUpdate(ctx, header_magic, sizeof(header_magic));
	rpmDigestUpdate(ctx, region, len);
	/* pgpVerifySignature works on a copy of the context: we still own ours. */
	ok = pgpVerifySignature(key, sig, ctx) == RPMRC_OK;
	rpmDigestFinal(ctx, NULL, NULL, 0);
	return ok;
}

int ims_domains_judge(const struct ims_domains *d, void *header, struct ims_verdict *v)
{
	static const rpmTagVal sig_tags[] = { RPMTAG_RSAHEADER, RPMTAG_DSAHEADER };
	Header h = header;
	struct rpmtd_s region, sig;
	pgpDigParams sp = NULL;
	bool have_region = false, have_sig = false;
	int err = 0;

	memset(v, 0, sizeof(*v));
	v->why = "unsigned";
	rpmtdReset(&region);
	rpmtdReset(&sig);
	if (!h)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(sig_tags) && !have_sig; i++)
		have_sig = headerGet(h, sig_tags[i], &sig, HEADERGET_MINMEM) && sig.count;
	if (!have_sig)
		goto out;
	if (pgpPrtParams(sig.data, sig.count, PGPTAG_SIGNATURE, &sp) != 0) {
		v->why = "unreadable signature";
		goto out;
	}
	hex8(pgpDigParamsSignID(sp), v->keyid);
	v->why = "unknown key";
	/* The region blob (index + data of the immutable tags) is what rpmsign signed. */
	have_region = headerGet(h, RPMTAG_HEADERIMMUTABLE, &region, HEADERGET_DEFAULT) &&
		      region.count;
	if (!have_region) {
		err = -EINVAL;
		goto out;
	}
	for (unsigned int i = 0; d && i < d->n_keys; i++) {
		const struct ims_domain *dom = &d->domains[d->keys[i].domain];

		if (memcmp(pgpDigParamsSignID(d->keys[i].params), pgpDigParamsSignID(sp), 8) != 0)
			continue;
		if (v->domain && v->domain->rank >= dom->rank)
			continue;
		if (verifies(d->keys[i].params, sp, region.data, region.count))
			v->domain = dom;
		else if (!v->domain)
			v->why = "bad signature";
	}
	if (v->domain)
		v->why = NULL;
out:
	pgpDigParamsFree(sp);
	rpmtdFreeData(&sig);
	rpmtdFreeData(&region);
	return err;
}
