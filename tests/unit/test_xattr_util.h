/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers shared by the xattr unit tests: a capturing log, temp dirs, running peers. */
#ifndef IMASTREAM_TEST_XATTR_UTIL_H
#define IMASTREAM_TEST_XATTR_UTIL_H

#define ARRAY_SIZE_(a) (sizeof(a) / sizeof((a)[0]))

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <openssl/evp.h>

#include "imastream/common.h"
#include "tests/unit/test.h"

/* Remembers the last message and counts them, so tests can assert "one line, saying why". */
struct captured {
	int count;
	int level;
	char last[1024];
};

static void capture_fn(void *arg, int level, const char *msg)
{
	struct captured *c = arg;

	c->count++;
	c->level = level;
	snprintf(c->last, sizeof(c->last), "%s", msg);
}

/* Runs a shell command; returns its exit status (or -1). */
static inline int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc == -1 || !WIFEXITED(rc))
		return -1;
	return WEXITSTATUS(rc);
}

/* A fresh temp dir under the build directory (ext4 here, so user xattrs work); removed at exit. */
static char test_dir[256];

static void remove_test_dir(void)
{
	if (test_dir[0])
		run("rm -rf '%s'", test_dir);
}

static inline const char *make_test_dir(void)
{
	snprintf(test_dir, sizeof(test_dir), "%s/xattr-test.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : ".");
	if (!mkdtemp(test_dir)) {
		perror("mkdtemp");
		exit(99);
	}
	atexit(remove_test_dir);
	return test_dir;
}

/* One-shot digest with OpenSSL by name. */
static inline size_t md(const char *name, const void *data, size_t len, unsigned char *out)
{
	unsigned int n = 0;

	ASSERT(EVP_Digest(data, len, out, &n, EVP_get_digestbyname(name), NULL));
	return n;
}

static inline void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ASSERT(f);
	ASSERT(len == 0 || fwrite(data, 1, len, f) == len);
	ASSERT(fclose(f) == 0);
}

static inline size_t read_file(const char *path, unsigned char *buf, size_t max)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	ASSERT(f);
	n = fread(buf, 1, max, f);
	fclose(f);
	return n;
}

#endif
