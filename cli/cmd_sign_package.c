// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream sign-package: adds IMA file signatures to rpm packages, as rpmsign --signfiles. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "imastream/hash.h"
#include "imastream/keys.h"
#include "imastream/signpkg.h"

static const char usage_text[] =
	"Usage: imastream sign-package --key KEY [--cert CERT] [--pass-file FILE | --pass-env VAR]\n"
	"                              [--keyid HEX] [-a ALGO] [-o DIR] [-v] PKG.rpm...\n"
	"\n"
	"Signs the digest of every file in each rpm package with KEY and stores the IMA\n"
	"signatures (security.ima values) in the package's signature header, where rpm 4.18's\n"
	"'rpmsign --signfiles' puts them and the stock rpm ima plugin installs them from.\n"
	"The header and the payload are not changed, so their digests and any OpenPGP\n"
	"signature stay valid. Each package is checked before it is rewritten, through a\n"
	"temporary file renamed into place.\n"
	"\n"
	"  -k, --key KEY       PEM private key, pkcs11: URI, kernel:... key or store URI\n"
	"  -c, --cert CERT     its certificate: the key id is the last four bytes of the\n"
	"                      certificate's subject key identifier (the kernel's rule)\n"
	"      --pass-file F   passphrase or PIN: first line of F\n"
	"      --pass-env VAR  passphrase or PIN: the value of environment variable VAR\n"
	"      --keyid HEX     use this 32-bit key id instead\n"
	"  -a, --hashalgo ALGO sign digests in ALGO (md5, sha1, sha224, sha256, sha384,\n"
	"                      sha512, sm3); by default the package's file digest algorithm,\n"
	"                      whose digests are signed as the header has them.  Another\n"
	"                      algorithm decompresses the payload once and hashes each file\n"
	"                      with both, checking the package's digest before signing\n"
	"  -o, --outdir DIR    write the signed packages into DIR instead of in place\n"
	"  -v, --verbose       one line per package on what was signed\n"
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 if every package was signed, 1 if the key cannot be loaded or any\n"
	"package failed (each failure is one line on stderr, that package is untouched and\n"
	"the others are still done), 2 for a usage error.\n";

enum { OPT_PASS_FILE = 256, OPT_PASS_ENV, OPT_KEYID };

static int keys_sign(void *arg, int algo, const uint8_t *digest, size_t digest_len,
		     uint8_t *sig, size_t sig_size, size_t *sig_len_ret)
{
	return imastream_signer_sign(arg, algo, digest, digest_len, sig, sig_size, sig_len_ret);
}

static int parse_keyid(const char *s, uint32_t *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 16);
	if (errno || !*s || *end || v == 0 || v > 0xffffffffUL)
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

int cmd_sign_package(int argc, char **argv)
{
	static const struct option options[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "cert", required_argument, NULL, 'c' },
		{ "pass-file", required_argument, NULL, OPT_PASS_FILE },
		{ "pass-env", required_argument, NULL, OPT_PASS_ENV },
		{ "keyid", required_argument, NULL, OPT_KEYID },
		{ "hashalgo", required_argument, NULL, 'a' },
		{ "outdir", required_argument, NULL, 'o' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct imastream_key_opts key = { 0 };
	struct imastream_signpkg_opts opts = { 0 };
	struct imastream_signpkg_signer signer;
	struct imastream_signer *s = NULL;
	const struct imastream_hash_info *hi;
	int c, verbose = 0, failed = 0;

	while ((c = getopt_long(argc, argv, "k:c:a:o:vh", options, NULL)) != -1) {
		switch (c) {
		case 'k':
			key.key = optarg;
			break;
		case 'c':
			key.cert = optarg;
			break;
		case OPT_PASS_FILE:
			key.pass_file = optarg;
			break;
		case OPT_PASS_ENV:
			key.pass_env = optarg;
			break;
		case OPT_KEYID:
			if (parse_keyid(optarg, &key.keyid)) {
				cli_error("sign-package: --keyid wants 1 to 8 hex digits, not zero: '%s'",
					  optarg);
				return CLI_USAGE;
			}
			key.has_keyid = true;
			break;
		case 'a':
			hi = imastream_hash_by_name(optarg);
			if (!hi) {
				cli_error("sign-package: unknown hash algorithm '%s'", optarg);
				return CLI_USAGE;
			}
			opts.algo = hi->algo;
			break;
		case 'o':
			opts.outdir = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return CLI_OK;
		default:
			fputs(usage_text, stderr);
			return CLI_USAGE;
		}
	}
	if (!key.key || optind >= argc) {
		cli_error("sign-package: %s (try 'imastream sign-package --help')",
			  key.key ? "no package given" : "--key is required");
		return CLI_USAGE;
	}
	cli_set_verbose(verbose);
	/* The key is loaded once, before any package is read: a bad key fails early. */
	if (imastream_signer_new(&key, &cli_log, &s))
		return CLI_FAILED;
	signer = (struct imastream_signpkg_signer){ keys_sign, s, imastream_signer_keyid(s) };
	opts.signer = &signer;
	opts.log = &cli_log;

	for (int i = optind; i < argc; i++) {
		struct imastream_signpkg_result res;

		if (imastream_sign_package(argv[i], &opts, &res)) {
			failed = 1;
			continue;
		}
		if (verbose)
			fprintf(stderr, "imastream: %s: %u of %u files signed (%s, key id %08x)%s%s\n",
				argv[i], res.signed_files, res.files,
				imastream_hash_by_algo(res.algo)->name, signer.keyid,
				res.replaced ? ", previous file signatures replaced" : "",
				res.rehashed ? ", contents re-hashed from the payload" : "");
		if (verbose && res.openpgp)
			fprintf(stderr, "imastream: %s: OpenPGP signature kept: it covers the header, which is unchanged\n",
				argv[i]);
	}
	imastream_signer_free(s);
	return failed ? CLI_FAILED : CLI_OK;
}
