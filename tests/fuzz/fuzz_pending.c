// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: arbitrary bytes as a pending-label entry; whatever is accepted must format back to bytes that parse to the same entry. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/core/pending_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(const struct ims_pending_entry *a, const struct ims_pending_entry *b)
{
	if (strcmp(a->path, b->path) || strcmp(a->package, b->package) || a->mode != b->mode ||
	    a->uid != b->uid || a->gid != b->gid || a->built_uid != b->built_uid ||
	    a->built_gid != b->built_gid || a->digest_algo != b->digest_algo ||
	    a->digest_len != b->digest_len || memcmp(a->digest, b->digest, a->digest_len) ||
	    a->n_xattrs != b->n_xattrs)
		abort();
	for (unsigned int i = 0; i < a->n_xattrs; i++)
		if (strcmp(a->xattrs[i].name, b->xattrs[i].name) ||
		    a->xattrs[i].len != b->xattrs[i].len ||
		    memcmp(a->xattrs[i].value, b->xattrs[i].value, a->xattrs[i].len))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ims_pending_entry e, f;
	char why[192], *buf;
	size_t len;

	if (ims_pending_parse((const char *)data, size, &e, why, sizeof(why)) == 0) {
		/* Accepted: a plain absolute path, and it survives a round trip. */
		if (e.path[0] != '/' || strstr(e.path, "/../") || strstr(e.path, "//"))
			abort();
		if (ims_pending_format(&e, &buf, &len) ||
		    ims_pending_parse(buf, len, &f, why, sizeof(why)))
			abort();
		same(&e, &f);
		ims_pending_entry_release(&f);
		free(buf);
	} else if (!why[0]) {
		abort(); /* every refusal says why */
	}
	ims_pending_entry_release(&e);
	return 0;
}
