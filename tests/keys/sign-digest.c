// SPDX-License-Identifier: LGPL-2.1-or-later
/* Test helper: signs one hex digest with any key source and prints "KEYID SIGNATURE" in hex. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imastream/hash.h"
#include "imastream/keys.h"
#include "tests/unit/test.h"

static void to_stderr(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level <= IMASTREAM_LOG_WARNING)
		fprintf(stderr, "sign-digest: %s\n", msg);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cert", required_argument, NULL, 'c' },
		{ "pass-env", required_argument, NULL, 'e' },
		{ "pass-file", required_argument, NULL, 'f' },
		{ "keyid", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	const struct imastream_log log = { to_stderr, NULL };
	struct imastream_key_opts o = { .size = sizeof(o) };
	const struct imastream_hash_info *h;
	struct imastream_signer *s;
	unsigned char digest[IMASTREAM_HASH_MAX_DIGEST], sig[2048];
	size_t dlen, slen;
	int c, algo;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o.cert = optarg; break;
		case 'e': o.pass_env = optarg; break;
		case 'f': o.pass_file = optarg; break;
		case 'i':
			o.keyid = (uint32_t)strtoul(optarg, NULL, 16);
			o.has_keyid = true;
			break;
		default: return 2;
		}
	}
	if (argc - optind != 3) {
		fprintf(stderr, "usage: sign-digest [--cert C] [--pass-env V | --pass-file F] [--keyid HEX] KEY ALGO HEXDIGEST\n");
		return 2;
	}
	o.key = argv[optind];
	/* A name from the table, or a raw kernel id to reach the library's own check. */
	h = imastream_hash_by_name(argv[optind + 1]);
	algo = h ? h->algo : atoi(argv[optind + 1]);
	dlen = test_unhex(argv[optind + 2], digest, sizeof(digest));
	if (imastream_signer_new(&o, &log, &s))
		return 1;
	if (imastream_signer_sign(s, algo, digest, dlen, sig, sizeof(sig), &slen)) {
		imastream_signer_free(s);
		return 1;
	}
	printf("%08x ", imastream_signer_keyid(s));
	for (size_t i = 0; i < slen; i++)
		printf("%02x", sig[i]);
	printf("\n");
	imastream_signer_free(s);
	return 0;
}
