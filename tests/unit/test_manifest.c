// SPDX-License-Identifier: LGPL-2.1-or-later
/* Digest manifests and signatures files: known ones parse to known values and write back byte for byte; every malformed form is refused with one line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "signpkg/manifest.h"
#include "tests/unit/test.h"

static char last_msg[512];
static int n_msgs;

static void record_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
	n_msgs++;
}

static const struct imastream_log test_log = { record_log, NULL };

#define HDR "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define D256 "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
#define D1 "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"

static const char good[] =
	"imastream-digests 1\n"
	"package hello-2:1.0-1.fc40.x86_64 " HDR "\n"
	"file sha256 " D256 " /usr/bin/hello\n"
	"file sha1 " D1 " /etc/a%20b%25c%0A%C3%A9\n"
	"end 2\n"
	"package empty-1-1.noarch " D256 "\n"
	"end 0\n";

static int test_known_answer(void)
{
	struct manifest m;
	unsigned char want[32];
	char *text = NULL;
	size_t text_len = 0;
	FILE *out;

	ASSERT_EQ(manifest_parse(good, strlen(good), &test_log, &m), 0);
	ASSERT_EQ(m.n_pkgs, 2);
	ASSERT(!strcmp(m.pkgs[0].nevra, "hello-2:1.0-1.fc40.x86_64"));
	test_unhex(HDR, want, sizeof(want));
	ASSERT_MEM_EQ(m.pkgs[0].header_sha256, want, 32);
	ASSERT_EQ(m.pkgs[0].n_files, 2);
	ASSERT(!strcmp(m.pkgs[0].files[0].algo->name, "sha256"));
	test_unhex(D256, want, sizeof(want));
	ASSERT_MEM_EQ(m.pkgs[0].files[0].digest, want, 32);
	ASSERT(!strcmp(m.pkgs[0].files[0].path, "/usr/bin/hello"));
	ASSERT_EQ(m.pkgs[0].files[1].algo->digest_size, 20);
	/* %20 a space, %25 the percent sign, %0A a newline, %C3%A9 an UTF-8 e-acute. */
	ASSERT(!strcmp(m.pkgs[0].files[1].path, "/etc/a b%c\n\xc3\xa9"));
	ASSERT_EQ(m.pkgs[1].n_files, 0);

	/* One way to write it: the writer gives back the very bytes. */
	out = open_memstream(&text, &text_len);
	ASSERT(out);
	ASSERT_EQ(manifest_write_start(out), 0);
	for (size_t i = 0; i < m.n_pkgs; i++)
		ASSERT_EQ(manifest_write_pkg(out, &m.pkgs[i]), 0);
	fclose(out);
	ASSERT_EQ(text_len, strlen(good));
	ASSERT(!memcmp(text, good, text_len));
	free(text);
	manifest_free(&m);
	return 0;
}

/* The @len bytes at @text must be refused with @err and one line containing @needle. */
static int refused_len(const char *text, size_t len, int err, const char *needle)
{
	struct manifest m;
	int got;

	n_msgs = 0;
	last_msg[0] = 0;
	got = manifest_parse(text, len, &test_log, &m);
	if (got != err || n_msgs != 1 || !strstr(last_msg, needle) || m.n_pkgs || m.pkgs) {
		fprintf(stderr, "  manifest %.60s...: %d, %d lines, '%s' (expected %d, '%s')\n", text,
			got, n_msgs, last_msg, err, needle);
		return 1;
	}
	return 0;
}

static int refused(const char *text, int err, const char *needle)
{
	return refused_len(text, strlen(text), err, needle);
}

#define MAGIC "imastream-digests 1\n"
#define PKG "package p-1-1.noarch " HDR "\n"

static int test_refusals(void)
{
	int bad = 0;

	bad += refused("", -EINVAL, "empty");
	bad += refused("imastream-digests 2\n", -EINVAL, "line 1: not a digest manifest");
	bad += refused(MAGIC PKG "end 0", -EINVAL, "line 3: the last line does not end");
	bad += refused(MAGIC PKG "end 0\r\n", -EINVAL, "line 3: an end line needs");
	bad += refused(MAGIC "\n", -EINVAL, "line 2: not a package");
	bad += refused(MAGIC PKG, -EINVAL, "the last package has no end line");
	bad += refused(MAGIC PKG PKG, -EINVAL, "line 3: a package starts before");
	bad += refused(MAGIC "file sha256 " D256 " /a\n", -EINVAL, "line 2: a file line outside");
	bad += refused(MAGIC "end 0\n", -EINVAL, "an end line outside");
	bad += refused(MAGIC "package p/1 " HDR "\nend 0\n", -EINVAL, "NEVRA byte");
	bad += refused(MAGIC "package p-1-1 " D1 "\nend 0\n", -EINVAL, "header's SHA-256");
	bad += refused(MAGIC "package p-1-1 " HDR " x\nend 0\n", -EINVAL, "fields after");
	bad += refused(MAGIC "package  p-1-1 " HDR "\nend 0\n", -EINVAL, "NEVRA of 1 to 255");
	bad += refused(MAGIC PKG "file SHA256 " D256 " /a\nend 1\n", -EINVAL, "unknown hash");
	bad += refused(MAGIC PKG "file sha256 " D1 " /a\nend 1\n", -EINVAL, "algorithm's size");
	bad += refused(MAGIC PKG "file sha1 " "AAF4C61DDCC5E8A2DABEDE0F3B482CD9AEA9434D /a\nend 1\n",
		       -EINVAL, "lowercase hex");
	bad += refused(MAGIC PKG "file sha256 " D256 " a\nend 1\n", -EINVAL, "not absolute");
	bad += refused(MAGIC PKG "file sha256 " D256 " /a b\nend 1\n", -EINVAL, "one path");
	bad += refused(MAGIC PKG "file sha256 " D256 " /a \nend 1\n", -EINVAL, "one path");
	bad += refused(MAGIC PKG "file sha256 " D256 " /a%41\nend 1\n", -EINVAL, "written as it is");
	bad += refused(MAGIC PKG "file sha256 " D256 " /a%0a\nend 1\n", -EINVAL, "uppercase hex");
	bad += refused(MAGIC PKG "file sha256 " D256 " /a%00\nend 1\n", -EINVAL, "NUL byte");
	bad += refused(MAGIC PKG "file sha256 " D256 " /a%2\nend 1\n", -EINVAL, "truncated");
	bad += refused(MAGIC PKG "file sha256 " D256 " /a\xff\nend 1\n", -EINVAL, "must be written %HH");
	bad += refused(MAGIC PKG "file sha256 " D256 " /a\nend 2\n", -EINVAL, "count is not");
	bad += refused(MAGIC PKG "file sha256 " D256 " /a\nend 01\n", -EINVAL, "in decimal");
	bad += refused(MAGIC PKG "end -0\n", -EINVAL, "in decimal");
	bad += refused(MAGIC PKG "end 99999999\n", -EINVAL, "in decimal");
	/* What an import would refuse later is refused here, naming the line. */
	bad += refused(MAGIC PKG "file sha256 " D256 " /opt/../../etc/shadow\nend 1\n", -EINVAL,
		       "line 3: a path with an empty, \".\" or \"..\" component");
	bad += refused(MAGIC PKG "file sha256 " D256 " /opt/./a\nend 1\n", -EINVAL,
		       "line 3: a path with");
	bad += refused(MAGIC PKG "file sha256 " D256 " /opt//a\nend 1\n", -EINVAL,
		       "line 3: a path with");
	bad += refused(MAGIC PKG "file sha256 " D256 " /opt/a/\nend 1\n", -EINVAL,
		       "line 3: a path with");
	bad += refused(MAGIC PKG "file sha256 " D256 " /\nend 1\n", -EINVAL, "line 3: a path with");
	bad += refused(MAGIC PKG "file sha256 " D256 " /opt/..\nend 1\n", -EINVAL,
		       "line 3: a path with");
	bad += refused(MAGIC PKG "file sha256 " D256 " /a\nfile sha256 " D256
				 " /b\nfile sha256 " D256 " /a\nend 3\n",
		       -EINVAL, "line 5: a second line for the path of line 3 in this package");
	bad += refused(MAGIC PKG "end 0\npackage q-1-1.noarch " HDR "\nend 0\n", -EINVAL,
		       "line 4: a second block for the package header of line 2 (q-1-1.noarch)");
	/* A NUL anywhere (the fuzzer found two: in a NEVRA, in an algorithm name). */
	{
		static const char nul_nevra[] = MAGIC "package p\0-1-1 " HDR "\nend 0\n";
		static const char nul_algo[] = MAGIC PKG "file sha256\0 " D256 " /a\nend 1\n";
		static const char nul_magic[] = "imastream-digests 1\0\n";

		bad += refused_len(nul_nevra, sizeof(nul_nevra) - 1, -EINVAL, "line 2: a NUL byte");
		bad += refused_len(nul_algo, sizeof(nul_algo) - 1, -EINVAL, "line 3: a NUL byte");
		bad += refused_len(nul_magic, sizeof(nul_magic) - 1, -EINVAL, "line 1: a NUL byte");
	}
	return bad;
}

/* The limits: a line, a path and a whole manifest over them are -E2BIG or -EINVAL, quickly. */
static int test_limits(void)
{
	size_t n = 20000;
	char *text = malloc(n + 512);
	int bad = 0;

	ASSERT(text);
	/* A line of 20000 bytes. */
	strcpy(text, MAGIC PKG "file sha256 " D256 " /");
	memset(text + strlen(text), 'a', n);
	strcpy(text + strlen(MAGIC PKG "file sha256 " D256 " /") + n, "\nend 1\n");
	bad += refused(text, -E2BIG, "line 3: a line longer than 16384");
	/* A path of 4097 bytes, within the line limit. */
	strcpy(text, MAGIC PKG "file sha256 " D256 " /");
	memset(text + strlen(text), 'a', 4096);
	strcpy(text + strlen(MAGIC PKG "file sha256 " D256 " /") + 4096, "\nend 1\n");
	bad += refused(text, -EINVAL, "longer than 4096");
	free(text);
	ASSERT_EQ(manifest_parse("x", (size_t)MANIFEST_MAX_BYTES + 1, &test_log,
				 &(struct manifest){ 0 }), -E2BIG);
	return bad;
}

/*
 * A signatures file: the value is a signature v2 header (03 02, sha256 = kernel id 4,
 * key id 11223344, size 3) and three bytes; the parser checks form, not cryptography.
 */
#define VAL "030204112233440003aabbcc"
#define SMAGIC "imastream-signatures 1\n"

static const char good_sigs[] =
	SMAGIC
	"package hello-2:1.0-1.fc40.x86_64 " HDR "\n"
	"sig sha256 " D256 " " VAL " /usr/bin/a%20b\n"
	"end 1\n";

static int test_signatures_known_answer(void)
{
	static const unsigned char want[] = { 0x03, 0x02, 0x04, 0x11, 0x22, 0x33, 0x44, 0x00, 0x03,
					      0xaa, 0xbb, 0xcc };
	struct manifest m;
	char *text = NULL;
	size_t text_len = 0;
	FILE *out;

	ASSERT_EQ(signatures_parse(good_sigs, strlen(good_sigs), &test_log, &m), 0);
	ASSERT_EQ(m.kind, MANIFEST_SIGNATURES);
	ASSERT_EQ(m.n_pkgs, 1);
	ASSERT_EQ(m.pkgs[0].n_files, 1);
	ASSERT(!strcmp(m.pkgs[0].files[0].path, "/usr/bin/a b"));
	ASSERT_EQ(m.pkgs[0].files[0].value_len, sizeof(want));
	ASSERT_MEM_EQ(m.pkgs[0].files[0].value, want, sizeof(want));
	out = open_memstream(&text, &text_len);
	ASSERT(out);
	ASSERT_EQ(signatures_write_start(out), 0);
	ASSERT_EQ(signatures_write_pkg(out, &m.pkgs[0]), 0);
	fclose(out);
	ASSERT_EQ(text_len, strlen(good_sigs));
	ASSERT(!memcmp(text, good_sigs, text_len));
	free(text);
	/* A manifest's writer refuses nothing here, but the signatures writer needs values. */
	free(m.pkgs[0].files[0].value);
	m.pkgs[0].files[0].value = NULL;
	out = open_memstream(&text, &text_len);
	ASSERT(out);
	ASSERT_EQ(signatures_write_pkg(out, &m.pkgs[0]), -EINVAL);
	fclose(out);
	ASSERT_EQ(text_len, 0);
	free(text);
	manifest_free(&m);
	/* Neither kind is the other. */
	ASSERT_EQ(manifest_parse(good_sigs, strlen(good_sigs), NULL, &m), -EINVAL);
	ASSERT_EQ(signatures_parse(good, strlen(good), NULL, &m), -EINVAL);
	return 0;
}

static int sigs_refused(const char *text, int err, const char *needle)
{
	struct manifest m;
	int got;

	n_msgs = 0;
	last_msg[0] = 0;
	got = signatures_parse(text, strlen(text), &test_log, &m);
	if (got != err || n_msgs != 1 || !strstr(last_msg, needle) || m.n_pkgs || m.pkgs) {
		fprintf(stderr, "  signatures %.60s...: %d, %d lines, '%s' (expected %d, '%s')\n",
			text, got, n_msgs, last_msg, err, needle);
		return 1;
	}
	return 0;
}

#define SIG "sig sha256 " D256 " "

static int test_signatures_refusals(void)
{
	char *text;
	int bad = 0;

	bad += sigs_refused(MAGIC PKG "end 0\n", -EINVAL, "signatures file, line 1: not a signatures file");
	bad += sigs_refused(SMAGIC PKG "file sha256 " D256 " /a\nend 1\n", -EINVAL, "line 3: not a package, sig or end");
	bad += sigs_refused(SMAGIC PKG SIG "/a\nend 1\n", -EINVAL, "10 to 2057 bytes");
	bad += sigs_refused(SMAGIC PKG SIG VAL "\nend 1\n", -EINVAL, "one path after the signature");
	bad += sigs_refused(
		SMAGIC PKG "end 0\n" PKG "end 0\n", -EINVAL,
		"signatures file, line 4: a second block for the package header of line 2");
	bad += sigs_refused(SMAGIC PKG SIG VAL "0 /a\nend 1\n", -EINVAL, "10 to 2057 bytes");
	bad += sigs_refused(SMAGIC PKG SIG "030204112233440003AABBCC /a\nend 1\n", -EINVAL, "lowercase hex");
	/* The header's size says 4, three bytes follow. */
	bad += sigs_refused(SMAGIC PKG SIG "030204112233440004aabbcc /a\nend 1\n", -EINVAL, "not an IMA signature");
	/* A digest value (04 algo digest), an EVM portable signature (05): not IMA signatures. */
	bad += sigs_refused(SMAGIC PKG SIG "0404" D256 " /a\nend 1\n", -EINVAL, "not an IMA signature");
	bad += sigs_refused(SMAGIC PKG SIG "050204112233440003aabbcc /a\nend 1\n", -EINVAL, "not an IMA signature");
	/* Signed over sha1 (kernel id 2), on a sha256 line. */
	bad += sigs_refused(SMAGIC PKG SIG "030202112233440003aabbcc /a\nend 1\n", -EINVAL, "another hash algorithm");
	/* Longest value + 1. */
	text = malloc(2 * (SIGNATURES_MAX_VALUE + 1) + 512);
	ASSERT(text);
	strcpy(text, SMAGIC PKG SIG);
	memset(text + strlen(text), 'a', 2 * (SIGNATURES_MAX_VALUE + 1));
	strcpy(text + strlen(SMAGIC PKG SIG) + 2 * (SIGNATURES_MAX_VALUE + 1), " /a\nend 1\n");
	bad += sigs_refused(text, -EINVAL, "10 to 2057 bytes");
	free(text);
	/* A line of 20481 bytes. */
	text = malloc(21000);
	ASSERT(text);
	strcpy(text, SMAGIC PKG SIG VAL " /");
	memset(text + strlen(text), 'a', 20481);
	strcpy(text + strlen(SMAGIC PKG SIG VAL " /") + 20481, "\nend 1\n");
	bad += sigs_refused(text, -E2BIG, "line 3: a line longer than 20480");
	free(text);
	return bad;
}

int main(void)
{
	int failed = 0;

	failed += test_known_answer();
	failed += test_refusals();
	failed += test_limits();
	failed += test_signatures_known_answer();
	failed += test_signatures_refusals();
	printf("%s: test_manifest\n", failed ? "FAIL" : "PASS");
	return failed ? 1 : 0;
}
