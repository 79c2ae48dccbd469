// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ima plugin's decision on a package's file signature, with a fixed vector (the test
 * RSA-2048 key's PKCS#1 v1.5 signature of sha256("hello\n"), made by openssl): written as
 * it is when it verifies; refused in one line naming the file and the key id, or
 * replaced by the local hash, when it is altered, foreign, unusable or has no store.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imastream/chain.h"
#include "tests/unit/test.h"

/* openssl pkeyutl -sign -inkey tests/keys/rsa2048.pem -pkeyopt digest:sha256 */
static const char sig_hex[] =
	"23f69e2cb5f3f777cc0993d78f7558d6518e0479c056808813487687c36303ca"
	"114851b9a1827d6f94a2e5d17fd5ee07078362cb14be8071ead1a99daaaadd15"
	"9d22f5093ac1ae745759d2a0282be5426bfa4c06357b29013e5c9299c5965b42"
	"af1b4ba4cfb096f2fb2c5dc311066b0cf1ae9a2232e863c26444ca4aab3245cc"
	"54cd4abfcf2c0def2e471ccc89b0b7e5570d27312b103c18626f2657f051ff70"
	"0a9e993c252c0460cdc67413c272f479aeba40be5847a0514b7dcef6e99bc408"
	"c2aadc294d9ccf58349f96afe553e382ea135a2fef1e3c940659258f29b5b3ae"
	"0fbfcac9a69a9b0fba076ceff9f87009e181a5a556e096278af0704523ad17cb";
/* Last four bytes of tests/keys/rsa2048.crt's subjectKeyIdentifier. */
#define KEYID "890c1f83"
#define HELLO_SHA256 "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"

static const char *srcdir;
static char workdir[256];
static int n_err, n_warn;
static char last_err[600], last_warn[600], last_notice[600], debug_seen[600];

static void remember(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level == IMASTREAM_LOG_ERR) {
		n_err++;
		snprintf(last_err, sizeof(last_err), "%s", msg);
	} else if (level == IMASTREAM_LOG_WARNING) {
		n_warn++;
		snprintf(last_warn, sizeof(last_warn), "%s", msg);
	} else if (level == IMASTREAM_LOG_NOTICE) {
		snprintf(last_notice, sizeof(last_notice), "%s", msg);
	} else if (strstr(msg, "package signature")) {
		snprintf(debug_seen, sizeof(debug_seen), "%s", msg);
	}
}

static const struct imastream_log log_ = { remember, NULL };

static const char *key_path(const char *name)
{
	static char p[4096];

	snprintf(p, sizeof(p), "%s/tests/keys/%s", srcdir, name);
	return p;
}

/* What one file run gives: the chain's result and the security.ima it recorded. */
struct outcome {
	int err;
	uint8_t ima[600];
	size_t ima_len;
};

enum { VIA_HEADER, VIA_REREAD };

/*
 * One file with @content through a chain of just "ima" configured by @kv ("key", "value"
 * pairs, NULL-terminated), carrying @sig as its package signature.
 */
static struct outcome run(const char *const *kv, const uint8_t *sig, size_t sig_len,
			  const char *content, int via, unsigned int flags)
{
	struct imastream_config cfg;
	struct imastream_chain *chain = NULL;
	struct imastream_file f = { .size = sizeof(f) };
	const struct imastream_file_xattr *x;
	struct outcome o = { 0 };
	char path[600];

	n_err = n_warn = 0;
	last_err[0] = last_warn[0] = debug_seen[0] = '\0';
	ASSERT_EQ(imastream_config_init(&cfg), 0);
	/* Any filesystem: the recorded value is what is checked. */
	ASSERT_EQ(imastream_config_set(&cfg, "no_xattr_support", "skip", "test", &log_), 0);
	for (; kv && kv[0]; kv += 2)
		ASSERT_EQ(imastream_config_set(&cfg, kv[0], kv[1], "test", &log_), 0);
	ASSERT_EQ(imastream_chain_new(&cfg, &log_, &chain), 0);
	ASSERT_EQ(imastream_chain_add_list(chain, "ima"), 0);
	ASSERT_EQ(imastream_chain_init(chain), 0);

	snprintf(path, sizeof(path), "%s/file;0a1b2c3d", workdir);
	f.path = path;
	f.dest = "/opt/t/file";
	f.mode = S_IFREG | 0644;
	f.flags = flags;
	f.pkg_sig = sig;
	f.pkg_sig_len = sig_len;
	f.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT(f.fd >= 0);
	ASSERT_EQ(write(f.fd, content, strlen(content)), (ssize_t)strlen(content));
	f.content_size = strlen(content);
	if (via == VIA_HEADER) {
		/* The driver verified the content against the header's sha256 of "hello\n". */
		f.known_algo = IMASTREAM_HASH_SHA256;
		f.known_len = test_unhex(HELLO_SHA256, f.known_digest, sizeof(f.known_digest));
	}
	ASSERT_EQ(imastream_chain_file_opened(chain, &f), 0);
	o.err = imastream_chain_file_closed(chain, &f);
	x = imastream_file_get_xattr(&f, "security.ima");
	if (x) {
		ASSERT(x->len <= sizeof(o.ima));
		memcpy(o.ima, x->value, x->len);
		o.ima_len = x->len;
	}
	close(f.fd);
	f.fd = -1;
	imastream_chain_file_done(chain, &f, o.err);
	unlink(path);
	imastream_chain_free(chain);
	imastream_config_release(&cfg);
	return o;
}

static uint8_t good[9 + 256];
static size_t good_len;

static void expect_written(struct outcome o, const uint8_t *want, size_t want_len)
{
	ASSERT_EQ(o.err, 0);
	ASSERT_EQ(n_err, 0);
	ASSERT_EQ(o.ima_len, want_len);
	ASSERT_MEM_EQ(o.ima, want, want_len);
}

static void expect_refused(struct outcome o, const char *why)
{
	char want[600];

	ASSERT_EQ(o.err, -EKEYREJECTED);
	ASSERT_EQ(n_err, 1);
	ASSERT_EQ(o.ima_len, 0);
	snprintf(want, sizeof(want),
		 "ima: /opt/t/file: package signature refused (key id " KEYID "): %s", why);
	if (strcmp(last_err, want) != 0) {
		fprintf(stderr, "got:      %s\nexpected: %s\n", last_err, want);
		exit(1);
	}
}

/* The local hash of "hello\n": 04 04 ‖ sha256. */
static void expect_hash(struct outcome o)
{
	uint8_t want[34] = { 0x04, 0x04 };

	test_unhex(HELLO_SHA256, want + 2, 32);
	expect_written(o, want, sizeof(want));
}

/* The three keys: defaults, every accepted form, one line per bad value. */
static void check_config(void)
{
	static const char *const bad[][2] = {
		{ "package_sigs", "yes" },
		{ "package_sig_failure", "warn" },
		{ "package_sig_algos", "" },
		{ "package_sig_algos", "sha3" },
		{ "package_sig_algos", "sha256,,nope" },
		{ "package_sig_algos", "sha1,sha256,sha384,sha512" },
	};
	struct imastream_config cfg;

	ASSERT_EQ(imastream_config_init(&cfg), 0);
	ASSERT_EQ(cfg.package_sigs, IMASTREAM_PKGSIG_AUTO);
	ASSERT_EQ(cfg.package_sig_failure, IMASTREAM_PKGSIG_REFUSE);
	ASSERT_EQ(cfg.package_sig_algos, IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256));
	ASSERT_EQ(imastream_config_set(&cfg, "package_sigs", "ignore", "t", &log_), 0);
	ASSERT_EQ(cfg.package_sigs, IMASTREAM_PKGSIG_IGNORE);
	ASSERT_EQ(imastream_config_set(&cfg, "package_sig_failure", "fallback", "t", &log_), 0);
	ASSERT_EQ(cfg.package_sig_failure, IMASTREAM_PKGSIG_FALLBACK);
	ASSERT_EQ(imastream_config_set(&cfg, "package_sig_algos", "sha512, sha256,sha512", "t",
				       &log_), 0);
	ASSERT_EQ(cfg.package_sig_algos, IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256) |
						 IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA512));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n_err = 0;
		ASSERT_EQ(imastream_config_set(&cfg, bad[i][0], bad[i][1], "t", &log_), -EINVAL);
		ASSERT_EQ(n_err, 1);
		ASSERT(strstr(last_err, bad[i][0]));
	}
	/* A bad value changes nothing. */
	ASSERT_EQ(cfg.package_sig_algos, IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256) |
						 IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA512));
	imastream_config_release(&cfg);
}

int main(void)
{
	char trust_rsa[4200], trust_ec[4200], no_store[64], why[4400];
	const char *const with_rsa[] = { "trust", trust_rsa, NULL };
	const char *const with_ec[] = { "trust", trust_ec, NULL };
	const char *const fallback_ec[] = { "trust", trust_ec, "package_sig_failure", "fallback",
					    NULL };
	const char *const ignore[] = { "trust", trust_rsa, "package_sigs", "ignore", NULL };
	const char *const conf_yes[] = { "trust", trust_rsa, "config_files", "yes", NULL };
	const char *const conf_no[] = { "trust", trust_rsa, "config_files", "no", NULL };
	const char *const verify_no_store[] = { "package_sigs", "verify", NULL };
	uint8_t bad[sizeof(good)], zero[9 + 256] = { 0 };
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct outcome o;

	srcdir = getenv("top_srcdir");
	if (!srcdir)
		srcdir = ".";
	check_config();
	snprintf(workdir, sizeof(workdir), "%s/test_chain_pkgsig.XXXXXX", tmp);
	ASSERT(mkdtemp(workdir));
	snprintf(trust_rsa, sizeof(trust_rsa), "%s", key_path("rsa2048.crt"));
	snprintf(trust_ec, sizeof(trust_ec), "%s", key_path("ec-p256.crt"));

	/* 03 (signature) 02 (v2) 04 (sha256) key id, 0100 (256 bytes), the signature. */
	good_len = test_unhex("030204" KEYID "0100", good, sizeof(good));
	good_len += test_unhex(sig_hex, good + good_len, sizeof(good) - good_len);
	ASSERT_EQ(good_len, sizeof(good));

	/* Good: written byte for byte, over rpm's header digest or a re-read of the file. */
	o = run(with_rsa, good, good_len, "hello\n", VIA_HEADER, 0);
	expect_written(o, good, good_len);
	ASSERT(strstr(debug_seen, "key id " KEYID ") verified over the sha256 digest from header"));
	o = run(with_rsa, good, good_len, "hello\n", VIA_REREAD, 0);
	expect_written(o, good, good_len);
	ASSERT(strstr(debug_seen, "from reread"));

	/* One signature byte altered, or other content: refused, nothing written. */
	memcpy(bad, good, good_len);
	bad[good_len - 1] ^= 0x01;
	expect_refused(run(with_rsa, bad, good_len, "hello\n", VIA_HEADER, 0),
		       "it does not verify over the file's sha256 digest");
	expect_refused(run(with_rsa, good, good_len, "hellO\n", VIA_REREAD, 0),
		       "it does not verify over the file's sha256 digest");

	/* A store without the signer's certificate, or none at all. */
	snprintf(why, sizeof(why), "no certificate in %s has this key id", trust_ec);
	expect_refused(run(with_ec, good, good_len, "hello\n", VIA_HEADER, 0), why);
	snprintf(no_store, sizeof(no_store), "no trust store is configured (trust)");
	expect_refused(run(verify_no_store, good, good_len, "hello\n", VIA_HEADER, 0), no_store);
	/* The default (auto) without a store: the signature goes unused, the local hash is written. */
	expect_hash(run(NULL, good, good_len, "hello\n", VIA_HEADER, 0));
	ASSERT_EQ(n_warn, 0);
	ASSERT(strstr(last_notice, "carries file signatures, but no trust store is set"));

	/* Cut short: malformed, and the header's key id is still named. */
	expect_refused(run(with_rsa, good, 100, "hello\n", VIA_HEADER, 0),
		       "it is not a well-formed IMA signature (type 3, v2)");
	/* A sha512 header: not an algorithm the chain was asked to compute. */
	memcpy(bad, good, good_len);
	bad[2] = 6;
	expect_refused(run(with_rsa, bad, good_len, "hello\n", VIA_HEADER, 0),
		       "it signs a sha512 digest, which package_sig_algos does not list");

	/* Fallback: the local hash, and one warning naming the file and the key id. */
	o = run(fallback_ec, good, good_len, "hello\n", VIA_HEADER, 0);
	expect_hash(o);
	ASSERT_EQ(n_warn, 1);
	ASSERT(strstr(last_warn, "ima: /opt/t/file: package signature not used (key id " KEYID "): "));
	ASSERT(strstr(last_warn, "writing the local hash instead (package_sig_failure = fallback)"));

	/* ignore: the signature is never looked at, even a bad one. */
	memcpy(bad, good, good_len);
	bad[good_len - 1] ^= 0x01;
	expect_hash(run(ignore, bad, good_len, "hello\n", VIA_HEADER, 0));
	ASSERT_EQ(n_warn, 0);

	/* rpm's placeholder (a zero header) is no signature: the local hash, no complaint. */
	expect_hash(run(with_rsa, zero, sizeof(zero), "hello\n", VIA_HEADER, 0));
	ASSERT_EQ(n_warn, 0);

	/* %config: a digest by default (it will change), not even a good package signature;
	 * nothing with no; the package's signature with yes. */
	expect_hash(run(with_rsa, good, good_len, "hello\n", VIA_HEADER, IMASTREAM_FILE_CONFIG));
	o = run(conf_no, good, good_len, "hello\n", VIA_HEADER, IMASTREAM_FILE_CONFIG);
	ASSERT_EQ(o.err, 0);
	ASSERT_EQ(o.ima_len, 0);
	expect_written(run(conf_yes, good, good_len, "hello\n", VIA_HEADER, IMASTREAM_FILE_CONFIG),
		       good, good_len);
	/* ... and a bad one is refused for a %config file that is covered. */
	expect_refused(run(conf_yes, bad, good_len, "hello\n", VIA_HEADER, IMASTREAM_FILE_CONFIG),
		       "it does not verify over the file's sha256 digest");

	rmdir(workdir);
	printf("test_chain_pkgsig: ok\n");
	return 0;
}
