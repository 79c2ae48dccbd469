// SPDX-License-Identifier: LGPL-2.1-or-later
/* The extractor on its own: entries and chunks from a made-up archive, guards and rollback. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "imastream/entry.h"
#include "imastream/extract.h"
#include "imastream/hash.h"
#include "installer/private.h"
#include "tests/unit/test.h"

static char base[256];
static int nroot;
static char last_msg[1024];
static int nmsgs;

static void capture(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level > IMASTREAM_LOG_WARNING)
		return;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
	nmsgs++;
}

static const struct imastream_log log_capture = { capture, NULL };

/* A fresh root directory below @base, with an "outside" sibling; returns its fd. */
static int new_root(char *root, size_t size)
{
	int fd;

	snprintf(root, size, "%s/root%d", base, ++nroot);
	ASSERT(mkdir(root, 0755) == 0);
	fd = open(root, O_RDONLY | O_DIRECTORY);
	ASSERT(fd >= 0);
	return fd;
}

/* Counts the entries below directory fd @dfd (closed), recursively, without following
 * symlinks; small frames, so that very deep trees are fine. */
static int count_at(int dfd)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int n = 0;

	ASSERT(d);
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n++;
		ASSERT(fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0);
		if (S_ISDIR(st.st_mode))
			n += count_at(openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
	}
	closedir(d);
	return n;
}

static int count_tree(const char *dir)
{
	return count_at(open(dir, O_RDONLY | O_DIRECTORY));
}

static void sha256(const void *p, size_t n, uint8_t out[32])
{
	ASSERT(EVP_Digest(p, n, out, NULL, EVP_sha256(), NULL) == 1);
}

static struct imastream_entry file_entry(const char *path, const char *content, const uint8_t *digest)
{
	struct imastream_entry e = {
		.path = path, .mode = S_IFREG | 0644, .mtime = 1000000000, .size = strlen(content),
		.digest = digest, .digest_algo = digest ? IMASTREAM_HASH_SHA256 : 0,
	};
	return e;
}

/* One entry with content in two chunks; returns the first error. */
static int put_file(struct imastream_extract *x, const char *path, const char *content,
		    const uint8_t *digest)
{
	struct imastream_entry e = file_entry(path, content, digest);
	size_t half = strlen(content) / 2;
	int err;

	err = imastream_extract_entry_begin(x, &e);
	if (!err)
		err = imastream_extract_entry_data(x, content, half);
	if (!err)
		err = imastream_extract_entry_data(x, content + half, strlen(content) - half);
	if (!err)
		err = imastream_extract_entry_end(x);
	return err;
}

static void test_paths(void)
{
	static const struct { const char *path, *rel; } ok[] = {
		{ "/usr/bin/ls", "usr/bin/ls" }, { "usr", "usr" }, { "//a/b", "a/b" },
		{ "/a/.hidden/..x", "a/.hidden/..x" },
	};
	static const char *const bad[] = {
		"", "/", "/a/../b", "../a", "/a/./b", "/a//b", "/a/b/", "/a/..", ".",
	};
	const char *rel, *why;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ASSERT_EQ(ims_path_relative(ok[i].path, &rel, &why), 0);
		ASSERT(!strcmp(rel, ok[i].rel));
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT_EQ(ims_path_relative(bad[i], &rel, &why), -EINVAL);
}

/* The happy path: a made-up archive of every kind of entry, then commit. */
static void test_commit(void)
{
	struct imastream_entry dir = { .path = "/d", .mode = S_IFDIR | 0750, .mtime = 1234567 };
	struct imastream_entry empty = { .path = "/d/empty",
					 .mode = S_IFDIR | 0700,
					 .mtime = 2345678 };
	struct imastream_entry link = { .path = "/d/link", .mode = S_IFLNK | 0777, .mtime = 7654321,
					.link_target = "../outside" };
	struct imastream_entry hard = { .path = "/d/sub/hard", .mode = S_IFREG | 0644,
					.flags = IMASTREAM_ENTRY_HARDLINK, .link_target = "/d/file" };
	struct imastream_extract_stats st = { .size = sizeof(st) };
	struct imastream_extract *x;
	char root[PATH_MAX], p[PATH_MAX * 2], buf[64];
	uint8_t digest[32];
	struct stat sa, sb;
	int rootfd = new_root(root, sizeof(root));

	/* (with fsync, which must not change anything else) */
	ASSERT_EQ(imastream_extract_new(rootfd, IMASTREAM_EXTRACT_NO_CHOWN | IMASTREAM_EXTRACT_FSYNC,
					NULL, &log_capture, &x), 0);
	ASSERT_EQ(imastream_extract_begin(x, "made-up"), 0);
	time_t started = time(NULL);

	ASSERT_EQ(imastream_extract_entry_begin(x, &dir), 0);
	ASSERT_EQ(imastream_extract_entry_end(x), 0);
	ASSERT_EQ(imastream_extract_entry_begin(x, &empty), 0);
	ASSERT_EQ(imastream_extract_entry_end(x), 0);
	sha256("hello, world\n", 13, digest);
	ASSERT_EQ(put_file(x, "/d/file", "hello, world\n", digest), 0);
	ASSERT_EQ(imastream_extract_entry_begin(x, &link), 0);
	ASSERT_EQ(imastream_extract_entry_end(x), 0);
	ASSERT_EQ(imastream_extract_entry_begin(x, &hard), 0);
	ASSERT_EQ(imastream_extract_entry_end(x), 0);
	/* Nothing has its final name before commit. */
	snprintf(p, sizeof(p), "%s/d/file", root);
	ASSERT(access(p, F_OK) != 0);
	ASSERT_EQ(imastream_extract_commit(x), 0);

	ASSERT(stat(p, &sa) == 0);
	ASSERT_EQ(sa.st_mode, S_IFREG | 0644);
	ASSERT_EQ(sa.st_mtime, 1000000000);
	ASSERT_EQ(sa.st_nlink, 2);
	snprintf(p, sizeof(p), "%s/d/sub/hard", root);
	ASSERT(stat(p, &sb) == 0);
	ASSERT_EQ(sa.st_ino, sb.st_ino);
	snprintf(p, sizeof(p), "%s/d/link", root);
	ASSERT(lstat(p, &sa) == 0 && S_ISLNK(sa.st_mode));
	ASSERT_EQ(sa.st_mtime, 7654321);
	ASSERT_EQ(readlink(p, buf, sizeof(buf)), 10);
	ASSERT(!memcmp(buf, "../outside", 10));
	snprintf(p, sizeof(p), "%s/d", root);
	ASSERT(stat(p, &sa) == 0);
	ASSERT_EQ(sa.st_mode, S_IFDIR | 0750);
	/* As rpm leaves them: a directory the package put files in has the install time, an
	 * empty one its entry's mtime. */
	ASSERT(sa.st_mtime >= started);
	snprintf(p, sizeof(p), "%s/d/empty", root);
	ASSERT(stat(p, &sa) == 0);
	ASSERT_EQ(sa.st_mtime, 2345678);
	snprintf(p, sizeof(p), "%s/d/sub", root);
	ASSERT(stat(p, &sa) == 0);
	ASSERT_EQ(sa.st_mode, S_IFDIR | 0755); /* unowned parent */
	ASSERT_EQ(imastream_extract_get_stats(x, &st), 0);
	ASSERT_EQ(st.packages, 1);
	ASSERT_EQ(st.bytes, 13);
	ASSERT_EQ(count_tree(root), 6); /* d, d/empty, d/file, d/link, d/sub, d/sub/hard */
	imastream_extract_free(x);
	close(rootfd);
}

/* Runs one bad sequence; checks its errno, one message, and that the root is empty again. */
static void expect_rollback(const char *what, int want, int (*seq)(struct imastream_extract *x),
			    int (*prep)(int rootfd))
{
	struct imastream_extract *x;
	char root[PATH_MAX];
	int rootfd = new_root(root, sizeof(root)), before, err;

	if (prep)
		ASSERT_EQ(prep(rootfd), 0);
	before = count_tree(root);
	ASSERT_EQ(imastream_extract_new(rootfd, IMASTREAM_EXTRACT_NO_CHOWN, NULL, &log_capture, &x), 0);
	ASSERT_EQ(imastream_extract_begin(x, "bad"), 0);
	nmsgs = 0;
	err = seq(x);
	if (err != want) {
		fprintf(stderr, "%s: got %d (%s), expected %d\n", what, err, last_msg, want);
		exit(1);
	}
	ASSERT_EQ(nmsgs, 1);
	ASSERT(!strncmp(last_msg, "bad: ", 5));
	imastream_extract_abort(x, err);
	ASSERT_EQ(nmsgs, 1); /* a clean abort says nothing more */
	ASSERT_EQ(count_tree(root), before);
	printf("ok %s: %s\n", what, last_msg);
	imastream_extract_free(x);
	close(rootfd);
}

static int seq_traversal(struct imastream_extract *x)
{
	ASSERT_EQ(put_file(x, "/a/ok", "fine", NULL), 0);
	return put_file(x, "/a/../../escape", "evil", NULL);
}

static int seq_duplicate(struct imastream_extract *x)
{
	ASSERT_EQ(put_file(x, "/a/f", "one", NULL), 0);
	return put_file(x, "//a/f", "two", NULL);
}

/* The symlink-then-file trick, made through the extractor's own API. */
static int seq_symlink_then_file(struct imastream_extract *x)
{
	struct imastream_entry link = { .path = "/a/l", .mode = S_IFLNK | 0777, .link_target = "/" };

	ASSERT_EQ(imastream_extract_entry_begin(x, &link), 0);
	ASSERT_EQ(imastream_extract_entry_end(x), 0);
	return put_file(x, "/a/l/etc/evil", "evil", NULL);
}

static int prep_symlink(int rootfd)
{
	return symlinkat("/tmp", rootfd, "opt");
}

static int seq_through_root_symlink(struct imastream_extract *x)
{
	ASSERT_EQ(put_file(x, "/a/first", "first", NULL), 0);
	return put_file(x, "/opt/evil", "evil", NULL);
}

static int prep_dir(int rootfd)
{
	return mkdirat(rootfd, "isdir", 0755);
}

static int seq_file_over_dir(struct imastream_extract *x)
{
	ASSERT_EQ(put_file(x, "/a/first", "first", NULL), 0);
	return put_file(x, "/isdir", "x", NULL);
}

static int seq_digest(struct imastream_extract *x)
{
	uint8_t digest[32];

	sha256("expected", 8, digest);
	ASSERT_EQ(put_file(x, "/a/first", "first", NULL), 0);
	return put_file(x, "/a/f", "tampered", digest);
}

static int seq_too_much(struct imastream_extract *x)
{
	struct imastream_entry e = file_entry("/a/f", "1234", NULL);

	ASSERT_EQ(imastream_extract_entry_begin(x, &e), 0);
	ASSERT_EQ(imastream_extract_entry_data(x, "1234", 4), 0);
	return imastream_extract_entry_data(x, "5", 1);
}

static int seq_truncated(struct imastream_extract *x)
{
	struct imastream_entry e = file_entry("/a/f", "1234", NULL);

	ASSERT_EQ(imastream_extract_entry_begin(x, &e), 0);
	ASSERT_EQ(imastream_extract_entry_data(x, "12", 2), 0);
	return imastream_extract_entry_end(x);
}

static int seq_bad_hardlink(struct imastream_extract *x)
{
	struct imastream_entry e = { .path = "/a/h", .mode = S_IFREG | 0644,
				     .flags = IMASTREAM_ENTRY_HARDLINK, .link_target = "/a/later" };

	ASSERT_EQ(put_file(x, "/a/first", "first", NULL), 0);
	return imastream_extract_entry_begin(x, &e);
}

static int seq_socket(struct imastream_extract *x)
{
	struct imastream_entry e = { .path = "/a/sock", .mode = S_IFSOCK | 0644 };

	return imastream_extract_entry_begin(x, &e);
}

/* A sink that refuses one file: the chain's veto rolls the package back too. */
static int veto_end(void *arg, void *ctx, const struct imastream_entry *e, int fd, int dirfd,
		    const char *name, const uint8_t *digest)
{
	(void)arg, (void)ctx, (void)fd, (void)dirfd, (void)name, (void)digest;
	return strcmp(e->path, "/a/vetoed") ? 0 : -EPERM;
}

static void test_sink_veto(void)
{
	struct imastream_entry_sink sink = { .size = sizeof(sink), .entry_end = veto_end };
	struct imastream_extract *x;
	char root[PATH_MAX];
	int rootfd = new_root(root, sizeof(root));

	ASSERT_EQ(imastream_extract_new(rootfd, IMASTREAM_EXTRACT_NO_CHOWN, &sink, &log_capture, &x), 0);
	ASSERT_EQ(imastream_extract_begin(x, "veto"), 0);
	ASSERT_EQ(put_file(x, "/a/fine", "fine", NULL), 0);
	ASSERT_EQ(put_file(x, "/a/vetoed", "no", NULL), -EPERM);
	ASSERT(strstr(last_msg, "/a/vetoed") && strstr(last_msg, "hook chain"));
	imastream_extract_abort(x, -EPERM);
	ASSERT_EQ(count_tree(root), 0);
	imastream_extract_free(x);
	close(rootfd);
}

/* Once the last file is written, a non-empty directory takes the second one's final name:
 * its rename fails in the middle of the commit. */
static int block_second(void *arg, void *ctx, const struct imastream_entry *e, int fd, int dirfd,
			const char *name, const uint8_t *digest)
{
	int sub;

	(void)arg, (void)ctx, (void)fd, (void)name, (void)digest;
	if (strcmp(e->path, "/a/3"))
		return 0;
	ASSERT_EQ(mkdirat(dirfd, "2", 0755), 0);
	sub = openat(dirfd, "2/inside", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ASSERT(sub >= 0);
	close(sub);
	return 0;
}

/* Counts the names below @dir that start with the temp prefix. */
static int count_temps(const char *dir)
{
	char cmd[PATH_MAX + 64];
	FILE *f;
	int n = 0, c;

	snprintf(cmd, sizeof(cmd), "find '%s' -name '" IMASTREAM_TEMP_PREFIX "*'", dir);
	f = popen(cmd, "r");
	ASSERT(f);
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	ASSERT(pclose(f) == 0);
	return n;
}

/* A rename that fails partway through the commit: the files renamed so far stay, complete;
 * every temp file of the rest goes. */
static void test_rename_fails_midway(void)
{
	struct imastream_entry_sink sink = { .size = sizeof(sink), .entry_end = block_second };
	struct imastream_extract *x;
	char root[PATH_MAX], p[PATH_MAX * 2];
	struct stat sb;
	int rootfd = new_root(root, sizeof(root));

	ASSERT_EQ(
		imastream_extract_new(rootfd, IMASTREAM_EXTRACT_NO_CHOWN, &sink, &log_capture, &x),
		0);
	ASSERT_EQ(imastream_extract_begin(x, "midway"), 0);
	ASSERT_EQ(put_file(x, "/a/1", "one", NULL), 0);
	ASSERT_EQ(put_file(x, "/a/2", "two", NULL), 0);
	ASSERT_EQ(put_file(x, "/a/3", "three", NULL), 0);
	ASSERT_EQ(count_temps(root), 3);
	nmsgs = 0;
	ASSERT(imastream_extract_commit(x) < 0);
	ASSERT_EQ(nmsgs, 1);
	ASSERT(strstr(last_msg, "a/2: cannot rename into place") &&
	       strstr(last_msg, "(1 of 3 files were already renamed)"));
	snprintf(p, sizeof(p), "%s/a/1", root);
	ASSERT(stat(p, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 3);
	snprintf(p, sizeof(p), "%s/a/3", root);
	ASSERT(access(p, F_OK) != 0);
	ASSERT_EQ(count_temps(root), 0);
	printf("ok rename-midway: %s\n", last_msg);
	imastream_extract_free(x);
	close(rootfd);
}

/* A path of 512 components: walked iteratively, rolled back, then committed; 513 are refused. */
static void test_deep_path(void)
{
	static char path[2048];
	struct imastream_extract *x;
	char root[PATH_MAX];
	const char *rel, *why;
	int rootfd = new_root(root, sizeof(root));

	for (int i = 0; i < 512; i++)
		memcpy(path + 2 * i, "/a", 2);
	ASSERT_EQ(ims_path_relative(path, &rel, &why), 0);
	memcpy(path + 1024, "/f", 3);
	ASSERT_EQ(ims_path_relative(path, &rel, &why), -EINVAL);
	path[1022] = 0;
	memcpy(path + 1022, "/f", 3); /* 511 directories and a file */
	ASSERT_EQ(imastream_extract_new(rootfd, IMASTREAM_EXTRACT_NO_CHOWN, NULL, &log_capture, &x), 0);
	ASSERT_EQ(imastream_extract_begin(x, "deep"), 0);
	ASSERT_EQ(put_file(x, path, "deep", NULL), 0);
	imastream_extract_abort(x, -EINTR);
	ASSERT_EQ(count_tree(root), 0);
	ASSERT_EQ(imastream_extract_begin(x, "deep"), 0);
	ASSERT_EQ(put_file(x, path, "deep", NULL), 0);
	ASSERT_EQ(imastream_extract_commit(x), 0);
	ASSERT_EQ(count_tree(root), 512);
	imastream_extract_free(x);
	close(rootfd);
}

static void test_bad_args(void)
{
	struct imastream_extract *x;
	int fd = open("/dev/null", O_RDONLY), dir = open(base, O_RDONLY | O_DIRECTORY);

	ASSERT_EQ(imastream_extract_new(fd, 0, NULL, NULL, &x), -ENOTDIR);
	ASSERT_EQ(imastream_extract_new(-1, 0, NULL, NULL, &x), -EBADF);
	ASSERT_EQ(imastream_extract_new(dir, 1u << 30, NULL, NULL, &x), -EINVAL);
	close(fd);
	close(dir);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ASSERT(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* More directories than the fd cache holds: fds stay bounded, commit and abort still work. */
static void test_many_dirs(bool commit)
{
	struct imastream_extract *x;
	char root[PATH_MAX], path[64], p[PATH_MAX + 64];
	struct stat sa, sb;
	int rootfd = new_root(root, sizeof(root)), fds = count_fds();

	ASSERT_EQ(imastream_extract_new(rootfd, IMASTREAM_EXTRACT_NO_CHOWN, NULL, &log_capture, &x), 0);
	ASSERT_EQ(imastream_extract_begin(x, "many"), 0);
	for (int i = 0; i < 700; i++) {
		snprintf(path, sizeof(path), "/d%03d/sub/f", i);
		ASSERT_EQ(put_file(x, path, "content", NULL), 0);
		ASSERT(count_fds() < fds + 300);
	}
	{
		/* A hard link to a file whose directory fd was evicted long ago. */
		struct imastream_entry hard = { .path = "/d699/sub/link", .mode = S_IFREG | 0644,
						.flags = IMASTREAM_ENTRY_HARDLINK,
						.link_target = "/d000/sub/f" };

		ASSERT_EQ(imastream_extract_entry_begin(x, &hard), 0);
		ASSERT_EQ(imastream_extract_entry_end(x), 0);
	}
	if (commit) {
		ASSERT_EQ(imastream_extract_commit(x), 0);
		ASSERT_EQ(count_tree(root), 700 * 3 + 1);
		snprintf(p, sizeof(p), "%s/d000/sub/f", root);
		ASSERT(stat(p, &sa) == 0);
		snprintf(p, sizeof(p), "%s/d699/sub/link", root);
		ASSERT(stat(p, &sb) == 0);
		ASSERT_EQ(sa.st_ino, sb.st_ino);
	} else {
		imastream_extract_abort(x, -EINTR);
		ASSERT_EQ(count_tree(root), 0);
	}
	imastream_extract_free(x);
	ASSERT(count_fds() <= fds);
	close(rootfd);
}

int main(void)
{
	char tmpl[] = "/tmp/imastream-test-extract.XXXXXX";
	char cmd[PATH_MAX + 16];

	ASSERT(mkdtemp(tmpl));
	snprintf(base, sizeof(base), "%s", tmpl);
	test_paths();
	test_bad_args();
	test_commit();
	expect_rollback("traversal", -EINVAL, seq_traversal, NULL);
	expect_rollback("duplicate", -EEXIST, seq_duplicate, NULL);
	expect_rollback("symlink-then-file", -ENOTDIR, seq_symlink_then_file, NULL);
	expect_rollback("root-symlink", -ELOOP, seq_through_root_symlink, prep_symlink);
	expect_rollback("file-over-dir", -EEXIST, seq_file_over_dir, prep_dir);
	expect_rollback("digest", -EBADMSG, seq_digest, NULL);
	expect_rollback("too-much", -EFBIG, seq_too_much, NULL);
	expect_rollback("truncated", -EPIPE, seq_truncated, NULL);
	expect_rollback("bad-hardlink", -EINVAL, seq_bad_hardlink, NULL);
	expect_rollback("socket", -EINVAL, seq_socket, NULL);
	test_sink_veto();
	test_rename_fails_midway();
	test_many_dirs(true);
	test_deep_path();
	test_many_dirs(false);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	ASSERT(system(cmd) == 0);
	return 0;
}
