// SPDX-License-Identifier: LGPL-2.1-or-later
/* Unit tests of the policy plugins' helpers: field escaping, path prefixes, domain syntax. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "plugin/builtin/policy/policy.h"
#include "tests/unit/test.h"

static char last[1024];

static void keep(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	snprintf(last, sizeof(last), "%s", msg);
}

static const struct imastream_log test_log = { .fn = keep };

static void test_escape(void)
{
	char out[64];

	/* Blanks, newlines, '%' and bytes >= 0x7f are encoded; the rest is kept. */
	ASSERT_EQ(ims_escape("a b\nc%d\xff", 8, NULL, out, sizeof(out)), 16);
	ASSERT(strcmp(out, "a%20b%0Ac%25d%FF") == 0);
	/* A NUL inside a name is a byte like any other. */
	ASSERT_EQ(ims_escape("x\0y", 3, NULL, out, sizeof(out)), 5);
	ASSERT(strcmp(out, "x%00y") == 0);
	/* Extra characters (the label separators). */
	ims_escape("u:r,t=s", 7, ",=", out, sizeof(out));
	ASSERT(strcmp(out, "u:r%2Ct%3Ds") == 0);
	/* Truncation never splits an escape and always terminates. */
	ASSERT_EQ(ims_escape("ab c", 4, NULL, out, 5), 2);
	ASSERT(strcmp(out, "ab") == 0);
	ASSERT_EQ(ims_escape("abc", 3, NULL, out, 1), 0);
	ASSERT(out[0] == '\0');
}

static void test_paths(void)
{
	ASSERT(ims_path_under("/boot/vmlinuz", "/boot"));
	ASSERT(ims_path_under("/boot/vmlinuz", "/boot/"));
	ASSERT(ims_path_under("/boot", "/boot"));
	ASSERT(!ims_path_under("/bootx", "/boot"));
	ASSERT(!ims_path_under("/boo", "/boot"));
	ASSERT(ims_path_under("/anything", "/"));
}

static void test_words(void)
{
	const char *p = " a,b\tc ,, ", *w;
	size_t len;
	char got[16] = "";

	while ((w = ims_next_word(&p, &len)))
		strncat(got, w, len);
	ASSERT(strcmp(got, "abc") == 0);
}

static void test_domain_syntax(void)
{
	struct ims_domains *d = NULL;

	ASSERT_EQ(ims_domains_load(NULL, "t", &test_log, &d), 0);
	ASSERT_EQ(ims_domains_count(d), 0);
	ims_domains_free(d);
	ASSERT_EQ(ims_domains_load("vendor", "t", &test_log, &d), -EINVAL);
	ASSERT(strstr(last, "is not NAME=RANK:KEYFILE"));
	ASSERT_EQ(ims_domains_load("vendor=high:/x", "t", &test_log, &d), -EINVAL);
	ASSERT(strstr(last, "rank \"high\""));
	ASSERT_EQ(ims_domains_load("vendor=10:/nonexistent/key.asc", "t", &test_log, &d), -EINVAL);
	ASSERT(strstr(last, "/nonexistent/key.asc is not an armored OpenPGP public key"));
}

/* A file that is armored but not a key is refused by name. */
static void test_not_a_key(void)
{
	char path[] = "/tmp/imastream-notkey.XXXXXX";
	struct ims_domains *d = NULL;
	int fd = mkstemp(path);

	ASSERT(fd >= 0);
	ASSERT(write(fd, "hello\n", 6) == 6);
	close(fd);
	snprintf(last, sizeof(last), "x=1:%s", path);
	ASSERT_EQ(ims_domains_load(last, "t", &test_log, &d), -EINVAL);
	ASSERT(strstr(last, "not an armored OpenPGP public key"));
	ASSERT_EQ(ims_domains_load("", "t", &test_log, &d), 0);
	ims_domains_free(d);
	unlink(path);
}

int main(void)
{
	test_escape();
	test_paths();
	test_words();
	test_domain_syntax();
	test_not_a_key();
	return 0;
}
