// SPDX-License-Identifier: LGPL-2.1-or-later
/* Benchmark: signing N digests with a key loaded once, against evmctl sign_hash, same run. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench-csv.h"
#include "imastream/hash.h"
#include "imastream/keys.h"

/*
 * CPU time, not wall time: the machine is shared, and both sides are single-threaded.
 * Ours is this process's; evmctl's is the children's (user + system).
 */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double children_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* A private (0600) copy of the committed test key, as both tools refuse or ignore modes. */
static int private_copy(const char *src, const char *dst)
{
	char buf[65536];
	FILE *in = fopen(src, "rb");
	int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t n;

	if (!in || fd < 0)
		return -1;
	n = fread(buf, 1, sizeof(buf), in);
	fclose(in);
	if (write(fd, buf, n) != (ssize_t)n)
		n = 0;
	close(fd);
	return n ? 0 : -1;
}

static double bench_ours(const char *key, int count)
{
	struct imastream_key_opts o = { .size = sizeof(o), .key = key };
	struct imastream_signer *s;
	unsigned char digest[32] = { 0 }, sig[1024];
	size_t len;
	double t0;

	if (imastream_signer_new(&o, NULL, &s))
		return -1;
	t0 = now();
	for (int i = 0; i < count; i++) {
		memcpy(digest, &i, sizeof(i));
		if (imastream_signer_sign(s, IMASTREAM_HASH_SHA256, digest, 32, sig, sizeof(sig), &len))
			return -1;
	}
	t0 = now() - t0;
	imastream_signer_free(s);
	return t0;
}

/* evmctl sign_hash reads "HEX NAME" lines and signs each, re-reading the key every time. */
static double bench_evmctl(const char *key, int count, const char *dir)
{
	char cmd[8300], in[4096];
	FILE *f;
	double t0;

	snprintf(in, sizeof(in), "%s/digests", dir);
	f = fopen(in, "w");
	if (!f)
		return -1;
	for (int i = 0; i < count; i++) {
		unsigned char d[32] = { 0 };

		memcpy(d, &i, sizeof(i));
		for (int k = 0; k < 32; k++)
			fprintf(f, "%02x", d[k]);
		fprintf(f, " f%d\n", i);
	}
	fclose(f);
	snprintf(cmd, sizeof(cmd), "evmctl sign_hash --key %s <%s >/dev/null 2>&1", key, in);
	t0 = children_cpu();
	if (system(cmd) != 0)
		return -1;
	return children_cpu() - t0;
}

int main(int argc, char **argv)
{
	/* ECDSA first, by size, then RSA: the plot's categories in this order, a series per type. */
	static const char *const keys[] = { "ec-p256.pem", "ec-p384.pem", "rsa2048.pem" };
	static const char *const key_names[] = { "P-256", "P-384", "RSA-2048" };
	static const char *const key_types[] = { "ECDSA", "ECDSA", "RSA" };
	const char *srcdir = getenv("top_srcdir");
	int count = argc > 1 ? atoi(argv[1]) : 2000;
	char dir[] = "/tmp/bench_keys.XXXXXX", src[4096], key[4096], series[64];

	if (!srcdir)
		srcdir = ".";
	if (!mkdtemp(dir))
		return 1;
	printf("CPU time per signature, SHA-256 digests\n");
	printf("%-12s %8s %14s %14s %8s\n", "key", "count", "imastream/sig", "evmctl/sig", "ratio");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		double ours, theirs;

		snprintf(src, sizeof(src), "%s/tests/keys/%s", srcdir, keys[i]);
		snprintf(key, sizeof(key), "%s/%s", dir, keys[i]);
		if (private_copy(src, key)) {
			fprintf(stderr, "bench_keys: cannot copy %s\n", src);
			return 1;
		}
		ours = bench_ours(key, count);
		theirs = bench_evmctl(key, count, dir);
		if (ours < 0 || theirs < 0) {
			fprintf(stderr, "bench_keys: %s failed\n", ours < 0 ? "imastream" : "evmctl");
			return 1;
		}
		printf("%-12s %8d %11.1f us %11.1f us %7.1fx\n", keys[i], count, ours / count * 1e6,
		       theirs / count * 1e6, theirs / ours);
		snprintf(series, sizeof(series), "imastream (%s)", key_types[i]);
		bench_csv_at("key", key_names[i], series, count / ours, "signatures/s", -1);
		snprintf(series, sizeof(series), "evmctl sign_hash (%s)", key_types[i]);
		bench_csv_at("key", key_names[i], series, count / theirs, "signatures/s",
			     theirs / ours);
		unlink(key);
	}
	snprintf(src, sizeof(src), "%s/digests", dir);
	unlink(src);
	rmdir(dir);
	return 0;
}
