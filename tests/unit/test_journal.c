// SPDX-License-Identifier: LGPL-2.1-or-later
/* The intent journal: its text with known answers, refusals of bad ones, and replay beneath a root. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "imastream/root.h"
#include "installer/journal.h"
#include "tests/unit/test.h"

/* The body's SHA-256 is sha256sum's over the lines before it. */
#define BODY                                                                          \
	"imastream-journal 1\n"                                                       \
	"package imscrash-2.0\n"                                                      \
	"pid 4660\n"                                                                  \
	"rename /opt/crash .imastream-tmp-1234-0 f%20one\n"                           \
	"rename / .imastream-tmp-1234-1 top\n"                                        \
	"remove /opt/crash old\n"                                                     \
	"rename /var/lib/imastream/packages .imastream-tmp-1234-record-0 imscrash.record\n"
#define KNOWN BODY "sha256 f9a92817f88d2cbd6ed7d8a8406b556060d36bb8ec19d4194c482a89f6a85d4e\n"

static char last_msg[1024];

static void capture(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= IMASTREAM_LOG_WARNING)
		snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

static const struct imastream_log log_capture = { capture, NULL };

static void test_known(void)
{
	struct ims_journal j, k;
	unsigned int line;
	const char *why;
	char *text;
	size_t len;

	ASSERT_EQ(ims_journal_parse(KNOWN, strlen(KNOWN), &j, &line, &why), 0);
	ASSERT(!strcmp(j.package, "imscrash-2.0"));
	ASSERT_EQ(j.pid, 0x1234);
	ASSERT_EQ(j.nops, 4);
	ASSERT_EQ(j.ops[0].kind, IMS_JOURNAL_RENAME);
	ASSERT(!strcmp(j.ops[0].dir, "opt/crash"));
	ASSERT(!strcmp(j.ops[0].tmp, ".imastream-tmp-1234-0"));
	ASSERT(!strcmp(j.ops[0].name, "f one"));
	ASSERT(!strcmp(j.ops[1].dir, ""));
	ASSERT(!strcmp(j.ops[1].name, "top"));
	ASSERT_EQ(j.ops[2].kind, IMS_JOURNAL_REMOVE);
	ASSERT(!j.ops[2].tmp);
	ASSERT(!strcmp(j.ops[2].name, "old"));
	ASSERT(!strcmp(j.ops[3].dir, "var/lib/imastream/packages"));
	ASSERT(!strcmp(j.ops[3].name, "imscrash.record"));

	/* The writer gives the same bytes, checksum included. */
	ASSERT_EQ(ims_journal_format(&j, &text, &len), 0);
	ASSERT_EQ(len, strlen(KNOWN));
	ASSERT_MEM_EQ(text, KNOWN, len);
	free(text);

	/* Built step by step, as the extractor does. */
	ASSERT_EQ(ims_journal_init(&k, "imscrash-2.0", 0x1234), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RENAME, "/opt/crash", ".imastream-tmp-1234-0", "f one", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RENAME, "", ".imastream-tmp-1234-1", "top", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_REMOVE, "opt/crash", NULL, "old", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RENAME, "var/lib/imastream/packages",
				  ".imastream-tmp-1234-record-0", "imscrash.record", &why), 0);
	ASSERT_EQ(ims_journal_format(&k, &text, &len), 0);
	ASSERT_EQ(len, strlen(KNOWN));
	ASSERT_MEM_EQ(text, KNOWN, len);
	free(text);

	/* What add refuses. */
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RENAME, "/opt/../etc", ".imastream-tmp-1234-2", "x", &why), -EINVAL);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RENAME, "/opt", ".imastream-tmp-99-2", "x", &why), -EINVAL);
	ASSERT(strstr(why, "not the writer's"));
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RENAME, "/opt", ".imastream-tmp-1234-", "x", &why), -EINVAL);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RENAME, "/opt", "passwd", "x", &why), -EINVAL);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RENAME, "/opt", ".imastream-tmp-1234-2", "a/b", &why), -EINVAL);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_REMOVE, "/opt", NULL, "..", &why), -EINVAL);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_REMOVE, "/opt", NULL, "", &why), -EINVAL);
	ASSERT_EQ(k.nops, 4);
	ims_journal_clear(&k);
	ims_journal_clear(&j);
}

/* Parses @text; expects a refusal at @line whose reason contains @why_part. */
static void refused(const char *text, size_t len, unsigned int want_line, const char *why_part)
{
	struct ims_journal j;
	unsigned int line = 99;
	const char *why = NULL;

	if (ims_journal_parse(text, len, &j, &line, &why) != -EBADMSG || line != want_line ||
	    !why || !strstr(why, why_part)) {
		fprintf(stderr, "journal not refused as expected (line %u, want %u: %s, want %s):\n%.*s\n",
			line, want_line, why ? why : "(none)", why_part, (int)len, text);
		exit(1);
	}
	ASSERT_EQ(j.nops, 0); /* nothing half-parsed is handed back */
}

/* BODY with line @n replaced by @repl, then the (now wrong) checksum of KNOWN. */
static void refused_line(unsigned int n, const char *repl, const char *why_part)
{
	char text[4096], *p = text;
	const char *src = BODY;

	for (unsigned int l = 1; *src; l++) {
		const char *nl = strchr(src, '\n');

		p += l == n ? sprintf(p, "%s\n", repl) : sprintf(p, "%.*s\n", (int)(nl - src), src);
		src = nl + 1;
	}
	p += sprintf(p, "%s", strrchr(KNOWN, 's'));
	refused(text, (size_t)(p - text), n, why_part);
}

static void test_refused(void)
{
	char text[4096];
	size_t len = strlen(KNOWN);

	refused("", 0, 0, "empty");
	refused(KNOWN, len - 1, 0, "no newline");
	refused(BODY, strlen(BODY), 7, "no sha256 line"); /* its last step taken for the checksum */
	refused("imastream-journal 1\npackage x\n", 30, 0, "cut short");
	memcpy(text, KNOWN, len);
	text[60] ^= 1; /* one bit of a step rotten: the temp name still parses */
	refused(text, len, 8, "does not match");
	memcpy(text, KNOWN, len);
	text[len - 2] = text[len - 2] == '0' ? '1' : '0';
	refused(text, len, 8, "does not match");
	memcpy(text, KNOWN, len);
	text[30] = 0;
	refused(text, len, 0, "NUL");

	refused_line(1, "imastream-journal 2", "not an imastream journal");
	refused_line(2, "packages imscrash", "malformed");
	refused_line(3, "pid 0", "bad pid");
	refused_line(3, "pid 12x", "bad pid");
	refused_line(4, "rename /opt/../etc .imastream-tmp-1234-0 passwd", "traversal");
	refused_line(4, "rename /opt .imastream-tmp-1234-0 a%2Fb", "one path component");
	refused_line(4, "rename /opt .imastream-tmp-1235-0 x", "not the writer's");
	refused_line(4, "rename /opt shadow x", "not the writer's");
	refused_line(4, "rename /opt .imastream-tmp-1234-0", "unknown step");
	refused_line(4, "remove /opt .imastream-tmp-1234-0 x", "unknown step");
	refused_line(4, "rmdir /opt .imastream-tmp-1234-0 x", "unknown step");
	refused_line(4, "rpmsave /opt .imastream-tmp-1234-0 x", "unknown step");
	refused_line(4, "unlink /opt x", "unknown step");
	refused_line(4, "remove /opt/../../etc passwd", "traversal");
	refused_line(4, "rmdir /opt/.. etc", "traversal");
	refused_line(4, "rpmsave /etc/../.. passwd", "traversal");
	refused_line(4, "remove /etc ..", "one path component");
	refused_line(4, "rmdir /etc a%2Fb", "one path component");
	refused_line(4, "rpmsave /etc %2Fetc%2Fpasswd", "one path component");
	{
		char line[400];

		snprintf(line, sizeof(line), "rpmsave /etc %0250d", 0); /* 250 + ".rpmsave" > NAME_MAX */
		refused_line(4, line, "too long");
	}
	refused_line(4, "rename  /opt .imastream-tmp-1234-0 x", "malformed");
	refused_line(4, "rename /opt .imastream-tmp-1234-0 x ", "malformed");
	refused_line(4, "rename /opt .imastream-tmp-1234-0 x%zz", "percent");
	refused_line(4, "", "malformed");
}

static char base[] = "/tmp/imastream-test-journal.XXXXXX";

static void put(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");

	ASSERT(f);
	fputs(content, f);
	ASSERT(fclose(f) == 0);
}

static bool has(const char *path, const char *content)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return !strcmp(buf, content);
}

static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

/* Replays KNOWN: steps still due are done, those done before are skipped. */
static void test_replay(void)
{
	struct ims_journal_outcome out;
	struct ims_journal j;
	unsigned int line;
	const char *why;
	char root[256], p[1024];
	int rootfd, statefd;

	snprintf(root, sizeof(root), "%s/root", base);
	ASSERT(mkdir(root, 0755) == 0);
	snprintf(p, sizeof(p), "mkdir -p %s/opt/crash %s/var/lib/imastream/packages", root, root);
	ASSERT(system(p) == 0);
	snprintf(p, sizeof(p), "%s/opt/crash/.imastream-tmp-1234-0", root);
	put(p, "new");
	snprintf(p, sizeof(p), "%s/opt/crash/f one", root);
	put(p, "old");
	snprintf(p, sizeof(p), "%s/top", root); /* renamed before the kill */
	put(p, "new top");
	snprintf(p, sizeof(p), "%s/opt/crash/old", root);
	put(p, "obsolete");
	snprintf(p, sizeof(p), "%s/var/lib/imastream/packages/.imastream-tmp-1234-record-0", root);
	put(p, "record 2");
	snprintf(p, sizeof(p), "%s/var/lib/imastream/packages/imscrash.record", root);
	put(p, "record 1");
	rootfd = open(root, O_RDONLY | O_DIRECTORY);
	ASSERT(rootfd >= 0);

	ASSERT_EQ(ims_journal_parse(KNOWN, strlen(KNOWN), &j, &line, &why), 0);
	memset(&out, 0, sizeof(out));
	ASSERT_EQ(ims_journal_replay(rootfd, &j, root, &log_capture, &out), 0);
	ASSERT_EQ(out.steps, 4);
	ASSERT_EQ(out.renamed, 2);
	ASSERT_EQ(out.removed, 1);
	snprintf(p, sizeof(p), "%s/opt/crash/f one", root);
	ASSERT(has(p, "new"));
	snprintf(p, sizeof(p), "%s/top", root);
	ASSERT(has(p, "new top"));
	snprintf(p, sizeof(p), "%s/opt/crash/old", root);
	ASSERT(!exists(p));
	snprintf(p, sizeof(p), "%s/var/lib/imastream/packages/imscrash.record", root);
	ASSERT(has(p, "record 2"));
	snprintf(p, sizeof(p), "%s/var/lib/imastream/packages/.imastream-tmp-1234-record-0", root);
	ASSERT(!exists(p));

	/* Again: everything is done, nothing changes. */
	memset(&out, 0, sizeof(out));
	ASSERT_EQ(ims_journal_replay(rootfd, &j, root, &log_capture, &out), 0);
	ASSERT_EQ(out.renamed + out.removed, 0);
	ims_journal_clear(&j);

	/* Recovery from the state directory: the journal goes once it is done. */
	statefd = open(strcat(strcpy(p, root), "/var/lib/imastream"), O_RDONLY | O_DIRECTORY);
	ASSERT(statefd >= 0);
	ASSERT_EQ(ims_journal_recover(rootfd, statefd, root, &log_capture, &out), 0);
	ASSERT(!out.found);
	snprintf(p, sizeof(p), "%s/opt/crash/.imastream-tmp-1234-0", root);
	put(p, "newer");
	snprintf(p, sizeof(p), "%s/var/lib/imastream/journal", root);
	put(p, KNOWN);
	ASSERT(imastream_root_interrupted(rootfd) >= 1); /* (pid 0x1234 may be alive here) */
	ASSERT_EQ(ims_journal_recover(rootfd, statefd, root, &log_capture, &out), 0);
	ASSERT(out.found);
	ASSERT_EQ(out.renamed, 1);
	ASSERT(!exists(p));
	ASSERT_EQ(imastream_root_interrupted(rootfd), 0);
	snprintf(p, sizeof(p), "%s/opt/crash/f one", root);
	ASSERT(has(p, "newer"));

	/* A rotten journal: refused in one line naming it, nothing changed, still there. */
	snprintf(p, sizeof(p), "%s/opt/crash/.imastream-tmp-1234-0", root);
	put(p, "newest");
	snprintf(p, sizeof(p), "%s/var/lib/imastream/journal", root);
	put(p, BODY "sha256 0000\n");
	last_msg[0] = 0;
	ASSERT_EQ(ims_journal_recover(rootfd, statefd, root, &log_capture, &out), -EBADMSG);
	ASSERT(strstr(last_msg, "/var/lib/imastream/journal: corrupt intent journal"));
	ASSERT(strstr(last_msg, "nothing was changed"));
	ASSERT(exists(p));
	snprintf(p, sizeof(p), "%s/opt/crash/f one", root);
	ASSERT(has(p, "newer"));
	ASSERT(imastream_root_interrupted(rootfd) >= 1);

	/* Whether its writer still runs: our parent does, a child we reaped does not. */
	{
		char text[128];
		pid_t child = fork();

		ASSERT(child >= 0);
		if (!child)
			_exit(0);
		ASSERT(waitpid(child, NULL, 0) == child);
		snprintf(p, sizeof(p), "%s/var/lib/imastream/journal", root);
		snprintf(text, sizeof(text), "imastream-journal 1\npackage x\npid %d\n", (int)getppid());
		put(p, text);
		ASSERT_EQ(imastream_root_interrupted(rootfd), 2);
		snprintf(text, sizeof(text), "imastream-journal 1\npackage x\npid %d\n", (int)child);
		put(p, text);
		ASSERT_EQ(imastream_root_interrupted(rootfd), 1);
		/* No journal, a marker: an install under way (its writer runs, or it is us), or
		 * one killed before its renames (3); one that is not a regular file is refused. */
		ASSERT_EQ(unlink(p), 0);
		snprintf(p, sizeof(p), "%s/var/lib/imastream/running", root);
		snprintf(text, sizeof(text), "imastream-running 1\npid %d\n", (int)getppid());
		put(p, text);
		ASSERT_EQ(imastream_root_interrupted(rootfd), 0);
		snprintf(text, sizeof(text), "imastream-running 1\npid %d\n", (int)getpid());
		put(p, text);
		ASSERT_EQ(imastream_root_interrupted(rootfd), 0);
		snprintf(text, sizeof(text), "imastream-running 1\npid %d\n", (int)child);
		put(p, text);
		ASSERT_EQ(imastream_root_interrupted(rootfd), 3);
		ASSERT_EQ(unlink(p), 0);
		ASSERT_EQ(mkfifo(p, 0600), 0);
		ASSERT_EQ(imastream_root_interrupted(rootfd), -EMEDIUMTYPE);
		ASSERT_EQ(unlink(p), 0);
		ASSERT_EQ(imastream_root_interrupted(rootfd), 0);
	}
	close(statefd);
	close(rootfd);
}

/* An upgrade's removals: known text, then replay (twice: the second run does nothing). */
static void test_removals(void)
{
	static const char body[] =
		"imastream-journal 1\n"
		"package imsdrop-2.0\n"
		"pid 4660\n"
		"rename /opt/drop .imastream-tmp-1234-0 kept\n"
		"remove /opt/drop gone\n"
		"remove /opt/drop link\n"
		"remove /opt/drop already-gone\n"
		"rpmsave /etc/drop modified.conf\n"
		"remove /opt/drop/sub/deeper f\n"
		"rmdir /opt/drop/sub deeper\n"
		"rmdir /opt/drop sub\n"
		"rmdir /opt/drop busy\n"
		"rmdir /opt/nowhere x\n";
	struct ims_journal_outcome out;
	struct ims_journal j, k;
	char root[256], p[1024], *text, *known;
	unsigned int line;
	const char *why;
	size_t len;
	int rootfd;

	/* The text round trip: format(parse(x)) == x, with its checksum. */
	ASSERT_EQ(ims_journal_init(&k, "imsdrop-2.0", 0x1234), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RENAME, "/opt/drop", ".imastream-tmp-1234-0", "kept", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_REMOVE, "/opt/drop", NULL, "gone", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_REMOVE, "/opt/drop", NULL, "link", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_REMOVE, "/opt/drop", NULL, "already-gone", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_SAVE, "/etc/drop", NULL, "modified.conf", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_REMOVE, "/opt/drop/sub/deeper", NULL, "f", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RMDIR, "/opt/drop/sub", NULL, "deeper", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RMDIR, "/opt/drop", NULL, "sub", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RMDIR, "/opt/drop", NULL, "busy", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RMDIR, "/opt/nowhere", NULL, "x", &why), 0);
	ASSERT_EQ(ims_journal_add(&k, IMS_JOURNAL_RMDIR, "/opt", ".imastream-tmp-1234-0", "x", &why), -EINVAL);
	ASSERT_EQ(ims_journal_format(&k, &text, &len), 0);
	ASSERT_EQ(len, strlen(body) + 7 + 64 + 1);
	ASSERT(!memcmp(text, body, strlen(body)));
	ASSERT_EQ(ims_journal_parse(text, len, &j, &line, &why), 0);
	ASSERT_EQ(j.nops, 10);
	ASSERT_EQ(j.ops[4].kind, IMS_JOURNAL_SAVE);
	ASSERT_EQ(j.ops[6].kind, IMS_JOURNAL_RMDIR);
	known = text;
	ims_journal_clear(&k);

	snprintf(root, sizeof(root), "%s/removals", base);
	snprintf(p, sizeof(p), "mkdir -p %s/opt/drop/sub/deeper %s/opt/drop/busy %s/etc/drop", root, root, root);
	ASSERT(system(p) == 0);
	snprintf(p, sizeof(p), "%s/opt/drop/.imastream-tmp-1234-0", root);
	put(p, "new");
	snprintf(p, sizeof(p), "%s/opt/drop/gone", root);
	put(p, "old");
	snprintf(p, sizeof(p), "%s/opt/drop/sub/deeper/f", root);
	put(p, "old");
	snprintf(p, sizeof(p), "%s/opt/drop/busy/not-ours", root);
	put(p, "admin's");
	snprintf(p, sizeof(p), "%s/etc/drop/modified.conf", root);
	put(p, "changed");
	snprintf(p, sizeof(p), "%s/etc/drop/gone", root);
	ASSERT(symlink(p, strcat(strcpy(p, root), "/opt/drop/link")) == 0); /* dangling: removed itself */
	rootfd = open(root, O_RDONLY | O_DIRECTORY);
	ASSERT(rootfd >= 0);
	memset(&out, 0, sizeof(out));
	last_msg[0] = 0;
	ASSERT_EQ(ims_journal_replay(rootfd, &j, root, &log_capture, &out), 0);
	ASSERT_EQ(out.renamed, 1);
	ASSERT_EQ(out.removed, 5); /* gone, link, f, deeper, sub: not already-gone, busy, x */
	ASSERT_EQ(out.saved, 1);
	ASSERT(strstr(last_msg, "/etc/drop/modified.conf saved as "));
	ASSERT(strstr(last_msg, "/etc/drop/modified.conf.rpmsave"));
	snprintf(p, sizeof(p), "%s/etc/drop/modified.conf.rpmsave", root);
	ASSERT(has(p, "changed"));
	snprintf(p, sizeof(p), "%s/etc/drop/modified.conf", root);
	ASSERT(!exists(p));
	snprintf(p, sizeof(p), "%s/opt/drop/kept", root);
	ASSERT(has(p, "new"));
	snprintf(p, sizeof(p), "%s/opt/drop/gone", root);
	ASSERT(!exists(p));
	snprintf(p, sizeof(p), "%s/opt/drop/link", root);
	ASSERT(!exists(p));
	snprintf(p, sizeof(p), "%s/opt/drop/sub", root);
	ASSERT(!exists(p));
	snprintf(p, sizeof(p), "%s/opt/drop/busy/not-ours", root);
	ASSERT(has(p, "admin's"));
	memset(&out, 0, sizeof(out));
	ASSERT_EQ(ims_journal_replay(rootfd, &j, root, &log_capture, &out), 0);
	ASSERT_EQ(out.renamed + out.removed + out.saved, 0);
	snprintf(p, sizeof(p), "%s/etc/drop/modified.conf.rpmsave", root);
	ASSERT(has(p, "changed"));
	ims_journal_clear(&j);
	free(known);
	close(rootfd);
}

/* A journal whose step leads through a symlink, or onto a directory, changes nothing. */
static void test_hostile(void)
{
	struct ims_journal_outcome out;
	struct ims_journal j;
	const char *why;
	char root[256], p[1024];
	int rootfd;

	snprintf(root, sizeof(root), "%s/hostile", base);
	snprintf(p, sizeof(p), "mkdir -p %s/etc %s/outside %s/dir/sub", root, base, root);
	ASSERT(system(p) == 0);
	snprintf(p, sizeof(p), "%s/outside", base);
	ASSERT(symlink(p, strcat(strcpy(p, root), "/escape")) == 0);
	snprintf(p, sizeof(p), "%s/outside/.imastream-tmp-1234-0", base);
	put(p, "evil");
	snprintf(p, sizeof(p), "%s/outside/passwd", base);
	put(p, "outside");
	snprintf(p, sizeof(p), "%s/etc/.imastream-tmp-1234-1", root);
	put(p, "fine");
	rootfd = open(root, O_RDONLY | O_DIRECTORY);
	ASSERT(rootfd >= 0);

	ASSERT_EQ(ims_journal_init(&j, "hostile", 0x1234), 0);
	ASSERT_EQ(ims_journal_add(&j, IMS_JOURNAL_RENAME, "/etc", ".imastream-tmp-1234-1", "a", &why), 0);
	ASSERT_EQ(ims_journal_add(&j, IMS_JOURNAL_RENAME, "/escape", ".imastream-tmp-1234-0", "passwd", &why), 0);
	memset(&out, 0, sizeof(out));
	last_msg[0] = 0;
	ASSERT_EQ(ims_journal_replay(rootfd, &j, root, &log_capture, &out), -EBADMSG);
	ASSERT(strstr(last_msg, "escape: a step of the intent journal"));
	if (!strstr(last_msg, "symlink"))
		fprintf(stderr, "%s\n", last_msg);
	ASSERT(strstr(last_msg, "symlink"));
	ASSERT_EQ(out.renamed, 0);
	snprintf(p, sizeof(p), "%s/outside/passwd", base);
	ASSERT(has(p, "outside"));
	snprintf(p, sizeof(p), "%s/etc/.imastream-tmp-1234-1", root); /* the step before it neither */
	ASSERT(has(p, "fine"));
	ims_journal_clear(&j);

	/* Renaming onto a directory, or removing one. */
	ASSERT_EQ(ims_journal_init(&j, "hostile", 0x1234), 0);
	ASSERT_EQ(ims_journal_add(&j, IMS_JOURNAL_RENAME, "/etc", ".imastream-tmp-1234-1", "a", &why), 0);
	ASSERT_EQ(ims_journal_add(&j, IMS_JOURNAL_REMOVE, "/dir", NULL, "sub", &why), 0);
	last_msg[0] = 0;
	ASSERT_EQ(ims_journal_replay(rootfd, &j, root, &log_capture, &out), -EBADMSG);
	ASSERT(strstr(last_msg, "would remove a directory"));
	snprintf(p, sizeof(p), "%s/etc/.imastream-tmp-1234-1", root);
	ASSERT(has(p, "fine"));
	ims_journal_clear(&j);

	/* Removals through a symlinked component: refused whole, nothing outside touched. */
	for (int kind = IMS_JOURNAL_REMOVE; kind <= IMS_JOURNAL_SAVE; kind++) {
		ASSERT_EQ(ims_journal_init(&j, "hostile", 0x1234), 0);
		ASSERT_EQ(ims_journal_add(&j, IMS_JOURNAL_RENAME, "/etc", ".imastream-tmp-1234-1", "a", &why), 0);
		ASSERT_EQ(ims_journal_add(&j, kind, "/escape", NULL, "passwd", &why), 0);
		last_msg[0] = 0;
		ASSERT_EQ(ims_journal_replay(rootfd, &j, root, &log_capture, &out), -EBADMSG);
		ASSERT(strstr(last_msg, "escape: a step of the intent journal"));
		ASSERT(strstr(last_msg, "symlink"));
		snprintf(p, sizeof(p), "%s/outside/passwd", base);
		ASSERT(has(p, "outside"));
		snprintf(p, sizeof(p), "%s/outside/passwd.rpmsave", base);
		ASSERT(!exists(p));
		snprintf(p, sizeof(p), "%s/etc/.imastream-tmp-1234-1", root);
		ASSERT(has(p, "fine"));
		ims_journal_clear(&j);
	}
	/* Saving over a directory. */
	snprintf(p, sizeof(p), "mkdir -p %s/etc/x.conf.rpmsave && echo x > %s/etc/x.conf", root, root);
	ASSERT(system(p) == 0);
	ASSERT_EQ(ims_journal_init(&j, "hostile", 0x1234), 0);
	ASSERT_EQ(ims_journal_add(&j, IMS_JOURNAL_SAVE, "/etc", NULL, "x.conf", &why), 0);
	last_msg[0] = 0;
	ASSERT_EQ(ims_journal_replay(rootfd, &j, root, &log_capture, &out), -EBADMSG);
	ASSERT(strstr(last_msg, "would rename over a directory"));
	snprintf(p, sizeof(p), "%s/etc/x.conf", root);
	ASSERT(exists(p));
	ims_journal_clear(&j);
	close(rootfd);
}

int main(void)
{
	char cmd[128];

	test_known();
	test_refused();
	ASSERT(mkdtemp(base));
	test_replay();
	test_removals();
	test_hostile();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	ASSERT(system(cmd) == 0);
	return 0;
}
