// SPDX-License-Identifier: LGPL-2.1-or-later
/* The imastream command: dispatches to one subcommand per cli/cmd_*.c file. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static int cmd_version(int argc, char **argv);

static const struct cli_command commands[] = {
	{ "version", cmd_version, "print the version" },
	{ "hash", cmd_hash, "write security.ima content digests (like evmctl ima_hash)" },
	{ "sign", cmd_sign, "write IMA and EVM portable signatures (like evmctl ima_sign + sign)" },
	{ "verify", cmd_verify, "check security.ima and security.evm against trusted certificates" },
	{ "keys", cmd_keys, "import certificates into keyrings, list keyrings, print key ids" },
	{ "sign-package", cmd_sign_package, "add IMA file signatures to rpm packages" },
	{ "sign-digests", cmd_sign_digests, "sign a digest manifest on the signing host, without the packages" },
	{ "install", cmd_install, "install rpm packages into a root, writing IMA/EVM in the same pass" },
	{ "relabel", cmd_relabel, "label the files of an installed root from its rpm database" },
	{ "recover", cmd_recover, "complete or clean up what an interrupted 'imastream install' left" },
	{ "policy", cmd_policy, "write a keylime runtime policy of what a root has installed" },
	{ "attest", cmd_attest, "check an IMA measurement list against a keylime runtime policy" },
};

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("imastream %s\n", PACKAGE_VERSION);
	return CLI_OK;
}

static void usage(FILE *out)
{
	fputs("Usage: imastream COMMAND [OPTIONS] ...\n\n"
	      "Writes and checks Linux IMA/EVM integrity metadata.\n\nCommands:\n", out);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fputs("\nRun 'imastream COMMAND --help' for a command's options; see imastream(1).\n", out);
}

int main(int argc, char **argv)
{
	int ret;

	if (argc < 2)
		return cli_usage_error(NULL, "no command given");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CLI_OK;
	}
	if (!strcmp(argv[1], "--version"))
		return cmd_version(0, NULL);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		ret = commands[i].run(argc - 1, argv + 1);
		/* A passphrase typed for -p does not outlive the command. */
		cli_pass_forget();
		return ret;
	}
	if (argv[1][0] == '-')
		return cli_usage_error(NULL, "unknown option %s before the command", argv[1]);
	return cli_usage_error(NULL, "unknown command %s", argv[1]);
}
