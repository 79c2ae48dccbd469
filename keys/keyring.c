// SPDX-License-Identifier: LGPL-2.1-or-later
/* Kernel keyrings by name: find or create _ima/_evm, find .ima/.evm, import and list keys. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <keyutils.h>
#include <openssl/ec.h>
#include <openssl/objects.h>

#include "keys/keyring.h"
#include "keys/keys-private.h"

bool ims_parse_serial(const char *s, int32_t *serial_ret)
{
	unsigned long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v == 0 || v > INT32_MAX)
		return false;
	*serial_ret = (int32_t)v;
	return true;
}

bool ims_keyid_of_description(const char *desc, uint32_t *keyid_ret)
{
	size_t len = strlen(desc), n = 0;
	unsigned int v;

	while (n < len && strchr("0123456789abcdefABCDEF", desc[len - 1 - n]))
		n++;
	if (n < 8 || sscanf(desc + len - 8, "%8x", &v) != 1)
		return false;
	*keyid_ret = v;
	return true;
}

static const struct {
	const char *name;
	key_serial_t spec;
} special_rings[] = {
	{ "@t", KEY_SPEC_THREAD_KEYRING },
	{ "@p", KEY_SPEC_PROCESS_KEYRING },
	{ "@s", KEY_SPEC_SESSION_KEYRING },
	{ "@u", KEY_SPEC_USER_KEYRING },
	{ "@us", KEY_SPEC_USER_SESSION_KEYRING },
};

/* Checks that @serial exists and is a keyring, so errors name the real problem. */
static int check_is_keyring(const char *ring, int32_t serial, const struct imastream_log *log)
{
	char *desc = NULL;
	int err = 0;

	if (keyctl_describe_alloc(serial, &desc) < 0) {
		if (errno == ENOKEY)
			return ims_err(log, -ENOKEY, "keyring %s does not exist", ring);
		return ims_err(log, -errno, "keyring %s: %s", ring, strerror(errno));
	}
	if (strncmp(desc, "keyring;", 8))
		err = ims_err(log, -ENOTDIR, "key %s is not a keyring", ring);
	free(desc);
	return err;
}

int imastream_keyring_resolve(const char *ring, bool create, const struct imastream_log *log,
			      int32_t *serial_ret)
{
	key_serial_t id;

	if (!ring || !*ring)
		return ims_err(log, -EINVAL, "no keyring given");
	for (size_t i = 0; i < ARRAY_SIZE(special_rings); i++) {
		if (strcmp(ring, special_rings[i].name))
			continue;
		id = keyctl_get_keyring_ID(special_rings[i].spec, 1);
		if (id < 0)
			return ims_err(log, -errno, "keyring %s: %s", ring, strerror(errno));
		*serial_ret = id;
		return 0;
	}
	if (ims_parse_serial(ring, serial_ret))
		return check_is_keyring(ring, *serial_ret, log);
	if (ring[0] == '.') {
		/* Kernel-made rings (.ima, .evm, .builtin_trusted_keys) are found, never made. */
		id = find_key_by_type_and_desc("keyring", ring, 0);
		if (id < 0)
			return ims_err(log, -ENOKEY,
				       "keyring %s not found: this kernel has no such trusted keyring (use _%s)",
				       ring, ring + 1);
		*serial_ret = id;
		return 0;
	}
	if (ring[0] == '_') {
		/* Where the kernel looks for _ima/_evm: reachable from the user keyring. */
		id = keyctl_search(KEY_SPEC_USER_KEYRING, "keyring", ring, 0);
		if (id < 0 && errno == ENOKEY && create) {
			id = add_key("keyring", ring, NULL, 0, KEY_SPEC_USER_KEYRING);
			/* A misspelt name must not go unseen: the kernel reads _ima and _evm. */
			if (id >= 0)
				ims_logf(log, IMASTREAM_LOG_NOTICE,
					 "keyring %s did not exist: created it in the user keyring "
					 "(@u), serial %d%s",
					 ring, id,
					 strcmp(ring, "_ima") && strcmp(ring, "_evm") ?
						 "; IMA and EVM read _ima and _evm only" :
						 "");
		}
		if (id < 0 && errno == ENOKEY)
			return ims_err(log, -ENOKEY, "keyring %s not found under the user keyring", ring);
		if (id < 0)
			return ims_err(log, -errno, "keyring %s: %s", ring, strerror(errno));
		*serial_ret = id;
		return 0;
	}
	return ims_err(log, -EINVAL,
		       "keyring '%s': give _NAME, .NAME, @u, @s, @us, @t, @p or a serial number", ring);
}

/* "ECDSA P-384", "RSA 2048": the key a kernel lacking its algorithm cannot take. */
static void describe_key(X509 *x, char *buf, size_t size)
{
	EVP_PKEY *pub = X509_get0_pubkey(x);
	char group[64];
	const char *nist;

	snprintf(buf, size, "this");
	if (!pub)
		return;
	if (EVP_PKEY_is_a(pub, "EC") && EVP_PKEY_get_group_name(pub, group, sizeof(group), NULL)) {
		nist = EC_curve_nid2nist(OBJ_sn2nid(group));
		snprintf(buf, size, "ECDSA %s", nist ? nist : group);
	} else if (EVP_PKEY_is_a(pub, "RSA")) {
		snprintf(buf, size, "RSA %d", EVP_PKEY_get_bits(pub));
	} else {
		snprintf(buf, size, "%s", EVP_PKEY_get0_type_name(pub));
	}
}

/* The kernel has no asymmetric key parser or algorithm for @x's key (ENOPKG, ENOENT). */
static int kernel_lacks_algo(X509 *x, const char *what, const struct imastream_log *log)
{
	char key[80];

	describe_key(x, key, sizeof(key));
	if (!strncmp(key, "ECDSA", 5))
		return ims_err(log, -EOPNOTSUPP,
			       "%s: this kernel cannot use %s keys (it lacks CONFIG_CRYPTO_ECDSA, "
			       "or module ecdsa_generic is not loaded): modprobe ecdsa_generic, or "
			       "sign with an RSA key, which every IMA kernel can use",
			       what, key);
	if (!strncmp(key, "RSA", 3))
		return ims_err(log, -EOPNOTSUPP,
			       "%s: this kernel cannot use %s keys (it lacks CONFIG_CRYPTO_RSA)",
			       what, key);
	return ims_err(log, -EOPNOTSUPP, "%s: this kernel cannot use %s keys: use an RSA key", what,
		       key);
}

static int keyring_import(const char *ring, const void *cert, size_t len, const char *what,
			  const struct imastream_log *log, int32_t *key_serial_ret)
{
	unsigned char *der = NULL;
	X509 *x = NULL;
	int32_t ring_id;
	key_serial_t key;
	int der_len, err;

	err = ims_load_cert_mem(cert, len, what, log, &x);
	if (err)
		goto out;
	der_len = i2d_X509(x, &der);
	if (der_len <= 0) {
		err = -ENOMEM;
		goto out;
	}
	err = imastream_keyring_resolve(ring, true, log, &ring_id);
	if (err)
		goto out;
	/* An empty description lets the kernel write "CN: SKID" itself, as keyctl padd does. */
	key = add_key("asymmetric", "", der, (size_t)der_len, ring_id);
	if (key < 0) {
		switch (errno) {
		case EKEYREJECTED:
		case ENOKEY:
			err = ims_err(log, -EKEYREJECTED,
				      "%s: keyring %s refused the certificate: it is restricted to "
				      "keys signed by a trusted key",
				      what, ring);
			break;
		case ENODEV:
			err = ims_err(log, -EOPNOTSUPP, "this kernel has no asymmetric key type");
			break;
		case ENOENT:
		case ENOPKG:
			err = kernel_lacks_algo(x, what, log);
			break;
		case EBADMSG:
			err = ims_err(log, -EINVAL,
				      "%s: the kernel could not parse the certificate", what);
			break;
		default:
			err = ims_err(log, -errno, "adding the certificate to keyring %s failed: %s", ring,
				      strerror(errno));
		}
		goto out;
	}
	if (key_serial_ret)
		*key_serial_ret = key;
out:
	OPENSSL_free(der);
	X509_free(x);
	return err;
}

int imastream_keyring_import(const char *ring, const void *cert, size_t len,
			     const struct imastream_log *log, int32_t *key_serial_ret)
{
	return keyring_import(ring, cert, len, "certificate", log, key_serial_ret);
}

int imastream_keyring_import_file(const char *ring, const char *path,
				  const struct imastream_log *log, int32_t *key_serial_ret)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	err = ims_read_public_file(path, log, &buf, &len);
	if (!err)
		err = keyring_import(ring, buf, len, path, log, key_serial_ret);
	free(buf);
	return err;
}

/* Splits "type;uid;gid;perm;description" into @e. */
static void parse_description(const char *desc, struct imastream_keyring_entry *e)
{
	const char *p = desc;
	size_t n = strcspn(p, ";");

	snprintf(e->type, sizeof(e->type), "%.*s", (int)n, p);
	for (int field = 0; field < 4 && p; field++) {
		p = strchr(p, ';');
		if (p)
			p++;
	}
	snprintf(e->description, sizeof(e->description), "%s", p ? p : "");
}

/* The trailing hex is the SKID or the serial number: the kernel's own search tells which. */
static void entry_keyid(int32_t ring_id, struct imastream_keyring_entry *e)
{
	char id[16];

	if (strcmp(e->type, "asymmetric") || !ims_keyid_of_description(e->description, &e->keyid))
		return;
	snprintf(id, sizeof(id), "id:%08x", e->keyid);
	e->has_keyid = keyctl_search(ring_id, "asymmetric", id, 0) == e->serial;
}

int imastream_keyring_list(const char *ring, const struct imastream_log *log,
			   struct imastream_keyring_entry **entries_ret, size_t *n_ret)
{
	struct imastream_keyring_entry *entries = NULL;
	key_serial_t *ids = NULL;
	int32_t ring_id;
	long size;
	size_t n = 0;
	int err;

	err = imastream_keyring_resolve(ring, false, log, &ring_id);
	if (err)
		return err;
	size = keyctl_read_alloc(ring_id, (void **)&ids);
	if (size < 0)
		return ims_err(log, -errno, "cannot read keyring %s: %s", ring, strerror(errno));
	n = (size_t)size / sizeof(*ids);
	if (n) {
		entries = calloc(n, sizeof(*entries));
		if (!entries) {
			err = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		char *desc = NULL;

		entries[i].serial = ids[i];
		if (keyctl_describe_alloc(ids[i], &desc) < 0) {
			/* Unreadable keys are listed, like keyctl show does, without details. */
			snprintf(entries[i].type, sizeof(entries[i].type), "?");
			snprintf(entries[i].description, sizeof(entries[i].description), "(%s)",
				 strerror(errno));
			continue;
		}
		parse_description(desc, &entries[i]);
		free(desc);
		entry_keyid(ring_id, &entries[i]);
	}
	*entries_ret = entries;
	*n_ret = n;
	entries = NULL;
out:
	free(entries);
	free(ids);
	return err;
}
