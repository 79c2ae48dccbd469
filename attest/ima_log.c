// SPDX-License-Identifier: LGPL-2.1-or-later
/* Parses lines of the kernel's ascii IMA measurement list into entries a policy can judge. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attest/attest.h"
#include "common/private.h"

/* Decodes @hex (exactly @max bytes' worth when @exact) into @out. Return: length, or -1. */
static long unhex(const char *hex, uint8_t *out, size_t max, bool exact)
{
	size_t n = strlen(hex);

	if (n % 2 || n / 2 > max || (exact && n / 2 != max))
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = ims_hex_digit(hex[2 * i]), lo = ims_hex_digit(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (long)(n / 2);
}

/* Cuts the next blank-separated field off *@s. */
static char *next_field(char **s)
{
	char *f = *s, *sp;

	if (!f || !*f)
		return NULL;
	sp = strchr(f, ' ');
	if (sp) {
		*sp = '\0';
		*s = sp + 1;
	} else {
		*s = NULL;
	}
	return f;
}

/* "ALGO:HEX" (or bare SHA-1 hex for the legacy template) into @e. */
static int parse_digest(char *field, bool legacy, struct attest_entry *e, const char **why)
{
	const struct imastream_hash_info *info;
	char *colon = legacy ? NULL : strchr(field, ':');
	const char *hex = field;

	if (legacy) {
		e->algo = "sha1";
	} else {
		if (!colon) {
			*why = "the file digest has no ALGO: prefix";
			return -EINVAL;
		}
		*colon = '\0';
		e->algo = field;
		hex = colon + 1;
	}
	info = imastream_hash_by_name(e->algo);
	if (!info) {
		*why = "the file digest's algorithm is unknown";
		return -EINVAL;
	}
	e->hash_algo = info->algo;
	if (unhex(hex, e->digest, info->digest_size, true) < 0) {
		*why = "the file digest is not hex of the algorithm's size";
		return -EINVAL;
	}
	e->digest_len = info->digest_size;
	return 0;
}

int attest_parse_line(char *line, struct attest_entry *e, const char **why)
{
	char *s = line, *pcr, *thash, *digest, *name, *end;
	bool legacy, sig, buf;
	unsigned long n;

	memset(e, 0, sizeof(*e));
	pcr = next_field(&s);
	thash = next_field(&s);
	e->template = next_field(&s);
	if (!pcr || !thash || !e->template || !s) {
		*why = "fewer than five fields";
		return -EINVAL;
	}
	errno = 0;
	n = strtoul(pcr, &end, 10);
	if (errno || *end || end == pcr || n > 23) {
		*why = "the PCR is not a number from 0 to 23";
		return -EINVAL;
	}
	e->pcr = (unsigned int)n;
	legacy = !strcmp(e->template, "ima");
	sig = !strcmp(e->template, "ima-sig");
	buf = !strcmp(e->template, "ima-buf");
	if (!legacy && !sig && !buf && strcmp(e->template, "ima-ng")) {
		*why = "a template this check does not read (ima, ima-ng, ima-sig, ima-buf)";
		return -EOPNOTSUPP;
	}
	for (const char *c = thash; *c; c++)
		if (ims_hex_digit(*c) < 0) {
			*why = "the template hash is not hex";
			return -EINVAL;
		}
	digest = next_field(&s);
	if (!digest || !s || !*s) {
		*why = "no file name";
		return -EINVAL;
	}
	if (parse_digest(digest, legacy, e, why))
		return -EINVAL;
	/*
	 * The kernel writes every blank of a name as '_' (ima_write_template_field_data()),
	 * so the name is one field: ima-sig follows it with the signature (empty: the line
	 * ends in a blank), ima-buf with the buffer.
	 */
	name = next_field(&s);
	if (!name || !*name) {
		*why = "no file name";
		return -EINVAL;
	}
	if (!sig && !buf && s) {
		*why = "a blank in the file name, which the kernel writes as '_'";
		return -EINVAL;
	}
	if ((sig || buf) && !s) {
		*why = sig ? "an ima-sig entry without its signature field" : "an ima-buf entry without its buffer";
		return -EINVAL;
	}
	if (buf && !*s) {
		*why = "an ima-buf entry without its buffer";
		return -EINVAL;
	}
	if (buf)
		e->buf_hex = s;
	if (sig && *s) {
		long len = unhex(s, e->sig, sizeof(e->sig), false);

		if (len < 0) {
			*why = "the signature is not hex or longer than any IMA signature";
			return -EINVAL;
		}
		e->sig_len = (size_t)len;
	}
	e->name = name;
	return 0;
}
