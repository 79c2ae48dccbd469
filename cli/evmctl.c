// SPDX-License-Identifier: LGPL-2.1-or-later
/* evmctl's options imastream does not take, each with what to use instead. */
#include <stdbool.h>
#include <string.h>

#include "cli/evmctl.h"

const char *cli_evmctl_name;

struct evmctl_option {
	const char *name; /* evmctl's long spelling, without "--" */
	char letter;	  /* its short one, or 0 */
	const char *hint;
};

/* evmctl 1.4 to 1.6's options (its "opts" table) that no imastream command takes. */
static const struct evmctl_option evmctl_options[] = {
	{ "imasig", 's', "imastream sign always writes an IMA signature (ima_sign: that alone)" },
	{ "imahash", 'd', "imastream hash writes the digest; sign writes a signature" },
	{ "sigfile", 'f', "no .sig file is written: sign prints each value in hex on stdout" },
	{ "uuid", 'u', "EVM signatures are portable ones (type 05), which cover no UUID" },
	{ "rsa", '1', "version 1 signatures are not made: the kernel appraises version 2" },
	{ "m32", '3', "the 32-bit inode layout is for EVM HMACs, which imastream does not make" },
	{ "m64", '6', "the 64-bit inode layout is for EVM HMACs, which imastream does not make" },
	{ "hmackey", 0, "imastream does not make EVM HMACs (they need the device's key)" },
	{ "smack", 0, "labels are read from the file: set them on it first" },
	{ "selinux", 0, "the label is read from the file: set it on it first (chcon)" },
	{ "caps", 0, "capabilities are read from the file: set them on it first (setcap)" },
	{ "ima", 0, "security.ima is read from the file (or written by sign itself)" },
	{ "inode", 0, "portable EVM signatures cover no inode number" },
	{ "generation", 0, "portable EVM signatures cover no inode generation" },
	{ "uid", 0, "the owner is read from the file: chown it first" },
	{ "gid", 0, "the group is read from the file: chgrp it first" },
	{ "mode", 0, "the mode is read from the file: chmod it first" },
	{ "engine", 0, "give -k a pkcs11: URI or an OpenSSL provider URI instead" },
	{ "veritysig", 0, "imastream sign --verity writes fs-verity signatures" },
	{ "type", 't',
	  "ima_fix and ima_clear are not offered: imastream relabel labels an rpm root" },
	{ "ignore-violations", 0, "measurement lists are judged by imastream attest check" },
	{ "verify-sig", 0, "measurement lists are judged by imastream attest check" },
	{ "pcrs", 0, "measurement lists are judged by imastream attest check" },
	{ "verify-bank", 0, "measurement lists are judged by imastream attest check" },
	{ "hwtpm", 0, "measurement lists are judged by imastream attest check" },
};

const char *cli_evmctl_option_hint(const char *word)
{
	for (size_t i = 0; i < sizeof(evmctl_options) / sizeof(evmctl_options[0]); i++) {
		const struct evmctl_option *o = &evmctl_options[i];

		bool is_long = word[0] == '-' && word[1] == '-';

		if (is_long ? !strcmp(word + 2, o->name) :
			      o->letter && word[0] == '-' && word[1] == o->letter && !word[2])
			return o->hint;
	}
	return NULL;
}
