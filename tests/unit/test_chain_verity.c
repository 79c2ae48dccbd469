// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The chain with verity = on: the ima plugin's sigv3 from the stream and from a re-read
 * equals evmctl 1.5's value for the same file, %config files keep a digest, package
 * signatures are not used, and the drivers' probe and enable fail with one line where
 * the filesystem has no fs-verity.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "imastream/chain.h"
#include "imastream/filesig.h"
#include "imastream/verity.h"
#include "plugin/core/driver.h"
#include "tests/unit/test.h"

/*
 * "hello world\n" signed with tests/keys/rsa2048.pem by ima-evm-utils 1.5 (Debian 13):
 *   fsverity digest hello | evmctl sign_hash --veritysig --key rsa2048.pem
 */
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

static const char *srcdir;
static char workdir[] = "/tmp/test_chain_verity.XXXXXX";
static char key[600];
static char last_err[600], debug_seen[2000];
static int n_err;

static void remember(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= IMASTREAM_LOG_ERR) {
		n_err++;
		snprintf(last_err, sizeof(last_err), "%s", msg);
	}
	if (level == IMASTREAM_LOG_DEBUG && strlen(debug_seen) + strlen(msg) + 2 < sizeof(debug_seen)) {
		strcat(debug_seen, msg);
		strcat(debug_seen, "\n");
	}
}

static const struct imastream_log log_ = { remember, NULL };

struct outcome {
	int err;
	bool wants_verity;
	uint8_t ima[600];
	size_t ima_len;
};

enum { VIA_STREAM, VIA_REREAD };

/* The digest run() gives as the driver's at file_closed, unless it breaks its promise. */
static uint8_t header_digest[32];
static bool break_promise;

/* One file of @len bytes through a sign-mode, verity = on chain of "ima". */
static struct outcome run(const uint8_t *content, size_t len, int via, unsigned int flags,
			  const uint8_t *pkg_sig, size_t pkg_sig_len)
{
	static const char *const kv[] = {
		"mode", "sign", "verity", "on", "no_xattr_support", "skip", NULL,
	};
	struct imastream_config cfg;
	struct imastream_chain *chain = NULL;
	struct imastream_file f = { .size = sizeof(f) };
	const struct imastream_file_xattr *x;
	struct outcome o = { 0 };
	char path[600];

	n_err = 0;
	debug_seen[0] = '\0';
	ASSERT_EQ(imastream_config_init(&cfg), 0);
	for (const char *const *p = kv; p[0]; p += 2)
		ASSERT_EQ(imastream_config_set(&cfg, p[0], p[1], "test", &log_), 0);
	ASSERT_EQ(imastream_config_set(&cfg, "key", key, "test", &log_), 0);
	ASSERT_EQ(imastream_chain_from_config(&cfg, &log_, &chain), 0);

	snprintf(path, sizeof(path), "%s/file;0a1b2c3d", workdir);
	f.path = path;
	f.dest = "/usr/bin/file";
	f.mode = S_IFREG | 0755;
	f.flags = flags;
	f.pkg_sig = pkg_sig;
	f.pkg_sig_len = pkg_sig_len;
	f.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT(f.fd >= 0);
	ASSERT_EQ(write(f.fd, content, len), (ssize_t)len);
	f.content_size = len;
	/* The driver's verified header digest: of no use for the verity digest.  Promised
	 * before file_opened, given at file_closed, as the installer does. */
	f.known_algo = IMASTREAM_HASH_SHA256;
	ASSERT_EQ(imastream_chain_file_opened(chain, &f), 0);
	if (via == VIA_STREAM) {
		/* Odd chunk sizes: the tree must not depend on them. */
		for (size_t off = 0, step = 1; off < len; off += step, step = step * 3 + 1) {
			size_t n = len - off < step ? len - off : step;

			ASSERT_EQ(imastream_chain_file_updated(chain, &f, content + off, n), 0);
		}
		if (!len)
			ASSERT_EQ(imastream_chain_file_updated(chain, &f, "", 0), 0);
	}
	if (!break_promise) {
		memcpy(f.known_digest, header_digest, 32);
		f.known_len = 32;
	}
	o.err = imastream_chain_file_closed(chain, &f);
	x = imastream_file_get_xattr(&f, "security.ima");
	if (x) {
		ASSERT(x->len <= sizeof(o.ima));
		memcpy(o.ima, x->value, x->len);
		o.ima_len = x->len;
	}
	o.wants_verity = ims_file_wants_verity(&f);
	close(f.fd);
	f.fd = -1;
	imastream_chain_file_done(chain, &f, o.err);
	unlink(path);
	imastream_chain_free(chain);
	imastream_config_release(&cfg);
	return o;
}

/* What the value must be: a sigv3 over the fs-verity digest of @content. */
static size_t expected(const uint8_t *content, size_t len, uint8_t *out, size_t size)
{
	struct imastream_key_opts opts = { .size = sizeof(opts), .key = key };
	struct imastream_signer *s;
	struct imastream_verity *v;
	uint8_t digest[IMASTREAM_VERITY_DIGEST_SIZE];
	size_t out_len;

	ASSERT_EQ(imastream_verity_new(&log_, &v), 0);
	ASSERT_EQ(imastream_verity_update(v, content, len), 0);
	ASSERT_EQ(imastream_verity_final(v, digest), 0);
	imastream_verity_free(v);
	ASSERT_EQ(imastream_signer_new(&opts, &log_, &s), 0);
	ASSERT_EQ(imastream_ima_sign_verity(s, IMASTREAM_HASH_SHA256, digest, sizeof(digest), out,
					    size, &out_len, &log_), 0);
	imastream_signer_free(s);
	return out_len;
}

static void test_sigv3_values(void)
{
	uint8_t want[9 + 256], big_want[9 + 256], *big;
	size_t big_len = 300 * 1024 + 123, n;
	struct outcome o;

	ASSERT_EQ(test_unhex(hello_evmctl_sigv3, want, sizeof(want)), sizeof(want));
	for (int via = VIA_STREAM; via <= VIA_REREAD; via++) {
		o = run((const uint8_t *)"hello world\n", 12, via, 0, NULL, 0);
		ASSERT_EQ(o.err, 0);
		ASSERT_EQ(o.ima_len, sizeof(want));
		ASSERT_MEM_EQ(o.ima, want, sizeof(want));
		ASSERT(o.wants_verity);
		/* The header digest is the only plain one wanted: a re-read builds the tree alone. */
		ASSERT(strstr(debug_seen, via == VIA_STREAM ? "fs-verity digest from stream" :
			      "fs-verity digest from reread of the tree alone"));
	}

	/* Several levels of tree, odd chunks or one re-read: the same value. */
	big = malloc(big_len);
	ASSERT(big);
	for (size_t i = 0; i < big_len; i++)
		big[i] = (uint8_t)(rand() >> 7);
	n = expected(big, big_len, big_want, sizeof(big_want));
	for (int via = VIA_STREAM; via <= VIA_REREAD; via++) {
		o = run(big, big_len, via, 0, NULL, 0);
		ASSERT_EQ(o.err, 0);
		ASSERT_EQ(o.ima_len, n);
		ASSERT_MEM_EQ(o.ima, big_want, n);
	}
	/* Empty: the fs-verity digest of no data. */
	n = expected(big, 0, big_want, sizeof(big_want));
	o = run(big, 0, VIA_STREAM, 0, NULL, 0);
	ASSERT_EQ(o.ima_len, n);
	ASSERT_MEM_EQ(o.ima, big_want, n);
	free(big);

	/* A package signature (a content signature) is not what a verity policy takes. */
	o = run((const uint8_t *)"hello world\n", 12, VIA_STREAM, 0, want + 1, 40);
	ASSERT_EQ(o.err, 0);
	ASSERT_MEM_EQ(o.ima, want, sizeof(want));

	/* %config (config_files = hash): a digest, and no verity, so root can still edit it. */
	o = run((const uint8_t *)"hello world\n", 12, VIA_STREAM, IMASTREAM_FILE_CONFIG, NULL, 0);
	ASSERT_EQ(o.err, 0);
	ASSERT_EQ(o.ima_len, 34);
	ASSERT_EQ(o.ima[0], 4);
	ASSERT(!o.wants_verity);
}

/*
 * The plain digest the driver promised before file_opened is not computed from the
 * stream (which builds the fs-verity tree only): a %config file's digest is the driver's;
 * a promise not kept costs one re-read, and the digest is still right.
 */
static void test_promised_digest(void)
{
	static const uint8_t hello[] = "hello world\n";
	uint8_t want[32];
	struct outcome o;

	memset(header_digest, 0x3c, sizeof(header_digest));
	o = run(hello, 12, VIA_STREAM, IMASTREAM_FILE_CONFIG, NULL, 0);
	ASSERT_EQ(o.err, 0);
	ASSERT_EQ(o.ima_len, 34);
	ASSERT_MEM_EQ(o.ima + 2, header_digest, 32);
	ASSERT(strstr(debug_seen, "digest from header"));

	break_promise = true;
	ASSERT(EVP_Digest(hello, 12, want, NULL, EVP_sha256(), NULL));
	o = run(hello, 12, VIA_STREAM, IMASTREAM_FILE_CONFIG, NULL, 0);
	ASSERT_EQ(o.err, 0);
	ASSERT_EQ(o.ima_len, 34);
	ASSERT_MEM_EQ(o.ima + 2, want, 32);
	ASSERT(strstr(debug_seen, "digest from reread"));
	/* The fs-verity digest is the stream's all the same. */
	o = run(hello, 12, VIA_STREAM, 0, NULL, 0);
	ASSERT_EQ(o.err, 0);
	ASSERT(strstr(debug_seen, "fs-verity digest from stream"));
	/* Re-read without the promised digest: the plain digests come from that read too. */
	o = run(hello, 12, VIA_REREAD, 0, NULL, 0);
	ASSERT_EQ(o.err, 0);
	ASSERT(strstr(debug_seen, "fs-verity digest from reread\n"));
	break_promise = false;
	memset(header_digest, 0, sizeof(header_digest));
}

/* The drivers' probe and enable: one line, fail closed, where there is no fs-verity. */
static void test_probe_and_enable(void)
{
	struct imastream_config cfg;
	char path[600];
	int fd, err;

	ASSERT_EQ(imastream_config_init(&cfg), 0);
	/* verity off: nothing probed. */
	ASSERT_EQ(ims_probe_root_verity(&cfg, "/nonexistent", &log_), 0);
	ASSERT_EQ(imastream_config_set(&cfg, "verity", "on", "test", &log_), 0);
	ASSERT_EQ(imastream_config_set(&cfg, "mode", "sign", "test", &log_), 0);
	n_err = 0;
	err = ims_probe_root_verity(&cfg, workdir, &log_);
	snprintf(path, sizeof(path), "%s/f", workdir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ASSERT(fd >= 0);
	ASSERT_EQ(write(fd, "x", 1), 1);
	if (err == 0) {
		/* This filesystem has fs-verity: a writer open is refused, read-only works. */
		int ro = open(path, O_RDONLY | O_CLOEXEC);

		ASSERT(ro >= 0);
		ASSERT_EQ(ims_verity_enable(ro, "f", &log_), -ETXTBSY);
		ASSERT(strstr(last_err, "still open for writing"));
		close(fd);
		fd = -1;
		ASSERT_EQ(ims_verity_enable(ro, "f", &log_), 0);
		ASSERT_EQ(ims_verity_enable(ro, "f", &log_), 0); /* already on */
		close(ro);
		printf("fs-verity enabled on %s\n", workdir);
	} else {
		ASSERT_EQ(err, -EOPNOTSUPP);
		ASSERT_EQ(n_err, 1);
		ASSERT(strstr(last_err, "has no fs-verity support"));
		close(fd);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n_err = 0;
		err = ims_verity_enable(fd, "f", &log_);
		ASSERT(err == -EOPNOTSUPP || err == -ENOTTY);
		ASSERT_EQ(n_err, 1);
		ASSERT(strstr(last_err, "f: cannot enable fs-verity"));
		printf("no fs-verity on %s: probe and enable refuse in one line\n", workdir);
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
	imastream_config_release(&cfg);
}

int main(void)
{
	char src[600], buf[8192];
	ssize_t n;
	int in, out;

	srcdir = getenv("top_srcdir");
	if (!srcdir)
		srcdir = ".";
	ASSERT(mkdtemp(workdir));
	/* A 0600 copy of the test key (the signer refuses group-readable key files). */
	snprintf(src, sizeof(src), "%s/tests/keys/rsa2048.pem", srcdir);
	snprintf(key, sizeof(key), "%s/key.pem", workdir);
	in = open(src, O_RDONLY);
	out = open(key, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT(in >= 0 && out >= 0);
	n = read(in, buf, sizeof(buf));
	ASSERT(n > 0 && write(out, buf, (size_t)n) == n);
	close(in);
	close(out);
	srand(14);
	test_sigv3_values();
	test_promised_digest();
	test_probe_and_enable();
	unlink(key);
	rmdir(workdir);
	return 0;
}
