// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The evm plugin, strictly last: a portable EVM signature (type 5) over the file's final
 * metadata: the labels and security.ima earlier plugins set (from the shared context),
 * security.capability as rpm set it, uid, gid and mode.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "imastream/filesig.h"
#include "imastream/keys.h"
#include "imastream/xattr.h"
#include "plugin/builtin/plugins.h"
#include "xattr/codec.h"

struct evm_state {
	const struct imastream_config *cfg;
	const struct imastream_log *log;
	struct imastream_signer *signer; /* owned by the chain */
	uint8_t *buf;
	size_t buf_size;
	bool config_evm; /* config_evm = portable: %config files signed too */
	/* This package's first IMASTREAM_FILE_META_KNOWN file was read back: did it agree? */
	bool inode_checked, inode_agreed;
};

/*
 * The skeleton of every plugin's init, ima_init()'s too: a state of its own.  What the
 * two share beyond it, the signer and the room for its values, is ims_plugin_signer().
 */
static int evm_init(struct imastream_init_args *args, void **state_ret)
{
	struct evm_state *st;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->cfg = args->cfg;
	st->log = args->log;
	st->config_evm = strcmp(imastream_config_get(args->cfg, "config_evm"), "none") != 0;
	/* Listed but "evm = none": present in the chain, writes nothing. */
	if (args->cfg->evm) {
		err = ims_plugin_signer(args->chain, &st->signer, &st->buf_size);
		if (err) {
			free(st);
			return err;
		}
		st->buf = malloc(st->buf_size);
		if (!st->buf) {
			free(st);
			return -ENOMEM;
		}
	}
	*state_ret = st;
	return 0;
}

static void evm_cleanup(void *state)
{
	struct evm_state *st = state;

	free(st->buf);
	free(st);
}

/* The chain's record of an xattr wins over what the file says: it is what was meant. */
static void take_recorded(const struct imastream_file *f, struct imastream_evm_input *in)
{
	for (int slot = 0; slot < IMASTREAM_EVM_NR_XATTRS; slot++) {
		const struct imastream_file_xattr *x;
		const char *name = imastream_evm_xattr_name(slot);

		if (!name || !(x = imastream_file_get_xattr(f, name)))
			continue;
		in->xattrs[slot].value = x->value;
		in->xattrs[slot].len = x->len;
	}
}

/* A package's files come from one driver in one context: one read back judges them all. */
static int evm_psm_pre(void *state, const struct imastream_pkg *pkg)
{
	struct evm_state *st = state;

	(void)pkg;
	st->inode_checked = false;
	st->inode_agreed = false;
	return 0;
}

/* The input as the driver and the chain set it: nothing read, nothing to release. */
static void predict_input(const struct imastream_file *f, struct imastream_evm_input *in)
{
	in->uid = f->uid;
	in->gid = f->gid;
	in->mode = f->mode;
	in->misc_layout = IMASTREAM_EVM_MISC_64;
	take_recorded(f, in);
}

/*
 * Whether the chain set a label (any value EVM covers but security.ima) on @f: over an
 * LSM's label it would hide it, so such a file cannot show whether the LSM labels.
 */
static bool chain_labelled(const struct imastream_file *f)
{
	for (int slot = 0; slot < IMASTREAM_EVM_NR_XATTRS; slot++) {
		const char *name = imastream_evm_xattr_name(slot);

		if (slot != IMASTREAM_EVM_IMA && name && imastream_file_get_xattr(f, name))
			return true;
	}
	return false;
}

static bool same_input(const struct imastream_evm_input *a, const struct imastream_evm_input *b)
{
	if (a->uid != b->uid || a->gid != b->gid || a->mode != b->mode)
		return false;
	for (int slot = 0; slot < IMASTREAM_EVM_NR_XATTRS; slot++) {
		const struct imastream_evm_value *x = &a->xattrs[slot], *y = &b->xattrs[slot];

		if (!x->value != !y->value || x->len != y->len ||
		    (x->len && memcmp(x->value, y->value, x->len)))
			return false;
	}
	return true;
}

/*
 * What the kernel will hash: read from the inode (capabilities, owner and mode as rpm set
 * them, labels an LSM gave it) with the chain's own values over it, or, for a file the
 * driver vouches for (IMASTREAM_FILE_META_KNOWN), predicted without a system call once
 * the package's first such file the chain set no label on read back the same input
 * (a package whose every file the chain labels is read back whole, as before).
 */
static int evm_input(struct evm_state *st, const struct imastream_file *f,
		     struct imastream_evm_input *in)
{
	unsigned int flags = st->cfg->user_xattrs ? IMASTREAM_EVM_COLLECT_USER_IMA : 0;
	bool vouched = (f->flags & IMASTREAM_FILE_META_KNOWN) &&
		       (f->flags & IMASTREAM_FILE_CREATED) && !st->cfg->user_xattrs;
	struct imastream_evm_input predicted = { .size = sizeof(predicted) };
	int err;

	if (vouched && st->inode_agreed) {
		predict_input(f, in);
		return 0;
	}
	err = imastream_evm_collect(f->fd, f->path, flags, in, st->log);
	if (err)
		return ims_err(st->log, err, "evm: cannot read the metadata of %s: %s", f->dest,
			       strerror(-err));
	take_recorded(f, in);
	if (vouched && !st->inode_checked && !chain_labelled(f)) {
		st->inode_checked = true;
		predict_input(f, &predicted);
		st->inode_agreed = same_input(in, &predicted);
		if (!st->inode_agreed)
			ims_logf(st->log, IMASTREAM_LOG_DEBUG,
				 "evm: %s holds more than the package set (an LSM "
				 "label?): every file of the package is read back",
				 f->dest);
	}
	return 0;
}

static int evm_file_closed(void *state, struct imastream_file *f)
{
	struct evm_state *st = state;
	const struct imastream_file_xattr *ima;
	struct imastream_evm_input in = { .size = sizeof(in) };
	size_t vlen;
	int algo = st->cfg->hash_algo;
	int err;

	if (!st->signer)
		return 0;
	/*
	 * A portable signature freezes what it covers: an edit of the %config file could no
	 * longer get its security.ima updated, and appraisal would refuse it.  Only when asked.
	 */
	if ((f->flags & IMASTREAM_FILE_CONFIG) && !st->config_evm)
		return 0;
	/* The kernel refuses a portable signature on a file without security.ima. */
	ima = imastream_file_get_xattr(f, "security.ima");
	if (!ima || ima->skipped)
		return 0;
	err = evm_input(st, f, &in);
	if (err)
		return err;
	/*
	 * A portable signature the file holds over these values is kept: a relabel rerun,
	 * or a file rpm leaves in place, whose signature EVM would not let us replace.
	 */
	{
		uint8_t digest[IMASTREAM_HASH_MAX_DIGEST];
		size_t dlen;

		/* (A digest that cannot be made here fails in the signing below, said there.) */
		err = imastream_evm_digest_portable(&in, algo, digest, sizeof(digest), &dlen, NULL);
		err = err ? 0 : imastream_file_keep_signature(f, "security.evm",
							      IMASTREAM_XATTR_EVM_PORTABLE, algo,
							      digest, dlen);
		if (err) {
			imastream_evm_input_release(&in);
			return err < 0 ? err : 0;
		}
	}
	err = imastream_evm_sign_portable(st->signer, &in, algo, st->buf, st->buf_size, &vlen,
					  st->log);
	imastream_evm_input_release(&in);
	if (err)
		return ims_err(st->log, err, "evm: cannot sign %s: %s", f->dest, strerror(-err));
	return imastream_file_set_xattr(f, "security.evm", st->buf, vlen);
}

static const char *config_evm_check(const char *value)
{
	return strcmp(value, "none") && strcmp(value, "portable") ? "is not none or portable" :
								    NULL;
}

static const struct imastream_plugin_key evm_keys[] = {
	{ .name = "config_evm",
	  .def = "portable",
	  .check = config_evm_check,
	  .help = "portable or none: whether %config files get an EVM portable signature too" },
	{ .name = NULL },
};

const struct imastream_plugin_ops ims_evm_plugin = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "evm",
	.rank = IMASTREAM_RANK_EVM,
	.keys = evm_keys,
	.init = evm_init,
	.cleanup = evm_cleanup,
	.psm_pre = evm_psm_pre,
	.file_closed = evm_file_closed,
};
