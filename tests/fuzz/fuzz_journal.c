// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: arbitrary bytes as an intent journal; whatever is accepted must write back and parse to the same steps. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imastream/hash.h"
#include "installer/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A leading '!' gives the bytes as they are (the checksum too is the fuzzer's to get
 * right); otherwise they are a journal's body and the right "sha256" line is appended,
 * so that the line parser is reached past the checksum.
 */
static char *with_checksum(const uint8_t *data, size_t size, size_t *len)
{
	struct imastream_hasher *h = NULL;
	const uint8_t *d;
	char *text = malloc(size + 7 + 64 + 2);

	if (!text || imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256), NULL, &h) ||
	    imastream_hasher_update(h, data, size) || imastream_hasher_final(h) ||
	    imastream_hasher_digest(h, IMASTREAM_HASH_SHA256, &d, NULL))
		abort();
	memcpy(text, data, size);
	*len = size + (size_t)sprintf(text + size, "sha256 ");
	for (int i = 0; i < 32; i++)
		*len += (size_t)sprintf(text + *len, "%02x", d[i]);
	text[(*len)++] = '\n';
	imastream_hasher_free(h);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ims_journal j, k;
	const char *why;
	unsigned int line;
	char *text, *again = NULL;
	size_t len, again_len = 0;

	if (size && data[0] == '!') {
		len = size - 1;
		text = malloc(len + 1);
		if (!text)
			abort();
		memcpy(text, data + 1, len);
	} else {
		text = with_checksum(data, size, &len);
	}
	if (ims_journal_parse(text, len, &j, &line, &why)) {
		if (!why)
			abort(); /* a refusal says why */
		free(text);
		return 0;
	}
	/* Accepted: the writer's form of it parses to the very same steps. */
	if (ims_journal_format(&j, &again, &again_len) ||
	    ims_journal_parse(again, again_len, &k, &line, &why) ||
	    strcmp(j.package, k.package) || j.pid != k.pid || j.nops != k.nops)
		abort();
	for (size_t i = 0; i < j.nops; i++)
		if (j.ops[i].kind != k.ops[i].kind || strcmp(j.ops[i].dir, k.ops[i].dir) ||
		    strcmp(j.ops[i].name, k.ops[i].name) || !j.ops[i].tmp != !k.ops[i].tmp ||
		    (j.ops[i].tmp && strcmp(j.ops[i].tmp, k.ops[i].tmp)))
			abort();
	ims_journal_clear(&j);
	ims_journal_clear(&k);
	free(again);
	free(text);
	return 0;
}
