// SPDX-License-Identifier: LGPL-2.1-or-later
/* Encoders: digest values against evmctl ima_hash, signature headers, sign-in-place, sigv3 id. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/xattr.h>

#include "imastream/hash.h"
#include "imastream/xattr.h"
#include "tests/unit/test_xattr_util.h"
#include "xattr/codec.h"

static struct captured cap;
static const struct imastream_log log_ = { capture_fn, &cap };

/* Known answers: what evmctl 1.4 ima_hash writes for "hello world\n". */
static void test_digest_known_answers(void)
{
	static const char *const want[] = {
		"0122596363b3de40b06f981fb85d82312e8c0ed511",
		"0404a948904f2f0f479b8f8197694b30184b0d2ed1c1cd2a1ec0fb85d299a192a447",
	};
	unsigned char d[64], buf[IMASTREAM_IMA_DIGEST_XATTR_MAX], exp[80];
	size_t len, n;

	n = md("sha1", "hello world\n", 12, d);
	ASSERT_EQ(imastream_ima_digest_encode(IMASTREAM_HASH_SHA1, d, n, buf, sizeof(buf), &len,
					      &log_), 0);
	ASSERT_EQ(len, test_unhex(want[0], exp, sizeof(exp)));
	ASSERT_MEM_EQ(buf, exp, len);

	n = md("sha256", "hello world\n", 12, d);
	ASSERT_EQ(imastream_ima_digest_encode(IMASTREAM_HASH_SHA256, d, n, buf, sizeof(buf), &len,
					      &log_), 0);
	ASSERT_EQ(len, test_unhex(want[1], exp, sizeof(exp)));
	ASSERT_MEM_EQ(buf, exp, len);

	/* md5 is type 1 too (17 bytes), sha512 type 4 (66 bytes). */
	n = md("md5", "", 0, d);
	ASSERT_EQ(imastream_ima_digest_encode(IMASTREAM_HASH_MD5, d, n, buf, sizeof(buf), &len,
					      &log_), 0);
	ASSERT_EQ(len, 17);
	ASSERT_EQ(buf[0], 1);
	n = md("sha512", "", 0, d);
	ASSERT_EQ(imastream_ima_digest_encode(IMASTREAM_HASH_SHA512, d, n, buf, sizeof(buf), &len,
					      &log_), 0);
	ASSERT_EQ(len, 66);
	ASSERT_EQ(buf[0], 4);
	ASSERT_EQ(buf[1], 6);
	ASSERT_MEM_EQ(buf + 2, d, 64);
}

static void test_digest_errors(void)
{
	unsigned char d[64] = { 0 }, buf[IMASTREAM_IMA_DIGEST_XATTR_MAX];
	size_t len = 12345;

	cap.count = 0;
	ASSERT_EQ(imastream_ima_digest_encode(IMASTREAM_HASH_SHA256, d, 20, buf, sizeof(buf),
					      &len, &log_), -EINVAL);
	ASSERT_EQ(cap.count, 1);
	ASSERT(strstr(cap.last, "sha256") && strstr(cap.last, "32"));
	ASSERT_EQ(imastream_ima_digest_encode(99, d, 32, buf, sizeof(buf), &len, &log_), -EINVAL);
	ASSERT_EQ(imastream_ima_digest_encode(IMASTREAM_HASH_SHA256, d, 32, buf, 33, &len, &log_),
		  -ENOSPC);
	ASSERT_EQ(imastream_ima_digest_encode(IMASTREAM_HASH_SHA1, d, 20, buf, 20, &len, &log_),
		  -ENOSPC);
	ASSERT_EQ(len, 12345); /* untouched on failure */
}

/* Random files of several sizes: our bytes == what evmctl ima_hash writes to user.ima. */
static void test_digest_vs_evmctl(void)
{
	static const struct {
		const char *name;
		int algo;
	} algos[] = { { "sha1", IMASTREAM_HASH_SHA1 },
		      { "sha256", IMASTREAM_HASH_SHA256 },
		      { "sha512", IMASTREAM_HASH_SHA512 } };
	static const size_t sizes[] = { 0, 1, 4095, 4096, 4097, 65537 };
	static unsigned char data[65537];
	const char *dir;
	char path[512];

	if (run("command -v evmctl >/dev/null") != 0) {
		fprintf(stderr, "evmctl not installed: cross-check skipped\n");
		return;
	}
	dir = make_test_dir();
	for (size_t s = 0; s < ARRAY_SIZE_(sizes); s++) {
		for (size_t i = 0; i < sizes[s]; i++)
			data[i] = (unsigned char)(rand() >> 7);
		snprintf(path, sizeof(path), "%s/f%zu", dir, sizes[s]);
		write_file(path, data, sizes[s]);
		for (size_t a = 0; a < ARRAY_SIZE_(algos); a++) {
			unsigned char d[64], ours[IMASTREAM_IMA_DIGEST_XATTR_MAX], theirs[128];
			size_t n, len;
			ssize_t tlen;

			ASSERT_EQ(run("evmctl ima_hash --xattr-user -a %s '%s' >/dev/null 2>&1",
				      algos[a].name, path), 0);
			tlen = lgetxattr(path, "user.ima", theirs, sizeof(theirs));
			ASSERT(tlen > 0);
			n = md(algos[a].name, data, sizes[s], d);
			ASSERT_EQ(imastream_ima_digest_encode(algos[a].algo, d, n, ours, sizeof(ours),
							      &len, &log_), 0);
			ASSERT_EQ(len, tlen);
			ASSERT_MEM_EQ(ours, theirs, len);
		}
	}
}

static void test_sig_header(void)
{
	unsigned char buf[9 + 300], sig[256], exp[9];
	size_t len;

	for (size_t i = 0; i < sizeof(sig); i++)
		sig[i] = (unsigned char)i;
	/* The worked example: IMA signature, RSA-2048, sha256, keyid e140241a. */
	ASSERT_EQ(imastream_sig_encode(IMASTREAM_XATTR_DIGSIG, IMASTREAM_HASH_SHA256, 0xe140241a,
				       sig, 256, buf, sizeof(buf), &len, &log_), 0);
	ASSERT_EQ(len, 265);
	test_unhex("030204e140241a0100", exp, sizeof(exp));
	ASSERT_MEM_EQ(buf, exp, 9);
	ASSERT_MEM_EQ(buf + 9, sig, 256);

	/* EVM portable: 05 02; verity: 06 03. */
	ASSERT_EQ(imastream_sig_encode(IMASTREAM_XATTR_EVM_PORTABLE, IMASTREAM_HASH_SHA512, 0x01020304,
				       sig, 0x47, buf, sizeof(buf), &len, &log_), 0);
	test_unhex("05020601020304" "0047", exp, sizeof(exp));
	ASSERT_MEM_EQ(buf, exp, 9);
	ASSERT_EQ(imastream_sig_header_encode(IMASTREAM_XATTR_IMA_VERITY_SIG, IMASTREAM_HASH_SHA256,
					      0xdeadbeef, 1, buf, &log_), 0);
	test_unhex("060304deadbeef0001", exp, sizeof(exp));
	ASSERT_MEM_EQ(buf, exp, 9);

	/* Sign in place: signature already at buf + 9 is left where it is. */
	memcpy(buf + IMASTREAM_SIG_HDR_SIZE, sig, 100);
	ASSERT_EQ(imastream_sig_encode(IMASTREAM_XATTR_DIGSIG, IMASTREAM_HASH_SHA1, 7,
				       buf + IMASTREAM_SIG_HDR_SIZE, 100, buf, sizeof(buf), &len,
				       &log_), 0);
	ASSERT_EQ(len, 109);
	ASSERT_MEM_EQ(buf + 9, sig, 100);
	test_unhex("03020200000007" "0064", exp, sizeof(exp));
	ASSERT_MEM_EQ(buf, exp, 9);

	/* Overlapping: a signature at the start of the buffer is moved, not clobbered. */
	memcpy(buf, sig, 200);
	ASSERT_EQ(imastream_sig_encode(IMASTREAM_XATTR_DIGSIG, IMASTREAM_HASH_SHA256, 7, buf, 200,
				       buf, sizeof(buf), &len, &log_), 0);
	ASSERT_MEM_EQ(buf + 9, sig, 200);
}

static void test_sig_errors(void)
{
	unsigned char buf[16], sig[8] = { 1 };
	size_t len;

	cap.count = 0;
	ASSERT_EQ(imastream_sig_encode(IMASTREAM_XATTR_IMA_DIGEST_NG, 4, 1, sig, 8, buf, 16, &len,
				       &log_), -EINVAL);
	ASSERT_EQ(cap.count, 1);
	ASSERT_EQ(imastream_sig_encode(IMASTREAM_XATTR_EVM_HMAC, 4, 1, sig, 8, buf, 16, &len, &log_),
		  -EINVAL);
	ASSERT_EQ(imastream_sig_encode(IMASTREAM_XATTR_DIGSIG, 23, 1, sig, 8, buf, 16, &len, &log_),
		  -EINVAL);
	ASSERT_EQ(imastream_sig_encode(IMASTREAM_XATTR_DIGSIG, 4, 1, sig, 0, buf, 16, &len, &log_),
		  -EINVAL);
	ASSERT_EQ(imastream_sig_encode(IMASTREAM_XATTR_DIGSIG, 4, 1, sig, 8, buf, 16, &len, &log_),
		  -ENOSPC);
	ASSERT_EQ(imastream_sig_header_encode(IMASTREAM_XATTR_DIGSIG, 4, 1, 65536, buf, &log_),
		  -EINVAL);
	ASSERT_EQ(imastream_sig_header_encode(IMASTREAM_XATTR_DIGSIG, 4, 1, 65535, buf, &log_), 0);
	ASSERT_EQ(buf[7], 0xff);
	ASSERT_EQ(buf[8], 0xff);
}

/* H(06 ‖ algo ‖ digest), computed independently (Python hashlib) for "hello world\n". */
static void test_sigv3_file_id(void)
{
	unsigned char d[64], out[64], exp[64];
	size_t n, len;

	n = md("sha256", "hello world\n", 12, d);
	ASSERT_EQ(imastream_sigv3_file_id_digest(IMASTREAM_XATTR_IMA_VERITY_SIG,
						 IMASTREAM_HASH_SHA256, d, n, out, sizeof(out),
						 &len, &log_), 0);
	ASSERT_EQ(len, 32);
	test_unhex("ca35d0653b1ab6a72feb066d6abf2cf1b418b5a0955ef5ca5c3c362a32316c95", exp,
		   sizeof(exp));
	ASSERT_MEM_EQ(out, exp, 32);

	n = md("sha512", "hello world\n", 12, d);
	ASSERT_EQ(imastream_sigv3_file_id_digest(IMASTREAM_XATTR_IMA_VERITY_SIG,
						 IMASTREAM_HASH_SHA512, d, n, out, sizeof(out),
						 &len, &log_), 0);
	ASSERT_EQ(len, 64);
	test_unhex("2a45265dd2ebd8b49c91cc046859480640ef9dab4707d95474fbd9f1c95634a3"
		   "ede8e025bc7916631c44964e31588005caa5d16b8dfc93193b435c2a6f3645f2", exp,
		   sizeof(exp));
	ASSERT_MEM_EQ(out, exp, 64);

	ASSERT_EQ(imastream_sigv3_file_id_digest(IMASTREAM_XATTR_DIGSIG, IMASTREAM_HASH_SHA256, d,
						 32, out, sizeof(out), &len, &log_), -EINVAL);
	ASSERT_EQ(imastream_sigv3_file_id_digest(IMASTREAM_XATTR_IMA_VERITY_SIG,
						 IMASTREAM_HASH_SHA256, d, 31, out, sizeof(out),
						 &len, &log_), -EINVAL);
	ASSERT_EQ(imastream_sigv3_file_id_digest(IMASTREAM_XATTR_IMA_VERITY_SIG,
						 IMASTREAM_HASH_SHA256, d, 32, out, 31, &len,
						 &log_), -ENOSPC);
}

int main(void)
{
	srand(1234);
	test_digest_known_answers();
	test_digest_errors();
	test_digest_vs_evmctl();
	test_sig_header();
	test_sig_errors();
	test_sigv3_file_id();
	return 0;
}
