/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What cmd_attest_tpm.c offers cmd_attest.c (the options of a TPM quote and the check that uses them), and back. */
#ifndef IMASTREAM_CLI_CMD_ATTEST_TPM_H
#define IMASTREAM_CLI_CMD_ATTEST_TPM_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/options.h"

struct cli_attest_tpm {
	const char *quote, *quote_sig, *quote_pcrs, *ak, *nonce;
	bool pcrs_values;
};

/* The options, for attest check's --help (its .shared group). */
extern const struct cli_use cli_attest_tpm_uses[];
/* A cli_take_fn: takes the quote options into @group (a struct cli_attest_tpm). */
int cli_attest_tpm_option(void *group, const struct cli_parser *p, int c);
/* All of them or none, and a nonce of hex. Return: CLI_OK or CLI_USAGE (said). */
int cli_attest_tpm_options_done(const struct cli_attest_tpm *t);
static inline bool cli_attest_tpm_given(const struct cli_attest_tpm *t)
{
	return t->quote != NULL;
}

/*
 * Verifies the quote and replays @log_file (ascii or binary) against it.
 * Return: CLI_OK with *@judge the list as ascii lines, for the policy (fclose() it, then
 * free(*@judge_buf)); CLI_FAILED or CLI_USAGE after one line saying which check failed.
 */
int cli_attest_tpm_check(const struct cli_attest_tpm *t, const char *log_file, FILE **judge,
			 char **judge_buf);

/*
 * In cmd_attest.c: is @line (@len bytes, NUL-terminated), the first of --log, no entry of
 * an ascii list (a binary or JSON file, other text)?  Return: true after one line saying
 * what @log_file is.
 */
bool cli_attest_not_a_list(const char *line, size_t len, const char *log_file);

#endif /* IMASTREAM_CLI_CMD_ATTEST_TPM_H */
