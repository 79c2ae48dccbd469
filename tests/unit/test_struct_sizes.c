// SPDX-License-Identifier: LGPL-2.1-or-later
/* Room to grow: a struct below its first version is refused in one line; older and newer callers' work. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imastream/chain.h"
#include "imastream/chain_sink.h"
#include "imastream/extract.h"
#include "imastream/keys.h"
#include "imastream/relabel.h"
#include "imastream/signpkg.h"
#include "imastream/xattr.h"
#include "tests/unit/test.h"
#include "tests/unit/test_log.h"
#include "xattr/codec.h"

/* The hooks of a plugin that only counts: a refused struct must never reach it. */
static int calls;

static int count_txn(void *state, const struct imastream_txn *txn)
{
	(void)state;
	(void)txn;
	return ++calls, 0;
}

static int count_pkg(void *state, const struct imastream_pkg *pkg)
{
	(void)state;
	(void)pkg;
	return ++calls, 0;
}

static int count_script(void *state, const struct imastream_script *script)
{
	(void)state;
	(void)script;
	return ++calls, 0;
}

static int count_verify(void *state, const struct imastream_verify *v)
{
	(void)state;
	(void)v;
	return ++calls, 0;
}

static int count_conflict(void *state, const struct imastream_conflict *c)
{
	(void)state;
	(void)c;
	return ++calls, 0;
}

static int count_file(void *state, struct imastream_file *f)
{
	(void)state;
	(void)f;
	return ++calls, 0;
}

static const struct imastream_plugin_ops counting = {
	.size = sizeof(struct imastream_plugin_ops),
	.name = "counting",
	.tsm_pre = count_txn,
	.psm_pre = count_pkg,
	.script_exec = count_script,
	.verify = count_verify,
	.file_conflict = count_conflict,
	.file_opened = count_file,
};

/* @err is the one-line refusal of a struct @type whose size was 0. */
static void assert_refused(int err, const char *type)
{
	char want[128];

	ASSERT_EQ(err, -EINVAL);
	ASSERT_EQ(n_lines, 1);
	snprintf(want, sizeof(want), "struct %s: size 0 is below its first version's", type);
	ASSERT(strstr(last, want));
	snprintf(want, sizeof(want), "(set .size = sizeof(struct %s))", type);
	ASSERT(strstr(last, want));
	n_lines = 0;
}

/* Every struct a driver fills for the chain: size 0 refused before any plugin. */
static void test_hook_structs(void)
{
	struct imastream_config cfg;
	struct imastream_chain *chain;
	struct imastream_txn txn = { .root = "/" };
	struct imastream_pkg pkg = { .nevra = "p-1-1.noarch" };
	struct imastream_script script = { .path = "/bin/sh" };
	struct imastream_verify v = { .what = "header" };
	struct imastream_conflict c = { .path = "/etc/x", .pkg = &pkg, .owner = "q-1-1.noarch" };
	struct imastream_file f = { .path = ".", .dest = ".", .fd = -1, .mode = S_IFDIR | 0755 };
	/* A newer driver's script: one member this library does not have. */
	struct {
		struct imastream_script s;
		uint64_t later;
	} newer = { { .size = sizeof(newer), .path = "/bin/sh" }, 0 };

	ASSERT_EQ(imastream_config_init(&cfg), 0);
	ASSERT_EQ(imastream_chain_new(&cfg, &log_, &chain), 0);
	ASSERT_EQ(imastream_chain_add(chain, &counting), 0);
	ASSERT_EQ(imastream_chain_init(chain), 0);
	n_lines = 0;

	assert_refused(imastream_chain_tsm_pre(chain, &txn), "imastream_txn");
	txn.size = sizeof(txn);
	ASSERT_EQ(imastream_chain_tsm_pre(chain, &txn), 0);
	assert_refused(imastream_chain_psm_pre(chain, &pkg), "imastream_pkg");
	/* A conflict or file naming an unsized package is refused as well. */
	c.size = sizeof(c);
	assert_refused(imastream_chain_file_conflict(chain, &c), "imastream_pkg");
	pkg.size = sizeof(pkg);
	ASSERT_EQ(imastream_chain_psm_pre(chain, &pkg), 0);
	c.size = 0;
	assert_refused(imastream_chain_file_conflict(chain, &c), "imastream_conflict");
	c.size = sizeof(c);
	ASSERT_EQ(imastream_chain_file_conflict(chain, &c), 0);
	assert_refused(imastream_chain_script_exec(chain, &script), "imastream_script");
	script.size = sizeof(script);
	ASSERT_EQ(imastream_chain_script_exec(chain, &script), 0);
	assert_refused(imastream_chain_verify(chain, &v), "imastream_verify");
	v.size = sizeof(v);
	ASSERT_EQ(imastream_chain_verify(chain, &v), 0);
	assert_refused(imastream_chain_file_opened(chain, &f), "imastream_file");
	imastream_chain_file_done(chain, &f, -EINVAL); /* the driver's duty, harmless here */
	f.size = sizeof(f);
	ASSERT_EQ(imastream_chain_file_opened(chain, &f), 0);
	ASSERT_EQ(imastream_chain_file_closed(chain, &f), 0);
	imastream_chain_file_done(chain, &f, 0);
	/* Six hooks ran once each: none for a refused struct. */
	ASSERT_EQ(calls, 6);

	/* A newer caller: accepted while what we do not know is unset, refused when set. */
	ASSERT_EQ(imastream_chain_script_exec(chain, &newer.s), 0);
	ASSERT_EQ(calls, 7);
	newer.later = 1;
	ASSERT_EQ(imastream_chain_script_exec(chain, &newer.s), -E2BIG);
	ASSERT_EQ(n_lines, 1);
	ASSERT(strstr(last, "struct imastream_script: the caller sets members this library does not know"));
	ASSERT_EQ(calls, 7);
	n_lines = 0;

	imastream_chain_psm_post(chain, &pkg, 0);
	imastream_chain_tsm_post(chain, &txn, 0);
	imastream_chain_free(chain);
	imastream_config_release(&cfg);
}

/* The option structs callers fill: size 0 refused, before anything else is looked at. */
static void test_option_structs(void)
{
	struct imastream_config cfg;
	struct imastream_chain *chain;
	struct imastream_key_opts key = { .key = "/nonexistent/key.pem" };
	struct imastream_signpkg_opts sp = { .log = &log_ };
	struct imastream_chain_sink_opts cso = { .root = "/", .cfg = &cfg };
	struct imastream_relabel_opts ro = { .root = "/", .cfg = &cfg };
	struct imastream_entry_sink sink = { 0 };
	struct imastream_chain_sink *cs = NULL;
	struct imastream_relabel *rl = NULL;
	struct imastream_extract *x = NULL;
	struct imastream_signer *signer = NULL;
	struct {
		struct imastream_key_opts o;
		uint32_t later;
	} newer = { { .size = sizeof(newer), .key = "/nonexistent/key.pem" }, 5 };
	int rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	ASSERT(rootfd >= 0);
	calls = 0;
	ASSERT_EQ(imastream_config_init(&cfg), 0);
	ASSERT_EQ(imastream_chain_new(&cfg, &log_, &chain), 0);
	ASSERT_EQ(imastream_chain_add(chain, &counting), 0);
	ASSERT_EQ(imastream_chain_init(chain), 0);
	n_lines = 0;

	assert_refused(imastream_signer_new(&key, &log_, &signer), "imastream_key_opts");
	/* Sized: now the key itself is looked at (and is missing). */
	key.size = sizeof(key);
	ASSERT(imastream_signer_new(&key, &log_, &signer) < 0);
	ASSERT(!strstr(last, "struct imastream_key_opts"));
	n_lines = 0;
	ASSERT_EQ(imastream_signer_new(&newer.o, &log_, &signer), -E2BIG);
	ASSERT_EQ(n_lines, 1);
	n_lines = 0;

	assert_refused(imastream_sign_package("/nonexistent.rpm", &sp, NULL),
		       "imastream_signpkg_opts");
	assert_refused(imastream_signpkg_import_signatures("/nonexistent.rpm", NULL, NULL, &sp, NULL),
		       "imastream_signpkg_opts");
	assert_refused(imastream_chain_sink_new(chain, rootfd, &cso, &log_, &cs),
		       "imastream_chain_sink_opts");
	ASSERT(!cs);
	assert_refused(imastream_relabel_new(chain, &ro, &log_, &rl), "imastream_relabel_opts");
	ASSERT(!rl);
	assert_refused(imastream_extract_new(rootfd, 0, &sink, &log_, &x), "imastream_entry_sink");
	ASSERT(!x);
	ASSERT_EQ(calls, 0);

	imastream_chain_free(chain);
	imastream_config_release(&cfg);
	close(rootfd);
}

static int never_sign(void *arg, int algo, const uint8_t *digest, size_t digest_len,
		      uint8_t *sig, size_t sig_size, size_t *sig_len_ret)
{
	(void)arg, (void)algo, (void)digest, (void)digest_len, (void)sig, (void)sig_size;
	(void)sig_len_ret;
	return ++calls, -EIO;
}

/* The structs a caller fills for signing and for the EVM digest: refused before any work. */
static void test_signer_and_evm_input(void)
{
	struct imastream_signpkg_signer signer = { .sign = never_sign };
	struct imastream_signpkg_opts sp = { .size = sizeof(sp), .signer = &signer, .log = &log_ };
	struct imastream_signpkg_result res = { .size = sizeof(res) };
	struct imastream_evm_input in = { 0 };
	struct {
		struct imastream_evm_input in;
		uint64_t later;
	} newer = { { .size = sizeof(newer) }, 0 };
	uint8_t out[64], misc[IMASTREAM_EVM_MISC_MAX];
	size_t len;

	calls = 0;
	n_lines = 0;
	/* Refused before the (missing) package is opened: -EINVAL, not -ENOENT. */
	assert_refused(imastream_sign_package("/nonexistent.rpm", &sp, &res),
		       "imastream_signpkg_signer");
	signer.size = sizeof(signer);
	res.size = 0;
	assert_refused(imastream_sign_package("/nonexistent.rpm", &sp, &res),
		       "imastream_signpkg_result");
	res.size = sizeof(res);
	ASSERT_EQ(imastream_sign_package("/nonexistent.rpm", &sp, &res), -ENOENT);
	ASSERT(!strstr(last, "struct imastream_"));
	ASSERT_EQ(calls, 0);
	n_lines = 0;

	/* imastream_evm_collect() writes only what the caller's size says it has. */
	assert_refused(imastream_evm_collect(-1, "/", 0, &in, &log_), "imastream_evm_input");
	ASSERT_EQ(in.mode, 0);
	assert_refused(imastream_evm_digest_portable(&in, 4, out, sizeof(out), &len, &log_),
		       "imastream_evm_input");
	assert_refused(imastream_evm_digest(&in, 4, out, sizeof(out), &len, &log_),
		       "imastream_evm_input");
	assert_refused(imastream_evm_hmac(&in, (const uint8_t *)"k", 1, out, &log_),
		       "imastream_evm_input");
	ASSERT_EQ(imastream_evm_misc_encode(&in, true, misc, &len), -EINVAL);
	/* A newer caller's input: its unknown member zeroed by collect, refused once set. */
	newer.later = 7;
	ASSERT_EQ(imastream_evm_collect(-1, "/", 0, &newer.in, &log_), 0);
	ASSERT_EQ(newer.in.size, sizeof(newer));
	ASSERT_EQ(newer.later, 0);
	ASSERT(S_ISDIR(newer.in.mode));
	ASSERT_EQ(imastream_evm_misc_encode(&newer.in, true, misc, &len), 0);
	newer.later = 1;
	ASSERT_EQ(imastream_evm_misc_encode(&newer.in, true, misc, &len), -EINVAL);
	ASSERT_EQ(imastream_evm_hmac(&newer.in, (const uint8_t *)"k", 1, out, &log_), -E2BIG);
	ASSERT(strstr(last, "struct imastream_evm_input: the caller sets members this library does not know"));
	imastream_evm_input_release(&newer.in);
	n_lines = 0;
}

/*
 * Structs the library fills into the caller's memory: a size below the first version is
 * refused and the struct left alone; the library never writes past the caller's size
 * (which is what keeps a program built before a member was added working), and zeroes
 * what a newer program has beyond ours.
 */
static void test_filled_structs(void)
{
	struct {
		struct imastream_extract_stats st;
		char guard[16];
	} exact;
	struct {
		struct imastream_extract_stats st;
		uint64_t later;
	} newer;
	struct imastream_extract *x = NULL;
	int rootfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	ASSERT(rootfd >= 0);
	ASSERT_EQ(imastream_extract_new(rootfd, 0, NULL, &log_, &x), 0);
	n_lines = 0;
	memset(&exact, 0x5a, sizeof(exact));
	exact.st.size = 0;
	assert_refused(imastream_extract_get_stats(x, &exact.st), "imastream_extract_stats");
	ASSERT_EQ(exact.st.packages, 0x5a5a5a5a5a5a5a5aull);
	exact.st.size = sizeof(exact.st);
	ASSERT_EQ(imastream_extract_get_stats(x, &exact.st), 0);
	ASSERT_EQ(exact.st.size, sizeof(exact.st));
	ASSERT_EQ(exact.st.packages, 0);
	ASSERT_EQ(exact.st.bytes, 0);
	for (size_t i = 0; i < sizeof(exact.guard); i++)
		ASSERT_EQ(exact.guard[i], 0x5a);
	memset(&newer, 0x5a, sizeof(newer));
	newer.st.size = sizeof(newer);
	ASSERT_EQ(imastream_extract_get_stats(x, &newer.st), 0);
	ASSERT_EQ(newer.st.size, sizeof(newer));
	ASSERT_EQ(newer.st.entries, 0);
	ASSERT_EQ(newer.later, 0);
	ASSERT_EQ(n_lines, 0);
	imastream_extract_free(x);
	close(rootfd);
}

/*
 * An older caller: a program built before "verity" was added to struct imastream_config
 * has a smaller struct.  It still configures and runs a chain, verity reads as off, and
 * setting it is refused in one line rather than written past the caller's struct.
 */
static void test_older_caller(void)
{
	struct {
		struct imastream_config cfg;
		char guard[16];
	} old;
	struct imastream_chain *chain = NULL;
	struct imastream_txn txn = { .size = sizeof(txn), .root = "/" };

	/* What lies past the old struct is not the caller's to give: garbage here. */
	memset(&old, 0x5a, sizeof(old));
	ASSERT_EQ(imastream_config_init_sized(&old.cfg, offsetof(struct imastream_config, verity)), 0);
	n_lines = 0;
	ASSERT_EQ(imastream_config_set(&old.cfg, "verity", "on", "test", &log_), -EINVAL);
	ASSERT(strstr(last, "verity needs a program built with a newer imastream/chain.h"));
	ASSERT_EQ(imastream_config_set(&old.cfg, "plugins", "ima", "test", &log_), 0);
	ASSERT_EQ(imastream_chain_from_config(&old.cfg, &log_, &chain), 0);
	ASSERT_EQ(imastream_chain_tsm_pre(chain, &txn), 0);
	imastream_chain_tsm_post(chain, &txn, 0);
	imastream_chain_free(chain);
	imastream_config_release(&old.cfg);
	for (size_t i = 0; i < sizeof(old.guard); i++)
		ASSERT_EQ(old.guard[i], 0x5a);
}

/* No plugin is loaded at run time: a program's own plugin cannot own configuration keys. */
static const struct imastream_plugin_key own_keys[] = {
	{ .name = "own_setting", .def = "1", .help = "a key nobody can set" },
	{ 0 },
};

static void test_program_plugin_keys(void)
{
	struct imastream_plugin_ops own = counting;
	struct imastream_config cfg;
	struct imastream_chain *chain;

	own.name = "own";
	own.keys = own_keys;
	ASSERT_EQ(imastream_config_init(&cfg), 0);
	n_lines = 0;
	ASSERT_EQ(imastream_config_set(&cfg, "own_setting", "2", "test", &log_), -EINVAL);
	ASSERT(strstr(last, "unknown configuration key \"own_setting\" (neither the core's nor a "
			    "built-in plugin's; the nearest is "));
	ASSERT_EQ(imastream_chain_new(&cfg, &log_, &chain), 0);
	n_lines = 0;
	ASSERT_EQ(imastream_chain_add(chain, &own), -EINVAL);
	ASSERT_EQ(n_lines, 1);
	ASSERT(strstr(last, "chain: plugin own declares configuration key own_setting, which no built-in plugin has"));
	/* Without keys it is welcome; a name that is no built-in plugin is not. */
	ASSERT_EQ(imastream_chain_add(chain, &counting), 0);
	ASSERT_EQ(imastream_chain_add_list(chain, "nosuch"), -ENOENT);
	ASSERT(strstr(last, "chain: unknown plugin \"nosuch\" (not built in: no plugin is loaded at run time)"));
	imastream_chain_free(chain);
	imastream_config_release(&cfg);
}

int main(void)
{
	test_hook_structs();
	test_option_structs();
	test_signer_and_evm_input();
	test_filled_structs();
	test_older_caller();
	test_program_plugin_keys();
	return 0;
}
