// SPDX-License-Identifier: LGPL-2.1-or-later
/* ims_grow(): the array kept while it has room, doubled when full, untouched when it cannot grow. */
#include <stdint.h>
#include <stdlib.h>

#include "common/private.h"
#include "tests/unit/test.h"

int main(void)
{
	size_t alloc = 0, used = 0;
	int *a = NULL, *g;

	/* A new array gets @first elements, then doubles each time it is full. */
	for (int i = 0; i < 100; i++) {
		g = ims_grow(a, used, &alloc, sizeof(*a), 4);
		ASSERT(g);
		a = g;
		a[used++] = i;
		ASSERT(used <= alloc);
	}
	ASSERT_EQ(alloc, 128);
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(a[i], i);
	/* Room left: the same array, the same capacity. */
	ASSERT(ims_grow(a, 100, &alloc, sizeof(*a), 4) == a);
	ASSERT_EQ(alloc, 128);
	/* A size that would overflow: NULL, and nothing changed. */
	alloc = SIZE_MAX / 4;
	ASSERT(ims_grow(a, alloc, &alloc, sizeof(*a), 4) == NULL);
	ASSERT_EQ(alloc, SIZE_MAX / 4);
	free(a);
	return 0;
}
