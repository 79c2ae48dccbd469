// SPDX-License-Identifier: LGPL-2.1-or-later
/* Verifies a TPM 2.0 quote as keylime's verifier does: AK signature, nonce, PCR digest, PCR 10 quoted. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "attest/tpm.h"
#include "attest/tpm2-private.h"
#include "imastream/hash.h"

static int fail(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static void hex(char *out, size_t outlen, const uint8_t *v, size_t len)
{
	size_t i;

	for (i = 0; i < len && 2 * i + 2 < outlen; i++)
		snprintf(out + 2 * i, 3, "%02x", v[i]);
	out[2 * i] = '\0';
}

static EVP_PKEY *load_ak(const char *pem, size_t len)
{
	BIO *bio = BIO_new_mem_buf(pem, (int)len);
	EVP_PKEY *k = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;

	BIO_free(bio);
	return k;
}

/* The TPM signature as OpenSSL verifies it: RSA as is, ECDSA r and s as DER. */
static int signature_der(const struct tpm2_signature *s, uint8_t **der, size_t *len)
{
	ECDSA_SIG *es;
	BIGNUM *r, *ss;
	unsigned char *p = NULL;
	int n;

	if (s->alg != TPM2_ALG_ECDSA) {
		*der = OPENSSL_memdup(s->sig, s->sig_len);
		*len = s->sig_len;
		return *der ? 0 : -ENOMEM;
	}
	es = ECDSA_SIG_new();
	r = BN_bin2bn(s->r, s->r_len, NULL);
	ss = BN_bin2bn(s->s, s->s_len, NULL);
	if (!es || !r || !ss || !ECDSA_SIG_set0(es, r, ss)) {
		ECDSA_SIG_free(es);
		BN_free(r);
		BN_free(ss);
		return -ENOMEM;
	}
	n = i2d_ECDSA_SIG(es, &p);
	ECDSA_SIG_free(es);
	if (n <= 0)
		return -ENOMEM;
	*der = p;
	*len = (size_t)n;
	return 0;
}

/* 1 verified, 0 not, -ENOMEM. */
static int verify_signature(EVP_PKEY *ak, const struct tpm2_signature *s,
			    const struct imastream_hash_info *h, const uint8_t *msg, size_t msg_len)
{
	uint8_t digest[EVP_MAX_MD_SIZE], *der = NULL;
	unsigned int dlen = 0;
	EVP_PKEY_CTX *ctx = NULL;
	const EVP_MD *md = EVP_get_digestbyname(h->openssl_name);
	size_t der_len;
	int ok = -ENOMEM;

	if (!md || !EVP_Digest(msg, msg_len, digest, &dlen, md, NULL))
		return 0;
	if (signature_der(s, &der, &der_len))
		return -ENOMEM;
	ctx = EVP_PKEY_CTX_new(ak, NULL);
	if (ctx && EVP_PKEY_verify_init(ctx) > 0 && EVP_PKEY_CTX_set_signature_md(ctx, md) > 0 &&
	    (s->alg != TPM2_ALG_RSASSA || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0))
		ok = EVP_PKEY_verify(ctx, der, der_len, digest, dlen) == 1;
	EVP_PKEY_CTX_free(ctx);
	OPENSSL_free(der);
	return ok;
}

/* The PCR values of the file, checked against the quote's selection and digest. */
static int check_pcrs(const struct attest_quote_input *in, const struct tpm2_attest *a,
		      const struct imastream_hash_info *h, struct tpm2_pcr_values *v, char *why,
		      size_t whylen)
{
	uint8_t digest[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	EVP_MD_CTX *ctx;
	const char *err;
	int ok;

	if (in->pcrs_values ? tpm2_parse_pcrs_values(in->pcrs, in->pcrs_len, &a->pcrs, v, &err) :
			      tpm2_parse_pcrs_serialized(in->pcrs, in->pcrs_len, v, &err))
		return fail(why, whylen, "PCR values: the file holds %s", err);
	/* The values must be of the PCRs the quote selects, in its order. */
	if (v->sel.count != a->pcrs.count)
		return fail(why, whylen, "PCR values: the file selects other banks than the quote");
	for (uint32_t i = 0; i < a->pcrs.count; i++)
		for (unsigned int pcr = 0; pcr < 8 * TPM2_PCR_SELECT_MAX; pcr++)
			if (v->sel.banks[i].hash != a->pcrs.banks[i].hash ||
			    tpm2_pcr_selected(&v->sel.banks[i], pcr) !=
				    tpm2_pcr_selected(&a->pcrs.banks[i], pcr))
				return fail(
					why, whylen,
					"PCR values: the file selects other PCRs than the quote");
	ctx = EVP_MD_CTX_new();
	ok = ctx && EVP_DigestInit_ex(ctx, EVP_get_digestbyname(h->openssl_name), NULL);
	for (unsigned int i = 0; ok && i < v->n; i++)
		ok = EVP_DigestUpdate(ctx, v->value[i], v->size[i]);
	ok = ok && EVP_DigestFinal_ex(ctx, digest, &dlen);
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return fail(why, whylen, "PCR values: cannot hash them with %s", h->name);
	if (dlen != a->pcr_digest_len || CRYPTO_memcmp(digest, a->pcr_digest, dlen))
		return fail(why, whylen,
			    "PCR digest: the %s of the PCR values is not the quote's PCR digest "
			    "(values not the quoted ones)",
			    h->name);
	return 0;
}

/* The quoted values, bank by bank. */
static int fill_banks(const struct tpm2_pcr_values *v, struct attest_quote *q, char *why,
		      size_t whylen)
{
	unsigned int k = 0;
	bool pcr10 = false;

	memset(q, 0, sizeof(*q));
	for (uint32_t i = 0; i < v->sel.count; i++) {
		const struct tpm2_bank_select *b = &v->sel.banks[i];
		struct attest_bank *out = &q->bank[q->nbanks];
		const struct imastream_hash_info *h = imastream_hash_by_algo(
			tpm2_hash_algo(b->hash));
		char name[8];

		if (!h) {
			bool any = false;

			for (unsigned int pcr = 0; pcr < 8u * b->size; pcr++)
				any |= tpm2_pcr_selected(b, pcr);
			if (any)
				return fail(why, whylen,
					    "quote: it selects PCRs of a bank of unknown hash %s",
					    tpm2_alg_name(b->hash, name));
			continue;
		}
		out->algo = h->algo;
		out->digest_size = h->digest_size;
		for (unsigned int pcr = 0; pcr < 8u * b->size; pcr++) {
			if (!tpm2_pcr_selected(b, pcr))
				continue;
			if (pcr < 24) {
				out->selected |= 1u << pcr;
				memcpy(out->pcr[pcr], v->value[k], h->digest_size);
			}
			k++;
		}
		pcr10 |= out->selected >> ATTEST_IMA_PCR & 1;
		q->nbanks++;
	}
	if (!pcr10)
		return fail(why, whylen,
			    "PCR selection: the quote selects PCR %d in no bank; IMA extends it "
			    "(tpm2_quote -l sha256:%d)",
			    ATTEST_IMA_PCR, ATTEST_IMA_PCR);
	return 0;
}

int attest_quote_verify(const struct attest_quote_input *in, struct attest_quote *q, char *why,
			size_t whylen)
{
	static struct tpm2_pcr_values v; /* 33 KiB: not on the stack */
	const struct imastream_hash_info *h;
	struct tpm2_attest a;
	struct tpm2_signature s;
	EVP_PKEY *ak;
	const char *err;
	char name[8], got[2 * TPM2_MAX_DATA + 1], want[2 * TPM2_MAX_DATA + 1];
	bool rsa, ec;
	int ok;

	ak = load_ak(in->ak_pem, in->ak_len);
	if (!ak)
		return fail(why, whylen, "attestation key: not a PEM public key");
	rsa = EVP_PKEY_is_a(ak, "RSA");
	ec = EVP_PKEY_is_a(ak, "EC");
	if (!rsa && !ec) {
		fail(why, whylen,
		     "attestation key: an %s key, not RSA or EC, the types of a TPM attestation "
		     "key",
		     EVP_PKEY_get0_type_name(ak));
		EVP_PKEY_free(ak);
		return -EINVAL;
	}
	if (tpm2_parse_signature(in->sig, in->sig_len, &s, &err)) {
		EVP_PKEY_free(ak);
		return fail(why, whylen, "quote signature: the file holds %s", err);
	}
	/* keylime verifies rsassa with RSA keys and ecdsa with EC keys, no other pairs. */
	if ((rsa && s.alg != TPM2_ALG_RSASSA) || (ec && s.alg != TPM2_ALG_ECDSA)) {
		fail(why, whylen, "quote signature: an %s signature, but the attestation key is %s",
		     s.alg == TPM2_ALG_RSASSA ? "rsassa" :
		     s.alg == TPM2_ALG_ECDSA  ? "ecdsa" :
						"rsapss",
		     rsa ? "RSA (rsassa)" : "EC (ecdsa)");
		EVP_PKEY_free(ak);
		return -EINVAL;
	}
	h = imastream_hash_by_algo(tpm2_hash_algo(s.hash));
	if (!h) {
		EVP_PKEY_free(ak);
		return fail(why, whylen,
			    "quote signature: made with hash %s, which this check does not know",
			    tpm2_alg_name(s.hash, name));
	}
	ok = verify_signature(ak, &s, h, in->msg, in->msg_len);
	EVP_PKEY_free(ak);
	if (ok < 0)
		return fail(why, whylen, "quote signature: out of memory");
	if (!ok)
		return fail(why, whylen,
			    "quote signature: does not verify with the attestation key (a quote of "
			    "another TPM or key, or an altered quote)");
	if (tpm2_parse_attest(in->msg, in->msg_len, &a, &err))
		return fail(why, whylen, "quote: the message holds %s", err);
	if (a.magic != TPM2_GENERATED_VALUE)
		return fail(why, whylen, "quote: not made by a TPM (magic 0x%08x)", a.magic);
	if (a.extra_len != in->nonce_len || CRYPTO_memcmp(a.extra, in->nonce, in->nonce_len)) {
		hex(got, sizeof(got), a.extra, a.extra_len);
		hex(want, sizeof(want), in->nonce, in->nonce_len);
		return fail(
			why, whylen,
			"quote nonce: the quote's qualifying data is \"%s\", not the nonce \"%s\" "
			"(a replayed or stale quote)",
			got, want);
	}
	if (check_pcrs(in, &a, h, &v, why, whylen))
		return -EINVAL;
	return fill_banks(&v, q, why, whylen);
}
