/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* evmctl's habits, kept when the command runs under evmctl's names (imastream ima_hash). */
#ifndef IMASTREAM_CLI_EVMCTL_H
#define IMASTREAM_CLI_EVMCTL_H

/*
 * The evmctl command name the command runs as ("ima_hash", "ima_verify"), set by main()
 * before the command parses its options; NULL under imastream's own names.  hash then
 * prints evmctl's "hash(ALGO): " before each value, verify evmctl's "PATH: verification
 * is OK" for a good file.
 */
extern const char *cli_evmctl_name;

/*
 * @word, an option no command of ours takes ("--imasig", "-s"): when evmctl has it, what
 * to do instead, one clause for the usage error; else NULL.
 */
const char *cli_evmctl_option_hint(const char *word);

#endif /* IMASTREAM_CLI_EVMCTL_H */
