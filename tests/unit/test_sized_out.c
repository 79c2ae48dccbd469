// SPDX-License-Identifier: LGPL-2.1-or-later
/* Room to grow in the results the library fills: recovery counts, verify report, decoded xattr. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filesig/verifier.h"
#include "imastream/entry.h"
#include "imastream/filesig.h"
#include "imastream/keys.h"
#include "imastream/root.h"
#include "imastream/xattr.h"
#include "installer/private.h"
#include "tests/unit/test.h"
#include "tests/unit/test_log.h"

/* What a program built before any member is added lays out; guard must stay untouched. */
#define GUARDED(type)            \
	struct {                 \
		struct type s;   \
		uint8_t guard[16]; \
	}
/* A program built after one member is added, which this library does not know. */
#define NEWER(type)            \
	struct {               \
		struct type s; \
		uint64_t later; \
	}

static void assert_guard(const uint8_t *guard, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ASSERT_EQ(guard[i], 0x5a);
}

/* @err is the one-line refusal of a struct @type whose size was @size. */
static void assert_refused(int err, const char *type, size_t size)
{
	char want[160];

	ASSERT_EQ(err, -EINVAL);
	ASSERT_EQ(n_lines, 1);
	snprintf(want, sizeof(want), "struct %s: size %zu is below its first version's", type,
		 size);
	ASSERT(strstr(last, want));
	snprintf(want, sizeof(want), "(set .size = sizeof(struct %s))", type);
	ASSERT(strstr(last, want));
	n_lines = 0;
}

static char root[] = "/tmp/test_sized_out.XXXXXX";

/* A temp file of a writer that cannot be alive (a pid above any pid_max). */
static void leave_temp(void)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s7ffffffe-x", root, IMASTREAM_TEMP_PREFIX);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ASSERT(fd >= 0);
	ASSERT_EQ(write(fd, "x", 1), 1);
	close(fd);
}

static void test_recover_stats(void)
{
	GUARDED(imastream_recover_stats) exact;
	NEWER(imastream_recover_stats) newer;
	struct imastream_root_txn *txn = NULL;
	char lock[PATH_MAX], lock_path[PATH_MAX + sizeof(root)];
	struct stat sb;
	int rootfd;

	ASSERT(mkdtemp(root));
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT(rootfd >= 0);
	ASSERT_EQ(imastream_root_lock_path(lock, sizeof(lock)), 0);
	snprintf(lock_path, sizeof(lock_path), "%s%s", root, lock);
	leave_temp();
	/* A root (recovery refuses a plain directory): imastream's state directory. */
	ASSERT_EQ(mkdirat(rootfd, "var", 0755), 0);
	ASSERT_EQ(mkdirat(rootfd, "var/lib", 0755), 0);
	ASSERT_EQ(mkdirat(rootfd, "var/lib/imastream", 0755), 0);

	/* Size 0: refused before the lock is taken (its file is not even made). */
	memset(&exact, 0x5a, sizeof(exact));
	exact.s.size = 0;
	n_lines = 0;
	assert_refused(imastream_root_recover(rootfd, root, 0, &log_, &exact.s),
		       "imastream_recover_stats", 0);
	ASSERT_EQ(exact.s.removed, (unsigned long)0x5a5a5a5a5a5a5a5aull);
	ASSERT(stat(lock_path, &sb) < 0 && errno == ENOENT);
	exact.s.size = sizeof(exact.s) - 1;
	assert_refused(imastream_root_txn_begin(rootfd, root, 0, &log_, &exact.s, &txn),
		       "imastream_recover_stats", sizeof(exact.s) - 1);
	ASSERT(!txn);
	ASSERT(stat(lock_path, &sb) < 0 && errno == ENOENT);

	/* The first version's size: filled, nothing written past it. */
	exact.s.size = sizeof(exact.s);
	ASSERT_EQ(imastream_root_recover(rootfd, root, 0, &log_, &exact.s), 0);
	ASSERT_EQ(exact.s.size, sizeof(exact.s));
	ASSERT_EQ(exact.s.removed, 1);
	ASSERT_EQ(exact.s.kept, 0);
	ASSERT_EQ(exact.s.journals, 0);
	ASSERT_EQ(exact.s.completed, 0);
	assert_guard(exact.guard, sizeof(exact.guard));

	/* A newer program's: what this library does not know reads as zero. */
	leave_temp();
	memset(&newer, 0x5a, sizeof(newer));
	newer.s.size = sizeof(newer);
	ASSERT_EQ(imastream_root_recover(rootfd, root, 0, &log_, &newer.s), 0);
	ASSERT_EQ(newer.s.size, sizeof(newer));
	ASSERT_EQ(newer.s.removed, 1);
	ASSERT_EQ(newer.later, 0);
	memset(&newer, 0x5a, sizeof(newer));
	newer.s.size = sizeof(newer);
	ASSERT_EQ(imastream_root_txn_begin(rootfd, root, 0, &log_, &newer.s, &txn), 0);
	ASSERT_EQ(newer.s.removed, 0);
	ASSERT_EQ(newer.later, 0);
	imastream_root_txn_end(txn, 0);
	close(rootfd);
}

static void test_verify_report(void)
{
	GUARDED(imastream_verify_report) exact;
	NEWER(imastream_verify_report) newer;
	struct imastream_trust *trust;
	struct imastream_verifier *v;
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/plain", root);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ASSERT(fd >= 0);
	ASSERT_EQ(write(fd, "content\n", 8), 8);
	ASSERT_EQ(imastream_trust_new(&log_, &trust), 0);
	ASSERT_EQ(imastream_verifier_new(trust, &log_, &v), 0);

	/* Refused before the file is looked at: -EINVAL, not a read of a closed fd. */
	memset(&exact, 0x5a, sizeof(exact));
	exact.s.size = 0;
	n_lines = 0;
	assert_refused(imastream_verify_file(v, -1, "plain", IMASTREAM_FILESIG_USER, &exact.s),
		       "imastream_verify_report", 0);
	ASSERT_EQ(exact.guard[0], 0x5a);
	ASSERT_EQ(exact.s.ima.result, 0x5a5a5a5a);
	exact.s.size = offsetof(struct imastream_verify_report, ok);
	assert_refused(imastream_verify_file_hashed(v, -1, "plain", IMASTREAM_FILESIG_USER, NULL,
						    &exact.s),
		       "imastream_verify_report", offsetof(struct imastream_verify_report, ok));

	/* Filled within the caller's size: a file with no xattrs misses both. */
	exact.s.size = sizeof(exact.s);
	ASSERT_EQ(imastream_verify_file(v, fd, "plain", IMASTREAM_FILESIG_USER, &exact.s), 0);
	ASSERT_EQ(exact.s.size, sizeof(exact.s));
	ASSERT_EQ(exact.s.ima.result, IMASTREAM_VERIFY_MISSING);
	ASSERT_EQ(exact.s.evm.result, IMASTREAM_VERIFY_MISSING);
	ASSERT(!exact.s.ok);
	assert_guard(exact.guard, sizeof(exact.guard));

	memset(&newer, 0x5a, sizeof(newer));
	newer.s.size = sizeof(newer);
	ASSERT_EQ(imastream_verify_file(v, fd, "plain",
					IMASTREAM_FILESIG_USER | IMASTREAM_VERIFY_NO_EVM, &newer.s), 0);
	ASSERT_EQ(newer.s.size, sizeof(newer));
	ASSERT_EQ(newer.s.ima.result, IMASTREAM_VERIFY_MISSING);
	ASSERT_EQ(newer.s.evm.result, IMASTREAM_VERIFY_SKIPPED);
	ASSERT_EQ(newer.later, 0);
	ASSERT_EQ(n_lines, 0);

	imastream_verifier_free(v);
	imastream_trust_free(trust);
	close(fd);
	unlink(path);
}

static void test_xattr_info(void)
{
	/* Type 4, sha256 (kernel id 4), a digest of 32 bytes 0x11. */
	uint8_t value[2 + 32] = { IMASTREAM_XATTR_IMA_DIGEST_NG, 4 };
	GUARDED(imastream_xattr_info) exact;
	NEWER(imastream_xattr_info) newer;

	memset(value + 2, 0x11, 32);
	memset(&exact, 0x5a, sizeof(exact));
	exact.s.size = 0;
	n_lines = 0;
	assert_refused(imastream_xattr_decode(value, sizeof(value), &exact.s, &log_),
		       "imastream_xattr_info", 0);
	ASSERT_EQ(exact.s.type, 0x5a5a5a5a);
	exact.s.size = sizeof(exact.s) - sizeof(exact.s.data_len);
	assert_refused(imastream_xattr_decode(value, sizeof(value), &exact.s, &log_),
		       "imastream_xattr_info", sizeof(exact.s) - sizeof(exact.s.data_len));
	ASSERT_EQ(exact.s.type, 0x5a5a5a5a);

	exact.s.size = sizeof(exact.s);
	ASSERT_EQ(imastream_xattr_decode(value, sizeof(value), &exact.s, &log_), 0);
	ASSERT_EQ(exact.s.size, sizeof(exact.s));
	ASSERT_EQ(exact.s.type, IMASTREAM_XATTR_IMA_DIGEST_NG);
	ASSERT_EQ(exact.s.algo, 4);
	ASSERT(exact.s.data == value + 2);
	ASSERT_EQ(exact.s.data_len, 32);
	assert_guard(exact.guard, sizeof(exact.guard));

	memset(&newer, 0x5a, sizeof(newer));
	newer.s.size = sizeof(newer);
	ASSERT_EQ(imastream_xattr_decode(value, sizeof(value), &newer.s, &log_), 0);
	ASSERT_EQ(newer.s.size, sizeof(newer));
	ASSERT_EQ(newer.s.data_len, 32);
	ASSERT_EQ(newer.later, 0);
	ASSERT_EQ(n_lines, 0);
}

int main(void)
{
	char cmd[PATH_MAX + 16];

	test_recover_stats();
	test_verify_report();
	test_xattr_info();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ASSERT_EQ(system(cmd), 0);
	return 0;
}
