// SPDX-License-Identifier: LGPL-2.1-or-later
/* The configuration keys: defaults, every value form, the file syntax, one line per error. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imastream/chain.h"
#include "plugin/core/driver.h"
#include "tests/unit/test.h"
#include "tests/unit/test_log.h"

/* Writes @text to a temp file and loads it into @cfg. */
static int load(struct imastream_config *cfg, const char *text, char *path, size_t size)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	FILE *f;
	int fd, err;

	snprintf(path, size, "%s/test_config.XXXXXX", tmp);
	fd = mkstemp(path);
	ASSERT(fd >= 0);
	f = fdopen(fd, "w");
	ASSERT(f);
	fputs(text, f);
	ASSERT_EQ(fclose(f), 0);
	n_lines = 0;
	err = imastream_config_load(cfg, path, &log_);
	unlink(path);
	return err;
}

static int set(struct imastream_config *cfg, const char *key, const char *value)
{
	n_lines = 0;
	return imastream_config_set(cfg, key, value, "test", &log_);
}

/* imastream_chain_from_config(): the checks and calls every driver made, and nothing left on failure. */
static void test_chain_from_config(void)
{
	struct imastream_config cfg;
	struct imastream_chain *chain;
	static const struct {
		const char *settings[3][2];
		int err;
		const char *expect; /* the start of the one line */
	} bad[] = {
		/* imastream_config_check() */
		{ { { "mode", "sign" } }, -EINVAL, "mode sign needs" },
		/* imastream_chain_add_list() */
		{ { { "plugins", "ima,nosuch" } }, -ENOENT, "unknown plugin" },
		/* imastream_chain_init(): the chain cannot do what the mode asks */
		{ { { "key", "/nonexistent/k.pem" }, { "mode", "sign" }, { "plugins", "trace" } },
		  -EINVAL, "chain: mode sign needs the ima plugin" },
	};

	ASSERT_EQ(imastream_config_init(&cfg), 0);
	ASSERT_EQ(set(&cfg, "plugins", "ima"), 0);
	chain = NULL;
	ASSERT_EQ(imastream_chain_from_config(&cfg, &log_, &chain), 0);
	ASSERT(chain);
	/* Initialised: the ima plugin asked for the configured digest. */
	ASSERT_EQ(imastream_chain_hash_algos(chain), IMASTREAM_HASH_BIT(IMASTREAM_HASH_SHA256));
	imastream_chain_free(chain);
	imastream_config_release(&cfg);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(imastream_config_init(&cfg), 0);
		for (size_t k = 0; k < 3 && bad[i].settings[k][0]; k++)
			ASSERT_EQ(set(&cfg, bad[i].settings[k][0], bad[i].settings[k][1]), 0);
		chain = NULL;
		n_lines = 0;
		last[0] = '\0';
		ASSERT_EQ(imastream_chain_from_config(&cfg, &log_, &chain), bad[i].err);
		ASSERT(!chain);
		ASSERT_EQ(n_lines, 1);
		if (!strstr(last, bad[i].expect)) {
			fprintf(stderr, "case %zu: \"%s\" does not say \"%s\"\n", i, last,
				bad[i].expect);
			ASSERT(0);
		}
		imastream_config_release(&cfg);
	}
	ASSERT_EQ(imastream_chain_from_config(NULL, &log_, &chain), -EINVAL);
}

/* The plugins' keys: declared in their ops, routed by imastream_config_set(), defaults. */
static void test_plugin_keys(void)
{
	struct imastream_config cfg;
	const struct imastream_plugin_ops *ops;
	unsigned int n_plugin_keys = 0;

	ASSERT_EQ(imastream_config_init(&cfg), 0);
	/* Declared defaults, and NULL for a key without one, a core key, an unknown key. */
	ASSERT(strcmp(imastream_config_get(&cfg, "trust_unknown"), "refuse") == 0);
	ASSERT(strcmp(imastream_config_get(&cfg, "trust_privileged_rank"), "50") == 0);
	ASSERT(strcmp(imastream_config_get(&cfg, "record_syslog"), "authpriv") == 0);
	ASSERT(strcmp(imastream_config_get(&cfg, "smack_package_manifests"), "no") == 0);
	ASSERT(strcmp(imastream_config_get(&cfg, "script_exec_context"), "auto") == 0);
	ASSERT(strstr(imastream_config_get(&cfg, "seccomp_deny"), "kexec_load"));
	ASSERT(imastream_config_get(&cfg, "record_log") == NULL);
	ASSERT(imastream_config_get(&cfg, "file_contexts") == NULL);
	ASSERT(imastream_config_get(&cfg, "mode") == NULL);
	ASSERT(imastream_config_get(&cfg, "nosuch") == NULL);
	ASSERT(imastream_config_get(NULL, "trust_unknown") == NULL);

	/* Set, replaced, and unset by an empty value: the default again. */
	ASSERT_EQ(set(&cfg, "record_log", "/var/log/a"), 0);
	ASSERT(strcmp(imastream_config_get(&cfg, "record_log"), "/var/log/a") == 0);
	ASSERT_EQ(set(&cfg, "trust_unknown", "allow"), 0);
	ASSERT(strcmp(imastream_config_get(&cfg, "trust_unknown"), "allow") == 0);
	ASSERT_EQ(set(&cfg, "trust_unknown", ""), 0);
	ASSERT(strcmp(imastream_config_get(&cfg, "trust_unknown"), "refuse") == 0);
	ASSERT_EQ(set(&cfg, "record_log", ""), 0);
	ASSERT(imastream_config_get(&cfg, "record_log") == NULL);

	/* A plugin's check: one line naming the source, key and value; the value kept. */
	ASSERT_EQ(set(&cfg, "trust_privileged_rank", "10"), 0);
	ASSERT_EQ(set(&cfg, "trust_privileged_rank", "high"), -EINVAL);
	ASSERT_EQ(n_lines, 1);
	ASSERT(strcmp(last, "test: trust_privileged_rank \"high\" is not 0..1000000") == 0);
	ASSERT(strcmp(imastream_config_get(&cfg, "trust_privileged_rank"), "10") == 0);
	ASSERT_EQ(set(&cfg, "trust_unknown", "maybe"), -EINVAL);
	ASSERT(strcmp(last, "test: trust_unknown \"maybe\" is not refuse or allow") == 0);
	ASSERT_EQ(set(&cfg, "record_syslog", "nosuch"), -EINVAL);
	ASSERT(strcmp(last, "test: record_syslog \"nosuch\" is not a syslog facility or none") == 0);
	ASSERT_EQ(set(&cfg, "record_syslog", "local3"), 0);
	ASSERT_EQ(set(&cfg, "smack_package_manifests", "-1"), -EINVAL);
	ASSERT_EQ(set(&cfg, "smack_package_manifests", "70"), 0);
	/* Through the file too: the line is the source. */
	{
		char path[512], want[600];

		ASSERT_EQ(load(&cfg, "record_log = /l\ntrust_unknown = sometimes\n", path,
			       sizeof(path)), -EINVAL);
		ASSERT_EQ(n_lines, 1);
		snprintf(want, sizeof(want), "%s:2: trust_unknown \"sometimes\" is not refuse or allow",
			 path);
		ASSERT(strcmp(last, want) == 0);
		ASSERT(strcmp(imastream_config_get(&cfg, "record_log"), "/l") == 0);
	}
	imastream_config_release(&cfg);
	ASSERT(cfg.values == NULL);
	imastream_config_release(&cfg); /* twice is harmless */

	/* imastream_config_keys() names every plugin's keys, each once, after the core's. */
	for (unsigned int i = 0; (ops = imastream_plugin_at(i)); i++) {
		ASSERT(ops->size == sizeof(struct imastream_plugin_ops));
		for (const struct imastream_plugin_key *k = ops->keys; k && k->name; k++) {
			unsigned int seen = 0;

			for (const char *const *key = imastream_config_keys(); *key; key++)
				seen += strcmp(*key, k->name) == 0;
			if (seen != 1) {
				fprintf(stderr, "key %s of plugin %s listed %u times\n", k->name,
					ops->name, seen);
				ASSERT(0);
			}
			ASSERT(k->help && k->help[0]);
			/* A default passes its own check. */
			ASSERT(!k->def || !k->check || !k->check(k->def));
			n_plugin_keys++;
		}
	}
	ASSERT_EQ(n_plugin_keys, 13);
	ASSERT(strcmp(imastream_config_keys()[0], "mode") == 0);
}

/* The sizes that leave room to grow: a struct without one is refused, not misread. */
static void test_sizes(void)
{
	struct imastream_config cfg;
	struct imastream_chain *chain;
	struct imastream_plugin_ops unsized = *imastream_plugin_lookup("trace");

	ASSERT_EQ(imastream_config_init_sized(&cfg, offsetof(struct imastream_config, mode)),
		  -EINVAL);
	ASSERT_EQ(imastream_config_init_sized(NULL, sizeof(cfg)), -EINVAL);
	memset(&cfg, 0, sizeof(cfg));
	ASSERT_EQ(imastream_chain_new(&cfg, &log_, &chain), -EINVAL);
	ASSERT_EQ(imastream_config_init(&cfg), 0);
	ASSERT_EQ(cfg.size, sizeof(cfg));
	ASSERT_EQ(imastream_chain_new(&cfg, &log_, &chain), 0);
	unsized.size = 0;
	unsized.name = "unsized";
	n_lines = 0;
	ASSERT_EQ(imastream_chain_add(chain, &unsized), -EINVAL);
	ASSERT_EQ(n_lines, 1);
	ASSERT(strstr(last, "chain: plugin unsized: its ops have no size"));
	ASSERT_EQ(imastream_chain_add(chain, imastream_plugin_lookup("trace")), 0);
	imastream_chain_free(chain);
	imastream_config_release(&cfg);
}

int main(void)
{
	struct imastream_config cfg;
	char path[512], want[800], big[5000];

	ASSERT_EQ(imastream_config_init(&cfg), 0);
	ASSERT_EQ(cfg.mode, IMASTREAM_MODE_HASH);
	ASSERT_EQ(cfg.hash_algo, IMASTREAM_HASH_SHA256);
	ASSERT(strcmp(cfg.plugins, "selinux,ima,evm") == 0);
	ASSERT(!cfg.evm && !cfg.user_xattrs && !cfg.key);
	ASSERT_EQ(cfg.config_files, IMASTREAM_CONFIG_FILES_HASH);
	ASSERT_EQ(cfg.package_sigs, IMASTREAM_PKGSIG_AUTO);
	ASSERT_EQ(cfg.no_xattr, IMASTREAM_NO_XATTR_FAIL);

	/* Every key of the documented set is known (an empty value may still be invalid). */
	for (const char *const *k = imastream_config_keys(); *k; k++) {
		last[0] = '\0';
		set(&cfg, *k, "");
		ASSERT(!strstr(last, "unknown configuration key"));
	}
	imastream_config_release(&cfg);
	ASSERT_EQ(imastream_config_init(&cfg), 0);

	ASSERT_EQ(set(&cfg, "mode", "sign"), 0);
	ASSERT_EQ(cfg.mode, IMASTREAM_MODE_SIGN);
	ASSERT_EQ(set(&cfg, "hash_algo", "SHA512"), 0);
	ASSERT_EQ(cfg.hash_algo, IMASTREAM_HASH_SHA512);
	ASSERT_EQ(set(&cfg, "evm", "portable"), 0);
	ASSERT(cfg.evm);
	ASSERT_EQ(set(&cfg, "no_xattr_support", "skip"), 0);
	ASSERT_EQ(cfg.no_xattr, IMASTREAM_NO_XATTR_SKIP);
	ASSERT_EQ(set(&cfg, "xattr_namespace", "user"), 0);
	ASSERT(cfg.user_xattrs);
	ASSERT_EQ(set(&cfg, "key", "/k.pem"), 0);
	ASSERT(strcmp(cfg.key, "/k.pem") == 0);
	ASSERT_EQ(set(&cfg, "key", ""), 0); /* %{nil} unsets */
	ASSERT(cfg.key == NULL);

	/* Bad values: one line each, naming the source, the value left alone. */
	ASSERT_EQ(set(&cfg, "hash_algo", "sha257"), -EINVAL);
	ASSERT_EQ(n_lines, 1);
	ASSERT(strcmp(last, "test: unknown hash algorithm \"sha257\" (md5, sha1, sha256, sha384, "
			    "sha512, sha224 or sm3)") == 0);
	ASSERT_EQ(cfg.hash_algo, IMASTREAM_HASH_SHA512);
	ASSERT_EQ(set(&cfg, "mode", "Hash"), -EINVAL);
	ASSERT_EQ(set(&cfg, "config_files", "true"), -EINVAL);
	/* A key with fixed values lists them. */
	ASSERT(strcmp(last, "test: invalid value \"true\" for config_files (no, hash or yes)") ==
	       0);
	ASSERT_EQ(set(&cfg, "config_files", "no"), 0);
	ASSERT_EQ(cfg.config_files, IMASTREAM_CONFIG_FILES_NO);
	ASSERT_EQ(set(&cfg, "config_files", "yes"), 0);
	ASSERT_EQ(cfg.config_files, IMASTREAM_CONFIG_FILES_YES);
	ASSERT_EQ(set(&cfg, "plugins", "ima;rm -rf"), -EINVAL);
	ASSERT_EQ(set(&cfg, "keypass", "secret"), -EINVAL);
	ASSERT(strstr(last, "unknown configuration key \"keypass\""));

	/* Cross-key checks. */
	ASSERT_EQ(imastream_config_check(&cfg, &log_), -EINVAL);
	ASSERT_EQ(set(&cfg, "key", "/k.pem"), 0);
	ASSERT_EQ(imastream_config_check(&cfg, &log_), 0);
	imastream_config_release(&cfg);

	/* The file: comments, blanks, spaces around '=', and a line number in errors. */
	ASSERT_EQ(imastream_config_init(&cfg), 0);
	ASSERT_EQ(load(&cfg, "# imastream\n\n  mode=sign \nhash_algo = sha384 # trailing\n"
			     "plugins = selinux, ima,evm\n", path, sizeof(path)), 0);
	ASSERT_EQ(cfg.mode, IMASTREAM_MODE_SIGN);
	ASSERT_EQ(cfg.hash_algo, IMASTREAM_HASH_SHA384);
	ASSERT_EQ(load(&cfg, "mode = hash\nhash_algorithm = sha1\n", path, sizeof(path)), -EINVAL);
	ASSERT_EQ(n_lines, 1);
	snprintf(want, sizeof(want),
		 "%s:2: unknown configuration key \"hash_algorithm\" (neither the core's nor a "
		 "built-in plugin's; the nearest is hash_algo)",
		 path);
	ASSERT(strcmp(last, want) == 0);
	/* A key set twice to two values: refused, naming both lines; the same value twice is taken. */
	ASSERT_EQ(load(&cfg, "mode = sign\n# later\nmode = hash\n", path, sizeof(path)), -EINVAL);
	ASSERT_EQ(n_lines, 1);
	snprintf(want, sizeof(want),
		 "%s:3: mode is set again, to another value than on line 1: set it once", path);
	ASSERT(strcmp(last, want) == 0);
	ASSERT_EQ(load(&cfg, "mode = hash\nmode=hash\n", path, sizeof(path)), 0);
	ASSERT_EQ(cfg.mode, IMASTREAM_MODE_HASH);
	ASSERT_EQ(load(&cfg, "mode hash\n", path, sizeof(path)), -EINVAL);
	ASSERT(strstr(last, ":1: expected \"key = value\""));
	memset(big, 'a', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	ASSERT_EQ(load(&cfg, big, path, sizeof(path)), -EINVAL);
	ASSERT(strstr(last, ":1: line too long"));
	n_lines = 0;
	ASSERT_EQ(imastream_config_load(&cfg, "/nonexistent/imastream.conf", &log_), -ENOENT);
	ASSERT_EQ(n_lines, 1);
	imastream_config_release(&cfg);

	/* Empty: a path or text key becomes unset; a key with fixed values refuses it. */
	ASSERT_EQ(imastream_config_init(&cfg), 0);
	ASSERT_EQ(set(&cfg, "mode", ""), -EINVAL);
	ASSERT_EQ(n_lines, 1);
	ASSERT(strcmp(last, "test: empty value for mode: leave the setting out for its default") == 0);
	ASSERT_EQ(cfg.mode, IMASTREAM_MODE_HASH);
	ASSERT_EQ(set(&cfg, "hash_algo", ""), -EINVAL);
	ASSERT(strstr(last, "empty value for hash_algo"));
	ASSERT_EQ(set(&cfg, "evm", ""), -EINVAL);
	ASSERT_EQ(set(&cfg, "trust", ""), 0);
	ASSERT(cfg.trust == NULL);

	/* Weak digests: one rule, refused unless weak_algos = allow; sha1 is not weak. */
	ASSERT(imastream_hash_algo_weak(IMASTREAM_HASH_MD5));
	ASSERT(!imastream_hash_algo_weak(IMASTREAM_HASH_SHA1));
	ASSERT(!imastream_hash_algo_weak(IMASTREAM_HASH_SHA256));
	ASSERT_EQ(set(&cfg, "hash_algo", "md5"), 0);
	n_lines = 0;
	ASSERT_EQ(imastream_config_check(&cfg, &log_), -EINVAL);
	ASSERT_EQ(n_lines, 1);
	ASSERT(strcmp(last, "hash_algo md5 is a weak digest: use sha256, or set weak_algos = allow") == 0);
	ASSERT_EQ(set(&cfg, "weak_algos", "allow"), 0);
	ASSERT_EQ(imastream_config_check(&cfg, &log_), 0);
	ASSERT_EQ(set(&cfg, "weak_algos", "refuse"), 0);
	ASSERT_EQ(set(&cfg, "hash_algo", "sha1"), 0);
	ASSERT_EQ(imastream_config_check(&cfg, &log_), 0);
	ASSERT_EQ(set(&cfg, "package_sig_algos", "sha256,md5"), 0);
	ASSERT_EQ(imastream_config_check(&cfg, &log_), -EINVAL);
	ASSERT(strstr(last, "package_sig_algos lists md5, a weak digest"));
	ASSERT_EQ(set(&cfg, "weak_algos", "sometimes"), -EINVAL);
	imastream_config_release(&cfg);

	/* verity: off by default; on needs sign mode, and cannot use package signatures. */
	ASSERT_EQ(imastream_config_init(&cfg), 0);
	ASSERT(!cfg.verity);
	ASSERT_EQ(set(&cfg, "verity", "yes"), -EINVAL);
	ASSERT_EQ(set(&cfg, "verity", "on"), 0);
	ASSERT(cfg.verity);
	n_lines = 0;
	ASSERT_EQ(imastream_config_check(&cfg, &log_), -EINVAL);
	ASSERT_EQ(n_lines, 1);
	ASSERT(strstr(last, "verity = on needs mode = sign"));
	ASSERT_EQ(set(&cfg, "mode", "sign"), 0);
	ASSERT_EQ(set(&cfg, "key", "k.pem"), 0);
	ASSERT_EQ(imastream_config_check(&cfg, &log_), 0);
	ASSERT_EQ(set(&cfg, "package_sigs", "verify"), 0);
	ASSERT_EQ(set(&cfg, "trust", "certs.pem"), 0);
	ASSERT_EQ(imastream_config_check(&cfg, &log_), -EINVAL);
	ASSERT(strstr(last, "not fs-verity digests"));
	ASSERT_EQ(set(&cfg, "verity", "off"), 0);
	ASSERT_EQ(imastream_config_check(&cfg, &log_), 0);
	/* Without trust, verify could only refuse every signed package: refused here. */
	ASSERT_EQ(set(&cfg, "trust", ""), 0);
	n_lines = 0;
	ASSERT_EQ(imastream_config_check(&cfg, &log_), -EINVAL);
	ASSERT_EQ(n_lines, 1);
	ASSERT(strstr(last, "package_sigs = verify needs trust"));
	imastream_config_release(&cfg);

	/* A chain that cannot do what the configuration asks fails init, before any plugin. */
	{
		static const struct {
			const char *key, *value, *plugins, *expect;
		} cases[] = {
			{ "mode", "sign", "evm", "chain: mode sign needs the ima plugin, and plugins is \"evm\"" },
			{ "mode", "sign", "selinux", "chain: mode sign needs the ima plugin" },
			{ "evm", "portable", "selinux,ima", "chain: evm portable needs the evm plugin" },
			{ "package_sigs", "verify", "trace", "chain: package_sigs verify needs the ima plugin" },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct imastream_chain *chain;

			ASSERT_EQ(imastream_config_init(&cfg), 0);
			ASSERT_EQ(set(&cfg, "key", "/nonexistent/k.pem"), 0);
			ASSERT_EQ(set(&cfg, cases[i].key, cases[i].value), 0);
			ASSERT_EQ(set(&cfg, "plugins", cases[i].plugins), 0);
			ASSERT_EQ(imastream_chain_new(&cfg, &log_, &chain), 0);
			ASSERT_EQ(imastream_chain_add_list(chain, cfg.plugins), 0);
			n_lines = 0;
			ASSERT_EQ(imastream_chain_init(chain), -EINVAL);
			ASSERT_EQ(n_lines, 1);
			ASSERT(strncmp(last, cases[i].expect, strlen(cases[i].expect)) == 0);
			imastream_chain_free(chain);
			imastream_config_release(&cfg);
		}
	}
	test_chain_from_config();
	test_plugin_keys();
	test_sizes();
	return 0;
}
