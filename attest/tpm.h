/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What attest/ offers cli/ for attest check with a TPM: the quote verified, the measurement list read and replayed. */
#ifndef IMASTREAM_ATTEST_TPM_H
#define IMASTREAM_ATTEST_TPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* IMA extends this PCR (CONFIG_IMA_MEASURE_PCR_IDX); keylime's IMA_PCR. */
#define ATTEST_IMA_PCR 10
#define ATTEST_MAX_BANKS 16

/* The files tpm2_quote writes, the attestation key, and the verifier's nonce. */
struct attest_quote_input {
	const uint8_t *msg; /* -m: TPMS_ATTEST */
	size_t msg_len;
	const uint8_t *sig; /* -s: TPMT_SIGNATURE (-f tss, the default) */
	size_t sig_len;
	const uint8_t *pcrs; /* -o: the PCR values */
	size_t pcrs_len;
	bool pcrs_values;   /* -F values; else -F serialized (the default) */
	const char *ak_pem; /* the attestation key's public key, PEM */
	size_t ak_len;
	const uint8_t *nonce;
	size_t nonce_len;
};

/* One bank of the verified quote: the values of the PCRs it selects. */
struct attest_bank {
	int algo; /* imastream hash id */
	unsigned int digest_size;
	uint32_t selected; /* bit N: PCR N was quoted */
	uint8_t pcr[24][64];
};

struct attest_quote {
	struct attest_bank bank[ATTEST_MAX_BANKS];
	unsigned int nbanks;
};

/*
 * Checks, in keylime's order, the key, the signature over the TPMS_ATTEST, the magic,
 * the nonce, the PCR values against the quoted PCR digest, and that PCR 10 is quoted.
 * Return: 0 and @q filled; -EINVAL with @why "CHECK: what failed" (one line).
 */
int attest_quote_verify(const struct attest_quote_input *in, struct attest_quote *q, char *why,
			size_t whylen);

/* One entry of a measurement list, whichever format it came in. */
struct attest_measurement {
	unsigned long index; /* from 1 */
	unsigned int pcr;
	const char *template;
	const uint8_t *thash; /* the template hash the list records */
	size_t thash_len;
	const uint8_t *data; /* the bytes the template hash is the hash of */
	size_t data_len;
	const char *line; /* the entry as the ascii list writes it */
};

/*
 * Reads the measurement list in @buf: ascii (ascii_runtime_measurements*) or binary
 * (binary_runtime_measurements*, little-endian as the kernel writes it on x86 and arm64
 * or with ima_canonical_fmt), told apart by its first bytes.  Calls @fn for every entry
 * in order; stops at the first non-zero it returns and returns that.  @ascii (may be
 * NULL) gets each entry's ascii line and a newline.
 * Return: 0; what @fn returned; -EINVAL with @why "LOG CHECK: entry N: ..." for a
 * malformed entry; -ENOMEM.
 */
int attest_list_walk(const uint8_t *buf, size_t len,
		     int (*fn)(void *arg, const struct attest_measurement *m), void *arg,
		     FILE *ascii, char *why, size_t whylen);

/*
 * The replay of a list against a verified quote: every bank of the quote that selects
 * PCR 10, as keylime does it (each entry's template hash computed for the bank from its
 * data; a violation, logged as zeros, extends 0xff bytes).
 */
struct attest_replay;
int attest_replay_new(const struct attest_quote *q, struct attest_replay **ret);
void attest_replay_free(struct attest_replay *r);
/*
 * One entry: its PCR, its recorded template hash against its data, boot_aggregate against
 * the quoted PCRs 0-9 (0-7 for sha1), then the extend.
 * Return: 0; -EBADMSG with @why "CHECK: entry N: ..."; -ENOMEM.
 */
int attest_replay_add(struct attest_replay *r, const struct attest_measurement *m, char *why,
		      size_t whylen);
/* Whether an entry was the kernel's boot_aggregate, checked against the quoted PCRs. */
bool attest_replay_boot_aggregate_checked(const struct attest_replay *r);
/* The end of the list: PCR 10 of every bank equals the replay. Return: 0, -EBADMSG with @why. */
int attest_replay_end(struct attest_replay *r, char *why, size_t whylen);

/* The template data of the legacy ima template as the template hash covers it. */
#define ATTEST_IMA_NAME_MAX 255
#define ATTEST_IMA_DATA_LEN (20 + ATTEST_IMA_NAME_MAX + 1)

#endif /* IMASTREAM_ATTEST_TPM_H */
