/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The TPM 2.0 structures of a quote, as tpm2_quote writes them, parsed by attest/ alone. */
#ifndef IMASTREAM_ATTEST_TPM2_PRIVATE_H
#define IMASTREAM_ATTEST_TPM2_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TPM_ALG_ID values (TPM 2.0 Part 2, Table 9) and limits of tss2's tss2_tpm2_types.h. */
#define TPM2_ALG_SHA1 0x0004
#define TPM2_ALG_SHA256 0x000b
#define TPM2_ALG_SHA384 0x000c
#define TPM2_ALG_SHA512 0x000d
#define TPM2_ALG_NULL 0x0010
#define TPM2_ALG_SM3_256 0x0012
#define TPM2_ALG_RSASSA 0x0014
#define TPM2_ALG_RSAPSS 0x0016
#define TPM2_ALG_ECDSA 0x0018
#define TPM2_GENERATED_VALUE 0xff544347u /* TPMS_ATTEST.magic: made by a TPM */
#define TPM2_ST_ATTEST_QUOTE 0x8018
#define TPM2_NUM_PCR_BANKS 16
#define TPM2_PCR_SELECT_MAX 4 /* bytes of a bank's PCR bitmap */
#define TPM2_MAX_PCRS 32
#define TPM2_MAX_DIGEST 64 /* sizeof(TPMU_HA) */
#define TPM2_MAX_NAME 66   /* sizeof(TPMU_NAME) */
#define TPM2_MAX_DATA 66   /* TPM2B_DATA: sizeof(TPMT_HA) */
#define TPM2_MAX_RSA_BYTES 512
#define TPM2_MAX_ECC_BYTES 128

/* TPMS_PCR_SELECTION: one bank and its PCRs. */
struct tpm2_bank_select {
	uint16_t hash;
	uint8_t size; /* sizeofSelect */
	uint8_t select[TPM2_PCR_SELECT_MAX];
};

/* TPML_PCR_SELECTION. */
struct tpm2_pcr_selection {
	uint32_t count;
	struct tpm2_bank_select banks[TPM2_NUM_PCR_BANKS];
};

static inline bool tpm2_pcr_selected(const struct tpm2_bank_select *b, unsigned int pcr)
{
	return pcr / 8 < b->size && (b->select[pcr / 8] >> (pcr % 8) & 1);
}

/* TPMS_ATTEST of a quote (TPMS_QUOTE_INFO attested). */
struct tpm2_attest {
	uint32_t magic;
	uint16_t type;
	uint16_t signer_len, extra_len, pcr_digest_len;
	uint8_t signer[TPM2_MAX_NAME]; /* qualifiedSigner */
	uint8_t extra[TPM2_MAX_DATA];  /* extraData: the verifier's nonce */
	uint64_t clock;
	uint32_t reset_count, restart_count;
	uint8_t safe;
	uint64_t firmware;
	struct tpm2_pcr_selection pcrs;
	uint8_t pcr_digest[TPM2_MAX_DIGEST];
};

/* TPMT_SIGNATURE of RSASSA, RSAPSS or ECDSA. */
struct tpm2_signature {
	uint16_t alg, hash;
	uint16_t sig_len;      /* RSA */
	uint16_t r_len, s_len; /* ECDSA */
	uint8_t sig[TPM2_MAX_RSA_BYTES];
	uint8_t r[TPM2_MAX_ECC_BYTES], s[TPM2_MAX_ECC_BYTES];
};

/*
 * Parsers of marshalled (big-endian) structures.  Each reads exactly @len bytes: a short
 * buffer, a size past its bound or bytes left over are -EINVAL with @why set.
 */
int tpm2_parse_pcr_selection(const uint8_t *buf, size_t len, struct tpm2_pcr_selection *s,
			     const char **why);
/* A TPMS_ATTEST whose type is a quote; the magic is read, not judged. */
int tpm2_parse_attest(const uint8_t *buf, size_t len, struct tpm2_attest *a, const char **why);
int tpm2_parse_signature(const uint8_t *buf, size_t len, struct tpm2_signature *s,
			 const char **why);

/* The quoted PCR values, in selection order: bank by bank, PCR by PCR. */
struct tpm2_pcr_values {
	struct tpm2_pcr_selection sel;
	unsigned int n;
	uint16_t size[TPM2_NUM_PCR_BANKS * TPM2_MAX_PCRS];
	uint8_t value[TPM2_NUM_PCR_BANKS * TPM2_MAX_PCRS][TPM2_MAX_DIGEST];
};

/*
 * The PCR file tpm2_quote -o writes: -F serialized (the default of tpm2-tools 5.x: its
 * TPML_PCR_SELECTION and TPML_DIGESTs as laid out in memory, little-endian) or -F values
 * (the digests alone, in @quoted's order, which fills in v->sel).
 */
int tpm2_parse_pcrs_serialized(const uint8_t *buf, size_t len, struct tpm2_pcr_values *v,
			       const char **why);
int tpm2_parse_pcrs_values(const uint8_t *buf, size_t len, const struct tpm2_pcr_selection *quoted,
			   struct tpm2_pcr_values *v, const char **why);

/* The imastream hash id of a TPM_ALG_ID, or 0; and back. */
int tpm2_hash_algo(uint16_t alg);
uint16_t tpm2_alg_of_hash(int algo);
/* "sha256", or "0x1234" in @buf (8 bytes). */
const char *tpm2_alg_name(uint16_t alg, char buf[8]);

#endif /* IMASTREAM_ATTEST_TPM2_PRIVATE_H */
