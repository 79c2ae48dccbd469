// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Drives the chain through a fake transaction (a failing pre hook, a failing file, a
 * failing init) with trace plugins around a test plugin, and compares the transcript with
 * tests/golden/chain.trace: posts run for every pre that ran, cleanup is reversed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "imastream/chain.h"
#include "tests/unit/test.h"

static char transcript[600];
static char workdir[256];

/* Appends one line to the transcript, as the trace plugins do. */
static void say(const char *fmt, ...)
{
	FILE *f = fopen(transcript, "a");
	va_list ap;

	ASSERT(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static void log_to_transcript(void *arg, int level, const char *msg)
{
	(void)arg;
	/* Paths under the scratch directory differ per run. */
	const char *p = strstr(msg, workdir);

	if (p)
		say("log %d: %.*sWORK%s", level, (int)(p - msg), msg, p + strlen(workdir));
	else
		say("log %d: %s", level, msg);
}

/* ---- the test plugin: a labeller that vetoes some things ---- */

static int veto_init(struct imastream_init_args *args, void **state_ret)
{
	say("%s: init", args->name);
	/* Two digests: the chain computes both in one pass, whatever the source. */
	args->hash_algos |= IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256) |
			    IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA512);
	*state_ret = (void *)args->name;
	return 0;
}

static void veto_cleanup(void *state)
{
	say("%s: cleanup", (const char *)state);
}

static int veto_tsm_pre(void *state, const struct imastream_txn *txn)
{
	(void)txn;
	say("%s: tsm_pre", (const char *)state);
	return 0;
}

static void veto_tsm_post(void *state, const struct imastream_txn *txn, int res)
{
	(void)txn;
	say("%s: tsm_post res=%d", (const char *)state, res);
}

static int veto_psm_pre(void *state, const struct imastream_pkg *pkg)
{
	int err = strncmp(pkg->nevra, "bad", 3) == 0 ? -EPERM : 0;

	say("%s: psm_pre pkg=%s -> %d", (const char *)state, pkg->nevra, err);
	return err;
}

static void veto_psm_post(void *state, const struct imastream_pkg *pkg, int res)
{
	say("%s: psm_post pkg=%s res=%d", (const char *)state, pkg->nevra, res);
}

static int veto_file_closed(void *state, struct imastream_file *f)
{
	static const char label[] = "system_u:object_r:test_t:s0";
	int err;

	if (strstr(f->dest, "fail")) {
		say("%s: file_closed %s -> %d", (const char *)state, f->dest, -EACCES);
		return -EACCES;
	}
	err = imastream_file_set_xattr(f, "security.selinux", label, sizeof(label));
	say("%s: file_closed %s set label -> %d", (const char *)state, f->dest, err);
	for (int algo = IMASTREAM_HASH_SHA256; !err && algo <= IMASTREAM_HASH_SHA512; algo += 2) {
		const uint8_t *d;
		const char *how;
		char hex[2 * IMASTREAM_HASH_MAX_DIGEST + 1];
		size_t len;

		err = imastream_file_digest(f, algo, &d, &len, &how);
		if (err)
			break;
		for (size_t i = 0; i < len; i++)
			snprintf(hex + 2 * i, 3, "%02x", d[i]);
		say("%s: digest %d via %s: %s", (const char *)state, algo, how, hex);
	}
	ASSERT_EQ(imastream_file_digest(f, IMASTREAM_HASH_SHA1, &(const uint8_t *){ NULL }, NULL,
					NULL), -EINVAL);
	return err;
}

static void veto_file_done(void *state, struct imastream_file *f, int res)
{
	say("%s: file_done %s res=%d", (const char *)state, f->dest, res);
}

static const struct imastream_plugin_ops veto_ops = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "veto",
	.rank = IMASTREAM_RANK_LABELS,
	.init = veto_init,
	.cleanup = veto_cleanup,
	.tsm_pre = veto_tsm_pre,
	.tsm_post = veto_tsm_post,
	.psm_pre = veto_psm_pre,
	.psm_post = veto_psm_post,
	.file_closed = veto_file_closed,
	.file_done = veto_file_done,
};

static int failing_init(struct imastream_init_args *args, void **state_ret)
{
	(void)state_ret;
	say("%s: init -> %d", args->name, -ENOKEY);
	return -ENOKEY;
}

static const struct imastream_plugin_ops failing_ops = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "nokey",
	.rank = IMASTREAM_RANK_EVM,
	.init = failing_init,
	.cleanup = veto_cleanup,
};

static struct imastream_plugin_ops trace_named(const char *name)
{
	struct imastream_plugin_ops ops = *imastream_plugin_lookup("trace");

	ops.name = name;
	return ops;
}

/* One file through the chain, as a driver does it. */
enum { VIA_REREAD, VIA_STREAM, VIA_HEADER };

static int run_file(struct imastream_chain *chain, const struct imastream_pkg *pkg,
		    const char *base, int via)
{
	char path[600], dest[512];
	struct imastream_file f = { .size = sizeof(f) };
	int err;

	/* Relative names: the test runs inside its scratch directory. */
	snprintf(dest, sizeof(dest), "%s", base);
	snprintf(path, sizeof(path), "%s;0a1b2c3d", base);
	f.path = path;
	f.dest = dest;
	f.fd = -1;
	f.mode = S_IFREG | 0644;
	f.pkg = pkg;
	f.flags = strstr(base, "conf") ? IMASTREAM_FILE_CONFIG : 0;
	err = imastream_chain_file_opened(chain, &f);
	if (!err) {
		f.fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0200);
		ASSERT(f.fd >= 0);
		ASSERT_EQ(write(f.fd, "hello\n", 6), 6);
		f.content_size = 6;
		if (via == VIA_STREAM) {
			err = imastream_chain_file_updated(chain, &f, "hel", 3);
			if (!err)
				err = imastream_chain_file_updated(chain, &f, "lo\n", 3);
		}
		if (via == VIA_HEADER) {
			/* A driver-verified digest (deliberately not the content's, to tell). */
			f.known_algo = IMASTREAM_HASH_SHA256;
			f.known_len = 32;
			memset(f.known_digest, 0xab, 32);
		}
	}
	if (!err)
		err = imastream_chain_file_closed(chain, &f);
	if (f.fd >= 0)
		close(f.fd);
	if (!err)
		ASSERT_EQ(rename(path, dest), 0);
	else
		unlink(path);
	imastream_chain_file_done(chain, &f, err);
	ASSERT(f.chain_state == NULL);
	return err;
}

static void check_golden(void)
{
	const char *srcdir = getenv("top_srcdir");
	char golden[1024], cmd[2200];
	int rc;

	snprintf(golden, sizeof(golden), "%s/tests/golden/chain.trace", srcdir ? srcdir : ".");
	if (getenv("IMASTREAM_UPDATE_GOLDEN")) {
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", transcript, golden);
		ASSERT_EQ(system(cmd), 0);
		return;
	}
	snprintf(cmd, sizeof(cmd), "diff -u '%s' '%s'", golden, transcript);
	rc = system(cmd);
	if (rc != 0) {
		fprintf(stderr, "transcript differs from %s (IMASTREAM_UPDATE_GOLDEN=1 rewrites it)\n",
			golden);
		exit(1);
	}
}

int main(void)
{
	struct imastream_log log = { log_to_transcript, NULL };
	struct imastream_plugin_ops a = trace_named("a"), b = trace_named("b");
	struct imastream_pkg good = { sizeof(good), "good-1.0-1.noarch", IMASTREAM_PKG_INSTALL,
				      IMASTREAM_PKG_HEADER_VERIFIED | IMASTREAM_PKG_FILEDIGESTS_CHECKED };
	struct imastream_pkg bad = { sizeof(bad), "bad-1.0-1.noarch", IMASTREAM_PKG_INSTALL, 0 };
	struct imastream_txn txn = { sizeof(txn), "/", 0 };
	struct imastream_script script = { sizeof(script), "/bin/sh",
					   IMASTREAM_SCRIPT_FORK | IMASTREAM_SCRIPT_EXEC };
	struct imastream_verify v = { sizeof(v), "header", IMASTREAM_HASH_SHA256, NULL, 32, NULL, 0, 0 };
	struct imastream_conflict c = { sizeof(c), "/etc/x", &good, "other-2-1.noarch" };
	struct imastream_config cfg;
	struct imastream_chain *chain;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char value[600];

	snprintf(workdir, sizeof(workdir), "%s/test_chain.XXXXXX", tmp);
	ASSERT(mkdtemp(workdir));
	snprintf(transcript, sizeof(transcript), "%s/transcript", workdir);
	ASSERT_EQ(chdir(workdir), 0);
	ASSERT_EQ(imastream_config_init(&cfg), 0);
	ASSERT_EQ(imastream_config_set(&cfg, "trace", transcript, NULL, NULL), 0);

	/* Order rules, unknown names and duplicates are refused before anything runs. */
	ASSERT_EQ(imastream_chain_new(&cfg, &log, &chain), 0);
	ASSERT_EQ(imastream_chain_add(chain, &failing_ops), 0);
	ASSERT_EQ(imastream_chain_add(chain, &veto_ops), -EINVAL);
	ASSERT_EQ(imastream_chain_add(chain, &failing_ops), -EEXIST);
	ASSERT_EQ(imastream_chain_add_list(chain, "trace, nosuch"), -ENOENT);
	imastream_chain_free(chain);

	say("== a transaction");
	ASSERT_EQ(imastream_chain_new(&cfg, &log, &chain), 0);
	ASSERT_EQ(imastream_chain_add(chain, &a), 0);
	ASSERT_EQ(imastream_chain_add(chain, &veto_ops), 0);
	ASSERT_EQ(imastream_chain_add(chain, &b), 0);
	ASSERT_EQ(imastream_chain_init(chain), 0);
	imastream_chain_tsm_post(chain, &txn, 0); /* no pre yet: nothing runs */
	{
		/* Nor for a file never opened (the installer's renamed-to-.rpmsave files). */
		struct imastream_file never = { .size = sizeof(never), .path = "never", .dest = "never",
						.fd = -1, .mode = S_IFREG | 0644, .pkg = &good,
						.flags = IMASTREAM_FILE_ERASE };

		imastream_chain_file_done(chain, &never, 0);
		ASSERT(never.chain_state == NULL);
	}
	ASSERT_EQ(imastream_chain_tsm_pre(chain, &txn), 0);
	ASSERT_EQ(imastream_chain_psm_pre(chain, &good), 0);
	ASSERT_EQ(imastream_chain_script_exec(chain, &script), 0);
	ASSERT_EQ(imastream_chain_verify(chain, &v), 0);
	ASSERT_EQ(imastream_chain_file_conflict(chain, &c), 0);
	ASSERT_EQ(run_file(chain, &good, "bin", VIA_REREAD), 0);
	ASSERT_EQ(run_file(chain, &good, "streamed", VIA_STREAM), 0);
	ASSERT_EQ(run_file(chain, &good, "known", VIA_HEADER), 0);
	ASSERT_EQ(run_file(chain, &good, "fail", VIA_REREAD), -EACCES);
	imastream_chain_psm_post(chain, &good, -EACCES);
	say("== a package whose pre hook fails in the middle of the chain");
	ASSERT_EQ(imastream_chain_psm_pre(chain, &bad), -EPERM);
	imastream_chain_psm_post(chain, &bad, -EPERM);
	imastream_chain_tsm_post(chain, &txn, -EPERM);
	imastream_chain_free(chain);

	/* The label really is on the file, with its NUL, under its final name. */
	{
		char got[128];
		ssize_t n = getxattr("bin", "security.selinux", got, sizeof(got));

		ASSERT_EQ(n, sizeof("system_u:object_r:test_t:s0"));
		ASSERT_MEM_EQ(got, "system_u:object_r:test_t:s0", (size_t)n);
	}
	ASSERT(access("fail", F_OK) != 0 && access("fail;0a1b2c3d", F_OK) != 0);

	say("== an init that fails: cleanup only for those whose init ran, reversed");
	ASSERT_EQ(imastream_chain_new(&cfg, &log, &chain), 0);
	ASSERT_EQ(imastream_chain_add(chain, &a), 0);
	ASSERT_EQ(imastream_chain_add(chain, &veto_ops), 0);
	ASSERT_EQ(imastream_chain_add(chain, &failing_ops), 0);
	ASSERT_EQ(imastream_chain_add(chain, &b), 0);
	ASSERT_EQ(imastream_chain_init(chain), -ENOKEY);
	imastream_chain_free(chain);

	check_golden();
	imastream_config_release(&cfg);
	ASSERT_EQ(chdir("/"), 0);
	snprintf(value, sizeof(value), "rm -rf '%s'", workdir);
	ASSERT_EQ(system(value), 0);
	return 0;
}
