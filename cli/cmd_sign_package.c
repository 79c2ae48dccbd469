// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream sign-package: adds IMA file signatures to rpm packages, as rpmsign --signfiles. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "imastream/hash.h"
#include "imastream/keys.h"
#include "imastream/signpkg.h"

static const struct cli_use sign_package_options[] = {
	{ CLI_OPT_KEY },
	{ CLI_OPT_CERT, "its certificate: the key id is the last four bytes of\n"
	  "its subject key identifier (the kernel's rule)" },
	{ CLI_OPT_PASS },
	{ CLI_OPT_PASS_FILE },
	{ CLI_OPT_PASS_ENV },
	{ CLI_OPT_KEYID },
	{ CLI_OPT_HASH_ALGO, "sign digests in ALGO (sha1, sha224, sha256, sha384,\n"
	  "sha512, sm3; md5 with --allow-weak); default sha256,\n"
	  "as the kernel expects. When ALGO is the package's\n"
	  "file digest algorithm its digests are signed as the\n"
	  "header has them, without reading the payload;\n"
	  "otherwise the payload is decompressed once and each\n"
	  "file hashed with both, checking the package's digest\n"
	  "before signing" },
	{ CLI_OPT_ALLOW_WEAK },
	{ CLI_OPT_OUTDIR, "write the signed packages into DIR instead of in place" },
	{ CLI_OPT_VERBOSE, "one line per package on what was signed" },
	{ CLI_OPT_HELP },
	{ 0 },
};

/* -o was --outdir before it meant --set; kept for the scripts that use it. */
static const struct cli_alias sign_package_aliases[] = {
	{ CLI_OPT_OUTDIR, 'o', NULL, "--outdir: the old spelling (elsewhere -o is --set)" },
	{ 0 },
};

static const struct cli_spec sign_package_spec = {
	.cmd = "sign-package",
	.synopsis =
	"Usage: imastream sign-package --key KEY [--cert CERT]\n"
	"                              [-p | --pass-file FILE | --pass-env VAR]\n"
	"                              [--keyid HEX] [-a ALGO] [--outdir DIR] [-v]\n"
	"                              PKG.rpm...\n"
	"\n"
	"Signs the digest of every file in each rpm package with KEY and stores the IMA\n"
	"signatures (security.ima values) in the package's signature header, where rpm\n"
	"4.18's 'rpmsign --signfiles' puts them and the stock rpm ima plugin installs\n"
	"them from. The header and the payload are not changed, so their digests and any\n"
	"OpenPGP signature stay valid. Each package is checked before it is rewritten,\n"
	"through a temporary file renamed into place.\n",
	.uses = sign_package_options,
	.aliases = sign_package_aliases,
	.epilog =
	"Exit status: 0 if every package was signed, 1 if the key cannot be loaded or\n"
	"any package failed (each failure is one line on stderr, that package is\n"
	"untouched and the others are still done), 2 for a usage error.\n",
};

static int keys_sign(void *arg, int algo, const uint8_t *digest, size_t digest_len,
		     uint8_t *sig, size_t sig_size, size_t *sig_len_ret)
{
	return imastream_signer_sign(arg, algo, digest, digest_len, sig, sig_size, sig_len_ret);
}

int cmd_sign_package(int argc, char **argv)
{
	struct imastream_key_opts key = { 0 };
	struct imastream_signpkg_opts opts = { 0 };
	struct imastream_signpkg_signer signer;
	struct imastream_signer *s = NULL;
	const struct imastream_hash_info *hi;
	struct cli_parser p;
	bool prompt = false, allow_weak = false;
	int c, verbose = 0, failed = 0, err;

	cli_parse_start(&p, &sign_package_spec, argc, argv);
	while ((c = cli_parse_next(&p)) != CLI_OPT_END) {
		switch (c) {
		case CLI_OPT_KEY:
			key.key = p.arg;
			break;
		case CLI_OPT_CERT:
			key.cert = p.arg;
			break;
		case CLI_OPT_PASS:
			prompt = true;
			break;
		case CLI_OPT_PASS_FILE:
			key.pass_file = p.arg;
			break;
		case CLI_OPT_PASS_ENV:
			key.pass_env = p.arg;
			break;
		case CLI_OPT_KEYID:
			if (!cli_parse_keyid(&p, &key.keyid))
				return CLI_USAGE;
			key.has_keyid = true;
			break;
		case CLI_OPT_HASH_ALGO:
			hi = imastream_hash_by_name(p.arg);
			if (!hi)
				return cli_usage_error("sign-package", "unknown hash algorithm '%s'",
						       p.arg);
			opts.algo = hi->algo;
			break;
		case CLI_OPT_OUTDIR:
			opts.outdir = p.arg;
			break;
		case CLI_OPT_VERBOSE:
			verbose++;
			break;
		case CLI_OPT_ALLOW_WEAK:
			allow_weak = true;
			break;
		case CLI_OPT_HELP:
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	if (!key.key)
		return cli_usage_error("sign-package", "no --key given");
	if (opts.algo && cli_check_weak_algo("sign-package", opts.algo, allow_weak) != CLI_OK)
		return CLI_USAGE;
	if (cli_parse_operands(&p) >= argc)
		return cli_usage_error("sign-package", "no package given");
	if (prompt + !!key.pass_file + !!key.pass_env > 1)
		return cli_usage_error("sign-package", "give one of -p, --pass-file and --pass-env");
	if (prompt) {
		err = cli_pass_prompt("sign-package", key.key, &key.pass_env);
		if (err)
			return err;
	}
	cli_set_verbose(verbose);
	/* The key is loaded once, before any package is read: a bad key fails early. */
	err = imastream_signer_new(&key, &cli_log, &s);
	cli_pass_forget();
	if (err)
		return CLI_FAILED;
	signer = (struct imastream_signpkg_signer){ keys_sign, s, imastream_signer_keyid(s) };
	opts.signer = &signer;
	opts.log = &cli_log;

	for (int i = cli_parse_operands(&p); i < argc; i++) {
		struct imastream_signpkg_result res;

		if (imastream_sign_package(argv[i], &opts, &res)) {
			failed = 1;
			continue;
		}
		if (verbose)
			cli_error("%s: %u of %u files signed (%s, key id %08x)%s%s", argv[i],
				  res.signed_files, res.files, imastream_hash_by_algo(res.algo)->name,
				  signer.keyid,
				  res.replaced ? ", previous file signatures replaced" : "",
				  res.rehashed ? ", contents re-hashed from the payload" : "");
		if (verbose && res.openpgp)
			cli_error("%s: OpenPGP signature kept: it covers the header, which is unchanged",
				  argv[i]);
	}
	imastream_signer_free(s);
	return failed ? CLI_FAILED : CLI_OK;
}
