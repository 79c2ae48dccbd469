// SPDX-License-Identifier: LGPL-2.1-or-later
/* attest check with a TPM quote: the quote verified and the measurement list replayed before the policy judges it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attest/tpm.h"
#include "cli/cli.h"
#include "cli/cmd_attest_tpm.h"
#include "common/private.h"

/* A measurement list or quote file larger than this is not one a verifier would load. */
#define MAX_INPUT (1024L * 1024 * 1024)

const struct cli_use cli_attest_tpm_uses[] = {
	{ CLI_OPT_QUOTE, NULL },
	{ CLI_OPT_QUOTE_SIG, NULL },
	{ CLI_OPT_QUOTE_PCRS, NULL },
	{ CLI_OPT_QUOTE_PCRS_FORMAT, NULL },
	{ CLI_OPT_AK, NULL },
	{ CLI_OPT_NONCE, NULL },
	{ 0 },
};

int cli_attest_tpm_option(void *group, const struct cli_parser *p, int c)
{
	struct cli_attest_tpm *t = group;

	switch (c) {
	case CLI_OPT_QUOTE:
		t->quote = p->arg;
		return 1;
	case CLI_OPT_QUOTE_SIG:
		t->quote_sig = p->arg;
		return 1;
	case CLI_OPT_QUOTE_PCRS:
		t->quote_pcrs = p->arg;
		return 1;
	case CLI_OPT_QUOTE_PCRS_FORMAT:
		if (strcmp(p->arg, "serialized") && strcmp(p->arg, "values")) {
			cli_usage_error("attest", "%s is serialized or values, not '%s'",
					p->spelled, p->arg);
			return -1;
		}
		t->pcrs_values = !strcmp(p->arg, "values");
		return 1;
	case CLI_OPT_AK:
		t->ak = p->arg;
		return 1;
	case CLI_OPT_NONCE:
		t->nonce = p->arg;
		return 1;
	default:
		return 0;
	}
}

int cli_attest_tpm_options_done(const struct cli_attest_tpm *t)
{
	int given = !!t->quote + !!t->quote_sig + !!t->quote_pcrs + !!t->ak + !!t->nonce;
	size_t n = t->nonce ? strlen(t->nonce) : 0;

	if (given && given < 5)
		return cli_usage_error("attest",
				       "a quote is checked with all of --quote, --quote-sig, "
				       "--quote-pcrs, --ak and --nonce");
	if (!given)
		return CLI_OK;
	if (!n || n % 2 || n > 2 * 64)
		return cli_usage_error("attest", "--nonce takes 2 to 128 hex digits, not '%s'",
				       t->nonce);
	for (size_t i = 0; i < n; i++)
		if (ims_hex_digit(t->nonce[i]) < 0)
			return cli_usage_error("attest", "--nonce takes hex digits, not '%s'",
					       t->nonce);
	return CLI_OK;
}

/* The whole of @file in memory (NUL-terminated), or NULL said. */
static uint8_t *slurp(const char *file, const char *what, size_t *len)
{
	FILE *f = fopen(file, "rb");
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (!f) {
		cli_say("attest", "%s %s: %s", what, file, strerror(errno));
		return NULL;
	}
	/* Read to the end: securityfs lists report no size. */
	do {
		if (cap - n < 65536) {
			uint8_t *p = cap < (size_t)MAX_INPUT ? realloc(buf, cap ? 2 * cap : 65536) :
							       NULL;

			if (!p) {
				cli_say("attest", "%s %s: larger than 1 GiB or out of memory", what,
					file);
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
			cap = cap ? 2 * cap : 65536;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got);
	if (ferror(f)) {
		cli_say("attest", "%s %s: %s", what, file, strerror(errno));
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int replay_one(void *arg, const struct attest_measurement *m)
{
	struct {
		struct attest_replay *r;
		char *why;
		size_t whylen;
		unsigned long n;
	} *a = arg;

	a->n++;
	return attest_replay_add(a->r, m, a->why, a->whylen);
}

/*
 * A --log of text that is no ascii list (the policy given twice, any other text) is refused
 * as it is without a quote, before the quote is read; a binary list (a PCR index, its high
 * bytes zero, first) is the replay's to read.  Return: true after that one line.
 */
static bool text_not_a_list(const uint8_t *log, size_t len, const char *log_file)
{
	const uint8_t *p = log, *end = log + len, *nl;
	char *line;
	bool no;

	if (len >= 4 && memchr(log, '\0', 4))
		return false;
	while (p < end && *p == '\n')
		p++;
	if (p == end)
		return false;
	nl = memchr(p, '\n', (size_t)(end - p));
	len = (size_t)((nl ? nl : end) - p);
	line = malloc(len + 1);
	if (!line)
		return false;
	memcpy(line, p, len);
	line[len] = '\0';
	no = cli_attest_not_a_list(line, len, log_file);
	free(line);
	return no;
}

int cli_attest_tpm_check(const struct cli_attest_tpm *t, const char *log_file, FILE **judge,
			 char **judge_buf)
{
	static struct attest_quote q;
	struct attest_quote_input in = { .pcrs_values = t->pcrs_values };
	uint8_t nonce[64], *msg, *sig = NULL, *pcrs = NULL, *log = NULL;
	char *ak = NULL, why[1024];
	size_t len = 0, judge_len = 0;
	struct {
		struct attest_replay *r;
		char *why;
		size_t whylen;
		unsigned long n;
	} arg = { NULL, why, sizeof(why), 0 };
	FILE *ascii = NULL;
	int err, ret = CLI_FAILED;

	*judge = NULL;
	*judge_buf = NULL;
	in.nonce_len = strlen(t->nonce) / 2;
	for (size_t i = 0; i < in.nonce_len; i++)
		nonce[i] = (uint8_t)(ims_hex_digit(t->nonce[2 * i]) << 4 |
				     ims_hex_digit(t->nonce[2 * i + 1]));
	in.nonce = nonce;
	msg = slurp(t->quote, "quote", &in.msg_len);
	sig = msg ? slurp(t->quote_sig, "quote signature", &in.sig_len) : NULL;
	pcrs = sig ? slurp(t->quote_pcrs, "quote PCR values", &in.pcrs_len) : NULL;
	ak = pcrs ? (char *)slurp(t->ak, "attestation key", &in.ak_len) : NULL;
	log = ak ? slurp(log_file, "measurement list", &len) : NULL;
	if (!log || text_not_a_list(log, len, log_file)) {
		ret = CLI_USAGE;
		goto out;
	}
	in.msg = msg;
	in.sig = sig;
	in.pcrs = pcrs;
	in.ak_pem = ak;
	if (attest_quote_verify(&in, &q, why, sizeof(why))) {
		cli_say("attest", "%s", why);
		goto out;
	}
	if (attest_replay_new(&q, &arg.r)) {
		cli_say("attest", "replay: out of memory, or a quoted bank OpenSSL cannot hash");
		goto out;
	}
	ascii = open_memstream(judge_buf, &judge_len);
	if (!ascii) {
		cli_say("attest", "out of memory");
		goto out;
	}
	err = attest_list_walk(log, len, replay_one, &arg, ascii, why, sizeof(why));
	if (!err)
		err = attest_replay_end(arg.r, why, sizeof(why));
	if (fclose(ascii))
		err = err ? err : -ENOMEM;
	ascii = NULL;
	if (err) {
		cli_say("attest", "%s: %s", log_file, err == -ENOMEM ? "out of memory" : why);
		goto out;
	}
	/* The policy judges the very entries replayed, as the ascii list has them. */
	*judge = judge_len ? fmemopen(*judge_buf, judge_len, "r") : fopen("/dev/null", "r");
	if (!*judge) {
		cli_say("attest", "out of memory");
		goto out;
	}
	cli_say("attest",
		"quote verified: signed by the attestation key, with the nonce; the %lu entries of "
		"the list replay to its PCR %d%s",
		arg.n, ATTEST_IMA_PCR,
		attest_replay_boot_aggregate_checked(arg.r) ? ", boot_aggregate to its PCRs 0-9" :
							      "");
	ret = CLI_OK;
out:
	if (ret != CLI_OK) {
		free(*judge_buf);
		*judge_buf = NULL;
	}
	attest_replay_free(arg.r);
	free(msg);
	free(sig);
	free(pcrs);
	free(ak);
	free(log);
	return ret;
}
