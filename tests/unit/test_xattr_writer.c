// SPDX-License-Identifier: LGPL-2.1-or-later
/* The xattr writer: fd and path, never through symlinks, user.* switch, soft errors. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "imastream/xattr.h"
#include "tests/unit/test_xattr_util.h"
#include "xattr/codec.h"
#include "xattr/stored_name.h"

static struct captured cap;
static const struct imastream_log log_ = { capture_fn, &cap };

static void expect_value(const char *path, const char *name, const void *v, size_t len)
{
	unsigned char buf[256];
	ssize_t n = lgetxattr(path, name, buf, sizeof(buf));

	ASSERT_EQ(n, len);
	ASSERT_MEM_EQ(buf, v, len);
}

static void test_names(void)
{
	struct imastream_xattr_writer w;

	/* The room reserved for later members is zero after init, whatever was there. */
	memset(&w, 0x5a, sizeof(w));
	imastream_xattr_writer_init(&w, 0, &log_);
	for (size_t i = 0; i < sizeof(w.reserved) / sizeof(w.reserved[0]); i++)
		ASSERT_EQ(w.reserved[i], 0);
	ASSERT(!strcmp(imastream_xattr_writer_name(&w, IMASTREAM_ATTR_IMA), "security.ima"));
	ASSERT(!strcmp(imastream_xattr_writer_name(&w, IMASTREAM_ATTR_EVM), "security.evm"));
	imastream_xattr_writer_init(&w, IMASTREAM_XATTR_WRITE_USER, &log_);
	ASSERT(!strcmp(imastream_xattr_writer_name(&w, IMASTREAM_ATTR_IMA), "user.ima"));
	ASSERT(!strcmp(imastream_xattr_writer_name(&w, IMASTREAM_ATTR_EVM), "user.evm"));
	ASSERT(imastream_xattr_writer_name(&w, 7) == NULL);
	/* The one rule every layer asks (filesig, the chain, the drivers, the CLI). */
	ASSERT(!strcmp(imastream_xattr_name(IMASTREAM_ATTR_IMA, false), "security.ima"));
	ASSERT(!strcmp(imastream_xattr_name(IMASTREAM_ATTR_EVM, true), "user.evm"));
	ASSERT(imastream_xattr_name(-1, true) == NULL);
	/* One mapping of security.X to user.X: the names above and every other caller's. */
	{
		char buf[64];

		for (int attr = IMASTREAM_ATTR_IMA; attr <= IMASTREAM_ATTR_EVM; attr++) {
			ims_xattr_stored_name(imastream_xattr_name(attr, false), true, buf,
					      sizeof(buf));
			ASSERT(!strcmp(buf, imastream_xattr_name(attr, true)));
			ims_xattr_stored_name(imastream_xattr_name(attr, false), false, buf,
					      sizeof(buf));
			ASSERT(!strcmp(buf, imastream_xattr_name(attr, false)));
		}
		ims_xattr_stored_name("security.selinux", true, buf, sizeof(buf));
		ASSERT(!strcmp(buf, "user.selinux"));
		ims_xattr_stored_name("trusted.x", true, buf, sizeof(buf));
		ASSERT(!strcmp(buf, "trusted.x"));
	}

	ASSERT_EQ(imastream_xattr_writer_soft(&w, 0), -EINVAL);
	for (int i = 1; i <= IMASTREAM_XATTR_MAX_SOFT; i++)
		ASSERT_EQ(imastream_xattr_writer_soft(&w, i), 0);
	ASSERT_EQ(imastream_xattr_writer_soft(&w, 3), 0); /* already there */
	ASSERT_EQ(imastream_xattr_writer_soft(&w, 100), -ENOSPC);
}

static void test_writes(const char *dir)
{
	static const unsigned char v1[] = { 4, 4, 1, 2, 3 }, v2[] = { 5, 2, 9 };
	struct imastream_xattr_writer w;
	char path[512], link[512];
	bool skipped = true;
	int fd;

	snprintf(path, sizeof(path), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	write_file(path, "x", 1);
	ASSERT_EQ(symlink("target", link), 0);

	/* By fd. */
	imastream_xattr_writer_init(&w, IMASTREAM_XATTR_WRITE_USER, &log_);
	fd = open(path, O_RDONLY);
	ASSERT(fd >= 0);
	ASSERT_EQ(imastream_xattr_write(&w, fd, path, IMASTREAM_ATTR_IMA, v1, sizeof(v1),
					&skipped), 0);
	ASSERT(!skipped);
	expect_value(path, "user.ima", v1, sizeof(v1));
	close(fd);

	/* By path. */
	ASSERT_EQ(imastream_xattr_write(&w, -1, path, IMASTREAM_ATTR_EVM, v2, sizeof(v2), NULL), 0);
	expect_value(path, "user.evm", v2, sizeof(v2));

	/* Through a symlink: user.* on a symlink is refused, and the target stays as it was. */
	cap.count = 0;
	ASSERT_EQ(imastream_xattr_write(&w, -1, link, IMASTREAM_ATTR_IMA, v2, sizeof(v2), NULL),
		  -EPERM);
	ASSERT_EQ(cap.count, 1);
	ASSERT(strstr(cap.last, link) && strstr(cap.last, "user.ima"));
	expect_value(path, "user.ima", v1, sizeof(v1));

	if (geteuid() == 0) {
		/* security.*: lands on the symlink itself, not its target. */
		imastream_xattr_writer_init(&w, 0, &log_);
		ASSERT_EQ(imastream_xattr_write(&w, -1, link, IMASTREAM_ATTR_IMA, v2, sizeof(v2),
						NULL), 0);
		expect_value(link, "security.ima", v2, sizeof(v2));
		ASSERT(lgetxattr(path, "security.ima", NULL, 0) < 0 && errno == ENODATA);
		ASSERT_EQ(imastream_xattr_write(&w, -1, path, IMASTREAM_ATTR_IMA, v1, sizeof(v1),
						NULL), 0);
		expect_value(path, "security.ima", v1, sizeof(v1));
	}

	/* Missing file: one line naming the file and the attribute. */
	snprintf(link, sizeof(link), "%s/nope", dir);
	cap.count = 0;
	ASSERT_EQ(imastream_xattr_write(&w, -1, link, IMASTREAM_ATTR_EVM, v2, sizeof(v2), NULL),
		  -ENOENT);
	ASSERT_EQ(cap.count, 1);
	ASSERT(strstr(cap.last, "nope") && strstr(cap.last, "evm"));
	ASSERT_EQ(imastream_xattr_write(&w, -1, NULL, IMASTREAM_ATTR_EVM, v2, 3, NULL), -EINVAL);
	ASSERT_EQ(imastream_xattr_write(&w, 0, NULL, 9, v2, 3, NULL), -EINVAL);
}

/* procfs has no xattr support at all: EOPNOTSUPP is hard by default, soft when asked. */
static void test_soft_errors(void)
{
	static const unsigned char v[] = { 4, 4, 0 };
	struct imastream_xattr_writer w;
	bool skipped = false;
	int fd = open("/proc/self/stat", O_RDONLY);

	if (fd < 0) {
		fprintf(stderr, "no /proc: soft-error test skipped\n");
		return;
	}
	imastream_xattr_writer_init(&w, IMASTREAM_XATTR_WRITE_USER, &log_);
	cap.count = 0;
	ASSERT_EQ(imastream_xattr_write(&w, fd, "/proc/self/stat", IMASTREAM_ATTR_IMA, v, 3,
					&skipped), -EOPNOTSUPP);
	ASSERT(!skipped);
	ASSERT_EQ(cap.count, 1);
	ASSERT_EQ(cap.level, IMASTREAM_LOG_ERR);
	ASSERT(strstr(cap.last, "/proc/self/stat") && strstr(cap.last, "user.ima") &&
	       strstr(cap.last, "does not support"));

	ASSERT_EQ(imastream_xattr_writer_soft(&w, EOPNOTSUPP), 0);
	cap.count = 0;
	ASSERT_EQ(imastream_xattr_write(&w, fd, "/proc/self/stat", IMASTREAM_ATTR_IMA, v, 3,
					&skipped), 0);
	ASSERT(skipped);
	ASSERT_EQ(cap.count, 1);
	ASSERT_EQ(cap.level, IMASTREAM_LOG_WARNING);
	ASSERT(strstr(cap.last, "skipped"));
	close(fd);
}

int main(void)
{
	test_names();
	test_writes(make_test_dir());
	test_soft_errors();
	return 0;
}
