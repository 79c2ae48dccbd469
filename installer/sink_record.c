// SPDX-License-Identifier: LGPL-2.1-or-later
/* The chain sink's install record: each package's objects as the chain left them, written, planned and renamed. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "common/private.h"
#include "imastream/hash.h"
#include "imastream/hooks.h"
#include "installer/sink_boot_record.h"
#include "installer/sink_record.h"
#include "plugin/core/driver.h"

int ims_sink_record_open(struct ims_sink_record *r, int rootfd, const char *root, bool rpmdb,
			 const struct imastream_log *log)
{
	int err = ims_record_load(rootfd, log, &r->all);

	if (err)
		return err;
	if (rpmdb && ims_rpmdb_owner_open(root, &r->owners))
		return ims_err(log, -EIO,
			       "%s: cannot read the root's rpm database for file conflicts", root);
	return 0;
}

void ims_sink_record_close(struct ims_sink_record *r)
{
	ims_record_free(r->all);
	ims_rpmdb_owner_free(r->owners);
	r->all = NULL;
	r->owners = NULL;
}

int ims_sink_record_begin(struct ims_sink_record *r, const struct imastream_config *cfg,
			  const char *name, const char *nevra)
{
	const char *ima = NULL, *evm = NULL;

	if (!r->all)
		return 0;
	if (cfg) {
		ima = cfg->mode == IMASTREAM_MODE_SIGN ? "sign" :
		      cfg->mode == IMASTREAM_MODE_HASH ? "hash" : "off";
		evm = cfg->evm ? "portable" : "none";
	}
	return ims_record_pkg_new(name, nevra, ima, evm, &r->pkg);
}

int ims_sink_record_commit(struct ims_sink_record *r, int rootfd, const char *name,
			   const char *nevra, const struct imastream_log *log)
{
	int err;

	if (!r->pkg)
		return 0;
	/* What this upgrade replaces may be in this boot's measurement list already. */
	err = ims_install_boot_record(r->all, rootfd, name, log);
	if (!err)
		err = ims_record_pkg_write(r->all, rootfd, r->pkg);
	/* An upgrade: what the old version had and this one lacks goes after the renames. */
	ims_dropped_clear(&r->dropped);
	if (!err)
		err = ims_dropped_plan(rootfd, r->all, r->owners, name, nevra, r->pkg, log,
				       &r->dropped);
	return err;
}

void ims_sink_record_remove_dropped(struct ims_sink_record *r, int status, int rootfd,
				    const char *root, struct imastream_chain *chain,
				    const struct imastream_pkg *pkg,
				    const struct imastream_log *log)
{
	if (!status && r->dropped.n)
		ims_dropped_remove(rootfd, &r->dropped, root, chain, pkg, log);
	ims_dropped_clear(&r->dropped);
}

void ims_sink_record_end(struct ims_sink_record *r, int status, const char *nevra,
			 const struct imastream_log *log)
{
	if (!r->pkg)
		return;
	if (!status && ims_record_pkg_commit(r->all, r->pkg))
		ims_logf(log, IMASTREAM_LOG_WARNING, "%s: installed, but its record is incomplete",
			 nevra);
	ims_record_pkg_free(r->pkg);
	r->pkg = NULL;
}

/* Whether a plugin of the chain wrote xattr @name on the file (not skipped). */
static bool wrote(const struct imastream_file *f, const char *name)
{
	const struct imastream_file_xattr *xa = imastream_file_get_xattr(f, name);

	return xa && !xa->skipped;
}

/* The first digest the chain computed, when the extractor verified none. */
static void chain_digest(const struct imastream_chain *chain, struct imastream_file *f,
			 struct imastream_record_file *rf)
{
	uint32_t algos = imastream_chain_hash_algos(chain);
	const uint8_t *d;
	size_t len;

	for (int a = 0; a < 32 && algos; a++) {
		if (!(algos & IMASTREAM_HASH_BIT(a)))
			continue;
		if (!imastream_file_digest(f, a, &d, &len, NULL) && len <= sizeof(rf->digest)) {
			rf->digest_algo = a;
			memcpy(rf->digest, d, len);
		}
		return;
	}
}

int ims_sink_record_file(struct ims_record_pkg *rpkg, const struct imastream_chain *chain,
			 struct imastream_file *f, const struct imastream_entry *e,
			 const uint8_t *digest)
{
	struct imastream_record_file rf = {
		.path = e->path, .mode = e->mode, .uid = e->uid, .gid = e->gid, .size = e->size,
		.link_target = S_ISLNK(e->mode) ? e->link_target : NULL, .rdev = e->rdev,
	};
	const struct imastream_hash_info *hi;

	if (!rpkg || (e->flags & IMASTREAM_ENTRY_UNOWNED))
		return 0;
	if (!f) {
		/* The same inode as an earlier entry of the package: its size and digest. */
		const struct imastream_record_file *first = ims_record_pkg_find(rpkg, e->link_target);

		if (first) {
			rf.uid = first->uid;
			rf.gid = first->gid;
			rf.mode = first->mode;
			rf.xattrs = first->xattrs;
			rf.size = first->size;
			rf.digest_algo = first->digest_algo;
			memcpy(rf.digest, first->digest, sizeof(rf.digest));
		}
		return ims_record_pkg_add(rpkg, &rf);
	}
	/* What the inode has (the sink reads it back at file_closed), not what the package
	 * asked for. */
	rf.uid = f->uid;
	rf.gid = f->gid;
	rf.mode = f->mode;
	if (wrote(f, "security.ima"))
		rf.xattrs |= IMASTREAM_RECORD_IMA;
	if (wrote(f, "security.evm"))
		rf.xattrs |= IMASTREAM_RECORD_EVM;
	if (wrote(f, "security.selinux") || wrote(f, "security.SMACK64"))
		rf.xattrs |= IMASTREAM_RECORD_LABEL;
	if (e->flags & IMASTREAM_ENTRY_CONFIG)
		rf.xattrs |= IMASTREAM_RECORD_CONFIG;
	if (S_ISREG(e->mode) && digest && (hi = imastream_hash_by_algo(e->digest_algo)) &&
	    hi->digest_size <= sizeof(rf.digest)) {
		rf.digest_algo = hi->algo;
		memcpy(rf.digest, digest, hi->digest_size);
	} else if (S_ISREG(e->mode)) {
		chain_digest(chain, f, &rf);
	}
	return ims_record_pkg_add(rpkg, &rf);
}

int ims_sink_record_journal(const struct ims_sink_record *r,
			    int (*add)(void *ctx, const char *dir, const char *tmp,
				       const char *name),
			    void *ctx)
{
	const char *dir, *tmp;
	char name[NAME_MAX + 1];

	if (!r->pkg || ims_record_pkg_pending(r->pkg, &dir, &tmp, name, sizeof(name)))
		return 0;
	return add(ctx, dir, tmp, name);
}
