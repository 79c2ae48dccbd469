// SPDX-License-Identifier: LGPL-2.1-or-later
/* The order of an upgrade's removals: files first in record order, then directories deepest first, in linear moves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "imastream/record.h"
#include "installer/sink_dropped.h"
#include "tests/unit/test.h"

static const struct imastream_record_file file_rf = { .mode = S_IFREG | 0644 };
static const struct imastream_record_file dir_rf = { .mode = S_IFDIR | 0755 };

static unsigned int depth(const char *path)
{
	unsigned int n = 0;

	for (; *path; path++)
		n += *path == '/';
	return n;
}

/*
 * @n objects, the directories first when @dirs_first (the worst case of shifting them
 * up per file), else every third one a directory; files are "/f/N" in record order N,
 * directories "/d/N" one to four levels deep.  Checks the order and the move count.
 */
static void check(size_t n, bool dirs_first)
{
	struct ims_drop *d = calloc(n + 1, sizeof(*d));
	size_t nfiles = 0, moves, prev_file = 0;
	char buf[64];

	ASSERT(d);
	for (size_t i = 0; i < n; i++) {
		bool dir = dirs_first ? i < n / 2 : i % 3 == 0;

		if (dir)
			snprintf(buf, sizeof(buf), "/d%.*s/%zu", (int)(2 * (i % 4)), "/x/x/x/x", i);
		else
			snprintf(buf, sizeof(buf), "/f/%zu", i);
		d[i].path = strdup(buf);
		ASSERT(d[i].path);
		d[i].rf = dir ? &dir_rf : &file_rf;
		nfiles += !dir;
	}
	moves = ims_dropped_order(d, n);
	/* Each file moves at most once: linear, where shifting the directories was n²/4. */
	ASSERT(moves <= nfiles);
	for (size_t i = 0; i < nfiles; i++) {
		size_t at;

		ASSERT(S_ISREG(d[i].rf->mode));
		ASSERT_EQ(sscanf(d[i].path, "/f/%zu", &at), 1);
		ASSERT(i == 0 || at > prev_file); /* record order kept */
		prev_file = at;
	}
	for (size_t i = nfiles; i < n; i++) {
		ASSERT(S_ISDIR(d[i].rf->mode));
		if (i > nfiles) {
			unsigned int a = depth(d[i - 1].path), b = depth(d[i].path);

			ASSERT(a > b || (a == b && strcmp(d[i - 1].path, d[i].path) > 0));
		}
	}
	for (size_t i = 0; i < n; i++)
		free(d[i].path);
	free(d);
	printf("ok: %zu objects (%s): %zu files in %zu moves\n", n,
	       dirs_first ? "directories first" : "mixed", nfiles, moves);
}

int main(void)
{
	check(0, false);
	check(1, true);
	check(7, false);
	check(200000, true);
	check(200000, false);
	return 0;
}
