// SPDX-License-Identifier: LGPL-2.1-or-later
/* Known-answer tests of the measurement-list parser, the policy writer and reader, and keylime's judging rules. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attest/attest.h"
#include "attest/json_out.h"
#include "tests/unit/test.h"

/* sha256("alpha\n") and sha256("beta\n"), as the kernel would measure those files. */
#define SHA_A "b6a98d9ce9a2d9149288fa3df42d377c3e42737afdcdaf714e33c0a100b51060"
#define SHA_B "f2c82decdd7181cf98945929a62598db7e6b477e11f6e0eb0ae97020eff151ad"
#define ZERO40 "0000000000000000000000000000000000000000"

static char last_msg[512];

static void remember(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

static const struct imastream_log log_to_buf = { remember, NULL };

static int parse(const char *text, struct attest_entry *e, const char **why)
{
	static char line[4096];

	snprintf(line, sizeof(line), "%s", text);
	*why = NULL;
	return attest_parse_line(line, e, why);
}

static void test_parse(void)
{
	struct attest_entry e;
	const char *why;
	unsigned char want[64];

	ASSERT_EQ(parse("10 " ZERO40 " ima-ng sha256:" SHA_A " /usr/bin/a_b", &e, &why), 0);
	ASSERT_EQ(e.pcr, 10);
	ASSERT(!strcmp(e.template, "ima-ng"));
	ASSERT(!strcmp(e.algo, "sha256"));
	ASSERT_EQ(e.digest_len, 32);
	test_unhex(SHA_A, want, sizeof(want));
	ASSERT_MEM_EQ(e.digest, want, 32);
	ASSERT(!strcmp(e.name, "/usr/bin/a_b"));
	ASSERT_EQ(e.sig_len, 0);

	/*
	 * The kernel writes a blank of a name as '_' and every other byte as it is: a blank
	 * after the name is no part of it; a tab, a backslash, UTF-8 and other bytes are.
	 */
	ASSERT_EQ(parse("10 " ZERO40 " ima-ng sha256:" SHA_A " /usr/bin/a b", &e, &why), -EINVAL);
	ASSERT(strstr(why, "'_'"));
	ASSERT_EQ(parse("10 " ZERO40 " ima sha256:" SHA_A " /a b", &e, &why), -EINVAL);
	ASSERT_EQ(parse("10 " ZERO40 " ima-ng sha256:" SHA_A " /a\tb\\c\xc3\xa9\xe9\x7f", &e, &why), 0);
	ASSERT(!strcmp(e.name, "/a\tb\\c\xc3\xa9\xe9\x7f"));
	ASSERT_EQ(parse("10 " ZERO40 " ima-sig sha256:" SHA_A " /a\tb ", &e, &why), 0);
	ASSERT(!strcmp(e.name, "/a\tb"));
	ASSERT_EQ(parse("10 " ZERO40 " ima-sig sha256:" SHA_A " /a b 030204aabbccdd0000", &e, &why),
		  -EINVAL);
	/* ima-sig always has its signature field, if empty (ima_ascii_measurements_show()). */
	ASSERT_EQ(parse("10 " ZERO40 " ima-sig sha256:" SHA_A " /a", &e, &why), -EINVAL);
	ASSERT(strstr(why, "signature field"));

	/* The legacy template: a bare SHA-1. */
	ASSERT_EQ(parse("10 " ZERO40 " ima " ZERO40 " boot_aggregate", &e, &why), 0);
	ASSERT(!strcmp(e.algo, "sha1"));
	ASSERT_EQ(e.digest_len, 20);
	ASSERT(!strcmp(e.name, "boot_aggregate"));

	/* ima-sig with a signature, and without one (the kernel leaves a blank). */
	ASSERT_EQ(parse("10 " ZERO40 " ima-sig sha256:" SHA_A " /a 030204aabbccdd0000", &e, &why), 0);
	ASSERT(!strcmp(e.name, "/a"));
	ASSERT_EQ(e.sig_len, 9);
	ASSERT_EQ(e.sig[0], 3);
	ASSERT_EQ(parse("10 " ZERO40 " ima-sig sha256:" SHA_A " /a ", &e, &why), 0);
	ASSERT(!strcmp(e.name, "/a"));
	ASSERT_EQ(e.sig_len, 0);

	/* ima-buf: the name, then the buffer. */
	ASSERT_EQ(parse("10 " ZERO40 " ima-buf sha256:" SHA_A " .ima 3082", &e, &why), 0);
	ASSERT(!strcmp(e.name, ".ima"));

	/* Other algorithms have their own sizes. */
	ASSERT_EQ(parse("10 " ZERO40 " ima-ng sha1:" ZERO40 " /x", &e, &why), 0);
	ASSERT_EQ(e.digest_len, 20);
	ASSERT_EQ(parse("10 " ZERO40 " ima-ng sha512:" SHA_A " /x", &e, &why), -EINVAL);
	ASSERT(strstr(why, "size"));

	ASSERT_EQ(parse("10 " ZERO40 " ima-ng", &e, &why), -EINVAL);
	ASSERT(!strcmp(why, "fewer than five fields"));
	ASSERT_EQ(parse("24 " ZERO40 " ima-ng sha256:" SHA_A " /x", &e, &why), -EINVAL);
	ASSERT(strstr(why, "PCR"));
	ASSERT_EQ(parse("10 " ZERO40 " ima-modsig sha256:" SHA_A " /x", &e, &why), -EOPNOTSUPP);
	ASSERT_EQ(parse("10 " ZERO40 " ima-ng " SHA_A " /x", &e, &why), -EINVAL);
	ASSERT(strstr(why, "ALGO:"));
	ASSERT_EQ(parse("10 " ZERO40 " ima-ng md7:" SHA_A " /x", &e, &why), -EINVAL);
	ASSERT(strstr(why, "unknown"));
	ASSERT_EQ(parse("10 zz ima-ng sha256:" SHA_A " /x", &e, &why), -EINVAL);
	ASSERT(strstr(why, "template hash"));
	ASSERT_EQ(parse("10 " ZERO40 " ima-ng sha256:" SHA_A, &e, &why), -EINVAL);
	ASSERT(!strcmp(why, "no file name"));
	ASSERT_EQ(parse("10 " ZERO40 " ima-buf sha256:" SHA_A " .ima", &e, &why), -EINVAL);
}

/* Writes @p to a memory file and reads it back. */
static struct attest_policy *roundtrip(const struct attest_policy *p, char **json)
{
	struct attest_policy *back = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int fd[2];

	ASSERT(f && !pipe(fd));
	ASSERT_EQ(attest_policy_write(p, fd[1], &log_to_buf), 0);
	close(fd[1]);
	for (;;) {
		char chunk[4096];
		ssize_t n = read(fd[0], chunk, sizeof(chunk));

		ASSERT(n >= 0);
		if (!n)
			break;
		fwrite(chunk, 1, (size_t)n, f);
	}
	close(fd[0]);
	fclose(f);
	ASSERT_EQ(attest_policy_read(buf, len, "roundtrip", &log_to_buf, &back), 0);
	*json = buf;
	return back;
}

static enum attest_verdict judge(const struct attest_policy *p, const char *line)
{
	struct attest_entry e;
	const char *why;

	ASSERT_EQ(parse(line, &e, &why), 0);
	return attest_judge(p, &e, &why);
}

static void test_policy(void)
{
	struct attest_policy *p, *back;
	unsigned char a[32], b[32];
	const char *why = NULL;
	char *json;

	test_unhex(SHA_A, a, sizeof(a));
	test_unhex(SHA_B, b, sizeof(b));
	ASSERT_EQ(attest_policy_new("sha1", &p), 0);
	ASSERT_EQ(attest_policy_add_digest(p, "/opt/b", b, 32), 0);
	ASSERT_EQ(attest_policy_add_digest(p, "/opt/a", a, 32), 0);
	ASSERT_EQ(attest_policy_add_digest(p, "/opt/a", a, 32), 0); /* kept once */
	ASSERT_EQ(attest_policy_add_digest(p, "/opt/a", b, 32), 0); /* two versions */
	ASSERT_EQ(attest_policy_add_exclude(p, "/tmp/.*", &why), 0);
	ASSERT_EQ(attest_policy_add_exclude(p, "(", &why), -EINVAL);
	ASSERT(why);
	ASSERT_EQ(attest_policy_paths(p), 2);

	back = roundtrip(p, &json);
	/* Paths are sorted, digests in the order added, once each. */
	ASSERT(strstr(json, "\"/opt/a\""));
	ASSERT(strstr(json, "\"/opt/a\"") < strstr(json, "\"/opt/b\""));
	ASSERT(strstr(json, "\"" SHA_A "\"") < strstr(json, "\"" SHA_B "\""));
	ASSERT(strstr(json, "\"version\": 1, \"generator\": 3 }"));
	ASSERT(strstr(json, "\"log_hash_alg\": \"sha1\""));
	ASSERT_EQ(attest_policy_paths(back), 2);

	ASSERT_EQ(judge(back, "10 " ZERO40 " ima-ng sha256:" SHA_A " /opt/a"), ATTEST_MATCH);
	ASSERT_EQ(judge(back, "10 " ZERO40 " ima-ng sha256:" SHA_B " /opt/a"), ATTEST_MATCH);
	ASSERT_EQ(judge(back, "10 " ZERO40 " ima-ng sha256:" SHA_A " /opt/b"), ATTEST_DIGEST_MISMATCH);
	ASSERT_EQ(judge(back, "10 " ZERO40 " ima-ng sha256:" SHA_A " /opt/c"), ATTEST_NOT_IN_POLICY);
	ASSERT_EQ(judge(back, "10 " ZERO40 " ima-ng sha256:" SHA_A " /tmp/x"), ATTEST_EXCLUDED);
	/* Excludes match from the start of the path only. */
	ASSERT_EQ(judge(back, "10 " ZERO40 " ima-ng sha256:" SHA_A " /var/tmp/x"), ATTEST_NOT_IN_POLICY);
	ASSERT_EQ(judge(back, "10 " ZERO40 " ima-ng sha1:" ZERO40 " boot_aggregate"), ATTEST_IGNORED);
	/* A signature proves nothing without verification keys. */
	ASSERT_EQ(judge(back, "10 " ZERO40 " ima-sig sha256:" SHA_B " /opt/b 030204aabbccdd0000"),
		  ATTEST_MATCH);
	ASSERT_EQ(judge(back, "10 " ZERO40 " ima-sig sha256:" SHA_A " /opt/b 030204aabbccdd0000"),
		  ATTEST_DIGEST_MISMATCH);
	attest_policy_free(back);
	free(json);
	attest_policy_free(p);
}

static int read_policy(const char *json)
{
	struct attest_policy *p = NULL;
	int ret;

	last_msg[0] = '\0';
	ret = attest_policy_read(json, strlen(json), "p.json", &log_to_buf, &p);
	attest_policy_free(p);
	return ret;
}

/*
 * A policy keylime's RUNTIME_POLICY_SCHEMA accepts, cut in three: meta, the fields to
 * "ima", and the rest, so that each case below changes one of them.
 */
#define META "{\"meta\":{\"version\":1,\"generator\":3},\"release\":0,"
#define BODY "\"digests\":{\"/a\":[\"" SHA_A "\"]},\"excludes\":[],\"keyrings\":{},"
#define IMA "\"ima\":{\"ignored_keyrings\":[],\"log_hash_alg\":\"sha1\",\"dm_policy\":null},"
#define TAIL "\"ima-buf\":{},\"verification-keys\":\"\"}"

/* A keyring as keylime writes one into verification-keys (a JSON document in a string). */
#define KEYS(ring) "\"ima-buf\":{},\"verification-keys\":\"" ring "\"}"

static void refused(const char *json, const char *says)
{
	int ret = read_policy(json);

	if (ret != -EINVAL || !strstr(last_msg, says) || !strstr(last_msg, "p.json"))
		fprintf(stderr, "%s\n  returned %d, said: %s\n  wanted: %s\n", json, ret, last_msg, says);
	ASSERT_EQ(ret, -EINVAL);
	ASSERT(strstr(last_msg, says));
}

/* Each rule of keylime's schema, refused as keylime refuses it; what it allows, read. */
static void test_policy_read_errors(void)
{
	ASSERT_EQ(read_policy(META BODY IMA TAIL), 0);
	/* A number without a fraction is an integer to JSON Schema; meta.timestamp may be. */
	ASSERT_EQ(read_policy("{\"meta\":{\"version\":1.0,\"generator\":0,\"timestamp\":\"now\"},"
			      "\"release\":7," BODY IMA TAIL), 0);
	ASSERT_EQ(read_policy(META BODY "\"ima\":{\"ignored_keyrings\":[\"*\"],\"log_hash_alg\":\"sha512\","
			      "\"dm_policy\":null}," TAIL), 0);
	refused("not json", "not JSON");
	refused(META BODY IMA TAIL " x", "data after the document");
	refused("[]", "not a JSON object");
	refused("{\"meta\":{}}", "meta.version");
	refused("{\"meta\":{\"version\":2,\"generator\":3},\"release\":0," BODY IMA TAIL, "version 2");
	refused("{\"meta\":{\"version\":1.5,\"generator\":3},\"release\":0," BODY IMA TAIL, "meta.version");
	/* meta.generator: keylime requires it, an integer from 0 to 3. */
	refused("{\"meta\":{\"version\":1},\"release\":0," BODY IMA TAIL, "meta.generator");
	refused("{\"meta\":{\"version\":1,\"generator\":4},\"release\":0," BODY IMA TAIL, "meta.generator");
	refused("{\"meta\":{\"version\":1,\"generator\":-1},\"release\":0," BODY IMA TAIL, "meta.generator");
	refused("{\"meta\":{\"version\":1,\"generator\":true},\"release\":0," BODY IMA TAIL, "meta.generator");
	refused("{\"meta\":{\"version\":1,\"generator\":\"3\"},\"release\":0," BODY IMA TAIL, "meta.generator");
	refused("{\"meta\":{\"version\":1,\"generator\":3,\"timestamp\":1},\"release\":0," BODY IMA TAIL,
		"meta.timestamp");
	refused("{\"meta\":{\"version\":1,\"generator\":3}," BODY IMA TAIL, "\"release\"");
	refused("{\"meta\":{\"version\":1,\"generator\":3},\"release\":-1," BODY IMA TAIL, "\"release\"");
	/* digests, keyrings, ima-buf: lists of at least one lowercase hex digest. */
	refused(META "\"digests\":[],\"excludes\":[],\"keyrings\":{}," IMA TAIL, "\"digests\"");
	refused(META "\"digests\":{\"/a\":[]},\"excludes\":[],\"keyrings\":{}," IMA TAIL,
		"digests of /a: not a list of at least one digest");
	refused(META "\"digests\":{\"/a\":\"" SHA_A "\"},\"excludes\":[],\"keyrings\":{}," IMA TAIL,
		"digests of /a");
	refused(META "\"digests\":{\"/a\":[\"xyz\"]},\"excludes\":[],\"keyrings\":{}," IMA TAIL,
		"\"xyz\" is not 40 to 128 lowercase hex digits");
	refused(META "\"digests\":{\"/a\":[\"B6A98D9CE9A2D9149288FA3DF42D377C3E42737A\"]},\"excludes\":[],"
		"\"keyrings\":{}," IMA TAIL, "lowercase");
	refused(META "\"digests\":{\"/a\":[\"" SHA_A SHA_A SHA_A "\"]},\"excludes\":[],\"keyrings\":{},"
		IMA TAIL, "40 to 128");
	refused(META "\"digests\":{},\"excludes\":[],\"keyrings\":{\".ima\":[\"01\"]}," IMA TAIL,
		"keyrings of .ima");
	refused(META BODY IMA "\"ima-buf\":{\"dm_table_load\":[]},\"verification-keys\":\"\"}",
		"ima-buf of dm_table_load");
	refused(META "\"digests\":{},\"excludes\":[1],\"keyrings\":{}," IMA TAIL, "\"excludes\"");
	refused(META "\"digests\":{},\"excludes\":[\"(\"],\"keyrings\":{}," IMA TAIL, "exclude \"(\"");
	/* ima: the three fields, log_hash_alg one of keylime's four, dm_policy null. */
	refused(META BODY TAIL, "\"ima\"");
	refused(META BODY "\"ima\":{\"ignored_keyrings\":[],\"log_hash_alg\":\"md5\",\"dm_policy\":null},"
		TAIL, "log_hash_alg \"md5\"");
	refused(META BODY "\"ima\":{\"ignored_keyrings\":[],\"log_hash_alg\":\"sha224\",\"dm_policy\":null},"
		TAIL, "sha384");
	refused(META BODY "\"ima\":{\"ignored_keyrings\":[],\"log_hash_alg\":\"sha1\"}," TAIL,
		"ima.dm_policy");
	refused(META BODY "\"ima\":{\"ignored_keyrings\":[],\"log_hash_alg\":\"sha1\",\"dm_policy\":{}},"
		TAIL, "ima.dm_policy");
	refused(META BODY "\"ima\":{\"log_hash_alg\":\"sha1\",\"dm_policy\":null}," TAIL,
		"ima.ignored_keyrings");
	refused(META BODY IMA "\"ima-buf\":{}}", "verification-keys");
	refused(META BODY IMA "\"ima-buf\":{},\"verification-keys\":[]}", "verification-keys");
	/* verification-keys: keylime's IMA_KEYRING_JSON_SCHEMA, keyids and pubkeys required. */
	ASSERT_EQ(read_policy(META BODY IMA KEYS("{\\\"keyids\\\":[],\\\"pubkeys\\\":[]}")), 0);
	ASSERT_EQ(read_policy(META BODY IMA KEYS("{\\\"meta\\\":{\\\"version\\\":1},\\\"keyids\\\":[],"
						  "\\\"pubkeys\\\":[]}")), 0);
	refused(META BODY IMA KEYS("{\\\"pubkeys\\\":[]}"), "\"keyids\"");
	refused(META BODY IMA KEYS("{\\\"keyids\\\":[]}"), "\"pubkeys\"");
	refused(META BODY IMA KEYS("{\\\"keyids\\\":[\\\"1\\\"],\\\"pubkeys\\\":[]}"), "integers");
	refused(META BODY IMA KEYS("{\\\"keyids\\\":[],\\\"pubkeys\\\":[1]}"), "strings");
	refused(META BODY IMA KEYS("{\\\"meta\\\":{\\\"version\\\":0},\\\"keyids\\\":[],\\\"pubkeys\\\":[]}"),
		"meta.version");
	refused(META BODY IMA KEYS("{\\\"meta\\\":{},\\\"keyids\\\":[],\\\"pubkeys\\\":[]}"), "meta.version");
	/* A map of keyring name to keyring, as some older tools wrote: keylime refuses it now. */
	refused(META BODY IMA KEYS("{\\\"tenant\\\":\\\"{}\\\"}"), "\"keyids\"");
	refused(META BODY IMA KEYS("\\\"{}\\\""), "not a JSON object");
	refused(META BODY IMA KEYS("{\\\"keyids\\\":[],\\\"pubkeys\\\":[]} x"), "not a JSON object");
}

/* What keylime's verifier would make of a policy, said as a warning when it is read. */
static void test_policy_read_warnings(void)
{
	ASSERT_EQ(read_policy(META BODY IMA TAIL), 0);
	ASSERT_EQ(last_msg[0], '\0');
	ASSERT_EQ(read_policy("{\"meta\":{\"version\":1,\"generator\":1},\"release\":0," BODY IMA TAIL), 0);
	ASSERT(strstr(last_msg, "meta.generator 1"));
	ASSERT_EQ(read_policy(META "\"digests\":{\"/a b\":[\"" SHA_A "\"],\"/c d\":[\"" SHA_A "\"]},"
			      "\"excludes\":[],\"keyrings\":{}," IMA TAIL), 0);
	ASSERT(strstr(last_msg, "2 path(s) hold a blank"));
	ASSERT(strstr(last_msg, "\"/a b\""));
}

/* @len bytes of @s through json_out_str, as text (a memory file is not a descriptor: a pipe). */
static char *escaped(const char *s, size_t len)
{
	static char out[512];
	struct json_out *o = malloc(sizeof(*o));
	int fd[2];
	ssize_t n;

	ASSERT(o && !pipe(fd));
	json_out_init(o, fd[1]);
	json_out_str(o, s, len);
	ASSERT_EQ(json_out_flush(o), 0);
	close(fd[1]);
	n = read(fd[0], out, sizeof(out) - 1);
	ASSERT(n >= 0);
	out[n] = '\0';
	close(fd[0]);
	free(o);
	return out;
}

#define ESCAPES(lit, want) ASSERT(!strcmp(escaped(lit, sizeof(lit) - 1), want))

/* RFC 8259, section 7: what must be escaped, and nothing more. */
static void test_json_escape(void)
{
	ESCAPES("/usr/bin/a b", "\"/usr/bin/a b\""); /* no escape of '/' */
	ESCAPES("q\"b\\", "\"q\\\"b\\\\\"");
	ESCAPES("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
	ESCAPES("\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\""); /* DEL needs no escape */
	ESCAPES("a\0b", "\"a\\u0000b\"");
	/* Well-formed UTF-8 as it is: é, €, U+10FFFF. */
	ESCAPES("\xc3\xa9\xe2\x82\xac\xf4\x8f\xbf\xbf", "\"\xc3\xa9\xe2\x82\xac\xf4\x8f\xbf\xbf\"");
	/* Not UTF-8: a lone continuation byte, Latin-1 é, an overlong '/', a surrogate,
	 * above U+10FFFF, a sequence cut short: U+FFFD per bad byte. */
	ESCAPES("\x80", "\"\\ufffd\"");
	ESCAPES("caf\xe9", "\"caf\\ufffd\"");
	ESCAPES("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	ESCAPES("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	ESCAPES("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	ESCAPES("\xe2\x82", "\"\\ufffd\\ufffd\"");
	ASSERT(json_utf8_valid("\xc3\xa9", 2));
	ASSERT(!json_utf8_valid("\xc3", 1));
	ASSERT(!json_utf8_valid("\xed\xbf\xbf", 3));
}

/*
 * Each path is listed as the kernel logs it: a blank as '_', every other byte as it is
 * (JSON escapes what it must); a log line of that name matches.
 */
static void test_policy_kernel_names(void)
{
	static const struct {
		const char *path, *json, *logged;
	} names[] = {
		{ "/opt/a b", "\"/opt/a_b\"", "/opt/a_b" },
		{ "/opt/ lead and trail ", "\"/opt/_lead_and_trail_\"", "/opt/_lead_and_trail_" },
		{ "/opt/tab\tvt\vcr\rff\f", "\"/opt/tab\\tvt\\u000bcr\\rff\\f\"", "/opt/tab\tvt\vcr\rff\f" },
		{ "/opt/back\\slash", "\"/opt/back\\\\slash\"", "/opt/back\\slash" },
		{ "/opt/caf\xc3\xa9 \xe2\x82\xac", "\"/opt/caf\xc3\xa9_\xe2\x82\xac\"", "/opt/caf\xc3\xa9_\xe2\x82\xac" },
		{ "/opt/under_score", "\"/opt/under_score\"", "/opt/under_score" },
	};
	struct attest_policy *p, *back;
	unsigned char a[32];
	char line[256], *json;

	test_unhex(SHA_A, a, sizeof(a));
	ASSERT_EQ(attest_policy_new("sha1", &p), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ASSERT_EQ(attest_policy_add_digest(p, names[i].path, a, 32), 0);
	back = roundtrip(p, &json);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ASSERT(strstr(json, names[i].json));
		snprintf(line, sizeof(line), "10 " ZERO40 " ima-ng sha256:" SHA_A " %s", names[i].logged);
		ASSERT_EQ(judge(back, line), ATTEST_MATCH);
	}
	ASSERT(!strstr(json, "a b"));
	attest_policy_free(back);
	free(json);
	attest_policy_free(p);
}

/* A path JSON cannot spell is refused, not written as a file Python's json rejects. */
static void test_policy_not_utf8(void)
{
	struct attest_policy *p;
	unsigned char a[32] = { 0 };

	ASSERT_EQ(attest_policy_new("sha1", &p), 0);
	ASSERT_EQ(attest_policy_add_digest(p, "/opt/caf\xe9", a, 32), -EILSEQ);
	ASSERT_EQ(attest_policy_add_digest(p, "/opt/caf\xc3\xa9\n", a, 32), 0);
	ASSERT_EQ(attest_policy_paths(p), 1);
	attest_policy_free(p);
}

int main(void)
{
	test_parse();
	test_policy();
	test_json_escape();
	test_policy_not_utf8();
	test_policy_kernel_names();
	test_policy_read_errors();
	test_policy_read_warnings();
	printf("PASS\n");
	return 0;
}
