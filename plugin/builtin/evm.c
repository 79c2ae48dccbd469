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

static int evm_file_closed(void *state, struct imastream_file *f)
{
	struct evm_state *st = state;
	const struct imastream_file_xattr *ima;
	struct imastream_evm_input in = { .size = sizeof(in) };
	size_t vlen;
	unsigned int flags = st->cfg->user_xattrs ? IMASTREAM_EVM_COLLECT_USER_IMA : 0;
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
	/* What rpm set (capabilities, owner, mode) is read back from the file itself. */
	err = imastream_evm_collect(f->fd, f->path, flags, &in, st->log);
	if (err)
		return ims_err(st->log, err, "evm: cannot read the metadata of %s: %s", f->dest,
			       strerror(-err));
	take_recorded(f, &in);
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
	.file_closed = evm_file_closed,
};
