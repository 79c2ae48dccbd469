// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of filesig/: IMA (v2 and fs-verity v3) and EVM signing into xattr buffers, and every verdict of verify. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "filesig/verifier.h"
#include "imastream/filesig.h"
#include "imastream/hash.h"
#include "keys/trust_cache.h"
#include "test.h"

/* Key ids of the committed test keys (tests/unit/test_keys.c checks them against evmctl). */
#define KEYID_RSA2048 0x890c1f83u
#define KEYID_P256 0x205aa15du

static char tmpdir[] = "/tmp/test_filesig.XXXXXX";
static const char *srcdir;

static void quiet(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	(void)msg;
}

static const struct imastream_log qlog = { quiet, NULL };

static char *tmp_path(const char *name)
{
	static char buf[8][4096];
	static int i;
	char *p = buf[i++ % 8];

	snprintf(p, 4096, "%s/%s", tmpdir, name);
	return p;
}

/* A 0600 copy of a committed test key (the signer refuses group-readable key files). */
static struct imastream_signer *load_signer(const char *name)
{
	struct imastream_key_opts o = { .size = sizeof(o) };
	struct imastream_signer *s = NULL;
	char src[4096], buf[8192];
	ssize_t n;
	int in, out;

	snprintf(src, sizeof(src), "%s/tests/keys/%s", srcdir, name);
	in = open(src, O_RDONLY);
	out = open(tmp_path(name), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT(in >= 0 && out >= 0);
	n = read(in, buf, sizeof(buf));
	ASSERT(n > 0 && write(out, buf, (size_t)n) == n);
	close(in);
	close(out);
	o.key = tmp_path(name);
	ASSERT_EQ(imastream_signer_new(&o, &qlog, &s), 0);
	return s;
}

static struct imastream_trust *load_trust(const char *cert)
{
	struct imastream_trust *t = NULL;
	char path[4096];

	snprintf(path, sizeof(path), "%s/tests/keys/%s", srcdir, cert);
	ASSERT_EQ(imastream_trust_new(&qlog, &t), 0);
	ASSERT_EQ(imastream_trust_add_path(t, path), 0);
	return t;
}

static int make_file(const char *name, const char *content)
{
	int fd = open(tmp_path(name), O_RDWR | O_CREAT | O_TRUNC, 0640);

	ASSERT(fd >= 0);
	ASSERT(write(fd, content, strlen(content)) == (ssize_t)strlen(content));
	return fd;
}

static void test_ima_sign_digest(void)
{
	struct imastream_signer *s = load_signer("rsa2048.pem"), *d = NULL;
	struct imastream_trust *t = load_trust("rsa2048.crt");
	struct imastream_xattr_info info = { .size = sizeof(info) };
	uint8_t digest[32], buf[IMASTREAM_SIG_HDR_SIZE + 512], buf2[sizeof(buf)];
	uint8_t opened[IMASTREAM_HASH_MAX_DIGEST];
	size_t len, len2, opened_len;

	memset(digest, 0x5a, sizeof(digest));
	ASSERT_EQ(imastream_ima_sign_digest(s, IMASTREAM_HASH_SHA256, digest, sizeof(digest), buf,
					    sizeof(buf), &len, &qlog), 0);
	/* 03 02 04 keyid(be) 0100 sig: the layout evmctl ima_sign writes. */
	ASSERT_EQ(len, IMASTREAM_SIG_HDR_SIZE + 256);
	ASSERT_EQ(buf[0], 3);
	ASSERT_EQ(buf[1], 2);
	ASSERT_EQ(buf[2], IMASTREAM_HASH_SHA256);
	ASSERT_EQ((uint32_t)buf[3] << 24 | buf[4] << 16 | buf[5] << 8 | buf[6], KEYID_RSA2048);
	ASSERT_EQ(buf[7] << 8 | buf[8], 256);
	ASSERT_EQ(imastream_xattr_decode(buf, len, &info, &qlog), 0);
	ASSERT_EQ(imastream_trust_verify(t, IMASTREAM_HASH_SHA256, digest, sizeof(digest),
					 info.data, info.data_len, info.keyid), 0);
	/* RSA opens: the signed digest comes back. */
	ASSERT_EQ(imastream_trust_signed_digest(t, IMASTREAM_HASH_SHA256, info.data,
						info.data_len, info.keyid, opened, sizeof(opened),
						&opened_len), 0);
	ASSERT_EQ(opened_len, sizeof(digest));
	ASSERT_MEM_EQ(opened, digest, sizeof(digest));
	ASSERT_EQ(imastream_trust_signed_digest(t, IMASTREAM_HASH_SHA256, info.data,
						info.data_len, 0x01020304, opened, sizeof(opened),
						&opened_len), -ENOKEY);

	/* A handle from signer_dup signs with the same key: PKCS#1 v1.5 is deterministic. */
	ASSERT_EQ(imastream_signer_dup(s, &d), 0);
	imastream_signer_free(s);
	ASSERT_EQ(imastream_ima_sign_digest(d, IMASTREAM_HASH_SHA256, digest, sizeof(digest), buf2,
					    sizeof(buf2), &len2, &qlog), 0);
	ASSERT_EQ(len2, len);
	ASSERT_MEM_EQ(buf2, buf, len);

	/* Too small a buffer, a wrong digest size: refused, nothing signed. */
	ASSERT_EQ(imastream_ima_sign_digest(d, IMASTREAM_HASH_SHA256, digest, sizeof(digest), buf,
					    100, &len, &qlog), -ENOSPC);
	ASSERT_EQ(imastream_ima_sign_digest(d, IMASTREAM_HASH_SHA256, digest, 20, buf,
					    sizeof(buf), &len, &qlog), -EINVAL);
	imastream_signer_free(d);
	imastream_trust_free(t);
}

/* Signs @fd in user.* (IMA, then EVM over the new IMA value) the way imastream sign does. */
static void sign_file(struct imastream_signer *s, int fd, const char *path)
{
	struct imastream_hasher *h;
	const uint8_t *digest;
	uint8_t ima[IMASTREAM_SIG_HDR_SIZE + 512], evm[sizeof(ima)];
	size_t digest_len, ima_len, evm_len;

	ASSERT_EQ(imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256), &qlog, &h), 0);
	ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
	ASSERT_EQ(imastream_hash_fd(h, fd), 0);
	ASSERT_EQ(imastream_hasher_digest(h, IMASTREAM_HASH_SHA256, &digest, &digest_len), 0);
	ASSERT_EQ(imastream_ima_sign_digest(s, IMASTREAM_HASH_SHA256, digest, digest_len, ima,
					    sizeof(ima), &ima_len, &qlog), 0);
	/* Without security.ima on the file and without one given: refused. */
	ASSERT_EQ(imastream_evm_sign_file(s, fd, path, IMASTREAM_FILESIG_USER, NULL, 0,
					  IMASTREAM_HASH_SHA256, evm, sizeof(evm), &evm_len, &qlog),
		  -ENODATA);
	ASSERT_EQ(imastream_evm_sign_file(s, fd, path, IMASTREAM_FILESIG_USER, ima, ima_len,
					  IMASTREAM_HASH_SHA256, evm, sizeof(evm), &evm_len, &qlog),
		  0);
	ASSERT_EQ(evm[0], IMASTREAM_XATTR_EVM_PORTABLE);
	ASSERT_EQ(fsetxattr(fd, "user.ima", ima, ima_len, 0), 0);
	ASSERT_EQ(fsetxattr(fd, "user.evm", evm, evm_len, 0), 0);
	/* Given or read back from the file, the EVM value is the same (RSA is deterministic). */
	{
		uint8_t again[sizeof(evm)];
		size_t again_len;

		ASSERT_EQ(imastream_evm_sign_file(s, fd, path, IMASTREAM_FILESIG_USER, NULL, 0,
						  IMASTREAM_HASH_SHA256, again, sizeof(again),
						  &again_len, &qlog), 0);
		if (!strcmp(imastream_signer_key_type(s), "RSA-2048")) {
			ASSERT_EQ(again_len, evm_len);
			ASSERT_MEM_EQ(again, evm, evm_len);
		}
	}
	imastream_hasher_free(h);
}

static struct imastream_verify_report check(struct imastream_verifier *v, int fd, unsigned int flags)
{
	struct imastream_verify_report r = { .size = sizeof(r) };

	ASSERT_EQ(imastream_verify_file(v, fd, "f", IMASTREAM_FILESIG_USER | flags, &r), 0);
	return r;
}

static void test_verify_rsa(void)
{
	struct imastream_signer *s = load_signer("rsa2048.pem");
	struct imastream_trust *t = load_trust("rsa2048.crt"), *other = load_trust("ec-p256.crt");
	struct imastream_verifier *v, *vo;
	struct imastream_verify_report r = { .size = sizeof(r) };
	int fd = make_file("rsa", "some content\n");
	uint8_t hmac[IMASTREAM_EVM_HMAC_XATTR_SIZE] = { IMASTREAM_XATTR_EVM_HMAC };

	if (fsetxattr(fd, "user.test", "1", 1, 0) < 0) {
		printf("SKIP: no user xattrs in %s\n", tmpdir);
		exit(TEST_SKIP);
	}
	ASSERT_EQ(imastream_verifier_new(t, &qlog, &v), 0);
	ASSERT_EQ(imastream_verifier_new(other, &qlog, &vo), 0);

	r = check(v, fd, 0);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_MISSING);
	ASSERT_EQ(r.evm.result, IMASTREAM_VERIFY_MISSING);
	ASSERT(!r.ok);

	sign_file(s, fd, tmp_path("rsa"));
	r = check(v, fd, 0);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_OK);
	ASSERT_EQ(r.evm.result, IMASTREAM_VERIFY_OK);
	ASSERT_EQ(r.ima.keyid, KEYID_RSA2048);
	ASSERT(r.ok);

	r = check(vo, fd, 0);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_UNKNOWN_KEY);
	ASSERT_EQ(r.evm.result, IMASTREAM_VERIFY_UNKNOWN_KEY);

	/* Metadata: mode. An RSA signature opens, so this is a change, not a bad signature. */
	ASSERT_EQ(fchmod(fd, 0600), 0);
	r = check(v, fd, 0);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_OK);
	ASSERT_EQ(r.evm.result, IMASTREAM_VERIFY_METADATA_CHANGED);
	ASSERT(!r.evm.undecided);
	r = check(v, fd, IMASTREAM_VERIFY_NO_EVM);
	ASSERT_EQ(r.evm.result, IMASTREAM_VERIFY_SKIPPED);
	ASSERT(r.ok);
	ASSERT_EQ(fchmod(fd, 0640), 0);

	/* Content: the IMA signature no longer matches; EVM still does (it covers the value). */
	ASSERT_EQ(pwrite(fd, "S", 1, 0), 1);
	r = check(v, fd, 0);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_CONTENT_CHANGED);
	ASSERT(!r.ima.undecided);
	ASSERT_EQ(r.evm.result, IMASTREAM_VERIFY_OK);
	/*
	 * Digests already known: the hasher's stand for the content (the file on disk is the
	 * changed one, so OK proves it was not read); a hasher without security.ima's
	 * algorithm leaves the verifier to read the file.
	 */
	{
		struct imastream_hasher *h256, *h1;

		ASSERT_EQ(imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256) |
					       IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA1), &qlog, &h256), 0);
		ASSERT_EQ(imastream_hasher_update(h256, "some content\n", 13), 0);
		ASSERT_EQ(imastream_hasher_final(h256), 0);
		ASSERT_EQ(imastream_verify_file_hashed(v, fd, "f", IMASTREAM_FILESIG_USER, h256, &r), 0);
		ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_OK);
		ASSERT(r.ok);
		ASSERT_EQ(imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA1), &qlog, &h1), 0);
		ASSERT_EQ(imastream_hasher_update(h1, "some content\n", 13), 0);
		ASSERT_EQ(imastream_hasher_final(h1), 0);
		ASSERT_EQ(imastream_verify_file_hashed(v, fd, "f", IMASTREAM_FILESIG_USER, h1, &r), 0);
		ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_CONTENT_CHANGED);
		imastream_hasher_free(h256);
		imastream_hasher_free(h1);
	}
	ASSERT_EQ(pwrite(fd, "s", 1, 0), 1);

	/* A damaged signature: it opens into nothing, so it is a bad signature. */
	{
		uint8_t val[IMASTREAM_SIG_HDR_SIZE + 256];

		ASSERT_EQ(fgetxattr(fd, "user.ima", val, sizeof(val)), (ssize_t)sizeof(val));
		val[100] ^= 0x40;
		ASSERT_EQ(fsetxattr(fd, "user.ima", val, sizeof(val), 0), 0);
		r = check(v, fd, IMASTREAM_VERIFY_NO_EVM);
		ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_BAD_SIGNATURE);
		/* Cut short: the decoder refuses it. */
		ASSERT_EQ(fsetxattr(fd, "user.ima", val, 20, 0), 0);
		r = check(v, fd, IMASTREAM_VERIFY_NO_EVM);
		ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_MALFORMED);
		ASSERT(r.ima.detail[0]);
	}

	/* An HMAC: well formed, but only the device key could check it. */
	ASSERT_EQ(fsetxattr(fd, "user.evm", hmac, sizeof(hmac), 0), 0);
	r = check(v, fd, 0);
	ASSERT_EQ(r.evm.result, IMASTREAM_VERIFY_UNVERIFIABLE);
	ASSERT(strstr(r.evm.detail, "HMAC"));
	/* A digest type in security.evm does not belong there. */
	ASSERT_EQ(fsetxattr(fd, "user.evm", "\x04\x04", 2, 0), 0);
	r = check(v, fd, 0);
	ASSERT_EQ(r.evm.result, IMASTREAM_VERIFY_MALFORMED);

	ASSERT(!strcmp(imastream_verify_result_str(IMASTREAM_VERIFY_UNKNOWN_KEY), "unknown key id"));
	ASSERT(!strcmp(imastream_verify_result_str(99), "unknown result"));
	close(fd);
	imastream_verifier_free(v);
	imastream_verifier_free(vo);
	imastream_trust_free(t);
	imastream_trust_free(other);
	imastream_signer_free(s);
}

static void test_verify_ecdsa(void)
{
	struct imastream_signer *s = load_signer("ec-p256.pem");
	struct imastream_trust *t = load_trust("ec-p256.crt");
	struct imastream_verifier *v;
	struct imastream_verify_report r = { .size = sizeof(r) };
	uint8_t opened[IMASTREAM_HASH_MAX_DIGEST], sig[80];
	size_t opened_len;
	int fd = make_file("ec", "ecdsa content\n");

	ASSERT_EQ(imastream_verifier_new(t, &qlog, &v), 0);
	sign_file(s, fd, tmp_path("ec"));
	r = check(v, fd, 0);
	ASSERT(r.ok);
	ASSERT_EQ(r.ima.keyid, KEYID_P256);
	/* ECDSA hides what it signed: a change cannot be told from a bad signature. */
	ASSERT_EQ(pwrite(fd, "E", 1, 0), 1);
	r = check(v, fd, 0);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_CONTENT_CHANGED);
	ASSERT(r.ima.undecided);
	memset(sig, 0, sizeof(sig));
	ASSERT_EQ(imastream_trust_signed_digest(t, IMASTREAM_HASH_SHA256, sig, sizeof(sig),
						KEYID_P256, opened, sizeof(opened), &opened_len),
		  -EOPNOTSUPP);
	close(fd);
	imastream_verifier_free(v);
	imastream_trust_free(t);
	imastream_signer_free(s);
}

/* Sets user.ima to @s's signature of @fd's content with @algo. */
static void sign_ima_with(struct imastream_signer *s, int fd, int algo)
{
	struct imastream_hasher *h;
	const uint8_t *digest;
	uint8_t ima[IMASTREAM_SIG_HDR_SIZE + 512];
	size_t digest_len, ima_len;

	ASSERT_EQ(imastream_hasher_new(IMASTREAM_HASH_BIT(algo), &qlog, &h), 0);
	ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
	ASSERT_EQ(imastream_hash_fd(h, fd), 0);
	ASSERT_EQ(imastream_hasher_digest(h, algo, &digest, &digest_len), 0);
	ASSERT_EQ(imastream_ima_sign_digest(s, algo, digest, digest_len, ima, sizeof(ima),
					    &ima_len, &qlog), 0);
	ASSERT_EQ(fsetxattr(fd, "user.ima", ima, ima_len, 0), 0);
	imastream_hasher_free(h);
}

/*
 * One verifier keeps a verify context per key and hash: signatures by two keys with two
 * hashes, in turns, each verdict its own; a signature moved to another file still fails.
 */
static void test_verify_kept_contexts(void)
{
	struct imastream_signer *rsa = load_signer("rsa2048.pem"), *ec = load_signer("ec-p256.pem");
	struct imastream_trust *t = load_trust("rsa2048.crt");
	struct imastream_signer *signers[] = { rsa, ec };
	const int algos[] = { IMASTREAM_HASH_SHA256, IMASTREAM_HASH_SHA512 };
	struct imastream_verifier *v;
	struct imastream_verify_report r;
	uint8_t moved[IMASTREAM_SIG_HDR_SIZE + 512];
	ssize_t moved_len;
	char path[4096];
	int fd = make_file("kept", "kept content\n"), other = make_file("kept2", "other\n");

	snprintf(path, sizeof(path), "%s/tests/keys/ec-p256.crt", srcdir);
	ASSERT_EQ(imastream_trust_add_path(t, path), 0);
	ASSERT_EQ(imastream_verifier_new(t, &qlog, &v), 0);
	for (int round = 0; round < 2; round++)
		for (size_t k = 0; k < 2; k++)
			for (size_t a = 0; a < 2; a++) {
				sign_ima_with(signers[k], fd, algos[a]);
				r = check(v, fd, IMASTREAM_VERIFY_NO_EVM);
				ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_OK);
				ASSERT_EQ(r.ima.algo, algos[a]);
				ASSERT_EQ(r.ima.keyid, k ? KEYID_P256 : KEYID_RSA2048);
				/* The same value on other content: not this file's signature. */
				moved_len = fgetxattr(fd, "user.ima", moved, sizeof(moved));
				ASSERT(moved_len > 0);
				ASSERT_EQ(fsetxattr(other, "user.ima", moved, (size_t)moved_len, 0), 0);
				r = check(v, other, IMASTREAM_VERIFY_NO_EVM);
				ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_CONTENT_CHANGED);
			}
	close(fd);
	close(other);
	imastream_verifier_free(v);
	imastream_trust_free(t);
	imastream_signer_free(rsa);
	imastream_signer_free(ec);
}

/*
 * "hello world\n": its fs-verity digest and the sigv3 value ima-evm-utils 1.5 (Debian 13's
 * 1.5-2) makes of it with tests/keys/rsa2048.pem, from
 *   fsverity digest hello | evmctl sign_hash --veritysig --key rsa2048.pem
 */
static const char hello_verity[] =
	"37061ef2ac4c21bec68489b56138c5780306a4ad7fe6676236ecdf2c9027cd92";
static const char hello_evmctl_sigv3[] =
	"060304890c1f83010057cda4be889729ca0193305a39ae58c8cbb9b09199612f"
	"61094e1e25012b150848457eeafe14280481574420696ee8b5ecdb660e367b1b"
	"c9d8b07f27d19092efaf40e16d4e418e7e45883617e9c3794e8b15a75215cb7d"
	"88a35c61b1b7c7784614dcba6d6c3872c7a2bcaaa0fc53f94d41d20d16f95fc7"
	"8be6276361aa5a95d718b94e3fdaf2a06184128dd458129a8a218613b7dbc7b4"
	"273aeefac20c8aee3e71f64a2e217fdf15323e9f9e2236b6dd1dc6c6b124d45d"
	"e621585c3369474795b195b99f986536fe4d425136786c60c93a8da5a7561428"
	"7f274e8451d9075c397ce964dac7b35de4e4b5f2294625e589b4e36c482793dd"
	"9da4a32ce4394e69df";

/* Type 6, version 3: byte for byte evmctl's RSA value; verified over the verity digest. */
static void test_ima_sign_verity(void)
{
	struct imastream_signer *s = load_signer("rsa2048.pem"), *ec = load_signer("ec-p256.pem");
	struct imastream_trust *t = load_trust("rsa2048.crt"), *te = load_trust("ec-p256.crt");
	struct imastream_verifier *v, *ve;
	struct imastream_verify_report r = { .size = sizeof(r) };
	struct imastream_xattr_info info = { .size = sizeof(info) };
	uint8_t digest[32], buf[IMASTREAM_SIG_HDR_SIZE + 512], want[IMASTREAM_SIG_HDR_SIZE + 256];
	size_t len;
	int fd = make_file("verity", "hello world\n");

	test_unhex(hello_verity, digest, sizeof(digest));
	test_unhex(hello_evmctl_sigv3, want, sizeof(want));
	ASSERT_EQ(imastream_ima_sign_verity(s, IMASTREAM_HASH_SHA256, digest, sizeof(digest), buf,
					    sizeof(buf), &len, &qlog), 0);
	ASSERT_EQ(len, sizeof(want));
	ASSERT_MEM_EQ(buf, want, sizeof(want));
	ASSERT_EQ(imastream_xattr_decode(buf, len, &info, &qlog), 0);
	ASSERT_EQ(info.type, IMASTREAM_XATTR_IMA_VERITY_SIG);
	ASSERT_EQ(info.version, 3);
	/* Not a signature over the digest itself: that is what version 3 prevents. */
	ASSERT_EQ(imastream_trust_verify(t, IMASTREAM_HASH_SHA256, digest, sizeof(digest),
					 info.data, info.data_len, info.keyid), -EBADMSG);
	/* Refused before signing: a digest of the wrong size, no room. */
	ASSERT_EQ(imastream_ima_sign_verity(s, IMASTREAM_HASH_SHA256, digest, 20, buf, sizeof(buf),
					    &len, &qlog), -EINVAL);
	ASSERT_EQ(imastream_ima_sign_verity(s, IMASTREAM_HASH_SHA256, digest, sizeof(digest), buf,
					    100, &len, &qlog), -ENOSPC);

	if (fsetxattr(fd, "user.ima", want, sizeof(want), 0) < 0) {
		printf("SKIP: no user xattrs in %s\n", tmpdir);
		exit(TEST_SKIP);
	}
	ASSERT_EQ(imastream_verifier_new(t, &qlog, &v), 0);
	ASSERT_EQ(imastream_verifier_new(te, &qlog, &ve), 0);
	/* evmctl's value verifies over the digest recomputed from the content. */
	r = check(v, fd, IMASTREAM_VERIFY_NO_EVM);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_OK);
	ASSERT_EQ(r.ima.type, IMASTREAM_XATTR_IMA_VERITY_SIG);
	ASSERT_EQ(r.ima.keyid, KEYID_RSA2048);
	r = check(ve, fd, IMASTREAM_VERIFY_NO_EVM);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_UNKNOWN_KEY);
	/* One byte changed: the verity digest differs, and the RSA signature says so. */
	ASSERT_EQ(pwrite(fd, "H", 1, 0), 1);
	r = check(v, fd, IMASTREAM_VERIFY_NO_EVM);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_CONTENT_CHANGED);
	ASSERT(!r.ima.undecided);
	ASSERT_EQ(pwrite(fd, "h", 1, 0), 1);
	/* A v2 signature of the same digest stored as type 6 with version 3 does not pass. */
	ASSERT_EQ(imastream_ima_sign_digest(s, IMASTREAM_HASH_SHA256, digest, sizeof(digest), buf,
					    sizeof(buf), &len, &qlog), 0);
	buf[0] = IMASTREAM_XATTR_IMA_VERITY_SIG;
	buf[1] = 3;
	ASSERT_EQ(fsetxattr(fd, "user.ima", buf, len, 0), 0);
	r = check(v, fd, IMASTREAM_VERIFY_NO_EVM);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_CONTENT_CHANGED);
	/* A sha512 fs-verity signature: well formed, but its digest is not computed here. */
	buf[2] = IMASTREAM_HASH_SHA512;
	ASSERT_EQ(fsetxattr(fd, "user.ima", buf, len, 0), 0);
	r = check(v, fd, IMASTREAM_VERIFY_NO_EVM);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_UNVERIFIABLE);
	ASSERT(strstr(r.ima.detail, "sha512"));

	/* ECDSA: a fresh value each time, verified; a change cannot be told from a bad one. */
	ASSERT_EQ(imastream_ima_sign_verity(ec, IMASTREAM_HASH_SHA256, digest, sizeof(digest), buf,
					    sizeof(buf), &len, &qlog), 0);
	ASSERT_EQ(fsetxattr(fd, "user.ima", buf, len, 0), 0);
	r = check(ve, fd, IMASTREAM_VERIFY_NO_EVM);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_OK);
	ASSERT_EQ(r.ima.keyid, KEYID_P256);
	ASSERT_EQ(pwrite(fd, "H", 1, 0), 1);
	r = check(ve, fd, IMASTREAM_VERIFY_NO_EVM);
	ASSERT_EQ(r.ima.result, IMASTREAM_VERIFY_CONTENT_CHANGED);
	ASSERT(r.ima.undecided);

	close(fd);
	imastream_verifier_free(v);
	imastream_verifier_free(ve);
	imastream_trust_free(t);
	imastream_trust_free(te);
	imastream_signer_free(s);
	imastream_signer_free(ec);
}

int main(void)
{
	srcdir = getenv("top_srcdir");
	if (!srcdir)
		srcdir = ".";
	ASSERT(mkdtemp(tmpdir));
	test_ima_sign_digest();
	test_verify_rsa();
	test_verify_ecdsa();
	test_verify_kept_contexts();
	test_ima_sign_verity();
	/* Best effort: the files are small and the directory is ours. */
	{
		const char *names[] = { "rsa2048.pem", "ec-p256.pem", "rsa", "ec", "verity", "kept",
					"kept2" };

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			unlink(tmp_path(names[i]));
		rmdir(tmpdir);
	}
	return 0;
}
