// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of filesig/: IMA and EVM signing into xattr buffers, and every verdict of verify. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "imastream/filesig.h"
#include "imastream/hash.h"
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
	struct imastream_key_opts o = { 0 };
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
	struct imastream_xattr_info info;
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
	struct imastream_verify_report r;

	ASSERT_EQ(imastream_verify_file(v, fd, "f", IMASTREAM_FILESIG_USER | flags, &r), 0);
	return r;
}

static void test_verify_rsa(void)
{
	struct imastream_signer *s = load_signer("rsa2048.pem");
	struct imastream_trust *t = load_trust("rsa2048.crt"), *other = load_trust("ec-p256.crt");
	struct imastream_verifier *v, *vo;
	struct imastream_verify_report r;
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
	struct imastream_verify_report r;
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

int main(void)
{
	srcdir = getenv("top_srcdir");
	if (!srcdir)
		srcdir = ".";
	ASSERT(mkdtemp(tmpdir));
	test_ima_sign_digest();
	test_verify_rsa();
	test_verify_ecdsa();
	/* Best effort: the files are small and the directory is ours. */
	{
		const char *names[] = { "rsa2048.pem", "ec-p256.pem", "rsa", "ec" };

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			unlink(tmp_path(names[i]));
		rmdir(tmpdir);
	}
	return 0;
}
