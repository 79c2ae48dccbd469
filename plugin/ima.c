// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ima plugin: security.ima on every regular file, from the digest the chain computes
 * once (rpm's verified header digest when it is in the wanted algorithm): the digest
 * itself in hash mode, a signature of it with the chain's key in sign mode.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "imastream/filesig.h"
#include "imastream/keys.h"
#include "imastream/xattr.h"
#include "plugin/plugins.h"

struct ima_state {
	const struct imastream_config *cfg;
	const struct imastream_log *log;
	struct imastream_signer *signer; /* owned by the chain; sign mode only */
	uint8_t *buf;                    /* the xattr value, reused for every file */
	size_t buf_size;
};

static int ima_init(struct imastream_init_args *args, void **state_ret)
{
	struct ima_state *st;
	int err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->cfg = args->cfg;
	st->log = args->log;
	args->hash_algos |= IMASTREAM_HASH_BIT(args->cfg->hash_algo);
	st->buf_size = IMASTREAM_IMA_DIGEST_XATTR_MAX;
	if (args->cfg->mode == IMASTREAM_MODE_SIGN) {
		/* The key is loaded (and its passphrase checked) now, not at the first file. */
		err = imastream_chain_signer(args->chain, &st->signer);
		if (err) {
			free(st);
			return err;
		}
		st->buf_size = IMASTREAM_SIG_HDR_SIZE + imastream_signer_max_sig_size(st->signer);
	}
	st->buf = malloc(st->buf_size);
	if (!st->buf) {
		free(st);
		return -ENOMEM;
	}
	*state_ret = st;
	return 0;
}

static void ima_cleanup(void *state)
{
	struct ima_state *st = state;

	free(st->buf);
	free(st);
}

/* Regular files with content of their own; %config ones only when asked. */
static bool covered(const struct ima_state *st, const struct imastream_file *f)
{
	if (!S_ISREG(f->mode))
		return false;
	if (f->flags & (IMASTREAM_FILE_SKIP | IMASTREAM_FILE_ERASE | IMASTREAM_FILE_GHOST))
		return false;
	if ((f->flags & IMASTREAM_FILE_CONFIG) && !st->cfg->config_files)
		return false;
	return true;
}

static int ima_file_closed(void *state, struct imastream_file *f)
{
	struct ima_state *st = state;
	int algo = st->cfg->hash_algo;
	const uint8_t *digest;
	const char *how;
	size_t len, vlen;
	int err;

	if (!covered(st, f))
		return 0;
	err = imastream_file_digest(f, algo, &digest, &len, &how);
	if (err)
		return err;
	/* Where the digest came from is how one sees that no byte was read again. */
	ims_logf(st->log, IMASTREAM_LOG_DEBUG, "ima: %s: digest from %s", f->dest, how);
	if (!st->signer) {
		err = imastream_ima_digest_encode(algo, digest, len, st->buf, st->buf_size, &vlen,
						  st->log);
		if (err)
			return err;
	} else {
		err = imastream_ima_sign_digest(st->signer, algo, digest, len, st->buf,
						st->buf_size, &vlen, st->log);
		if (err)
			return ims_err(st->log, err, "ima: cannot sign %s: %s", f->dest,
				       strerror(-err));
	}
	return imastream_file_set_xattr(f, "security.ima", st->buf, vlen);
}

const struct imastream_plugin_ops ims_ima_plugin = {
	.name = "ima",
	.rank = IMASTREAM_RANK_IMA,
	.init = ima_init,
	.cleanup = ima_cleanup,
	.file_closed = ima_file_closed,
};
