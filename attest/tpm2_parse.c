// SPDX-License-Identifier: LGPL-2.1-or-later
/* Bounds-checked parsers of the marshalled TPMS_ATTEST, TPMT_SIGNATURE and TPML_PCR_SELECTION of a quote. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attest/tpm2-private.h"
#include "imastream/hash.h"

/* A cursor over marshalled bytes; the first failure sticks and names what was read. */
struct rd {
	const uint8_t *p;
	size_t left;
	const char *why;
};

static bool take(struct rd *r, size_t n, const char *what)
{
	if (r->why)
		return false;
	if (r->left < n) {
		r->why = what;
		return false;
	}
	return true;
}

static uint64_t get(struct rd *r, size_t n, const char *what)
{
	uint64_t v = 0;

	if (!take(r, n, what))
		return 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | r->p[i];
	r->p += n;
	r->left -= n;
	return v;
}

/* A TPM2B: a 16-bit size, then at most @max bytes. */
static uint16_t get_2b(struct rd *r, uint8_t *out, size_t max, const char *what,
		       const char *too_big)
{
	uint16_t n = (uint16_t)get(r, 2, what);

	if (r->why)
		return 0;
	if (n > max) {
		r->why = too_big;
		return 0;
	}
	if (!take(r, n, what))
		return 0;
	memcpy(out, r->p, n);
	r->p += n;
	r->left -= n;
	return n;
}

static int done(struct rd *r, const char **why)
{
	if (!r->why && r->left)
		r->why = "bytes after its end";
	*why = r->why;
	return r->why ? -EINVAL : 0;
}

static void get_selection(struct rd *r, struct tpm2_pcr_selection *s)
{
	memset(s, 0, sizeof(*s));
	s->count = (uint32_t)get(r, 4, "a PCR selection cut short");
	if (!r->why && s->count > TPM2_NUM_PCR_BANKS)
		r->why = "a PCR selection of more than 16 banks";
	for (uint32_t i = 0; i < s->count && !r->why; i++) {
		struct tpm2_bank_select *b = &s->banks[i];

		b->hash = (uint16_t)get(r, 2, "a PCR selection cut short");
		b->size = (uint8_t)get(r, 1, "a PCR selection cut short");
		if (!r->why && b->size > TPM2_PCR_SELECT_MAX)
			r->why = "a PCR bitmap longer than 4 bytes";
		if (!take(r, b->size, "a PCR selection cut short"))
			break;
		memcpy(b->select, r->p, b->size);
		r->p += b->size;
		r->left -= b->size;
		for (uint32_t j = 0; j < i; j++)
			if (s->banks[j].hash == b->hash)
				r->why = "a PCR selection that names a bank twice";
	}
}

int tpm2_parse_pcr_selection(const uint8_t *buf, size_t len, struct tpm2_pcr_selection *s,
			     const char **why)
{
	struct rd r = { buf, len, NULL };

	get_selection(&r, s);
	return done(&r, why);
}

int tpm2_parse_attest(const uint8_t *buf, size_t len, struct tpm2_attest *a, const char **why)
{
	static const char cut[] = "a TPMS_ATTEST cut short";
	struct rd r = { buf, len, NULL };

	memset(a, 0, sizeof(*a));
	a->magic = (uint32_t)get(&r, 4, cut);
	a->type = (uint16_t)get(&r, 2, cut);
	if (!r.why && a->type != TPM2_ST_ATTEST_QUOTE)
		r.why = "a TPMS_ATTEST that is not a quote (its type is not TPM_ST_ATTEST_QUOTE)";
	a->signer_len = get_2b(&r, a->signer, sizeof(a->signer), cut,
			       "a signer name longer than 66 bytes");
	a->extra_len = get_2b(&r, a->extra, sizeof(a->extra), cut,
			      "qualifying data longer than 66 bytes");
	a->clock = get(&r, 8, cut);
	a->reset_count = (uint32_t)get(&r, 4, cut);
	a->restart_count = (uint32_t)get(&r, 4, cut);
	a->safe = (uint8_t)get(&r, 1, cut);
	a->firmware = get(&r, 8, cut);
	get_selection(&r, &a->pcrs);
	a->pcr_digest_len = get_2b(&r, a->pcr_digest, sizeof(a->pcr_digest), cut,
				   "a PCR digest longer than 64 bytes");
	return done(&r, why);
}

int tpm2_parse_signature(const uint8_t *buf, size_t len, struct tpm2_signature *s, const char **why)
{
	static const char cut[] = "a TPMT_SIGNATURE cut short";
	struct rd r = { buf, len, NULL };

	memset(s, 0, sizeof(*s));
	s->alg = (uint16_t)get(&r, 2, cut);
	if (r.why)
		return done(&r, why);
	switch (s->alg) {
	case TPM2_ALG_RSASSA:
	case TPM2_ALG_RSAPSS:
		s->hash = (uint16_t)get(&r, 2, cut);
		s->sig_len = get_2b(&r, s->sig, sizeof(s->sig), cut,
				    "an RSA signature longer than 512 bytes");
		break;
	case TPM2_ALG_ECDSA:
		s->hash = (uint16_t)get(&r, 2, cut);
		s->r_len = get_2b(&r, s->r, sizeof(s->r), cut, "an ECDSA r longer than 128 bytes");
		s->s_len = get_2b(&r, s->s, sizeof(s->s), cut, "an ECDSA s longer than 128 bytes");
		break;
	case TPM2_ALG_NULL:
		r.why = "no signature (TPM_ALG_NULL): the quote was not signed";
		break;
	default:
		r.why = "a signature scheme other than rsassa, rsapss and ecdsa";
	}
	return done(&r, why);
}

static const struct {
	uint16_t alg;
	int algo;
} hashes[] = {
	{ TPM2_ALG_SHA1, IMASTREAM_HASH_SHA1 },	    { TPM2_ALG_SHA256, IMASTREAM_HASH_SHA256 },
	{ TPM2_ALG_SHA384, IMASTREAM_HASH_SHA384 }, { TPM2_ALG_SHA512, IMASTREAM_HASH_SHA512 },
	{ TPM2_ALG_SM3_256, IMASTREAM_HASH_SM3 },
};

int tpm2_hash_algo(uint16_t alg)
{
	for (size_t i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++)
		if (hashes[i].alg == alg)
			return hashes[i].algo;
	return 0;
}

uint16_t tpm2_alg_of_hash(int algo)
{
	for (size_t i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++)
		if (hashes[i].algo == algo)
			return hashes[i].alg;
	return 0;
}

const char *tpm2_alg_name(uint16_t alg, char buf[8])
{
	const struct imastream_hash_info *h = imastream_hash_by_algo(tpm2_hash_algo(alg));

	if (h)
		return h->name;
	snprintf(buf, 8, "0x%04x", alg);
	return buf;
}
