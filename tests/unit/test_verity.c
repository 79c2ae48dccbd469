// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of hashers/verity.c: fs-verity digests against fsverity-utils' known answers, on every batch backend. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/private.h"
#include "hashers/backend.h"
#include "hashers/private.h"
#include "imastream/verity.h"
#include "tests/unit/test.h"

/* The stride of every batch here: built with this header. */
#define MSG_SIZE sizeof(struct imastream_hash_msg)

#define BLOCK IMASTREAM_VERITY_BLOCK_SIZE

/* tests/vectors/verity.txt: `fsverity digest` of files whose byte i is i mod 251. */
struct vector {
	size_t len;
	uint8_t digest[32];
};

static struct vector vectors[32];
static size_t nvectors;
static uint8_t *stream; /* byte i is i mod 251, as long as the longest vector */
static size_t stream_len;

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static unsigned int log_lines;
static char log_last[512];

static void count_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	log_lines++;
	snprintf(log_last, sizeof(log_last), "%s", msg);
}

static const struct imastream_log test_log = { count_log, NULL };

static void load_vectors(void)
{
	const char *srcdir = getenv("top_srcdir");
	char path[4096], line[256], hex[65];
	unsigned long long len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/tests/vectors/verity.txt", srcdir ? srcdir : ".");
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cannot open %s (set top_srcdir)\n", path);
		exit(99);
	}
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		ASSERT(nvectors < ARRAY_SIZE(vectors));
		ASSERT(sscanf(line, "%llu %64s", &len, hex) == 2);
		vectors[nvectors].len = (size_t)len;
		ASSERT_EQ(test_unhex(hex, vectors[nvectors].digest, 32), 32);
		if (vectors[nvectors].len > stream_len)
			stream_len = vectors[nvectors].len;
		nvectors++;
	}
	fclose(f);
	/* The vectors the brief names must be there: empty, 1, 4096, 4097, 1 MiB + 1. */
	ASSERT(nvectors >= 5);
	stream = malloc(stream_len + 1);
	ASSERT(stream);
	for (size_t i = 0; i < stream_len; i++)
		stream[i] = (uint8_t)(i % 251);
}

/* Feeds @len bytes of the stream in chunks: 0 whole, 1 one byte then the rest, 2 random sizes, 3 4 KiB + 1. */
static void digest_split(struct imastream_verity *v, size_t len, int split, uint8_t *out)
{
	size_t off = 0;

	imastream_verity_reset(v);
	while (off < len) {
		size_t n = len - off;

		if (split == 1 && off == 0)
			n = 1;
		else if (split == 2)
			n = rng() % (rng() % 2 ? 300 * 1024 : 5000) + 1;
		else if (split == 3)
			n = BLOCK + 1;
		if (n > len - off)
			n = len - off;
		ASSERT_EQ(imastream_verity_update(v, stream + off, n), 0);
		off += n;
	}
	ASSERT_EQ(imastream_verity_length(v), len);
	ASSERT_EQ(imastream_verity_final(v, out), 0);
}

static void check_vectors(struct imastream_verity *v)
{
	uint8_t out[32];

	for (size_t i = 0; i < nvectors; i++) {
		/* The three-level vector is long: one random split is enough there. */
		for (int split = vectors[i].len > (8u << 20) ? 2 : 0; split < 4; split++) {
			if (split == 3 && vectors[i].len > (8u << 20))
				break;
			digest_split(v, vectors[i].len, split, out);
			if (memcmp(out, vectors[i].digest, 32)) {
				fprintf(stderr, "length %zu, split %d, backend %s: wrong digest\n",
					vectors[i].len, split, imastream_verity_backend(v));
				exit(1);
			}
		}
	}
}

/* Every batch backend, each forced with IMASTREAM_HASH_BACKEND, gives fsverity-utils' digests. */
static void test_known_answers_per_backend(void)
{
	unsigned int detected = ims_cpu_features();
	struct imastream_verity *v;
	unsigned int checked = 0;

	ASSERT_EQ(imastream_verity_new(&test_log, &v), 0);
	printf("verity: dispatch picks %s here\n", imastream_verity_backend(v));
	check_vectors(v);
	imastream_verity_free(v);
	for (size_t b = 0; b < ims_batch_nbackends; b++) {
		const struct ims_batch_backend *be = ims_batch_backends[b];

		setenv(IMS_HASH_BACKEND_ENV, be->env_name, 1);
		if ((be->cpu_needed & detected) != be->cpu_needed) {
			printf("SKIP verity on backend %s: this CPU lacks its instructions\n", be->name);
			log_lines = 0;
			ASSERT_EQ(imastream_verity_new(&test_log, &v), -EOPNOTSUPP);
			ASSERT_EQ(log_lines, 1);
			continue;
		}
		ASSERT_EQ(imastream_verity_new(&test_log, &v), 0);
		ASSERT(!strcmp(imastream_verity_backend(v), be->name));
		printf("verity on backend %s (%s=%s): %zu known answers\n", be->name,
		       IMS_HASH_BACKEND_ENV, be->env_name, nvectors);
		check_vectors(v);
		imastream_verity_free(v);
		checked++;
	}
	unsetenv(IMS_HASH_BACKEND_ENV);
	ASSERT(checked >= 1); /* the portable one at least */
}

/* ========== an independent reference: the whole tree from one buffer ========== */

static void sha256(const void *p, size_t n, uint8_t *out)
{
	ASSERT(EVP_Digest(p, n, out, NULL, EVP_sha256(), NULL));
}

/* Level by level over the whole data, as the kernel's documentation describes the tree. */
static void reference_digest(const uint8_t *data, size_t len, uint8_t *out)
{
	uint8_t desc[256] = { 1, 1, 12, 0 }, block[BLOCK];
	size_t n = (len + BLOCK - 1) / BLOCK;
	uint8_t *level = malloc(n * 32 + 32), *next;

	ASSERT(level);
	for (size_t i = 0; i < n; i++) {
		size_t take = len - i * BLOCK < BLOCK ? len - i * BLOCK : BLOCK;

		memset(block, 0, sizeof(block));
		memcpy(block, data + i * BLOCK, take);
		sha256(block, BLOCK, level + 32 * i);
	}
	while (n > 1) {
		size_t up = (n + 127) / 128;

		next = malloc(up * 32);
		ASSERT(next);
		for (size_t i = 0; i < up; i++) {
			size_t take = n - i * 128 < 128 ? n - i * 128 : 128;

			memset(block, 0, sizeof(block));
			memcpy(block, level + i * 128 * 32, take * 32);
			sha256(block, BLOCK, next + 32 * i);
		}
		free(level);
		level = next;
		n = up;
	}
	for (int i = 0; i < 8; i++)
		desc[8 + i] = (uint8_t)((uint64_t)len >> (8 * i));
	if (len)
		memcpy(desc + 16, level, 32);
	free(level);
	sha256(desc, sizeof(desc), out);
}

/* Lengths around every boundary the tree has, and random ones, split at random. */
static void test_against_reference(void)
{
	static const size_t blocks[] = { 0, 1, 2, 63, 64, 65, 127, 128, 129, 255, 256, 257, 16384 };
	struct imastream_verity *v;
	uint8_t out[32], want[32];

	ASSERT_EQ(imastream_verity_new(&test_log, &v), 0);
	for (size_t i = 0; i < ARRAY_SIZE(blocks); i++) {
		for (int d = -1; d <= 1; d++) {
			size_t len = blocks[i] * BLOCK + (size_t)d;

			if (blocks[i] == 0 && d < 0)
				continue;
			ASSERT(len <= stream_len);
			reference_digest(stream, len, want);
			digest_split(v, len, 2, out);
			ASSERT_MEM_EQ(out, want, 32);
		}
	}
	for (int i = 0; i < 20; i++) {
		size_t len = rng() % (600 * BLOCK);

		reference_digest(stream, len, want);
		digest_split(v, len, 2, out);
		ASSERT_MEM_EQ(out, want, 32);
	}
	imastream_verity_free(v);
}

/* ========== batches across files ========== */

/*
 * imastream_verity_batch() of @n files cut from misaligned spots of the stream, each
 * against the reference: the lengths around the one-block, one-tree-block and
 * group boundaries, and random ones.
 */
static void check_batch(struct imastream_verity *v, const size_t *lens, size_t n)
{
	struct imastream_hash_msg msgs[48];
	uint8_t out[48][32], want[32];

	ASSERT(n <= ARRAY_SIZE(msgs));
	for (size_t i = 0; i < n; i++) {
		size_t off = (size_t)(rng() % 61);

		ASSERT(off + lens[i] <= stream_len);
		memset(out[i], 0xa5, 32);
		msgs[i] = (struct imastream_hash_msg){ stream + off, lens[i], out[i] };
	}
	ASSERT_EQ(imastream_verity_batch(v, msgs, n, MSG_SIZE), 0);
	for (size_t i = 0; i < n; i++) {
		reference_digest(msgs[i].data, lens[i], want);
		if (memcmp(out[i], want, 32)) {
			fprintf(stderr, "batch of %zu, file %zu of %zu bytes, backend %s: wrong digest\n",
				n, i, lens[i], imastream_verity_backend(v));
			exit(1);
		}
	}
}

static void check_batches(struct imastream_verity *v)
{
	static const size_t edge[] = {
		0, 1, 55, 64, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK, 4 * BLOCK - 1, 4 * BLOCK,
		16 * BLOCK + 7, 127 * BLOCK, 128 * BLOCK - 1, 128 * BLOCK, 128 * BLOCK + 1,
		300 * BLOCK + 5,
	};
	size_t lens[48];

	check_batch(v, edge, ARRAY_SIZE(edge));
	/* One file alone, and 16 KiB files in numbers that fill and overflow a group. */
	check_batch(v, (size_t[]){ 4 * BLOCK }, 1);
	for (size_t i = 0; i < 40; i++)
		lens[i] = 4 * BLOCK;
	check_batch(v, lens, 17);
	check_batch(v, lens, 40);
	for (int round = 0; round < 6; round++) {
		size_t n = 1 + rng() % 48;

		for (size_t i = 0; i < n; i++)
			lens[i] = rng() % 3 ? rng() % (20 * BLOCK) : rng() % (200 * BLOCK);
		check_batch(v, lens, n);
	}
	ASSERT_EQ(imastream_verity_batch(v, NULL, 0, MSG_SIZE), 0);
}

/*
 * Room to grow: a newer program's messages (one member more, unset) give the reference's
 * digests, across more than one group and with a file streamed alone; refused once set.
 */
static void check_newer_batch(struct imastream_verity *v)
{
	enum { N = 20 };
	struct {
		struct imastream_hash_msg m;
		uint64_t later;
	} msgs[N];
	uint8_t out[N][32], want[32];

	for (size_t i = 0; i < N; i++) {
		size_t len = i == 3 ? 300 * BLOCK + 5 : (i + 1) * 1000;

		ASSERT(i + len <= stream_len);
		memset(out[i], 0xa5, 32);
		msgs[i].m = (struct imastream_hash_msg){ stream + i, len, out[i] };
		msgs[i].later = 0;
	}
	ASSERT_EQ(imastream_verity_batch(v, &msgs[0].m, N, sizeof(msgs[0])), 0);
	for (size_t i = 0; i < N; i++) {
		reference_digest(msgs[i].m.data, msgs[i].m.len, want);
		ASSERT_MEM_EQ(out[i], want, 32);
	}
	memset(out, 0xa5, sizeof(out));
	msgs[N - 1].later = 1;
	ASSERT_EQ(imastream_verity_batch(v, &msgs[0].m, N, sizeof(msgs[0])), -E2BIG);
	ASSERT(strstr(log_last, "verity: fs-verity batch message 19 sets members this library does not know"));
	ASSERT_EQ(out[0][0], 0xa5);
}

/* Every backend this CPU runs, forced, gives the reference's digests in batches too. */
static void test_batch(void)
{
	unsigned int detected = ims_cpu_features();
	struct imastream_verity *v;
	uint8_t out[32];

	ASSERT_EQ(imastream_verity_new(&test_log, &v), 0);
	check_batches(v);
	/* Misuse: refused before any digest is written, one line each. */
	log_lines = 0;
	memset(out, 0x5a, sizeof(out));
	ASSERT_EQ(imastream_verity_batch(v, NULL, 1, MSG_SIZE), -EINVAL);
	ASSERT_EQ(imastream_verity_batch(v, (struct imastream_hash_msg[]){
		{ stream, 1, out }, { NULL, 1, out } }, 2, MSG_SIZE), -EINVAL);
	ASSERT_EQ(imastream_verity_batch(v, (struct imastream_hash_msg[]){
		{ stream, 1, NULL } }, 1, MSG_SIZE), -EINVAL);
	ASSERT_EQ(log_lines, 3);
	ASSERT_EQ(imastream_verity_batch(v, (struct imastream_hash_msg[]){
		{ stream, 1, out } }, 1, 0), -EINVAL);
	ASSERT_EQ(log_lines, 4);
	ASSERT(strstr(log_last, "verity: fs-verity batch message size 0 is not that of a struct imastream_hash_msg"));
	ASSERT_EQ(out[0], 0x5a);
	check_newer_batch(v);
	/* A stream open before a batch is gone after it: final() is of an empty stream. */
	ASSERT_EQ(imastream_verity_update(v, stream, 5000), 0);
	check_batch(v, (size_t[]){ 3 * BLOCK }, 1);
	ASSERT_EQ(imastream_verity_final(v, out), 0);
	ASSERT_MEM_EQ(out, vectors[0].digest, 32);
	imastream_verity_free(v);
	for (size_t b = 0; b < ims_batch_nbackends; b++) {
		const struct ims_batch_backend *be = ims_batch_backends[b];

		if ((be->cpu_needed & detected) != be->cpu_needed)
			continue; /* said by test_known_answers_per_backend() */
		setenv(IMS_HASH_BACKEND_ENV, be->env_name, 1);
		ASSERT_EQ(imastream_verity_new(&test_log, &v), 0);
		check_batches(v);
		printf("verity batches on backend %s: equal to the reference\n", be->name);
		imastream_verity_free(v);
	}
	unsetenv(IMS_HASH_BACKEND_ENV);
}

/* ========== file descriptors, short reads, misuse ========== */

static void test_fd(void)
{
	const struct vector *big = &vectors[0];
	struct imastream_verity *v;
	char path[] = "/tmp/test_verity.XXXXXX";
	uint8_t out[32];
	int fd, pipefd[2];
	pid_t pid;
	int status;

	/* The longest vector under 8 MiB, as a file and through a pipe (short reads). */
	for (size_t i = 0; i < nvectors; i++)
		if (vectors[i].len < (8u << 20) && vectors[i].len > big->len)
			big = &vectors[i];
	ASSERT(big->len > 1u << 20);
	ASSERT_EQ(imastream_verity_new(&test_log, &v), 0);
	fd = mkstemp(path);
	ASSERT(fd >= 0);
	unlink(path);
	ASSERT_EQ(ims_write_full(fd, stream, big->len), 0);
	ASSERT(lseek(fd, 0, SEEK_SET) == 0);
	ASSERT_EQ(imastream_verity_fd(v, fd, out), 0);
	ASSERT_MEM_EQ(out, big->digest, 32);
	close(fd);

	ASSERT(pipe(pipefd) == 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		close(pipefd[0]);
		/* Odd writes, so that reads end mid-block. */
		for (size_t off = 0; off < big->len; off += 3001) {
			size_t n = big->len - off < 3001 ? big->len - off : 3001;

			if (ims_write_full(pipefd[1], stream + off, n))
				_exit(1);
		}
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(imastream_verity_fd(v, pipefd[0], out), 0);
	close(pipefd[0]);
	ASSERT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_MEM_EQ(out, big->digest, 32);

	/* A descriptor that cannot be read: one line, the errno. */
	log_lines = 0;
	fd = open("/dev/null", O_WRONLY);
	ASSERT(fd >= 0);
	ASSERT_EQ(imastream_verity_fd(v, fd, out), -EBADF);
	ASSERT_EQ(log_lines, 1);
	close(fd);
	imastream_verity_free(v);
}

static void test_misuse(void)
{
	struct imastream_verity *v;
	uint8_t out[32];

	ASSERT_EQ(imastream_verity_new(&test_log, &v), 0);
	log_lines = 0;
	ASSERT_EQ(imastream_verity_update(v, NULL, 1), -EINVAL);
	ASSERT_EQ(imastream_verity_update(v, NULL, 0), 0);
	ASSERT_EQ(imastream_verity_final(v, out), 0);
	ASSERT_MEM_EQ(out, vectors[0].digest, 32); /* vectors[0] is the empty file */
	ASSERT_EQ(imastream_verity_update(v, "a", 1), -EINVAL);
	ASSERT_EQ(imastream_verity_final(v, out), -EINVAL);
	ASSERT_EQ(log_lines, 3);
	/* reset() makes it usable again, from a clean state. */
	imastream_verity_reset(v);
	ASSERT_EQ(imastream_verity_update(v, stream, 1), 0);
	ASSERT_EQ(imastream_verity_final(v, out), 0);
	ASSERT_MEM_EQ(out, vectors[1].digest, 32);
	imastream_verity_free(v);
	imastream_verity_free(NULL);
	/* A backend that does not exist: refused at new(), with one line. */
	setenv(IMS_HASH_BACKEND_ENV, "sse9", 1);
	log_lines = 0;
	ASSERT_EQ(imastream_verity_new(&test_log, &v), -ENOENT);
	ASSERT_EQ(log_lines, 1);
	unsetenv(IMS_HASH_BACKEND_ENV);
}

int main(void)
{
	/* The environment is this test's to set: start from the dispatch's own choice. */
	unsetenv(IMS_HASH_BACKEND_ENV);
	load_vectors();
	ASSERT(vectors[0].len == 0 && vectors[1].len == 1);
	test_misuse();
	test_known_answers_per_backend();
	test_against_reference();
	test_batch();
	test_fd();
	free(stream);
	return 0;
}
