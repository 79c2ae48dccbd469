// SPDX-License-Identifier: LGPL-2.1-or-later
/* The digests files had before this boot's transactions replaced them, added to a policy. */
#include <errno.h>

#include "attest/policy-private.h"
#include "attest/sources.h"
#include "imastream/hash.h"
#include "installed/boot_record.h"

struct boot_walk {
	struct attest_source *src;
	unsigned long other_algo;
};

static int boot_entry(void *arg, const struct ims_boot_entry *e)
{
	struct boot_walk *w = arg;
	unsigned long files = w->src->files;
	int err;

	/* The old file is gone: a digest in another algorithm cannot be made again. */
	if (e->algo != w->src->hash_algo) {
		w->other_algo++;
		return 0;
	}
	err = attest_source_add(w->src, e->path, e->digest, e->len);
	/* Counted apart: the package files the summary counts are the installed ones. */
	w->src->boot_digests += w->src->files - files;
	w->src->files = files;
	return err;
}

int attest_source_boot(struct attest_source *src, const char *boot_id)
{
	struct boot_walk w = { .src = src };
	int err = ims_boot_record_foreach(src->rootfd, boot_id, boot_entry, &w, src->log);

	if (!err && w.other_algo)
		attest_say(src->log, 0,
			   "%lu digest%s of this boot's replaced files %s not in %s (the package's "
			   "algorithm): left out",
			   w.other_algo, w.other_algo == 1 ? "" : "s",
			   w.other_algo == 1 ? "is" : "are",
			   imastream_hash_by_algo(src->hash_algo)->name);
	return err;
}
