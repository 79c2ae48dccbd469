// SPDX-License-Identifier: LGPL-2.1-or-later
/* Reads the PCR values file tpm2_quote -o writes, in its serialized and values formats. */
#include <errno.h>
#include <string.h>

#include "attest/tpm2-private.h"
#include "imastream/hash.h"

/*
 * -F serialized is tpm2-tools' fwrite() of its structs (lib/pcr.c, pcr_fwrite_serialized()):
 * TPML_PCR_SELECTION (a 32-bit count, then 16 TPMS_PCR_SELECTION of 8 bytes: hash, size,
 * a 4-byte bitmap, a padding byte), a 32-bit count of TPML_DIGEST, and that many
 * TPML_DIGEST (a 32-bit count, then 8 TPM2B_DIGEST of a 16-bit size and 64 bytes).
 * Integers are little-endian; padding bytes are whatever memory held and are not read.
 */
#define SER_BANK 8
#define SER_SELECTION (4 + TPM2_NUM_PCR_BANKS * SER_BANK)
#define SER_DIGESTS_PER_LIST 8
#define SER_DIGEST (2 + TPM2_MAX_DIGEST)
#define SER_LIST (4 + SER_DIGESTS_PER_LIST * SER_DIGEST)

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* How many PCRs @sel selects; -1 for a bank of an unknown hash. */
static long selected(const struct tpm2_pcr_selection *sel, size_t *bytes)
{
	long n = 0;

	*bytes = 0;
	for (uint32_t i = 0; i < sel->count; i++) {
		const struct imastream_hash_info *h = imastream_hash_by_algo(
			tpm2_hash_algo(sel->banks[i].hash));

		for (unsigned int pcr = 0; pcr < 8u * sel->banks[i].size; pcr++) {
			if (!tpm2_pcr_selected(&sel->banks[i], pcr))
				continue;
			if (!h)
				return -1;
			n++;
			*bytes += h->digest_size;
		}
	}
	return n;
}

int tpm2_parse_pcrs_serialized(const uint8_t *buf, size_t len, struct tpm2_pcr_values *v,
			       const char **why)
{
	uint32_t lists;
	size_t bytes;
	long want;

	memset(v, 0, sizeof(*v));
	if (len < SER_SELECTION + 4) {
		*why = "shorter than tpm2-tools' serialized PCR selection";
		return -EINVAL;
	}
	v->sel.count = le32(buf);
	if (v->sel.count > TPM2_NUM_PCR_BANKS) {
		*why = "a PCR selection of more than 16 banks (not tpm2_quote -F serialized?)";
		return -EINVAL;
	}
	for (uint32_t i = 0; i < v->sel.count; i++) {
		const uint8_t *b = buf + 4 + i * SER_BANK;

		v->sel.banks[i].hash = le16(b);
		v->sel.banks[i].size = b[2];
		if (b[2] > TPM2_PCR_SELECT_MAX) {
			*why = "a PCR bitmap longer than 4 bytes";
			return -EINVAL;
		}
		memcpy(v->sel.banks[i].select, b + 3, b[2]);
	}
	lists = le32(buf + SER_SELECTION);
	if (lists > TPM2_MAX_PCRS || len != SER_SELECTION + 4 + (size_t)lists * SER_LIST) {
		*why = "not the size tpm2-tools' serialized format has for its count of digest "
		       "lists";
		return -EINVAL;
	}
	want = selected(&v->sel, &bytes);
	if (want < 0) {
		*why = "a bank of a hash algorithm this check does not know";
		return -EINVAL;
	}
	for (uint32_t l = 0; l < lists; l++) {
		const uint8_t *list = buf + SER_SELECTION + 4 + (size_t)l * SER_LIST;
		uint32_t count = le32(list);

		if (count > SER_DIGESTS_PER_LIST) {
			*why = "a digest list of more than 8 digests";
			return -EINVAL;
		}
		for (uint32_t d = 0; d < count; d++) {
			const uint8_t *dig = list + 4 + d * SER_DIGEST;
			uint16_t size = le16(dig);

			if (size > TPM2_MAX_DIGEST || v->n >= (unsigned long)want) {
				*why = size > TPM2_MAX_DIGEST ?
					       "a PCR value longer than 64 bytes" :
					       "more PCR values than its selection selects";
				return -EINVAL;
			}
			v->size[v->n] = size;
			memcpy(v->value[v->n], dig + 2, size);
			v->n++;
		}
	}
	if (v->n != (unsigned long)want) {
		*why = "fewer PCR values than its selection selects";
		return -EINVAL;
	}
	/* Each value has its bank's size. */
	for (uint32_t i = 0, k = 0; i < v->sel.count; i++)
		for (unsigned int pcr = 0; pcr < 8u * v->sel.banks[i].size; pcr++)
			if (tpm2_pcr_selected(&v->sel.banks[i], pcr) &&
			    v->size[k++] !=
				    imastream_hash_by_algo(tpm2_hash_algo(v->sel.banks[i].hash))
					    ->digest_size) {
				*why = "a PCR value whose size is not its bank's digest size";
				return -EINVAL;
			}
	return 0;
}

int tpm2_parse_pcrs_values(const uint8_t *buf, size_t len, const struct tpm2_pcr_selection *quoted,
			   struct tpm2_pcr_values *v, const char **why)
{
	size_t bytes, off = 0;
	long want;

	memset(v, 0, sizeof(*v));
	v->sel = *quoted;
	want = selected(quoted, &bytes);
	if (want < 0) {
		*why = "the quote selects a bank of a hash algorithm this check does not know";
		return -EINVAL;
	}
	if (len != bytes) {
		*why = "not the size of the quoted PCRs' values (tpm2_quote -F values)";
		return -EINVAL;
	}
	for (uint32_t i = 0; i < quoted->count; i++) {
		for (unsigned int pcr = 0; pcr < 8u * quoted->banks[i].size; pcr++) {
			unsigned int size;

			if (!tpm2_pcr_selected(&quoted->banks[i], pcr))
				continue;
			size = imastream_hash_by_algo(tpm2_hash_algo(quoted->banks[i].hash))
				       ->digest_size;
			v->size[v->n] = (uint16_t)size;
			memcpy(v->value[v->n], buf + off, size);
			off += size;
			v->n++;
		}
	}
	return 0;
}
