// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of hashers/: algorithm table, streaming engine, hash_fd and the batch backends. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "common/private.h"
#include "hashers/backend.h"
#include "hashers/private.h"
#include "imastream/hash.h"
#include "tests/unit/test.h"
#include "tests/unit/test_log.h"

/* The stride of every batch here: built with this header. */
#define MSG_SIZE sizeof(struct imastream_hash_msg)

#define ALL_ALGOS                                                                          \
	(IMASTREAM_HASH_BIT(IMASTREAM_HASH_MD5) | IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA1) | \
	 IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA224) |                                       \
	 IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256) |                                       \
	 IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA384) |                                       \
	 IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA512) | IMASTREAM_HASH_BIT(IMASTREAM_HASH_SM3))

/* ========== allocation counting (OpenSSL's allocator hooks) ========== */

static unsigned long n_allocs;

static void *count_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	n_allocs++;
	return malloc(n);
}

static void *count_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	n_allocs++;
	return realloc(p, n);
}

static void count_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	free(p);
}

/* ========== helpers ========== */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(rng() >> 32);
}

/* The independent reference: OpenSSL's one-shot digest with its own fetch. */
static void evp_oneshot(int algo, const void *data, size_t len, uint8_t *out)
{
	const struct imastream_hash_info *info = imastream_hash_by_algo(algo);
	EVP_MD *md;

	ASSERT(info);
	md = EVP_MD_fetch(NULL, info->openssl_name, NULL);
	ASSERT(md);
	ASSERT(EVP_Digest(data, len, out, NULL, md, NULL) == 1);
	EVP_MD_free(md);
}

static void expect_digest(struct imastream_hasher *h, int algo, const uint8_t *want)
{
	const struct imastream_hash_info *info = imastream_hash_by_algo(algo);
	const uint8_t *got;
	size_t len = 0;

	ASSERT_EQ(imastream_hasher_digest(h, algo, &got, &len), 0);
	ASSERT_EQ(len, info->digest_size);
	if (memcmp(got, want, len) != 0) {
		fprintf(stderr, "%s digest mismatch after %llu bytes\n", info->name,
			(unsigned long long)imastream_hasher_length(h));
		exit(1);
	}
}

/* ========== the algorithm table ========== */

static void test_table(void)
{
	static const struct {
		const char *name;
		int algo, rpm_id;
		unsigned int size;
	} rows[] = {
		{ "md5", 1, 1, 16 },      { "sha1", 2, 2, 20 },     { "sha256", 4, 8, 32 },
		{ "sha384", 5, 9, 48 },   { "sha512", 6, 10, 64 },  { "sha224", 7, 11, 28 },
		{ "sm3", 17, 0, 32 },
	};
	const struct imastream_hash_info *info;
	unsigned int count = 0;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		info = imastream_hash_by_name(rows[i].name);
		ASSERT(info);
		ASSERT_EQ(info->algo, rows[i].algo);
		ASSERT_EQ(info->rpm_id, rows[i].rpm_id);
		ASSERT_EQ(info->digest_size, rows[i].size);
		ASSERT(imastream_hash_by_algo(rows[i].algo) == info);
		if (rows[i].rpm_id)
			ASSERT(imastream_hash_by_rpm_id(rows[i].rpm_id) == info);
		/* The OpenSSL name must really name this algorithm. */
		EVP_MD *md = EVP_MD_fetch(NULL, info->openssl_name, NULL);
		ASSERT(md);
		ASSERT_EQ(EVP_MD_get_size(md), info->digest_size);
		ASSERT_EQ(EVP_MD_get_block_size(md), info->block_size);
		EVP_MD_free(md);
	}
	ASSERT(imastream_hash_by_name("SHA256") == imastream_hash_by_algo(IMASTREAM_HASH_SHA256));
	ASSERT(!imastream_hash_by_name("sha3-256"));
	ASSERT(!imastream_hash_by_name(""));
	ASSERT(!imastream_hash_by_name(NULL));
	ASSERT(!imastream_hash_by_algo(0));
	ASSERT(!imastream_hash_by_algo(3));
	ASSERT(!imastream_hash_by_algo(-1));
	ASSERT(!imastream_hash_by_rpm_id(0)); /* sm3 has no rpm id: 0 must not find it */
	ASSERT(!imastream_hash_by_rpm_id(3));
	while ((info = imastream_hash_info_at(count)) != NULL) {
		ASSERT(info->algo > 0 && info->algo < 32);
		ASSERT(info->digest_size <= IMASTREAM_HASH_MAX_DIGEST);
		count++;
	}
	ASSERT_EQ(count, ARRAY_SIZE(rows));
}

/* ========== known-answer vectors ========== */

/* NIST FIPS 180 / RFC 1321 examples; SM3 from GB/T 32905-2016 appendix A. */
static const char msg448[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
static const char msg_sm3_64[] = "abcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcdabcd";

static const struct kat {
	int algo;
	const char *msg; /* NULL: one million 'a' */
	const char *digest;
} kats[] = {
	{ IMASTREAM_HASH_MD5, "", "d41d8cd98f00b204e9800998ecf8427e" },
	{ IMASTREAM_HASH_MD5, "abc", "900150983cd24fb0d6963f7d28e17f72" },
	{ IMASTREAM_HASH_MD5, msg448, "8215ef0796a20bcaaae116d3876c664a" },
	{ IMASTREAM_HASH_MD5, NULL, "7707d6ae4e027c70eea2a935c2296f21" },
	{ IMASTREAM_HASH_SHA1, "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
	{ IMASTREAM_HASH_SHA1, "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
	{ IMASTREAM_HASH_SHA1, msg448, "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
	{ IMASTREAM_HASH_SHA1, NULL, "34aa973cd4c4daa4f61eeb2bdbad27316534016f" },
	{ IMASTREAM_HASH_SHA224, "", "d14a028c2a3a2bc9476102bb288234c415a2b01f828ea62ac5b3e42f" },
	{ IMASTREAM_HASH_SHA224, "abc", "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7" },
	{ IMASTREAM_HASH_SHA224, msg448, "75388b16512776cc5dba5da1fd890150b0c6455cb4f58b1952522525" },
	{ IMASTREAM_HASH_SHA224, NULL, "20794655980c91d8bbb4c1ea97618a4bf03f42581948b2ee4ee7ad67" },
	{ IMASTREAM_HASH_SHA256, "",
	  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ IMASTREAM_HASH_SHA256, "abc",
	  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ IMASTREAM_HASH_SHA256, msg448,
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ IMASTREAM_HASH_SHA256, NULL,
	  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
	{ IMASTREAM_HASH_SHA384, "",
	  "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da"
	  "274edebfe76f65fbd51ad2f14898b95b" },
	{ IMASTREAM_HASH_SHA384, "abc",
	  "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
	  "8086072ba1e7cc2358baeca134c825a7" },
	{ IMASTREAM_HASH_SHA384, msg448,
	  "3391fdddfc8dc7393707a65b1b4709397cf8b1d162af05abfe8f450de5f36bc6"
	  "b0455a8520bc4e6f5fe95b1fe3c8452b" },
	{ IMASTREAM_HASH_SHA384, NULL,
	  "9d0e1809716474cb086e834e310a4a1ced149e9c00f248527972cec5704c2a5b"
	  "07b8b3dc38ecc4ebae97ddd87f3d8985" },
	{ IMASTREAM_HASH_SHA512, "",
	  "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
	  "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e" },
	{ IMASTREAM_HASH_SHA512, "abc",
	  "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
	  "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f" },
	{ IMASTREAM_HASH_SHA512, msg448,
	  "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c335"
	  "96fd15c13b1b07f9aa1d3bea57789ca031ad85c7a71dd70354ec631238ca3445" },
	{ IMASTREAM_HASH_SHA512, NULL,
	  "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
	  "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b" },
	{ IMASTREAM_HASH_SM3, "",
	  "1ab21d8355cfa17f8e61194831e81a8f22bec8c728fefb747ed035eb5082aa2b" },
	{ IMASTREAM_HASH_SM3, "abc",
	  "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0" },
	{ IMASTREAM_HASH_SM3, msg_sm3_64,
	  "debe9ff92275b8a138604889c18e5a4d6fdb70e5387e5765293dcba39c0c5732" },
	{ IMASTREAM_HASH_SM3, NULL,
	  "c8aaf89429554029e231941a2acc0ad61ff2a5acd8fadd25847a3a732b3b02c3" },
};

/* Each vector through a context holding every algorithm, so lanes cannot leak into each other. */
static void test_known_answers(void)
{
	struct imastream_hasher *h;
	uint8_t want[IMASTREAM_HASH_MAX_DIGEST], a1000[1000];

	memset(a1000, 'a', sizeof(a1000));
	ASSERT_EQ(imastream_hasher_new(ALL_ALGOS, &log_, &h), 0);
	for (size_t i = 0; i < ARRAY_SIZE(kats); i++) {
		test_unhex(kats[i].digest, want, sizeof(want));
		ASSERT_EQ(imastream_hasher_reset(h), 0);
		if (kats[i].msg) {
			ASSERT_EQ(imastream_hasher_update(h, kats[i].msg, strlen(kats[i].msg)), 0);
		} else {
			for (int k = 0; k < 1000; k++)
				ASSERT_EQ(imastream_hasher_update(h, a1000, sizeof(a1000)), 0);
		}
		ASSERT_EQ(imastream_hasher_final(h), 0);
		expect_digest(h, kats[i].algo, want);
	}
	imastream_hasher_free(h);
}

/* ========== every length, random splits ========== */

static void test_lengths_and_splits(void)
{
	enum { MAXLEN = 4096 };
	struct imastream_hasher *h;
	const struct imastream_hash_info *info;
	uint8_t *data = malloc(MAXLEN), want[IMASTREAM_HASH_MAX_DIGEST];

	ASSERT(data);
	fill_random(data, MAXLEN);
	ASSERT_EQ(imastream_hasher_new(ALL_ALGOS, &log_, &h), 0);
	for (size_t len = 0; len <= MAXLEN; len++) {
		/* Even lengths in one piece, odd ones in random pieces (empty ones included). */
		ASSERT_EQ(imastream_hasher_reset(h), 0);
		if (len % 2 == 0) {
			ASSERT_EQ(imastream_hasher_update(h, data, len), 0);
		} else {
			size_t off = 0;

			while (off < len) {
				size_t piece = rng() % (len - off + 1);

				if (rng() % 8 == 0)
					piece = rng() % 3;
				if (piece > len - off)
					piece = len - off;
				ASSERT_EQ(imastream_hasher_update(h, data + off, piece), 0);
				off += piece;
			}
		}
		ASSERT_EQ(imastream_hasher_length(h), len);
		ASSERT_EQ(imastream_hasher_final(h), 0);
		for (unsigned int i = 0; (info = imastream_hash_info_at(i)) != NULL; i++) {
			evp_oneshot(info->algo, data, len, want);
			expect_digest(h, info->algo, want);
		}
	}
	imastream_hasher_free(h);
	free(data);
}

/* ========== a stream past 4 GiB ========== */

/*
 * Checks that no 32-bit length or counter wraps: sha256 of the bytes i mod 251 against the
 * digest the openssl CLI computed (tests/vectors/gen-hash-stream.sh).  About 2.5 s here, and
 * about the same under ASan, because the time goes into OpenSSL's uninstrumented assembly.
 */
static void test_stream_past_4gib(void)
{
	const char *srcdir = getenv("top_srcdir");
	char path[4096], name[32], hex[2 * IMASTREAM_HASH_MAX_DIGEST + 1], line[512];
	uint8_t want[IMASTREAM_HASH_MAX_DIGEST], *block;
	const size_t block_len = 251 * 4096;
	unsigned long long total = 0, left;
	struct imastream_hasher *h;
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "%s/tests/vectors/hash-stream.txt", srcdir ? srcdir : ".");
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cannot open %s: set top_srcdir\n", path);
		exit(99);
	}
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && sscanf(line, "%31s %llu %128s", name, &total, hex) == 3)
			found = 1;
	fclose(f);
	ASSERT(found && !strcmp(name, "sha256") && total > (1ull << 32));
	test_unhex(hex, want, sizeof(want));

	block = malloc(block_len);
	ASSERT(block);
	for (size_t i = 0; i < block_len; i++)
		block[i] = (uint8_t)(i % 251);
	ASSERT_EQ(imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256), &log_, &h), 0);
	for (left = total; left > 0;) {
		size_t n = left < block_len ? (size_t)left : block_len;

		ASSERT_EQ(imastream_hasher_update(h, block, n), 0);
		left -= n;
	}
	ASSERT(imastream_hasher_length(h) == total);
	ASSERT_EQ(imastream_hasher_final(h), 0);
	expect_digest(h, IMASTREAM_HASH_SHA256, want);
	imastream_hasher_free(h);
	free(block);
}

/* ========== misuse ========== */

static void expect_einval_logged(int ret)
{
	ASSERT_EQ(ret, -EINVAL);
	ASSERT(n_lines > 0);
	n_lines = 0;
}

static void test_misuse(void)
{
	const uint32_t sha256 = IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256);
	struct imastream_hasher *h = NULL;
	const uint8_t *d = NULL;
	uint8_t want[32];

	/* Bad masks: nothing created, one line said. */
	n_lines = 0;
	expect_einval_logged(imastream_hasher_new(0, &log_, &h));
	expect_einval_logged(imastream_hasher_new(1u << 3, &log_, &h));
	expect_einval_logged(imastream_hasher_new(sha256 | 1u << 31, &log_, &h));
	expect_einval_logged(imastream_hasher_new(1u << 0, &log_, &h));
	ASSERT(h == NULL);
	/* A NULL log is allowed and just silent. */
	ASSERT_EQ(imastream_hasher_new(0, NULL, &h), -EINVAL);

	ASSERT_EQ(imastream_hasher_new(sha256, &log_, &h), 0);
	ASSERT(h);
	/* Digest before final, and of an algorithm not in the mask. */
	expect_einval_logged(imastream_hasher_digest(h, IMASTREAM_HASH_SHA256, &d, NULL));
	expect_einval_logged(imastream_hasher_digest(h, IMASTREAM_HASH_SHA1, &d, NULL));
	expect_einval_logged(imastream_hasher_digest(h, 99, &d, NULL));
	expect_einval_logged(imastream_hasher_digest(h, -1, &d, NULL));
	ASSERT(d == NULL);
	expect_einval_logged(imastream_hasher_update(h, NULL, 1));
	ASSERT_EQ(imastream_hasher_update(h, NULL, 0), 0);
	ASSERT_EQ(imastream_hasher_update(h, "ab", 2), 0);
	ASSERT_EQ(imastream_hasher_final(h), 0);
	/* After final: update and final are refused and change nothing. */
	expect_einval_logged(imastream_hasher_update(h, "c", 1));
	expect_einval_logged(imastream_hasher_final(h));
	ASSERT_EQ(imastream_hasher_length(h), 2);
	evp_oneshot(IMASTREAM_HASH_SHA256, "ab", 2, want);
	expect_digest(h, IMASTREAM_HASH_SHA256, want);
	expect_einval_logged(imastream_hasher_digest(h, IMASTREAM_HASH_SHA1, &d, NULL));
	/* Reset makes it usable again, and forgets the old stream. */
	ASSERT_EQ(imastream_hasher_reset(h), 0);
	expect_einval_logged(imastream_hasher_digest(h, IMASTREAM_HASH_SHA256, &d, NULL));
	ASSERT_EQ(imastream_hasher_length(h), 0);
	ASSERT_EQ(imastream_hasher_update(h, "abc", 3), 0);
	ASSERT_EQ(imastream_hasher_final(h), 0);
	test_unhex(kats[13].digest, want, sizeof(want));
	expect_digest(h, IMASTREAM_HASH_SHA256, want);
	/* Reset mid-stream is allowed too. */
	ASSERT_EQ(imastream_hasher_reset(h), 0);
	ASSERT_EQ(imastream_hasher_update(h, "zzz", 3), 0);
	ASSERT_EQ(imastream_hasher_reset(h), 0);
	ASSERT_EQ(imastream_hasher_final(h), 0);
	test_unhex(kats[12].digest, want, sizeof(want));
	expect_digest(h, IMASTREAM_HASH_SHA256, want);
	ASSERT_EQ(n_lines, 0);
	imastream_hasher_free(h);
	imastream_hasher_free(NULL);
}

/* sm3 is optional in general, but Debian's OpenSSL 3.0 has it: it must work here. */
static void test_sm3_available(void)
{
	struct imastream_hasher *h;
	EVP_MD *md = EVP_MD_fetch(NULL, "SM3", NULL);
	int ret = imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SM3), &log_, &h);

	if (!md) {
		ASSERT_EQ(ret, -EOPNOTSUPP);
		return;
	}
	EVP_MD_free(md);
	ASSERT_EQ(ret, 0);
	imastream_hasher_free(h);
}

/*
 * An OpenSSL without the algorithm: a child process whose OpenSSL config activates only the
 * base provider (no digests at all) must get -EOPNOTSUPP and one line naming the algorithm.
 */
static void test_missing_provider(void)
{
	static const char conf[] = "openssl_conf = init\n[init]\nproviders = prov\n"
				   "[prov]\nbase = base\n[base]\nactivate = 1\n";
	const char *tmpdir = getenv("TMPDIR");
	char path[4096];
	int fd, status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/test_hash_conf.XXXXXX", tmpdir ? tmpdir : "/tmp");
	fd = mkstemp(path);
	ASSERT(fd >= 0);
	ASSERT(write(fd, conf, sizeof(conf) - 1) == (ssize_t)(sizeof(conf) - 1));
	close(fd);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct imastream_hasher *h = NULL;
		int ret;

		/* OpenSSL reads the config on first use, which is after this point here. */
		setenv("OPENSSL_CONF", path, 1);
		n_lines = 0;
		ret = imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SM3), &log_, &h);
		if (ret != -EOPNOTSUPP || h || n_lines != 1 || !strstr(last, "sm3")) {
			fprintf(stderr, "without providers: ret %d, %d lines, last \"%s\"\n", ret,
				n_lines, last);
			_exit(1);
		}
		_exit(0);
	}
	ASSERT(waitpid(pid, &status, 0) == pid);
	unlink(path);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ========== hash_fd ========== */

static void test_hash_fd(void)
{
	const size_t len = 3 * IMS_HASH_READ_CHUNK + 12345;
	const char *tmpdir = getenv("TMPDIR");
	char path[4096];
	uint8_t *data = malloc(len), want[IMASTREAM_HASH_MAX_DIGEST];
	const struct imastream_hash_info *info;
	struct imastream_hasher *h;
	int fd, dirfd;

	ASSERT(data);
	fill_random(data, len);
	snprintf(path, sizeof(path), "%s/test_hash.XXXXXX", tmpdir ? tmpdir : "/tmp");
	fd = mkstemp(path);
	ASSERT(fd >= 0);
	unlink(path);
	ASSERT(write(fd, data, len) == (ssize_t)len);
	ASSERT_EQ(imastream_hasher_new(ALL_ALGOS, &log_, &h), 0);

	/* Whole file, twice: the second run must not see the first. */
	for (int round = 0; round < 2; round++) {
		ASSERT(lseek(fd, 0, SEEK_SET) == 0);
		ASSERT_EQ(imastream_hash_fd(h, fd), 0);
		ASSERT_EQ(imastream_hasher_length(h), len);
		for (unsigned int i = 0; (info = imastream_hash_info_at(i)) != NULL; i++) {
			evp_oneshot(info->algo, data, len, want);
			expect_digest(h, info->algo, want);
		}
	}
	/* From the current offset; a stale final state is reset first. */
	ASSERT(lseek(fd, 1000, SEEK_SET) == 1000);
	ASSERT_EQ(imastream_hash_fd(h, fd), 0);
	evp_oneshot(IMASTREAM_HASH_SHA256, data + 1000, len - 1000, want);
	expect_digest(h, IMASTREAM_HASH_SHA256, want);
	/* At end of file: the empty stream. */
	ASSERT_EQ(imastream_hash_fd(h, fd), 0);
	evp_oneshot(IMASTREAM_HASH_SHA256, "", 0, want);
	expect_digest(h, IMASTREAM_HASH_SHA256, want);
	close(fd);

	/* read(2) errors come back as -errno, with one line. */
	n_lines = 0;
	ASSERT_EQ(imastream_hash_fd(h, fd), -EBADF);
	ASSERT_EQ(n_lines, 1);
	dirfd = open(tmpdir ? tmpdir : "/tmp", O_RDONLY | O_DIRECTORY);
	ASSERT(dirfd >= 0);
	ASSERT_EQ(imastream_hash_fd(h, dirfd), -EISDIR);
	close(dirfd);
	n_lines = 0;
	imastream_hasher_free(h);
	free(data);
}

/* ========== batch ========== */

/* Lengths around SHA block and padding boundaries, and page sizes. */
static const size_t batch_lengths[] = { 0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129,
					1000, 4095, 4096, 4097, 65536 + 17 };

/* A context forced onto the portable backend: the reference for every other backend. */
static struct imastream_hasher *portable;

static void check_batch(struct imastream_hasher *h, int algo, const uint8_t *data,
			const size_t *lens, size_t n)
{
	struct imastream_hash_msg msgs[64];
	uint8_t out[64][IMASTREAM_HASH_MAX_DIGEST], ref[64][IMASTREAM_HASH_MAX_DIGEST];
	uint8_t want[IMASTREAM_HASH_MAX_DIGEST];
	const struct imastream_hash_info *info = imastream_hash_by_algo(algo);

	ASSERT(n <= 64);
	memset(out, 0, sizeof(out));
	for (size_t i = 0; i < n; i++) {
		/* Distinct offsets so two equal lengths are still different messages. */
		msgs[i].data = data + i * 7;
		msgs[i].len = lens[i];
		msgs[i].digest = out[i];
	}
	ASSERT_EQ(imastream_hash_batch(h, algo, msgs, n, MSG_SIZE), 0);
	/* The portable backend on the same messages, then each digest against one-shot EVP. */
	for (size_t i = 0; i < n; i++)
		msgs[i].digest = ref[i];
	ASSERT_EQ(imastream_hash_batch(portable, algo, msgs, n, MSG_SIZE), 0);
	for (size_t i = 0; i < n; i++) {
		evp_oneshot(algo, msgs[i].data, msgs[i].len, want);
		ASSERT_MEM_EQ(ref[i], want, info->digest_size);
		if (memcmp(out[i], ref[i], info->digest_size) != 0) {
			fprintf(stderr, "%s batch (%s) message %zu of %zu, length %zu: wrong digest\n",
				info->name, imastream_hash_batch_backend(h, algo), i, n, lens[i]);
			exit(1);
		}
	}
}

static void test_batch_backend(struct imastream_hasher *h, const uint8_t *data)
{
	const struct imastream_hash_info *info;
	size_t lens[64];

	for (unsigned int a = 0; (info = imastream_hash_info_at(a)) != NULL; a++) {
		int algo = info->algo;

		check_batch(h, algo, data, lens, 0);
		/* One message alone, then pairs of equal lengths, then every boundary length at once. */
		for (size_t i = 0; i < ARRAY_SIZE(batch_lengths); i++) {
			lens[0] = batch_lengths[i];
			check_batch(h, algo, data, lens, 1);
			lens[1] = batch_lengths[i];
			check_batch(h, algo, data, lens, 2);
			/* Unequal neighbours: one lane finishes while the other runs on. */
			lens[1] = batch_lengths[(i + 5) % ARRAY_SIZE(batch_lengths)];
			check_batch(h, algo, data, lens, 2);
		}
		for (size_t i = 0; i < ARRAY_SIZE(batch_lengths); i++)
			lens[i] = batch_lengths[ARRAY_SIZE(batch_lengths) - 1 - i];
		check_batch(h, algo, data, lens, ARRAY_SIZE(batch_lengths));
		/* Odd counts and random lengths, up to enough to refill sixteen lanes twice. */
		for (int round = 0; round < 20; round++) {
			size_t n = 1 + rng() % (round < 10 ? 9 : 40);

			for (size_t i = 0; i < n; i++)
				lens[i] = rng() % 5000;
			check_batch(h, algo, data, lens, n);
		}
	}
}

/*
 * The known answers of @algo through @h's batch backend, each vector repeated so that a
 * batch fills sixteen lanes and some; independent of OpenSSL, unlike check_batch().
 */
static void batch_known_answers(struct imastream_hasher *h, int algo)
{
	enum { COPIES = 3 };
	struct imastream_hash_msg msgs[ARRAY_SIZE(kats) * COPIES];
	uint8_t out[ARRAY_SIZE(kats) * COPIES][IMASTREAM_HASH_MAX_DIGEST];
	uint8_t want[IMASTREAM_HASH_MAX_DIGEST];
	const struct imastream_hash_info *info = imastream_hash_by_algo(algo);
	uint8_t *million = malloc(1000000);
	size_t n = 0;

	ASSERT(million);
	memset(million, 'a', 1000000);
	for (int c = 0; c < COPIES; c++) {
		for (size_t i = 0; i < ARRAY_SIZE(kats); i++) {
			if (kats[i].algo != algo)
				continue;
			msgs[n].data = kats[i].msg ? (const uint8_t *)kats[i].msg : million;
			msgs[n].len = kats[i].msg ? strlen(kats[i].msg) : 1000000;
			msgs[n].digest = out[n];
			n++;
		}
	}
	if (n == 0) {
		free(million);
		return;
	}
	ASSERT_EQ(imastream_hash_batch(h, algo, msgs, n, MSG_SIZE), 0);
	for (size_t m = 0, i = 0; m < n; i = (i + 1) % ARRAY_SIZE(kats)) {
		if (kats[i].algo != algo)
			continue;
		test_unhex(kats[i].digest, want, sizeof(want));
		if (memcmp(out[m], want, info->digest_size) != 0) {
			fprintf(stderr, "%s batch (%s): known answer %zu of %zu wrong (vector %zu)\n",
				info->name, imastream_hash_batch_backend(h, algo), m, n, i);
			exit(1);
		}
		m++;
	}
	free(million);
}

/* What cpuid+xgetbv found must agree with the kernel's view of this CPU. */
static void test_cpu_features(void)
{
	unsigned int cpu = ims_cpu_features();
	char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		ASSERT_EQ(!!(cpu & IMS_CPU_SHA), strstr(line, " sha_ni") != NULL);
		ASSERT_EQ(!!(cpu & IMS_CPU_SSE41), strstr(line, " sse4_1") != NULL);
		ASSERT_EQ(!!(cpu & IMS_CPU_SSSE3), strstr(line, " ssse3") != NULL);
		ASSERT_EQ(!!(cpu & IMS_CPU_AVX2), strstr(line, " avx2") != NULL);
		ASSERT_EQ(!!(cpu & IMS_CPU_AVX512),
			  strstr(line, " avx512f") != NULL && strstr(line, " avx512bw") != NULL);
		break;
	}
	fclose(f);
}

static void test_batch(void)
{
	const size_t data_len = 70000 + 64 * 7;
	uint8_t *data = malloc(data_len), out[2][IMASTREAM_HASH_MAX_DIGEST], want[32];
	unsigned int detected = ims_cpu_features();
	struct imastream_hash_msg msgs[2];
	struct imastream_hasher *h;
	char checked[128] = "", skipped[128] = "";

	ASSERT(data);
	fill_random(data, data_len);
	ASSERT_EQ(imastream_hasher_new(ALL_ALGOS, &log_, &h), 0);
	ASSERT_EQ(imastream_hasher_new(ALL_ALGOS, &log_, &portable), 0);
	ims_hasher_set_cpu_features(portable, 0);
	ASSERT(!strcmp(imastream_hash_batch_backend(portable, IMASTREAM_HASH_SHA256), "openssl"));

	/* Every backend this CPU can run, then the portable one forced through the test hook. */
	printf("batch backends here: sha256 %s, sha1 %s\n",
	       imastream_hash_batch_backend(h, IMASTREAM_HASH_SHA256),
	       imastream_hash_batch_backend(h, IMASTREAM_HASH_SHA1));
	/* Dispatch must pick the first (fastest) backend the CPU can run. */
	for (size_t b = 0; b < ims_batch_nbackends && !getenv(IMS_HASH_BACKEND_ENV); b++) {
		if ((ims_batch_backends[b]->cpu_needed & detected) != ims_batch_backends[b]->cpu_needed)
			continue;
		ASSERT(!strcmp(imastream_hash_batch_backend(h, IMASTREAM_HASH_SHA256),
			       ims_batch_backends[b]->name));
		break;
	}
	/* A backend with wide lanes hands batches too small to fill them to one without a minimum. */
	{
		const struct ims_hash_lane *lane = ims_hasher_lane(h, IMASTREAM_HASH_SHA256);

		if (lane->batch->min_batch && !getenv(IMS_HASH_BACKEND_ENV)) {
			ASSERT(lane->small && lane->small->min_batch == 0);
			printf("batches under %zu messages: %s\n", lane->batch->min_batch,
			       lane->small->name);
		}
	}
	test_batch_backend(h, data);
	/*
	 * Every backend built in, each forced in turn: known answers, then every length against
	 * OpenSSL.  One this CPU cannot run is skipped aloud, and the last line says which.
	 */
	for (size_t b = 0; b < ims_batch_nbackends; b++) {
		const struct ims_batch_backend *be = ims_batch_backends[b];

		ims_hasher_set_cpu_features(h, detected);
		if ((be->cpu_needed & detected) != be->cpu_needed) {
			printf("SKIP batch backend %s: this CPU lacks its instructions "
			       "(needs feature bits 0x%x, has 0x%x)\n",
			       be->name, be->cpu_needed, detected);
			ASSERT_EQ(ims_hasher_force_batch(h, IMASTREAM_HASH_SHA256, be->env_name),
				  -EOPNOTSUPP);
			snprintf(skipped + strlen(skipped), sizeof(skipped) - strlen(skipped), " %s",
				 be->name);
			continue;
		}
		ASSERT_EQ(ims_hasher_force_batch(h, IMASTREAM_HASH_SHA256, be->env_name), 0);
		ASSERT(!strcmp(imastream_hash_batch_backend(h, IMASTREAM_HASH_SHA256), be->name));
		printf("batch backend %s: checking\n", be->name);
		batch_known_answers(h, IMASTREAM_HASH_SHA256);
		test_batch_backend(h, data);
		snprintf(checked + strlen(checked), sizeof(checked) - strlen(checked), " %s",
			 be->name);
	}
	/* Only SHA-256 has lanes: the other algorithms' known answers on the portable one. */
	for (unsigned int a = 0; imastream_hash_info_at(a); a++)
		batch_known_answers(portable, imastream_hash_info_at(a)->algo);
	printf("batch backends checked:%s; not run on this CPU:%s\n", checked,
	       skipped[0] ? skipped : " none");
	ims_hasher_set_cpu_features(h, 0);
	ASSERT(!strcmp(imastream_hash_batch_backend(h, IMASTREAM_HASH_SHA256), "openssl"));
	test_batch_backend(h, data);
	/* A backend the (simulated) CPU lacks, one not built, one for another algorithm. */
	ASSERT_EQ(ims_hasher_force_batch(h, IMASTREAM_HASH_SHA256, "no-such"), -ENOENT);
	if (ims_batch_nbackends > 1)
		ASSERT_EQ(ims_hasher_force_batch(h, IMASTREAM_HASH_SHA256,
						 ims_batch_backends[0]->env_name), -EOPNOTSUPP);
	ims_hasher_set_cpu_features(h, detected);
	if (ims_batch_nbackends > 1)
		ASSERT_EQ(ims_hasher_force_batch(h, IMASTREAM_HASH_SHA1,
						 ims_batch_backends[0]->env_name), -EINVAL);
	ims_hasher_set_cpu_features(h, detected);
	ASSERT(!imastream_hash_batch_backend(h, IMASTREAM_HASH_SHA1 + 100));

	/* A batch between updates leaves the stream alone. */
	ASSERT_EQ(imastream_hasher_reset(h), 0);
	ASSERT_EQ(imastream_hasher_update(h, "a", 1), 0);
	msgs[0] = (struct imastream_hash_msg){ data, 100, out[0] };
	msgs[1] = (struct imastream_hash_msg){ data, 5000, out[1] };
	ASSERT_EQ(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, msgs, 2, MSG_SIZE), 0);
	ASSERT_EQ(imastream_hasher_update(h, "bc", 2), 0);
	ASSERT_EQ(imastream_hasher_final(h), 0);
	test_unhex(kats[13].digest, want, sizeof(want));
	expect_digest(h, IMASTREAM_HASH_SHA256, want);
	imastream_hasher_free(h);
	imastream_hasher_free(portable);

	/* Misuse: refused before any digest is written. */
	ASSERT_EQ(imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256), &log_, &h), 0);
	n_lines = 0;
	msgs[0] = (struct imastream_hash_msg){ data, 100, out[0] };
	expect_einval_logged(imastream_hash_batch(h, IMASTREAM_HASH_SHA1, msgs, 1, MSG_SIZE));
	expect_einval_logged(imastream_hash_batch(h, 3, msgs, 1, MSG_SIZE));
	expect_einval_logged(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, NULL, 1, MSG_SIZE));
	memset(out, 0xee, sizeof(out));
	msgs[1] = (struct imastream_hash_msg){ NULL, 1, out[1] };
	expect_einval_logged(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, msgs, 2, MSG_SIZE));
	msgs[1] = (struct imastream_hash_msg){ data, 1, NULL };
	expect_einval_logged(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, msgs, 2, MSG_SIZE));
	ASSERT(out[0][0] == 0xee && out[0][31] == 0xee);
	ASSERT_EQ(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, NULL, 0, MSG_SIZE), 0);
	ASSERT(!imastream_hash_batch_backend(h, IMASTREAM_HASH_SHA1));
	imastream_hasher_free(h);
	free(data);
}

/*
 * Room to grow: the batch's stride is the caller's sizeof.  Size 0, a size below the
 * first version or not a struct's size are refused before any digest is written; a
 * newer program's larger messages (more than one internal run of them) give the digests
 * ours do, and are refused once they set what this library does not know.
 */
static void test_batch_msg_size(void)
{
	enum { N = 100 };
	struct newer_msg {
		struct imastream_hash_msg m;
		uint64_t later;
	};
	static struct newer_msg newer[N];
	static struct imastream_hash_msg ours[N];
	static uint8_t want[N][32], got[N][32], data[N + 64];
	struct imastream_hasher *h;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	for (size_t i = 0; i < N; i++) {
		ours[i] = (struct imastream_hash_msg){ data + i, 64 - i % 64, want[i] };
		newer[i] = (struct newer_msg){ { data + i, 64 - i % 64, got[i] }, 0 };
	}
	ASSERT_EQ(imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256), &log_, &h), 0);
	n_lines = 0;
	memset(got, 0xee, sizeof(got));
	expect_einval_logged(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, ours, 1, 0));
	ASSERT(strstr(last, "hasher: sha256 batch message size 0 is not that of a struct imastream_hash_msg"));
	expect_einval_logged(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, &newer[0].m, 1,
						  offsetof(struct imastream_hash_msg, digest)));
	expect_einval_logged(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, &newer[0].m, 1,
						  MSG_SIZE + 1));
	ASSERT(got[0][0] == 0xee);

	ASSERT_EQ(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, ours, N, MSG_SIZE), 0);
	ASSERT_EQ(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, &newer[0].m, N, sizeof(newer[0])),
		  0);
	ASSERT_MEM_EQ(got, want, sizeof(want));
	ASSERT_EQ(n_lines, 0);

	memset(got, 0xee, sizeof(got));
	newer[N - 1].later = 1;
	ASSERT_EQ(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, &newer[0].m, N, sizeof(newer[0])),
		  -E2BIG);
	ASSERT_EQ(n_lines, 1);
	ASSERT(strstr(last, "hasher: sha256 batch message 99 sets members this library does not know"));
	ASSERT(got[0][0] == 0xee);
	imastream_hasher_free(h);
}

/*
 * No backend reads past a message: each message ends right before an inaccessible page,
 * so one byte too many is a crash in any build (ASan only sees heap objects).
 */
static void test_guard_pages(void)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE), span = 3 * page;
	static const size_t lens[] = { 0, 1, 55, 56, 63, 64, 65, 127, 128, 129, 4095, 4096, 4097 };
	uint8_t *map[2], out[2][IMASTREAM_HASH_MAX_DIGEST], want[IMASTREAM_HASH_MAX_DIGEST];
	struct imastream_hash_msg msgs[2];
	struct imastream_hasher *h;

	for (int m = 0; m < 2; m++) {
		map[m] = mmap(NULL, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			      -1, 0);
		ASSERT(map[m] != MAP_FAILED);
		fill_random(map[m], span);
		ASSERT(mprotect(map[m] + span, page, PROT_NONE) == 0);
	}
	ASSERT_EQ(imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256), &log_, &h), 0);
	for (size_t b = 0; b < ims_batch_nbackends; b++) {
		if (ims_hasher_force_batch(h, IMASTREAM_HASH_SHA256, ims_batch_backends[b]->env_name))
			continue; /* test_batch() says which backends this CPU skips */
		for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
			for (size_t j = 0; j < ARRAY_SIZE(lens); j++) {
				msgs[0] = (struct imastream_hash_msg){ map[0] + span - lens[i], lens[i], out[0] };
				msgs[1] = (struct imastream_hash_msg){ map[1] + span - lens[j], lens[j], out[1] };
				ASSERT_EQ(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, msgs, 2, MSG_SIZE), 0);
				evp_oneshot(IMASTREAM_HASH_SHA256, msgs[0].data, lens[i], want);
				ASSERT_MEM_EQ(out[0], want, 32);
				evp_oneshot(IMASTREAM_HASH_SHA256, msgs[1].data, lens[j], want);
				ASSERT_MEM_EQ(out[1], want, 32);
			}
			ASSERT_EQ(imastream_hasher_reset(h), 0);
			ASSERT_EQ(imastream_hasher_update(h, map[0] + span - lens[i], lens[i]), 0);
			ASSERT_EQ(imastream_hasher_final(h), 0);
		}
	}
	imastream_hasher_free(h);
	for (int m = 0; m < 2; m++)
		munmap(map[m], span + page);
}

/* IMASTREAM_HASH_BACKEND forces a backend at new(), and refuses one that cannot run here. */
static void test_backend_env(void)
{
	unsigned int detected = ims_cpu_features();
	const char *saved = getenv(IMS_HASH_BACKEND_ENV);
	char *keep = saved ? strdup(saved) : NULL;
	struct imastream_hasher *h;

	for (size_t b = 0; b < ims_batch_nbackends; b++) {
		const struct ims_batch_backend *be = ims_batch_backends[b];
		int can = (be->cpu_needed & detected) == be->cpu_needed;

		setenv(IMS_HASH_BACKEND_ENV, be->env_name, 1);
		n_lines = 0;
		ASSERT_EQ(imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256) |
						       IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA1),
					       &log_, &h),
			  can ? 0 : -EOPNOTSUPP);
		if (!can) {
			ASSERT_EQ(n_lines, 1);
			continue;
		}
		ASSERT(!strcmp(imastream_hash_batch_backend(h, IMASTREAM_HASH_SHA256), be->name));
		/* sha1 has no lanes: only "portable" moves it (it is already there). */
		ASSERT(!strcmp(imastream_hash_batch_backend(h, IMASTREAM_HASH_SHA1), "openssl"));
		imastream_hasher_free(h);
	}
	/* A SHA-256 backend with a sha1-only context: nothing to force, not an error. */
	setenv(IMS_HASH_BACKEND_ENV, ims_batch_backends[0]->env_name, 1);
	if ((ims_batch_backends[0]->cpu_needed & detected) == ims_batch_backends[0]->cpu_needed &&
	    ims_batch_nbackends > 1) {
		ASSERT_EQ(imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA1), &log_, &h), 0);
		imastream_hasher_free(h);
	}
	setenv(IMS_HASH_BACKEND_ENV, "sse9", 1);
	n_lines = 0;
	ASSERT_EQ(imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256), &log_, &h),
		  -ENOENT);
	ASSERT_EQ(n_lines, 1);
	n_lines = 0;
	if (keep)
		setenv(IMS_HASH_BACKEND_ENV, keep, 1);
	else
		unsetenv(IMS_HASH_BACKEND_ENV);
	free(keep);
}

/* ========== steady state allocates nothing of ours ========== */

static void test_no_steady_state_allocation(void)
{
	struct imastream_hasher *h;
	unsigned long before;
	uint8_t buf[4096], digest[32];
	struct imastream_hash_msg msg = { buf, sizeof(buf), digest };
	const unsigned int files = 1000;

	memset(buf, 'x', sizeof(buf));
	ASSERT_EQ(imastream_hasher_new(IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256) |
					       IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA1),
				       &log_, &h),
		  0);
	/* Per chunk: nothing at all. */
	before = n_allocs;
	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(imastream_hasher_update(h, buf, 1 + i % sizeof(buf)), 0);
	ASSERT_EQ(imastream_hasher_final(h), 0);
	ASSERT_EQ(n_allocs - before, 0);

	/*
	 * Per file: OpenSSL 3.0's EVP_DigestInit_ex2() frees and re-creates the provider's
	 * context on every call, even for the same EVP_MD on the same EVP_MD_CTX (measured:
	 * one allocation per call).  So allow at most that, one per algorithm; a newer
	 * OpenSSL that reuses the context brings this to zero.
	 */
	before = n_allocs;
	for (unsigned int i = 0; i < files; i++) {
		ASSERT_EQ(imastream_hasher_reset(h), 0);
		ASSERT_EQ(imastream_hasher_update(h, buf, 64), 0);
		ASSERT_EQ(imastream_hasher_final(h), 0);
	}
	printf("OpenSSL allocations per file with 2 algorithms: %.2f\n",
	       (double)(n_allocs - before) / files);
	ASSERT(n_allocs - before <= 2 * files);

	/* The portable batch path: at most OpenSSL's one per message. */
	ims_hasher_set_cpu_features(h, 0);
	before = n_allocs;
	for (unsigned int i = 0; i < files; i++)
		ASSERT_EQ(imastream_hash_batch(h, IMASTREAM_HASH_SHA256, &msg, 1, MSG_SIZE), 0);
	ASSERT(n_allocs - before <= files);
	imastream_hasher_free(h);
}

int main(void)
{
	/* First, while OpenSSL has not read its config yet in this process. */
	test_missing_provider();
	/* Must come before OpenSSL allocates anything. */
	if (!CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free)) {
		fprintf(stderr, "cannot install OpenSSL allocation hooks\n");
		return 99;
	}
	test_table();
	test_known_answers();
	test_sm3_available();
	test_misuse();
	test_no_steady_state_allocation();
	test_lengths_and_splits();
	test_hash_fd();
	test_cpu_features();
	test_batch();
	test_batch_msg_size();
	test_backend_env();
	test_guard_pages();
	test_stream_past_4gib();
	printf("ok\n");
	return 0;
}
