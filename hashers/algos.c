// SPDX-License-Identifier: LGPL-2.1-or-later
/* The one table that maps kernel hash ids, rpm digest ids, OpenSSL names and sizes. */
#include <strings.h>

#include "common/private.h"
#include "imastream/hash.h"

/* rpm's PGPHASHALGO_* values (rpmpgp.h); rpm has no id for SM3. */
enum { RPM_MD5 = 1, RPM_SHA1 = 2, RPM_SHA256 = 8, RPM_SHA384 = 9, RPM_SHA512 = 10, RPM_SHA224 = 11 };

static const struct imastream_hash_info hash_table[] = {
	{ IMASTREAM_HASH_MD5, "md5", "MD5", RPM_MD5, 16, 64 },
	{ IMASTREAM_HASH_SHA1, "sha1", "SHA1", RPM_SHA1, 20, 64 },
	{ IMASTREAM_HASH_SHA256, "sha256", "SHA256", RPM_SHA256, 32, 64 },
	{ IMASTREAM_HASH_SHA384, "sha384", "SHA384", RPM_SHA384, 48, 128 },
	{ IMASTREAM_HASH_SHA512, "sha512", "SHA512", RPM_SHA512, 64, 128 },
	{ IMASTREAM_HASH_SHA224, "sha224", "SHA224", RPM_SHA224, 28, 64 },
	{ IMASTREAM_HASH_SM3, "sm3", "SM3", 0, 32, 64 },
};

const struct imastream_hash_info *imastream_hash_info_at(unsigned int i)
{
	return i < ARRAY_SIZE(hash_table) ? &hash_table[i] : NULL;
}

const struct imastream_hash_info *imastream_hash_by_algo(int algo)
{
	for (size_t i = 0; i < ARRAY_SIZE(hash_table); i++)
		if (hash_table[i].algo == algo)
			return &hash_table[i];
	return NULL;
}

const struct imastream_hash_info *imastream_hash_by_name(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(hash_table); i++)
		if (strcasecmp(hash_table[i].name, name) == 0)
			return &hash_table[i];
	return NULL;
}

const struct imastream_hash_info *imastream_hash_by_rpm_id(int rpm_id)
{
	for (size_t i = 0; i < ARRAY_SIZE(hash_table); i++)
		if (rpm_id && hash_table[i].rpm_id == rpm_id)
			return &hash_table[i];
	return NULL;
}
