// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ima plugin: security.ima on every regular file, from the digest the chain computes
 * once (rpm's verified header digest when it is in the wanted algorithm): the digest
 * itself in hash mode, a signature of it with the chain's key in sign mode.  A signature
 * the package carries for the file is written instead, once it verifies against the trust
 * store over the file's digest; one that does not is refused or replaced, as configured.
 * With verity = on, a version-3 signature over the file's fs-verity digest (from the same
 * stream or re-read), which the driver makes good by enabling fs-verity on the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "imastream/filesig.h"
#include "imastream/keys.h"
#include "imastream/verity.h"
#include "imastream/xattr.h"
#include "keys/trust_cache.h"
#include "plugin/builtin/plugins.h"
#include "plugin/core/driver.h"

struct ima_state {
	const struct imastream_config *cfg;
	const struct imastream_log *log;
	struct imastream_signer *signer; /* owned by the chain; sign mode only */
	uint8_t *buf;                    /* the xattr value, reused for every file */
	size_t buf_size;
	struct imastream_trust *trust;   /* checks package signatures; NULL without "trust" */
	uint32_t sig_algos;              /* digests asked for to check package signatures */
	bool use_pkg_sigs;               /* package_sigs, with auto resolved at init */
	bool verity;                     /* verity = on: sigv3 over the fs-verity digest */
	bool told_untrusted;             /* auto without trust: said once that sigs go unused */
};

static void ima_cleanup(void *state);

/*
 * Package signatures are checked over a digest the chain computes anyway: every algorithm
 * they may use is asked for now, since the chain takes no new algorithm after init.  Only
 * package_sig_algos (sha256 by default: rpm's file digest, so the header's verified digest
 * serves and no byte is read again) and hash_algo are: asking for every algorithm IMA
 * knows would hash each streamed file in all of them, and the chain keeps four at most.
 * A signature in another algorithm is one that cannot be checked: the failure policy
 * decides, and the message names package_sig_algos, where the operator can add it.
 */
static int pkgsig_init(struct ima_state *st, struct imastream_init_args *args)
{
	const struct imastream_config *cfg = args->cfg;
	int err;

	/* auto: without a store nothing could verify, so the mode's own value is written;
	 * nor with verity = on, where a content signature is of no use to the kernel. */
	st->use_pkg_sigs = !IMS_CONFIG_VERITY(cfg) && (cfg->package_sigs == IMASTREAM_PKGSIG_VERIFY ||
			   (cfg->package_sigs == IMASTREAM_PKGSIG_AUTO && cfg->trust));
	if (!st->use_pkg_sigs)
		return 0;
	st->sig_algos = cfg->package_sig_algos | IMASTREAM_HASH_BIT(cfg->hash_algo);
	args->hash_algos |= st->sig_algos;
	/* Without a store every package signature is refused (or replaced) at its file. */
	if (!cfg->trust)
		return 0;
	/* Loaded here, before rpm enters the chroot; the store itself logs nothing. */
	err = imastream_trust_new(NULL, &st->trust);
	if (err)
		return err;
	err = imastream_trust_add_path(st->trust, cfg->trust);
	if (err)
		return ims_err(st->log, err, "ima: cannot load the trust store %s: %s", cfg->trust,
			       ims_open_strerror(err));
	return 0;
}

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
	err = pkgsig_init(st, args);
	if (err)
		goto out;
	if (args->cfg->mode == IMASTREAM_MODE_SIGN) {
		err = ims_plugin_signer(args->chain, &st->signer, &st->buf_size);
		if (err)
			goto out;
		st->verity = IMS_CONFIG_VERITY(args->cfg);
	}
	st->buf = malloc(st->buf_size);
	if (!st->buf)
		err = -ENOMEM;
out:
	if (err) {
		ima_cleanup(st);
		return err;
	}
	*state_ret = st;
	return 0;
}

static void ima_cleanup(void *state)
{
	struct ima_state *st = state;

	imastream_trust_free(st->trust);
	free(st->buf);
	free(st);
}

/* Regular files with content of their own; %config ones unless config_files = no. */
static bool covered(const struct ima_state *st, const struct imastream_file *f)
{
	if (!S_ISREG(f->mode))
		return false;
	if (f->flags & (IMASTREAM_FILE_SKIP | IMASTREAM_FILE_ERASE | IMASTREAM_FILE_GHOST))
		return false;
	if ((f->flags & IMASTREAM_FILE_CONFIG) &&
	    st->cfg->config_files == IMASTREAM_CONFIG_FILES_NO)
		return false;
	return true;
}

/* A %config file under config_files = hash: a digest the kernel may keep up to date. */
static bool hash_only(const struct ima_state *st, const struct imastream_file *f)
{
	return (f->flags & IMASTREAM_FILE_CONFIG) &&
	       st->cfg->config_files == IMASTREAM_CONFIG_FILES_HASH;
}

/* No signature, or rpm's placeholder for a file it did not sign (a zero v2 header). */
static bool has_pkg_sig(const struct imastream_file *f)
{
	if (!f->pkg_sig || !f->pkg_sig_len)
		return false;
	if (f->pkg_sig_len < IMASTREAM_SIG_HDR_SIZE)
		return true;
	for (size_t i = 0; i < IMASTREAM_SIG_HDR_SIZE; i++)
		if (f->pkg_sig[i])
			return true;
	return false;
}

/*
 * Whether the package's signature for @f may become its security.ima: a type-3 v2 value
 * whose algorithm is one the chain computes, verifying with a certificate of the trust
 * store over the file's digest in that algorithm (rpm's verified header digest when it
 * is the same algorithm, so no byte is read again).
 * Return: 0 to write it; 1 when it must not be written, with @why (and @keyid when the
 * header gives one) set; or a -errno (reading the content) that fails the file whatever
 * the policy, since every fallback needs the content too.
 */
static int check_pkg_sig(struct ima_state *st, struct imastream_file *f, char *why,
			 size_t why_size, bool *have_keyid, uint32_t *keyid)
{
	const struct imastream_hash_info *hi;
	struct imastream_xattr_info info = { .size = sizeof(info) };
	const uint8_t *digest;
	const char *how;
	size_t len;
	int err;

	*have_keyid = false;
	/* The header's key id names the signer in the message even when the rest is damaged. */
	if (f->pkg_sig_len >= 7 && f->pkg_sig[0] == IMASTREAM_XATTR_DIGSIG) {
		*keyid = (uint32_t)f->pkg_sig[3] << 24 | (uint32_t)f->pkg_sig[4] << 16 |
			 (uint32_t)f->pkg_sig[5] << 8 | f->pkg_sig[6];
		*have_keyid = true;
	}
	if (imastream_xattr_decode(f->pkg_sig, f->pkg_sig_len, &info, NULL) < 0 ||
	    info.type != IMASTREAM_XATTR_DIGSIG) {
		snprintf(why, why_size, "it is not a well-formed IMA signature (type 3, v2)");
		return 1;
	}
	*keyid = info.keyid;
	*have_keyid = true;
	hi = imastream_hash_by_algo(info.algo);
	if (!hi || !(st->sig_algos & IMASTREAM_HASH_BIT(info.algo))) {
		snprintf(why, why_size, "it signs a %s digest, which package_sig_algos does not list",
			 hi ? hi->name : "unknown");
		return 1;
	}
	if (!st->trust) {
		snprintf(why, why_size, "no trust store is configured (trust)");
		return 1;
	}
	err = imastream_file_digest(f, info.algo, &digest, &len, &how);
	if (err)
		return err;
	err = imastream_trust_verify(st->trust, info.algo, digest, len, info.data, info.data_len,
				     info.keyid);
	switch (err) {
	case 0:
		ims_logf(st->log, IMASTREAM_LOG_DEBUG,
			 "ima: %s: package signature (key id %08x) verified over the %s digest from %s",
			 f->dest, info.keyid, hi->name, how);
		return 0;
	case -ENOKEY:
		snprintf(why, why_size, "no certificate in %s has this key id", st->cfg->trust);
		break;
	case -EBADMSG:
		snprintf(why, why_size, "it does not verify over the file's %s digest", hi->name);
		break;
	case -EKEYREJECTED:
		/* Which key type, and why the kernel could not use it either. */
		snprintf(why, why_size, "the certificate with this key id holds %s",
			 imastream_trust_rejection(st->trust, info.keyid) ?
			 imastream_trust_rejection(st->trust, info.keyid) : "a key that cannot verify it");
		break;
	default:
		snprintf(why, why_size, "it cannot be verified: %s", strerror(-err));
		break;
	}
	return 1;
}

/*
 * The package's signature for @f: written as it is when it verifies (0, *@done set);
 * otherwise refused (-EKEYREJECTED, one line naming the file and the key id) or, with
 * package_sig_failure = fallback, left to the mode's own value with a warning.
 */
static int use_pkg_sig(struct ima_state *st, struct imastream_file *f, bool *done)
{
	char why[600], kid[16];
	bool have_keyid;
	uint32_t keyid = 0;
	int err;

	*done = false;
	err = check_pkg_sig(st, f, why, sizeof(why), &have_keyid, &keyid);
	if (err < 0)
		return err;
	if (err == 0) {
		*done = true;
		return imastream_file_set_xattr(f, "security.ima", f->pkg_sig, f->pkg_sig_len);
	}
	if (have_keyid)
		snprintf(kid, sizeof(kid), "%08x", keyid);
	else
		snprintf(kid, sizeof(kid), "unknown");
	/* The package too: rpm's own lines around ours do not always name it. */
	if (f->pkg && f->pkg->nevra) {
		size_t n = strlen(why);

		snprintf(why + n, sizeof(why) - n, " (package %s)", f->pkg->nevra);
	}
	if (st->cfg->package_sig_failure == IMASTREAM_PKGSIG_REFUSE)
		return ims_err(st->log, -EKEYREJECTED,
			       "ima: %s: package signature refused (key id %s): %s", f->dest, kid,
			       why);
	ims_logf(st->log, IMASTREAM_LOG_WARNING,
		 "ima: %s: package signature not used (key id %s): %s; writing the local %s instead (package_sig_failure = fallback)",
		 f->dest, kid, why, st->signer ? "signature" : "hash");
	return 0;
}

/* verity = on: a sigv3 over the fs-verity digest; the driver then enables fs-verity. */
static int sign_verity(struct ima_state *st, struct imastream_file *f)
{
	const uint8_t *digest;
	const char *how;
	size_t vlen;
	int err;

	err = imastream_file_verity_digest(f, &digest, &how);
	if (err)
		return err;
	ims_logf(st->log, IMASTREAM_LOG_DEBUG, "ima: %s: fs-verity digest from %s", f->dest, how);
	err = imastream_ima_sign_verity(st->signer, IMASTREAM_HASH_SHA256, digest,
					IMASTREAM_VERITY_DIGEST_SIZE, st->buf, st->buf_size, &vlen,
					st->log);
	if (err)
		return ims_err(st->log, err, "ima: cannot sign %s: %s", f->dest, strerror(-err));
	return imastream_file_set_xattr(f, "security.ima", st->buf, vlen);
}

static int ima_file_closed(void *state, struct imastream_file *f)
{
	struct ima_state *st = state;
	int algo = st->cfg->hash_algo;
	const uint8_t *digest;
	const char *how;
	size_t len, vlen;
	bool done, sign;
	int err;

	/* %config files (config_files = no) get no value at all: the package's neither. */
	if (!covered(st, f))
		return 0;
	sign = st->signer && !hash_only(st, f);
	if (sign && st->verity)
		return sign_verity(st, f);
	if (!hash_only(st, f) && has_pkg_sig(f)) {
		if (st->use_pkg_sigs) {
			err = use_pkg_sig(st, f, &done);
			if (err || done)
				return err;
		} else if (st->cfg->package_sigs == IMASTREAM_PKGSIG_AUTO && !st->told_untrusted) {
			st->told_untrusted = true;
			ims_logf(st->log, IMASTREAM_LOG_NOTICE,
				 "ima: %s carries file signatures, but no trust store is set to check them: writing the local %s (set trust to use them)",
				 f->pkg && f->pkg->nevra ? f->pkg->nevra : f->dest,
				 sign ? "signatures" : "digests");
		}
	}
	err = imastream_file_digest(f, algo, &digest, &len, &how);
	if (err)
		return err;
	/* Where the digest came from is how one sees that no byte was read again. */
	ims_logf(st->log, IMASTREAM_LOG_DEBUG, "ima: %s: digest from %s", f->dest, how);
	if (!sign) {
		err = imastream_ima_digest_encode(algo, digest, len, st->buf, st->buf_size, &vlen,
						  st->log);
		if (err)
			return err;
	} else {
		/* A relabel rerun: the signature the file holds is kept, nothing signed. */
		err = imastream_file_keep_signature(f, "security.ima", IMASTREAM_XATTR_DIGSIG,
						    algo, digest, len);
		if (err)
			return err < 0 ? err : 0;
		err = imastream_ima_sign_digest(st->signer, algo, digest, len, st->buf,
						st->buf_size, &vlen, st->log);
		if (err)
			return ims_err(st->log, err, "ima: cannot sign %s: %s", f->dest,
				       strerror(-err));
	}
	return imastream_file_set_xattr(f, "security.ima", st->buf, vlen);
}

const struct imastream_plugin_ops ims_ima_plugin = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "ima",
	.rank = IMASTREAM_RANK_IMA,
	.init = ima_init,
	.cleanup = ima_cleanup,
	.file_closed = ima_file_closed,
};
