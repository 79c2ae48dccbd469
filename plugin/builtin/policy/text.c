// SPDX-License-Identifier: LGPL-2.1-or-later
/* The policy plugins' text helpers: a path under a prefix, bytes escaped into one field. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "plugin/builtin/policy/policy.h"

bool ims_path_under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	if (strncmp(path, prefix, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/' || (n == 1 && prefix[0] == '/');
}

size_t ims_escape(const void *in, size_t len, const char *extra, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	const uint8_t *b = in;
	size_t o = 0;

	if (!size)
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (b[i] > ' ' && b[i] < 0x7f && b[i] != '%' && !(extra && strchr(extra, b[i]))) {
			if (o + 1 >= size)
				break;
			out[o++] = b[i];
		} else {
			if (o + 3 >= size)
				break;
			out[o++] = '%';
			out[o++] = hex[b[i] >> 4];
			out[o++] = hex[b[i] & 15];
		}
	}
	out[o] = '\0';
	return o;
}
