// SPDX-License-Identifier: LGPL-2.1-or-later
/* The strict decoder: every valid form round-trips, every malformed length/type/version fails. */
#include <errno.h>
#include <stdint.h>

#include "imastream/hash.h"
#include "imastream/xattr.h"
#include "tests/unit/test_xattr_util.h"
#include "xattr/codec.h"

static struct captured cap;
static const struct imastream_log log_ = { capture_fn, &cap };

/* Decodes hex @hex and expects @err with exactly one log line containing @why. */
static void expect_bad(const char *hex, int err, const char *why)
{
	unsigned char v[512];
	struct imastream_xattr_info info = { .size = sizeof(info), .type = -42 };
	size_t n = test_unhex(hex, v, sizeof(v));

	cap.count = 0;
	if (imastream_xattr_decode(v, n, &info, &log_) != err) {
		fprintf(stderr, "value %s: expected %d\n", hex, err);
		exit(1);
	}
	ASSERT_EQ(cap.count, 1);
	ASSERT_EQ(cap.level, IMASTREAM_LOG_ERR);
	if (!strstr(cap.last, why)) {
		fprintf(stderr, "value %s: message '%s' lacks '%s'\n", hex, cap.last, why);
		exit(1);
	}
	ASSERT_EQ(info.type, -42); /* untouched */
}

static void decode_ok(const unsigned char *v, size_t n, struct imastream_xattr_info *info)
{
	cap.count = 0;
	ASSERT_EQ(imastream_xattr_decode(v, n, info, &log_), 0);
	ASSERT_EQ(cap.count, 0);
}

static void test_digests(void)
{
	unsigned char v[80], d[64];
	struct imastream_xattr_info info = { .size = sizeof(info) };
	size_t n;

	/* Type 1, sha1 (from evmctl). */
	n = test_unhex("0122596363b3de40b06f981fb85d82312e8c0ed511", v, sizeof(v));
	decode_ok(v, n, &info);
	ASSERT_EQ(info.type, 1);
	ASSERT_EQ(info.version, 0);
	ASSERT_EQ(info.algo, IMASTREAM_HASH_SHA1);
	ASSERT_EQ(info.data_len, 20);
	ASSERT(info.data == v + 1);

	/* Type 1, 17 bytes: md5. */
	memset(v + 1, 0xab, 16);
	decode_ok(v, 17, &info);
	ASSERT_EQ(info.algo, IMASTREAM_HASH_MD5);
	ASSERT_EQ(info.data_len, 16);

	/* Type 1, 21 bytes ending in four zeros: old padded md5, as the kernel reads it. */
	memset(v + 17, 0, 4);
	decode_ok(v, 21, &info);
	ASSERT_EQ(info.algo, IMASTREAM_HASH_MD5);
	ASSERT_EQ(info.data_len, 16);

	/* Type 4 for every algorithm with the matching length, via the encoder. */
	for (int algo = 0; algo < 23; algo++) {
		unsigned int size = imastream_xattr_digest_size(algo);
		size_t len;

		ASSERT(size >= 16 && size <= 64);
		memset(d, algo, size);
		if (algo <= IMASTREAM_HASH_SHA1)
			continue; /* those encode as type 1 */
		ASSERT_EQ(imastream_ima_digest_encode(algo, d, size, v, sizeof(v), &len, &log_), 0);
		decode_ok(v, len, &info);
		ASSERT_EQ(info.type, 4);
		ASSERT_EQ(info.algo, algo);
		ASSERT_EQ(info.data_len, size);
		ASSERT_MEM_EQ(info.data, d, size);
	}
	ASSERT_EQ(imastream_xattr_digest_size(23), 0);
	ASSERT_EQ(imastream_xattr_digest_size(-1), 0);

	/* Type 2: exactly 21 bytes, sha1. */
	memset(v, 0x5a, 21);
	v[0] = 2;
	decode_ok(v, 21, &info);
	ASSERT_EQ(info.type, 2);
	ASSERT_EQ(info.algo, IMASTREAM_HASH_SHA1);
	ASSERT_EQ(info.data_len, 20);
}

static void test_signatures(void)
{
	unsigned char v[9 + 300], sig[300];
	struct imastream_xattr_info info = { .size = sizeof(info) };
	size_t len;

	for (size_t i = 0; i < sizeof(sig); i++)
		sig[i] = (unsigned char)(i * 7);
	ASSERT_EQ(imastream_sig_encode(3, IMASTREAM_HASH_SHA256, 0xe140241a, sig, 256, v, sizeof(v),
				       &len, &log_), 0);
	decode_ok(v, len, &info);
	ASSERT_EQ(info.type, 3);
	ASSERT_EQ(info.version, 2);
	ASSERT_EQ(info.algo, IMASTREAM_HASH_SHA256);
	ASSERT_EQ(info.keyid, 0xe140241a);
	ASSERT_EQ(info.data_len, 256);
	ASSERT(info.data == v + 9);

	ASSERT_EQ(imastream_sig_encode(5, IMASTREAM_HASH_SHA512, 0x949fb16a, sig, 0x47, v, sizeof(v),
				       &len, &log_), 0);
	decode_ok(v, len, &info);
	ASSERT_EQ(info.type, 5);
	ASSERT_EQ(info.version, 2);
	ASSERT_EQ(info.keyid, 0x949fb16a);
	ASSERT_EQ(info.data_len, 0x47);

	ASSERT_EQ(imastream_sig_encode(6, IMASTREAM_HASH_SHA256, 1, sig, 1, v, sizeof(v), &len,
				       &log_), 0);
	ASSERT_EQ(len, 10); /* the shortest legal signature xattr */
	decode_ok(v, len, &info);
	ASSERT_EQ(info.type, 6);
	ASSERT_EQ(info.version, 3);
	ASSERT_EQ(info.data_len, 1);
}

static void test_malformed(void)
{
	/* Arguments and types. */
	struct imastream_xattr_info info = { .size = sizeof(info) };

	cap.count = 0;
	ASSERT_EQ(imastream_xattr_decode("", 0, &info, &log_), -EINVAL);
	ASSERT_EQ(cap.count, 1);
	ASSERT_EQ(imastream_xattr_decode(NULL, 5, &info, &log_), -EINVAL);
	ASSERT_EQ(imastream_xattr_decode("\x04", 1, NULL, &log_), -EINVAL);
	expect_bad("00", -EINVAL, "type 0");
	expect_bad("07", -EINVAL, "type 7");
	expect_bad("ff0102", -EINVAL, "type 255");

	/* Type 1: only 17 or 21 bytes. */
	expect_bad("01", -EBADMSG, "1 bytes");
	expect_bad("0122596363b3de40b06f981fb85d82312e8c0ed5", -EBADMSG, "20 bytes");
	expect_bad("0122596363b3de40b06f981fb85d82312e8c0ed51100", -EBADMSG, "22 bytes");
	expect_bad("01000102030405060708090a0b0c0d0e", -EBADMSG, "16 bytes");

	/* Type 2: exactly 21. */
	expect_bad("02000102030405060708090a0b0c0d0e0f101112", -EBADMSG, "must be 21");
	expect_bad("02000102030405060708090a0b0c0d0e0f1011121314", -EBADMSG, "must be 21");
	expect_bad("02", -EBADMSG, "must be 21");

	/* Type 4: a known algorithm and exactly 2 + its digest size. */
	expect_bad("04", -EBADMSG, "no algorithm");
	expect_bad("0404", -EBADMSG, "must be 34");
	expect_bad("0404a948904f2f0f479b8f8197694b30184b0d2ed1c1cd2a1ec0fb85d299a192a4", -EBADMSG,
		   "must be 34");
	expect_bad("0404a948904f2f0f479b8f8197694b30184b0d2ed1c1cd2a1ec0fb85d299a192a44700",
		   -EBADMSG, "must be 34");
	expect_bad("0417a948904f2f0f479b8f8197694b30184b0d2ed1c1cd2a1ec0fb85d299a192a447", -EBADMSG,
		   "unknown algorithm 23");
	expect_bad("04ff00", -EBADMSG, "unknown algorithm 255");
	expect_bad("0402a948904f2f0f479b8f8197694b30184b0d2ed1c1cd2a1ec0fb85d299a192a447", -EBADMSG,
		   "sha1 digest xattr of 34 bytes: must be 22");

	/* Signatures: len > 9, len - 9 == sig_size, known algorithm, right version. */
	expect_bad("03", -EBADMSG, "header is 9");
	expect_bad("030204e140241a0000", -EBADMSG, "header is 9");
	expect_bad("030204e140241a0001", -EBADMSG, "header is 9");
	expect_bad("030204e140241a0002aa", -EBADMSG, "sig_size 2: must be 1");
	expect_bad("030204e140241a0000aa", -EBADMSG, "sig_size 0: must be 1");
	expect_bad("030204e140241a0001aabb", -EBADMSG, "sig_size 1: must be 2");
	expect_bad("030204e140241a0101aa", -EBADMSG, "sig_size 257: must be 1");
	expect_bad("030217e140241a0001aa", -EBADMSG, "unknown algorithm 23");
	expect_bad("0302ffe140241a0001aa", -EBADMSG, "unknown algorithm 255");
	expect_bad("030104e140241a0001aa", -EBADMSG, "version 1: must be 2");
	expect_bad("030304e140241a0001aa", -EBADMSG, "version 3: must be 2");
	expect_bad("030004e140241a0001aa", -EBADMSG, "version 0: must be 2");
	expect_bad("050304e140241a0001aa", -EBADMSG, "type-5 signature has version 3");
	expect_bad("050104e140241a0001aa", -EBADMSG, "version 1: must be 2");
	expect_bad("060204e140241a0001aa", -EBADMSG, "type-6 signature has version 2: must be 3");
	expect_bad("060404e140241a0001aa", -EBADMSG, "version 4: must be 3");
	expect_bad("0603", -EBADMSG, "header is 9");
	expect_bad("050204e140241a", -EBADMSG, "header is 9");
	expect_bad("0301", -EBADMSG, "legacy v1");
	expect_bad("0304", -EBADMSG, "version 4: must be 2");
}

int main(void)
{
	test_digests();
	test_signatures();
	test_malformed();
	return 0;
}
