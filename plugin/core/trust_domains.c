// SPDX-License-Identifier: LGPL-2.1-or-later
/* Trust domains: OpenPGP keys with ranks, and the check of a package header's signature against them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rpm/header.h>
#include <rpm/rpmbase64.h>
#include <rpm/rpmcrypto.h>
#include <rpm/rpmkeyring.h>
#include <rpm/rpmpgp.h>
#include <rpm/rpmtag.h>
#include <rpm/rpmtd.h>

#include "common/rpmtag-compat.h"
#include "common/private.h"
#include "plugin/core/trust_domains.h"

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
		err = ims_err(log, -EINVAL,
			      "trust domain %s: %s is not an armored OpenPGP public key",
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
	for (file = strtok_r(colon + 1, ":", &save); file && !err;
	     file = strtok_r(NULL, ":", &save))
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

/* Starts a digest of magic + region in @sig's algorithm; NULL when rpm lacks it. */
static DIGEST_CTX region_digest(pgpDigParams sig, const void *region, size_t len)
{
	DIGEST_CTX ctx = rpmDigestInit(pgpDigParamsAlgo(sig, PGPVAL_HASHALGO), RPMDIGEST_NONE);

	if (ctx) {
		rpmDigestUpdate(ctx, header_magic, sizeof(header_magic));
		rpmDigestUpdate(ctx, region, len);
	}
	return ctx;
}

/* Verifies @sig over magic + region with @key, or with @keyring when @key is NULL. */
static bool verifies(pgpDigParams key, rpmKeyring keyring, pgpDigParams sig, const void *region,
		     size_t len)
{
	DIGEST_CTX ctx = region_digest(sig, region, len);
	bool ok;

	if (!ctx)
		return false;
	/* Both verify on a copy of the context: we still own ours. */
	ok = (key ? pgpVerifySignature(key, sig, ctx) : rpmKeyringVerifySig(keyring, sig, ctx)) ==
	     RPMRC_OK;
	rpmDigestFinal(ctx, NULL, NULL, 0);
	return ok;
}

void ims_header_sigs_free(struct ims_header_sigs *hs)
{
	for (unsigned int i = 0; i < hs->n; i++)
		free(hs->sig[i]);
	hs->n = 0;
}

static int add_sig(struct ims_header_sigs *hs, const void *data, size_t len)
{
	if (hs->n == IMS_MAX_HEADER_SIGS || !len)
		return 0;
	hs->sig[hs->n] = malloc(len);
	if (!hs->sig[hs->n])
		return -ENOMEM;
	memcpy(hs->sig[hs->n], data, len);
	hs->len[hs->n++] = len;
	return 0;
}

int ims_header_sigs_read(void *header, struct ims_header_sigs *hs)
{
	static const rpmTagVal v4_tags[] = { RPMTAG_RSAHEADER, RPMTAG_DSAHEADER };
	Header h = header;
	struct rpmtd_s td;
	int err = 0;

	memset(hs, 0, sizeof(*hs));
	if (!h)
		return -EINVAL;
	rpmtdReset(&td);
	/* rpm 6: every signature, base64 packets; then rpm 4's one packet, RSA before DSA. */
	if (headerGet(h, RPMSIGTAG_OPENPGP_COMPAT, &td, HEADERGET_MINMEM) &&
	    td.type == RPM_STRING_ARRAY_TYPE) {
		const char *b64;

		while (!err && (b64 = rpmtdNextString(&td))) {
			void *pkt = NULL;
			size_t len = 0;

			/* An undecodable entry is no signature: the header stays "unsigned". */
			if (rpmBase64Decode(b64, &pkt, &len) == 0)
				err = add_sig(hs, pkt, len);
			free(pkt);
		}
	}
	rpmtdFreeData(&td);
	for (size_t i = 0; i < ARRAY_SIZE(v4_tags) && !hs->n && !err; i++) {
		if (headerGet(h, v4_tags[i], &td, HEADERGET_MINMEM) && td.count)
			err = add_sig(hs, td.data, td.count);
		rpmtdFreeData(&td);
	}
	if (err)
		ims_header_sigs_free(hs);
	return err;
}

int ims_header_judge(const struct ims_domains *d, void *rpm_keyring, void *header,
		     struct ims_verdict *v)
{
	Header h = header;
	struct ims_header_sigs hs;
	struct rpmtd_s region;
	bool have_region = false, readable = false;
	int err;

	memset(v, 0, sizeof(*v));
	v->why = "unsigned";
	rpmtdReset(&region);
	err = ims_header_sigs_read(h, &hs);
	if (err || !hs.n)
		return err;
	for (unsigned int s = 0; s < hs.n && !err; s++) {
		pgpDigParams sp = NULL;

		if (pgpPrtParams(hs.sig[s], hs.len[s], PGPTAG_SIGNATURE, &sp) != 0) {
			pgpDigParamsFree(sp);
			continue;
		}
		/* The first readable signature names the key, unless a later one verifies. */
		if (!readable) {
			readable = true;
			hex8(pgpDigParamsSignID(sp), v->keyid);
			v->why = "unknown key";
			/* The region blob (index + data of the immutable tags) is what was signed. */
			have_region = headerGet(h, RPMTAG_HEADERIMMUTABLE, &region,
						HEADERGET_DEFAULT) &&
				      region.count;
			if (!have_region)
				err = -EINVAL;
		}
		for (unsigned int i = 0; !err && d && i < d->n_keys; i++) {
			const struct ims_domain *dom = &d->domains[d->keys[i].domain];

			if (memcmp(pgpDigParamsSignID(d->keys[i].params), pgpDigParamsSignID(sp),
				   8) != 0)
				continue;
			if (v->domain && v->domain->rank >= dom->rank)
				continue;
			if (verifies(d->keys[i].params, NULL, sp, region.data, region.count)) {
				v->domain = dom;
				hex8(pgpDigParamsSignID(sp), v->keyid);
			} else if (!v->domain && !v->keyring) {
				v->why = "bad signature";
			}
		}
		if (!err && rpm_keyring && !v->keyring && !v->domain &&
		    verifies(NULL, rpm_keyring, sp, region.data, region.count)) {
			v->keyring = true;
			hex8(pgpDigParamsSignID(sp), v->keyid);
		}
		pgpDigParamsFree(sp);
	}
	if (!readable)
		v->why = "unreadable signature";
	if (v->domain || v->keyring)
		v->why = NULL;
	ims_header_sigs_free(&hs);
	rpmtdFreeData(&region);
	return err;
}

int ims_domains_judge(const struct ims_domains *d, void *header, struct ims_verdict *v)
{
	return ims_header_judge(d, NULL, header, v);
}
