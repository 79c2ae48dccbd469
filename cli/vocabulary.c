// SPDX-License-Identifier: LGPL-2.1-or-later
/* The option vocabulary of the imastream command: every option's spellings, argument, help and configuration key; library messages put in its spelling. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/evmctl.h"
#include "cli/options.h"
#include "imastream/chain.h"
#include "imastream/hash.h"
#include "plugin/core/driver.h"

/*
 * The vocabulary.  Where evmctl has a spelling for the same meaning, it is the letter
 * (-a, -k, -n, -p, -r, -v) or the alias here; the few per-command exceptions are
 * struct cli_alias entries of the command, listed under "Also accepted" in its --help.
 * The entries look alike by design: one per option, each its own spelling and meaning.
 */
static const struct cli_option vocabulary[] = {
	{ CLI_OPT_HELP, 'h', "help", no_argument, NULL, "print this help" },
	{ CLI_OPT_VERBOSE, 'v', "verbose", no_argument, NULL, "say more (repeatable)" },
	{ CLI_OPT_QUIET, 0, "quiet", no_argument, NULL, "no progress line and no summary" },
	{ CLI_OPT_PROGRESS, 0, "progress", no_argument, NULL,
	  "the progress line even when stderr is not a terminal" },
	{ CLI_OPT_RECURSIVE, 'r', "recursive", no_argument, NULL,
	  "walk directories; symlinks, FIFOs, sockets and devices\n"
	  "are skipped (named with -v), as evmctl skips them;\n"
	  "symlinks are never followed" },
	{ CLI_OPT_JOBS, 'j', "jobs", required_argument, "N",
	  "work on N files at a time (1 to 64; default: one per\n"
	  "CPU); the output keeps the walk order" },
	{ CLI_OPT_DRY_RUN, 'n', "dry-run", no_argument, NULL, "print the values, write nothing" },
	{ CLI_OPT_NO_NAMES, 0, "no-names", no_argument, NULL,
	  "print the values without the file names, byte for byte\n"
	  "as evmctl prints them" },
	{ CLI_OPT_HASH_ALGO, 'a', "hash-algo", required_argument, "ALGO",
	  "the digest algorithm (default sha256)", "hashalgo", "hash_algo" },
	{ CLI_OPT_XATTR_USER, 0, "xattr-user", no_argument, NULL,
	  "user.ima and user.evm instead of security.ima and\nsecurity.evm" },
	{ CLI_OPT_KEY, 'k', "key", required_argument, "KEY",
	  "the private key: a PEM or DER file (mode 0600 or\n"
	  "stricter), pkcs11:URI, kernel:SERIAL, kernel:RING:DESC\n"
	  "or an OpenSSL store URI",
	  NULL, "key" },
	{ CLI_OPT_CERT, 'c', "cert", required_argument, "CERT",
	  "the key's certificate: the key id comes from its\n"
	  "subjectKeyIdentifier, and it must match the key",
	  "keyid-from-cert", "cert" },
	{ CLI_OPT_KEYID, 0, "keyid", required_argument, "HEX",
	  "the key id to write (1 to 8 hex digits) instead" },
	{ CLI_OPT_PASS, 'p', "pass", optional_argument, NULL,
	  "ask for the passphrase or PIN on the terminal; evmctl's\n"
	  "--pass=SECRET is refused: other users can read it" },
	{ CLI_OPT_PASS_FILE, 0, "pass-file", required_argument, "FILE",
	  "passphrase or PIN: the first line of FILE", NULL, "key_pass_file" },
	{ CLI_OPT_PASS_ENV, 0, "pass-env", required_argument, "VAR",
	  "passphrase or PIN: the value of environment variable VAR", NULL, "key_pass_env" },
	{ CLI_OPT_EVM, 0, "evm", required_argument, "MODE", "what to do with security.evm", NULL,
	  "evm" },
	{ CLI_OPT_PORTABLE, 0, "portable", no_argument, NULL,
	  "--evm portable, in evmctl's spelling" },
	{ CLI_OPT_TRUST, 't', "trust", required_argument, "PATH",
	  "trusted certificates: a PEM or DER file, or a directory\nof them", NULL, "trust" },
	{ CLI_OPT_ROOT, 0, "root", required_argument, "DIR", "the root directory of an install" },
	{ CLI_OPT_KEYRING, 0, "keyring", required_argument, "RING", "a kernel keyring" },
	{ CLI_OPT_OUTDIR, 0, "outdir", required_argument, "DIR",
	  "write into DIR instead of in place" },
	{ CLI_OPT_MODE, 0, "mode", required_argument, "MODE",
	  "hash, sign or off: what security.ima holds (hash)", NULL, "mode" },
	{ CLI_OPT_SET, 'o', "set", required_argument, "KEY=VALUE",
	  "any configuration key of imastream-rpm(8) (repeatable)" },
	{ CLI_OPT_CONFIG, 0, "config", required_argument, "FILE",
	  "\"key = value\" lines, read before the options above" },
	{ CLI_OPT_PLUGINS, 0, "plugins", required_argument, "LIST",
	  "the chain, in order (selinux,ima,evm)", NULL, "plugins" },
	{ CLI_OPT_PGP_KEY, 0, "pgp-key", required_argument, "FILE",
	  "an armored OpenPGP public key trusted for header signatures" },
	{ CLI_OPT_ALLOW_UNSIGNED, 0, "allow-unsigned", no_argument, NULL,
	  "accept unsigned headers and unknown keys" },
	{ CLI_OPT_REPLACE_FILES, 0, "replace-files", no_argument, NULL,
	  "replace files that another package owns" },
	{ CLI_OPT_NO_CHOWN, 0, "no-chown", no_argument, NULL, "keep the caller's ownership" },
	{ CLI_OPT_NODIGEST, 0, "nodigest", no_argument, NULL,
	  "do not check the header digests (as rpm's)" },
	{ CLI_OPT_NOFILEDIGEST, 0, "nofiledigest", no_argument, NULL,
	  "do not check the file digests (as rpm's)" },
	{ CLI_OPT_RPMDB, 0, "rpmdb", no_argument, NULL,
	  "the packages of the root's rpm database (its %_dbpath)" },
	{ CLI_OPT_RECORD, 0, "record", no_argument, NULL,
	  "the packages 'imastream install' recorded under the root" },
	{ CLI_OPT_OUTPUT, 0, "output", required_argument, "FILE",
	  "write to FILE (replaced whole, or left as it was)\ninstead of standard output" },
	{ CLI_OPT_EXCLUDE, 0, "exclude", required_argument, "REGEX",
	  "paths matching REGEX (POSIX extended, from the start)\nare not judged (repeatable)" },
	{ CLI_OPT_PATH_PREFIX, 0, "path-prefix", required_argument, "DIR",
	  "where the attested system sees the root (default /)" },
	{ CLI_OPT_BASE, 0, "base", required_argument, "POLICY",
	  "a keylime runtime policy whose digests, excludes,\nkeyrings and keys are merged in" },
	{ CLI_OPT_POLICY, 0, "policy", required_argument, "FILE",
	  "a keylime runtime policy (JSON)" },
	{ CLI_OPT_MEASUREMENTS, 0, "log", required_argument, "FILE",
	  "an IMA ascii measurement list\n(/sys/kernel/security/ima/ascii_runtime_measurements)" },
	{ CLI_OPT_QUOTE, 0, "quote", required_argument, "FILE",
	  "a TPM quote: the TPMS_ATTEST tpm2_quote -m writes" },
	{ CLI_OPT_QUOTE_SIG, 0, "quote-sig", required_argument, "FILE",
	  "the quote's signature: the TPMT_SIGNATURE tpm2_quote -s\nwrites (-f tss, its default)" },
	{ CLI_OPT_QUOTE_PCRS, 0, "quote-pcrs", required_argument, "FILE",
	  "the quoted PCR values tpm2_quote -o writes" },
	{ CLI_OPT_QUOTE_PCRS_FORMAT, 0, "quote-pcrs-format", required_argument, "FORMAT",
	  "serialized (the default of tpm2_quote -F) or values" },
	{ CLI_OPT_AK, 0, "ak", required_argument, "FILE",
	  "the attestation key's public key (PEM) the quote is\nsigned with" },
	{ CLI_OPT_NONCE, 0, "nonce", required_argument, "HEX",
	  "the verifier's fresh nonce, which the quote must hold\n(tpm2_quote -q HEX)" },
	{ CLI_OPT_LOG_HASH_ALGO, 0, "log-hash-algo", required_argument, "ALGO",
	  "the IMA log's template hash algorithm: sha1 (the\ndefault), sha256, sha384 or sha512" },
	{ CLI_OPT_ALLOW_WEAK, 0, "allow-weak", no_argument, NULL,
	  "accept md5, a weak digest (refused\notherwise)" },
	{ CLI_OPT_EXPORT_DIGESTS, 0, "export-digests", required_argument, "FILE",
	  "write the packages' digest manifest to FILE (- for\nstandard output) instead of "
	  "signing" },
	{ CLI_OPT_IMPORT_SIGNATURES, 0, "import-signatures", required_argument, "SIGS",
	  "store the signatures of a signatures file (from\nsign-digests) instead of signing" },
	{ CLI_OPT_VERITY, 0, "verity", no_argument, NULL,
	  "the fs-verity file digest (SHA-256, 4 KiB blocks, no\nsalt) instead of the file's plain "
	  "digest" },
	{ CLI_OPT_FORMAT, 0, "format", required_argument, "FORMAT",
	  "text (default) or json: one JSON object per line" },
	{ CLI_OPT_MODIFIED_CONFIG, 0, "label-modified-config", no_argument, NULL,
	  "label %config files changed since install with their\ncurrent content (refused "
	  "otherwise)" },
	{ CLI_OPT_NO_WAIT, 0, "no-wait", no_argument, NULL,
	  "fail when another rpm or imastream transaction holds\nthe root's lock, instead of "
	  "waiting" },
	{ CLI_OPT_SYNC, 0, "sync", required_argument, "MODE",
	  "how written data is made durable: fs, file or none" },
	{ CLI_OPT_SIGN_THREADS, 0, "sign-threads", required_argument, "N",
	  "1: a second thread prepares the ECDSA signatures'\nnonces; 0: none (default: 1 on "
	  "two CPUs or more)" },
	{ CLI_OPT_DBPATH, 0, "dbpath", required_argument, "DB",
	  "rpm's database below the root is DB (as rpm --dbpath;\ndefault rpm's %_dbpath): read "
	  "there, and locked with\nDB/.rpm.lock as rpm does" },
	{ CLI_OPT_TAKE_OVER, 0, "take-over", no_argument, NULL,
	  "install a package rpm's database has, then remove rpm's\nentry (as rpm -e --justdb)" },
	{ CLI_OPT_APPRAISE_TYPE, 0, "appraise-type", required_argument, "TYPE",
	  "what an IMA policy rule's appraise_type demands of\nsecurity.ima" },
	{ CLI_OPT_LABELS, 0, "labels", required_argument, "MODE",
	  "auto, require or none: whether security.selinux must be\nthere" },
	{ CLI_OPT_PENDING, 0, "pending", no_argument, NULL,
	  "write the labels a build in a user namespace left\npending in the root" },
	{ CLI_OPT_NOCONFIG, 0, "noconfig", no_argument, NULL,
	  "leave %config files out, as rpm -V --noconfig does" },
	{ CLI_OPT_ACCEPT_CONFIG, 0, "accept-config", required_argument, "PATH",
	  "accept the edit of the %config file PATH: its digest\nrecorded for the audit and the "
	  "policy, then labelled" },
	{ CLI_OPT_MUTABLE, 0, "mutable", required_argument, "LIST",
	  "the root's mutable files (imastream-mutable-files(5)):\n"
	  "%ghost files and LIST's state excluded, LIST's\ngenerated files at their current "
	  "digest" },
};

#define N_VOCABULARY (sizeof(vocabulary) / sizeof(vocabulary[0]))

const struct cli_option *cli_option(enum cli_opt id)
{
	for (size_t i = 0; i < N_VOCABULARY; i++)
		if (vocabulary[i].id == id)
			return &vocabulary[i];
	return NULL;
}

const char *cli_option_for_config_key(const char *key)
{
	static char spelled[N_VOCABULARY][32];

	for (size_t i = 0; i < N_VOCABULARY; i++) {
		if (!vocabulary[i].config_key || strcmp(vocabulary[i].config_key, key))
			continue;
		snprintf(spelled[i], sizeof(spelled[i]), "--%s", vocabulary[i].name);
		return spelled[i];
	}
	return NULL;
}

char *cli_config_names_to_options(const char *msg, const char *(*typed)(void *arg, const char *key),
				  void *arg)
{
	static const char prefix[] = "_imastream_";
	const char *p = msg, *hit;
	char *out = NULL;
	size_t size = 0;
	FILE *f;

	if (!strstr(msg, prefix))
		return NULL;
	f = open_memstream(&out, &size);
	if (!f)
		return NULL;
	while ((hit = strstr(p, prefix))) {
		const char *name = hit + strlen(prefix), *option;
		size_t len = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_");
		char key[64];

		if (hit > p && hit[-1] == '%')
			hit--;
		fwrite(p, 1, (size_t)(hit - p), f);
		snprintf(key, sizeof(key), "%.*s", (int)len, name);
		option = typed ? typed(arg, key) : NULL;
		if (!option)
			option = cli_option_for_config_key(key);
		if (option)
			fputs(option, f);
		else
			fprintf(f, "-o %s=...", key);
		p = name + len;
	}
	fputs(p, f);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}
