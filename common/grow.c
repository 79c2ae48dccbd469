// SPDX-License-Identifier: LGPL-2.1-or-later
/* The one growable array: room for one more element, doubled when full. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/private.h"

void *ims_grow(void *array, size_t used, size_t *alloc, size_t elem, size_t first)
{
	size_t n = *alloc ? 2 * *alloc : first;
	void *grown;

	if (used < *alloc)
		return array;
	/* Doubling an array of that size would overflow size_t: no machine has the memory. */
	if (n < used + 1 || n > SIZE_MAX / 2 / elem)
		return NULL;
	grown = realloc(array, n * elem);
	if (grown)
		*alloc = n;
	return grown;
}
