// SPDX-License-Identifier: LGPL-2.1-or-later
/* Known-answer tests of the TPM quote parsers, the quote check, the list reader and the PCR 10 replay, on quotes swtpm made. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attest/tpm.h"
#include "attest/tpm2-private.h"
#include "tests/unit/test.h"

/*
 * Made by swtpm 0.7.1 and tpm2-tools 5.4: PCR 10 of the sha256 bank extended with the
 * two entries of LIST (boot_aggregate of PCRs 0-9 all zero, then /usr/bin/a), then
 * tpm2_quote -l sha256:0,1,2,3,4,5,6,7,8,9,10 -q 6b6174 -g sha256 -F values with an RSA
 * (rsassa) and an EC (ecdsa, P-256) AK; BINARY is LIST as binary_runtime_measurements.
 */
static const char R_MSG[] = "ff54434780180022000beb43d6003d4bd3d18c5f8de42a18ac1a9215947cb781"
			    "f151aec0c2a6d7d1bf8b00036b61740000000000000273000000010000000001"
			    "201910230016363600000001000b03ff07000020acc47af8c5ea46ea41f94e32"
			    "bd03db1f3e5dd492c157b08b40e3eb9f84f38d14";

static const char R_SIG[] = "0014000b0100c49d2e71b4309f3208717ea6ff130981b4034ff6fc6b05a917e3"
			    "189a70a6d9aac567c7fb84a9ab42e74b6e9f834c635dceead9d56b2679dc64b6"
			    "7f42fe7bb1db7a72843096ad29ff5591b049ed7517170d07d89a875c102b0b47"
			    "4c2423a32e21b8a6f1863319b13dad04d78e3f96b64a0cd215b34ae92e425bcc"
			    "2c1a152b6c2fd24904e285272b0eb0bca9c97c79102334155c6e9b9c0dd24a39"
			    "1ba78b6a962e9483743d524922f127d23f973c707d9f0fc395ef630b2afd11d0"
			    "d0e3167292e6659a24581f33c88c7bf98c4c69fa70ea2ac8b272dfd9a8267dcd"
			    "b42bda723ec6283338502e471b6ad6be1ff055be917e925751663e9df3e7b8d7"
			    "92c564d26cb7";

static const char E_MSG[] = "ff54434780180022000b85d5c73db53970dba5c4b0c41c4f039963b303856951"
			    "988a77f5a73da8f2a51500036b6174000000000000029d000000010000000001"
			    "201910230016363600000001000b03ff07000020acc47af8c5ea46ea41f94e32"
			    "bd03db1f3e5dd492c157b08b40e3eb9f84f38d14";

static const char E_SIG[] = "0018000b0020f3bb9ce03edd990155c777a83f86c40a08dcb78791aae3a29f6b"
			    "bbfcd1372977002014a5097e3e032b21fc773acd8a536a66c08736b30e7af45f"
			    "cd7990b2ccf54899";

static const char PCRS[] = "0000000000000000000000000000000000000000000000000000000000000000"
			   "0000000000000000000000000000000000000000000000000000000000000000"
			   "0000000000000000000000000000000000000000000000000000000000000000"
			   "0000000000000000000000000000000000000000000000000000000000000000"
			   "0000000000000000000000000000000000000000000000000000000000000000"
			   "0000000000000000000000000000000000000000000000000000000000000000"
			   "0000000000000000000000000000000000000000000000000000000000000000"
			   "0000000000000000000000000000000000000000000000000000000000000000"
			   "0000000000000000000000000000000000000000000000000000000000000000"
			   "0000000000000000000000000000000000000000000000000000000000000000"
			   "5cfd76a25599a4ebf12c7ebf3f892d86f14c916c45d44dc9a2887a3ba2c848ce";

static const char R_AK[] = "-----BEGIN PUBLIC KEY-----\n"
			   "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA1W+o6ri8TGfAJ6nenIRU\n"
			   "SGyFTkWU24snK9QAAZmQUPU1W7VtFGiaQBvCPQPTiRiajAc/pcfN7ew1m+Pvkd3p\n"
			   "P6AWEXtOqO3eotq5GhOWdMCgoryPIcwZ9mw4suJ4ssVWcvaP7obv7bpU5LAn0tV6\n"
			   "EDs/hSv9QcxW/hey5u6fKIKpcJrXfCiy1PQ1Y9rtx0HbZCud4yrE2a87d2K940g1\n"
			   "poRkXBfugKR2TNcIYFvewTTTgUnd8l1UO/IQ4gQH8XdLthJH6zCD/UMGIW2b9sGP\n"
			   "/jZQy6Khr62pW52JpRMYbryQm/SsgXPPraUXFMcMT18ZlXQAxcKtp2dKxhMrW3nZ\n"
			   "LQIDAQAB\n"
			   "-----END PUBLIC KEY-----\n";

static const char E_AK[] = "-----BEGIN PUBLIC KEY-----\n"
			   "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEquFRu+12aDXTeFJS/eeEH6VZR0/\n"
			   "9HsCOWGTeb1P1x0XYkOpuXn+qJ50voj32RRJSa9IKpIt1CKUOwabV8zKnQ==\n"
			   "-----END PUBLIC KEY-----\n";

static const char LIST[] =
	"10 6bdad7efa602f84ca31ffe3f11ff7c476e25dcdd ima-ng "
	"sha256:7b6436b0c98f62380866d9432c2af0ee08ce16a171bda6951aecd95ee1307d61 boot_aggregate\n"
	"10 6444a311ade0f1901a30bd1ed7a1f076755e416c ima-ng "
	"sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb /usr/bin/a\n";

static const char BINARY[] = "0a0000006bdad7efa602f84ca31ffe3f11ff7c476e25dcdd06000000696d612d"
			     "6e673f000000280000007368613235363a007b6436b0c98f62380866d9432c2a"
			     "f0ee08ce16a171bda6951aecd95ee1307d610f000000626f6f745f6167677265"
			     "67617465000a0000006444a311ade0f1901a30bd1ed7a1f076755e416c060000"
			     "00696d612d6e673b000000280000007368613235363a00ca978112ca1bbdcafa"
			     "c231b39a23dc4da786eff8147c4e72b9807785afee48bb0b0000002f7573722f"
			     "62696e2f6100";

static uint8_t *unhex(const char *hex, size_t *len)
{
	uint8_t *b = malloc(strlen(hex) / 2 + 1);

	ASSERT(b);
	*len = test_unhex(hex, b, strlen(hex) / 2);
	return b;
}

static void test_parse_attest(void)
{
	struct tpm2_attest a;
	const char *why;
	size_t len;
	uint8_t *msg = unhex(R_MSG, &len);

	ASSERT_EQ(tpm2_parse_attest(msg, len, &a, &why), 0);
	ASSERT_EQ(a.magic, TPM2_GENERATED_VALUE);
	ASSERT_EQ(a.type, TPM2_ST_ATTEST_QUOTE);
	ASSERT_EQ(a.signer_len, 34);
	ASSERT_EQ(a.extra_len, 3);
	ASSERT_MEM_EQ(a.extra, "kat", 3);
	ASSERT_EQ(a.pcrs.count, 1);
	ASSERT_EQ(a.pcrs.banks[0].hash, TPM2_ALG_SHA256);
	ASSERT_EQ(a.pcrs.banks[0].size, 3);
	ASSERT(tpm2_pcr_selected(&a.pcrs.banks[0], 0) && tpm2_pcr_selected(&a.pcrs.banks[0], 10));
	ASSERT(!tpm2_pcr_selected(&a.pcrs.banks[0], 11) &&
	       !tpm2_pcr_selected(&a.pcrs.banks[0], 31));
	ASSERT_EQ(a.pcr_digest_len, 32);
	/* Every shorter message is cut short; a byte more is refused. */
	for (size_t n = 0; n < len; n++)
		ASSERT_EQ(tpm2_parse_attest(msg, n, &a, &why), -EINVAL);
	msg = realloc(msg, len + 1);
	ASSERT(msg);
	msg[len] = 0;
	ASSERT_EQ(tpm2_parse_attest(msg, len + 1, &a, &why), -EINVAL);
	ASSERT(strstr(why, "after its end"));
	/* Not a quote: TPM_ST_ATTEST_CERTIFY. */
	msg[5] = 0x17;
	ASSERT_EQ(tpm2_parse_attest(msg, len, &a, &why), -EINVAL);
	ASSERT(strstr(why, "not a quote"));
	free(msg);
}

static void test_parse_signature(void)
{
	struct tpm2_signature s;
	const char *why;
	size_t len;
	uint8_t *sig = unhex(R_SIG, &len);

	ASSERT_EQ(tpm2_parse_signature(sig, len, &s, &why), 0);
	ASSERT_EQ(s.alg, TPM2_ALG_RSASSA);
	ASSERT_EQ(s.hash, TPM2_ALG_SHA256);
	ASSERT_EQ(s.sig_len, 256);
	for (size_t n = 0; n < len; n++)
		ASSERT_EQ(tpm2_parse_signature(sig, n, &s, &why), -EINVAL);
	free(sig);
	sig = unhex(E_SIG, &len);
	ASSERT_EQ(tpm2_parse_signature(sig, len, &s, &why), 0);
	ASSERT_EQ(s.alg, TPM2_ALG_ECDSA);
	ASSERT_EQ(s.r_len, 32);
	ASSERT_EQ(s.s_len, 32);
	for (size_t n = 0; n < len; n++)
		ASSERT_EQ(tpm2_parse_signature(sig, n, &s, &why), -EINVAL);
	/* An r longer than any curve's. */
	{
		uint8_t big[6 + 130] = { 0x00, 0x18, 0x00, 0x0b, 0x00, 0x81 };

		ASSERT_EQ(tpm2_parse_signature(big, sizeof(big), &s, &why), -EINVAL);
		ASSERT(strstr(why, "longer than 128"));
	}
	{
		static const uint8_t null[] = { 0x00, 0x10 }, hmac[] = { 0x00, 0x05, 0x00, 0x0b };

		ASSERT_EQ(tpm2_parse_signature(null, sizeof(null), &s, &why), -EINVAL);
		ASSERT(strstr(why, "not signed"));
		ASSERT_EQ(tpm2_parse_signature(hmac, sizeof(hmac), &s, &why), -EINVAL);
		ASSERT(strstr(why, "other than rsassa"));
	}
	free(sig);
}

static void test_parse_selection(void)
{
	static const uint8_t two[] = { 0, 0, 0,	   2,	 0x00, 0x04, 3,	   0,
				       4, 0, 0x00, 0x0b, 3,    0xff, 0x07, 0 };
	static const uint8_t dup[] = { 0, 0, 0,	   2,	 0x00, 0x0b, 3,	   0,
				       4, 0, 0x00, 0x0b, 3,    0xff, 0x07, 0 };
	static const uint8_t wide[] = { 0, 0, 0, 1, 0x00, 0x0b, 5, 1, 2, 3, 4, 5 };
	static const uint8_t many[] = { 0, 0, 0, 17 };
	struct tpm2_pcr_selection s;
	const char *why;

	ASSERT_EQ(tpm2_parse_pcr_selection(two, sizeof(two), &s, &why), 0);
	ASSERT_EQ(s.count, 2);
	ASSERT_EQ(s.banks[0].hash, TPM2_ALG_SHA1);
	ASSERT(tpm2_pcr_selected(&s.banks[0], 10) && !tpm2_pcr_selected(&s.banks[0], 9));
	ASSERT(tpm2_pcr_selected(&s.banks[1], 0) && tpm2_pcr_selected(&s.banks[1], 10));
	for (size_t n = 0; n < sizeof(two); n++)
		ASSERT_EQ(tpm2_parse_pcr_selection(two, n, &s, &why), -EINVAL);
	ASSERT_EQ(tpm2_parse_pcr_selection(dup, sizeof(dup), &s, &why), -EINVAL);
	ASSERT(strstr(why, "twice"));
	ASSERT_EQ(tpm2_parse_pcr_selection(wide, sizeof(wide), &s, &why), -EINVAL);
	ASSERT(strstr(why, "longer than 4"));
	ASSERT_EQ(tpm2_parse_pcr_selection(many, sizeof(many), &s, &why), -EINVAL);
	ASSERT(strstr(why, "16 banks"));
}

/* PCRS as tpm2-tools' serialized layout: selection, 16 banks of 8 bytes, lists of 8 digests. */
static uint8_t *serialized(const uint8_t *values, size_t *len)
{
	size_t size = 4 + 16 * 8 + 4 + 2 * (4 + 8 * 66);
	uint8_t *b = calloc(1, size);

	ASSERT(b);
	b[0] = 1;
	b[4] = 0x0b; /* sha256, little-endian */
	b[6] = 3;
	b[7] = 0xff;
	b[8] = 0x07;
	b[132] = 2;
	for (unsigned int i = 0; i < 11; i++) {
		uint8_t *list = b + 136 + (i / 8) * (4 + 8 * 66), *d = list + 4 + (i % 8) * 66;

		list[0]++;
		d[0] = 32;
		memcpy(d + 2, values + 32 * i, 32);
	}
	*len = size;
	return b;
}

static void test_parse_pcrs(void)
{
	static struct tpm2_pcr_values v, w;
	struct tpm2_attest a;
	const char *why;
	size_t len, mlen, slen;
	uint8_t *values = unhex(PCRS, &len), *msg = unhex(R_MSG, &mlen), *ser;

	ASSERT_EQ(len, 11 * 32);
	ASSERT_EQ(tpm2_parse_attest(msg, mlen, &a, &why), 0);
	ASSERT_EQ(tpm2_parse_pcrs_values(values, len, &a.pcrs, &v, &why), 0);
	ASSERT_EQ(v.n, 11);
	ser = serialized(values, &slen);
	ASSERT_EQ(tpm2_parse_pcrs_serialized(ser, slen, &w, &why), 0);
	ASSERT_EQ(w.n, 11);
	ASSERT_EQ(w.sel.count, 1);
	for (unsigned int i = 0; i < 11; i++)
		ASSERT_MEM_EQ(w.value[i], v.value[i], 32);
	ASSERT_EQ(tpm2_parse_pcrs_values(values, len - 1, &a.pcrs, &v, &why), -EINVAL);
	ASSERT_EQ(tpm2_parse_pcrs_serialized(ser, slen - 1, &w, &why), -EINVAL);
	/* A value of the wrong size, or one value missing. */
	ser[136 + 4] = 20;
	ASSERT_EQ(tpm2_parse_pcrs_serialized(ser, slen, &w, &why), -EINVAL);
	ser[136 + 4] = 32;
	ser[136 + 532]--;
	ASSERT_EQ(tpm2_parse_pcrs_serialized(ser, slen, &w, &why), -EINVAL);
	ASSERT(strstr(why, "fewer PCR values"));
	free(ser);
	free(values);
	free(msg);
}

struct kat {
	struct attest_quote_input in;
	uint8_t *bufs[3];
};

static void kat_open(struct kat *k, bool ecc, const char *nonce)
{
	static uint8_t n[64];

	memset(k, 0, sizeof(*k));
	k->bufs[0] = unhex(ecc ? E_MSG : R_MSG, &k->in.msg_len);
	k->bufs[1] = unhex(ecc ? E_SIG : R_SIG, &k->in.sig_len);
	k->bufs[2] = unhex(PCRS, &k->in.pcrs_len);
	k->in.msg = k->bufs[0];
	k->in.sig = k->bufs[1];
	k->in.pcrs = k->bufs[2];
	k->in.pcrs_values = true;
	k->in.ak_pem = ecc ? E_AK : R_AK;
	k->in.ak_len = strlen(k->in.ak_pem);
	k->in.nonce_len = test_unhex(nonce, n, sizeof(n));
	k->in.nonce = n;
}

static void kat_close(struct kat *k)
{
	for (int i = 0; i < 3; i++)
		free(k->bufs[i]);
}

static int verify(struct kat *k, char *why, size_t whylen)
{
	static struct attest_quote q;

	why[0] = '\0';
	return attest_quote_verify(&k->in, &q, why, whylen);
}

static void test_quote_verify(void)
{
	struct kat k;
	char why[512];

	for (int ecc = 0; ecc < 2; ecc++) {
		kat_open(&k, ecc, "6b6174");
		ASSERT_EQ(verify(&k, why, sizeof(why)), 0);
		kat_close(&k);
		kat_open(&k, ecc, "6b6175");
		ASSERT_EQ(verify(&k, why, sizeof(why)), -EINVAL);
		ASSERT(strstr(why, "quote nonce:"));
		kat_close(&k);
		/* One bit of the clock changed: no longer what the key signed. */
		kat_open(&k, ecc, "6b6174");
		k.bufs[0][50] ^= 1;
		ASSERT_EQ(verify(&k, why, sizeof(why)), -EINVAL);
		ASSERT(strstr(why, "quote signature: does not verify"));
		kat_close(&k);
		/* PCR 10 is not the quoted one. */
		kat_open(&k, ecc, "6b6174");
		k.bufs[2][10 * 32] ^= 1;
		ASSERT_EQ(verify(&k, why, sizeof(why)), -EINVAL);
		ASSERT(strstr(why, "PCR digest:"));
		kat_close(&k);
		/* The other AK. */
		kat_open(&k, ecc, "6b6174");
		k.in.ak_pem = ecc ? R_AK : E_AK;
		k.in.ak_len = strlen(k.in.ak_pem);
		ASSERT_EQ(verify(&k, why, sizeof(why)), -EINVAL);
		ASSERT(strstr(why, "but the attestation key is"));
		k.in.ak_pem = "-----BEGIN PUBLIC KEY-----\n";
		k.in.ak_len = strlen(k.in.ak_pem);
		ASSERT_EQ(verify(&k, why, sizeof(why)), -EINVAL);
		ASSERT(strstr(why, "attestation key: not a PEM public key"));
		kat_close(&k);
	}
}

struct replay_arg {
	struct attest_replay *r;
	char why[512];
	unsigned long n;
};

static int replay_one(void *arg, const struct attest_measurement *m)
{
	struct replay_arg *a = arg;

	a->n++;
	return attest_replay_add(a->r, m, a->why, sizeof(a->why));
}

/* 0 when @list replays to the KAT quote, else the error with @why. */
static int replay(const uint8_t *list, size_t len, char *why, size_t whylen)
{
	static struct attest_quote q;
	struct replay_arg a = { 0 };
	struct kat k;
	int err;

	kat_open(&k, false, "6b6174");
	ASSERT_EQ(attest_quote_verify(&k.in, &q, why, whylen), 0);
	kat_close(&k);
	ASSERT_EQ(attest_replay_new(&q, &a.r), 0);
	err = attest_list_walk(list, len, replay_one, &a, NULL, why, whylen);
	if (err == -EBADMSG)
		snprintf(why, whylen, "%s", a.why);
	if (!err)
		err = attest_replay_end(a.r, why, whylen);
	attest_replay_free(a.r);
	return err;
}

static void test_replay(void)
{
	char why[512], *list = strdup(LIST), *p;
	size_t blen;
	uint8_t *bin = unhex(BINARY, &blen);

	ASSERT(list);
	ASSERT_EQ(replay((const uint8_t *)LIST, strlen(LIST), why, sizeof(why)), 0);
	ASSERT_EQ(replay(bin, blen, why, sizeof(why)), 0);
	/* The last entry gone. */
	*strchr(list, '\n') = '\0';
	ASSERT_EQ(replay((const uint8_t *)list, strlen(list), why, sizeof(why)), -EBADMSG);
	ASSERT(strstr(why, "replay:") && strstr(why, "truncated"));
	/* /usr/bin/a becomes /usr/bin/b. */
	strcpy(list, LIST);
	p = strstr(list, "/usr/bin/a");
	p[9] = 'b';
	ASSERT_EQ(replay((const uint8_t *)list, strlen(list), why, sizeof(why)), -EBADMSG);
	ASSERT(strstr(why, "template hash: entry 2:"));
	/* The same in the binary list. */
	bin[blen - 2] = 'b';
	ASSERT_EQ(replay(bin, blen, why, sizeof(why)), -EBADMSG);
	ASSERT(strstr(why, "template hash: entry 2:"));
	bin[blen - 2] = 'a';
	/* Cut short anywhere inside an entry: refused, never read past the end. */
	for (size_t n = 1; n < blen; n++) {
		int err = replay(bin, n, why, sizeof(why));

		ASSERT(err == -EINVAL || err == -EBADMSG);
	}
	/* Big-endian: the first PCR swapped. */
	bin[0] = 0;
	bin[3] = 10;
	ASSERT_EQ(replay(bin, blen, why, sizeof(why)), -EINVAL);
	ASSERT(strstr(why, "byte order"));
	free(bin);
	free(list);
}

int main(void)
{
	test_parse_attest();
	test_parse_signature();
	test_parse_selection();
	test_parse_pcrs();
	test_quote_verify();
	test_replay();
	printf("PASS\n");
	return 0;
}
