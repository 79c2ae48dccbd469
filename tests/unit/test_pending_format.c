// SPDX-License-Identifier: LGPL-2.1-or-later
/* The pending-label entry: a known entry's exact text both ways, and each malformed form refused with its reason. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugin/core/pending_format.h"
#include "tests/unit/test.h"

/* sha256("x") and the security.ima (ima-ng) of that digest. */
#define DX "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
#define HEAD "imastream-pending 1\n"
#define GOOD                                                                         \
	HEAD "path /usr/lib/a%20b%25c%0a\npackage demo-1.0-1.noarch\nmode 0104755\n" \
	     "owner 0 12\nbuilt-owner 100000 100012\ndigest sha256 " DX "\n"         \
	     "xattr security.ima 0404" DX "\nxattr security.evm 05020b\nend\n"

static void good_vector(void)
{
	struct ims_pending_entry e, f;
	char why[192] = "", *buf;
	size_t len;

	ASSERT_EQ(ims_pending_parse(GOOD, strlen(GOOD), &e, why, sizeof(why)), 0);
	ASSERT(!strcmp(e.path, "/usr/lib/a b%c\n"));
	ASSERT(!strcmp(e.package, "demo-1.0-1.noarch"));
	ASSERT_EQ(e.mode, S_IFREG | S_ISUID | 0755);
	ASSERT_EQ(e.uid, 0);
	ASSERT_EQ(e.gid, 12);
	ASSERT_EQ(e.built_uid, 100000);
	ASSERT_EQ(e.built_gid, 100012);
	ASSERT_EQ(e.digest_algo, IMASTREAM_HASH_SHA256);
	ASSERT_EQ(e.digest_len, 32);
	ASSERT_EQ(e.digest[0], 0x2d);
	ASSERT_EQ(e.digest[31], 0x81);
	ASSERT_EQ(e.n_xattrs, 2);
	ASSERT(!strcmp(e.xattrs[0].name, "security.ima"));
	ASSERT_EQ(e.xattrs[0].len, 34);
	ASSERT_EQ(e.xattrs[0].value[0], 4);
	ASSERT(!strcmp(e.xattrs[1].name, "security.evm"));
	ASSERT_EQ(e.xattrs[1].len, 3);
	/* Formatted back: the very same bytes. */
	ASSERT_EQ(ims_pending_format(&e, &buf, &len), 0);
	ASSERT_EQ(len, strlen(GOOD));
	ASSERT_MEM_EQ(buf, GOOD, len);
	ASSERT_EQ(ims_pending_parse(buf, len, &f, why, sizeof(why)), 0);
	free(buf);
	ims_pending_entry_release(&f);
	ims_pending_entry_release(&e);
	ASSERT(e.path == NULL && e.n_xattrs == 0);
}

/* @text refused with @err and a reason containing @why. */
static void refused(const char *text, size_t len, int err, const char *why)
{
	struct ims_pending_entry e;
	char said[192] = "";
	int got = ims_pending_parse(text, len, &e, said, sizeof(said));

	if (got != err || !strstr(said, why)) {
		fprintf(stderr, "entry:\n%.*s\nexpected %d \"%s\", got %d \"%s\"\n", (int)len, text,
			err, why, got, said);
		exit(1);
	}
	ims_pending_entry_release(&e);
}

#define REFUSED(text, err, why) refused((text), strlen(text), (err), (why))
#define TAIL \
	"package p-1-1.noarch\nmode 0100644\nowner 0 0\nbuilt-owner 0 0\ndigest sha256 " DX "\n"
#define ENTRY(path, rest) HEAD "path " path "\n" TAIL rest

static void bad_vectors(void)
{
	char *nul;

	REFUSED("imastream-pending 2\npath /x\n", -EPROTONOSUPPORT, "newer than");
	REFUSED("imastream-pending 0\n", -EBADMSG, "not a pending-label entry");
	REFUSED("something else\n", -EBADMSG, "not a pending-label entry");
	REFUSED(HEAD "path /x\npackage p\n", -EBADMSG, "truncated before \"mode\"");
	REFUSED(ENTRY("/x", "xattr security.ima 00\n"), -EBADMSG, "truncated (no \"end\")");
	REFUSED(ENTRY("/x", "xattr security.ima 00\nend"), -EBADMSG, "truncated (no \"end\")");
	REFUSED(ENTRY("/x", "xattr security.ima 00\nxattr security.ima 01\nend\n"), -EBADMSG,
		"security.ima twice");
	REFUSED(ENTRY("x", "xattr security.ima 00\nend\n"), -EBADMSG, "not absolute and plain");
	REFUSED(ENTRY("/a/../etc/passwd", "xattr security.ima 00\nend\n"), -EBADMSG,
		"not absolute and plain");
	REFUSED(ENTRY("/a/%2e%2e/etc", "xattr security.ima 00\nend\n"), -EBADMSG,
		"not absolute and plain");
	REFUSED(ENTRY("/a//b", "xattr security.ima 00\nend\n"), -EBADMSG, "not absolute and plain");
	REFUSED(ENTRY("/a/./b", "xattr security.ima 00\nend\n"), -EBADMSG,
		"not absolute and plain");
	REFUSED(ENTRY("/a%00b", "xattr security.ima 00\nend\n"), -EBADMSG,
		"not absolute and plain");
	REFUSED(ENTRY("/a%2", "xattr security.ima 00\nend\n"), -EBADMSG, "not absolute and plain");
	REFUSED(ENTRY("/x", "xattr security.ima 0g\nend\n"), -EBADMSG, "not hex");
	REFUSED(ENTRY("/x", "xattr security.ima 000\nend\n"), -EBADMSG, "not hex");
	REFUSED(ENTRY("/x", "xattr user.ima 00\nend\n"), -EBADMSG,
		"outside the security namespace");
	REFUSED(ENTRY("/x", "xattr security.ima\nend\n"), -EBADMSG, "without a value");
	REFUSED(ENTRY("/x", "end\n"), -EBADMSG, "no value to write");
	REFUSED(ENTRY("/x", "xattr security.ima 00\nend\nmore\n"), -EBADMSG, "bytes after");
	REFUSED(ENTRY("/x", "label x\nend\n"), -EBADMSG, "\"xattr\" or \"end\" expected");
	REFUSED(HEAD "package p\npath /x\n", -EBADMSG, "\"path\" expected");
	REFUSED(HEAD "path /x\npackage p\nmode 0100644\nowner 0 0\nbuilt-owner 0 0\n"
		     "digest sha256 00\nxattr security.ima 00\nend\n",
		-EBADMSG, "a bad digest");
	REFUSED(HEAD "path /x\npackage p\nmode 0040755\nowner 0 0\nbuilt-owner 0 0\n"
		     "digest sha256 " DX "\nxattr security.ima 00\nend\n",
		-EBADMSG, "not regular");
	REFUSED(HEAD "path /x\npackage p\nmode 0100644\nowner 0 0\nbuilt-owner 0 0\n"
		     "digest none\nxattr security.ima 00\nend\n",
		-EBADMSG, "without a digest");
	REFUSED(HEAD "path /x\npackage p\nmode 0170644\nowner 0 0\nbuilt-owner 0 0\n"
		     "digest none\nend\n",
		-EBADMSG, "a bad mode");
	REFUSED(HEAD "path /x\npackage p\nmode 0100644\nowner 4294967295 0\n", -EBADMSG,
		"a bad owner");
	REFUSED(HEAD "path /x\npackage \n", -EBADMSG, "an empty package name");
	/* A NUL anywhere. */
	nul = strdup(ENTRY("/x", "xattr security.ima 00\nend\n"));
	ASSERT(nul);
	nul[25] = '\0';
	refused(nul, strlen(nul + 26) + 26, -EBADMSG, "a NUL byte");
	free(nul);
}

int main(void)
{
	good_vector();
	bad_vectors();
	puts("ok: pending entries: known vector both ways, 29 malformed forms refused with their "
	     "reason");
	return 0;
}
