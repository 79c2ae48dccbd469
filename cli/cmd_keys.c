// SPDX-License-Identifier: LGPL-2.1-or-later
/* imastream keys: import certificates into kernel keyrings, list them, print key ids. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "imastream/keys.h"

#define DEFAULT_RING "_ima"

static const char keys_usage[] =
	"Usage: imastream keys import [--keyring RING] CERT\n"
	"       imastream keys list [RING]\n"
	"       imastream keys id --cert CERT\n"
	"       imastream keys id --key KEY [--cert CERT] [--pass-file FILE | --pass-env VAR]\n"
	"\n"
	"  import   add an X.509 certificate (PEM or DER) to a kernel keyring as an\n"
	"           asymmetric key, like 'evmctl import' or 'keyctl padd asymmetric'\n"
	"  list     list a keyring: serial, type, key id, description\n"
	"  id       print the 8-hex-digit key id that signatures made with KEY carry,\n"
	"           or that the kernel matches for CERT\n"
	"\n"
	"RING: _ima (default), _evm or any _NAME (found or created under the user keyring),\n"
	"      .ima, .evm or any .NAME (a kernel keyring, found by name), @u, @s, @us, @t,\n"
	"      @p, or a serial number.\n"
	"KEY:  a PEM private key file (mode 0600 or stricter), a pkcs11: URI, kernel:SERIAL,\n"
	"      kernel:RING:DESCRIPTION, or an OpenSSL provider URI such as handle:0x81000001.\n"
	"\n"
	"Options:\n"
	"  -k, --keyring RING     keyring for import (default " DEFAULT_RING ")\n"
	"      --key KEY          private key whose key id to print\n"
	"  -c, --cert CERT        certificate (PEM or DER)\n"
	"      --pass-file FILE   passphrase or PIN: the first line of FILE\n"
	"      --pass-env VAR     passphrase or PIN: the value of environment variable VAR\n"
	"  -v, --verbose          say more\n"
	"  -h, --help             show this help\n";

static int read_file(const char *path, unsigned char **buf_ret, size_t *len_ret)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		cli_error("%s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			unsigned char *nbuf;

			cap = cap ? cap * 2 : 8192;
			nbuf = cap <= (1u << 20) ? realloc(buf, cap) : NULL;
			if (!nbuf) {
				cli_error("%s: too large for a certificate", path);
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nbuf;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		cli_error("%s: read error", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	*buf_ret = buf;
	*len_ret = len;
	return 0;
}

static int keys_import(const char *ring, const char *cert_path, int verbose)
{
	unsigned char *cert;
	size_t len;
	int32_t serial;
	uint32_t keyid;
	bool skid;
	int err;

	if (read_file(cert_path, &cert, &len))
		return CLI_FAILED;
	err = imastream_keyring_import(ring, cert, len, &cli_log, &serial);
	/* Only the serial on stdout, as evmctl import and keyctl padd print it. */
	if (!err)
		printf("%d\n", serial);
	if (!err && verbose && imastream_keyid_from_cert(cert, len, &cli_log, &keyid, &skid) == 0)
		cli_error("key %d, key id %08x%s, added to keyring %s", serial, keyid,
			  skid ? "" : " (no subjectKeyIdentifier)", ring);
	free(cert);
	return err ? CLI_FAILED : CLI_OK;
}

static int keys_list(const char *ring)
{
	struct imastream_keyring_entry *e = NULL;
	size_t n = 0;

	if (imastream_keyring_list(ring, &cli_log, &e, &n))
		return CLI_FAILED;
	for (size_t i = 0; i < n; i++) {
		char id[16] = "-";

		if (e[i].has_keyid)
			snprintf(id, sizeof(id), "%08x", e[i].keyid);
		printf("%d %s %s %s\n", e[i].serial, e[i].type, id, e[i].description);
	}
	free(e);
	return CLI_OK;
}

static int keys_id(const struct imastream_key_opts *opts)
{
	struct imastream_signer *s;
	unsigned char *cert;
	uint32_t keyid;
	size_t len;
	bool skid;
	int err;

	if (!opts->key) {
		if (read_file(opts->cert, &cert, &len))
			return CLI_FAILED;
		err = imastream_keyid_from_cert(cert, len, &cli_log, &keyid, &skid);
		free(cert);
		if (err)
			return CLI_FAILED;
		if (!skid)
			cli_error("warning: %s has no subjectKeyIdentifier; the kernel cannot match this key id",
				  opts->cert);
		printf("%08x\n", keyid);
		return CLI_OK;
	}
	if (imastream_signer_new(opts, &cli_log, &s))
		return CLI_FAILED;
	printf("%08x\n", imastream_signer_keyid(s));
	imastream_signer_free(s);
	return CLI_OK;
}

int cmd_keys(int argc, char **argv)
{
	enum { OPT_KEY = 256, OPT_PASS_FILE, OPT_PASS_ENV };
	static const struct option longopts[] = {
		{ "keyring", required_argument, NULL, 'k' },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "cert", required_argument, NULL, 'c' },
		{ "pass-file", required_argument, NULL, OPT_PASS_FILE },
		{ "pass-env", required_argument, NULL, OPT_PASS_ENV },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct imastream_key_opts opts = { 0 };
	const char *ring = NULL, *sub;
	int c, verbose = 0;

	if (argc < 2 || argv[1][0] == '-') {
		bool help = argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));

		fputs(keys_usage, help ? stdout : stderr);
		return help ? CLI_OK : CLI_USAGE;
	}
	sub = argv[1];
	argc--;
	argv++;
	optind = 1;
	while ((c = getopt_long(argc, argv, "k:c:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			ring = optarg;
			break;
		case OPT_KEY:
			opts.key = optarg;
			break;
		case 'c':
			opts.cert = optarg;
			break;
		case OPT_PASS_FILE:
			opts.pass_file = optarg;
			break;
		case OPT_PASS_ENV:
			opts.pass_env = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			fputs(keys_usage, stdout);
			return CLI_OK;
		default:
			fputs(keys_usage, stderr);
			return CLI_USAGE;
		}
	}
	cli_set_verbose(verbose);
	if (!strcmp(sub, "import")) {
		if (optind != argc - 1 || opts.key || opts.cert || opts.pass_file || opts.pass_env) {
			cli_error("keys import takes [--keyring RING] and one certificate file");
			return CLI_USAGE;
		}
		return keys_import(ring ? ring : DEFAULT_RING, argv[optind], verbose);
	}
	if (!strcmp(sub, "list")) {
		if (optind < argc - 1 || (ring && optind < argc) || opts.key || opts.cert) {
			cli_error("keys list takes at most one keyring");
			return CLI_USAGE;
		}
		return keys_list(optind < argc ? argv[optind] : ring ? ring : DEFAULT_RING);
	}
	if (!strcmp(sub, "id")) {
		if (optind != argc || ring || (!opts.key && !opts.cert) ||
		    (!opts.key && (opts.pass_file || opts.pass_env))) {
			cli_error("keys id takes --cert CERT, or --key KEY with its options");
			return CLI_USAGE;
		}
		return keys_id(&opts);
	}
	cli_error("unknown keys command '%s' (import, list or id)", sub);
	return CLI_USAGE;
}
