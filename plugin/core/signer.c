// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The chain's signing key: loaded once from the configuration at init (before any chroot),
 * shared by the plugins that sign, and checked against the trust store with a test
 * signature so that a key the target would not trust is refused before any file.
 */
#include <errno.h>
#include <string.h>

#include "imastream/keys.h"
#include "plugin/core/private.h"

/* Signs a fixed digest and verifies it with the configured certificates. */
static int check_trusted(struct imastream_signer *s, const struct imastream_config *cfg,
			 const struct imastream_log *log)
{
	const struct imastream_hash_info *hi = imastream_hash_by_algo(cfg->hash_algo);
	uint8_t digest[IMASTREAM_HASH_MAX_DIGEST], sig[1024];
	struct imastream_trust *trust = NULL;
	size_t sig_len;
	int err;

	if (!hi)
		return -EINVAL;
	memset(digest, 0x5a, sizeof(digest));
	/* The store logs nothing: each failure below is said once, here, with its context. */
	err = imastream_trust_new(NULL, &trust);
	if (err)
		goto out;
	err = imastream_trust_add_path(trust, cfg->trust);
	if (err) {
		ims_err(log, err, "cannot load the trust store %s: %s", cfg->trust,
			ims_open_strerror(err));
		goto out;
	}
	err = imastream_signer_sign(s, hi->algo, digest, hi->digest_size, sig, sizeof(sig),
				    &sig_len);
	if (err)
		goto out;
	err = imastream_trust_verify(trust, hi->algo, digest, hi->digest_size, sig, sig_len,
				     imastream_signer_keyid(s));
	if (err)
		ims_err(log, err, "key %s (id %08x) does not verify with the certificates in %s: %s",
			cfg->key, imastream_signer_keyid(s), cfg->trust, strerror(-err));
out:
	imastream_trust_free(trust);
	return err;
}

int ims_signer_load(const struct imastream_config *cfg, const struct imastream_log *log,
		    struct imastream_signer **ret)
{
	struct imastream_key_opts opts = {
		.size = sizeof(opts),
		.key = cfg->key,
		.cert = cfg->cert,
		.pass_file = cfg->key_pass_file,
		.pass_env = cfg->key_pass_env,
	};
	struct imastream_signer *s = NULL;
	int err;

	if (!cfg->key)
		return ims_err(log, -EINVAL, "signing needs a key (_imastream_key)");
	err = imastream_signer_new(&opts, log, &s);
	if (err)
		return err;
	if (cfg->trust) {
		err = check_trusted(s, cfg, log);
		if (err) {
			imastream_signer_free(s);
			return err;
		}
	}
	*ret = s;
	return 0;
}

void ims_signer_free(struct imastream_signer *s)
{
	imastream_signer_free(s);
}
