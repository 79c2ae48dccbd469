// SPDX-License-Identifier: LGPL-2.1-or-later
/* Signer backend for keys held by the kernel: keyctl_pkey_sign, the private key stays there. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keyutils.h>

#include "imastream/hash.h"
#include "keys/keyring.h"
#include "keys/keys-private.h"

/* "SERIAL" or "RING:DESCRIPTION" (see imastream/keys.h). */
static int find_key(const char *spec, const struct imastream_log *log, int32_t *serial_ret)
{
	const char *colon = strchr(spec, ':');
	char ring[128];
	int32_t ring_id;
	key_serial_t key;
	int err;

	if (ims_parse_serial(spec, serial_ret))
		return 0;
	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(ring) || !colon[1])
		return ims_err(log, -EINVAL,
			       "kernel:%s: give kernel:SERIAL or kernel:RING:DESCRIPTION", spec);
	snprintf(ring, sizeof(ring), "%.*s", (int)(colon - spec), spec);
	err = imastream_keyring_resolve(ring, false, log, &ring_id);
	if (err)
		return err;
	key = keyctl_search(ring_id, "asymmetric", colon + 1, 0);
	if (key < 0)
		return ims_err(log, -ENOKEY, "no asymmetric key '%s' in keyring %s", colon + 1, ring);
	*serial_ret = key;
	return 0;
}

static int check_asymmetric(int32_t serial, const struct imastream_log *log,
			    struct ims_kernel_key *kk)
{
	char *desc = NULL;
	const char *d;
	int err = 0;

	if (keyctl_describe_alloc(serial, &desc) < 0)
		return ims_err(log, errno == ENOKEY ? -ENOKEY : -errno, "kernel key %d: %s", serial,
			       strerror(errno));
	if (strncmp(desc, "asymmetric;", 11)) {
		err = ims_err(log, -EINVAL, "kernel key %d is a %.*s key, not an asymmetric one",
			      serial, (int)strcspn(desc, ";"), desc);
		goto out;
	}
	d = desc;
	for (int field = 0; field < 4 && d; field++) {
		d = strchr(d, ';');
		if (d)
			d++;
	}
	if (d)
		kk->has_keyid = ims_keyid_of_description(d, &kk->keyid);
out:
	free(desc);
	return err;
}

int ims_kernel_key_open(const char *spec, const struct imastream_log *log,
			struct ims_kernel_key *kk)
{
	struct keyctl_pkey_query q;
	int err;

	memset(kk, 0, sizeof(*kk));
	err = find_key(spec, log, &kk->serial);
	if (!err)
		err = check_asymmetric(kk->serial, log, kk);
	if (err)
		return err;
	/* Each encoding is only accepted by its algorithm: that tells RSA from ECDSA. */
	if (keyctl_pkey_query(kk->serial, "enc=pkcs1 hash=sha256", &q) < 0) {
		if (errno == EOPNOTSUPP || errno == ENOSYS)
			return ims_err(log, -EOPNOTSUPP,
				       "kernel key %d: this kernel cannot sign with asymmetric keys (%s)",
				       kk->serial, strerror(errno));
		if (keyctl_pkey_query(kk->serial, "enc=x962 hash=sha256", &q) < 0)
			return ims_err(log, -EOPNOTSUPP, "kernel key %d: neither an RSA nor an ECDSA key (%s)",
				       kk->serial, strerror(errno));
		kk->ec = true;
	}
	if (!(q.supported_ops & KEYCTL_SUPPORTS_SIGN))
		return ims_err(log, -EOPNOTSUPP,
			       "kernel key %d holds only a public key and cannot sign (a private key needs the kernel's PKCS#8 parser, CONFIG_PKCS8_PRIVATE_KEY_PARSER)",
			       kk->serial);
	kk->bits = q.key_size;
	kk->max_sig = q.max_sig_size;
	if ((!kk->ec && (kk->bits < 2048 || kk->bits > 4096)) ||
	    (kk->ec && kk->bits != 256 && kk->bits != 384))
		return ims_err(log, -EOPNOTSUPP,
			       "kernel key %d: %s-%u refused: IMA signing takes RSA 2048 to 4096 or ECDSA P-256/P-384",
			       kk->serial, kk->ec ? "ECDSA" : "RSA", kk->bits);
	return 0;
}

int ims_kernel_key_sign(const struct ims_kernel_key *kk, int hash_algo, const uint8_t *digest,
			size_t digest_len, uint8_t *sig, size_t sig_cap, size_t *sig_len_ret,
			const struct imastream_log *log)
{
	const struct imastream_hash_info *info = imastream_hash_by_algo(hash_algo);
	char params[64];
	long n;

	if (!info || digest_len != info->digest_size)
		return ims_err(log, -EINVAL, "unknown hash algorithm id %d or wrong digest size", hash_algo);
	if (sig_cap < kk->max_sig)
		return ims_err(log, -ENOSPC, "signature needs up to %zu bytes, only %zu given",
			       kk->max_sig, sig_cap);
	snprintf(params, sizeof(params), "enc=%s hash=%s", kk->ec ? "x962" : "pkcs1", info->name);
	n = keyctl_pkey_sign(kk->serial, params, digest, digest_len, sig, kk->max_sig);
	if (n < 0)
		return ims_err(log, -EIO, "kernel key %d: signing (%s) failed: %s", kk->serial, params,
			       strerror(errno));
	*sig_len_ret = (size_t)n;
	return 0;
}
