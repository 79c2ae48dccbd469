// SPDX-License-Identifier: LGPL-2.1-or-later
/* Which keys we sign with: those the kernel verifies for IMA/EVM (RSA, ECDSA P-256/P-384). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>

#include "keys/keys-private.h"

int ims_check_key_type(EVP_PKEY *pkey, const char *what, const struct imastream_log *log,
		       char *type_ret, size_t type_cap)
{
	const char *name = EVP_PKEY_get0_type_name(pkey);
	char group[64] = "";
	int bits = EVP_PKEY_get_bits(pkey);

	/* EVP_PKEY_is_a() also works for keys held by an engine or another provider. */
	if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA || EVP_PKEY_is_a(pkey, "RSA")) {
		if (bits < 2048 || bits > 4096)
			return ims_err(log, -EOPNOTSUPP,
				       "%s: RSA-%d key refused: IMA signing takes RSA keys of 2048 to 4096 bits",
				       what, bits);
		snprintf(type_ret, type_cap, "RSA-%d", bits);
		return 0;
	}
	if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC || EVP_PKEY_is_a(pkey, "EC")) {
		if (!EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group,
						    sizeof(group), NULL)) {
			/* Engine keys may not export the group name: judge by size. */
			ERR_clear_error();
			snprintf(group, sizeof(group), "%s",
				 bits == 256 ? "prime256v1" : bits == 384 ? "secp384r1" : "unknown");
		}
		if (!strcmp(group, "prime256v1") || !strcmp(group, "P-256")) {
			snprintf(type_ret, type_cap, "ECDSA-P256");
			return 0;
		}
		if (!strcmp(group, "secp384r1") || !strcmp(group, "P-384")) {
			snprintf(type_ret, type_cap, "ECDSA-P384");
			return 0;
		}
		return ims_err(log, -EOPNOTSUPP,
			       "%s: EC key on curve %s refused: IMA signing takes ECDSA P-256 or P-384",
			       what, group);
	}
	return ims_err(log, -EOPNOTSUPP,
		       "%s: %s key refused: IMA signing takes RSA (2048 to 4096 bits) or ECDSA P-256/P-384",
		       what, name ? name : "unknown");
}

void ims_key_type_why(EVP_PKEY *pkey, char *buf, size_t cap)
{
	const char *name = pkey ? EVP_PKEY_get0_type_name(pkey) : NULL;
	char group[64] = "";

	if (!pkey) {
		snprintf(buf, cap, "no public key OpenSSL can read");
	} else if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA || EVP_PKEY_is_a(pkey, "RSA")) {
		snprintf(buf, cap, "an RSA-%d key (the kernel: RSA of 2048 to 4096 bits)",
			 EVP_PKEY_get_bits(pkey));
	} else if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC || EVP_PKEY_is_a(pkey, "EC")) {
		if (!EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, group,
						    sizeof(group), NULL))
			snprintf(group, sizeof(group), "unknown");
		snprintf(buf, cap, "an EC key on curve %s (the kernel: ECDSA P-256/P-384 only)", group);
	} else {
		snprintf(buf, cap, "a%s %s key (the kernel: RSA and ECDSA P-256/P-384 only)",
			 name && strchr("AEIOUaeiou", name[0]) ? "n" : "", name ? name : "unknown");
	}
	ERR_clear_error();
}
