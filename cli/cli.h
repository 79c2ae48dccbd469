/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared declarations of the imastream command: subcommand entry points and helpers. */
#ifndef IMASTREAM_CLI_H
#define IMASTREAM_CLI_H

#include <stdbool.h>

#include "imastream/common.h"

/* Exit codes: 0 all done, 1 some files failed, 2 usage error. */
enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

int cmd_hash(int argc, char **argv);
int cmd_keys(int argc, char **argv);
int cmd_sign(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_sign_package(int argc, char **argv);
int cmd_install(int argc, char **argv);

/* A log that prints "imastream: message" to stderr; DEBUG/INFO only when verbose. */
extern const struct imastream_log cli_log;
void cli_set_verbose(int level);
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* IMASTREAM_CLI_H */
