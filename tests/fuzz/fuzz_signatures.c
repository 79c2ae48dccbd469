// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: arbitrary bytes as a signatures file; whatever is accepted must write back byte for byte (one form per file). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "signpkg/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct manifest m;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	if (signatures_parse((const char *)data, size, NULL, &m))
		return 0;
	out = open_memstream(&text, &len);
	if (!out || signatures_write_start(out))
		abort();
	for (size_t i = 0; i < m.n_pkgs; i++)
		if (signatures_write_pkg(out, &m.pkgs[i]))
			abort();
	if (fclose(out) || len != size || memcmp(text, data, size))
		abort(); /* accepted, yet not in the one form the writer makes */
	free(text);
	manifest_free(&m);
	return 0;
}
