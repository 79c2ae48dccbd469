/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal assertion helpers for the C unit tests: a failed check prints where and exits 1. */
#ifndef IMASTREAM_TEST_H
#define IMASTREAM_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SKIP 77

#define ASSERT(cond)                                                               \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, \
				__LINE__, #cond);                                   \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

#define ASSERT_EQ(a, b)                                                                   \
	do {                                                                               \
		long long _a = (long long)(a), _b = (long long)(b);                        \
		if (_a != _b) {                                                            \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n",        \
				__FILE__, __LINE__, #a, _a, #b, _b);                       \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

#define ASSERT_MEM_EQ(a, b, n)                                                       \
	do {                                                                          \
		if (memcmp((a), (b), (n)) != 0) {                                     \
			fprintf(stderr, "%s:%d: %s and %s differ in %zu bytes\n",     \
				__FILE__, __LINE__, #a, #b, (size_t)(n));             \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

/* Parses a hex string into @out; returns the byte count, or aborts on bad input. */
static inline size_t test_unhex(const char *hex, unsigned char *out, size_t max)
{
	size_t n = strlen(hex) / 2;

	if (strlen(hex) % 2 || n > max) {
		fprintf(stderr, "bad test vector: %s\n", hex);
		exit(99);
	}
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
			fprintf(stderr, "bad test vector: %s\n", hex);
			exit(99);
		}
		out[i] = (unsigned char)v;
	}
	return n;
}

#endif /* IMASTREAM_TEST_H */
