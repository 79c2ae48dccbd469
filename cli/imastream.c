// SPDX-License-Identifier: LGPL-2.1-or-later
/* The imastream command: dispatches to one subcommand per cli/cmd_*.c file. */
#include <stdarg.h>
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
	{ "install", cmd_install, "install rpm packages into a root, writing IMA/EVM in the same pass" },
};

static int verbosity;

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("imastream %s\n", PACKAGE_VERSION);
	return CLI_OK;
}

static void print_to_stderr(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level > IMASTREAM_LOG_NOTICE + verbosity)
		return;
	fprintf(stderr, "imastream: %s\n", msg);
}

const struct imastream_log cli_log = { print_to_stderr, NULL };

void cli_set_verbose(int level)
{
	verbosity = level;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("imastream: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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
	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CLI_OK;
	}
	if (!strcmp(argv[1], "--version"))
		return cmd_version(0, NULL);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	cli_error("unknown command '%s' (try 'imastream --help')", argv[1]);
	return CLI_USAGE;
}
