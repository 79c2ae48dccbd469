// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of the ECDSA nonce worker (keys/sign_ahead.c): its signatures verify and
 * never share a nonce, a forked child never takes one, a key it cannot serve is left to
 * the usual path, and a failure of the worker fails the next signature in one line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include "imastream/hash.h"
#include "imastream/keys.h"
#include "keys/keys-private.h"
#include "keys/sign_ahead.h"
#include "tests/unit/test.h"

#define DEPTH 16
#define SIGS 200

static char tmpdir[] = "/tmp/test_sign_ahead.XXXXXX";
static const char *srcdir;
static char last_msg[1024];
static int err_lines;

static void capture(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= IMASTREAM_LOG_ERR) {
		err_lines++;
		snprintf(last_msg, sizeof(last_msg), "%s", msg);
	} else if (strstr(msg, "prepared ahead")) {
		snprintf(last_msg, sizeof(last_msg), "%s", msg);
	}
}

static const struct imastream_log tlog = { capture, NULL };

/* A private copy of a committed test key (the loader refuses one others may read). */
static struct imastream_signer *signer_of(const char *name)
{
	struct imastream_key_opts o = { .size = sizeof(o) };
	struct imastream_signer *s = NULL;
	char src[4096], dst[4096], buf[8192];
	ssize_t n;
	int in, out;

	snprintf(src, sizeof(src), "%s/tests/keys/%s", srcdir, name);
	snprintf(dst, sizeof(dst), "%s/%s", tmpdir, name);
	in = open(src, O_RDONLY);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ASSERT(write(out, buf, (size_t)n) == n);
	close(in);
	close(out);
	o.key = dst;
	ASSERT_EQ(imastream_signer_new(&o, &tlog, &s), 0);
	return s;
}

static EVP_PKEY *pubkey_of(const char *crt)
{
	char path[4096];
	FILE *f;
	X509 *x;
	EVP_PKEY *pub;

	snprintf(path, sizeof(path), "%s/tests/keys/%s", srcdir, crt);
	f = fopen(path, "r");
	ASSERT(f);
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	ASSERT(x);
	pub = X509_get_pubkey(x);
	X509_free(x);
	return pub;
}

/* Waits (without a deadline a slow machine could miss) until @want nonces are ready. */
static void wait_ready(struct imastream_signer *s, unsigned int want)
{
	while (ims_signer_ahead_ready(s) < want)
		usleep(1000);
}

static int sign(struct imastream_signer *s, const uint8_t *d, uint8_t *sig, size_t *len)
{
	return imastream_signer_sign(s, IMASTREAM_HASH_SHA256, d, 32, sig, 128, len);
}

/* The r of a DER ECDSA signature, as a BIGNUM the caller frees. */
static BIGNUM *r_of(const uint8_t *sig, size_t len)
{
	const unsigned char *p = sig;
	ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)len);
	BIGNUM *r;

	ASSERT(es);
	r = BN_dup(ECDSA_SIG_get0_r(es));
	ECDSA_SIG_free(es);
	return r;
}

/* Every signature verifies, and no two share r (a nonce used twice gives the key away). */
static void test_signatures(const char *key, const char *crt)
{
	struct imastream_signer *s = signer_of(key);
	EVP_PKEY *pub = pubkey_of(crt);
	EVP_PKEY_CTX *v = EVP_PKEY_CTX_new(pub, NULL);
	BIGNUM *r[SIGS];
	unsigned long used = 0;

	ASSERT(v && EVP_PKEY_verify_init(v) == 1 &&
	       EVP_PKEY_CTX_set_signature_md(v, EVP_sha256()) == 1);
	ASSERT_EQ(ims_signer_ahead_start(s, DEPTH), 0);
	wait_ready(s, DEPTH);
	for (int i = 0; i < SIGS; i++) {
		uint8_t d[32], sig[128];
		size_t len;

		ASSERT(RAND_bytes(d, sizeof(d)) == 1);
		ASSERT_EQ(sign(s, d, sig, &len), 0);
		ASSERT_EQ(EVP_PKEY_verify(v, sig, len, d, sizeof(d)), 1);
		r[i] = r_of(sig, len);
		for (int j = 0; j < i; j++)
			ASSERT(BN_cmp(r[i], r[j]) != 0);
	}
	ims_signer_ahead_stop(s);
	/* The pool was full: at least its nonces were used. */
	ASSERT(sscanf(last_msg, "signer: %lu signatures from nonces prepared ahead", &used) == 1);
	ASSERT(used >= DEPTH);
	for (int i = 0; i < SIGS; i++)
		BN_free(r[i]);
	EVP_PKEY_CTX_free(v);
	EVP_PKEY_free(pub);
	imastream_signer_free(s);
}

/*
 * A forked child signs the usual way: were it to take the next prepared nonce, the
 * parent's next signature would use it too, and the two r would be equal.
 */
static void test_fork(void)
{
	struct imastream_signer *s = signer_of("ec-p256.pem");
	uint8_t d[32] = { 7 }, sig[128], child_sig[128];
	size_t len, child_len = 0;
	BIGNUM *a, *b;
	int pfd[2], status;
	pid_t pid;

	ASSERT_EQ(ims_signer_ahead_start(s, DEPTH), 0);
	wait_ready(s, DEPTH);
	/* Stopped, as rpm stops it before a scriptlet: the pool stays full. */
	ims_signer_ahead_stop(s);
	ASSERT(pipe(pfd) == 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		if (sign(s, d, sig, &len) != 0 || write(pfd[1], sig, len) != (ssize_t)len)
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	child_len = (size_t)read(pfd[0], child_sig, sizeof(child_sig));
	close(pfd[0]);
	ASSERT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(ims_signer_ahead_ready(s), DEPTH);
	ASSERT_EQ(sign(s, d, sig, &len), 0);
	ASSERT_EQ(ims_signer_ahead_ready(s), DEPTH - 1);
	a = r_of(sig, len);
	b = r_of(child_sig, child_len);
	ASSERT(BN_cmp(a, b) != 0);
	BN_free(a);
	BN_free(b);
	imastream_signer_free(s);
}

/* RSA has no nonce to prepare: nothing starts, nothing is said, signing goes on. */
static void test_rsa(void)
{
	struct imastream_signer *s = signer_of("rsa2048.pem");
	uint8_t d[32] = { 1 }, sig[512];
	size_t len;

	err_lines = 0;
	ASSERT_EQ(ims_signer_ahead_start(s, DEPTH), -EOPNOTSUPP);
	ASSERT_EQ(err_lines, 0);
	ASSERT_EQ(imastream_signer_sign(s, IMASTREAM_HASH_SHA256, d, 32, sig, sizeof(sig), &len),
		  0);
	imastream_signer_free(s);
}

/* The worker fails after 3 nonces: a later signature fails, in one line, and stays failed. */
static void test_failure(void)
{
	struct imastream_signer *s;
	uint8_t d[32] = { 3 }, sig[128];
	size_t len;
	int err;

	setenv("IMASTREAM_TEST_SIGN_AHEAD_FAIL_AFTER", "3", 1);
	s = signer_of("ec-p256.pem");
	ASSERT_EQ(ims_signer_ahead_start(s, DEPTH), 0);
	unsetenv("IMASTREAM_TEST_SIGN_AHEAD_FAIL_AFTER");
	err_lines = 0;
	/* Under this variable each signature waits for the worker: 3 good, then the failure. */
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(sign(s, d, sig, &len), 0);
	err = sign(s, d, sig, &len);
	ASSERT_EQ(err, -EIO);
	ASSERT_EQ(err_lines, 1);
	ASSERT(!strcmp(last_msg, "signing with ECDSA-P256 failed "
				 "(injected by IMASTREAM_TEST_SIGN_AHEAD_FAIL_AFTER)"));
	ASSERT_EQ(sign(s, d, sig, &len), -EIO);
	imastream_signer_free(s);
}

int main(void)
{
	char cmd[256];

	srcdir = getenv("top_srcdir");
	if (!srcdir)
		srcdir = ".";
	ASSERT(mkdtemp(tmpdir));
	test_signatures("ec-p256.pem", "ec-p256.crt");
	test_signatures("ec-p384.pem", "ec-p384.crt");
	test_fork();
	test_rsa();
	test_failure();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ASSERT(system(cmd) == 0);
	printf("ok\n");
	return 0;
}
