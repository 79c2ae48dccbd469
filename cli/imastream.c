// SPDX-License-Identifier: LGPL-2.1-or-later
/* The imastream command: dispatches to one subcommand per cli/cmd_*.c file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/evmctl.h"

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

/*
 * evmctl's command names, run as the imastream command that does the same job: the
 * words of @as replace the name (ima_sign: an IMA signature and no EVM one; ima_verify,
 * as evmctl's, refuses a digest where it wants a signature).  evmctl's sign and verify
 * are ours already, each also covering security.ima.  The command keeps evmctl's output
 * habits under these names (cli/evmctl.h).
 */
#define ALIAS_WORDS 5
static const struct evmctl_alias {
	const char *name;
	const char *as[ALIAS_WORDS];
} evmctl_aliases[] = {
	{ "ima_hash", { "hash" } },
	{ "ima_sign", { "sign", "--evm", "none" } },
	{ "ima_verify", { "verify", "--evm", "none", "--appraise-type", "imasig" } },
	{ "import", { "keys", "import" } },
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
	fputs("\nevmctl's command names run the command doing the same job:\n", out);
	for (size_t i = 0; i < sizeof(evmctl_aliases) / sizeof(evmctl_aliases[0]); i++) {
		const struct evmctl_alias *a = &evmctl_aliases[i];

		fprintf(out, "  %-12s imastream", a->name);
		for (size_t w = 0; w < ALIAS_WORDS && a->as[w]; w++)
			fprintf(out, " %s", a->as[w]);
		fputc('\n', out);
	}
	fputs("\nRun 'imastream COMMAND --help' for a command's options; see imastream(1).\n", out);
}

static int run(const char *name, int argc, char **argv)
{
	int ret;

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(name, commands[i].name))
			continue;
		cli_set_command(commands[i].name);
		ret = commands[i].run(argc, argv);
		/* A passphrase typed for -p does not outlive the command. */
		cli_pass_forget();
		return ret;
	}
	return -1;
}

/* imastream EVMCTL_NAME ARGS...: the alias's words, then ARGS. */
static int run_alias(const struct evmctl_alias *a, int argc, char **argv)
{
	char **args = calloc((size_t)argc + ALIAS_WORDS + 1, sizeof(*args));
	int n = 0, ret;

	if (!args)
		return cli_usage_error(NULL, "out of memory");
	cli_evmctl_name = a->name;
	for (size_t w = 0; w < ALIAS_WORDS && a->as[w]; w++)
		args[n++] = (char *)a->as[w];
	for (int i = 1; i < argc; i++)
		args[n++] = argv[i];
	ret = run(args[0], n, args);
	free(args);
	return ret;
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
	ret = run(argv[1], argc - 1, argv + 1);
	if (ret >= 0)
		return ret;
	for (size_t i = 0; i < sizeof(evmctl_aliases) / sizeof(evmctl_aliases[0]); i++)
		if (!strcmp(argv[1], evmctl_aliases[i].name))
			return run_alias(&evmctl_aliases[i], argc - 1, argv + 1);
	if (argv[1][0] == '-')
		return cli_usage_error(NULL, "unknown option %s before the command", argv[1]);
	return cli_usage_error(NULL, "unknown command %s", argv[1]);
}
