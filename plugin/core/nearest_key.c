// SPDX-License-Identifier: LGPL-2.1-or-later
/* The configuration key nearest to a misspelt one, for the line that refuses it. */
#include <string.h>

#include "plugin/core/driver.h"

/* Longer names are no key: the distance is only computed up to this length. */
#define NAME_MAX_LEN 64

/*
 * Edit distance of @a and @b where swapping two neighbours counts once (mdoe, mode): the
 * optimal string alignment distance, three rows of the usual table.
 */
static size_t distance(const char *a, const char *b)
{
	size_t la = strnlen(a, NAME_MAX_LEN), lb = strnlen(b, NAME_MAX_LEN);
	size_t rows[3][NAME_MAX_LEN + 1];
	size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *t;

		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t d = prev[j - 1] + cost;

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

const char *ims_config_nearest_key(const char *key, const char *const *extra)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;

	for (const char *const *k = imastream_config_keys(); *k; k++) {
		size_t d = distance(key, *k);

		if (d < best_d) {
			best = *k;
			best_d = d;
		}
	}
	for (const char *const *k = extra; k && *k; k++) {
		size_t d = distance(key, *k);

		if (d < best_d) {
			best = *k;
			best_d = d;
		}
	}
	return best;
}
