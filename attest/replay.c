// SPDX-License-Identifier: LGPL-2.1-or-later
/* Replays a measurement list into PCR 10 of every quoted bank and checks boot_aggregate, as keylime's verifier does. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "attest/attest.h"
#include "attest/tpm.h"
#include "imastream/hash.h"

struct replay_bank {
	const struct attest_bank *quoted;
	const struct imastream_hash_info *h;
	EVP_MD *md;
	uint8_t pcr[IMASTREAM_HASH_MAX_DIGEST];
};

struct attest_replay {
	const struct attest_quote *q;
	struct replay_bank bank[ATTEST_MAX_BANKS];
	unsigned int n;
	unsigned long entries;
	bool matched;		  /* the quote's PCR 10 was the replay of the first ... */
	unsigned long matched_at; /* ... this many entries */
	bool boot_aggregate;	  /* checked against the quoted PCRs */
	struct attest_entry e;
	/* Fetched once: an implicit fetch per digest costs more than the digest. */
	EVP_MD_CTX *ctx;
	EVP_MD *log_md[4]; /* sha1, sha256, sha384, sha512 template hashes */
};

static int say(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

static void hex(char *out, const uint8_t *v, size_t len)
{
	for (size_t i = 0; i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", v[i]);
	out[2 * len] = '\0';
}

static bool quoted_now(const struct attest_replay *r)
{
	for (unsigned int i = 0; i < r->n; i++)
		if (memcmp(r->bank[i].pcr, r->bank[i].quoted->pcr[ATTEST_IMA_PCR],
			   r->bank[i].h->digest_size))
			return false;
	return true;
}

static const int log_algos[4] = { IMASTREAM_HASH_SHA1, IMASTREAM_HASH_SHA256, IMASTREAM_HASH_SHA384,
				  IMASTREAM_HASH_SHA512 };

static EVP_MD *fetch(int algo)
{
	const struct imastream_hash_info *h = imastream_hash_by_algo(algo);

	return h ? EVP_MD_fetch(NULL, h->openssl_name, NULL) : NULL;
}

int attest_replay_new(const struct attest_quote *q, struct attest_replay **ret)
{
	struct attest_replay *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->q = q;
	r->ctx = EVP_MD_CTX_new();
	for (unsigned int i = 0; i < 4; i++)
		r->log_md[i] = fetch(log_algos[i]);
	for (unsigned int i = 0; i < q->nbanks; i++) {
		struct replay_bank *b = &r->bank[r->n];

		if (!(q->bank[i].selected >> ATTEST_IMA_PCR & 1))
			continue;
		b->quoted = &q->bank[i];
		b->h = imastream_hash_by_algo(q->bank[i].algo);
		b->md = fetch(q->bank[i].algo);
		r->n++; /* PCR 10 starts as zeros, which calloc() gave */
		if (!b->md)
			break;
	}
	for (unsigned int i = 0; i < r->n; i++)
		if (!r->bank[i].md) {
			attest_replay_free(r);
			return -EOPNOTSUPP;
		}
	if (!r->ctx || !r->log_md[0] || !r->log_md[1] || !r->log_md[2] || !r->log_md[3]) {
		attest_replay_free(r);
		return -ENOMEM;
	}
	r->matched = quoted_now(r);
	*ret = r;
	return 0;
}

void attest_replay_free(struct attest_replay *r)
{
	if (!r)
		return;
	for (unsigned int i = 0; i < r->n; i++)
		EVP_MD_free(r->bank[i].md);
	for (unsigned int i = 0; i < 4; i++)
		EVP_MD_free(r->log_md[i]);
	EVP_MD_CTX_free(r->ctx);
	free(r);
}

static bool digest(EVP_MD_CTX *ctx, const EVP_MD *md, const void *a, size_t alen, const void *b,
		   size_t blen, uint8_t *out)
{
	return EVP_DigestInit_ex2(ctx, md, NULL) && EVP_DigestUpdate(ctx, a, alen) &&
	       (!b || EVP_DigestUpdate(ctx, b, blen)) && EVP_DigestFinal_ex(ctx, out, NULL);
}

/*
 * The kernel's boot_aggregate: the hash of PCRs 0-7 (sha1) or 0-9 (other banks) of its bank.
 * r->e points into the parsed copy of the line, which lives until the check is done.
 */
static int check_parsed_boot_aggregate(struct attest_replay *r, const struct attest_measurement *m,
				       char *why, size_t whylen)
{
	const struct imastream_hash_info *h;
	const struct attest_bank *b = NULL;
	unsigned int last;
	uint8_t want[IMASTREAM_HASH_MAX_DIGEST];
	EVP_MD_CTX *ctx;
	bool ok;

	h = imastream_hash_by_algo(r->e.hash_algo);
	last = r->e.hash_algo == IMASTREAM_HASH_SHA1 ? 7 : 9;
	for (unsigned int i = 0; i < r->q->nbanks && !b; i++)
		if (r->q->bank[i].algo == r->e.hash_algo)
			b = &r->q->bank[i];
	if (!b || (b->selected & ((2u << last) - 1)) != (2u << last) - 1)
		return say(why, whylen,
			   "boot_aggregate: entry %lu: the quote does not hold PCRs 0-%u of the %s "
			   "bank, "
			   "which it is the %s of (quote them with PCR 10)",
			   m->index, last, r->e.algo, r->e.algo);
	ctx = EVP_MD_CTX_new();
	ok = ctx && EVP_DigestInit_ex(ctx, EVP_get_digestbyname(h->openssl_name), NULL);
	for (unsigned int pcr = 0; ok && pcr <= last; pcr++)
		ok = EVP_DigestUpdate(ctx, b->pcr[pcr], b->digest_size);
	ok = ok && EVP_DigestFinal_ex(ctx, want, NULL);
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return -ENOMEM;
	if (CRYPTO_memcmp(want, r->e.digest, h->digest_size))
		return say(why, whylen,
			   "boot_aggregate: entry %lu: not the %s of the quoted PCRs 0-%u (the "
			   "machine "
			   "booted otherwise than its TPM says)",
			   m->index, h->name, last);
	r->boot_aggregate = true;
	return 0;
}

static int check_boot_aggregate(struct attest_replay *r, const struct attest_measurement *m,
				char *why, size_t whylen)
{
	const char *err;
	char *copy = strdup(m->line);
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	/* Not the kernel's boot_aggregate: the policy judges the line. */
	if (!attest_parse_line(copy, &r->e, &err) && !strcmp(r->e.name, "boot_aggregate"))
		ret = check_parsed_boot_aggregate(r, m, why, whylen);
	free(copy);
	return ret;
}

bool attest_replay_boot_aggregate_checked(const struct attest_replay *r)
{
	return r->boot_aggregate;
}

int attest_replay_add(struct attest_replay *r, const struct attest_measurement *m, char *why,
		      size_t whylen)
{
	static const uint8_t zero[IMASTREAM_HASH_MAX_DIGEST];
	const struct imastream_hash_info *log_h;
	uint8_t th[IMASTREAM_HASH_MAX_DIGEST];
	unsigned int log;
	bool violation;
	int err;

	r->entries++;
	if (m->pcr != ATTEST_IMA_PCR)
		return say(why, whylen, "replay: entry %lu: measured into PCR %u, not IMA's PCR %d",
			   m->index, m->pcr, ATTEST_IMA_PCR);
	switch (m->thash_len) {
	case 20:
		log = 0;
		break;
	case 32:
		log = 1;
		break;
	case 48:
		log = 2;
		break;
	case 64:
		log = 3;
		break;
	default:
		return say(why, whylen,
			   "template hash: entry %lu: %zu bytes, the size of no bank's hash",
			   m->index, m->thash_len);
	}
	log_h = imastream_hash_by_algo(log_algos[log]);
	/* A violation (ToMToU, open writers) is logged as zeros and extends 0xff bytes. */
	violation = !memcmp(m->thash, zero, m->thash_len);
	if (!violation) {
		if (!digest(r->ctx, r->log_md[log], m->data, m->data_len, NULL, 0, th))
			return -ENOMEM;
		if (CRYPTO_memcmp(th, m->thash, m->thash_len))
			return say(why, whylen,
				   "template hash: entry %lu: the list's template hash is not the "
				   "%s of "
				   "the entry's data (an edited entry)",
				   m->index, log_h->name);
		if (strstr(m->line, " boot_aggregate")) {
			err = check_boot_aggregate(r, m, why, whylen);
			if (err)
				return err;
		}
	}
	for (unsigned int i = 0; i < r->n; i++) {
		struct replay_bank *b = &r->bank[i];
		size_t n = b->h->digest_size;

		if (violation)
			memset(th, 0xff, n);
		else if (!digest(r->ctx, b->md, m->data, m->data_len, NULL, 0, th))
			return -ENOMEM;
		if (!digest(r->ctx, b->md, b->pcr, n, th, n, b->pcr))
			return -ENOMEM;
	}
	if (!r->matched && quoted_now(r)) {
		r->matched = true;
		r->matched_at = r->entries;
	}
	return 0;
}

int attest_replay_end(struct attest_replay *r, char *why, size_t whylen)
{
	char got[2 * IMASTREAM_HASH_MAX_DIGEST + 1], want[2 * IMASTREAM_HASH_MAX_DIGEST + 1];

	if (quoted_now(r))
		return 0;
	if (r->matched)
		return say(
			why, whylen,
			"replay: the list is longer than the quote covers: the quote's PCR %d is "
			"the "
			"replay of its first %lu entries of %lu, so the %lu after entry %lu are "
			"not "
			"covered (measured after the quote: quote and read the list with nothing "
			"measured in between)",
			ATTEST_IMA_PCR, r->matched_at, r->entries, r->entries - r->matched_at,
			r->matched_at);
	for (unsigned int i = 0; i < r->n; i++) {
		const struct replay_bank *b = &r->bank[i];

		if (!memcmp(b->pcr, b->quoted->pcr[ATTEST_IMA_PCR], b->h->digest_size))
			continue;
		hex(got, b->pcr, b->h->digest_size);
		hex(want, b->quoted->pcr[ATTEST_IMA_PCR], b->h->digest_size);
		return say(
			why, whylen,
			"replay: the %lu entries of the list replay to %s in the %s bank, but the "
			"quote's PCR %d is %s, and no first part of the list replays to it: "
			"entries "
			"are missing after entry %lu (a truncated list), or an entry was removed "
			"or "
			"altered with its template hash",
			r->entries, got, b->h->name, ATTEST_IMA_PCR, want, r->entries);
	}
	return say(why, whylen, "replay: the list does not replay to the quote's PCR %d",
		   ATTEST_IMA_PCR);
}
