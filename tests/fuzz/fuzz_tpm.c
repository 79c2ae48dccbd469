// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: the TPM quote parsers, tpm2-tools' PCR file and the measurement list reader with its replay. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attest/tpm.h"
#include "attest/tpm2-private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_selection(const struct tpm2_pcr_selection *s)
{
	if (s->count > TPM2_NUM_PCR_BANKS)
		abort();
	for (uint32_t i = 0; i < s->count; i++)
		if (s->banks[i].size > TPM2_PCR_SELECT_MAX)
			abort();
}

static char why[512];

static int replay_one(void *arg, const struct attest_measurement *m)
{
	if (!m->line || !m->template || m->thash_len > 64 || (m->data_len && !m->data))
		abort();
	return attest_replay_add(arg, m, why, sizeof(why));
}

/* A list against a quote whose banks are sha1 and sha256, PCRs 0-10 all zero. */
static void fuzz_list(const uint8_t *data, size_t size)
{
	static struct attest_quote q = {
		.bank = { { .algo = 2, .digest_size = 20, .selected = 0x7ff },
			  { .algo = 4, .digest_size = 32, .selected = 0x7ff } },
		.nbanks = 2,
	};
	struct attest_replay *r;
	int err;

	why[0] = '\0';
	if (attest_replay_new(&q, &r))
		return;
	err = attest_list_walk(data, size, replay_one, r, NULL, why, sizeof(why));
	if (!err)
		attest_replay_end(r, why, sizeof(why));
	else if (!why[0])
		abort();
	attest_replay_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tpm2_pcr_values v;
	struct tpm2_pcr_selection sel;
	struct tpm2_signature sig;
	struct tpm2_attest a;
	const char *err = NULL;

	if (!size)
		return 0;
	/* The first byte picks the parser. */
	switch (data[0] % 5) {
	case 0:
		if (!tpm2_parse_attest(data + 1, size - 1, &a, &err)) {
			check_selection(&a.pcrs);
			if (a.signer_len > TPM2_MAX_NAME || a.extra_len > TPM2_MAX_DATA ||
			    a.pcr_digest_len > TPM2_MAX_DIGEST)
				abort();
			/* The quote's selection reads a values file of any bytes. */
			tpm2_parse_pcrs_values(data + 1, size - 1, &a.pcrs, &v, &err);
		} else if (!err) {
			abort();
		}
		break;
	case 1:
		if (!tpm2_parse_signature(data + 1, size - 1, &sig, &err) &&
		    (sig.sig_len > TPM2_MAX_RSA_BYTES || sig.r_len > TPM2_MAX_ECC_BYTES ||
		     sig.s_len > TPM2_MAX_ECC_BYTES))
			abort();
		break;
	case 2:
		if (!tpm2_parse_pcr_selection(data + 1, size - 1, &sel, &err))
			check_selection(&sel);
		break;
	case 3:
		if (!tpm2_parse_pcrs_serialized(data + 1, size - 1, &v, &err)) {
			check_selection(&v.sel);
			if (v.n > TPM2_NUM_PCR_BANKS * TPM2_MAX_PCRS)
				abort();
		}
		break;
	default:
		fuzz_list(data + 1, size - 1);
	}
	return 0;
}
