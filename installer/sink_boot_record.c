// SPDX-License-Identifier: LGPL-2.1-or-later
/* Before an upgrade's renames: the old version's recorded digests into this boot's record. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "common/private.h"
#include "imastream/hash.h"
#include "installed/boot_record.h"
#include "installer/sink_boot_record.h"

struct old_files {
	const char *name;
	struct ims_boot_batch batch;
};

static int add_old(void *arg, const struct imastream_record_file *f)
{
	struct old_files *o = arg;
	const struct imastream_hash_info *info;

	if (strcmp(f->package, o->name) || !S_ISREG(f->mode))
		return 0;
	info = imastream_hash_by_algo(f->digest_algo);
	/* A file recorded without a digest the kernel knows gives none. */
	if (!info)
		return 0;
	return ims_boot_batch_add(&o->batch, f->digest_algo, f->digest, info->digest_size, f->path);
}

int ims_install_boot_record(const struct ims_record *rec, int rootfd, const char *name,
			    const struct imastream_log *log)
{
	struct old_files o = { .name = name };
	int err = ims_record_each(rec, add_old, &o);

	if (err)
		err = ims_err(log, err,
			      "%s: cannot list its recorded digests for this boot's record: %s",
			      name, strerror(-err));
	else
		err = ims_boot_record_append(rootfd, &o.batch, log);
	ims_boot_batch_free(&o.batch);
	return err;
}
