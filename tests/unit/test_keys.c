// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of keys/: loading, key ids, signing, trust store, and each error's one line. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "imastream/hash.h"
#include "imastream/keys.h"
#include "keys/keys-private.h"
#include "keys/trust_cache.h"
#include "tests/unit/test.h"

/* Key ids of the committed test keys, checked against evmctl 1.4 when they were made. */
#define KEYID_RSA2048 0x890c1f83u
#define KEYID_FORCED 0x12345678u
#define KEYID_P256 0x205aa15du
#define KEYID_P384 0x249f7a9du

static char tmpdir[] = "/tmp/test_keys.XXXXXX";
static const char *srcdir;

/* Captures what the library says: the last line and how many ERR lines. */
static char last_msg[1024];
static int err_lines;

static void capture(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= IMASTREAM_LOG_ERR)
		err_lines++;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

static const struct imastream_log tlog = { capture, NULL };

static void reset_log(void)
{
	last_msg[0] = 0;
	err_lines = 0;
}

/* An error must be exactly one line that says @needle. */
#define ASSERT_ONE_LINE(needle)                                                          \
	do {                                                                             \
		if (err_lines != 1 || !strstr(last_msg, (needle))) {                     \
			fprintf(stderr, "%s:%d: expected one line with '%s', got %d: %s\n", \
				__FILE__, __LINE__, (needle), err_lines, last_msg);       \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

static char *src_path(const char *name)
{
	static char buf[8][4096];
	static int i;
	char *p = buf[i++ % 8];

	snprintf(p, 4096, "%s/tests/keys/%s", srcdir, name);
	return p;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = malloc(1 << 20);

	ASSERT(f && buf);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

/* Writes the concatenation of @a and @b (may be NULL) to a temp file with @mode. */
static char *private_copy(const char *name, const char *a, const char *b, mode_t mode)
{
	static char paths[8][4096];
	static int i;
	char *out = paths[i++ % 8];
	const char *parts[2] = { a, b };
	int fd;

	snprintf(out, 4096, "%s/%s", tmpdir, name);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT(fd >= 0);
	for (int k = 0; k < 2; k++) {
		size_t len;
		uint8_t *buf;

		if (!parts[k])
			continue;
		buf = slurp(src_path(parts[k]), &len);
		ASSERT(write(fd, buf, len) == (ssize_t)len);
		free(buf);
	}
	ASSERT(fchmod(fd, mode) == 0);
	close(fd);
	return out;
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	ASSERT(fd >= 0);
	ASSERT(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	ASSERT(fchmod(fd, mode) == 0);
	close(fd);
}

static int signer_from(struct imastream_key_opts *o, struct imastream_signer **s)
{
	reset_log();
	return imastream_signer_new(o, &tlog, s);
}

static void test_keyids(void)
{
	static const struct {
		const char *file;
		uint32_t keyid;
		bool skid;
	} certs[] = {
		{ "rsa2048.crt", KEYID_RSA2048, true },
		{ "rsa2048-forced.crt", KEYID_FORCED, true },
		{ "rsa2048-noskid.crt", KEYID_RSA2048, false },
		{ "ec-p256.der", KEYID_P256, true },
		{ "ec-p384.crt", KEYID_P384, true },
	};
	uint32_t id;
	size_t len;
	uint8_t *buf;
	bool skid;

	for (size_t i = 0; i < ARRAY_SIZE(certs); i++) {
		buf = slurp(src_path(certs[i].file), &len);
		ASSERT_EQ(imastream_keyid_from_cert(buf, len, &tlog, &id, &skid), 0);
		ASSERT_EQ(id, certs[i].keyid);
		ASSERT_EQ(skid, certs[i].skid);
		free(buf);
	}
	/* evmctl's bare-key rule, from the private key and from its public half. */
	buf = slurp(src_path("rsa2048.pem"), &len);
	ASSERT_EQ(imastream_keyid_from_pubkey(buf, len, &tlog, &id), 0);
	ASSERT_EQ(id, KEYID_RSA2048);
	free(buf);
	buf = slurp(src_path("ec-p384.pem"), &len);
	ASSERT_EQ(imastream_keyid_from_pubkey(buf, len, &tlog, &id), 0);
	ASSERT_EQ(id, KEYID_P384);
	free(buf);
	reset_log();
	ASSERT_EQ(imastream_keyid_from_cert("junk", 4, &tlog, &id, NULL), -EINVAL);
	ASSERT_ONE_LINE("not an X.509 certificate");
}

/* Signs with @s and checks the result with a trust store holding @crt. */
static void sign_and_verify(struct imastream_signer *s, const char *crt)
{
	static const int algos[] = { IMASTREAM_HASH_SHA1, IMASTREAM_HASH_SHA256,
				     IMASTREAM_HASH_SHA384, IMASTREAM_HASH_SHA512 };
	struct imastream_trust *t;
	uint8_t digest[64], sig[1024];
	size_t sig_len;

	ASSERT_EQ(imastream_trust_new(&tlog, &t), 0);
	ASSERT_EQ(imastream_trust_add_path(t, src_path(crt)), 0);
	ASSERT_EQ(imastream_trust_count(t), 1);
	for (size_t i = 0; i < ARRAY_SIZE(algos); i++) {
		const struct imastream_hash_info *h = imastream_hash_by_algo(algos[i]);

		memset(digest, 0x5a + (int)i, sizeof(digest));
		ASSERT_EQ(imastream_signer_sign(s, algos[i], digest, h->digest_size, sig, sizeof(sig),
						&sig_len), 0);
		ASSERT(sig_len <= imastream_signer_max_sig_size(s));
		ASSERT_EQ(imastream_trust_verify(t, algos[i], digest, h->digest_size, sig, sig_len,
						 imastream_signer_keyid(s)), 0);
		/* One flipped bit in the digest must fail, naming the key id. */
		digest[0] ^= 1;
		reset_log();
		ASSERT_EQ(imastream_trust_verify(t, algos[i], digest, h->digest_size, sig, sig_len,
						 imastream_signer_keyid(s)), -EBADMSG);
		ASSERT_ONE_LINE("does not verify");
		reset_log();
		ASSERT_EQ(imastream_trust_verify(t, algos[i], digest, h->digest_size, sig, sig_len,
						 imastream_signer_keyid(s) ^ 1), -ENOKEY);
		ASSERT_ONE_LINE("no trusted certificate has key id");
	}
	imastream_trust_free(t);
}

static void test_sign(void)
{
	static const struct {
		const char *key, *crt, *type;
		uint32_t keyid;
		size_t max_sig;
	} keys[] = {
		{ "rsa2048.pem", "rsa2048.crt", "RSA-2048", KEYID_RSA2048, 256 },
		{ "ec-p256.pem", "ec-p256.crt", "ECDSA-P256", KEYID_P256, 72 },
		{ "ec-p384.pem", "ec-p384.crt", "ECDSA-P384", KEYID_P384, 104 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		struct imastream_key_opts o = { .size = sizeof(o) };
		struct imastream_signer *s;

		o.key = private_copy("k.pem", keys[i].key, NULL, 0600);
		ASSERT_EQ(signer_from(&o, &s), 0);
		ASSERT(!strcmp(imastream_signer_key_type(s), keys[i].type));
		ASSERT_EQ(imastream_signer_keyid(s), keys[i].keyid);
		ASSERT_EQ(imastream_signer_max_sig_size(s), keys[i].max_sig);
		sign_and_verify(s, keys[i].crt);
		imastream_signer_free(s);
	}
}

/* RSA PKCS#1 v1.5 is deterministic: two signatures of one digest are the same bytes. */
static void test_rsa_deterministic(void)
{
	struct imastream_key_opts o = { .size = sizeof(o) };
	struct imastream_signer *s;
	uint8_t d[32] = { 1 }, a[512], b[512];
	size_t la, lb;

	o.key = private_copy("k.pem", "rsa2048.pem", NULL, 0600);
	ASSERT_EQ(signer_from(&o, &s), 0);
	ASSERT_EQ(imastream_signer_sign(s, IMASTREAM_HASH_SHA256, d, 32, a, sizeof(a), &la), 0);
	ASSERT_EQ(imastream_signer_sign(s, IMASTREAM_HASH_SHA256, d, 32, b, sizeof(b), &lb), 0);
	ASSERT_EQ(la, 256);
	ASSERT_EQ(lb, 256);
	ASSERT_MEM_EQ(a, b, 256);
	imastream_signer_free(s);
}

static void test_keyid_sources(void)
{
	struct imastream_key_opts o = { .size = sizeof(o) };
	struct imastream_signer *s;

	/* A forced SKID in an appended certificate wins over the bare-key rule... */
	o.key = private_copy("kc.pem", "rsa2048.pem", "rsa2048-forced.crt", 0600);
	ASSERT_EQ(signer_from(&o, &s), 0);
	ASSERT_EQ(imastream_signer_keyid(s), KEYID_FORCED);
	imastream_signer_free(s);
	/* ...also when the certificate comes first... */
	o.key = private_copy("ck.pem", "rsa2048-forced.crt", "rsa2048.pem", 0600);
	ASSERT_EQ(signer_from(&o, &s), 0);
	ASSERT_EQ(imastream_signer_keyid(s), KEYID_FORCED);
	imastream_signer_free(s);
	/* ...and from a separate certificate file; the override beats them all. */
	o.key = private_copy("k.pem", "rsa2048.pem", NULL, 0600);
	o.cert = src_path("rsa2048-forced.crt");
	ASSERT_EQ(signer_from(&o, &s), 0);
	ASSERT_EQ(imastream_signer_keyid(s), KEYID_FORCED);
	imastream_signer_free(s);
	o.has_keyid = true;
	o.keyid = 0xdeadbeef;
	ASSERT_EQ(signer_from(&o, &s), 0);
	ASSERT_EQ(imastream_signer_keyid(s), 0xdeadbeef);
	imastream_signer_free(s);
	/* A certificate without SKID: evmctl's rule, with a warning that the kernel won't match. */
	o.has_keyid = false;
	o.cert = src_path("rsa2048-noskid.crt");
	ASSERT_EQ(signer_from(&o, &s), 0);
	ASSERT_EQ(imastream_signer_keyid(s), KEYID_RSA2048);
	ASSERT(strstr(last_msg, "no subjectKeyIdentifier"));
	imastream_signer_free(s);
}

static void test_passphrase(void)
{
	struct imastream_key_opts o = { .size = sizeof(o) };
	struct imastream_signer *s;
	char pass_file[4096];

	o.key = private_copy("enc.pem", "rsa2048-enc.pem", NULL, 0600);
	ASSERT_EQ(signer_from(&o, &s), -EINVAL);
	ASSERT_ONE_LINE("private key is encrypted: give its passphrase");

	setenv("TEST_KEYS_PASS", "test passphrase", 1);
	o.pass_env = "TEST_KEYS_PASS";
	ASSERT_EQ(signer_from(&o, &s), 0);
	ASSERT_EQ(imastream_signer_keyid(s), KEYID_RSA2048);
	imastream_signer_free(s);

	setenv("TEST_KEYS_PASS", "not the passphrase", 1);
	ASSERT_EQ(signer_from(&o, &s), -EKEYREJECTED);
	ASSERT_ONE_LINE("wrong passphrase");

	o.pass_env = "TEST_KEYS_UNSET_VARIABLE";
	ASSERT_EQ(signer_from(&o, &s), -EINVAL);
	ASSERT_ONE_LINE("passphrase variable TEST_KEYS_UNSET_VARIABLE is not set");

	o.pass_env = NULL;
	snprintf(pass_file, sizeof(pass_file), "%s/pass", tmpdir);
	write_text(pass_file, "test passphrase\n", 0600);
	o.pass_file = pass_file;
	ASSERT_EQ(signer_from(&o, &s), 0);
	imastream_signer_free(s);
	/* The passphrase file is a secret too. */
	write_text(pass_file, "test passphrase\n", 0640);
	ASSERT_EQ(signer_from(&o, &s), -EPERM);
	ASSERT_ONE_LINE("readable or writable by group or others");
}

static void test_errors(void)
{
	struct imastream_key_opts o = { .size = sizeof(o) };
	struct imastream_signer *s = NULL;
	uint8_t d[64] = { 0 }, sig[512];
	char junk[4096];
	size_t len;

	o.key = private_copy("k644.pem", "rsa2048.pem", NULL, 0644);
	ASSERT_EQ(signer_from(&o, &s), -EPERM);
	ASSERT_ONE_LINE("private key is readable or writable by group or others (mode 0644)");

	snprintf(junk, sizeof(junk), "%s/junk.pem", tmpdir);
	write_text(junk, "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n", 0600);
	o.key = junk;
	ASSERT_EQ(signer_from(&o, &s), -EINVAL);
	ASSERT_ONE_LINE("no usable private key in it");

	o.key = "/nonexistent/key.pem";
	ASSERT_EQ(signer_from(&o, &s), -ENOENT);
	ASSERT_ONE_LINE("cannot open key");

	o.key = private_copy("k.pem", "rsa2048.pem", NULL, 0600);
	o.cert = src_path("ec-p256.crt");
	ASSERT_EQ(signer_from(&o, &s), -EKEYREJECTED);
	ASSERT_ONE_LINE("does not match the private key");
	o.cert = NULL;
	o.key = private_copy("kc.pem", "rsa2048.pem", "ec-p256.crt", 0600);
	ASSERT_EQ(signer_from(&o, &s), -EKEYREJECTED);
	ASSERT_ONE_LINE("the certificate in the key file does not match");

	o.key = private_copy("r1024.pem", "rsa1024.pem", NULL, 0600);
	ASSERT_EQ(signer_from(&o, &s), -EOPNOTSUPP);
	ASSERT_ONE_LINE("RSA-1024 key refused");
	o.key = private_copy("ed.pem", "ed25519.pem", NULL, 0600);
	ASSERT_EQ(signer_from(&o, &s), -EOPNOTSUPP);
	ASSERT_ONE_LINE("ED25519 key refused");
	o.key = private_copy("k1.pem", "ec-secp256k1.pem", NULL, 0600);
	ASSERT_EQ(signer_from(&o, &s), -EOPNOTSUPP);
	ASSERT_ONE_LINE("curve secp256k1 refused");

	o.key = private_copy("k.pem", "ec-p256.pem", NULL, 0600);
	ASSERT_EQ(signer_from(&o, &s), 0);
	reset_log();
	ASSERT_EQ(imastream_signer_sign(s, 99, d, 32, sig, sizeof(sig), &len), -EINVAL);
	ASSERT_ONE_LINE("unknown hash algorithm id 99");
	reset_log();
	ASSERT_EQ(imastream_signer_sign(s, IMASTREAM_HASH_SHA256, d, 20, sig, sizeof(sig), &len),
		  -EINVAL);
	ASSERT_ONE_LINE("sha256 digest must be 32 bytes, got 20");
	reset_log();
	ASSERT_EQ(imastream_signer_sign(s, IMASTREAM_HASH_SHA256, d, 32, sig, 8, &len), -ENOSPC);
	ASSERT_ONE_LINE("only 8 given");
	imastream_signer_free(s);
}

static void test_store_uri(void)
{
	struct imastream_key_opts o = { .size = sizeof(o) };
	struct imastream_signer *s;
	char uri[4096 + 8];

	/* OpenSSL's own "file:" loader goes through the same OSSL_STORE path as tpm2's. */
	snprintf(uri, sizeof(uri), "file:%s", private_copy("k.pem", "ec-p256.pem", NULL, 0600));
	o.key = uri;
	ASSERT_EQ(signer_from(&o, &s), 0);
	ASSERT_EQ(imastream_signer_keyid(s), KEYID_P256);
	sign_and_verify(s, "ec-p256.crt");
	imastream_signer_free(s);

	o.key = "nosuchscheme:whatever";
	ASSERT_EQ(signer_from(&o, &s), -EOPNOTSUPP);
	ASSERT_ONE_LINE("no OpenSSL provider serves the URI scheme 'nosuchscheme'");
}

static void test_trust(void)
{
	struct imastream_trust *t;
	uint8_t d[32] = { 0 }, sig[64] = { 0 };
	size_t len;
	uint8_t *buf;
	uint32_t ed_id;

	/* A directory: every certificate is found; the private keys there are skipped. */
	ASSERT_EQ(imastream_trust_new(&tlog, &t), 0);
	ASSERT_EQ(imastream_trust_add_path(t, src_path("")), 0);
	ASSERT_EQ(imastream_trust_count(t), 8);
	/* An Ed25519 certificate is known but cannot verify an IMA signature. */
	buf = slurp(src_path("ed25519.crt"), &len);
	ASSERT_EQ(imastream_keyid_from_cert(buf, len, &tlog, &ed_id, NULL), 0);
	free(buf);
	reset_log();
	ASSERT_EQ(imastream_trust_verify(t, IMASTREAM_HASH_SHA256, d, 32, sig, sizeof(sig), ed_id),
		  -EKEYREJECTED);
	ASSERT_ONE_LINE("the certificate holds an ED25519 key (the kernel: RSA and ECDSA P-256/P-384 only)");
	ASSERT(strcmp(imastream_trust_rejection(t, ed_id),
		      "an ED25519 key (the kernel: RSA and ECDSA P-256/P-384 only)") == 0);
	/* A curve the kernel cannot use: the message names it (issue 12 item 13). */
	reset_log();
	ASSERT_EQ(imastream_trust_verify(t, IMASTREAM_HASH_SHA256, d, 32, sig, sizeof(sig),
					 0xbb0435d0), -EKEYREJECTED);
	ASSERT_ONE_LINE("key id bb0435d0: the certificate holds an EC key on curve secp256k1 "
			"(the kernel: ECDSA P-256/P-384 only)");
	ASSERT(!imastream_trust_rejection(t, 0x12345678));
	reset_log();
	ASSERT_EQ(imastream_trust_verify(t, 42, d, 32, sig, sizeof(sig), ed_id), -EINVAL);
	ASSERT_ONE_LINE("unknown hash algorithm id 42");
	reset_log();
	ASSERT_EQ(imastream_trust_add_mem(t, "garbage", 7, "garbage.der"), -EINVAL);
	ASSERT_ONE_LINE("garbage.der: not an X.509 certificate");
	imastream_trust_free(t);
}

int main(void)
{
	srcdir = getenv("top_srcdir");
	if (!srcdir)
		srcdir = ".";
	ASSERT(mkdtemp(tmpdir));
	test_keyids();
	test_sign();
	test_rsa_deterministic();
	test_keyid_sources();
	test_passphrase();
	test_errors();
	test_store_uri();
	test_trust();
	/* Leave nothing behind. */
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		ASSERT(system(cmd) == 0);
	}
	printf("ok\n");
	return 0;
}
