// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream_signer_precompute(): nonces made ahead sign verifiably, never twice; RSA declines. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "imastream/hash.h"
#include "imastream/keys.h"
#include "test.h"

static char tmpdir[1024];

/* The committed test key, copied with the 0600 mode the loader insists on. */
static const char *key_copy(const char *srcdir, const char *name)
{
	static char out[4096];
	char in[4096], buf[16384];
	ssize_t n;
	int fi, fo;

	snprintf(in, sizeof(in), "%s/tests/keys/%s", srcdir, name);
	snprintf(out, sizeof(out), "%s/%s", tmpdir, name);
	fi = open(in, O_RDONLY);
	fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT(fi >= 0 && fo >= 0);
	n = read(fi, buf, sizeof(buf));
	ASSERT(n > 0 && write(fo, buf, (size_t)n) == n);
	close(fi);
	close(fo);
	return out;
}

static void sign_and_check(struct imastream_signer *s, struct imastream_trust *t, uint8_t seed,
			   uint8_t *sig, size_t *len)
{
	uint8_t digest[32];

	memset(digest, seed, sizeof(digest));
	ASSERT_EQ(imastream_signer_sign(s, IMASTREAM_HASH_SHA256, digest, sizeof(digest), sig, 256,
					len), 0);
	ASSERT_EQ(imastream_trust_verify(t, IMASTREAM_HASH_SHA256, digest, sizeof(digest), sig,
					 *len, imastream_signer_keyid(s)), 0);
}

/* The r half of a DER ECDSA signature: equal r values mean one nonce used twice. */
static size_t der_r(const uint8_t *sig, size_t len, const uint8_t **r)
{
	ASSERT(len > 4 && sig[0] == 0x30 && sig[2] == 0x02 && (size_t)sig[3] + 4 <= len);
	*r = sig + 4;
	return sig[3];
}

/*
 * rpm forks for scriptlets with the pool alive: a child that drew a pooled nonce would
 * share it with the parent's next signature.  The child must sign the ordinary way.
 */
static void check_fork(struct imastream_signer *s, struct imastream_trust *t)
{
	uint8_t child_sig[256], sig[256];
	const uint8_t *r1, *r2;
	size_t child_len = 0, len, n1, n2;
	int fds[2], status;
	pid_t pid;

	nanosleep(&(struct timespec){ 0, 50000000 }, NULL); /* a full ring */
	ASSERT_EQ(pipe(fds), 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		sign_and_check(s, t, 0x11, child_sig, &child_len);
		if (write(fds[1], child_sig, child_len) != (ssize_t)child_len)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	child_len = (size_t)read(fds[0], child_sig, sizeof(child_sig));
	close(fds[0]);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	sign_and_check(s, t, 0x22, sig, &len);
	n1 = der_r(child_sig, child_len, &r1);
	n2 = der_r(sig, len, &r2);
	ASSERT(n1 != n2 || memcmp(r1, r2, n1) != 0);
}

int main(void)
{
	const char *srcdir = getenv("top_srcdir");
	struct imastream_key_opts opts = { 0 };
	struct imastream_signer *s = NULL, *d = NULL;
	struct imastream_trust *t = NULL;
	uint8_t first[256], sig[256];
	size_t first_len, len;
	char cert[4096];

	if (!srcdir)
		srcdir = ".";
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_ec_pool.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT(mkdtemp(tmpdir));
	snprintf(cert, sizeof(cert), "%s/tests/keys/ec-p256.crt", srcdir);
	ASSERT_EQ(imastream_trust_new(NULL, &t), 0);
	ASSERT_EQ(imastream_trust_add_path(t, cert), 0);

	opts.key = key_copy(srcdir, "ec-p256.pem");
	ASSERT_EQ(imastream_signer_new(&opts, NULL, &s), 0);
	ASSERT_EQ(imastream_signer_precompute(s, 8), 0);
	ASSERT_EQ(imastream_signer_precompute(s, 8), 0); /* already running: fine */
	/* More signatures than the ring holds: some from the ring, some the ordinary way. */
	sign_and_check(s, t, 0x42, first, &first_len);
	for (int i = 0; i < 300; i++) {
		sign_and_check(s, t, (uint8_t)i, sig, &len);
		if (i % 50 == 0)
			nanosleep(&(struct timespec){ 0, 2000000 }, NULL); /* let the ring refill */
	}
	/* The same digest again: a fresh nonce, so different bytes, still valid. */
	sign_and_check(s, t, 0x42, sig, &len);
	ASSERT(len != first_len || memcmp(sig, first, len) != 0);
	check_fork(s, t);
	/* A dup'd handle has no pool of its own and signs the ordinary way. */
	ASSERT_EQ(imastream_signer_dup(s, &d), 0);
	sign_and_check(d, t, 7, sig, &len);
	imastream_signer_free(d);
	/* Freed with nonces still in the ring and the thread possibly mid-computation. */
	imastream_signer_free(s);

	/* RSA has no nonce to precompute: refused quietly, signing unchanged. */
	opts.key = key_copy(srcdir, "rsa2048.pem");
	ASSERT_EQ(imastream_signer_new(&opts, NULL, &s), 0);
	ASSERT_EQ(imastream_signer_precompute(s, 8), -EOPNOTSUPP);
	imastream_signer_free(s);
	imastream_trust_free(t);

	snprintf(cert, sizeof(cert), "%s/ec-p256.pem", tmpdir);
	unlink(cert);
	snprintf(cert, sizeof(cert), "%s/rsa2048.pem", tmpdir);
	unlink(cert);
	rmdir(tmpdir);
	printf("ok: precomputed ECDSA nonces sign verifiably, once each; RSA refused\n");
	return 0;
}
